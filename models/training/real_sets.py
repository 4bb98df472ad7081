"""Training crops from every shared real dice set, cut as a detector would cut them.

The shipped model learned real plastic from one tray (``real-dice-byler``) and
read the other shared sets' val splits at 68-78 %. This module cuts crops from
the ``train`` split of every set in ``shared/datasets`` (and only from it; the
``val`` splits are cut here too, but only as validation crops):

- whole frames (byler's fitted photos, rune55 tray and cup, skovy frames): each
  labelled die cut by ``vision.classifier.cut_crop`` with a detector's errors
  (centre off by up to ``CENTRE_JITTER`` of the side, side ±``SIDE_JITTER``, any
  angle), and hard "not a die" crops from the same frames: plain background and
  tray rims away from every die, half a die (the crop centred off its edge), the
  gap between two neighbouring dice;
- hand-sorted crops (skovy, patterson): the die's side estimated from the crop
  (``CROP_DIE_SHARE``), then cut with the same jitter;
- synthetic look-alikes as "not a die": coins, fingertips, round and square game
  pieces with no marks, on real background patches (``lookalikes``).

Dice under ``MIN_SIDE`` px (rune55's tray dice at the edge of the photo, down to
22 px) are left out: their marks cannot be counted, and a face taught for them
would be a confident guess. The reader flags them as unsure.

Plain numpy and OpenCV (no torch), so it is tested without PyTorch.
"""

from __future__ import annotations

import csv
import json
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np

from vision.classifier import CROP, MARGIN, cut_crop
from vision.dataset import dataset_dir as byler_dir
from vision.dataset import labels_in_pixels

#: A detector's errors imitated for every real die: centre off by up to this share of the side (uniform in a disc)...
CENTRE_JITTER = 0.12
#: ...and the side scaled by 1 ± this.
SIDE_JITTER = 0.15
#: Dice smaller than this (px, the box's long side) are not taught a face: their marks cannot be read.
MIN_SIDE = 30.0
#: The die's side as a share of a hand-sorted crop's short side (skovy's crops have a 10 px margin and show
#: side faces below the top face; patterson's are cut tight around a turned die, so the face is smaller than the box).
CROP_DIE_SHARE = {"real-dice-skovy": 0.68, "real-dice-patterson": 0.75}
#: Per frame set: (subset or None, copies of each die, "not a die" crops of each kind per frame).
FRAME_SETS = {
    "real-dice-rune55": {"tray": (6, 4), "cup": (2, 1)},
    "real-dice-skovy": {None: (16, 4)},
}
#: Copies of each fitted Byler die cut here (besides ``data.real_crops``' own copies with the finder's blobs).
BYLER_REPS = 2
#: Copies of each hand-sorted crop.
CROP_SETS = {"real-dice-skovy": 16, "real-dice-patterson": 16}


def set_names(text: str) -> tuple[str, ...]:
    """A command's ``SET[,SET]`` (``--leave-out``) as a tuple of names, blanks and empty items dropped.

    >>> set_names(" real-dice-rune55, real-dice-skovy,"), set_names("")
    (('real-dice-rune55', 'real-dice-skovy'), ())
    """
    return tuple(filter(None, (name.strip() for name in text.split(","))))


def shared_root() -> Path:
    """The ``shared/datasets`` folder (where ``real-dice-byler`` lies)."""
    root = byler_dir()
    if root is None:
        raise FileNotFoundError("the shared datasets are not found next to the repository")
    return root.parent


@dataclass
class Frame:
    set: str
    subset: str | None
    name: str
    image: np.ndarray
    labels: list[tuple[int, float, float, float, float]]  # value, cx, cy, w, h in px


