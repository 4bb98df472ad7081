"""Finding dice in a frame, without a model: what differs from the tray.

A die is a compact, roughly square patch whose colour differs from the tray
around it. A look works on a small copy of the frame (``CLASSIC.work_side`` px
on its long side, so a 1280×960 frame costs about a millisecond) and turns each
compact blob into a rotated square (``Candidate``). Its jobs, one module each:

- ``vision.finder_masks``, the clear pass: the working copy, brightened when
  dim, compared with a coarse median that stands for the empty tray;
- ``vision.finder_faint``, the faint pass: pale dice on a pale tray, which
  differ only at their outline and marks, each one whole square die;
- ``vision.finder_cut``: clear blobs opened (thin things glued to dice, a dark
  frame or wall with dice against it) and touching dice cut apart, at the seams
  the mask shows or along straight lines in the dice's own axes.

A look may stop after its clear pass (``look(faint=False)``) and take the faint
pass later (``with_faint``) without cutting the clear blobs again: the reader
skips it when the clear pass read the game's dice. A die neither pass sees,
whose marks still show (a white die on a pale tray), is left to
``vision.marks``, which looks for it in the clear mask a ``Look`` hands back.
The finder does not decide what a blob *is*: the face classifier rejects blobs
that are not dice, so finding may be generous.

The finder flags what the reader must not trust: a die touching the frame's
edge (cut off) and a blob that is not square (a die leaning on the cup, or two
dice the split could not separate).

Its thresholds are ``vision.classic_tunables.CLASSIC``; how they were measured
is in docs/CLASSIC-READER.md.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import NamedTuple

import cv2
import numpy as np

from vision.classic_tunables import CLASSIC
from vision.finder_cut import clear_blob_parts, min_rect
from vision.finder_faint import faint_mask
from vision.finder_masks import clear_masks, exposed, shrink


@dataclass(frozen=True)
class Candidate:
    """One blob that may be a die: a rotated square in frame pixels, and flags."""

    cx: float
    cy: float
    w: float
    h: float
    angle: float
    cut_off: bool = False
    misshapen: bool = False
    #: a look only guessed its square (``vision.marks``: the frame's die size around orphan marks; or the
    #: reader's coarser look): the reader must read it the same at every span before it counts
    guessed: bool = False

    @property
    def side(self) -> float:
        return (self.w + self.h) / 2.0

    @classmethod
    def square(cls, cx: float, cy: float, side: float, angle: float = 0.0, **flags: bool) -> "Candidate":
        """A square of ``side`` centred at (cx, cy): a die's size placed where its marks or its box say."""
        return cls(float(cx), float(cy), float(side), float(side), float(angle), **flags)

    def box(self) -> tuple[int, int, int, int]:
        """The axis-aligned box (x, y, w, h) around the rotated square."""
        pts = cv2.boxPoints(((self.cx, self.cy), (self.w, self.h), self.angle))
        x0, y0 = np.floor(pts.min(0))
        x1, y1 = np.ceil(pts.max(0))
        return int(x0), int(y0), int(x1 - x0), int(y1 - y0)


