"""Fit the leaning cue (``vision.leaning_cue``) for the shipped face classifier, on rendered frames from below and
from above and on real photos of dice lying flat.

Run with ``python -m models.training.leaning_cue [--leaning 1500] [--flat 2700] [--above 600] [--real-flat]
[--model M.onnx] [--out models/leaning-cue.npz]`` (about twenty minutes on one core; seeded, so the
same command makes the same file on one machine; another CPU's kernels move its weights in the fifth decimal). Each
rendered frame from below is read by the product's staged reader three ways (knowing nothing, the die size, the
whole tray mode), and every die any look keeps is embedded at the cue's crops
(``CUE_SPANS``). Positives: the die leaning on the cup (``render_calibrated_table(leaning=20-45 degrees)``).
Negatives: every die of frames where none leans. The other dice of a leaning frame teach nothing: their crops may
hold the leaning die's side face, and flagging them sends that reading to the table as it should.

From above (``--above`` frames, every other one with a leaning die; read as ``read --as-seen`` reads, knowing nothing
and the die size) the cue is the reader's only leaning check, and a real photo taken at a slant shows its flat dice'
side faces too: ``--real-flat`` adds every die the reader keeps in the shared sets' ``train`` photos read as seen
(``vision.dataset.shared_datasets``: Byler's, rune55's and skovy's; never a ``val`` or ``test`` split) as flat
negatives. The last fifth of each kind's frames, and of the real photos, is held out, and the report counts
frames: leaning frames with a die over the line, flat frames and real photos with one (each a needless confirmation).

The frames' seeds are their own (from below: leaning from 50,000, flat from 70,000; from above from 110,000): never
the bench's leaning frames (from 20,000), its simulated table (one stream from seed 216) nor the tests' frames from
above (30,000-30,199).
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
from vision.dataset import labels_in_pixels, shared_datasets, split_names
from vision.simtable import render_calibrated_table

LEANING_SEED, FLAT_SEED, ABOVE_SEED = 50_000, 70_000, 110_000
#: The shared sets whose ``train`` photos (of dice lying flat, photographed from above) are the cue's real negatives.
REAL_FLAT_SETS = ("real-dice-byler", "real-dice-rune55", "real-dice-skovy")
#: Flat frames push a die against the one before it this often (the renderer's default: 0.3): a flat die touching
#: another shows its neighbour's edge in its wider crop, much as a leaning die shows its side face.
FLAT_TOUCHING = 0.7
#: L2 weight of the logistic fit (over 4,800 features from a few thousand dice, it keeps the weights small).
L2 = 100.0
STEPS, RATE = 1000, 0.05
#: The line a die's score must reach to be doubted (less the runtime's margin): 0.95 doubted flat dice pushed
#: together on the bench's simulated table; 0.995 none (docs/READING.md, "The leaning cue").
THRESHOLD = 0.995


def _cue_reader(model: Path | None, looked: list):
    """The staged reader (with ``model`` as its face classifier, or the shipped one) without any cue, every look's
    normalised frame and kept dice appended to ``looked``, and the classifier's embedding."""
    from vision.reader import load_reader

    settings = Settings.defaults()
    base = load_reader(settings.with_overrides(reader__model=str(model)) if model else settings, threads=1)
    # without any cue: the looks a reading takes depend on its doubts, so a cue in place would change the data
    reader = type(base)(base.classifier, base.proposer, **base.options(), leaning_cue=None,
                        on_dice=lambda prepared, dice: looked.append((prepared, dice)))
    return reader, base.classifier.logits_and_embedding  # the registry opens the face model with its embedding


def _kept_near(embed, looked: list, centres: list[tuple[float, float, float]]):
    """Each die any look kept whose centre lies within half a side of one of ``centres`` (cx, cy, side, in frame
    pixels): its features and the index of that centre."""
    for prepared, dice in looked:
        props = [d.proposal for d in dice]
        if not props:
            continue
        feats = cue_features(embed, prepared.bgr, props)
        ox, oy = prepared.offset
        for f, p in zip(feats, props):
            dist = [np.hypot(p.cx + ox - cx, p.cy + oy - cy) for cx, cy, _ in centres]
            i = int(np.argmin(dist))
            if dist[i] <= 0.5 * centres[i][2]:
                yield f, i