def frames(set_name: str, split: str, subset: str | None = None) -> list[Frame]:
    """The labelled whole frames of one set's ``split`` (``train`` or ``val``; never ``test``)."""
    if split == "test":
        raise ValueError("the test split is for evaluation only")
    root = shared_root() / set_name
    names = json.loads((root / "split.json").read_text())[split]
    if subset is not None:
        names = [n for n in names if n in set(json.loads((root / "subsets.json").read_text())[subset])]
    out = []
    for name in names:
        img = cv2.imread(str(root / "images" / f"{name}.jpg"))
        if img is None:
            continue
        labels = labels_in_pixels(root, name, img.shape[1], img.shape[0], fixes=set_name == "real-dice-byler")
        out.append(Frame(set_name, subset, name, img, labels))
    return out


def byler_frames(names: list[str]) -> list[Frame]:
    """Byler's ``train`` photos called ``names``, in that order (the fitted ones: the held-out photos are chosen
    elsewhere, ``data.fit_and_held_out``)."""
    root = shared_root() / "real-dice-byler"
    out = []
    for name in names:
        img = cv2.imread(str(root / "images" / f"{name}.jpg"))
        out.append(Frame("real-dice-byler", None, name, img, labels_in_pixels(root, name, img.shape[1], img.shape[0])))
    return out


def hand_crops(set_name: str, split: str) -> list[tuple[np.ndarray, int]]:
    """The hand-sorted crops of one set's ``split`` and their values."""
    if split == "test":
        raise ValueError("the test split is for evaluation only")
    root = shared_root() / set_name
    out = []
    with open(root / "crops.csv", newline="") as f:
        for row in csv.DictReader(f):
            if row["split"] == split:
                img = cv2.imread(str(root / row["file"]))
                if img is not None:
                    out.append((img, int(row["value"])))
    return out


#: The side's scale range by default: 1 ± ``SIDE_JITTER``.
SIDE_RANGE = (1 - SIDE_JITTER, 1 + SIDE_JITTER)


def jittered(img: np.ndarray, cx: float, cy: float, side: float, rng: np.random.Generator,
             side_range: tuple[float, float] = SIDE_RANGE) -> np.ndarray:
    """The die at (cx, cy) cut as a detector might: centre, side and angle off (``CENTRE_JITTER``, ``side_range``).

    A wider ``side_range`` teaches the face at the sizes a user's own crop or a loose box gives
    (the die 50-100 % of the crop), not only at the detector's usual ±15 %."""
    r = CENTRE_JITTER * side * np.sqrt(rng.random())
    t = rng.uniform(0, 2 * np.pi)
    s = side * rng.uniform(*side_range)
    return cut_crop(img, cx + r * np.cos(t), cy + r * np.sin(t), s, rng.uniform(0, 360))


def die_crops(frame: Frame, rng: np.random.Generator, reps: int,
              side_range: tuple[float, float] = SIDE_RANGE) -> tuple[list[np.ndarray], list[int]]:
    """``reps`` jittered crops of every die of ``frame`` at least ``MIN_SIDE`` px."""
    xs, ys = [], []
    for value, cx, cy, w, h in frame.labels:
        side = max(w, h)
        if side < MIN_SIDE:
            continue
        for _ in range(reps):
            xs.append(jittered(frame.image, cx, cy, side, rng, side_range))
            ys.append(value)
    return xs, ys


def _clear_of_dice(x: float, y: float, labels, reach: float, skip: set[int] = frozenset()) -> bool:
    return all(np.hypot(x - cx, y - cy) > reach + 0.5 * max(w, h) for i, (_, cx, cy, w, h) in enumerate(labels) if i not in skip)


