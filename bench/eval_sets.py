"""The evaluation sets the model cards report besides the shared ones, written in the shared datasets' layout.

- ``rendered``: the renderer's own test set: tray frames seen from above, the
  game's dice and other looks, 1-6 dice, with every labelled box; seeds apart
  from any training run's.
- ``cup``: real dice cut from the shared sets' ``val`` splits (never ``test``)
  and pasted large (about half the frame's width) into small grey cup-like
  frames: one die in 128×128, and three in a row in 384×128. This is the case
  a new user's photos showed the hand-tuned finder failing on.
- ``big``: the same real dice, in colour, each filling 70-95 % of a 480×480
  cup frame: a die photographed close up, most of the picture, where its marks
  are the size of a small die.
- ``mid``: the same real dice, in colour, one to a 1280×960 cup frame, each 12-33 % of its height (115-317 px),
  saved as JPEG: a phone's photo of one die on a table, between ``far`` and ``big``.
- ``far``: the same real dice, in colour, three to a 1280×960 cup frame, each
  20-40 px wide (1.6-3.1 % of the frame's width): a table photographed from
  farther away, or by a camera with many more pixels.
- ``many``: the same real dice, in colour, 6-12 to a 1280×960 cup frame, each 60-140 px wide, apart, anywhere:
  a table photographed from above with dice of mixed sizes (nearer and farther, or dice of several sizes), where
  small dice send the detector closer and the bigger ones beside them must still be read whole.
- ``whole``: the shared sets' hand-sorted ``val`` crops (skovy's and patterson's),
  each read as a whole photo, unchanged: a die filling the frame as a person
  crops it, read by ``read`` rather than ``classify``.

``python -m bench.eval_sets OUT`` writes them all under OUT; ``elephants-bluff
evaluate OUT/cup`` (or ``OUT/cup-three``, ``OUT/rendered``, ``OUT/big``, ``OUT/mid``, ``OUT/far``, ``OUT/many``, ``OUT/whole``) reads them.
"""

from __future__ import annotations

import argparse
import csv
import json
from pathlib import Path
from typing import Iterator

import cv2
import numpy as np

from vision.dataset import VAL_LABEL_FIXES, labels_in_pixels, shared_datasets
from vision.simtable import DieStyle, render_table

SHARED = shared_datasets()
#: Seeds for the evaluation sets, far from the training recipes' seeds.
RENDERED_SEED, CUP_SEED, BIG_SEED, FAR_SEED, MID_SEED, MANY_SEED = 90_001, 90_002, 90_003, 90_004, 90_005, 90_006
#: ``big``: the frame's side, and the share of it a die's side fills
BIG_FRAME, BIG_FILL = 480, (0.70, 0.95)
#: ``mid``: the frame's size, the share of its height a die's side fills, and the JPEG quality it is saved at
MID_FRAME, MID_FILL, MID_JPEG = (1280, 960), (0.12, 0.33), 92
#: ``far``: the frame's size, a die's side in pixels (the patch's 12 % margin not counted), dice to a frame
FAR_FRAME, FAR_SIDE, FAR_PER_FRAME = (1280, 960), (20, 40), 3
#: ``many``: the frame's size, a die's side in pixels (the margin not counted), the fewest and most dice to a frame,
#: and how far apart their centres lie at least, in patch sides (further off each way than that)
MANY_FRAME, MANY_SIDE, MANY_PER_FRAME, MANY_APART = (1280, 960), (60, 140), (6, 12), 1.3
#: ``whole``: the sets whose hand-sorted crops it holds, and its label box: the centred square of this share of a
#: crop's short side (a read die's centre must fall in it)
WHOLE_SETS, WHOLE_BOX = ("real-dice-skovy", "real-dice-patterson"), 0.9


def _write(root: Path, name: str, frame: np.ndarray, boxes: list[tuple[int, float, float, float, float]], jpeg: int = 0) -> None:
    """One photo (PNG, or JPEG at quality ``jpeg``) and its YOLO labels (face seen, centre and size in pixels)."""
    h, w = frame.shape[:2]
    if jpeg:
        cv2.imwrite(str(root / "images" / f"{name}.jpg"), frame, [cv2.IMWRITE_JPEG_QUALITY, jpeg])
    else:
        cv2.imwrite(str(root / "images" / f"{name}.png"), frame)
    lines = [f"{seen - 1} {cx / w:.6f} {cy / h:.6f} {bw / w:.6f} {bh / h:.6f}" for seen, cx, cy, bw, bh in boxes]
    (root / "labels" / f"{name}.txt").write_text("\n".join(lines) + ("\n" if lines else ""))


