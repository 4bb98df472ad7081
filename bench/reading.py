"""``bench --only reading``: each detector plug-in on every evaluation set, and the staged reader's speed.

Every shared set's ``val`` split (real-dice-skovy also as crops, real-dice-
patterson as crops), Byler's ``test`` split (evaluation only), the renderer's
test set, the real dice pasted into grey cup frames, close up, one in a phone-sized photo, far and many of mixed sizes, the val crops read whole (``bench.eval_sets``,
built under ``build/eval-sets`` when missing or cut before today's label
corrections: ``eval_sets.up_to_date``), read by ``evaluate`` with each
detector: the same counts ``elephants-bluff evaluate --json`` prints. Speed is
on one core: the detector alone and the whole read of 1280×960 tray frames
with three dice, and where the staged read's time goes (``bench.read_cost``: per model, its runs, rows and
milliseconds a read; the face model's crops a read, the same on any host). Sizes: every shipped model file.
"""

from __future__ import annotations

import statistics
import time
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from bench.eval_sets import SHARED, real_val_dice
from bench.eval_sets import main as build_eval_sets
from bench.eval_sets import up_to_date
from bench.read_cost import read_cost
from bench.reader import _read_times
from bench.report import BENCHES
from companion.app.settings import Settings
from vision.dataset import VAL_LABEL_FIXES
from vision.evaluate import evaluate
from vision.reader import load_reader
from vision.simtable import render_calibrated_table, render_table

ROOT = Path(__file__).resolve().parents[1]
EVAL_SETS = ROOT / "build" / "eval-sets"

#: (name, folder, split, crops) of every set the reader is judged on
SETS = [
    ("rune55_val", SHARED / "real-dice-rune55", "val", False),
    ("skovy_val", SHARED / "real-dice-skovy", "val", False),
    ("skovy_val_crops", SHARED / "real-dice-skovy", "val", True),
    ("patterson_val_crops", SHARED / "real-dice-patterson", "val", True),
    ("byler_test", SHARED / "real-dice-byler", "test", False),
    ("rendered", EVAL_SETS / "rendered", None, False),
    ("cup_one", EVAL_SETS / "cup", None, False),
    ("cup_three", EVAL_SETS / "cup-three", None, False),
    ("big", EVAL_SETS / "big", None, False),
    ("mid", EVAL_SETS / "mid", None, False),
    ("far", EVAL_SETS / "far", None, False),
    ("many", EVAL_SETS / "many", None, False),
    ("crops_whole", EVAL_SETS / "whole", None, False),
]
#: (name, folder, split, the labels found wrong by eye) of the sets read again by the project's checked labels: a
#: published label the photo contradicts counts a right reading as silently wrong (``vision.dataset``)
CHECKED_SETS = [("rune55_val_checked_labels", SHARED / "real-dice-rune55", "val", VAL_LABEL_FIXES)]
KEYS = ("dice", "right", "accuracy", "silently_wrong", "flagged", "extra", "photos", "photos_all_right", "right_without_doubt")


def accuracy(reader: Any, full: bool, sets: list[tuple[str, Path, str | None, bool]] = SETS,
             checked: list[tuple[str, Path, str, dict]] = CHECKED_SETS) -> dict[str, Any]:
    """``evaluate``'s counts for each of ``sets`` (every set by default), the built ones made first where needed, and
    for each of ``checked``, its labels found wrong by eye read as the photo shows them (``labels_fixed``: how many)."""
    if any(folder.is_relative_to(EVAL_SETS) for _, folder, *_ in sets) and not up_to_date(EVAL_SETS):
        build_eval_sets([str(EVAL_SETS)])
    out: dict[str, Any] = {}
    for name, folder, split, crops in sets:
        if not folder.is_dir():
            out[name] = f"skipped: {folder} is not there"
            continue
        out[name] = _counts(evaluate(folder, reader, split, crops=crops))
    for name, folder, split, fixes in checked:
        if not folder.is_dir():
            out[name] = f"skipped: {folder} is not there"
            continue
        report = evaluate(folder, reader, split, label_fixes=fixes)
        out[name] = {**_counts(report), "labels_fixed": len(report["labels_fixed"])}
    return out


def _counts(report: dict[str, Any]) -> dict[str, Any]:
    """The bench's keys of an ``evaluate`` report, and its silently wrong dice per 1,000."""
    out = {k: report[k] for k in KEYS}
    if report["dice"]:
        out["silently_wrong_per_1000"] = round(1000 * report["silently_wrong"] / report["dice"], 2)
    return out


