"""Dice partly covered, drawn here: what the reader makes of a die of which it sees only a part.

Run with ``python -m models.training.covered [--per-kind N] [--seed S] [--json]`` (the shipped reader, its default
settings).
In a photo from above, something often lies over part of a die: a finger reaching for the cup, a card's edge, another
die in a heap. What shows of the die is then a part of its face, and a part of a face is often another face whole: a
six with one column hidden shows three marks in a row, a five cut through its middle a two. A reader that reads the
part it sees surely gives a wrong face without a doubt, the worst failure the table has (RULES.md R14). From below,
through the tray, nothing lies between a die and the camera, so this is a check of the view from above
(``read --as-seen``, ``evaluate`` on photos of other tables).

Each scene is a 640 x 480 cup frame (``bench.eval_sets.cup_frame``) with three real ``val`` dice
(``bench.eval_sets.real_val_dice``, colour, 70-130 px, apart), one of them covered over 15-50 % of its side from a
random direction by one of ``KINDS``, drawn by this module's own code and never by a training command (the detector's
training draws hands at a frame's edge, the classifier's fingertips across a crop: keep them apart, or this measures
what was taught):

- ``finger``: a skin-coloured finger with a rounded tip, shaded across, coming in from beyond the die;
- ``card's edge``: a card (white, black or red) lying over the die, its straight edge across the face;
- ``another die``: a fourth real die lying over it, as in a heap (the reader is then told four dice).

``uncovered`` scenes (the same three dice, nothing over them) are read beside them, so that what covering costs is
seen against what the dice cost whole. The reader is told the dice the scene holds, as the table tells it three. A
reading ``ok`` must hold every die at its face: else it is a wrong verdict. Per kind: ``frames``, ``ok``,
``ok_and_right``, ``wrong_verdicts``, ``covered_right`` (the covered die found at its face, sure or not) and
``covered_surely_wrong`` (found at another face with no doubt on it, whatever the reading's status: a wrong verdict
waiting for the other dice to be sure). The seed is fixed, so two readers read the same scenes.
"""

from __future__ import annotations

import argparse
import json
import math
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import cv2
import numpy as np

from bench.eval_sets import cup_frame, paste_patch, pasted_apart, real_val_dice
from vision.evaluate import match_boxes

#: What lies over a die, in the order scenes take them; ``UNCOVERED``'s scenes are the control.
KINDS = ("finger", "card's edge", "another die")
UNCOVERED = "uncovered"
#: The scenes' seed.
SEED = 4242
#: The scene's frame (width, height), a die's side in pixels, and how far apart the dice's centres lie at least, in
#: sides (room for what covers one to miss the others).
FRAME, DIE_SIDE, APART = (640, 480), (70, 130), 1.6
#: The share of the covered die's side that is covered, along the direction the cover comes from.
COVERED_SHARE = (0.15, 0.5)
#: The dice in a scene, before another die is laid over one.
DICE = 3
#: Draws of a cover's direction that misses the other dice, and of a die's place, before the scene is drawn again.
TRIES = 50


@dataclass(frozen=True)
class Scene:
    """One frame: what covers a die (a ``KINDS`` or ``UNCOVERED``), the share of its side covered, the frame (BGR),
    the dice's labels (face, centre x, y, width, height; a die laid over another last) and the covered die's index."""

    kind: str
    share: float
    frame: np.ndarray
    labels: list[tuple[int, float, float, float, float]]
    covered: int


