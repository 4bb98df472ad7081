"""The one small interface every camera backend implements.

Backends (Picamera2, an OpenCV webcam, image files, the simulated table) live in
``vision/sources/``, one module each, chosen once from the settings. The same
capture code runs with any of them, on the bench and on the Pi.
"""

from __future__ import annotations

from abc import ABC, abstractmethod

import numpy as np

from companion.core.errors import HardwareError


class FrameSource(ABC):
    """Gives camera frames of the tray as BGR ``uint8`` arrays (H×W×3).

    ``open`` raises ``companion.core.errors.HardwareError`` with a sentence a person
    understands when the camera is missing, so a bad set-up shows at start-up
    and in ``/api/health``, never as a crash inside a Bluff.
    """

    #: short backend name shown by ``/api/health`` ("picamera2", "webcam", "files", "simulated")
    name: str = "unknown"

    def open(self) -> None:  # noqa: B027 - optional hook
        """Acquire the device. Idempotent."""

    @abstractmethod
    def grab(self) -> np.ndarray:
        """Return the newest frame; raise ``HardwareError`` if none can be had."""

    def close(self) -> None:  # noqa: B027 - optional hook
        """Release the device. Idempotent."""

    def health(self) -> str:
        """"ok", or a sentence saying what is wrong with the camera.

        Tries ``open`` (idempotent), so a camera unplugged at start-up and
        plugged in later reports "ok" without a restart.
        """
        try:
            self.open()
        except HardwareError as exc:
            return exc.message
        return "ok"
