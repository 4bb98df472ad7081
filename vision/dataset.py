"""The real dice photos (``shared/datasets/real-dice-byler``): where they are, and their labels.

One reader of the dataset for both its users: the bench evaluates on the
``test`` split, training learns from the ``train`` split only. Its label reader
(``labels_in_pixels``) serves every shared set in the same layout, with the
labels found wrong by eye corrected (``LABEL_FIXES``).
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path

import cv2
import numpy as np

#: (value, cx, cy, w, h): the face value and the box in pixels
Label = tuple[int, float, float, float, float]

#: Where the shared datasets are looked for, after ``ELEPHANTS_BLUFF_DATASETS``: beside the repository (``../shared``),
#: then the development machines' own copy.
SHARED_CANDIDATES = (Path(__file__).resolve().parents[1] / ".." / "shared" / "datasets", Path("/work/shared/datasets"))


def shared_datasets() -> Path:
    """The folder holding the shared labelled sets (``real-dice-byler``, ``real-dice-rune55``, ...): the first of
    ``ELEPHANTS_BLUFF_DATASETS`` and ``SHARED_CANDIDATES`` that holds any set, else the first candidate (which then
    does not exist, so a caller's "not there" message names where the sets belong)."""
    env = os.environ.get("ELEPHANTS_BLUFF_DATASETS")
    candidates = ((Path(env),) if env else ()) + SHARED_CANDIDATES
    for p in candidates:
        if p.is_dir() and any(p.glob("real-dice-*")):
            return p.resolve()
    return candidates[0]


def dataset_dir() -> Path | None:
    """Byler's set (``ELEPHANTS_BLUFF_DICE_DATASET`` first, else in ``shared_datasets()``), or None when absent."""
    env = os.environ.get("ELEPHANTS_BLUFF_DICE_DATASET")
    for p in ((Path(env),) if env else ()) + (shared_datasets() / "real-dice-byler",):
        if (p / "split.json").exists():
            return p.resolve()
    return None


def split_names(root: Path, split: str) -> list[str]:
    """The photo names of ``split`` ("train" or "test")."""
    return json.loads((root / "split.json").read_text())[split]


#: Train labels found wrong and checked by eye (models/MODEL_CARD.md): (photo, cx, cy) -> the true face.
TRAIN_LABEL_FIXES = {
    ("IMG_20191208_112342", 0.4942, 0.7527): 3,
    ("IMG_20191209_095439", 0.5192, 0.6038): 4,
    ("IMG_20191209_095954", 0.3746, 0.5291): 3,
    ("IMG_20191209_100722", 0.6771, 0.6840): 5,
}

#: Val labels of real-dice-rune55 found wrong and checked by eye (models/MODEL_CARD.md, "Label noise found in
#: rune55 val"): each face shows plainly at four times the size; three of the four labels are its opposite face
#: (the face on top, not the one photographed). ``evaluate`` on the shared folder still reads the labels as
#: published; the evaluation sets built from these dice (``bench.eval_sets``) and training's val figures use these.
VAL_LABEL_FIXES = {
    ("00054_jpg.rf.05e2ff959493ddd2a9f2009ebd609d8a", 0.6094, 0.4453): 5,
    ("00059_jpg.rf.4cff4e82258214768afbe48366f2fcdf", 0.4625, 0.2617): 3,
    ("PXL_20240219_192137038_jpg.rf.484fbe653d6e6e86380422b71a3dadaa", 0.6172, 0.6781): 3,
    ("PXL_20240219_192405902_jpg.rf.5891bfc0daf440a54155fadf05b6b516", 0.6484, 0.2461): 3,
}
LABEL_FIXES = {**TRAIN_LABEL_FIXES, **VAL_LABEL_FIXES}


def yolo_box(line: str) -> tuple[int, float, float, float, float]:
    """``(class, cx, cy, w, h)``, the box as fractions of the frame, from one line of a YOLO label file.

    A line is ``class cx cy w h`` (a sixth number, a detector's score, is ignored), or ``class x1 y1 x2 y2 x3 y3 ...``:
    a polygon or a turned box (YOLO's segment and OBB layouts, as labelling tools export them), taken as the
    upright box around its corners, as YOLO trainers read such a line for a detector. ``ValueError`` for anything
    else.

    >>> yolo_box("2 0.5 0.25 0.1 0.2")
    (2, 0.5, 0.25, 0.1, 0.2)
    >>> [round(v, 3) for v in yolo_box("0 0.4 0.2 0.6 0.2 0.6 0.4 0.4 0.4")]
    [0, 0.5, 0.3, 0.2, 0.2]
    >>> yolo_box("2.0 0.5 0.25 0.1 0.2")  # a class a spreadsheet or pandas wrote as a float
    (2, 0.5, 0.25, 0.1, 0.2)
    """
    parts = line.split()
    c = float(parts[0])
    numbers = [float(v) for v in parts[1:]]
    if not c.is_integer() or not all(math.isfinite(v) for v in numbers):
        raise ValueError("the class is not a whole number, or a number is not finite")
    c = int(c)
    if len(numbers) in (4, 5):
        x, y, w, h = numbers[:4]
        return c, x, y, w, h
    if len(numbers) >= 6 and len(numbers) % 2 == 0:
        xs, ys = numbers[0::2], numbers[1::2]
        return c, (min(xs) + max(xs)) / 2, (min(ys) + max(ys)) / 2, max(xs) - min(xs), max(ys) - min(ys)
    raise ValueError(f"{len(numbers)} numbers after the class: neither a box (4) nor a polygon (pairs)")


#: How far past the photo's edge a label's centre, and past the photo's own size its width and height, may reach:
#: an export's rounding (six decimals, a box worked out from corners a pixel outside). The shared sets' labels all
#: lie well inside (2026-12: centres 0.015-0.98, sizes 0.03-0.54).
LABEL_TOLERANCE = 1e-3


def box_problem(x: float, y: float, w: float, h: float) -> str | None:
    """What makes a label's box (``yolo_box``: fractions of the photo) no box of a die in the photo, in words, or None
    where it is one: its centre must lie in the photo (0 to 1) and its width and height be more than 0 and at most the
    photo's (each within ``LABEL_TOLERANCE``). Labels written in pixels instead of fractions fail here, and so would
    count every die as missed, and every die read as extra, without a word.

    >>> box_problem(0.5, 0.5, 0.1, 0.1) is None, box_problem(1.0004, -0.0004, 1.0, 0.001) is None
    (True, True)
    >>> box_problem(412, 300, 40, 42)
    "its centre (412, 300) lies outside the photo: a YOLO label gives a box's centre and size as shares of the photo's width and height, from 0 to 1 (were these written in pixels?)"
    >>> box_problem(0.5, 0.5, 0, 0.1)
    "its width and height (0 × 0.1) must be more than 0: a YOLO label gives a box's centre and size as shares of the photo's width and height, from 0 to 1"
    """
    lo, hi = -LABEL_TOLERANCE, 1 + LABEL_TOLERANCE
    centre_in = lo <= x <= hi and lo <= y <= hi
    if centre_in and 0 < w <= hi and 0 < h <= hi:
        return None
    if not centre_in:
        what = f"its centre ({x:g}, {y:g}) lies outside the photo"
    elif w <= 0 or h <= 0:
        what = f"its width and height ({w:g} × {h:g}) must be more than 0"
    else:
        what = f"its width and height ({w:g} × {h:g}) are larger than the photo"
    pixels = " (were these written in pixels?)" if max(x, y, w, h) > 2 else ""
    return f"{what}: a YOLO label gives a box's centre and size as shares of the photo's width and height, from 0 to 1{pixels}"


def labels_in_pixels(root: Path, name: str, width: int, height: int, fixes: bool = True) -> list[Label]:
    """The YOLO labels of one photo in pixels (``yolo_box``); the face value is class + 1, with ``LABEL_FIXES``
    applied (``fixes=False``: as published, to look for label noise)."""
    out = []
    for line in (root / "labels" / f"{name}.txt").read_text().splitlines():
        if line.strip():
            c, x, y, bw, bh = yolo_box(line)
            value = c + 1
            if fixes:
                value = LABEL_FIXES.get((name, round(x, 4), round(y, 4)), value)
            out.append((value, x * width, y * height, bw * width, bh * height))
    return out


def photo(root: Path, name: str, fixes: bool = True) -> tuple[np.ndarray, list[Label]]:
    """One photo (BGR) and its labels in pixels (``labels_in_pixels``), the image read once for both."""
    img = cv2.imread(str(root / "images" / f"{name}.jpg"))
    return img, labels_in_pixels(root, name, img.shape[1], img.shape[0], fixes=fixes)
