"""Tray mode's check that the dice of a roll are one set: a die whose colour is unlike every other die's is doubted.

A table under a calibrated tray plays with its own dice, the game's three elephants (or the owner's set ``teach``
learned), and the dice of one set share a body colour. A thing read as surely as a die does not: a toy brick's
square of studs is a die showing four to the classifier and to the second opinion alike, and one lying in a die's
place beside two dice is read ``ok`` (``python -m models.training.not_dice``), a wrong verdict. Its colour gives it
away where its marks do not (unless it is as pale as the game's ivory dice). So in tray mode each die's body colour (``body_colour``: the median colour of a disc in the middle
of its face, where the body outnumbers the marks on every face) is compared with the other dice's, and a die whose
colour lies farther than ``UNLIKE_ABOVE`` from every other die's is doubted (``UNLIKE``): the table confirms the
roll (RULES.md R14). The check only ever adds a doubt; it never drops a die or changes a face. The staged reader
asks it of every look's dice in tray mode (``PipelineReader._dice``), as the cues, so the look it keeps says why;
it costs a few tens of microseconds a die.

Its cost is a table that rolls dice of different colours: every reading of theirs goes to the table, so the
setting ``[reader] dice_alike = "off"`` turns the check off. It runs only in tray mode (the empty tray known):
photos read without a calibration (a heap of mixed dice, a die on a phone) are not one set. What the line measured
on the simulated table and on things in the tray is in docs/READING.md, "The dice of one set".
"""

from __future__ import annotations

from dataclasses import replace
from functools import lru_cache

import cv2
import numpy as np

from vision.pipeline.reconcile import Die

#: The reason code of a die unlike the others (``companion.core.reading.REASON_CODES``).
UNLIKE = "unlike"
#: The disc whose median colour is a die's body: this share of its side around its centre. Inside the face at any
#: turn and any detector's error of a few pixels; the marks cover under half of it on every face.
BODY_DISC = 0.4
#: The disc is sampled on a grid of about this many points across its radius, whatever the die's size: a few hundred
#: pixels give the median as well as all of them, at a constant cost.
SAMPLES_PER_RADIUS = 12
#: A die whose body colour lies farther than this (CIE76 ΔE: L* 0-100, a*, b*) from every other die's is unlike them.
#: The game's dice on the simulated table, under its glare and shading, never lay farther than 23.1 from their nearest
#: neighbour; 14 of the 17 things the tray read ``ok`` lie farther than 30 (docs/READING.md, "The dice of one set").
UNLIKE_ABOVE = 27.0
#: A disc with fewer pixels than this on the frame (a die of a few pixels, or mostly off the frame) gives no colour:
#: its die is not judged, and is no one's neighbour.
MIN_PIXELS = 12


@lru_cache(maxsize=256)
def _disc(radius: int, step: int) -> tuple[np.ndarray, np.ndarray]:
    """The offsets (dy, dx) of the points of a ``step`` grid inside a disc of ``radius`` pixels."""
    k = np.arange(-radius, radius + 1, step)
    dy, dx = np.meshgrid(k, k, indexing="ij")
    inside = dy * dy + dx * dx <= radius * radius
    return dy[inside], dx[inside]


def body_colour(bgr: np.ndarray, cx: float, cy: float, side: float) -> np.ndarray | None:
    """The body colour in CIELAB (L* 0-100, a*, b*) of the die of ``side`` centred at (cx, cy) in ``bgr``: the median
    of each channel over the disc of ``BODY_DISC`` × ``side`` around its centre, or None where the disc has fewer than
    ``MIN_PIXELS`` points on the frame.

    The median (the lower one of an even count: a pixel value) is converted by OpenCV's 8-bit Lab, exact integer
    arithmetic, so the same frame gives the same colour on the Pi's CPU.

    >>> frame = np.zeros((60, 60, 3), np.uint8); frame[:] = (40, 40, 200)  # a red die's body
    >>> frame[28:32, 28:32] = 255  # its one white mark
    >>> [round(float(v)) for v in body_colour(frame, 30, 30, 40)]
    [44, 61, 41]
    """
    radius = int(round(BODY_DISC * side))
    dy, dx = _disc(radius, max(1, radius // SAMPLES_PER_RADIUS))
    ys, xs = dy + int(round(cy)), dx + int(round(cx))
    h, w = bgr.shape[:2]
    on = (ys >= 0) & (ys < h) & (xs >= 0) & (xs < w)
    n = int(on.sum())
    if n < MIN_PIXELS:
        return None
    median = np.partition(bgr[ys[on], xs[on]], (n - 1) // 2, axis=0)[(n - 1) // 2]
    lab = cv2.cvtColor(np.ascontiguousarray(median, np.uint8).reshape(1, 1, 3), cv2.COLOR_BGR2LAB).reshape(3).astype(np.float64)
    return np.array([lab[0] * 100.0 / 255.0, lab[1] - 128.0, lab[2] - 128.0])


def unlike_the_others(colours: list[np.ndarray | None]) -> list[bool]:
    """Per colour, whether every other colour lies farther than ``UNLIKE_ABOVE`` from it (None: never, and no one's
    neighbour); with fewer than two colours, none is.

    >>> pink, pale, blue = np.array([60.0, 50, -10]), np.array([62.0, 48, -8]), np.array([40.0, 10, -50])
    >>> unlike_the_others([pink, pale, blue]), unlike_the_others([pink, None, blue]), unlike_the_others([pink])
    ([False, False, True], [True, False, True], [False])
    """
    known = [i for i, c in enumerate(colours) if c is not None]
    if len(known) < 2:
        return [False] * len(colours)
    out = []
    for i, c in enumerate(colours):
        if c is None:
            out.append(False)
            continue
        nearest = min(float(np.sum((c - colours[j]) ** 2)) for j in known if j != i)
        out.append(nearest > UNLIKE_ABOVE ** 2)
    return out


def flag_unlike(dice: list[Die], bgr: np.ndarray) -> list[Die]:
    """``dice``, each whose body colour is unlike every other die's given the doubt ``UNLIKE``."""
    colours = [body_colour(bgr, d.proposal.cx, d.proposal.cy, d.proposal.side) for d in dice]
    return [replace(d, doubts=d.doubts + (UNLIKE,)) if unlike and UNLIKE not in d.doubts else d
            for d, unlike in zip(dice, unlike_the_others(colours))]
