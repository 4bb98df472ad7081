"""Frames from the Raspberry Pi camera through Picamera2 (imported only when this backend is chosen).

Picamera2's "RGB888" format is laid out B, G, R in memory, which is OpenCV's
order, so frames need no conversion. Exposure, gain and white balance are
fixed from the settings once ``calibrate`` has stored them, so the dice look
the same in every Bluff whatever the room's light does.
"""

from __future__ import annotations

import threading

import numpy as np

from companion.core.errors import HardwareError
from companion.core.protocols import FrameSource


#: What to do when picamera2 is installed but does not load: Raspberry Pi OS builds its JPEG helper (simplejpeg)
#: against the system's numpy 1, and the companion's environment holds numpy 2 (OpenCV needs it), under which that
#: helper fails to import ("numpy.dtype size changed"); ``install-pi.sh`` puts a simplejpeg built for numpy 2 in the
#: environment (the ``pi`` extra), which Python finds before the system's.
REINSTALL = ("run deploy/install-pi.sh again: it installs the camera's system packages, and its JPEG helper (simplejpeg) "
             "built for the companion's numpy.")


class Picamera2Source(FrameSource):
    """The Pi camera; ``open`` fails with a sentence when Picamera2 or the camera is missing."""

    name = "picamera2"

    def __init__(self, width: int = 1280, height: int = 960, exposure_us: int = 0, analogue_gain: float = 0.0,
                 colour_gains: list[float] | None = None) -> None:
        self.width, self.height = width, height
        self.exposure_us, self.analogue_gain = exposure_us, analogue_gain
        self.colour_gains = list(colour_gains or [])
        #: the camera module's model as libcamera names it (``imx708_wide`` for the Camera Module 3 Wide), once open
        self.model: str | None = None
        self._cam = None
        self._lock = threading.Lock()

    def controls(self) -> dict:
        """The fixed camera controls the settings ask for (empty: automatic)."""
        c: dict = {}
        if self.exposure_us:
            c.update(AeEnable=False, ExposureTime=int(self.exposure_us))
            if self.analogue_gain:
                c["AnalogueGain"] = float(self.analogue_gain)
        if self.colour_gains:
            c.update(AwbEnable=False, ColourGains=tuple(float(g) for g in self.colour_gains))
        return c

    def open(self) -> None:
        with self._lock:
            if self._cam is not None:
                return
            try:
                from picamera2 import Picamera2  # type: ignore[import-not-found]
            except Exception as exc:  # missing; or installed, but a part it loads is missing or built for another numpy
                if isinstance(exc, ImportError) and exc.name == "picamera2":
                    raise HardwareError("The Pi camera library (picamera2) is not installed; on Raspberry Pi OS: sudo apt install python3-picamera2.", code="camera_library") from None
                raise HardwareError(f"The Pi camera library (picamera2) is installed but cannot be loaded ({type(exc).__name__}: {exc}); {REINSTALL}", code="camera_library") from None
            try:
                cam = Picamera2()
                config = cam.create_still_configuration(main={"size": (self.width, self.height), "format": "RGB888"}, controls=self.controls())
                cam.configure(config)
                cam.start()
            except Exception as exc:  # libcamera raises plain RuntimeError/IndexError when no camera is attached
                raise HardwareError(f"The Pi camera cannot be started ({exc}); check its ribbon cable.", code="no_camera") from None
            self._cam = cam
            model = (getattr(cam, "camera_properties", None) or {}).get("Model")
            self.model = str(model) if model else None

    @property
    def wide_lens(self) -> bool:
        """Whether the module has a wide lens (the Camera Module 3 Wide, NoIR too: ``imx708_wide``,
        ``imx708_wide_noir``), which bends the picture enough for ``calibrate --lens`` to matter; False until open."""
        return bool(self.model) and "_wide" in str(self.model)

    def grab(self) -> np.ndarray:
        self.open()
        with self._lock:
            try:
                frame = self._cam.capture_array("main")  # type: ignore[union-attr]
            except Exception as exc:
                raise HardwareError(f"The Pi camera stopped giving frames ({exc}).", code="no_frame") from None
        return np.ascontiguousarray(frame[:, :, :3])

    def metadata(self) -> dict:
        """The camera's current exposure, gain and colour gains (used by ``calibrate`` to lock them)."""
        self.open()
        return dict(self._cam.capture_metadata())  # type: ignore[union-attr]

    def close(self) -> None:
        with self._lock:
            if self._cam is not None:
                try:
                    self._cam.stop()
                    self._cam.close()
                finally:
                    self._cam = None
