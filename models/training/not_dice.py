"""Things that are not dice on the table, drawn here: what the reader makes of them in a die's place or beside the dice.

Run with ``python -m models.training.not_dice [MODEL.onnx] [--per-kind N] [--json]`` (default: the shipped model; a
candidate is read with its own number-dice cue, fit once as ``models.training.judge`` fits it).
A table holds more than dice: buttons, coins, sugar cubes, a card, a die of another shape, a toy brick, a meeple, a
glass bead. None is in the shared sets, so they are drawn by this module's own code (plain OpenCV shapes on a
patch of the thing's size with its own soft outline), never by a training command: the detector's training draws
its hard negatives with ``models.training.detector.synth.distractors`` (coins, pawns, cards, blank squares, rims,
blobs, hands), the classifier's come from the frames it reads. Keep it so, or this measures what was taught.

Each scene of the first two ways is a 640 x 480 cup frame (``bench.eval_sets.cup_frame``) holding real ``val`` dice
(``bench.eval_sets.real_val_dice``, colour, 70-130 px, apart) and one thing of about their size, read by the staged
reader told three dice, as the table reads a roll:

- ``in a die's place``: two dice and the thing. Three dice are expected and two lie there, so no reading may be ok:
  one that is counts the thing as a die, a wrong verdict (RULES.md R14 wants the table to confirm it).
- ``beside three dice``: three dice and the thing. A reading ok must hold the three dice at their faces and not the
  thing; read so it is ``ok and right``, else a wrong verdict.
- ``in the tray, in a die's place``: the table as the product sees it, in tray mode: the simulated table from below
  (``vision.simtable.render_calibrated_table``, the game's dice, 1280 x 960) with its empty tray and die size known,
  one of its three dice swapped for the thing of about its size. As in a die's place, no reading may be ok.

Per mode and kind: ``frames``, ``ok``, ``wrong_verdicts`` (read ok and wrong), ``taken`` (the thing given as a die)
and ``taken_surely`` (given as a die nothing doubts). The seeds are fixed, so two models read the same scenes.
"""

from __future__ import annotations

import argparse
import json
import math
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from bench.eval_sets import cup_frame, free_corner, pasted_apart, real_val_dice
from vision.evaluate import match_boxes

#: The things drawn, in the order scenes take them.
KINDS = ("button", "coin", "sugar cube", "card", "other die", "toy brick", "meeple", "glass bead")
#: The way read from below in tray mode, on the simulated table.
IN_THE_TRAY = "in the tray, in a die's place"
#: The three ways a thing lies on the table (see the module's text), and the seed of each one's scenes.
MODES = {"in a die's place": 77, "beside three dice": 78, IN_THE_TRAY: 79}
#: The scene's frame (width, height), a die's side in pixels, and how far apart the centres lie at least, in sides.
FRAME, DIE_SIDE, APART = (640, 480), (70, 130), 1.3
#: The dice the table expects in every scene.
EXPECTED = 3
#: Draws of a place for a die or the thing before the scene is drawn again (a free place is found in a few draws).
PLACE_TRIES = 1000


@dataclass(frozen=True)
class Scene:
    """One frame: the thing's kind, the frame (BGR), the dice's labels (face, centre x, y, width, height) and the
    thing's square (centre x, y, side)."""

    kind: str
    frame: np.ndarray
    labels: list[tuple[int, float, float, float, float]]
    thing: tuple[float, float, int]
    #: tray mode's calibration: the empty tray's photo (grey) and the die's side, seen from below; None: from above
    empty: np.ndarray | None = None
    die_side: float = 0.0


