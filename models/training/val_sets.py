"""Measure a face model on every shared set's ``val`` split and on Byler's held-out ``train`` photos, die by die.

Run with ``python -m models.training.val_sets [MODEL.onnx ...] [--json]`` (default: the
shipped model). Each labelled die of a whole-frame set is cut as ``classify`` takes
it (``bench.reader.label_crop``: a square of 1.3 × the box's long side) and read
by the reader's own ``classify_crop``; hand-sorted crops are read as they are.
This is the classifier alone, with no finder in the way (``elephants-bluff
evaluate`` measures the whole reader). A die is *sure* at ``reader.min_confidence``
plus the decision margin, as ``evaluate`` counts a crop; *sure and wrong* is the
failure that must stay at most 1 in 1,000. rune55's tray dice are also counted by
size (the box's long side in px), since small dice should come out unsure.

The ``test`` split is never read here.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import cv2
import numpy as np

from bench.reader import label_crop
from models.training import data, real_sets
from models.training.judge import reader_of
from vision.pipeline.decide import sure_confidence

#: Size bins (px) for rune55's tray dice.
SIZE_BINS = (0, 30, 40, 50, 60, 1000)


def dice(which: str) -> list[tuple[np.ndarray, int, float]]:
    """(image given to classify_crop, true face, die side in px) for each die of one validation set."""
    out = []
    if which == "byler-heldout":
        root = data.dataset_dir()
        fs = [real_sets.Frame("real-dice-byler", None, n, *_photo(root, n)) for n in data.fit_and_held_out(data.split_names()["train"])[1]]
    elif which.endswith("-crops"):
        set_name = "real-dice-" + which.removesuffix("-crops")
        return [(img, v, float(min(img.shape[:2]))) for img, v in real_sets.hand_crops(set_name, "val")]
    else:
        set_name, _, subset = which.partition(":")
        fs = real_sets.frames("real-dice-" + set_name, "val", subset or None)
    for f in fs:
        for value, cx, cy, w, h in f.labels:
            out.append((label_crop(f.image, cx, cy, w, h), value, max(w, h)))
    return out


def _photo(root: Path, name: str):
    from vision.dataset import photo

    return photo(root, name)


SETS = ("byler-heldout", "rune55:tray", "rune55:cup", "skovy", "skovy-crops", "patterson-crops")


def measure(model: Path | None) -> dict:
    reader = reader_of(model)
    sure_at = sure_confidence(reader.min_confidence)
    report: dict = {"model": reader.model_id}
    for which in SETS:
        rows = []
        for img, truth, side in dice(which):
            v, conf = reader.classify_crop(img)
            rows.append((truth, v, conf, side))
        right = sum(t == v for t, v, _, _ in rows)
        sure_wrong = sum(t != v and c >= sure_at for t, v, c, _ in rows)
        entry = {"dice": len(rows), "right": right, "accuracy": round(right / max(1, len(rows)), 4),
                 "sure_wrong": sure_wrong, "flagged": sum(c < sure_at for _, _, c, _ in rows),
                 "wrong": [f"true {t} read {v} ({c:.2f}, {s:.0f} px)" for t, v, c, s in rows if t != v][:20]}
        if which == "rune55:tray":
            entry["by_size"] = {f"{a}-{b}": {"dice": sum(a <= s < b for *_, s in rows), "right": sum(a <= s < b and t == v for t, v, _, s in rows),
                                             "sure_wrong": sum(a <= s < b and t != v and c >= sure_at for t, v, c, s in rows)}
                                for a, b in zip(SIZE_BINS, SIZE_BINS[1:])}
        report[which] = entry
    return report


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("models", nargs="*", type=Path, help=".onnx files (default: the shipped model)")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    cv2.setNumThreads(1)
    for model in args.models or [None]:
        r = measure(model)
        if args.json:
            print(json.dumps(r))
            continue
        print(r["model"])
        for which in SETS:
            e = r[which]
            print(f"  {which:16s} {e['right']:4d}/{e['dice']:<4d} {e['accuracy']:.2%}  sure and wrong {e['sure_wrong']}  flagged {e['flagged']}")
            if "by_size" in e:
                print("    by size:", e["by_size"])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
