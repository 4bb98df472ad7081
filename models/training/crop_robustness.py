"""Read the shared hand-sorted crops with ``classify``, changed as another person's crop or camera would change them.

Run with ``python -m models.training.crop_robustness [DIR ...] [--split val] [--only CHANGE ...] [--json]``
(default: every shared set with a ``crops.csv``, its ``train`` and ``val`` crops; never a ``test`` split). The
reader is judged on crops it has never seen: other people cut dice looser, tighter, off centre, turned, smaller
or larger, and other cameras add grain or drop colour. ``models.training.robustness`` does this for whole photos;
this is its counterpart for ``classify`` (``DiceReader.classify_crop``). Per change it prints the crops, how many
were read right, silently wrong (read sure, as ``evaluate`` counts sure: ``reader.min_confidence`` and its margin,
and wrong) and flagged. ``train`` crops were trained on, so read the ``val`` split alone for a held-out figure.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from companion.core.errors import ElephantsBluffError
from models.training.image_changes import Change, blurred, grey, haze, jpeg, light, sharpened, tone
from vision.evaluate import EvaluationError, crop_rows
from vision.images import CROP_MIN_SIDE, load_image
from vision.dataset import shared_datasets
from vision.pipeline.decide import sure_confidence


def _padded(share: float) -> Change:
    def change(img: np.ndarray) -> np.ndarray:
        b = int(max(img.shape[:2]) * share)
        return cv2.copyMakeBorder(img, b, b, b, b, cv2.BORDER_REPLICATE)
    return change


def _tight(share: float) -> Change:
    def change(img: np.ndarray) -> np.ndarray:
        h, w = img.shape[:2]
        dy, dx = int(h * share), int(w * share)
        return img[dy:h - dy, dx:w - dx]
    return change


def _off_centre(share: float) -> Change:
    """The die pushed toward the crop's lower right corner by ``share`` of the crop's side."""
    def change(img: np.ndarray) -> np.ndarray:
        h, w = img.shape[:2]
        b = int(max(h, w) * share)
        return cv2.copyMakeBorder(img, b, b, b, b, cv2.BORDER_REPLICATE)[:h + b, :w + b]
    return change


def _turned(degrees: float) -> Change:
    def change(img: np.ndarray) -> np.ndarray:
        h, w = img.shape[:2]
        return cv2.warpAffine(img, cv2.getRotationMatrix2D((w / 2, h / 2), degrees, 1.0), (w, h), borderMode=cv2.BORDER_REPLICATE)
    return change


def _out_of_focus(share: float) -> Change:
    """A lens out of focus: a Gaussian blur of ``share`` of the crop's short side, so a big and a small crop of one
    die lose the same detail (a blur in pixels, as the photo sweep's, is nothing to a die 300 px wide)."""
    def change(img: np.ndarray) -> np.ndarray:
        return blurred(share * min(img.shape[:2]))(img)
    return change


def _short_side(px: int) -> Change:
    def change(img: np.ndarray) -> np.ndarray:
        k = px / min(img.shape[:2])
        size = (max(px, round(img.shape[1] * k)), max(px, round(img.shape[0] * k)))
        return cv2.resize(img, size, interpolation=cv2.INTER_AREA if k < 1 else cv2.INTER_CUBIC)
    return change


CHANGES: dict[str, Change] = {
    "as cropped": lambda img: img,
    "padded 0.25": _padded(0.25),
    "padded 0.5": _padded(0.5),
    "tight 0.1": _tight(0.1),
    "off centre 0.2": _off_centre(0.2),
    "turned 30": _turned(30),
    "turned 45": _turned(45),
    "16 px": _short_side(16),
    "24 px": _short_side(24),
    "4x bigger": lambda img: cv2.resize(img, None, fx=4, fy=4, interpolation=cv2.INTER_CUBIC),
    "JPEG 30": jpeg(30),
    "grey": grey,
    "dark 0.4": light(0.4),
    # light and cameras, as the photo sweep's rows of the same names (models.training.robustness)
    "shadows lifted": tone(0.5),
    "shadows deepened": tone(2.0),
    "haze": haze(0.5),
    "sharpened": sharpened(1.0),
    "green light": light((0.8, 1.2, 0.8)),
    "pink light": light((1.3, 0.7, 1.3)),
    "overexposed 2": light(2.0),
    "JPEG 10": jpeg(10),
    "on its side": lambda img: cv2.rotate(img, cv2.ROTATE_90_CLOCKWISE),
    "upside down": lambda img: cv2.rotate(img, cv2.ROTATE_180),
    # a tray photographed from afar: crops under a frame's 16 px, read enlarged (vision.images.CROP_MIN_SIDE)
    "12 px": _short_side(12),
    "8 px": _short_side(8),
    # a camera out of focus, however near the die
    "out of focus 0.05": _out_of_focus(0.05),
    "out of focus 0.1": _out_of_focus(0.1),
}
#: The changes the bench's crop figure sums over (``bench.reading.bench_crops``): the same thirteen in every bench
#: run since that figure began, so runs compare; the light and camera changes after them are read by this command.
BENCH_CHANGES: tuple[str, ...] = ("as cropped", "padded 0.25", "padded 0.5", "tight 0.1", "off centre 0.2", "turned 30",
                                  "turned 45", "16 px", "24 px", "4x bigger", "JPEG 30", "grey", "dark 0.4")


def shared_crop_sets() -> list[Path]:
    """Every shared set with hand-sorted crops."""
    shared = shared_datasets()
    return sorted(p.parent for p in shared.glob("*/crops.csv")) if shared.is_dir() else []


def crops_of(root: Path, splits: list[str]) -> list[tuple[str, np.ndarray, int]]:
    """(file, image, face) for each crop of ``splits`` in ``root``'s ``crops.csv`` (never a ``test`` split)."""
    if "test" in splits:
        raise EvaluationError("The test split is for evaluation only; read train or val.")
    if not (root / "crops.csv").is_file():
        raise EvaluationError(f"{root} has no crops.csv (file,value,split), so it holds no hand-sorted crops.")
    return [(file, load_image(root / file, CROP_MIN_SIDE), value) for split in splits for file, value in crop_rows(root, split)]


def row_line(name: str, row: dict[str, int], width: int = 15) -> str:
    """One printed line of ``measure``'s counts.

    >>> row_line("grey", {"crops": 9, "right": 8, "silently_wrong": 0, "flagged": 2})
    'grey            crops    9  right    8  silently wrong  0  flagged    2'
    """
    return (f"{name:{width}s} crops {row['crops']:4d}  right {row['right']:4d}  silently wrong {row['silently_wrong']:2d}  "
            f"flagged {row['flagged']:4d}")


def measure(reader: Any, crops: list[tuple[str, np.ndarray, int]], changes: list[str]) -> dict[str, dict[str, int]]:
    """Per change: crops, right, silently wrong (sure and wrong) and flagged (not sure)."""
    sure_at = sure_confidence(reader.min_confidence)
    out = {}
    for change in changes:
        row = dict.fromkeys(("crops", "right", "silently_wrong", "flagged"), 0)
        for _, image, value in crops:
            seen, confidence = reader.classify_crop(CHANGES[change](image))
            sure = confidence >= sure_at
            row["crops"] += 1
            row["right"] += seen == value
            row["silently_wrong"] += sure and seen != value
            row["flagged"] += not sure
        out[change] = row
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("sets", nargs="*", type=Path, help="folders with a crops.csv (default: every shared set that has one)")
    ap.add_argument("--split", action="append", choices=("train", "val"), help="the split read (repeatable; default train and val)")
    ap.add_argument("--only", action="append", choices=list(CHANGES), help="this change only (repeatable)")
    ap.add_argument("--json", action="store_true", help="one JSON object, change by change")
    args = ap.parse_args(argv)
    from companion.app.settings import Settings
    from vision.reader import load_reader

    sets = args.sets or shared_crop_sets()
    if not sets:
        ap.error(f"no folder given and no shared crops beside the repository ({shared_datasets()})")
    cv2.setNumThreads(1)
    try:
        crops = [c for root in sets for c in crops_of(root, args.split or ["train", "val"])]
    except ElephantsBluffError as exc:
        ap.error(exc.message)
    report = measure(load_reader(Settings.defaults(), threads=1), crops, args.only or list(CHANGES))
    if args.json:
        print(json.dumps(report, indent=1))
        return 0
    for change, row in report.items():
        print(row_line(change, row))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