def cover_mask(kind: str, shape: tuple[int, int], die: tuple[float, float, float], share: float, angle: float,
               rng: np.random.Generator) -> np.ndarray:
    """Where a ``finger`` or a ``card's edge`` lies (0-1, ``shape`` = frame height, width) over ``share`` of the side of
    the die at ``die`` (centre x, y, side), coming from the direction ``angle`` (radians) points to.

    >>> m = cover_mask("card's edge", (200, 200), (100.0, 100.0, 60.0), 0.25, 0.0, np.random.default_rng(0))
    >>> float(m[100, 70:130].mean()).__round__(2), float(m[100, 0:60].max()), float(m[100, 140:].min())
    (0.25, 0.0, 1.0)
    """
    cx, cy, side = die
    h, w = shape
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    ux, uy = math.cos(angle), math.sin(angle)
    along = (xx - cx) * ux + (yy - cy) * uy  # towards where the cover comes from
    across = -(xx - cx) * uy + (yy - cy) * ux
    edge = side * (0.5 - share)  # the cover's edge (a finger's tip) this far from the die's centre
    if kind == "finger":
        r = side * float(rng.uniform(0.35, 0.55))  # half the finger's width
        tip = edge + r
        inside = ((along >= tip) & (np.abs(across) <= r)) | ((along - tip) ** 2 + across ** 2 <= r * r)
        return cv2.GaussianBlur(inside.astype(np.float32), (0, 0), 1.2)
    if kind == "card's edge":
        width, length = side * 2.5, side * 3.5  # a card's corner region, its edge across the die
        inside = (along >= edge) & (along <= edge + length) & (np.abs(across) <= width)
        return cv2.GaussianBlur(inside.astype(np.float32), (0, 0), 0.7)
    raise ValueError(f"no cover called {kind!r}: one of {', '.join(KINDS[:2])}")


