"""The real photos of ``../shared/datasets`` as detector frames, and real dice cut out of them.

Every set with whole frames is read: real-dice-byler, real-dice-rune55 (its ``tray`` and ``cup``
subsets as two sets: different cameras), real-dice-skovy. Their labels are axis-aligned YOLO boxes,
so their rows are ``labels.box_row`` (side and angle unknown).

Splits: each set's ``train`` trains and its ``val`` picks epochs and the score threshold. Byler has
no ``val``: every tenth of its ``train`` photos (by name) is held out as ``val`` here. Byler's ``test``
split is read by ``frames(..., "test")`` alone, which only ``evaluate`` calls, once, for the card.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np

from models.training.detector import labels as L
from vision.dataset import shared_datasets, yolo_box

SETS = ("byler", "rune55-tray", "rune55-cup", "skovy")
#: The shared folders a run can leave out (``train --leave-out``) and the frame sets each one is. Byler's photos
#: are not among them: they make the face classifier's base model, so no reader could have never seen them.
LEAVE_OUT = {"real-dice-rune55": ("rune55-tray", "rune55-cup"), "real-dice-skovy": ("skovy",)}
#: Frames are kept at most this long side in memory (the sets' photos are 640 or 1280 px).
KEEP_SIDE = 640


def sets_without(folders: tuple[str, ...]) -> tuple[str, ...]:
    """The frame sets (``SETS``) a run trains and picks its epoch on when it leaves out the shared ``folders``.

    A folder it cannot leave out is refused in words, before any frame is read.

    >>> sets_without(("real-dice-rune55",))
    ('byler', 'skovy')
    >>> sets_without(())
    ('byler', 'rune55-tray', 'rune55-cup', 'skovy')
    >>> sets_without(("real-dice-patterson",))
    Traceback (most recent call last):
    ...
    ValueError: the detector cannot leave out real-dice-patterson: it has no whole frames, so the detector never trains on it (it can leave out: real-dice-rune55, real-dice-skovy)
    """
    can = ", ".join(LEAVE_OUT)
    for folder in folders:
        if folder not in LEAVE_OUT:
            why = {"real-dice-byler": "its photos make the face classifier's base model",
                   "real-dice-patterson": "it has no whole frames, so the detector never trains on it"}.get(folder, "no such set")
            raise ValueError(f"the detector cannot leave out {folder}: {why} (it can leave out: {can})")
    gone = {s for folder in folders for s in LEAVE_OUT[folder]}
    return tuple(s for s in SETS if s not in gone)


def datasets_root() -> Path:
    """The shared datasets (``vision.dataset.shared_datasets``), which training cannot do without."""
    root = shared_datasets()
    if not (root / "real-dice-byler" / "split.json").exists():
        raise FileNotFoundError(f"the shared datasets are not found at {root}; set ELEPHANTS_BLUFF_DATASETS")
    return root


def names(set_name: str, split: str, root: Path | None = None) -> list[str]:
    """The photo names of one set's split ("train", "val"; "test" for Byler only)."""
    root = root or datasets_root()
    folder, subset = {"byler": ("real-dice-byler", None), "rune55-tray": ("real-dice-rune55", "tray"),
                      "rune55-cup": ("real-dice-rune55", "cup"), "skovy": ("real-dice-skovy", None)}[set_name]
    splits = json.loads((root / folder / "split.json").read_text())
    if set_name == "byler" and split in ("train", "val"):
        every = sorted(splits["train"])
        chosen = [n for i, n in enumerate(every) if (i % 10 == 9) == (split == "val")]
    elif split == "test" and set_name != "byler":
        raise ValueError(f"{set_name} has no test split")
    else:
        chosen = sorted(splits[split])
    if subset:
        keep = set(json.loads((root / folder / "subsets.json").read_text())[subset])
        chosen = [n for n in chosen if n in keep]
    return [f"{folder}/{n}" for n in chosen]


def read_frame(root: Path, name: str) -> tuple[np.ndarray, np.ndarray]:
    """One photo in grey (long side at most ``KEEP_SIDE``) and its dice as ``box_row``s in its pixels."""
    folder, stem = name.split("/")
    img = cv2.imread(str(root / folder / "images" / f"{stem}.jpg"), cv2.IMREAD_GRAYSCALE)
    h, w = img.shape
    f = min(1.0, KEEP_SIDE / max(h, w))
    if f < 1:
        img = cv2.resize(img, (round(w * f), round(h * f)), interpolation=cv2.INTER_AREA)
    h2, w2 = img.shape
    rows = []
    for line in (root / folder / "labels" / f"{stem}.txt").read_text().splitlines():
        if line.strip():
            _, x, y, bw, bh = yolo_box(line)
            rows.append(L.box_row(x * w2, y * h2, bw * w2, bh * h2))
    return img, L.as_array(rows)


