"""Tray mode's second look: where the frame differs from the calibrated empty tray and no die was found.

The detector misses a white die lying on a glare patch as white as it, and sometimes the second of
two dice pushed together; the photo of the empty tray that ``calibrate`` keeps shows both plainly,
since the tray, the room behind it and the lamp's glare are the same and only the dice are new. The
staged reader asks for this look only in tray mode (die size and empty tray known), only when its
reading is short of the expected dice, and keeps a die found this way only when the classifier reads
it sure (``sure_rescues``); otherwise the reading stays short and the table confirms it (RULES.md R14).
"""

from __future__ import annotations

import math

import cv2
import numpy as np

from companion.core.protocols import Proposal
from vision.pipeline.classify import FaceRead
from vision.pipeline.decide import is_sure
from vision.pipeline.reconcile import NOT_A_DIE_ABOVE, NOT_A_DIE_MARGIN
from vision.pipeline.shape import EMPTY_DIFFERS

#: Above this share of differing pixels the empty tray's photo is stale (the light changed since ``calibrate``): no look.
STALE_SHARE = 0.25
#: A found die's square is blanked this much wider than its side, so its edges leave nothing behind.
COVER = 1.25
#: A blob left over is worth a look from this share of one die's area; its area over a die's says how many dice it holds.
MIN_AREA = 0.5
#: At most this many dice are looked for in one blob (three pushed together, and a margin).
MAX_PER_BLOB = 4
#: Two dice in one blob have centres at least this share of a side apart.
APART = 0.8
#: Rounds that move each centre of a blob of several dice to the middle of its share of the blob.
SETTLE_ROUNDS = 5
#: The score a die found this way carries (it is no detector's guess, and it is kept only when read sure).
FOUND_SCORE = 1.0


def uncovered_dice(grey: np.ndarray, empty: np.ndarray | None, found: list[Proposal], die_side: float) -> list[Proposal]:
    """Squares of ``die_side`` where ``grey`` differs from the ``empty`` tray outside every ``found`` die.

    >>> empty = np.full((120, 200), 60, np.uint8)
    >>> frame = empty.copy(); frame[40:71, 30:61] = 220; frame[40:71, 120:151] = 220
    >>> [(round(p.cx), round(p.cy)) for p in uncovered_dice(frame, empty, [Proposal(45, 55, 30, 0, 0.9)], 30)]
    [(135, 55)]
    """
    if empty is None or empty.shape != grey.shape or die_side < 4:
        return []
    sigma = max(0.5, die_side / 16)
    diff = cv2.absdiff(cv2.GaussianBlur(grey, (0, 0), sigma), cv2.GaussianBlur(empty, (0, 0), sigma))
    mask = (diff > EMPTY_DIFFERS).astype(np.uint8)  # both blurred by a sixteenth of a die: the die's body, not its edges
    if mask.mean() > STALE_SHARE:
        return []
    for p in found:
        corners = cv2.boxPoints(((p.cx, p.cy), (p.side * COVER, p.side * COVER), p.angle_deg))
        cv2.fillPoly(mask, [np.round(corners).astype(np.int32)], 0)
    k = max(3, int(round(die_side / 6)) | 1)
    mask = cv2.morphologyEx(mask, cv2.MORPH_OPEN, cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (k, k)))
    count, labels, stats, _ = cv2.connectedComponentsWithStats(mask, connectivity=8)
    one = die_side * die_side
    out: list[Proposal] = []
    for i in range(1, count):
        area = int(stats[i, cv2.CC_STAT_AREA])
        if area < MIN_AREA * one:
            continue
        blob = (labels == i).astype(np.uint8)
        dice = min(MAX_PER_BLOB, max(1, int(round(area / one))))
        for cx, cy in _centres(blob, dice, die_side):
            out.append(Proposal(cx, cy, float(die_side), _turn(blob, cx, cy, die_side), FOUND_SCORE))
    return out


def _centres(blob: np.ndarray, dice: int, die_side: float) -> list[tuple[float, float]]:
    """Up to ``dice`` centres in one blob: the deepest points of its distance map, at least ``APART`` sides apart,
    each then moved to the middle of the pixels nearest it (a few fixed rounds of k-means: no random start)."""
    if dice == 1:
        m = cv2.moments(blob, binaryImage=True)
        return [(m["m10"] / m["m00"], m["m01"] / m["m00"])]
    depth = cv2.distanceTransform(blob, cv2.DIST_L2, 5)
    out: list[tuple[float, float]] = []
    reach = int(math.ceil(APART * die_side))
    for _ in range(dice):
        y, x = np.unravel_index(int(np.argmax(depth)), depth.shape)
        if depth[y, x] < die_side / 4:
            break  # what is left is too thin to hold a die
        out.append((float(x), float(y)))
        cv2.circle(depth, (int(x), int(y)), reach, 0.0, -1)
    if len(out) < 2:
        return out
    ys, xs = np.nonzero(blob)
    pts = np.column_stack([xs, ys]).astype(np.float64)
    centres = np.array(out)
    for _ in range(SETTLE_ROUNDS):
        nearest = np.argmin(((pts[:, None, :] - centres[None, :, :]) ** 2).sum(axis=2), axis=1)
        centres = np.array([pts[nearest == j].mean(axis=0) if np.any(nearest == j) else centres[j] for j in range(len(centres))])
    return [(float(x), float(y)) for x, y in centres]


def _turn(blob: np.ndarray, cx: float, cy: float, die_side: float) -> float:
    """The turn (0-90°) of the blob's pixels within half a die of (cx, cy)."""
    ys, xs = np.nonzero(blob)
    near = (xs - cx) ** 2 + (ys - cy) ** 2 <= (0.6 * die_side) ** 2
    if near.sum() < 5:
        return 0.0
    (_, _), (_, _), angle = cv2.minAreaRect(np.column_stack([xs[near], ys[near]]).astype(np.float32))
    return float(angle % 90)


def sure_rescues(found: list[Proposal], faces: list[FaceRead], min_confidence: float) -> list[Proposal]:
    """The dice the empty tray showed that the classifier reads sure, and sure to be dice."""
    return [p for p, f in zip(found, faces)
            if not f.overturned and is_sure(f.confidence, f.runner_up, min_confidence) and f.not_a_die < NOT_A_DIE_ABOVE - NOT_A_DIE_MARGIN]
