"""The reader's subcommands: ``read``, ``classify``, ``evaluate``, ``calibrate``.

``read [--json] [--as-seen] IMAGE...`` and ``classify [--json] CROP...`` print
one line per image (with ``--json``, one JSON object whose ``file`` repeats the
path as given). ``evaluate DIR [--split NAME] [--json] [--show FOLDER]`` reports how well
the reader reads a labelled folder (``vision/evaluate.py``; ``--show`` draws its misses, ``vision/evaluate_show.py``). A file that cannot be read gives a line saying why and makes
the exit status of ``read`` and ``classify`` 1; the others are still read. ``evaluate`` ends with status 1, a sentence on
stderr saying why, where it counted no die at all (every photo or crop unreadable, an empty split) or where some
photos or crops could not be read (its figures are of the rest). ``calibrate`` checks the real
camera on an empty tray and stores what it locks (``vision/calibrate.py``).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from companion.core.errors import ElephantsBluffError


def register(sub: argparse._SubParsersAction, light_tray=None) -> None:
    """Add the reader's subcommands to ``sub``; ``light_tray`` (``firmware.lit_tray.LitTraySource``, from the layer
    above) lets ``calibrate`` light the tray's LED ring for what it measures."""
    p = sub.add_parser("read", help="read every die in each image")
    p.add_argument("files", nargs="+", metavar="IMAGE")
    p.add_argument("--json", action="store_true", help="one JSON object per line")
    p.add_argument("--as-seen", action="store_true", help="report the faces as the camera sees them (a camera above the dice)")
    p.add_argument("--instance", type=Path, default=Path("instance"), help="folder whose config.toml holds the reader settings")
    p.set_defaults(func=_read)

    p = sub.add_parser("classify", help="classify one die crop per image")
    p.add_argument("files", nargs="+", metavar="CROP")
    p.add_argument("--json", action="store_true", help="one JSON object per line")
    p.add_argument("--instance", type=Path, default=Path("instance"))
    p.set_defaults(func=_classify)

    p = sub.add_parser("evaluate", help="how well the reader reads a folder of labelled photos (shared/datasets layout, or an export's split folders) or crops (crops.csv)")
    p.add_argument("folder", type=Path, metavar="DIR")
    p.add_argument("--split", help="read only this split (split.json, or the split column of crops.csv)")
    p.add_argument("--json", action="store_true", help="one JSON object with every count")
    p.add_argument("--crops", action="store_true", help="read the folder's crops.csv even where it also has whole photos")
    p.add_argument("--show", type=Path, metavar="FOLDER", help="draw each photo or crop not read all right into this folder (made if missing): the reading, and the labels in cyan")
    p.add_argument("--instance", type=Path, default=Path("instance"), help="folder whose config.toml holds the reader settings")
    p.set_defaults(func=_evaluate)

    p = sub.add_parser("calibrate", help="check the real camera on an empty tray and lock exposure and white balance")
    p.add_argument("--instance", type=Path, default=Path("instance"))
    p.add_argument("--dry-run", action="store_true", help="check and report, but store nothing")
    p.add_argument("--dice", action="store_true", help="with the dice lying apart on the tray: measure a die's size and store it")
    p.add_argument("--lens", action="store_true", help="with a printed chessboard (10 × 7 squares) face down on the tray: measure how much the lens bends the picture and store it")
    p.set_defaults(func=_calibrate, light_tray=light_tray)


def _settings(instance: Path):
    from companion.core.settings import CONFIG_NAME, Settings

    return Settings.load(instance / CONFIG_NAME)


def _emit(as_json: bool, obj: dict, text: str) -> None:
    print(json.dumps(obj) if as_json else text, flush=True)


def _read(args: argparse.Namespace) -> int:
    from vision.images import load_image_with_scale
    from vision.reader import load_reader

    reader = load_reader(_settings(args.instance))
    if args.as_seen:
        reader = reader.with_view("above")
    failed = 0
    for name in args.files:
        try:
            frame, scale = load_image_with_scale(name)  # a big JPEG is read smaller: its boxes in the file's pixels
        except ElephantsBluffError as exc:
            failed += 1
            _emit(args.json, {"file": name, "status": "error", "error": exc.message, "dice": [], "total": 0}, f"{name}: error: {exc.message}")
            continue
        r = reader.read(frame)
        dice = [{**d.to_json(), "box": [round(v * scale) for v in d.box]} for d in r.dice]
        obj = {"file": name, "status": r.status, "reason": r.reason, "reasons": [dict(c) for c in r.reasons], "dice": dice, "total": r.total,
               "model": r.model_id}
        faces = " + ".join(str(d.top) for d in r.dice) or "no dice"
        text = f"{name}: {r.status}: {faces} = {r.total}" + (f" ({r.reason})" if r.reason else "")
        _emit(args.json, obj, text)
    return 1 if failed else 0


def _classify(args: argparse.Namespace) -> int:
    from vision.images import CROP_MIN_SIDE, load_image
    from vision.pipeline.decide import sure_confidence
    from vision.reader import load_reader

    reader = load_reader(_settings(args.instance))
    failed = 0
    for name in args.files:
        try:
            value, conf = reader.classify_crop(load_image(name, CROP_MIN_SIDE))
        except ElephantsBluffError as exc:
            failed += 1
            _emit(args.json, {"file": name, "status": "error", "error": exc.message, "value": None, "confidence": None, "sure": False},
                  f"{name}: error: {exc.message}")  # the keys of a read crop, as ``read``'s error keeps its dice and total
            continue
        sure = conf >= sure_confidence(reader.min_confidence)  # as a reading's die is sure (vision.pipeline.decide)
        _emit(args.json, {"file": name, "value": value, "confidence": round(conf, 4), "sure": sure},
              f"{name}: {value} ({conf:.2f}, {'sure' if sure else 'not sure: a person should look'})")
    return 1 if failed else 0


def _evaluate(args: argparse.Namespace) -> int:
    from vision.evaluate import evaluate, summary, why_nothing_measured, why_part_measured
    from vision.reader import load_reader

    reader = load_reader(_settings(args.instance))
    report = evaluate(args.folder, reader, args.split, crops=args.crops, show=args.show)
    report["model"] = reader.model_id  # the instance's active model (a taught one, or the shipped one when it cannot load)
    _emit(args.json, report, summary(report))
    # no die counted (every crop unreadable, an empty split, ...), or some photos not read: no figure of the whole set,
    # so no success
    why = why_nothing_measured(report) or why_part_measured(report)
    if why is not None:
        print(f"elephants-bluff: {why}", file=sys.stderr)
        return 1
    return 0


def _calibrate(args: argparse.Namespace) -> int:
    from companion.core.settings import require_instance
    from vision.calibrate import calibrate

    if args.dice and args.lens:
        print("calibrate: --dice and --lens measure different things: run calibrate --lens first, then calibrate --dice.", file=sys.stderr)
        return 2
    require_instance(args.instance)  # what is measured is stored there: never in a folder the table does not read
    return calibrate(args.instance, dry_run=args.dry_run, out=sys.stdout, dice=args.dice, lens=args.lens, light=args.light_tray)
