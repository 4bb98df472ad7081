"""Measure a model on the 20 held-out ``train`` photos: the figures that decide whether to ship it.

Run with ``python -m models.training.heldout [MODEL.onnx] [--validation validation.json]``
(default: the shipped model and ``models/training/validation.json``). The held-out
photos are the ``val_names`` a training run wrote to its ``validation.json``; with
``--recompute`` they are drawn again exactly as ``train.build`` does (seed 3).
The ``test`` split is never read here.

Each labelled die is cut and read exactly as ``bench.real_crops`` does for the
model card (``bench.label_crop``, read by ``DiceReader.classify_crop``), with
``vision.dataset.TRAIN_LABEL_FIXES`` applied. A die is flagged below the reader's own
``reader.min_confidence`` unless ``--threshold`` says otherwise. Prints
per-die accuracy, the share of wrong dice below ``--threshold`` (flagged, good)
and of right dice below it (flagged needlessly), and lists every wrong die.
With ``--tables N`` it then reads the same dice again on N other tables each
(``models.training.tables.other_table``, seeds 0 to N-1): a model that only
knows the grey tray loses dice there.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import cv2
import numpy as np

from companion.core.settings import Settings
from models.training import data
from models.training.tables import other_table
from bench.reader import label_crop
from vision.classifier import FaceClassifier
from vision.dataset import photo
from vision.classic_reader import DiceReader

HERE = Path(__file__).resolve().parent


def heldout_names(validation: Path | None, recompute: bool = False) -> list[str]:
    """The 20 held-out photos: from a run's validation.json, or redrawn like ``train.build``."""
    if recompute or validation is None:
        return data.fit_and_held_out(data.split_names()["train"])[1]
    return json.loads(validation.read_text())["val_names"]


def fitted_on_held_out(validation: Path | None) -> bool:
    """Whether the run that wrote ``validation`` also trained on its held-out photos (``train --all-photos``)."""
    return bool(validation and validation.exists() and json.loads(validation.read_text()).get("fit_on_held_out"))


#: The reader's default ``reader.min_confidence``: the threshold a die is flagged below.
MIN_CONFIDENCE = Settings.defaults()["reader.min_confidence"]


def held_out_reader(model: Path | None = None, threshold: float = MIN_CONFIDENCE) -> DiceReader:
    """A reader of ``model`` (default: the shipped one) that flags dice below ``threshold``."""
    return DiceReader(FaceClassifier(model), min_confidence=threshold)


def evaluate(reader: DiceReader, names: list[str], tables: int = 0) -> dict:
    """The held-out dice read one by one; with ``tables``, on that many other tables each instead."""
    threshold = reader.min_confidence
    root = data.dataset_dir()
    rows = []
    for name in names:
        img, labels = photo(root, name)
        shown = [(name, img)] if not tables else [(f"{name} table {k}", other_table(img, labels, np.random.default_rng(k))) for k in range(tables)]
        for where, table in shown:
            for value, cx, cy, w, h in labels:
                v, conf = reader.classify_crop(label_crop(table, cx, cy, w, h))
                rows.append((where, cx / img.shape[1], cy / img.shape[0], value, v, conf))
    right = np.array([r[3] == r[4] for r in rows])
    conf = np.array([r[5] for r in rows])
    low = conf < threshold
    return {
        "model": reader.model_id,
        "dice": len(rows),
        "right": int(right.sum()),
        "accuracy": float(right.mean()),
        "wrong_flagged": f"{int((low & ~right).sum())}/{int((~right).sum())}",
        "right_flagged": f"{int((low & right).sum())}/{int(right.sum())}",
        "right_flagged_share": float((low & right).sum() / max(1, right.sum())),
        "wrong": [f"{n} ({x:.3f}, {y:.3f}): true {t} read {p} ({c:.2f})" for n, x, y, t, p, c in rows if t != p],
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("model", nargs="?", type=Path, help="an .onnx file (default: the shipped model)")
    ap.add_argument("--validation", type=Path, default=HERE / "validation.json", help="a run's validation.json (for val_names)")
    ap.add_argument("--recompute", action="store_true", help="redraw the held-out names like train.build (seed 3)")
    ap.add_argument("--threshold", type=float, default=MIN_CONFIDENCE, help="the confidence below which a die is flagged (default: the reader's)")
    ap.add_argument("--tables", type=int, default=0, help="also read every die on this many other tables")
    args = ap.parse_args(argv)
    cv2.setNumThreads(1)
    names = heldout_names(args.validation, args.recompute)
    if fitted_on_held_out(args.validation):
        print(f"note: {args.validation} is from a run that also trained on these photos (train --all-photos): "
              "its model's figures here measure fit, not reading")
    reader = held_out_reader(args.model, args.threshold)  # loaded once for both passes
    for tables in [0] + ([args.tables] if args.tables > 0 else []):
        r = evaluate(reader, names, tables)
        where = f"on {tables} other tables each" if tables else "as photographed"
        print(f"{r['model']} ({where}): {r['right']}/{r['dice']} right ({r['accuracy']:.1%}); wrong flagged {r['wrong_flagged']}; "
              f"right flagged {r['right_flagged']} ({r['right_flagged_share']:.1%})")
        for w in r["wrong"]:
            print("  wrong:", w)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
