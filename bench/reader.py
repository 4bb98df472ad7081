"""``bench --only reader``: the reader's figures, measured, never assumed.

* accuracy on the real photos' ``test`` split, per die and per value: crops cut
  around each labelled box (the ``classify`` path) and whole frames read as
  seen (the ``read --as-seen`` path);
* the synthetic table: all 216 ordered outcomes of three dice in several
  rendered layouts: right, ``uncertain``, or silently wrong; again with each
  frame's die size known, as after ``calibrate --dice``;
* frames with a die leaning on the cup (RULES.md R14): how many the reader
  trusted (``ok``) instead of asking the table, and whether any of those was
  read wrong;
* the share of wrong dice that were flagged: a crop read unsure; in a whole
  photo a die missed, or one that alone makes its reading uncertain (its
  ``doubts``: unsure, cut off, leaning), and beside it the share read unsure;
* speed on one core: a full read of 1280×960 three-dice frames (a dozen layouts; again with
  their die size known), the classifier
  on three faces; the model's size;
* the same figures for the no-model baseline (``vision.baseline``), same run.
"""

from __future__ import annotations

import statistics
import time
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from bench.report import BENCHES
from companion.app.settings import Settings
from vision import baseline
from vision.classifier import CROP, MARGIN, cut_crop
from vision.dataset import Label, dataset_dir, photo, split_names
from vision.finder import find_dice
from vision.classic_reader import DiceReader
from vision.reader import load_reader
from vision.simtable import render_calibrated_table, render_table

def split_photos(root: Path, split: str) -> list[tuple[str, np.ndarray, list[Label]]]:
    """(name, image, [(value, cx, cy, w, h)]) for every photo of ``split``."""
    return [(name, *photo(root, name)) for name in split_names(root, split)]


def test_split(root: Path) -> list[tuple[str, np.ndarray, list[Label]]]:
    """Every photo of the ``test`` split, for the final report only."""
    return split_photos(root, "test")


def _confusion(truth: list[int], pred: list[int]) -> list[list[int]]:
    """Rows: true value 1..6; columns: predicted 0..6 (0: not found)."""
    m = [[0] * 7 for _ in range(6)]
    for t, p in zip(truth, pred):
        m[t - 1][p] += 1
    return m


def _scores(truth: list[int], pred: list[int], flagged: list[bool]) -> dict[str, Any]:
    n = len(truth)
    right = [t == p for t, p in zip(truth, pred)]
    wrong = n - sum(right)
    per_value = {str(v): round(sum(r for t, r in zip(truth, right) if t == v) / max(1, truth.count(v)), 4) for v in range(1, 7)}
    return {
        "dice": n,
        "accuracy": round(sum(right) / max(1, n), 4),
        "per_value": per_value,
        "wrong": wrong,
        "wrong_flagged_share": round(sum(f for r, f in zip(right, flagged) if not r) / wrong, 4) if wrong else None,
        "right_flagged_share": round(sum(f for r, f in zip(right, flagged) if r) / max(1, n - wrong), 4),
        "confusion_rows_true_cols_pred0to6": _confusion(truth, pred),
    }


def label_crop(img: np.ndarray, cx: float, cy: float, w: float, h: float) -> np.ndarray:
    """The square crop around a labelled die's box (the die about 77-100 % of its width), as ``classify`` takes."""
    side = max(w, h) * MARGIN
    x0, y0 = int(round(cx - side / 2)), int(round(cy - side / 2))
    return img[max(0, y0):y0 + int(side), max(0, x0):x0 + int(side)]


def real_crops(reader: DiceReader, data) -> dict[str, Any]:
    """Each labelled die cut as a square crop (``label_crop``), read like ``classify``."""
    truth, pred, flagged, base = [], [], [], []
    for _, img, labels in data:
        for value, cx, cy, w, h in labels:
            v, conf = reader.classify_crop(label_crop(img, cx, cy, w, h))
            truth.append(value)
            pred.append(v)
            flagged.append(conf < reader.min_confidence)
            base.append(baseline.count_marks(cut_crop(img, cx, cy, max(w, h) / MARGIN * 1.0)))
    return {"model": _scores(truth, pred, flagged), "baseline": _scores(truth, base, [False] * len(base))}


