"""The real dice photos (``shared/datasets/real-dice-byler``): where they are, and their labels.

One reader of the dataset for both its users: the bench evaluates on the
``test`` split, training learns from the ``train`` split only.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import cv2
import numpy as np

#: (value, cx, cy, w, h): the face value and the box in pixels
Label = tuple[int, float, float, float, float]

CANDIDATES = (Path(__file__).resolve().parents[1] / ".." / "shared" / "datasets" / "real-dice-byler", Path("/work/shared/datasets/real-dice-byler"))


def dataset_dir() -> Path | None:
    """The dataset's folder (``ELEPHANTS_BLUFF_DICE_DATASET`` first), or None when absent."""
    env = os.environ.get("ELEPHANTS_BLUFF_DICE_DATASET")
    for p in ((Path(env),) if env else ()) + CANDIDATES:
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


def labels_in_pixels(root: Path, name: str, width: int, height: int, fixes: bool = True) -> list[Label]:
    """The YOLO labels of one photo in pixels; the face value is class + 1, with ``TRAIN_LABEL_FIXES``
    applied (``fixes=False``: as published, to look for label noise)."""
    out = []
    for line in (root / "labels" / f"{name}.txt").read_text().splitlines():
        if line.strip():
            c, x, y, bw, bh = line.split()
            value = int(c) + 1
            if fixes:
                value = TRAIN_LABEL_FIXES.get((name, round(float(x), 4), round(float(y), 4)), value)
            out.append((value, float(x) * width, float(y) * height, float(bw) * width, float(bh) * height))
    return out


def photo(root: Path, name: str, fixes: bool = True) -> tuple[np.ndarray, list[Label]]:
    """One photo (BGR) and its labels in pixels (``labels_in_pixels``), the image read once for both."""
    img = cv2.imread(str(root / "images" / f"{name}.jpg"))
    return img, labels_in_pixels(root, name, img.shape[1], img.shape[0], fixes=fixes)
