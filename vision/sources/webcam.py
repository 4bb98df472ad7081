"""Frames from a USB webcam through OpenCV's ``VideoCapture``."""

from __future__ import annotations

import threading

import cv2
import numpy as np

from companion.core.errors import HardwareError
from companion.core.protocols import FrameSource


class WebcamSource(FrameSource):
    """A webcam by OpenCV device number; ``open`` fails with a sentence when there is none.

    >>> WebcamSource(63).health().startswith("No webcam")
    True
    """

    name = "webcam"

    def __init__(self, device: int = 0, width: int = 1280, height: int = 960) -> None:
        self.device, self.width, self.height = device, width, height
        self._cap: cv2.VideoCapture | None = None
        self._lock = threading.Lock()

    def _missing(self) -> HardwareError:
        return HardwareError(f"No webcam answers as device {self.device}; plug one in or set camera.device / camera.backend.", code="no_camera")

    def open(self) -> None:
        with self._lock:
            if self._cap is not None:
                return
            cap = cv2.VideoCapture(self.device)
            if not cap.isOpened():
                cap.release()
                raise self._missing()
            cap.set(cv2.CAP_PROP_FRAME_WIDTH, self.width)
            cap.set(cv2.CAP_PROP_FRAME_HEIGHT, self.height)
            self._cap = cap

    def grab(self) -> np.ndarray:
        self.open()
        with self._lock:
            assert self._cap is not None
            ok, frame = self._cap.read()
        if not ok or frame is None:
            raise HardwareError(f"The webcam (device {self.device}) stopped giving frames; check its cable.", code="no_frame")
        return frame

    def close(self) -> None:
        with self._lock:
            if self._cap is not None:
                self._cap.release()
                self._cap = None