def _match(boxes: list[tuple[int, int, int, int]], labels) -> list[int | None]:
    """For each label, the index of the found die whose centre lies inside its box (nearest), or None."""
    used: set[int] = set()
    out: list[int | None] = []
    for _, cx, cy, w, h in labels:
        best = None
        for j, (x, y, bw, bh) in enumerate(boxes):
            if j in used:
                continue
            d = np.hypot(x + bw / 2 - cx, y + bh / 2 - cy)
            if d < 0.5 * max(w, h) and (best is None or d < best[0]):
                best = (d, j)
        out.append(best[1] if best else None)
        if best:
            used.add(best[1])
    return out


def real_frames(reader: DiceReader, data) -> dict[str, Any]:
    """Whole photos through the reader as seen from above (``read --as-seen``); a missed die counts as wrong."""
    seen_reader = reader.with_view("above")
    truth, pred, flagged, unsure, base_pred, extra, found = [], [], [], [], [], 0, 0
    for _, img, labels in data:
        r = seen_reader.read(img)
        boxes = [d.box for d in r.dice]
        m = _match(boxes, labels)
        extra += len(boxes) - sum(j is not None for j in m)
        for (value, *_), j in zip(labels, m):
            truth.append(value)
            pred.append(r.dice[j].top if j is not None else 0)
            # flagged: missed, or a die that alone makes its reading uncertain (unsure, cut off, leaning)
            flagged.append(j is None or bool(r.dice[j].doubts))
            unsure.append(j is None or r.dice[j].confidence < reader.min_confidence)
            found += j is not None
        # The baseline: the same finder, marks counted instead of the model (it cannot reject non-dice).
        cands = find_dice(img)
        bboxes = [c.box() for c in cands]
        bm = _match(bboxes, labels)
        for (value, *_), j in zip(labels, bm):
            c = cands[j] if j is not None else None
            base_pred.append(baseline.count_marks(cut_crop(img, c.cx, c.cy, max(c.w, c.h), c.angle)) if c else 0)
    out = {"model": _scores(truth, pred, flagged), "baseline": _scores(truth, base_pred, [False] * len(truth))}
    out["model"].update(found_share=round(found / max(1, len(truth)), 4), extra_detections=extra,
                        wrong_unsure_share=_scores(truth, pred, unsure)["wrong_flagged_share"])
    return out


def synthetic(reader: DiceReader, layouts: int, die_side_known: bool = False, empty_tray: bool = False) -> dict[str, Any]:
    """All 216 ordered outcomes × ``layouts`` rendered frames (seeded), from below, read with the real reader.

    ``die_side_known``: each frame is read knowing its dice's size, as on a
    table where ``calibrate --dice`` stored it (the renderer varies the size
    from frame to frame, as from table to table). ``empty_tray`` (the staged
    reader only): also knowing the empty tray's photo, as ``calibrate`` takes
    it: the whole tray mode. The frames are the same in every case.
    """
    rng = np.random.default_rng(216)
    right = uncertain = wrong = 0
    dice_truth, dice_pred, dice_flag = [], [], []
    base_right = base_n = 0
    for layout in range(layouts):
        for a in range(1, 7):
            for b in range(1, 7):
                for c in range(1, 7):
                    tops = [a, b, c]
                    seen = [reader.opposite[t - 1] for t in tops]
                    if empty_tray:
                        frame, placed, empty = render_calibrated_table(seen, rng, view="below")
                        r = reader.with_die_side(placed[0].side).with_empty_tray(empty).read(frame)
                    else:
                        frame, placed = render_table(seen, rng, view="below")
                        r = (reader.with_die_side(placed[0].side) if die_side_known else reader).read(frame)
                    labels = [(t, d.cx, d.cy, d.side, d.side) for t, d in zip(tops, placed)]
                    m = _match([d.box for d in r.dice], labels)
                    got = [r.dice[j].top if j is not None else 0 for j in m]
                    ok_all = got == tops and len(r.dice) == 3
                    if r.status == "ok":
                        right += ok_all
                        wrong += not ok_all
                    else:
                        uncertain += 1
                    for t, g, j in zip(tops, got, m):
                        dice_truth.append(t)
                        dice_pred.append(g)
                        dice_flag.append(r.status != "ok" or j is None or r.dice[j].confidence < reader.min_confidence)
                    for d, t in zip(placed, tops):
                        crop = cut_crop(frame, d.cx, d.cy, d.side, d.angle)
                        base_right += reader.opposite[baseline.count_marks(crop) - 1] == t
                        base_n += 1
    frames = 216 * layouts
    return {
        "frames": frames,
        "layouts": layouts,
        "ok_and_right": right,
        "uncertain": uncertain,
        "ok_but_wrong": wrong,
        "right_or_uncertain_share": round((right + uncertain) / frames, 4),
        "ok_share": round((right + wrong) / frames, 4),
        "dice": _scores(dice_truth, dice_pred, dice_flag),
        "baseline_per_die_accuracy_on_true_boxes": round(base_right / max(1, base_n), 4),
    }