def speed_frames() -> list[np.ndarray]:
    """The speed rows' eight frames: the simulated table from below, three dice (2, 4, 6), 1280×960."""
    rng = np.random.default_rng(5)
    return [render_table([2, 4, 6], rng, view="below")[0] for _ in range(8)]


def tray_mode_reads(reader: Any) -> list[tuple[Any, np.ndarray]]:
    """The tray-mode speed row's eight calibrated tables, each with ``reader`` as ``calibrate`` leaves it for that
    table (its die size and its empty tray): (reader, frame)."""
    rng = np.random.default_rng(6)
    tables = [render_calibrated_table([2, 4, 6], rng, view="below") for _ in range(8)]
    return [(reader.with_die_side(placed[0].side).with_empty_tray(empty), frame) for frame, placed, empty in tables]


def speed(reader: Any, repeats: int) -> dict[str, Any]:
    cv2.setNumThreads(1)
    frames = speed_frames()
    for f in frames:
        reader.read(f)
    reads, detects = [], []
    detector = getattr(getattr(reader, "proposer", None), "detector", None)
    for i in range(repeats):
        frame = frames[i % len(frames)]
        t = time.perf_counter()
        reader.read(frame)
        reads.append((time.perf_counter() - t) * 1000)
        if detector is not None:
            grey = cv2.cvtColor(frame, cv2.COLOR_BGR2GRAY)
            t = time.perf_counter()
            detector.propose(grey)
            detects.append((time.perf_counter() - t) * 1000)
    out = {"read_1280x960_3_dice_median_ms": round(statistics.median(reads), 2), "repeats": repeats, "threads": 1}
    if detects:
        out["detector_1280x960_median_ms"] = round(statistics.median(detects), 2)
    if hasattr(reader, "with_empty_tray"):
        out["read_tray_mode_median_ms"] = _tray_mode_speed(reader, repeats)
    return out


def _tray_mode_speed(reader: Any, repeats: int) -> float:
    """Median ms of a read in the whole tray mode (the die size and the empty tray, as ``calibrate`` leaves a
    table): the same three dice on 8 calibrated frames, each with its own empty tray."""
    times, _ = _read_times(tray_mode_reads(reader), repeats)
    return round(statistics.median(times), 2)


def bench_reading(full: bool) -> dict[str, Any]:
    report: dict[str, Any] = {"models_bytes": sum(p.stat().st_size for pattern in ("*.onnx", "*.npz") for p in (ROOT / "models").glob(pattern))}
    for detector in ("learned", "classic"):
        try:
            reader = load_reader(Settings.defaults().with_overrides(reader__detector=detector), threads=1)
        except Exception as exc:  # a detector whose model is not there yet is reported, not fatal
            report[detector] = f"skipped: {exc}"
            continue
        report[detector] = {"speed": speed(reader, 100 if full else 30), **accuracy(reader, full)}
        if detector == "learned":  # the simulated table and the leaning dice, read by the staged reader; where its
            report[detector].update(_table(reader, full))  # time goes (the crops a read cuts, the same on any host)
            report[detector]["read_cost"] = read_cost(reader, [(reader, frame) for frame in speed_frames()])
            report[detector]["read_cost_tray_mode"] = read_cost(reader, tray_mode_reads(reader))
    return report


def _table(reader: Any, full: bool) -> dict[str, Any]:
    """The staged reader on the simulated table's 216 outcomes (knowing nothing of the tray, its die size, and
    its whole calibration: die size and the empty tray's photo), on frames with a die leaning on the cup, and on
    frames from above read as seen (half of them with a die leaning)."""
    from bench.reader import from_above, synthetic, synthetic_leaning

    out: dict[str, Any] = {}
    for name, known in (("synthetic_table", {}), ("synthetic_table_die_size", {"die_side_known": True}),
                        ("synthetic_table_calibrated", {"empty_tray": True})):
        table = synthetic(reader, 2 if full else 1, **known)
        figures = {k: table[k] for k in ("frames", "ok_and_right", "uncertain", "ok_but_wrong")}
        figures["ok_share"] = round(table["ok_and_right"] / table["frames"], 4)
        out[name] = figures
    return {**out, "synthetic_leaning": synthetic_leaning(reader, 100 if full else 20, tray_mode=True),
            "from_above": from_above(reader, 200 if full else 40),
            "real_dice_calibrated": real_dice_calibrated(reader),
            "through_a_wide_lens": through_a_wide_lens(reader, 108 if full else 24, 100 if full else 20),
            "through_a_fisheye_like_lens": through_a_wide_lens(reader, 108 if full else 24, 100 if full else 20, FISHEYE_LIKE_LENS)}