def thing(kind: str, side: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """A ``side``-px patch of ``kind`` (one of ``KINDS``) and its outline's alpha (0-1), drawn with ``rng``.

    >>> patch, alpha = thing("glass bead", 60, np.random.default_rng(0))
    >>> patch.shape, patch.dtype, alpha.shape, 0.5 < float(alpha.mean()) < 0.8, float(alpha.max()) <= 1.0
    ((60, 60, 3), dtype('uint8'), (60, 60), True, True)
    """
    if kind not in KINDS:
        raise ValueError(f"no thing called {kind!r}: one of {', '.join(KINDS)}")
    s = side
    c = s / 2
    img = np.zeros((s, s, 3), np.uint8)
    alpha = np.zeros((s, s), np.float32)
    colour = rng.uniform(40, 230, 3)
    centre, ink_width = (int(c), int(c)), max(1, int(s / 40))
    if kind == "button":  # a sewing button: a disc, a raised rim, two or four holes near the middle
        r = s * 0.45
        cv2.circle(img, centre, int(r), colour.tolist(), -1, cv2.LINE_AA)
        cv2.circle(alpha, centre, int(r), 1.0, -1, cv2.LINE_AA)
        cv2.circle(img, centre, int(r * 0.8), (colour * 0.8).tolist(), max(1, int(s * 0.03)), cv2.LINE_AA)
        holes, reach, turn = int(rng.choice([2, 4])), r * 0.22, rng.uniform(0, math.pi)
        for k in range(holes):
            a = turn + 2 * math.pi * k / holes
            cv2.circle(img, (int(c + reach * math.cos(a)), int(c + reach * math.sin(a))), max(1, int(r * 0.1)),
                       (colour * 0.25).tolist(), -1, cv2.LINE_AA)
    elif kind == "coin":  # brass or steel, lit from a side, lettering round the rim and a value in the middle
        r = s * 0.45
        metal = np.array([60.0, 150.0, 200.0]) if rng.random() < 0.5 else np.array([190.0, 190.0, 195.0])
        yy, xx = np.mgrid[0:s, 0:s]
        img[:] = np.clip(metal * (0.75 + 0.35 * (xx - yy) / s)[..., None], 0, 255).astype(np.uint8)
        cv2.circle(alpha, centre, int(r), 1.0, -1, cv2.LINE_AA)
        cv2.circle(img, centre, int(r * 0.88), (metal * 0.6).tolist(), max(1, int(s * 0.02)), cv2.LINE_AA)
        for k in range(18):
            a = 2 * math.pi * k / 18
            cv2.circle(img, (int(c + r * 0.75 * math.cos(a)), int(c + r * 0.75 * math.sin(a))), max(1, int(s * 0.015)),
                       (metal * 0.5).tolist(), -1)
        cv2.putText(img, str(int(rng.choice([1, 2, 5, 10, 20]))), (int(c - r * 0.45), int(c + r * 0.25)),
                    cv2.FONT_HERSHEY_SIMPLEX, s / 90, (metal * 0.45).tolist(), ink_width, cv2.LINE_AA)
    elif kind == "sugar cube":  # a blank white cube, grainy
        m = int(s * 0.1)
        cv2.rectangle(img, (m, m), (s - m, s - m), rng.uniform(200, 250, 3).tolist(), -1)
        cv2.rectangle(alpha, (m, m), (s - m, s - m), 1.0, -1)
        img = np.clip(img + rng.normal(0, 12, img.shape), 0, 255).astype(np.uint8)
    elif kind == "card":  # a playing card's corner: its rank and a suit's pip, red or black
        m = int(s * 0.05)
        cv2.rectangle(img, (m, m), (s - m, s - m), (245, 245, 245), -1)
        cv2.rectangle(alpha, (m, m), (s - m, s - m), 1.0, -1)
        ink = (40, 40, 200) if rng.random() < 0.5 else (30, 30, 30)
        cv2.putText(img, str(rng.choice(list("A23456789JQK"))), (int(s * 0.12), int(s * 0.38)), cv2.FONT_HERSHEY_SIMPLEX,
                    s / 110, ink, max(1, int(s / 45)), cv2.LINE_AA)
        cv2.circle(img, (int(s * 0.6), int(s * 0.65)), int(s * 0.12), ink, -1, cv2.LINE_AA)
    elif kind == "other die":  # a d8 or d20 from above: a triangular face and its number
        corners = np.array([(c, s * 0.08), (s * 0.94, s * 0.86), (s * 0.06, s * 0.86)], np.int32)
        cv2.fillConvexPoly(img, corners, colour.tolist(), cv2.LINE_AA)
        cv2.fillConvexPoly(alpha, corners, 1.0, cv2.LINE_AA)
        ink = (255, 255, 255) if colour.mean() < 128 else (20, 20, 20)
        cv2.putText(img, str(int(rng.integers(1, 21))), (int(c - s * 0.16), int(s * 0.7)), cv2.FONT_HERSHEY_SIMPLEX, s / 100,
                    ink, ink_width, cv2.LINE_AA)
    elif kind == "toy brick":  # from above: a square of two by two or three by three studs
        m, n = int(s * 0.08), int(rng.choice([2, 3]))
        cv2.rectangle(img, (m, m), (s - m, s - m), colour.tolist(), -1)
        cv2.rectangle(alpha, (m, m), (s - m, s - m), 1.0, -1)
        stud = int((s - 2 * m) / n * 0.3)
        for i in range(n):
            for j in range(n):
                at = (int(m + (s - 2 * m) * (i + 0.5) / n), int(m + (s - 2 * m) * (j + 0.5) / n))
                cv2.circle(img, at, stud, np.clip(colour * 1.15, 0, 255).tolist(), -1, cv2.LINE_AA)
                cv2.circle(img, at, stud, (colour * 0.6).tolist(), max(1, int(s / 60)), cv2.LINE_AA)
    elif kind == "meeple":  # a board game's wooden figure
        outline = np.array([(0.5, 0.05), (0.65, 0.15), (0.62, 0.32), (0.95, 0.45), (0.9, 0.55), (0.65, 0.52), (0.85, 0.95),
                            (0.58, 0.95), (0.5, 0.72), (0.42, 0.95), (0.15, 0.95), (0.35, 0.52), (0.1, 0.55), (0.05, 0.45),
                            (0.38, 0.32), (0.35, 0.15)]) * s
        cv2.fillPoly(img, [outline.astype(np.int32)], colour.tolist(), cv2.LINE_AA)
        cv2.fillPoly(alpha, [outline.astype(np.int32)], 1.0, cv2.LINE_AA)
    else:  # a glass bead or a marble: a shaded ball and the lamp's highlight
        yy, xx = np.mgrid[0:s, 0:s]
        d = np.hypot(xx - c, yy - c) / (s * 0.45)
        alpha[:] = (d < 1).astype(np.float32)
        img[:] = np.clip(colour * (1.1 - 0.6 * d.clip(0, 1))[..., None], 0, 255).astype(np.uint8)
        cv2.circle(img, (int(c - s * 0.15), int(c - s * 0.15)), max(1, int(s * 0.07)), (255, 255, 255), -1, cv2.LINE_AA)
    return img, cv2.GaussianBlur(alpha, (0, 0), max(0.6, s * 0.01))


def _laid(frame: np.ndarray, patch: np.ndarray, alpha: np.ndarray, x0: int, y0: int) -> None:
    """``patch`` laid on ``frame`` at (``x0``, ``y0``) through its outline's ``alpha``."""
    s = patch.shape[0]
    under = frame[y0:y0 + s, x0:x0 + s].astype(np.float32)
    frame[y0:y0 + s, x0:x0 + s] = (patch * alpha[..., None] + under * (1 - alpha[..., None])).astype(np.uint8)


def scenes(dice: list[tuple[int, np.ndarray]], per_kind: int, mode: str, seed: int | None = None) -> Iterator[Scene]:
    """``per_kind`` scenes of each thing in ``KINDS`` (taken in turn) lying ``mode`` (one of ``MODES``), with real
    dice from ``dice`` ((face, patch) as ``real_val_dice`` gives them; the tray's scenes draw the game's own);
    seeded by ``MODES`` unless ``seed``."""
    rng = np.random.default_rng(MODES[mode] if seed is None else seed)
    if mode == IN_THE_TRAY:
        yield from _tray_scenes(rng, per_kind)
        return
    count = EXPECTED - 1 if mode == "in a die's place" else EXPECTED
    for i in range(per_kind * len(KINDS)):
        scene = None
        while scene is None:  # a draw whose dice and thing found no room apart is drawn again, from the same stream
            scene = _laid_out(rng, dice, count, KINDS[i % len(KINDS)])
        yield scene


def _laid_out(rng: np.random.Generator, dice: list[tuple[int, np.ndarray]], count: int, kind: str) -> Scene | None:
    """One scene: ``count`` of ``dice`` and a ``kind`` of thing on a cup photo, each ``APART`` from the others; or None
    where one found no room in ``PLACE_TRIES`` draws (big dice can leave none in the small frame, and an unbounded
    search then never ends)."""
    width, height = FRAME
    frame = cup_frame(rng, width, height)
    side = int(rng.uniform(*DIE_SIDE))
    labels = pasted_apart(rng, frame, dice, count, side, APART, PLACE_TRIES)
    if labels is None:
        return None
    size = int(side * rng.uniform(0.8, 1.2))
    corner = free_corner(rng, width, height, size, labels, APART, tries=PLACE_TRIES)
    if corner is None:
        return None
    x0, y0 = corner
    _laid(frame, *thing(kind, size, rng), x0, y0)
    return Scene(kind, frame, labels, (x0 + size / 2, y0 + size / 2, size))


def _tray_scenes(rng: np.random.Generator, per_kind: int) -> Iterator[Scene]:
    """The simulated table in tray mode, one of its three dice swapped for a thing: the die's place covered with the
    empty tray's photo (the same room without the dice), the thing laid there at 0.9-1.15 of the die's side."""
    from vision.simtable import render_calibrated_table

    for i in range(per_kind * len(KINDS)):
        frame, placed, empty = render_calibrated_table([int(v) for v in rng.integers(1, 7, EXPECTED)], rng, view="below")
        gone = placed[int(rng.integers(EXPECTED))]
        reach = int(gone.side * 0.95)  # the die's turned square, and its shadow
        y0, y1 = max(0, int(gone.cy) - reach), int(gone.cy) + reach
        x0, x1 = max(0, int(gone.cx) - reach), int(gone.cx) + reach
        frame[y0:y1, x0:x1] = empty[y0:y1, x0:x1]  # the empty tray is a BGR photo, as the frame
        kind = KINDS[i % len(KINDS)]
        size = int(gone.side * rng.uniform(0.9, 1.15))
        height, width = frame.shape[:2]
        corner = (min(max(0, int(gone.cx - size / 2)), width - size), min(max(0, int(gone.cy - size / 2)), height - size))
        _laid(frame, *thing(kind, size, rng), *corner)
        labels = [(d.seen, d.cx, d.cy, d.side, d.side) for d in placed if d is not gone]
        yield Scene(kind, frame, labels, (gone.cx, gone.cy, size), cv2.cvtColor(empty, cv2.COLOR_BGR2GRAY), float(placed[0].side))


def on_the_thing(box: tuple[int, int, int, int], scene: Scene) -> bool:
    """Whether a read die's box is centred on the scene's thing."""
    tx, ty, size = scene.thing
    return abs(box[0] + box[2] / 2 - tx) < size / 2 and abs(box[1] + box[3] / 2 - ty) < size / 2


def judged(reader: Any, scene: Scene) -> dict[str, int]:
    """One scene read by ``reader`` (told the dice the table expects, and a tray scene's calibration): its counts,
    as ``read`` adds them up."""
    if scene.empty is not None:
        reader = reader.with_die_side(scene.die_side).with_empty_tray(scene.empty)
    reading = reader.read(scene.frame)
    taken = [d for d in reading.dice if on_the_thing(d.box, scene)]
    found = match_boxes([d.box for d in reading.dice], scene.labels)
    right = len(reading.dice) == len(scene.labels) and all(
        j is not None and reading.dice[j].seen == label[0] for label, j in zip(scene.labels, found))
    ok, fine = reading.status == "ok", right and not taken and len(scene.labels) == EXPECTED  # a die short: never fine
    return {"frames": 1, "ok": int(ok), "ok_and_right": int(ok and fine), "wrong_verdicts": int(ok and not fine),
            "taken": int(bool(taken)), "taken_surely": int(any(not d.doubts for d in taken))}


def read(reader: Any, per_kind: int = 20, dice: list[tuple[int, np.ndarray]] | None = None) -> dict[str, dict[str, dict[str, int]]]:
    """Per mode, per kind and in ``all``: the counts of ``judged`` over ``per_kind`` scenes of each thing, read by the
    product's ``reader`` (as ``load_reader`` gives it) from above where the dice are pasted photos, and from below, as
    the tray's camera sees, in the tray."""
    dice = real_val_dice() if dice is None else dice
    if len(dice) < EXPECTED:
        raise ValueError(f"the scenes need at least {EXPECTED} real dice to paste; found {len(dice)} (are the shared sets there?)")
    out: dict[str, dict[str, dict[str, int]]] = {}
    for mode in MODES:
        told = reader.with_view("below" if mode == IN_THE_TRAY else "above").with_expected(EXPECTED)
        rows: dict[str, dict[str, int]] = {}
        for scene in scenes(dice, per_kind, mode):
            row = judged(told, scene)
            rows[scene.kind] = {k: rows.get(scene.kind, {}).get(k, 0) + v for k, v in row.items()}
        rows["all"] = {k: sum(row[k] for row in rows.values()) for k in next(iter(rows.values()))}
        out[mode] = rows
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("model", nargs="?", type=Path, help="a face model (.onnx; default: the shipped one)")
    ap.add_argument("--per-kind", type=int, default=20, help="scenes of each thing in each mode (default 20)")
    ap.add_argument("--json", action="store_true", help="one JSON object, mode by mode and thing by thing")
    args = ap.parse_args(argv)
    from models.training.judge import CUE_DIR, candidate_cues, reader_of

    if args.model is not None and not args.model.is_file():
        ap.error(f"there is no model file at {args.model}")
    if args.per_kind < 1:
        ap.error("--per-kind must be at least 1")
    cv2.setNumThreads(1)
    dice = real_val_dice()
    if len(dice) < EXPECTED:
        ap.error("no real dice to paste: the shared datasets are not beside the repository")
    # a candidate with its own number cue, as the judge fits it; the leaning cue (twenty minutes more) is the shipped
    # model's, so a candidate reads the tray without one: it only adds doubts
    own = candidate_cues(args.model, CUE_DIR, leaning=False) if args.model is not None else {}
    report = read(reader_of(args.model, cues=own), args.per_kind, dice)
    if args.json:
        print(json.dumps(report, indent=1))
        return 0
    for mode, rows in report.items():
        print(f"{mode}:")
        for kind, row in rows.items():
            print(f"  {kind:<12} {row['frames']:>4} frames  ok {row['ok']:>3}  wrong verdicts {row['wrong_verdicts']:>3}  "
                  f"taken for a die {row['taken']:>3} (surely {row['taken_surely']})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