def frames(set_name: str, split: str) -> list[tuple[str, np.ndarray, np.ndarray]]:
    """(name, grey frame, dice) of every photo of one set's split."""
    root = datasets_root()
    return [(n, *read_frame(root, n)) for n in names(set_name, split, root)]


@dataclass
class DieCrops:
    """Real dice cut out by their boxes (grey, with the box's own size), to paste into rendered scenes."""

    crops: list[np.ndarray]

    @staticmethod
    def from_frames(framesets: list[list[tuple[str, np.ndarray, np.ndarray]]], min_side: float = 18.0) -> "DieCrops":
        out = []
        for fs in framesets:
            for _, img, dice in fs:
                for cx, cy, w, h, *_ in dice:
                    if min(w, h) < min_side:
                        continue
                    x0, y0 = int(round(cx - w / 2)), int(round(cy - h / 2))
                    x1, y1 = int(round(cx + w / 2)), int(round(cy + h / 2))
                    if x0 < 0 or y0 < 0 or x1 > img.shape[1] or y1 > img.shape[0]:
                        continue  # cut by the frame's edge: not a whole die
                    out.append(img[y0:y1, x0:x1].copy())
        return DieCrops(out)

    def paste(self, frame: np.ndarray, rng: np.random.Generator, cx: float, cy: float, side: float) -> list[float]:
        """Paste a random real die (its box's short side ``side``) centred at (cx, cy) of a float BGR frame,
        in place, with softened edges; a quarter turn or mirror at random. Returns its ``box_row``."""
        crop = self.crops[int(rng.integers(len(self.crops)))]
        crop = np.rot90(crop, int(rng.integers(4)))
        if rng.random() < 0.5:
            crop = crop[:, ::-1]
        ch, cw = crop.shape
        f = side / min(ch, cw)
        nw, nh = max(2, round(cw * f)), max(2, round(ch * f))
        patch = cv2.resize(np.ascontiguousarray(crop), (nw, nh), interpolation=cv2.INTER_AREA if f < 1 else cv2.INTER_LINEAR).astype(np.float32)
        alpha = np.zeros((nh, nw), np.float32)
        r = int(min(nw, nh) * rng.uniform(0.08, 0.25))
        cv2.rectangle(alpha, (r, 0), (nw - 1 - r, nh - 1), 1.0, -1)
        cv2.rectangle(alpha, (0, r), (nw - 1, nh - 1 - r), 1.0, -1)
        for x, y in ((r, r), (nw - 1 - r, r), (r, nh - 1 - r), (nw - 1 - r, nh - 1 - r)):
            cv2.circle(alpha, (x, y), r, 1.0, -1)
        alpha = cv2.GaussianBlur(alpha, (0, 0), max(0.6, min(nw, nh) * 0.02))
        x0, y0 = int(round(cx - nw / 2)), int(round(cy - nh / 2))
        fh, fw = frame.shape[:2]
        sx0, sy0 = max(0, -x0), max(0, -y0)
        x1, y1 = min(fw, x0 + nw), min(fh, y0 + nh)
        x0, y0 = max(0, x0), max(0, y0)
        if x1 > x0 and y1 > y0:
            p = patch[sy0:sy0 + (y1 - y0), sx0:sx0 + (x1 - x0)] * rng.uniform(0.8, 1.15)
            a = alpha[sy0:sy0 + (y1 - y0), sx0:sx0 + (x1 - x0)][..., None]
            region = frame[y0:y1, x0:x1]
            region[:] = region * (1 - a) + p[..., None] * a
        return L.box_row(cx, cy, float(nw), float(nh))


def cup_set(pool: DieCrops, rng: np.random.Generator, singles: int, triples: int) -> list[tuple[str, np.ndarray, np.ndarray]]:
    """The issue's failing case rebuilt from real dice: a real die pasted about half the frame's width into a
    small grey 128-px cup-like frame, alone (128×128) and three in a row (384×128, one die per cup)."""
    from models.training.detector.synth import cup_frame, finish  # the same cup frames as training draws

    out = []
    for kind, count, k in (("single", singles, 1), ("triple", triples, 3)):
        for i in range(count):
            parts, rows = [], []
            for j in range(k):
                f = cup_frame(rng, 128, 128)
                side = 128 * rng.uniform(0.42, 0.58)
                half = side * 0.75
                cx, cy = rng.uniform(half, 128 - half), rng.uniform(half, 128 - half)
                r = pool.paste(f, rng, cx, cy, side)
                r[0] += 128 * j
                rows.append(r)
                parts.append(f)
            frame = finish(np.concatenate(parts, axis=1), rng, blur=float(rng.uniform(0, 0.8)), noise=float(rng.uniform(1, 4)), jpeg_quality=int(rng.integers(70, 96)))
            out.append((f"cup-{kind}-{i}", cv2.cvtColor(frame, cv2.COLOR_BGR2GRAY), L.as_array(rows)))
    return out


def median_side(dice: np.ndarray) -> float:
    return float(np.median(dice[:, 4])) if len(dice) else math.nan