def not_a_die_crops(frame: Frame, rng: np.random.Generator, n: int) -> list[np.ndarray]:
    """Up to ``n`` each of: plain background or rim well away from every die, half a die (the crop's centre
    beyond the die's edge, no other die's centre near it), and the gap between two neighbouring dice."""
    img, labels = frame.image, frame.labels
    h, w = img.shape[:2]
    sides = [max(bw, bh) for _, _, _, bw, bh in labels] or [min(h, w) / 10]
    out: list[np.ndarray] = []
    got = 0
    for _ in range(30 * n):  # background, tray rim, the cup's edge, black corners
        if got == n:
            break
        side = float(rng.choice(sides)) * rng.uniform(0.8, 1.2)
        x, y = rng.uniform(0, w), rng.uniform(0, h)
        if _clear_of_dice(x, y, labels, 0.7 * side):
            out.append(cut_crop(img, x, y, side, rng.uniform(0, 360)))
            got += 1
    if labels:
        for _ in range(n):  # half a die
            k = int(rng.integers(len(labels)))
            _, cx, cy, bw, bh = labels[k]
            side = max(bw, bh)
            t = rng.uniform(0, 2 * np.pi)
            d = side * rng.uniform(0.55, 0.8)
            x, y = cx + d * np.cos(t), cy + d * np.sin(t)
            if side >= MIN_SIDE and all(np.hypot(x - ox, y - oy) > 0.55 * max(ow, oh) for i, (_, ox, oy, ow, oh) in enumerate(labels) if i != k):
                out.append(cut_crop(img, x, y, side * rng.uniform(0.85, 1.15), rng.uniform(0, 360)))
    pairs = [(i, j) for i in range(len(labels)) for j in range(i + 1, len(labels))
             if np.hypot(labels[i][1] - labels[j][1], labels[i][2] - labels[j][2]) < 1.7 * max(labels[i][3], labels[i][4], labels[j][3], labels[j][4])]
    for k in rng.permutation(len(pairs))[:n]:  # two dice: the gap between them
        i, j = pairs[k]
        a, b = labels[i], labels[j]
        side = max(a[3], a[4], b[3], b[4])
        x, y = (a[1] + b[1]) / 2, (a[2] + b[2]) / 2
        if side >= MIN_SIDE and _clear_of_dice(x, y, labels, -0.15 * side, {i, j}) \
                and min(np.hypot(x - a[1], y - a[2]), np.hypot(x - b[1], y - b[2])) > 0.45 * side:
            out.append(cut_crop(img, x, y, side * rng.uniform(0.9, 1.3), rng.uniform(0, 360)))
    return out


def hand_crop_side(set_name: str, crop: np.ndarray) -> float:
    """The die's side in a hand-sorted crop, estimated from the crop's size (``CROP_DIE_SHARE``)."""
    return CROP_DIE_SHARE[set_name] * min(crop.shape[:2])


#: Colours (BGR) of the look-alikes: metals for coins, skin tones for fingers, plastic for game pieces.
METALS = [(60, 160, 200), (170, 170, 175), (70, 110, 170), (40, 130, 180)]
SKIN = [(120, 150, 200), (90, 120, 170), (60, 85, 125), (150, 175, 225), (45, 60, 90)]
PLASTIC = [(40, 40, 200), (200, 80, 30), (40, 160, 40), (30, 200, 230), (240, 240, 240), (25, 25, 25), (150, 60, 150)]