def _covered(frame: np.ndarray, kind: str, mask: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """``frame`` with a ``finger`` (skin, shaded across by its blurred mask) or a ``card's edge`` laid through ``mask``."""
    m = mask[..., None]
    if kind == "finger":
        skin = np.array([rng.uniform(90, 160), rng.uniform(120, 180), rng.uniform(170, 230)], np.float32)
        shade = 0.75 + 0.25 * cv2.GaussianBlur(m[..., 0], (0, 0), 6)[..., None]  # darker towards its sides
        colour = skin * shade
    else:
        colour = np.array([[235, 235, 235], [30, 30, 35], [40, 40, 170]][int(rng.integers(3))], np.float32)
    return np.clip(frame * (1 - m) + colour * m, 0, 255).astype(np.uint8)


def _boxes_hit(mask: np.ndarray, labels: list[tuple[int, float, float, float, float]], skip: int) -> bool:
    """Whether ``mask`` lies over any die of ``labels`` but the one at ``skip``."""
    for i, (_, cx, cy, w, h) in enumerate(labels):
        if i == skip:
            continue
        x0, y0 = max(0, int(cx - w / 2)), max(0, int(cy - h / 2))
        if float(mask[y0:int(cy + h / 2) + 1, x0:int(cx + w / 2) + 1].max(initial=0.0)) > 0.02:
            return True
    return False


def _laid_out(rng: np.random.Generator, dice: list[tuple[int, np.ndarray]], kind: str) -> Scene | None:
    """One scene with ``kind`` over one of its dice; None where the dice or the cover found no room (drawn again)."""
    width, height = FRAME
    frame = cup_frame(rng, width, height)
    side = int(rng.uniform(*DIE_SIDE))
    labels = pasted_apart(rng, frame, dice, DICE, side, APART, TRIES)
    if labels is None:
        return None
    share, target = float(rng.uniform(*COVERED_SHARE)), int(rng.integers(DICE))
    if kind == UNCOVERED:
        return Scene(kind, 0.0, frame, labels, target)
    _, cx, cy, w, _ = labels[target]
    for _ in range(TRIES):
        angle = float(rng.uniform(0, 2 * math.pi))
        if kind == "another die":  # laid with its near edge ``share`` of a side into the covered die
            seen, patch = dice[int(rng.integers(len(dice)))]
            size = int(side * rng.uniform(0.9, 1.1))
            reach = w * (0.5 - share) + size / 1.12 / 2
            x0, y0 = int(cx + reach * math.cos(angle) - size / 2), int(cy + reach * math.sin(angle) - size / 2)
            if x0 < 0 or y0 < 0 or x0 + size > width or y0 + size > height:
                continue
            mask = np.zeros((height, width), np.float32)
            mask[y0:y0 + size, x0:x0 + size] = 1.0
            if _boxes_hit(mask, labels, target):
                continue
            labels.append(paste_patch(frame, patch, x0, y0, size, seen))
            return Scene(kind, share, frame, labels, target)
        mask = cover_mask(kind, (height, width), (cx, cy, w), share, angle, rng)
        if not _boxes_hit(mask, labels, target):
            return Scene(kind, share, _covered(frame, kind, mask, rng), labels, target)
    return None


def scenes(dice: list[tuple[int, np.ndarray]], per_kind: int, seed: int = SEED) -> Iterator[Scene]:
    """``per_kind`` scenes of each of ``KINDS`` and of ``UNCOVERED`` (taken in turn), with real dice from ``dice``
    ((face, patch) as ``real_val_dice`` gives them)."""
    rng = np.random.default_rng(seed)
    order = (*KINDS, UNCOVERED)
    for i in range(per_kind * len(order)):
        scene = None
        while scene is None:  # a draw with no room gives way to another from the same stream
            scene = _laid_out(rng, dice, order[i % len(order)])
        yield scene


def judged(reader: Any, scene: Scene) -> dict[str, int]:
    """One scene read by ``reader`` told the dice it holds: its counts, as ``read`` adds them up."""
    reading = reader.with_expected(len(scene.labels)).read(scene.frame)
    # a die laid over another is matched first (labelled last): its box's centre can lie inside the covered die's
    # box, and a covered die the reader missed is then counted missed, not read as the die over it
    found = match_boxes([d.box for d in reading.dice], scene.labels[::-1])[::-1]
    right = len(reading.dice) == len(scene.labels) and all(
        j is not None and reading.dice[j].seen == label[0] for label, j in zip(scene.labels, found))
    ok = reading.status == "ok"
    j = found[scene.covered]
    covered = reading.dice[j] if j is not None else None
    face = scene.labels[scene.covered][0]
    return {"frames": 1, "ok": int(ok), "ok_and_right": int(ok and right), "wrong_verdicts": int(ok and not right),
            "covered_right": int(covered is not None and covered.seen == face),
            "covered_surely_wrong": int(covered is not None and covered.seen != face and not covered.doubts)}


def read(reader: Any, per_kind: int = 20, dice: list[tuple[int, np.ndarray]] | None = None,
         seed: int = SEED) -> dict[str, dict[str, int]]:
    """Per kind (and ``UNCOVERED``) and in ``all`` (the covered kinds only): the counts of ``judged`` over ``per_kind``
    scenes each, read from above by the product's ``reader`` (as ``load_reader`` gives it)."""
    dice = real_val_dice() if dice is None else dice
    if len(dice) < DICE:
        raise ValueError(f"the scenes need at least {DICE} real dice to paste; found {len(dice)} (are the shared sets there?)")
    told = reader.with_view("above")
    rows: dict[str, dict[str, int]] = {}
    for scene in scenes(dice, per_kind, seed):
        row = judged(told, scene)
        rows[scene.kind] = {k: rows.get(scene.kind, {}).get(k, 0) + v for k, v in row.items()}
    rows["all"] = {k: sum(rows[kind][k] for kind in KINDS) for k in rows[KINDS[0]]}
    return rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--per-kind", type=int, default=20, help="scenes of each cover, and uncovered (default 20)")
    ap.add_argument("--seed", type=int, default=SEED, help=f"the scenes' seed (default {SEED})")
    ap.add_argument("--json", action="store_true", help="print one JSON object")
    args = ap.parse_args(argv)
    if args.per_kind < 1:
        ap.error("--per-kind must be at least 1")
    from companion.app.settings import Settings
    from vision.reader import load_reader

    rows = read(load_reader(Settings.defaults(), threads=1), args.per_kind, seed=args.seed)
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
    keys = list(rows["all"])
    print("| cover | " + " | ".join(keys) + " |")
    print("| --- " * (len(keys) + 1) + "|")
    for kind, row in rows.items():
        print(f"| {kind} | " + " | ".join(str(row[k]) for k in keys) + " |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
