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