def masks(small: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Three 0/255 masks of what differs from the tray: clearly, faintly, and clearly before its gaps were closed."""
    strong, raw = clear_masks(small)
    return strong, faint_mask(small, strong), raw


def foreground(small: np.ndarray) -> np.ndarray:
    """A 0/255 mask of what differs from the tray, clearly or faintly."""
    strong, faint, _ = masks(small)
    return cv2.bitwise_or(strong, faint)


def _percentile(values: list[float], q: float) -> float:
    """``np.percentile(values, q)`` (linear, and the same arithmetic), for a few values, where
    numpy's call is mostly overhead (``find_dice`` makes two a frame)."""
    s = sorted(values)
    pos = q / 100 * (len(s) - 1)
    lo = int(pos)
    t = pos - lo
    if t == 0 or lo + 1 >= len(s):
        return float(s[lo])
    a, b = float(s[lo]), float(s[lo + 1])
    return b - (b - a) * (1 - t) if t >= 0.5 else a + (b - a) * t


@dataclass(frozen=True)
class Look:
    """What one look at a frame found: its candidates, and the clear mask they came from (``vision.marks``
    looks there for dice whose body it lost)."""

    candidates: list[Candidate]
    #: the clear mask before its gaps were closed, 0/255, in working pixels
    raw: np.ndarray
    #: working pixels per frame pixel
    scale: float
    #: whether the faint pass ran: ``look(faint=False)`` stops after the clear pass, ``with_faint`` adds it
    faint: bool = True
    #: what ``with_faint`` goes on from: the working copy, its closed clear mask, and the look's own arguments
    small: np.ndarray | None = None
    strong: np.ndarray | None = None
    die_side: float | None = None
    smallest: float = 0.0
    #: what ``with_faint`` takes again for the blobs the faint pass left as they were (``_blobs_to_dice``):
    #: each blob by its stats, and each clear blob's dice by its stats and the die size (cutting touching
    #: dice apart is the costliest step of a look)
    blobs: dict[tuple[int, ...], _Blob | None] = field(default_factory=dict, compare=False, repr=False)
    dice: dict[tuple[tuple[int, ...], float | None, float | None], list[Candidate]] = field(default_factory=dict, compare=False, repr=False)


def find_dice(frame: np.ndarray, die_side: float | None = None, work_side: int = CLASSIC.work_side, smallest: float = 0.0) -> list[Candidate]:
    """Every blob in ``frame`` (BGR uint8) that may be a die, in frame pixels (``look``'s candidates)."""
    return look(frame, die_side, work_side, smallest).candidates


def look(frame: np.ndarray, die_side: float | None = None, work_side: int = CLASSIC.work_side, smallest: float = 0.0,
         faint: bool = True) -> Look:
    """Every blob in ``frame`` (BGR uint8) that may be a die, in frame pixels, and the mask they came from.

    ``die_side`` (frame pixels) is the expected side of a die when known (the
    table's geometry); otherwise the blobs themselves give it. ``work_side``
    is the working copy's long side: every size rule is in working pixels, so
    a smaller working copy finds bigger dice (a close-up photo), at
    ``CLASSIC.work_side / work_side`` times the sizes of the default look.
    ``smallest`` (a share of the frame's long side) skips smaller blobs before
    any work is spent on them: a look for big dice only needs big blobs.
    ``faint=False`` stops after the clear pass (the faint pass costs about a
    third of a look): ``with_faint`` adds it later, from where it stopped.
    """
    h, w = frame.shape[:2]
    scale = work_side / max(h, w)
    sw, sh = max(1, round(w * scale)), max(1, round(h * scale))
    small = exposed(shrink(frame, (sw, sh)))
    strong, raw = clear_masks(small)
    clear_only = Look([], raw, scale, faint=False, small=small, strong=strong, die_side=die_side, smallest=smallest)
    return with_faint(clear_only) if faint else replace(clear_only, candidates=_blobs_to_dice(clear_only, None))


def with_faint(clear_only: Look) -> Look:
    """The same look with its faint pass: the dice of the clear pass, and the pale dice it missed."""
    if clear_only.faint:
        return clear_only
    assert clear_only.small is not None and clear_only.strong is not None
    faint = faint_mask(clear_only.small, clear_only.strong)
    return replace(clear_only, candidates=_blobs_to_dice(clear_only, faint), faint=True)


def _blobs_to_dice(seen: Look, faint: np.ndarray | None) -> list[Candidate]:
    """The candidates in a look's clear mask and ``faint`` (None: the clear mask alone): blobs
    refined, touching dice cut apart, each turned into a rotated square in frame pixels.

    A blob is known by its box and pixel count (``connectedComponentsWithStats``'
    stats): two different 8-connected blobs cannot both span one box, so a blob
    the faint pass left as it was has the key it had after the clear pass, and
    what was worked out for it then (its pixels, its dice) is taken again."""
    assert seen.small is not None and seen.strong is not None
    strong, raw, scale, die_side, smallest = seen.strong, seen.raw, seen.scale, seen.die_side, seen.smallest
    sh, sw = seen.small.shape[:2]
    work_side = max(sw, sh)
    n, labels, stats, _ = _blobs(strong if faint is None else cv2.bitwise_or(strong, faint))
    min_side, max_side = max(CLASSIC.min_side * CLASSIC.work_side, smallest * work_side), CLASSIC.max_side * CLASSIC.work_side
    giant = max_side * CLASSIC.giant_sides  # no group of touching dice is this long
    blobs: list[tuple[tuple[int, ...], _Blob]] = []
    for i in range(1, n):
        key = tuple(int(v) for v in stats[i])
        x, y, bw, bh, _ = key
        if max(bw, bh) < min_side or min(bw, bh) < min_side * CLASSIC.min_thickness:
            continue
        if key not in seen.blobs:
            seen.blobs[key] = _gather(labels[y:y + bh, x:x + bw] == i, (x, y), strong, max_side)
        blob = seen.blobs[key]
        if blob is not None:
            blobs.append((key, blob))
    # A die's area: the largest blob that looks like one whole die (square, solid). The largest,
    # not the median: crumbs (bits of the cup's rim, glare) must never make real dice look like pairs.
    singles = [b for _, b in blobs if b.clear and b.single]
    ref_area = (die_side * scale) ** 2 if die_side else (_percentile([b.hull_area for b in singles], CLASSIC.ref_percentile) if singles else None)
    ref_pixels = (die_side * scale) ** 2 if die_side else (_percentile([len(b.points) for b in singles], CLASSIC.ref_percentile) if singles else None)
    found: list[Candidate] = []
    for key, blob in blobs:
        if blob.clear:  # its dice do not change when the faint pass is added: cut once (``with_faint``)
            done = (key, ref_area, ref_pixels)
            if done not in seen.dice:
                pieces = clear_blob_parts((blob.points, blob.hull_area), ref_area, ref_pixels, raw, min_side, giant)
                seen.dice[done] = [c for parts in pieces for c in (_die_square(p, parts, scale, (sw, sh), min_side, max_side) for p in parts)
                                   if c is not None]
            found += seen.dice[done]
    # A faint blob is one square die already (``_die_like``): never refined or cut by the clear dice's size.
    squares = [_die_square(blob.points, [blob.points], scale, (sw, sh), min_side, max_side) for _, blob in blobs if not blob.clear]
    return found + [c for c in squares if c is not None]


def _blobs(mask: np.ndarray) -> tuple[int, np.ndarray, np.ndarray, np.ndarray]:
    """``connectedComponentsWithStats`` of a 0/255 mask, 8-connected, its labels in 16 bits when they fit.

    Blobs apart need a pixel between them, so a mask holds at most a quarter of its pixels' count of
    blobs: a working copy of 320 px fits 16 bits, whose label image OpenCV fills about three times
    faster. The labels are the same either way."""
    h, w = mask.shape[:2]
    wide = ((h + 1) // 2) * ((w + 1) // 2) >= 65535
    return cv2.connectedComponentsWithStats(mask, connectivity=8, ltype=cv2.CV_32S if wide else cv2.CV_16U)


class _Blob(NamedTuple):
    """One blob of a look's mask, in working pixels."""

    points: np.ndarray
    hull_area: float
    #: found clearly (only those give the die size: faint specks must not)
    clear: bool
    #: looks like one whole die (square, solid, not too big): the die size is taken from such blobs
    single: bool


def _gather(inside: np.ndarray, corner: tuple[int, int], strong: np.ndarray, max_side: float) -> _Blob | None:
    """The blob whose pixels are ``inside`` its box (at ``corner``), or None when it has no area."""
    ys, xs = np.nonzero(inside)
    pts = np.stack([xs + corner[0], ys + corner[1]], 1)
    hull_area = cv2.contourArea(cv2.convexHull(pts.astype(np.int32)))
    if hull_area <= 0:
        return None
    clear = bool(strong[pts[0, 1], pts[0, 0]])
    (_, _), (rw, rh), _ = min_rect(pts)
    single = (max(rw, rh) <= max_side and max(rw, rh) / max(1.0, min(rw, rh)) < CLASSIC.single_aspect
              and len(pts) >= CLASSIC.single_fill * rw * rh)
    return _Blob(pts, hull_area, clear, single)


def _die_square(part: np.ndarray, parts: list[np.ndarray], scale: float, size: tuple[int, int], min_side: float,
               max_side: float) -> Candidate | None:
    """The rotated square around one die's pixels, in frame pixels, or None when the part is no die's size or a
    line (the tray's rim, a scratch, a shadow's edge). Flagged cut off at the working copy's edge, and
    misshapen when not square (a die cut out of a touching group, one of ``parts``, gets more slack)."""
    if len(part) < 3:
        return None
    (cx, cy), (rw, rh), angle = min_rect(part)
    aspect = max(rw, rh) / max(1.0, min(rw, rh))
    if not min_side <= max(rw, rh) <= max_side or aspect > CLASSIC.line_aspect:
        return None
    x0, y0 = part.min(0)
    x1, y1 = part.max(0)
    cut = x0 <= 0 or y0 <= 0 or x1 >= size[0] - 1 or y1 >= size[1] - 1
    return Candidate(cx / scale, cy / scale, rw / scale, rh / scale, float(angle), cut,
                     aspect > (CLASSIC.misshapen_aspect_cut if len(parts) > 1 else CLASSIC.misshapen_aspect))
