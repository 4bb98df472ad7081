"""The camera's and the reader's settings (see ``companion/settings.py``)."""

from __future__ import annotations

from companion.settings import Setting, one_of

SETTINGS: list[Setting] = [
    Setting("camera.backend", "simulated", "Where frames come from: picamera2 (the Pi camera), webcam (OpenCV VideoCapture), files (a folder of images), simulated (the rendered table).", one_of("picamera2", "webcam", "files", "simulated")),
    Setting("camera.camera_view", "below", "Where the camera looks from: below (through the tray: it sees bottom faces) or above (it sees top faces).", one_of("below", "above")),
]
