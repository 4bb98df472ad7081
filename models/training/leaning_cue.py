"""Fit the leaning cue (``vision.leaning_cue``) on rendered frames from below, for the shipped face classifier.

Run with ``python -m models.training.leaning_cue [--leaning 1500] [--flat 2700] [--model M.onnx] [--out models/leaning-cue.npz]``
(about twelve minutes on one core and 6 GB of memory; seeded, so the same command makes the same file). Each frame is read by the
product's staged reader three ways (knowing nothing, the die size, the whole tray mode), and every die any look
keeps is embedded at the cue's crops (``CUE_SPANS``). Positives: the die leaning on the cup (``render_calibrated_table(
leaning=20-45 degrees)``). Negatives: every die of frames where none leans. The other dice of a leaning frame
teach nothing: their crops may hold the leaning die's side face, and flagging them sends that reading to the
table as it should. The last fifth of each kind's frames is held out, and the report counts frames: leaning
frames with a die over the line, flat frames with one (each a needless confirmation).

The frames' seeds are their own (leaning from 50,000, flat from 70,000): never the bench's leaning frames (from
20,000) nor its simulated table (one stream from seed 216).
"""

from __future__ import annotations

import argparse
from pathlib import Path

import cv2
import numpy as np

from companion.app.settings import Settings
from vision.classifier import file_model_id, shipped_model_id
from vision.leaning_cue import LeaningCue, cue_features, shipped_cue_path
from vision.linear_cue import LinearCue
from vision.simtable import render_calibrated_table

LEANING_SEED, FLAT_SEED = 50_000, 70_000
#: Flat frames push a die against the one before it this often (the renderer's default: 0.3): a flat die touching
#: another shows its neighbour's edge in its wider crop, much as a leaning die shows its side face.
FLAT_TOUCHING = 0.7
#: L2 weight of the logistic fit (over 4,800 features from a few thousand dice, it keeps the weights small).
L2 = 100.0
STEPS, RATE = 1000, 0.05
#: The line a die's score must reach to be doubted (less the runtime's margin): 0.95 doubted flat dice pushed
#: together on the bench's simulated table; 0.995 none (docs/READING.md, "The leaning cue").
THRESHOLD = 0.995


