"""The annotated photo of a reading: each die's box with its top value (and the face seen), and the status."""

from __future__ import annotations

import cv2
import numpy as np

from companion.core.reading import OK, Reading
from vision.glyphs import draw_text
from vision.images import ImageError, check_frame


def annotate(frame: np.ndarray, reading: Reading, sure_at: float) -> np.ndarray:
    """A copy of the frame with each die's box and values, and the status, drawn on it.

    >>> from companion.core.reading import DieReading
    >>> r = Reading(OK, (DieReading(1, 6, 0.99, (10, 10, 20, 20)),), model_id="m")
    >>> annotate(np.zeros((120, 160, 3), np.uint8), r, 0.95).shape
    (120, 160, 3)
    """
    try:
        out = check_frame(frame).copy()
    except ImageError:
        out = np.zeros((240, 320, 3), np.uint8)
    scale = max(0.5, max(out.shape[:2]) / 1280)
    thick = max(1, int(round(2 * scale)))
    for d in reading.dice:
        x, y, w, h = d.box
        # orange: this die is why the reading is uncertain (a reading back from JSON keeps only its confidence)
        colour = (0, 140, 255) if d.doubts or d.confidence < sure_at else (60, 200, 60)
        cv2.rectangle(out, (x, y), (x + w, y + h), colour, thick, cv2.LINE_AA)
        label = f"{d.top}" if d.top == d.seen else f"{d.top} (sees {d.seen})"
        label += f" {d.confidence:.2f}"
        _text(out, label, (x, max(12, y - 6)), scale * 0.6, colour, thick)
    head = f"{reading.status}: total {reading.total}" if reading.status == OK else f"uncertain: {reading.reason}"
    _text(out, head, (8, int(24 * scale)), scale * 0.7, (60, 200, 60) if reading.status == OK else (0, 140, 255), thick)
    return out


def _text(img: np.ndarray, text: str, org: tuple[int, int], scale: float, colour: tuple[int, int, int], thick: int) -> None:
    """``text`` about as high as ``cv2.putText``'s simplex font at ``scale`` (22 px at 1), drawn with ``vision.glyphs``:
    OpenCV 5's own text would load its font engine, about 8 MiB kept by ``serve`` for good."""
    draw_text(img, text, org, max(7, int(round(22 * scale))), colour)