def _as_test_split(root: Path) -> None:
    """Every photo of the set as its ``test`` split: the sets are for evaluation only."""
    (root / "split.json").write_text(json.dumps({"test": sorted(p.stem for p in (root / "images").iterdir())}))


def _new_set(root: Path) -> None:
    (root / "images").mkdir(parents=True, exist_ok=True)
    (root / "labels").mkdir(parents=True, exist_ok=True)


def rendered(root: Path, frames: int = 200, seed: int = RENDERED_SEED) -> int:
    """The renderer's test set: ``frames`` tray frames; returns the number of dice."""
    _new_set(root)
    rng = np.random.default_rng(seed)
    dice_count = 0
    for i in range(frames):
        n = int(rng.integers(1, 7))
        seen = [int(v) for v in rng.integers(1, 7, n)]
        styles = [DieStyle.game(rng) if rng.random() < 0.5 else DieStyle.random(rng) for _ in seen]
        width = int(rng.choice([640, 960, 1280]))
        frame, placed = render_table(seen, rng, width=width, height=width * 3 // 4, view="above", styles=styles, touching=0.2)
        boxes = []
        for d in placed:
            x, y, bw, bh = d.box()
            boxes.append((d.seen, x + bw / 2, y + bh / 2, bw, bh))
        _write(root, f"r{i:04d}", frame, boxes)
        dice_count += len(placed)
    _as_test_split(root)
    return dice_count


def real_val_dice(shared: Path = SHARED, margin: float = 0.12, split: str = "val") -> list[tuple[int, np.ndarray]]:
    """(face seen, square patch with a little margin) of every real die in the shared sets' val splits, its
    label corrected where ``vision.dataset.VAL_LABEL_FIXES`` has it (a set built on a wrong label would count the
    reader wrong for reading the face it is shown). ``split`` "train": the same of their train splits, for a
    training tool that pastes dice as these sets do (never "test")."""
    if split not in ("val", "train"):
        raise ValueError("real dice are pasted from the val or the train split, never the test split")
    out: list[tuple[int, np.ndarray]] = []
    for name in ("real-dice-rune55", "real-dice-skovy"):
        root = shared / name
        if not (root / "split.json").is_file():
            continue
        for photo in json.loads((root / "split.json").read_text())[split]:
            img = cv2.imread(str(root / "images" / f"{photo}.jpg"))
            if img is None:
                continue
            h, w = img.shape[:2]
            boxes = labels_in_pixels(root, photo, w, h)  # with the val labels found wrong corrected
            for i, (seen, cx, cy, bw, bh) in enumerate(boxes):
                side = max(bw, bh) * (1 + margin)
                if side < 40:  # too small to paste large: its marks would be invented by the scaling
                    continue
                x0, y0 = int(round(cx - side / 2)), int(round(cy - side / 2))
                x1, y1 = x0 + int(round(side)), y0 + int(round(side))
                if x0 < 0 or y0 < 0 or x1 > w or y1 > h:
                    continue
                if any(j != i and abs(ox - cx) < (side + obw) / 2 and abs(oy - cy) < (side + obh) / 2 for j, (_, ox, oy, obw, obh) in enumerate(boxes)):
                    continue  # another die reaches into the patch: it would be pasted too
                out.append((seen, img[y0:y1, x0:x1].copy()))
    return out + val_crops(shared, ("real-dice-patterson",), split)


def cup_frame(rng: np.random.Generator, width: int, height: int) -> np.ndarray:
    """A small grey cup-like frame: a lighter disc on a darker ground, soft light and a little noise."""
    base = float(rng.uniform(60, 140))
    frame = np.full((height, width), base, np.float32)
    cv2.circle(frame, (width // 2, height // 2), int(min(width, height) * rng.uniform(0.45, 0.7)), base + float(rng.uniform(15, 50)), -1)
    frame = cv2.GaussianBlur(frame, (0, 0), 6)
    frame += rng.normal(0, 3, frame.shape).astype(np.float32)
    return cv2.cvtColor(np.clip(frame, 0, 255).astype(np.uint8), cv2.COLOR_GRAY2BGR)


def _blend(ground: np.ndarray, die: np.ndarray) -> np.ndarray:
    """The die's patch over the cup, its square's edge feathered so the paste itself does not look like a die."""
    side = die.shape[0]
    mask = np.zeros((side, side), np.float32)
    edge = int(round(side * 0.05))
    mask[edge:side - edge, edge:side - edge] = 1.0
    mask = cv2.GaussianBlur(mask, (0, 0), max(1.0, side * 0.03))[:, :, None]
    return (die * mask + ground * (1 - mask)).astype(np.uint8)


def paste_patch(frame: np.ndarray, patch: np.ndarray, x0: int, y0: int, side: int, seen: int, interpolation: int | None = None
            ) -> tuple[int, float, float, float, float]:
    """``patch`` scaled to ``side`` (``interpolation``; by default area when shrinking, cubic when enlarging) and
    blended into ``frame`` at (``x0``, ``y0``); its label (the die inside the patch's 12 % margin)."""
    if interpolation is None:
        interpolation = cv2.INTER_AREA if patch.shape[0] > side else cv2.INTER_CUBIC
    die = cv2.resize(patch, (side, side), interpolation=interpolation)
    frame[y0:y0 + side, x0:x0 + side] = _blend(frame[y0:y0 + side, x0:x0 + side], die)
    return seen, x0 + side / 2, y0 + side / 2, side / 1.12, side / 1.12


def cup(root: Path, per_row: int, dice: list[tuple[int, np.ndarray]], seed: int = CUP_SEED, limit: int = 400) -> int:
    """Real dice pasted about half a 128-px frame wide, ``per_row`` in a row; returns the number of dice."""
    _new_set(root)
    rng = np.random.default_rng(seed + per_row)
    order = rng.permutation(len(dice))[: limit * per_row]
    count = 0
    for i in range(0, len(order) - per_row + 1, per_row):
        frame = cup_frame(rng, 128 * per_row, 128)
        boxes = []
        for k, j in enumerate(order[i:i + per_row]):
            seen, patch = dice[j]
            side = int(rng.uniform(0.42, 0.58) * 128)
            grey = cv2.cvtColor(cv2.cvtColor(patch, cv2.COLOR_BGR2GRAY), cv2.COLOR_GRAY2BGR)
            cx = 64 + 128 * k + int(rng.integers(-12, 13))
            cy = 64 + int(rng.integers(-12, 13))
            scaling = cv2.INTER_AREA if patch.shape[0] > side else cv2.INTER_LINEAR
            boxes.append(paste_patch(frame, grey, cx - side // 2, cy - side // 2, side, seen, scaling))
        _write(root, f"c{i // per_row:04d}", frame, boxes)
        count += per_row
    _as_test_split(root)
    return count


#: Where a plain die's pips lie on its face (shares of the face's side), for ``plain_die``.
PIPS = {1: [(0.5, 0.5)], 2: [(0.25, 0.25), (0.75, 0.75)], 3: [(0.25, 0.25), (0.5, 0.5), (0.75, 0.75)],
        4: [(0.25, 0.25), (0.75, 0.25), (0.25, 0.75), (0.75, 0.75)],
        5: [(0.25, 0.25), (0.75, 0.25), (0.5, 0.5), (0.25, 0.75), (0.75, 0.75)],
        6: [(0.25, 0.2), (0.75, 0.2), (0.25, 0.5), (0.75, 0.5), (0.25, 0.8), (0.75, 0.8)]}


def plain_die(value: int, side: int = 90) -> np.ndarray:
    """A patch of a plain white die with black pips showing ``value``, with the 12 % margin the sets' patches
    have: a die anyone reads, for checking a set's layout or a look that should read it."""
    patch = np.full((side, side, 3), 90, np.uint8)
    edge = round(side * 0.06)
    face = side - 2 * edge
    cv2.rectangle(patch, (edge, edge), (side - edge - 1, side - edge - 1), (235, 235, 235), -1)
    for x, y in PIPS[value]:
        cv2.circle(patch, (round(edge + face * x), round(edge + face * y)), max(1, round(face * 0.09)), (30, 30, 30), -1)
    return patch


def one_a_frame(dice: list[tuple[int, np.ndarray]], frame: tuple[int, int], fill: tuple[float, float], seed: int
                ) -> Iterator[tuple[np.ndarray, tuple[int, float, float, float, float]]]:
    """Each real die in colour, alone in a ``frame`` (width, height) cup frame, its side ``fill`` of the frame's short
    side, anywhere wholly inside: (the frame, its label: face, centre and size in pixels), seeded."""
    width, height = frame
    rng = np.random.default_rng(seed)
    for seen, patch in dice:
        image = cup_frame(rng, width, height)
        side = int(rng.uniform(*fill) * min(width, height))
        x0, y0 = int(rng.integers(0, width - side + 1)), int(rng.integers(0, height - side + 1))
        yield image, paste_patch(image, patch, x0, y0, side, seen)


def _one_a_frame_set(root: Path, dice: list[tuple[int, np.ndarray]], frame: tuple[int, int], fill: tuple[float, float], seed: int,
                     prefix: str, jpeg: int = 0) -> int:
    """The set of ``one_a_frame``'s photos, named ``prefix`` and a number (``_write``'s ``jpeg``); returns the number of dice."""
    _new_set(root)
    for i, (image, label) in enumerate(one_a_frame(dice, frame, fill, seed)):
        _write(root, f"{prefix}{i:04d}", image, [label], jpeg=jpeg)
    _as_test_split(root)
    return len(dice)


def big(root: Path, dice: list[tuple[int, np.ndarray]], seed: int = BIG_SEED) -> int:
    """Each real die in colour, filling ``BIG_FILL`` of a ``BIG_FRAME``-px cup frame; returns the number of dice."""
    return _one_a_frame_set(root, dice, (BIG_FRAME, BIG_FRAME), BIG_FILL, seed, "b")


def mid(root: Path, dice: list[tuple[int, np.ndarray]], seed: int = MID_SEED) -> int:
    """Each real die in colour, ``MID_FILL`` of a ``MID_FRAME`` cup frame's height, saved as a phone saves a photo
    (JPEG, ``MID_JPEG``); returns the number of dice."""
    return _one_a_frame_set(root, dice, MID_FRAME, MID_FILL, seed, "m", jpeg=MID_JPEG)


def far(root: Path, dice: list[tuple[int, np.ndarray]], seed: int = FAR_SEED) -> int:
    """The real dice ``FAR_PER_FRAME`` to a ``FAR_FRAME`` cup frame, each ``FAR_SIDE`` px wide, apart, anywhere in
    the frame; returns the number of dice."""
    _new_set(root)
    rng = np.random.default_rng(seed)
    order = rng.permutation(len(dice))
    width, height = FAR_FRAME
    count = 0
    for i in range(0, len(order) - FAR_PER_FRAME + 1, FAR_PER_FRAME):
        frame = cup_frame(rng, width, height)
        boxes: list[tuple[int, float, float, float, float]] = []
        for j in order[i:i + FAR_PER_FRAME]:
            seen, patch = dice[j]
            side = int(round(rng.uniform(*FAR_SIDE) * 1.12))  # the patch holds the die with a 12 % margin
            corner = free_corner(rng, width, height, side, boxes, 2.0)  # three dice in a 1280×960 frame: found at once
            if corner is None:
                raise ValueError(f"no room for {FAR_PER_FRAME} dice of {side} px apart in a {width}×{height} frame (FAR_FRAME, FAR_SIDE)")
            x0, y0 = corner
            boxes.append(paste_patch(frame, patch, x0, y0, side, seen, cv2.INTER_AREA))
        _write(root, f"f{i // FAR_PER_FRAME:04d}", frame, boxes)
        count += FAR_PER_FRAME
    _as_test_split(root)
    return count


def many(root: Path, dice: list[tuple[int, np.ndarray]], seed: int = MANY_SEED) -> int:
    """The real dice ``MANY_PER_FRAME`` to a ``MANY_FRAME`` cup frame, each ``MANY_SIDE`` px wide, ``MANY_APART``
    apart, anywhere in the frame (a die no place is left for goes to the next frame); returns the number of dice."""
    _new_set(root)
    rng = np.random.default_rng(seed)
    order = [int(j) for j in rng.permutation(len(dice))]
    width, height = MANY_FRAME
    count = 0
    while order:
        wanted = int(rng.integers(MANY_PER_FRAME[0], MANY_PER_FRAME[1] + 1))
        frame = cup_frame(rng, width, height)
        boxes: list[tuple[int, float, float, float, float]] = []
        for j in list(order[:wanted]):
            seen, patch = dice[j]
            side = int(round(rng.uniform(*MANY_SIDE) * 1.12))  # the patch holds the die with a 12 % margin
            place = free_corner(rng, width, height, side, boxes, MANY_APART, tries=200)
            if place is not None:
                boxes.append(paste_patch(frame, patch, *place, side, seen))
                order.remove(j)
        _write(root, f"n{count:04d}", frame, boxes)
        count += 1
    _as_test_split(root)
    return len(dice)


def pasted_apart(rng: np.random.Generator, frame: np.ndarray, dice: list[tuple[int, np.ndarray]], count: int, side: int,
                 apart: float, tries: int) -> list[tuple[int, float, float, float, float]] | None:
    """``count`` of ``dice`` (drawn without replacement) pasted on ``frame`` at ``side`` px, each ``apart`` sides from
    the others (``free_corner``): their labels, or None where one found no room in ``tries`` draws (the caller draws
    the scene again)."""
    height, width = frame.shape[:2]
    labels: list[tuple[int, float, float, float, float]] = []
    for j in rng.choice(len(dice), count, replace=False):
        seen, patch = dice[int(j)]
        corner = free_corner(rng, width, height, side, labels, apart, tries=tries)
        if corner is None:
            return None
        labels.append(paste_patch(frame, patch, *corner, side, seen))
    return labels


def free_corner(rng: np.random.Generator, width: int, height: int, side: int, boxes: list[tuple[int, float, float, float, float]],
           apart: float, tries: int = 10_000) -> tuple[int, int] | None:
    """A corner for a ``side``-px patch wholly inside the frame whose centre lies more than ``apart`` sides from every
    die in ``boxes`` one way or the other, drawn until one is found (at most ``tries`` times: else None, as where the
    patch is no smaller than the frame).

    >>> free_corner(np.random.default_rng(0), 100, 100, 100, [], 2.0) is None
    True
    """
    if side >= min(width, height):
        return None
    for _ in range(tries):
        x0, y0 = int(rng.integers(0, width - side)), int(rng.integers(0, height - side))
        if all(max(abs(x0 + side / 2 - cx), abs(y0 + side / 2 - cy)) > apart * side for _, cx, cy, _, _ in boxes):
            return x0, y0
    return None


def val_crops(shared: Path = SHARED, sets: tuple[str, ...] = WHOLE_SETS, split: str = "val") -> list[tuple[int, np.ndarray]]:
    """(face seen, image) of every hand-sorted ``val`` crop of ``sets`` (their ``crops.csv``; or of ``split``)."""
    out: list[tuple[int, np.ndarray]] = []
    for name in sets:
        index = shared / name / "crops.csv"
        if not index.is_file():
            continue
        with open(index, newline="") as f:
            for row in csv.DictReader(f):
                img = cv2.imread(str(shared / name / row["file"])) if row.get("split") == split else None
                if img is not None:
                    out.append((int(row["value"]), img))
    return out


def whole(root: Path, crops: list[tuple[int, np.ndarray]]) -> int:
    """Each crop as its own photo, unchanged, labelled with the centred square of ``WHOLE_BOX`` of its short side;
    returns the number of dice."""
    _new_set(root)
    for i, (seen, image) in enumerate(crops):
        h, w = image.shape[:2]
        side = WHOLE_BOX * min(h, w)
        _write(root, f"w{i:04d}", image, [(seen, w / 2, h / 2, side, side)])
    _as_test_split(root)
    return len(crops)


#: The sets ``main`` writes, each a folder under its output.
SET_NAMES = ("rendered", "cup", "cup-three", "big", "mid", "far", "many", "whole")
#: Under the output, the val label corrections the sets were cut with (``up_to_date``).
LABELS_STAMP = "corrected-labels.json"


def _corrections() -> list[list]:
    return sorted([name, x, y, value] for (name, x, y), value in VAL_LABEL_FIXES.items())


def up_to_date(root: Path) -> bool:
    """Whether every set under ``root`` is there, cut with today's val label corrections: sets cut before a
    correction would go on counting the reader wrong for the face it was shown.

    >>> up_to_date(Path("/nonexistent"))
    False
    """
    stamp = root / LABELS_STAMP
    return (all((root / name / "split.json").is_file() for name in SET_NAMES) and stamp.is_file()
            and json.loads(stamp.read_text()) == _corrections())


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.eval_sets", description=__doc__.split("\n\n")[0])
    p.add_argument("out", type=Path)
    p.add_argument("--rendered-frames", type=int, default=200)
    args = p.parse_args(argv)
    n = rendered(args.out / "rendered", args.rendered_frames)
    dice = real_val_dice()
    one = cup(args.out / "cup", 1, dice)
    three = cup(args.out / "cup-three", 3, dice)
    close = big(args.out / "big", dice)
    middle = mid(args.out / "mid", dice)
    farther = far(args.out / "far", dice)
    table = many(args.out / "many", dice)
    crops = whole(args.out / "whole", val_crops())
    (args.out / LABELS_STAMP).write_text(json.dumps(_corrections()))
    print(json.dumps({"rendered_dice": n, "real_val_dice": len(dice), "cup_dice": one, "cup_three_dice": three, "big_dice": close, "mid_dice": middle,
                      "far_dice": farther, "many_dice": table, "whole_dice": crops}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
