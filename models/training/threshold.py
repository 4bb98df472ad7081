"""Pick ``reader.min_confidence`` from the validation crops (``validation.json``), never from ``test``.

Prints, for a range of thresholds, the share of wrong dice it flags and of
right dice it flags needlessly (each then costs the table one confirmation),
and the smallest threshold that flags at least 95 % of the wrong ones.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np


def main() -> int:
    v = json.loads((Path(__file__).with_name("validation.json")).read_text())
    probs = np.concatenate([np.array(v[k]["probabilities"]) for k in ("val_real", "val_synth")])
    labels = np.concatenate([np.array(v[k]["labels"]) for k in ("val_real", "val_synth")])
    dice = labels > 0
    p = probs[dice]
    y = labels[dice]
    pred = p[:, 1:].argmax(1) + 1
    conf = p[np.arange(len(p)), pred]
    wrong = pred != y
    print(f"model {v['model']}: {dice.sum()} validation dice, {wrong.sum()} wrong ({wrong.mean():.2%})")
    if v.get("fit_on_held_out"):
        print("note: this run also trained on its real validation photos (train --all-photos): pick the threshold "
              "from the run that chose the recipe")
    pick = None
    for t in (0.5, 0.6, 0.7, 0.8, 0.85, 0.9, 0.95, 0.97, 0.99):
        fw = (conf[wrong] < t).mean() if wrong.any() else 1.0
        fr = (conf[~wrong] < t).mean()
        print(f"threshold {t:.2f}: flags {fw:.1%} of wrong dice, {fr:.1%} of right dice")
        if pick is None and fw >= 0.95:
            pick = t
    print(f"suggested reader.min_confidence: {pick}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
