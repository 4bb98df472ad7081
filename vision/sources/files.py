"""Frames from image files: one image, or a folder read in name order and cycled (replays, tests)."""

from __future__ import annotations

import threading
from pathlib import Path

import numpy as np

from companion.core.errors import HardwareError
from companion.core.protocols import FrameSource
from vision.images import ImageError, is_image_name, load_image


class FilesSource(FrameSource):
    """Serves the images of a file or folder as camera frames, in turn, forever.

    >>> src = FilesSource("no/such/folder")
    >>> src.health()
    'The image folder no/such/folder does not exist (set camera.files_dir).'
    """

    name = "files"

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path) if path else None
        self._files: list[Path] = []
        self._next = 0
        self._lock = threading.Lock()

    def _list(self) -> list[Path]:
        if self.path is None:
            raise HardwareError("No image folder is set for the files camera (set camera.files_dir).", code="no_camera")
        if self.path.is_file():
            return [self.path]
        if not self.path.is_dir():
            raise HardwareError(f"The image folder {self.path} does not exist (set camera.files_dir).", code="no_camera")
        files = sorted(p for p in self.path.iterdir() if is_image_name(p) and p.is_file())
        if not files:
            raise HardwareError(f"The image folder {self.path} holds no images.", code="no_camera")
        return files

    def open(self) -> None:
        with self._lock:
            if not self._files:
                self._files = self._list()

    def grab(self) -> np.ndarray:
        self.open()
        with self._lock:
            path = self._files[self._next % len(self._files)]
            self._next += 1
        try:
            return load_image(path)
        except ImageError as exc:
            raise HardwareError(f"The files camera cannot use one of its photos: {exc.message}", code="bad_frame") from None

    @property
    def last_path(self) -> Path | None:
        """The file the last ``grab`` served."""
        return self._files[(self._next - 1) % len(self._files)] if self._files and self._next else None

    def close(self) -> None:
        with self._lock:
            self._files = []
            self._next = 0

    def health(self) -> str:
        try:
            self._list()
        except HardwareError as exc:
            return exc.message
        return "ok"
