"""The finder judged on whole real photos, for developing it: ``python -m bench.finder_eval``.

It reads every photo of a split (``train`` by default: decide only on train,
the ``test`` split is for the bench's final report) with the full reader as
``read --as-seen`` does, and prints: dice found (a labelled die whose box holds
a reading's centre, the bench's ``_match``), per-die accuracy (a missed die
counts as wrong), the dice read right and wrong at or above the reader's
``min_confidence``, the dice read wrong with no doubt on them at all
(``silently_wrong``: what the referee would act on, and what the 9-in-10
flagged goal counts against; a die read sure can still carry a doubt, such
as a box of an odd size, and then the table is asked), extra detections (readings matching no label), the finder's
own recall (candidates before the classifier, to tell a finder miss from a
classifier rejection), and the photos with the most misses. ``--draw N``
saves the N worst photos annotated to ``/tmp/finder_eval_*.png``: labels in
blue (red when missed), candidates in yellow, readings in green.
"""

from __future__ import annotations

import argparse
import json
import time
from typing import Any

import cv2
import numpy as np

from companion.app.settings import Settings
from bench.reader import _match, split_photos
from vision.dataset import dataset_dir
from vision.finder import find_dice
from vision.reader import load_reader


def evaluate(data, reader=None) -> dict[str, Any]:
    """The figures above for ``data`` (from ``bench.reader.split_photos``), and per-photo rows."""
    reader = (reader or load_reader(Settings.defaults().with_overrides(reader__detector="classic"))).with_view("above")
    dice = found = right = right_sure = wrong_sure = silent = extra = cand_found = cands_n = 0
    rows = []
    t_find = 0.0
    for name, img, labels in data:
        t = time.perf_counter()
        cands = find_dice(img)
        t_find += time.perf_counter() - t
        cm = _match([c.box() for c in cands], labels)
        r = reader.read(img)
        m = _match([d.box for d in r.dice], labels)
        n_found = sum(j is not None for j in m)
        n_right = sum(j is not None and r.dice[j].top == lab[0] for lab, j in zip(labels, m))
        sure = [(r.dice[j].top == lab[0]) for lab, j in zip(labels, m) if j is not None and r.dice[j].confidence >= reader.min_confidence]
        right_sure += sum(sure)
        wrong_sure += len(sure) - sum(sure)
        silent += sum(j is not None and r.dice[j].top != lab[0] and not r.dice[j].doubts for lab, j in zip(labels, m))
        n_extra = len(r.dice) - n_found
        dice += len(labels)
        found += n_found
        right += n_right
        extra += n_extra
        cand_found += sum(j is not None for j in cm)
        cands_n += len(cands)
        rows.append({"name": name, "dice": len(labels), "missed": len(labels) - n_found, "wrong": n_found - n_right,
                     "extra": n_extra, "finder_missed": sum(j is None for j in cm), "candidates": len(cands)})
    return {
        "photos": len(data),
        "dice": dice,
        "found_share": round(found / max(1, dice), 4),
        "accuracy": round(right / max(1, dice), 4),
        "right_and_sure": right_sure,
        "wrong_and_sure": wrong_sure,
        "silently_wrong": silent,
        "extra_detections": extra,
        "finder_recall": round(cand_found / max(1, dice), 4),
        "candidates": cands_n,
        "finder_ms_per_photo": round(1000 * t_find / max(1, len(data)), 2),
        "rows": rows,
    }


def draw(reader, img: np.ndarray, labels) -> np.ndarray:
    """The photo with labels (blue, red when missed), the finder's candidates (yellow) and the readings (green)."""
    out = img.copy()
    cands = find_dice(img)
    for c in cands:
        pts = cv2.boxPoints(((c.cx, c.cy), (c.w, c.h), c.angle)).astype(np.int32)
        cv2.polylines(out, [pts], True, (0, 220, 255), 1)
    r = reader.with_view("above").read(img)
    m = _match([d.box for d in r.dice], labels)
    for (v, cx, cy, w, h), j in zip(labels, m):
        colour = (255, 0, 0) if j is not None else (0, 0, 255)
        cv2.rectangle(out, (int(cx - w / 2), int(cy - h / 2)), (int(cx + w / 2), int(cy + h / 2)), colour, 2)
        cv2.putText(out, str(v), (int(cx - w / 2), int(cy - h / 2) - 2), cv2.FONT_HERSHEY_SIMPLEX, 0.5, colour, 1)
    for d in r.dice:
        x, y, w, h = d.box
        cv2.rectangle(out, (x + 2, y + 2), (x + w - 2, y + h - 2), (0, 200, 0), 1)
        cv2.putText(out, f"{d.top}", (x + 3, y + h - 4), cv2.FONT_HERSHEY_SIMPLEX, 0.5, (0, 200, 0), 1)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--split", default="train")
    ap.add_argument("--worst", type=int, default=10, help="list this many photos with the most misses")
    ap.add_argument("--draw", type=int, default=0, help="save this many worst photos annotated to /tmp")
    args = ap.parse_args()
    root = dataset_dir()
    if root is None:
        raise SystemExit("the real-dice-byler dataset is not found (set ELEPHANTS_BLUFF_DICE_DATASET)")
    data = split_photos(root, args.split)
    reader = load_reader(Settings.defaults().with_overrides(reader__detector="classic"))
    res = evaluate(data, reader)
    rows = sorted(res.pop("rows"), key=lambda r: (-r["missed"], -r["extra"], -r["wrong"]))
    print(json.dumps(res, indent=1))
    for row in rows[:args.worst]:
        print(row)
    by_name = {n: (img, lab) for n, img, lab in data}
    for row in rows[:args.draw]:
        img, lab = by_name[row["name"]]
        cv2.imwrite(f"/tmp/finder_eval_{row['name']}.png", draw(reader, img, lab))


if __name__ == "__main__":
    main()
