"""Where the staged reader's wrong dice go wrong: the detector, or the face classifier.

Run with ``python -m models.training.wrong_dice DIR [--split val] [--model MODEL.onnx] [--json]`` on a folder
in the shared layout (never its ``test`` split). Each photo is read as ``evaluate`` reads it (told how many
dice it holds). Every labelled die not read right is then cut at its labelled box, upright, and given to the
same classifier alone: a die the detector **missed** or one it **misread**, each split by whether the
classifier reads the labelled face at the box (``box_right``) or not (``box_wrong``). Many ``box_right``
dice say the crops the detector gives are the gap; many ``box_wrong`` ones, the classifier or the label.
A box is a loose crop of a slanted die (it holds side faces too), so this is a guide, not a verdict.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import cv2

from models.training.robustness import reader_with_model
from vision.classifier import cut_crop
from vision.evaluate import read_photos
from vision.classic_reader import DiceReader


def wrong_dice(root: Path, reader: DiceReader, split: str | None = "val") -> dict[str, Any]:
    """The counts (``right``, ``missed`` and ``misread`` split by ``box_right`` / ``box_wrong``) and one row per
    wrong die: photo, labelled face, the face read (0: none), the face at its box and that reading's confidence;
    photos skipped (a split's photo with no image, an image that cannot be opened) are named in ``unreadable_files``;
    a photo without a label file is one of no dice (``read_photos``), so it holds no wrong die."""
    counts = {"dice": 0, "right": 0, "missed": {"box_right": 0, "box_wrong": 0}, "misread": {"box_right": 0, "box_wrong": 0}}
    rows, unreadable = [], []
    for photo in read_photos(root, reader, split, unreadable):
        for (truth, cx, cy, w, h), index, read in zip(photo.labels, photo.matched, photo.values_read()):
            counts["dice"] += 1
            if read == truth:
                counts["right"] += 1
                continue
            probs = reader.classifier.probabilities(cut_crop(photo.frame, cx, cy, max(w, h))[None])[0]
            at_box = int(probs.argmax())
            counts["missed" if index is None else "misread"]["box_right" if at_box == truth else "box_wrong"] += 1
            rows.append({"photo": photo.name, "label": truth, "read": read, "at_box": at_box,
                         "at_box_confidence": round(float(probs.max()), 3), "box_side": round(max(w, h))})
    return {**counts, "wrong": rows, "unreadable_files": unreadable}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("root", type=Path, help="a folder in the shared layout (images/, labels/, split.json)")
    ap.add_argument("--split", default="val", help="the split read (default val; never test)")
    ap.add_argument("--model", type=Path, help="this classifier (.onnx) in the default staged reader instead of the shipped one")
    ap.add_argument("--json", action="store_true", help="one JSON object with every wrong die")
    args = ap.parse_args(argv)
    if args.split == "test":
        ap.error("the test split is for evaluation only; read train or val")
    cv2.setNumThreads(1)
    report = wrong_dice(args.root, reader_with_model(args.model, "learned"), args.split)
    if args.json:
        print(json.dumps(report, indent=1))
        return 0
    for row in report["wrong"]:
        print(f"{row['photo']}: label {row['label']}, read {row['read'] or 'none'}, "
              f"at its box {row['at_box'] or 'not a die'} ({row['at_box_confidence']})")
    for skipped in report["unreadable_files"]:
        print(f"skipped: {skipped}")
    print(f"{report['right']} of {report['dice']} right; missed {report['missed']}; misread {report['misread']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