#: The bend of the wide lens ``through_a_wide_lens`` sees the tables through (``vision.pipeline.lens``: a frame's corner
#: about a sixth nearer the centre than without bend).
WIDE_LENS = 0.2
#: ... and a lens whose bend grows faster towards the edge (``k`` 0.1, ``k2`` 0.2: a die at 0.85 of the half-diagonal
#: squeezed 48 % along the line to the centre, where ``WIDE_LENS`` squeezes it 25 %), which ``k`` alone does not fit.
FISHEYE_LIKE_LENS = (0.1, 0.2)


def through_a_wide_lens(reader: Any, frames: int, leaning_frames: int, bend: tuple[float, float] = (WIDE_LENS, 0.0)) -> dict[str, Any]:
    """The simulated table from below in tray mode, every frame and its empty tray bent by a wide lens (``bend``: its
    ``k`` and ``k2``), read with the lens not known and with the bend ``calibrate --lens`` measures on a chessboard seen
    through the same lens; each table's die side as ``calibrate --dice`` measures it on that frame through each (where
    it refuses, its dice touching: the side they show where they lie, or straightened through the known lens). And
    frames with a die leaning on the cup, bent alike, read in tray mode through the known lens: every one must be
    doubted."""
    from bench.reader import calibrated_leaning_frames
    from vision.calibrate import measure_die_side, measure_lens
    from vision.pipeline.lens import Lens, bend_frame
    from vision.simtable import render_chessboard

    measured, _ = measure_lens(bend_frame(render_chessboard(), *bend))
    readers = {"lens_unknown": reader.with_lens(0.0), "lens_measured": reader.with_lens(*(measured or (0.0, 0.0)))}
    counts = {name: {"frames": 0, "ok_and_right": 0, "ok_but_wrong": 0} for name in readers}
    rng = np.random.default_rng(216)
    for _ in range(frames):
        seen = [int(v) for v in rng.integers(1, 7, 3)]
        frame, placed, empty = render_calibrated_table(seen, rng, view="below")
        bent, bent_empty = bend_frame(frame, *bend), bend_frame(empty, *bend)
        lens = Lens.of_frame(bend[0], frame.shape[1], frame.shape[0], k2=bend[1])
        at = lens.bent(np.array([[d.cx, d.cy] for d in placed]))
        shown = float(np.mean([d.side / np.sqrt(lens.area_scale(x, y)) for d, (x, y) in zip(placed, at)]))
        for name, r in readers.items():
            side, _, _ = measure_die_side(bent, r.with_empty_tray(bent_empty))
            side = side or (placed[0].side if r.lens_distortion else shown)
            reading = r.with_die_side(side).with_empty_tray(bent_empty).read(bent)
            counts[name]["frames"] += 1
            if reading.status == "ok":
                right = sorted(d.seen for d in reading.dice) == sorted(seen)
                counts[name]["ok_and_right" if right else "ok_but_wrong"] += 1
    for c in counts.values():
        c["ok_share"] = round(c["ok_and_right"] / max(1, c["frames"]), 4)
    trusted = 0
    for _, frame, placed, empty in calibrated_leaning_frames(leaning_frames):
        known = readers["lens_measured"].with_die_side(placed[0].side).with_empty_tray(bend_frame(empty, *bend))
        trusted += known.read(bend_frame(frame, *bend)).status == "ok"
    return {"bend": list(bend), "bend_measured": list(measured or ()), **counts, "ok_but_wrong": sum(c["ok_but_wrong"] for c in counts.values()),
            "leaning": {"frames": leaning_frames, "trusted": trusted, "uncertain_share": round(1 - trusted / max(1, leaning_frames), 4)}}


#: The built sets of one real die a photo that ``real_dice_calibrated`` calibrates and reads in tray mode.
CALIBRATED_SETS = ("cup_one", "mid", "big")