def leaning_frames(frames: int, first_seed: int = 20_000):
    """``frames`` seeded three-dice frames from below whose first die leans on the cup by 20-45 degrees:
    (the faces seen, the frame, where each die lies) for each."""
    for seen, frame, placed, _ in calibrated_leaning_frames(frames, first_seed):
        yield seen, frame, placed


def calibrated_leaning_frames(frames: int, first_seed: int = 20_000):
    """``leaning_frames`` (the same frames), each with its empty tray as ``calibrate`` photographs it."""
    for seed in range(first_seed, first_seed + frames):
        rng = np.random.default_rng(seed)
        seen = [int(v) for v in rng.integers(1, 7, 3)]
        frame, placed, empty = render_calibrated_table(seen, rng, view="below", leaning=float(rng.uniform(20, 45)))
        yield seen, frame, placed, empty


def synthetic_leaning(reader: DiceReader, frames: int, tray_mode: bool = False) -> dict[str, Any]:
    """``frames`` seeded three-dice frames from below whose first die leans on the cup by 20-45 degrees
    (``render_table(leaning=...)``), each read with its die size unknown and known: a leaning die must
    make the reading uncertain (RULES.md R14). ``trusted``: readings ``ok`` all the same; ``ok_but_wrong``:
    those whose values differ from the faces the camera sees. ``tray_mode`` (the staged reader): each
    frame is also read in the whole tray mode (die size and empty tray), counted apart as ``tray_mode``."""
    readings = trusted = wrong = 0
    tray = {"readings": 0, "trusted": 0, "ok_but_wrong": 0}
    for seen, frame, placed, empty in calibrated_leaning_frames(frames):
        sized = reader.with_die_side(placed[0].side)
        for r in (reader.read(frame), sized.read(frame)):
            readings += 1
            if r.status == "ok":
                trusted += 1
                wrong += sorted(d.seen for d in r.dice) != sorted(seen)
        if tray_mode:
            r = sized.with_empty_tray(empty).read(frame)
            tray["readings"] += 1
            tray["trusted"] += r.status == "ok"
            tray["ok_but_wrong"] += r.status == "ok" and sorted(d.seen for d in r.dice) != sorted(seen)
    out = {"frames": frames, "readings": readings, "trusted": trusted, "ok_but_wrong": wrong,
           "uncertain_share": round(1 - trusted / max(1, readings), 4)}
    if tray_mode:
        out["tray_mode"] = {**tray, "uncertain_share": round(1 - tray["trusted"] / max(1, tray["readings"]), 4)}
    return out


#: ``from_above``'s frames: their own seeds, apart from the leaning cue's fit (from 110,000) and the tests' (30,000-30,199).
ABOVE_SEED = 40_000


def from_above(reader: Any, frames: int, first_seed: int = ABOVE_SEED) -> dict[str, Any]:
    """``frames`` seeded three-dice frames rendered from above (a photo of the tray's floor, each die's shadow drawn),
    every other one with its first die leaning on the cup by 20-45 degrees, read as ``read --as-seen`` reads (face
    seen, nothing known of the tray). From above a die's outline is not judged (``reconcile.flag_leaning``): the
    leaning cue is the check. ``leaning``: readings of a leaning frame ``ok`` all the same (``trusted``) and those of
    them whose faces are not the ones the camera sees; ``flat``: readings ``ok`` and right, and ``ok`` but wrong;
    ``ok_but_wrong``: both kinds' together."""
    above = reader.with_view("above")
    lean = {"frames": 0, "trusted": 0, "ok_but_wrong": 0}
    flat = {"frames": 0, "ok_and_right": 0, "ok_but_wrong": 0}
    for seed in range(first_seed, first_seed + frames):
        rng = np.random.default_rng(seed)
        seen = [int(v) for v in rng.integers(1, 7, 3)]
        leaning = seed % 2 == 0
        frame, _ = render_table(seen, rng, view="above", leaning=float(rng.uniform(20, 45)) if leaning else 0.0)
        r = above.read(frame)
        right = r.status == "ok" and sorted(d.seen for d in r.dice) == sorted(seen)
        tally = lean if leaning else flat
        tally["frames"] += 1
        tally["ok_but_wrong"] += r.status == "ok" and not right
        if leaning:
            lean["trusted"] += r.status == "ok"
        else:
            flat["ok_and_right"] += right
    lean["uncertain_share"] = round(1 - lean["trusted"] / max(1, lean["frames"]), 4)
    flat["ok_share"] = round(flat["ok_and_right"] / max(1, flat["frames"]), 4)
    return {"leaning": lean, "flat": flat, "ok_but_wrong": lean["ok_but_wrong"] + flat["ok_but_wrong"]}


