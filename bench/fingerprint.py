"""``python -m bench.fingerprint``: one hash of what the default reader reads on a fixed set of frames and crops.

A change meant to leave every reading as it was (a refactor, work done once instead of twice) is checked by reading
the same frames before and after and comparing this hash: it covers each reading's JSON as the API gives it (status,
reasons, dice, confidences to four decimals) and each die's doubts, and each crop's face and confidence through
``classify_crop``. Run it in each checkout (a ``git worktree`` of the commit before; never ``git stash``) with ``PYTHONPATH=.`` so that
checkout's code is read, and ``--output`` to diff the readings where the hashes differ. It is not a figure: a change
that means to read differently is judged by ``make bench`` and the rules in ``docs/READING.md``.

The frames: simulated tables from below (nothing known, and in tray mode with their calibration), and, where the
shared sets are there, rune55 and skovy ``val`` photos and Byler ``train`` photos read from above told their dice's
count, and patterson ``val`` crops (never a ``test`` split). A set that is not there is named and left out.

    PYTHONPATH=. python -m bench.fingerprint [--tables N] [--photos N] [--crops N] [--output FILE]
"""

from __future__ import annotations

import argparse
import hashlib
import json
from itertools import islice
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from companion.app.settings import Settings
from vision import evaluate
from vision.dataset import shared_datasets
from vision.evaluate import read_photos
from vision.images import CROP_MIN_SIDE, load_image
from vision.reader import load_reader
from vision.simtable import render_calibrated_table, render_table

#: The shared sets whose photos are read, and the split read of each (a set's ``test`` split never).
PHOTO_SETS = (("real-dice-rune55", "val"), ("real-dice-skovy", "val"), ("real-dice-byler", "train"))
#: The shared set whose hand-sorted crops are read through ``classify_crop``.
CROP_SET = "real-dice-patterson"
#: The seed of the simulated tables.
SEED = 11


def reading_row(tag: str, reading: Any) -> list:
    """What the hash covers of one reading: its JSON as the API gives it (status, reasons, dice, confidences to four
    decimals), and each die's doubts."""
    return [tag, reading.to_json(), [list(d.doubts) for d in reading.dice]]


def table_rows(reader: Any, tables: int) -> list[list]:
    """``tables`` simulated tables read knowing nothing, and half as many in tray mode (die size and empty tray)."""
    rng = np.random.default_rng(SEED)
    rows = []
    for i in range(tables):
        frame, _ = render_table([int(v) for v in rng.integers(1, 7, 3)], rng, view="below")
        rows.append(reading_row(f"table {i}", reader.read(frame)))
    for i in range(tables // 2):
        frame, placed, empty = render_calibrated_table([int(v) for v in rng.integers(1, 7, 3)], rng, view="below")
        rows.append(reading_row(f"tray {i}", reader.with_die_side(placed[0].side).with_empty_tray(empty).read(frame)))
    return rows


def photo_rows(reader: Any, shared: Path, photos: int) -> tuple[list[list], list[str]]:
    """The first ``photos`` photos of each of ``PHOTO_SETS``' splits, read as ``evaluate`` reads them (from above, told
    how many dice each holds: ``evaluate.read_photos``); and the sets that are not there."""
    rows, missing = [], []
    for name, split in PHOTO_SETS:
        if not (shared / name / "split.json").is_file():
            missing.append(name)
            continue
        for photo in islice(read_photos(shared / name, reader, split, []), photos):
            rows.append(reading_row(f"{name}/{photo.name}", photo.reading))
    return rows, missing


def crop_rows(reader: Any, shared: Path, crops: int) -> tuple[list[list], list[str]]:
    """The first ``crops`` ``val`` crops of ``CROP_SET`` read by ``classify_crop``, as ``evaluate`` reads a folder of
    crops; and the set, where it is not there."""
    root = shared / CROP_SET
    if not (root / "crops.csv").is_file():
        return [], [CROP_SET]
    rows = []
    for file, _ in islice(evaluate.crop_rows(root, "val"), crops):
        seen, confidence = reader.classify_crop(load_image(evaluate.crop_file(root, file), CROP_MIN_SIDE))
        rows.append([file, seen, round(confidence, 5)])
    return rows, []


def fingerprint(rows: list[list]) -> str:
    """The first 16 hex digits of the sha256 of the rows as JSON.

    >>> fingerprint([["a", {"status": "ok"}, []]]) == fingerprint([["a", {"status": "ok"}, []]]) != fingerprint([["a", {"status": "uncertain"}, []]])
    True
    """
    return hashlib.sha256(json.dumps(rows, sort_keys=True).encode()).hexdigest()[:16]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.fingerprint", description=__doc__.split("\n\n")[0])
    p.add_argument("--tables", type=int, default=40, help="simulated tables read knowing nothing (half as many more in tray mode)")
    p.add_argument("--photos", type=int, default=30, help="photos of each shared set")
    p.add_argument("--crops", type=int, default=150, help="shared crops through classify_crop")
    p.add_argument("--shared", type=Path, default=None, help="the shared sets' folder (default: where the project finds them)")
    p.add_argument("--output", type=Path, help="also write every row read, as JSON, to diff two runs")
    args = p.parse_args(argv)
    cv2.setNumThreads(1)
    reader = load_reader(Settings.defaults(), threads=1)
    shared = args.shared or shared_datasets()
    photos, missing = photo_rows(reader, shared, args.photos)
    crops, no_crops = crop_rows(reader, shared, args.crops)
    rows = table_rows(reader, args.tables) + photos + crops
    if args.output:
        args.output.write_text(json.dumps(rows, indent=0))
    for name in missing + no_crops:
        print(f"fingerprint: {name} is not in {shared}; left out")
    ok = sum(1 for row in rows if isinstance(row[1], dict) and row[1]["status"] == "ok")
    print(f"fingerprint: {fingerprint(rows)} of {len(rows)} readings and crops ({ok} readings ok)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