def collect(first_seed: int, frames: int, leaning: bool, model: Path | None = None,
            view: str = "below") -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Features (N × width), labels (1: the leaning die) and each row's frame seed, from the staged reader's own dice.
    From ``view`` "above" the frames are read as seen (no empty tray: a photo has none); every other frame there has a
    leaning die where ``leaning`` (the flat ones' dice are negatives too)."""
    looked: list = []
    reader, embed = _cue_reader(model, looked)
    if view == "above":
        reader = reader.with_view("above")
    rows, labels, seeds = [], [], []
    for seed in range(first_seed, first_seed + frames):
        rng = np.random.default_rng(seed)
        seen = [int(v) for v in rng.integers(1, 7, 3)]
        tilted = leaning and (view == "below" or seed % 2 == 0)
        tilt = float(rng.uniform(20, 45)) if tilted else 0.0
        frame, placed, empty = render_calibrated_table(seen, rng, view=view, leaning=tilt,
                                                       touching=0.3 if tilted else FLAT_TOUCHING)
        looked.clear()
        sized = reader.with_die_side(placed[0].side)
        for r in (reader, sized, sized.with_empty_tray(empty)) if view == "below" else (reader, sized):
            r.read(frame)
        for f, i in _kept_near(embed, looked, [(q.cx, q.cy, q.side) for q in placed]):
            if tilted and i != 0:
                continue
            rows.append(f)
            labels.append(int(tilted and i == 0))
            seeds.append(seed)
    return np.array(rows, np.float32), np.array(labels), np.array(seeds)


def collect_real_flat(model: Path | None = None, sets: tuple[str, ...] = REAL_FLAT_SETS,
                      per_set: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Features of every die the reader keeps, read as seen and told the photo's count, in the ``train`` photos of
    the shared ``sets`` that are there (dice lying flat; the first ``per_set`` of each, 0: all), and each row's photo
    number (in the order read)."""
    looked: list = []
    reader, embed = _cue_reader(model, looked)
    above = reader.with_view("above")
    rows, photos = [], []
    number = 0
    for name in sets:
        root = shared_datasets() / name
        if not (root / "split.json").is_file():
            continue
        names = split_names(root, "train")
        for photo in names[:per_set] if per_set else names:
            path = next((p for p in (root / "images").glob(f"{photo}.*")), None)
            frame = cv2.imread(str(path)) if path is not None else None
            if frame is None:
                continue
            labels = labels_in_pixels(root, photo, frame.shape[1], frame.shape[0])
            if not labels:
                continue
            looked.clear()
            above.with_expected(len(labels)).read(frame)
            for f, _ in _kept_near(embed, looked, [(cx, cy, max(w, h)) for _, cx, cy, w, h in labels]):
                rows.append(f)
                photos.append(number)
            number += 1
    return np.array(rows, np.float32), np.array(photos)


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
    ap.add_argument("--leaning", type=int, default=1500, help="rendered frames from below with a die leaning on the cup")
    ap.add_argument("--flat", type=int, default=2700, help="rendered frames from below with every die flat")
    ap.add_argument("--above", type=int, default=600, help="rendered frames from above, every other one with a die leaning (0: none)")
    ap.add_argument("--real-flat", action=argparse.BooleanOptionalAction, default=True,
                    help="the shared sets' train photos, read as seen, as flat dice (default: on)")
    ap.add_argument("--real-photos", type=int, default=0, help="with --real-flat, the first N train photos of each set (0: all)")
    ap.add_argument("--model", type=Path, help="fit the cue for this face model (.onnx; a candidate before it ships) "
                    "instead of the shipped one; write it with --out elsewhere than the shipped cue")
    ap.add_argument("--out", type=Path, default=shipped_cue_path(), help="the cue file written (default: the shipped one)")
    args = ap.parse_args(argv)
    if args.leaning < 5 or args.flat < 5 or 0 < args.above < 10:
        ap.error("give at least 5 frames of each kind from below, and none or at least 10 from above (a fifth of them is held out)")
    if args.model is not None and not args.model.is_file():
        ap.error(f"there is no model file at {args.model}")
    if args.model is not None and args.out.resolve() == shipped_cue_path().resolve():
        ap.error("a cue for a model that is not shipped goes elsewhere than the shipped cue: give --out")
    cv2.setNumThreads(1)
    lx, ly, ls = collect(LEANING_SEED, args.leaning, True, args.model)
    fx, fy, fs = collect(FLAT_SEED, args.flat, False, args.model)
    held_lean, held_flat = ls >= LEANING_SEED + args.leaning * 4 // 5, fs >= FLAT_SEED + args.flat * 4 // 5
    parts_x, parts_y = [lx[~held_lean], fx[~held_flat]], [ly[~held_lean], fy[~held_flat]]
    if args.above:
        ax, ay, as_ = collect(ABOVE_SEED, args.above, True, args.model, view="above")
        held_above = as_ >= ABOVE_SEED + args.above * 4 // 5
        parts_x.append(ax[~held_above])
        parts_y.append(ay[~held_above])
    if args.real_flat:
        rx, rp = collect_real_flat(args.model, per_set=args.real_photos)
        held_real = rp >= (rp.max() + 1) * 4 // 5 if len(rp) else np.zeros(0, bool)
        parts_x.append(rx[~held_real])
        parts_y.append(np.zeros(int((~held_real).sum()), int))
    x, y = np.concatenate(parts_x), np.concatenate(parts_y)
    cue = fit(x, y, file_model_id(args.model) if args.model is not None else shipped_model_id())
    args.out.parent.mkdir(parents=True, exist_ok=True)
    cue.save(args.out)
    caught, leaning = frames_flagged(cue, lx[held_lean], ls[held_lean])
    needless, flat = frames_flagged(cue, fx[held_flat], fs[held_flat])
    print(f"wrote {args.out} (fit on {len(y)} dice, {int(y.sum())} leaning; classifier {cue.classifier_id})")
    print(f"held out, from below: {caught} of {leaning} leaning frames doubted, {needless} of {flat} flat frames doubted")
    if args.above:
        tilted = np.array([s % 2 == 0 for s in as_])
        keep_lean, keep_flat = held_above & tilted, held_above & ~tilted
        caught, leaning = frames_flagged(cue, ax[keep_lean & (ay == 1)], as_[keep_lean & (ay == 1)])
        needless, flat = frames_flagged(cue, ax[keep_flat], as_[keep_flat])
        print(f"held out, from above: {caught} of {leaning} leaning frames doubted, {needless} of {flat} flat frames doubted")
    if args.real_flat and len(rp):
        needless, photos = frames_flagged(cue, rx[held_real], rp[held_real])
        print(f"held out, real train photos read as seen: {needless} of {photos} photos with a die doubted")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