def lookalike(background: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """A coin, a fingertip or a plain game piece (disc, pawn, blank cube) drawn on a background patch, cut as a die."""
    n = 120
    canvas = cv2.resize(background, (n, n), interpolation=cv2.INTER_LINEAR).astype(np.float32)
    layer = np.zeros((n, n, 3), np.float32)
    alpha = np.zeros((n, n), np.float32)
    c = n / 2 + rng.normal(0, 4, 2)
    kind = rng.integers(4)
    r = n / 2 / MARGIN * rng.uniform(0.6, 1.0)
    jit = lambda col: np.clip(np.array(col, np.float32) + rng.normal(0, 15, 3), 0, 255)  # noqa: E731
    yy, xx = np.mgrid[0:n, 0:n].astype(np.float32)
    if kind == 0:  # a coin: a metal disc with a raised rim and a relief in its middle
        col = jit(METALS[rng.integers(len(METALS))])
        d = np.hypot(xx - c[0], yy - c[1]) / r
        shade = 1.0 + 0.25 * ((xx - c[0]) / r) * rng.choice([-1, 1])
        layer[:] = col
        layer *= shade[..., None]
        ring = (np.abs(d - 0.88) < 0.05)
        layer[ring] *= 1.25
        relief = cv2.GaussianBlur(rng.normal(0, 1, (12, 12)).astype(np.float32), (0, 0), 1.2)
        relief = cv2.resize(relief, (n, n)) * 60
        layer += (relief * (d < 0.75))[..., None]
        alpha = (d < 1.0).astype(np.float32)
    elif kind == 1:  # a fingertip coming in from one side
        col = jit(SKIN[rng.integers(len(SKIN))])
        t = rng.uniform(0, 2 * np.pi)
        u = np.array([np.cos(t), np.sin(t)])
        width = r * rng.uniform(0.5, 0.9)
        along = (xx - c[0]) * u[0] + (yy - c[1]) * u[1]
        across = -(xx - c[0]) * u[1] + (yy - c[1]) * u[0]
        tip = along < 0
        inside = (np.abs(across) < width) & ((along > 0) | (along ** 2 + across ** 2 < width ** 2))
        inside &= along < n  # the finger runs out of the crop
        layer[:] = col
        layer *= (1.0 - 0.35 * (np.abs(across) / width) ** 2)[..., None]
        if rng.random() < 0.5:  # a nail
            nail = tip & (np.hypot(along + 0.3 * width, across) < 0.55 * width)
            layer[nail] = np.clip(col * 1.3 + 30, 0, 255)
        alpha = inside.astype(np.float32)
    elif kind == 2:  # a round game piece or a pawn's head seen from above
        col = jit(PLASTIC[rng.integers(len(PLASTIC))])
        d = np.hypot(xx - c[0], yy - c[1]) / r
        layer[:] = col
        layer *= (1.15 - 0.3 * d)[..., None]
        if rng.random() < 0.5:
            cv2.circle(layer, (int(c[0]), int(c[1])), int(r * 0.45), tuple(float(v) for v in col * 0.8), 2, cv2.LINE_AA)
        alpha = (d < 1.0).astype(np.float32)
    else:  # a blank cube (a die with no marks, a building block)
        col = jit(PLASTIC[rng.integers(len(PLASTIC))])
        box = cv2.boxPoints(((float(c[0]), float(c[1])), (2 * r / 1.2, 2 * r / 1.2), float(rng.uniform(0, 90))))
        m = np.zeros((n, n), np.uint8)
        cv2.fillConvexPoly(m, box.astype(np.int32), 255)
        layer[:] = col
        layer *= (1.0 + 0.15 * rng.normal(0, 1, (1, 1, 1))).astype(np.float32)
        alpha = m.astype(np.float32) / 255
    alpha = cv2.GaussianBlur(alpha, (0, 0), rng.uniform(0.6, 1.5))
    shadow = (cv2.GaussianBlur(np.roll(alpha, (3, 3), (0, 1)), (0, 0), 3) * rng.uniform(0, 0.4))[..., None]
    alpha = alpha[..., None]
    canvas = canvas * (1 - shadow) * (1 - alpha) + layer * alpha
    canvas += rng.normal(0, rng.uniform(0, 5), canvas.shape)
    side = n / MARGIN * rng.uniform(0.85, 1.15)
    return cut_crop(np.clip(canvas, 0, 255).astype(np.uint8), n / 2, n / 2, side, rng.uniform(0, 360))


def lookalikes(n: int, backgrounds: list[np.ndarray], rng: np.random.Generator) -> list[np.ndarray]:
    """``n`` look-alike crops on background patches drawn from ``backgrounds`` (or plain colours when none)."""
    out = []
    for _ in range(n):
        if backgrounds and rng.random() < 0.8:
            bg = backgrounds[int(rng.integers(len(backgrounds)))]
        else:
            bg = np.full((CROP, CROP, 3), rng.uniform(20, 230, 3), np.uint8)
        out.append(lookalike(bg, rng))
    return out


def train_crops(rng: np.random.Generator, byler_fit: list[str], quick: bool = False,
                side_range: tuple[float, float] = SIDE_RANGE) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Every set's ``train`` crops, by source: die crops and "not a die" crops (label 0).

    ``byler_fit``: the Byler ``train`` photos fitted on (the rest are held out for validation).
    With ``quick``, a tenth of the frames and fewer copies (to check the pipeline)."""
    out: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    backgrounds: list[np.ndarray] = []

    def add(key: str, xs: list[np.ndarray], ys: list[int]) -> None:
        out[key] = (np.array(xs, np.uint8).reshape(-1, CROP, CROP, 3), np.array(ys, np.int64))

    plan: list[tuple[str, str | None, int, int]] = [("real-dice-byler", None, BYLER_REPS, 3)]
    plan += [(s, sub, reps, neg) for s, subs in FRAME_SETS.items() for sub, (reps, neg) in subs.items()]
    for set_name, subset, reps, neg in plan:
        if set_name == "real-dice-byler":
            fs = byler_frames(byler_fit)
        else:
            fs = frames(set_name, "train", subset)
        if quick:
            fs = fs[::10]
            reps = max(1, reps // 4)
        xs, ys, negs = [], [], []
        for f in fs:
            a, b = die_crops(f, rng, reps, side_range)
            xs += a
            ys += b
            nd = not_a_die_crops(f, rng, neg)
            negs += nd
            backgrounds += nd[:1]
        key = set_name.removeprefix("real-dice-") + (f"-{subset}" if subset else "")
        add(key, xs + negs, ys + [0] * len(negs))
    for set_name, reps in CROP_SETS.items():
        xs, ys = [], []
        items = hand_crops(set_name, "train")
        if quick:
            items, reps = items[::10], max(1, reps // 4)
        for img, value in items:
            h, w = img.shape[:2]
            side = hand_crop_side(set_name, img)
            for _ in range(reps):
                xs.append(jittered(img, w / 2, h / 2, side, rng, side_range))
                ys.append(value)
        add(set_name.removeprefix("real-dice-") + "-crops", xs, ys)
    looks = lookalikes(300 if quick else 3000, backgrounds, rng)
    add("lookalikes", looks, [0] * len(looks))
    return out


def val_crops() -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Each set's ``val`` dice, one crop each cut upright on its label box (no jitter): what the training watches."""
    out: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    for set_name, subs in FRAME_SETS.items():
        for subset in subs:
            xs, ys = [], []
            for f in frames(set_name, "val", subset):
                for value, cx, cy, w, h in f.labels:
                    xs.append(cut_crop(f.image, cx, cy, max(w, h)))
                    ys.append(value)
            out[f"val_{set_name.removeprefix('real-dice-')}" + (f"_{subset}" if subset else "")] = (np.array(xs, np.uint8), np.array(ys, np.int64))
    for set_name in CROP_SETS:
        xs, ys = [], []
        for img, value in hand_crops(set_name, "val"):
            h, w = img.shape[:2]
            xs.append(cut_crop(img, w / 2, h / 2, hand_crop_side(set_name, img)))
            ys.append(value)
        out[f"val_{set_name.removeprefix('real-dice-')}_crops"] = (np.array(xs, np.uint8), np.array(ys, np.int64))
    return out


#: A detector's proposal is taken for a labelled die when its centre lies within this share of the die's side.
MATCH_REACH = 0.5
#: A proposal whose centre is further than this share of every die's side from every die is a false find: "not a die".
FALSE_FIND_REACH = 0.9
#: The spans the reader cuts a proposal at (``vision.pipeline.classify``: its box, then a little bigger).
DETECTOR_SPANS = (1.0, 1.15)


def detector_crops(frame: Frame, proposer, closer: bool = False) -> tuple[list[np.ndarray], list[int]]:
    """The shipped detector's own proposals on ``frame``, cut exactly as the staged reader cuts them; with
    ``closer``, those of its closer look as well, where the reader would take one (small dice: a tray photo's
    dice are read from that look, whose sides are tighter than the first look's).

    A proposal on a labelled die (of at least ``MIN_SIDE`` px) is labelled with that die's face; one far
    from every die is the detector's false find and teaches "not a die" (a scratch, a rim, a shadow the
    detector takes for a die); one in between (a duplicate, half a die) teaches nothing.
    ``proposer``: a ``vision.pipeline.propose.Proposer`` (its threshold a margin low, its side scale applied)."""
    from vision.pipeline.normalise import Normalised, normalise
    from vision.pipeline.propose import propose, propose_closer

    norm = normalise(frame.image)
    if not isinstance(norm, Normalised):
        return [], []
    xs: list[np.ndarray] = []
    ys: list[int] = []
    proposals = propose(norm, proposer)
    if closer:
        proposals = proposals + (propose_closer(norm, proposer, proposals) or [])
    for p in proposals:
        gaps = [(np.hypot(p.cx - cx, p.cy - cy) / max(w, h), value, max(w, h)) for value, cx, cy, w, h in frame.labels]
        near = min(gaps, default=(np.inf, 0, 0.0))
        if near[0] <= MATCH_REACH:
            if near[2] < MIN_SIDE:
                continue
            value = near[1]
        elif near[0] > FALSE_FIND_REACH:
            value = 0
        else:
            continue
        for span in DETECTOR_SPANS:
            xs.append(cut_crop(norm.bgr, p.cx, p.cy, p.side * span, p.angle_deg))
            ys.append(value)
    return xs, ys


def all_detector_crops(byler_fit: list[str], quick: bool = False, detector_model: str = "", closer: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """``detector_crops`` of every shared set's ``train`` frames (Byler's fitted photos only): the
    classifier fine-tuned on the crops it will be given in use (issue 26: "fine-tune the classifier on the
    detector's own crops"). ``detector_model``: another detector's ONNX file than the shipped one."""
    from pathlib import Path

    from vision.pipeline.propose import load_detector

    proposer = load_detector("learned", Path(detector_model) if detector_model else None)
    fs = byler_frames(byler_fit)
    for set_name, subs in FRAME_SETS.items():
        for subset in subs:
            fs += frames(set_name, "train", subset)
    if quick:
        fs = fs[::10]
    xs: list[np.ndarray] = []
    ys: list[int] = []
    for f in fs:
        a, b = detector_crops(f, proposer, closer)
        xs += a
        ys += b
    return np.array(xs, np.uint8).reshape(-1, CROP, CROP, 3), np.array(ys, np.int64)


def detector_crop_span(set_name: str, detector_model: str = "", closer: bool = False) -> tuple[int, int]:
    """Where the detector's crops of ``set_name``'s train frames lie in ``all_detector_crops``' crops, counted back
    from the end: ``(first, last)``, the crops ``[n - first, n - last)`` of its ``n``. It cuts Byler's photos first
    and then ``FRAME_SETS`` in order, so counting the frame sets' crops finds a set without Byler's (the detector
    run again over the frame sets' train frames: a few minutes for rune55's). ``(0, 0)`` for a set without frames."""
    from pathlib import Path

    from vision.pipeline.propose import load_detector

    if set_name not in FRAME_SETS:
        return (0, 0)
    proposer = load_detector("learned", Path(detector_model) if detector_model else None)
    counts = [(name, sum(len(detector_crops(f, proposer, closer)[1]) for f in frames(name, "train", subset)))
              for name, subs in FRAME_SETS.items() for subset in subs]
    ends: list[int] = []
    after = 0
    for name, n in reversed(counts):
        if name == set_name:
            ends += [after, after + n]
        after += n
    return (max(ends), min(ends)) if ends else (0, 0)