def collect(first_seed: int, frames: int, leaning: bool, model: Path | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Features (N × width), labels (1: the leaning die) and each row's frame seed, from the staged reader's own dice
    (with ``model`` as its face classifier, or the shipped one)."""
    from vision.reader import load_reader

    looked: list = []  # every look's normalised frame and kept dice, as the cue will see them
    settings = Settings.defaults()
    base = load_reader(settings.with_overrides(reader__model=str(model)) if model else settings, threads=1)
    embed = base.classifier.logits_and_embedding  # the registry opens the face model with its embedding
    # without any cue: the looks a reading takes depend on its doubts, so a cue in place would change the data
    reader = type(base)(base.classifier, base.proposer, **base.options(), leaning_cue=None,
                        on_dice=lambda prepared, dice: looked.append((prepared, dice)))
    rows, labels, seeds = [], [], []
    for seed in range(first_seed, first_seed + frames):
        rng = np.random.default_rng(seed)
        seen = [int(v) for v in rng.integers(1, 7, 3)]
        tilt = float(rng.uniform(20, 45)) if leaning else 0.0
        frame, placed, empty = render_calibrated_table(seen, rng, view="below", leaning=tilt,
                                                       touching=0.3 if leaning else FLAT_TOUCHING)
        looked.clear()
        sized = reader.with_die_side(placed[0].side)
        for r in (reader, sized, sized.with_empty_tray(empty)):
            r.read(frame)
        for prepared, dice in looked:
            props = [d.proposal for d in dice]
            if not props:
                continue
            feats = cue_features(embed, prepared.bgr, props)
            ox, oy = prepared.offset
            for f, p in zip(feats, props):
                dist = [np.hypot(p.cx + ox - q.cx, p.cy + oy - q.cy) for q in placed]
                i = int(np.argmin(dist))
                if dist[i] > 0.5 * placed[i].side or (leaning and i != 0):
                    continue
                rows.append(f)
                labels.append(int(leaning))
                seeds.append(seed)
    return np.array(rows, np.float32), np.array(labels), np.array(seeds)


def fit(x: np.ndarray, y: np.ndarray, classifier_id: str, threshold: float = THRESHOLD, kind: type[LinearCue] = LeaningCue) -> LinearCue:
    """A class-balanced logistic layer on the standardised features, by plain gradient descent (no extra library):
    a cue of ``kind`` (the number-dice cue is fit here too, ``models.training.number_cue``)."""
    mean, scale = x.mean(0), x.std(0) + 1e-3
    z = ((x - mean) / scale).astype(np.float64)  # once: float32 against float64 weights would upcast it every step
    yf = y.astype(np.float64)
    balance = np.where(yf == 1, 0.5 / yf.mean(), 0.5 / (1 - yf.mean()))
    w, b = np.zeros(z.shape[1]), 0.0
    for _ in range(STEPS):
        p = 1 / (1 + np.exp(-(z @ w + b)))
        err = (p - yf) * balance
        w -= RATE * (z.T @ err / len(yf) + L2 * w / len(yf))
        b -= RATE * float(err.mean())
    return kind(w.astype(np.float32), float(b), mean.astype(np.float32), scale.astype(np.float32), classifier_id, threshold)


def frames_flagged(cue: LeaningCue, x: np.ndarray, seeds: np.ndarray) -> tuple[int, int]:
    """How many of the frames (``seeds``) have a die the cue doubts, of how many."""
    doubted = np.array(cue.leaning(x)) if len(x) else np.zeros(0, bool)
    frames = sorted(set(seeds.tolist()))
    return sum(bool(doubted[seeds == s].any()) for s in frames), len(frames)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--leaning", type=int, default=1500, help="rendered frames with a die leaning on the cup")
    ap.add_argument("--flat", type=int, default=2700, help="rendered frames with every die flat")
    ap.add_argument("--model", type=Path, help="fit the cue for this face model (.onnx; a candidate before it ships) "
                    "instead of the shipped one; write it with --out elsewhere than the shipped cue")
    ap.add_argument("--out", type=Path, default=shipped_cue_path(), help="the cue file written (default: the shipped one)")
    args = ap.parse_args(argv)
    if args.leaning < 5 or args.flat < 5:
        ap.error("give at least 5 frames of each kind (a fifth of them is held out)")
    if args.model is not None and not args.model.is_file():
        ap.error(f"there is no model file at {args.model}")
    if args.model is not None and args.out.resolve() == shipped_cue_path().resolve():
        ap.error("a cue for a model that is not shipped goes elsewhere than the shipped cue: give --out")
    cv2.setNumThreads(1)
    lx, ly, ls = collect(LEANING_SEED, args.leaning, True, args.model)
    fx, fy, fs = collect(FLAT_SEED, args.flat, False, args.model)
    held_lean, held_flat = ls >= LEANING_SEED + args.leaning * 4 // 5, fs >= FLAT_SEED + args.flat * 4 // 5
    x = np.concatenate([lx[~held_lean], fx[~held_flat]])
    y = np.concatenate([ly[~held_lean], fy[~held_flat]])
    cue = fit(x, y, file_model_id(args.model) if args.model is not None else shipped_model_id())
    args.out.parent.mkdir(parents=True, exist_ok=True)
    cue.save(args.out)
    caught, leaning = frames_flagged(cue, lx[held_lean], ls[held_lean])
    needless, flat = frames_flagged(cue, fx[held_flat], fs[held_flat])
    print(f"wrote {args.out} (fit on {len(y)} dice, {int(y.sum())} leaning; classifier {cue.classifier_id})")
    print(f"held out: {caught} of {leaning} leaning frames doubted, {needless} of {flat} flat frames doubted")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