def real_dice_calibrated(reader: Any, sets: tuple[str, ...] = CALIBRATED_SETS) -> dict[str, Any]:
    """Tray mode on real dice: each photo of the built one-die sets measured as ``calibrate --dice`` measures a
    table (``vision.calibrate.measure_die_side``) and read told that size. Per set and in all: photos, those it
    could calibrate (``calibrated``), their dice, right, the readings ok, and dice read ok and wrong."""
    from vision.calibrate import measure_die_side
    from vision.evaluate import frame_names, image_of, match_boxes, reader_for, yolo_labels
    from vision.images import load_image

    folders = {name: folder for name, folder, *_ in SETS}
    seen = reader.with_view("above")
    out: dict[str, Any] = {}
    for name in sets:
        counts = dict.fromkeys(("photos", "calibrated", "dice", "right", "ok", "silently_wrong"), 0)
        for photo in frame_names(folders[name], None):
            frame = load_image(image_of(folders[name], photo))
            labels = yolo_labels(folders[name] / "labels" / f"{photo}.txt", frame.shape[1], frame.shape[0])
            told = reader_for(seen, len(labels))
            counts["photos"] += 1
            side, _, _ = measure_die_side(frame, told)
            if side is None:
                continue
            reading = told.with_die_side(side).read(frame)
            found = match_boxes([d.box for d in reading.dice], labels)
            counts["calibrated"] += 1
            counts["ok"] += reading.status == "ok"
            for (truth, *_), j in zip(labels, found):
                right = j is not None and reading.dice[j].seen == truth
                counts["dice"] += 1
                counts["right"] += right
                counts["silently_wrong"] += reading.status == "ok" and not right
        out[name] = counts
    out["all"] = {k: sum(out[name][k] for name in sets) for k in out[sets[0]]}
    return out


BENCHES["reading"] = bench_reading


def bench_crops(full: bool) -> dict[str, Any]:
    """``classify`` on the shared hand-sorted ``val`` crops cut as other people and cameras would cut them
    (``models.training.crop_robustness``: padded, tight, off centre, turned, small, big, JPEG, grey, dark): per change
    and in all, crops, right, silently wrong (sure and wrong) and flagged. The short form reads three changes."""
    from models.training.crop_robustness import BENCH_CHANGES, crops_of, measure, shared_crop_sets

    sets = shared_crop_sets()
    if not sets:
        return {"skipped": f"no shared crops beside the repository ({SHARED})"}
    crops = [c for root in sets for c in crops_of(root, ["val"])]
    changes = list(BENCH_CHANGES) if full else ["as cropped", "off centre 0.2", "16 px"]
    per_change = measure(load_reader(Settings.defaults(), threads=1), crops, changes)
    total = {k: sum(row[k] for row in per_change.values()) for k in ("crops", "right", "silently_wrong", "flagged")}
    total["silently_wrong_per_1000"] = round(1000 * total["silently_wrong"] / max(1, total["crops"]), 2)
    return {"sets": [root.name for root in sets], "changes": per_change, "all": total}


BENCHES["crops"] = bench_crops


def bench_other_looks(full: bool) -> dict[str, Any]:
    """``classify`` on dice of looks no shared set holds, drawn by their own code (``models.training.other_looks``:
    number dice, ones printed as an emblem): per look and per family, crops, right, silently wrong and flagged. The
    short form draws fewer of each."""
    from models.training.other_looks import read

    return read(load_reader(Settings.defaults(), threads=1), *((20, 60) if full else (3, 10)))


BENCHES["other_looks"] = bench_other_looks


def bench_not_dice(full: bool) -> dict[str, Any]:
    """The staged reader on things that are not dice (``models.training.not_dice``: a button, a coin, a glass bead...)
    in a die's place and beside three real dice, and in the simulated tray in a die's place: per mode and per thing,
    frames, readings ok, wrong verdicts, and the thing taken for a die (surely or doubted). The short form draws 5
    scenes of each thing a mode, the full 100: a wrong verdict here comes a few times in a hundred scenes, which 20 a
    thing showed as 0 or 1 by chance (docs/reading-log.md, "The refit cue read wider")."""
    from models.training.not_dice import read

    dice = real_val_dice()
    if len(dice) < 3:
        return {"skipped": f"no real dice to paste beside the repository ({SHARED})"}
    return read(load_reader(Settings.defaults(), threads=1), 100 if full else 5, dice)


BENCHES["not_dice"] = bench_not_dice


def bench_covered(full: bool) -> dict[str, Any]:
    """The staged reader on three real dice from above, one partly covered (``models.training.covered``: a finger, a
    card's edge, another die over it), and the same dice uncovered: per cover, frames, readings ok, wrong verdicts,
    the covered die read right and read wrong without a doubt. The short form draws 5 scenes of each, the full 100."""
    from models.training.covered import read

    dice = real_val_dice()
    if len(dice) < 3:
        return {"skipped": f"no real dice to paste beside the repository ({SHARED})"}
    return read(load_reader(Settings.defaults(), threads=1), 100 if full else 5, dice)


BENCHES["covered"] = bench_covered
