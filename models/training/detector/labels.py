"""One label format for every training frame, real or rendered, and the geometry both sides of training use.

A frame's dice are a float32 array of rows ``(cx, cy, w, h, side, angle, exact)`` in the frame's pixels:
``w, h`` the axis-aligned box; ``exact = 1`` when side and angle are known (rendered dice: ``side`` the
square's side, ``angle`` in degrees 0..90), ``exact = 0`` when only the box is (real photos, YOLO boxes:
``side = min(w, h)``, ``angle`` NaN). The loss and the evaluation treat the two kinds differently.
"""

from __future__ import annotations

import math

import numpy as np

COLUMNS = ("cx", "cy", "w", "h", "side", "angle", "exact")


def exact_row(cx: float, cy: float, side: float, angle: float) -> list[float]:
    """A rendered die: its square's side and angle known, the box is the square's."""
    a = math.radians(angle % 90)
    span = side * (abs(math.cos(a)) + abs(math.sin(a)))
    return [cx, cy, span, span, side, angle % 90, 1.0]


def box_row(cx: float, cy: float, w: float, h: float) -> list[float]:
    """A real die: only its axis-aligned box is known."""
    return [cx, cy, w, h, min(w, h), float("nan"), 0.0]


def empty() -> np.ndarray:
    return np.zeros((0, len(COLUMNS)), np.float32)


def as_array(rows: list[list[float]]) -> np.ndarray:
    return np.array(rows, np.float32).reshape(-1, len(COLUMNS))


def transform(dice: np.ndarray, m: np.ndarray, turn: int, flip: bool) -> np.ndarray:
    """The labels under an affine map ``m`` (2×3: a uniform scale and a shift, after which the image was
    turned ``turn`` quarter turns and mirrored when ``flip``; ``m`` already includes those). Quarter turns
    swap a box's sides; mirroring mirrors the angle."""
    if len(dice) == 0:
        return dice.copy()
    out = dice.copy()
    pts = np.c_[dice[:, :2], np.ones(len(dice))] @ m.T
    out[:, :2] = pts
    scale = math.sqrt(abs(np.linalg.det(m[:, :2])))
    out[:, 2:5] *= scale
    if turn % 2:
        out[:, [2, 3]] = out[:, [3, 2]]
    ang = out[:, 5]
    if flip:
        ang = -ang
    # A quarter turn of the image turns every square by 90°, which a square does not notice.
    out[:, 5] = np.where(np.isnan(ang), np.nan, np.mod(ang, 90.0))
    return out


def angle_error(a: float, b: float) -> float:
    """The smallest difference between two square angles (degrees, a square repeats every 90°)."""
    d = abs(a - b) % 90.0
    return min(d, 90.0 - d)


def iou(a: tuple[float, float, float, float], b: tuple[float, float, float, float]) -> float:
    """IoU of two boxes (x0, y0, x1, y1)."""
    ix = max(0.0, min(a[2], b[2]) - max(a[0], b[0]))
    iy = max(0.0, min(a[3], b[3]) - max(a[1], b[1]))
    inter = ix * iy
    union = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter
    return inter / union if union > 0 else 0.0


def label_box(row: np.ndarray) -> tuple[float, float, float, float]:
    cx, cy, w, h = (float(v) for v in row[:4])
    return cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2
