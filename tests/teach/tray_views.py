"""What the set-up tests point the camera at: the rendered empty tray, and any frame shown through the files backend.

The simulated table's camera always shows dice (``POST /api/sim/dice`` takes 1 to 12), so a test of the empty tray
hands the capture loop a real ``FilesSource`` on a written frame instead.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import cv2
import numpy as np

from vision.simtable import render_table
from vision.sources.files import FilesSource


def empty_tray() -> np.ndarray:
    """The rendered tray with no dice on it (a fixed seed: the same frame every run)."""
    frame, _ = render_table([], np.random.default_rng(4))
    return frame


def camera_sees(services: Any, folder: Path, frame: np.ndarray) -> None:
    """The capture loop's camera now shows ``frame`` (written to ``folder/tray.png``, read by the files backend)."""
    cv2.imwrite(str(folder / "tray.png"), frame)
    services.dice_source.frame_source = FilesSource(folder / "tray.png")
    services.dice_source.frame_source.open()


#: A stand-in for picamera2, which needs the Pi's libcamera and cannot be installed here: one camera module of the
#: model libcamera names (``imx708_wide`` is the Camera Module 3 Wide) showing one picture, as ``Picamera2Source`` uses it.
PICAMERA2_STAND_IN = '''"""A stand-in for picamera2 (tests/teach/tray_views.py): a {model} camera showing {picture}."""
import cv2


class Picamera2:
    camera_properties = {{"Model": {model!r}}}

    def create_still_configuration(self, main=None, controls=None):
        return {{"main": main, "controls": controls}}

    def configure(self, config):
        pass

    def start(self):
        pass

    def capture_array(self, name="main"):
        return cv2.imread({picture!r})  # "RGB888" is laid out B, G, R, as OpenCV reads a file

    def capture_metadata(self):
        return {{"ExposureTime": 8000, "AnalogueGain": 1.0}}

    def stop(self):
        pass

    def close(self):
        pass
'''


def pi_camera_stand_in(folder: Path, frame: np.ndarray, model: str) -> Path:
    """A folder to put first on ``sys.path``: its ``picamera2`` is a ``model`` camera showing ``frame``."""
    cv2.imwrite(str(folder / "pi-camera.png"), frame)
    package = folder / "stand-in" / "picamera2"
    package.mkdir(parents=True, exist_ok=True)
    (package / "__init__.py").write_text(PICAMERA2_STAND_IN.format(model=model, picture=str(folder / "pi-camera.png")))
    return folder / "stand-in"


def pi_camera_module(folder: Path, frame: np.ndarray, model: str) -> Any:
    """The stand-in ``picamera2`` module itself, loaded without ``sys.path`` or ``sys.modules``: a test puts it in
    ``sys.modules`` with ``monkeypatch.setitem``, which takes it out again after the test."""
    import importlib.util

    path = pi_camera_stand_in(folder, frame, model) / "picamera2" / "__init__.py"
    spec = importlib.util.spec_from_file_location("picamera2", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