def _read_times(reads: list[tuple[DiceReader, np.ndarray]], repeats: int) -> tuple[list[float], list[list[float]]]:
    """Milliseconds of each read (after one untimed read of each), round-robin, ``repeats`` in all; and per frame."""
    for reader, frame in reads:
        reader.read(frame)
    per_frame: list[list[float]] = [[] for _ in reads]
    for _ in range(max(1, repeats // len(reads))):
        for i, (reader, frame) in enumerate(reads):
            t = time.perf_counter()
            reader.read(frame)
            per_frame[i].append((time.perf_counter() - t) * 1000)
    return [t for ts in per_frame for t in ts], per_frame


def speed(reader: DiceReader, repeats: int, layouts: int = 12) -> dict[str, Any]:
    """Median milliseconds on one core: a full read of 1280×960 with three dice; the classifier on three faces.

    The read is timed over ``layouts`` simulated frames (dice apart and
    touching, in and out of the cup, glare), each read ``repeats / layouts``
    times round-robin, and the median is over all the reads: one frame alone
    says more about its own glare than about the reader (the slowest
    layout's median is reported beside it).
    """
    cv2.setNumThreads(1)
    rng = np.random.default_rng(5)
    rendered = [render_table([2, 4, 6], rng, view="below") for _ in range(layouts)]
    frames = [frame for frame, _ in rendered]
    times, per_layout = _read_times([(reader, frame) for frame in frames], repeats)
    # the same frames, each read knowing its dice's size (a table after ``calibrate --dice``)
    known, _ = _read_times([(reader.with_die_side(placed[0].side), frame) for frame, placed in rendered], repeats)
    frame, placed = rendered[0]
    crops = np.array([cut_crop(frame, d.cx, d.cy, d.side, d.angle) for d in placed], np.uint8)
    ctimes = []
    for _ in range(repeats):
        t = time.perf_counter()
        reader.classifier.probabilities(crops)
        ctimes.append((time.perf_counter() - t) * 1000)
    btimes = []
    for _ in range(repeats):
        t = time.perf_counter()
        [baseline.count_marks(c) for c in crops]
        btimes.append((time.perf_counter() - t) * 1000)
    return {
        "read_1280x960_3_dice_median_ms": round(statistics.median(times), 2),
        "read_p90_ms": round(float(np.percentile(times, 90)), 2),
        "read_slowest_layout_median_ms": round(max(statistics.median(ts) for ts in per_layout), 2),
        "read_die_side_known_median_ms": round(statistics.median(known), 2),
        "layouts": layouts,
        "classifier_3_faces_median_ms": round(statistics.median(ctimes), 3),
        "baseline_count_3_faces_median_ms": round(statistics.median(btimes), 3),
        "repeats": len(times),
        "threads": 1,
    }


def bench_reader(full: bool) -> dict[str, Any]:
    reader = load_reader(Settings.defaults().with_overrides(reader__detector="classic"), threads=1)
    report: dict[str, Any] = {
        "model_id": reader.model_id,
        "model_bytes": reader.classifier.path.stat().st_size,
        "min_confidence": reader.min_confidence,
        "crop_px": CROP,
    }
    report["speed"] = speed(reader, 200 if full else 60)
    root = dataset_dir()
    if root is None:
        report["real_test"] = "skipped: the real-dice-byler dataset is not found (set ELEPHANTS_BLUFF_DICE_DATASET)"
    else:
        data = test_split(root)
        report["real_test_crops"] = real_crops(reader, data)
        report["real_test_frames_as_seen"] = real_frames(reader, data)
    report["synthetic_216"] = synthetic(reader, 5 if full else 3)
    report["synthetic_216_die_side_known"] = synthetic(reader, 5 if full else 1, die_side_known=True)
    report["synthetic_leaning"] = synthetic_leaning(reader, 100 if full else 20)
    return report


BENCHES["reader"] = bench_reader
