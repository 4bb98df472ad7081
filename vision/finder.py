"""Finding dice in a frame, without a model: what differs from the tray.

A die is a compact, roughly square patch whose colour differs from the tray
around it. The finder works on a small copy of the frame (``CLASSIC.work_side`` px on
its long side, so a 1280×960 frame costs about a millisecond), estimates the
tray behind the dice with a coarse median, keeps what differs from it, and turns
each compact blob into a rotated square. A second, faint pass finds pale dice
on a pale tray, which differ only at their outline and marks (``_faint_dice``):
each must be one square die on its own, and is never cut apart (a look may stop
before it, ``look(faint=False)``, and take it later, ``with_faint``, without cutting
the clear blobs again: the reader skips it when the clear pass read the game's dice). An outline open
on the die's lit side is filled to its hull; one made oblong by the die's shadow
gives the square around the die's marks. Blobs too big for one die (touching
dice) are split where the clear mask, before its gaps were closed, shows the
seams between them (``_split_at_seams``), else cut apart along straight lines in
the dice's own axes (``_cut_apart``), with k-means on their pixels as the fallback. A blob far longer than any
group of dice (a dark frame or wall with dice against it) is opened wider, and only its pieces wide enough to be dice are
kept (``CLASSIC.wall_reach``). A die neither pass sees, whose marks still show (a white die on a pale tray), is left to
``vision.marks``, which looks for it in the clear mask ``look`` hands back. It does not decide what a blob *is*: the
face classifier rejects blobs that are not dice, so finding may be generous.

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


def shrink(frame: np.ndarray, size: tuple[int, int]) -> np.ndarray:
    """Resize to ``size``; a big reduction goes linear to twice the size, then by area (faster than by area alone)."""
    w, h = size
    if frame.shape[1] > 2 * w:
        frame = cv2.resize(frame, (2 * w, 2 * h), interpolation=cv2.INTER_LINEAR)
    interp = cv2.INTER_AREA if frame.shape[1] > w else cv2.INTER_LINEAR
    return cv2.resize(frame, (w, h), interpolation=interp)


def exposed(small: np.ndarray) -> np.ndarray:
    """``small`` brightened when it is dim (``CLASSIC.exposure_level``), else itself.

    A photo from a dim room or a darker camera holds the same dice at half the
    contrast, and the fixed grey-level thresholds would lose them."""
    b, g, r = cv2.split(small)
    cum = np.cumsum(cv2.calcHist([cv2.max(cv2.max(b, g), r)], [0], None, [256], [0, 256]).ravel())
    level = float(np.searchsorted(cum, CLASSIC.exposure_quantile * cum[-1]))
    if level >= CLASSIC.exposure_level or level < 1:
        return small
    return cv2.convertScaleAbs(small, alpha=min(CLASSIC.max_gain, CLASSIC.exposure_level / level))


def _background(small: np.ndarray) -> np.ndarray:
    """The tray as it would look without dice: a median over cells larger than a die."""
    h, w = small.shape[:2]
    tw, th = max(4, w // CLASSIC.bg_cell), max(4, h // CLASSIC.bg_cell)
    tiny = cv2.resize(small, (tw, th), interpolation=cv2.INTER_AREA)
    tiny = cv2.medianBlur(tiny, CLASSIC.bg_median)
    return cv2.resize(tiny, (w, h), interpolation=cv2.INTER_LINEAR)


def _tray_without(small: np.ndarray, exclude: np.ndarray) -> np.ndarray:
    """The tray estimated from the pixels outside ``exclude`` (what the strong pass found) only.

    A group of dark dice wider than the median's window darkens ``_background``
    around it: the tray there then differs faintly, a halo that glues a pale
    die near the group to it. Cells mostly covered are filled from the cells
    around them (normalised convolution) before the median.
    """
    h, w = small.shape[:2]
    tw, th = max(4, w // CLASSIC.bg_cell), max(4, h // CLASSIC.bg_cell)
    # at half size first (uint8, fast): float work on the whole working copy is slow
    half = (max(tw, w // 2), max(th, h // 2))
    free = cv2.resize(cv2.bitwise_not(exclude), half, interpolation=cv2.INTER_AREA).astype(np.float32) / 255.0
    pixels = cv2.resize(small, half, interpolation=cv2.INTER_AREA).astype(np.float32)
    total = cv2.resize(pixels * free[..., None], (tw, th), interpolation=cv2.INTER_AREA)
    share = cv2.resize(free, (tw, th), interpolation=cv2.INTER_AREA)
    good = (share > 0.3).astype(np.float32)
    mean = total / np.maximum(share, 1e-3)[..., None] * good[..., None]
    near = cv2.GaussianBlur(mean, (0, 0), 1.5) / np.maximum(cv2.GaussianBlur(good, (0, 0), 1.5), 1e-3)[..., None]
    tiny = np.where(good[..., None] > 0, mean, near)
    tiny = cv2.medianBlur(np.clip(tiny, 0, 255).astype(np.uint8), CLASSIC.bg_median)
    return cv2.resize(tiny, (w, h), interpolation=cv2.INTER_LINEAR)


def _difference(small: np.ndarray, bg: np.ndarray) -> np.ndarray:
    """The largest channel difference from the tray (faster than numpy's max over the channels)."""
    b, g, r = cv2.split(cv2.absdiff(small, bg))
    return cv2.max(cv2.max(b, g), r)


def _clean(mask: np.ndarray) -> np.ndarray:
    """Close small gaps, then open with a disc narrower than any die.

    Opening drops thin things (the cup's rim, scratches, the tray's edge) that
    would otherwise glue dice into one blob.
    """
    disc = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (CLASSIC.close_side, CLASSIC.close_side))
    mask = cv2.morphologyEx(mask, cv2.MORPH_CLOSE, disc, iterations=CLASSIC.close_iterations)
    return cv2.morphologyEx(mask, cv2.MORPH_OPEN, cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (CLASSIC.open_side, CLASSIC.open_side)))


def clear_masks(small: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Two 0/255 masks of what differs clearly from the tray (dice, their marks and edges): closed
    and opened (``_clean``), and before ``_clean`` closed its gaps (it still shows the seams between
    touching dice)."""
    diff = _difference(small, _background(small))
    raw = (diff > CLASSIC.diff_threshold).astype(np.uint8) * 255
    return _clean(raw), raw


def faint_mask(small: np.ndarray, strong: np.ndarray) -> np.ndarray:
    """A 0/255 mask of what differs faintly from the tray (pale dice on a pale tray), apart from
    everything in ``strong`` (``clear_masks``' closed mask)."""
    return _faint_dice(_difference(small, _tray_without(small, strong)), strong)


def masks(small: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Three 0/255 masks of what differs from the tray: clearly, faintly, and clearly before its gaps were closed."""
    strong, raw = clear_masks(small)
    return strong, faint_mask(small, strong), raw


def foreground(small: np.ndarray) -> np.ndarray:
    """A 0/255 mask of what differs from the tray, clearly or faintly."""
    strong, faint, _ = masks(small)
    return cv2.bitwise_or(strong, faint)


def _median(img: np.ndarray) -> float:
    """The median of a uint8 image from its histogram (a few times faster than ``np.median``)."""
    cum = np.cumsum(cv2.calcHist([img], [0], None, [256], [0, 256]).ravel())
    return float(np.searchsorted(cum, cum[-1] / 2))


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


def _faint_dice(diff: np.ndarray, strong: np.ndarray) -> np.ndarray:
    """Dice the strong pass missed, as a 0/255 mask.

    A pale die on a pale tray differs from it only at its outline and its
    marks: a ring around a patch of its own colour. Above a threshold set by
    the frame's own noise (``CLASSIC.weak_k`` × its median difference) that ring shows;
    what is not close to the strong pass's blobs is cut out (a gap keeps a
    pale die apart from a dark one it lies against: joined, they would read as
    one or be cut apart wrongly), its die-sized holes filled, thin tails
    opened off. Each outline that is one square die of a plausible size, with
    marks and nothing clear around it (``_stands_alone``: not a die's shadow,
    not a lit patch beside the cup's rim), is kept filled. A ring open on the
    die's lit side has no hole to fill: it is filled to its hull
    (``_fill_hulls``). An outline made oblong by the die's shadow gives the
    square centred on its marks (``_die_under_marks``).
    """
    thr = min(CLASSIC.diff_threshold, max(CLASSIC.weak_min, CLASSIC.weak_k * _median(diff)))
    weak = (diff > thr).astype(np.uint8) * 255
    weak = cv2.morphologyEx(weak, cv2.MORPH_CLOSE, cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (CLASSIC.weak_close, CLASSIC.weak_close)))
    min_side, max_side = CLASSIC.min_side * max(diff.shape), CLASSIC.max_side * max(diff.shape)
    near = cv2.dilate(_not_marks(strong, weak, min_side, max_side), cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (CLASSIC.weak_gap, CLASSIC.weak_gap)))
    weak[near > 0] = 0  # a pale die against a clear one: the faint part beside it, kept apart from it by a gap
    # fill the holes no bigger than a die (the die's own colour inside its ring); not the tray inside its rim
    ring = weak
    weak = _fill_holes(weak, max_side)
    weak = _fill_hulls(weak, cv2.bitwise_xor(weak, ring), min_side, max_side)
    weak[near > 0] = 0  # a hull may reach back across the gap
    weak = cv2.morphologyEx(weak, cv2.MORPH_OPEN, cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (CLASSIC.open_side, CLASSIC.open_side)))
    out = np.zeros_like(weak)
    contours, hierarchy = cv2.findContours(weak, cv2.RETR_CCOMP, cv2.CHAIN_APPROX_SIMPLE)
    for c, (_, _, _, parent) in zip(contours, hierarchy[0] if contours else ()):
        if parent >= 0:
            continue  # outer outlines at every depth (a die inside the ring of the tray's rim counts too), one die each
        square = _die_like(c, min_side, max_side)
        if not square and not _shadowed_die_like(c, min_side, max_side):
            continue
        x, y, w, h = cv2.boundingRect(c)
        g = CLASSIC.weak_gap
        x0, y0, x1, y1 = max(0, x - g), max(0, y - g), min(diff.shape[1], x + w + g), min(diff.shape[0], y + h + g)
        patch = np.zeros((y1 - y0, x1 - x0), np.uint8)
        cv2.drawContours(patch, [c], -1, 255, cv2.FILLED, offset=(-x0, -y0))
        clear = (diff[y0:y1, x0:x1] > CLASSIC.diff_threshold) & (near[y0:y1, x0:x1] == 0)
        if not _stands_alone(patch, clear):
            continue
        if not square:
            patch = _die_under_marks(c, patch, clear, (x0, y0))
            if patch is None:
                continue
        out[y0:y1, x0:x1] |= patch
    out[near > 0] = 0  # a die under its marks may reach past its outline: never across the gap
    return out


def _shadowed_die_like(contour: np.ndarray, min_side: float, max_side: float) -> bool:
    """Whether an outline may be one pale die with its shadow along one side: solid, oblong, about one die wide."""
    lo, hi, solid = _outline_shape(contour)
    return min_side <= lo and hi <= max_side and CLASSIC.square_aspect * lo < hi <= CLASSIC.shadow_aspect * lo and solid


def _die_under_marks(contour: np.ndarray, patch: np.ndarray, clear: np.ndarray, offset: tuple[int, int]) -> np.ndarray | None:
    """The square die inside a pale die's oblong outline (the die and its shadow): one short side wide,
    centred along the outline on its marks (every face's marks are centred on the face).

    None when more than ``CLASSIC.shadow_edge_marks`` clear pixels lie on the outline's
    edge: marks cut by the outline mean it missed part of the die, so its short
    side is not the die's (such a square, half shadow, can read a wrong face sure).
    """
    inner = _inside(patch)
    if np.count_nonzero((patch > 0) & clear & ~inner) > CLASSIC.shadow_edge_marks:
        return None
    (cx, cy), (rw, rh), angle = cv2.minAreaRect(contour)
    side = min(rw, rh)
    t = np.deg2rad(angle) if rw >= rh else np.deg2rad(angle + 90.0)
    axis = np.array([np.cos(t), np.sin(t)])
    ys, xs = np.nonzero(inner & clear)
    mx, my = xs.mean() + offset[0], ys.mean() + offset[1]
    along = float(np.clip((mx - cx) * axis[0] + (my - cy) * axis[1], -(max(rw, rh) - side) / 2, (max(rw, rh) - side) / 2))
    centre = (cx + along * axis[0] - offset[0], cy + along * axis[1] - offset[1])
    out = np.zeros_like(patch)
    pts = cv2.boxPoints((centre, (side, side), angle)).round().astype(np.int32)
    cv2.fillConvexPoly(out, pts, 255)
    return out


def _fill_holes(mask: np.ndarray, max_side: float) -> np.ndarray:
    """``mask`` with its holes no bigger than a die filled (a pale die's own colour inside its faint ring)."""
    contours, hierarchy = cv2.findContours(mask, cv2.RETR_CCOMP, cv2.CHAIN_APPROX_SIMPLE)
    if not contours:
        return mask
    holes = [c for c, (_, _, _, parent) in zip(contours, hierarchy[0]) if parent >= 0 and cv2.contourArea(c) <= max_side ** 2]
    out = mask.copy()
    cv2.drawContours(out, holes, -1, 255, cv2.FILLED)
    return out


def _fill_hulls(mask: np.ndarray, filled: np.ndarray, min_side: float, max_side: float) -> np.ndarray:
    """``mask`` with each die-sized, square blob filled to its convex hull: a pale die's faint ring
    often stays open on its lit side, so it has no hole to fill. A blob whose ring was closed
    (its hole is in ``filled``) is left as it is: its hull would only add the shadow beside it."""
    contours, _ = cv2.findContours(mask, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
    hulls = []
    for c in contours:
        x, y, w, h = cv2.boundingRect(c)
        if max(w, h) < min_side or max(w, h) > max_side or filled[y:y + h, x:x + w].any():
            continue
        hull = cv2.convexHull(c)
        (_, _), (rw, rh), _ = cv2.minAreaRect(hull)
        if max(rw, rh) <= CLASSIC.hull_aspect * min(rw, rh):
            hulls.append(hull)
    if not hulls:
        return mask
    out = mask.copy()
    cv2.drawContours(out, hulls, -1, 255, cv2.FILLED)
    return out


def _not_marks(strong: np.ndarray, weak: np.ndarray, min_side: float, max_side: float) -> np.ndarray:
    """``strong`` without the blobs that are a pale die's marks.

    The marks of a white die on a pale tray differ clearly, and close marks
    merge into a blob the opening keeps. Around every clear blob the faint pass
    cuts a gap, so such a die lost its own inside and was never found. A
    clear blob is a pale die's marks when the faint outline around it (holes
    filled) is one square die and the blob covers under ``CLASSIC.pale_marks_share`` of it;
    a dark die fills its outline, so it keeps its gap. Only blobs well under
    the largest clear die's area are looked at (a die's marks cover a fraction
    of a die), and each only in a window reaching one and a half of that die's
    sides around it (a frame-wide search is ten times dearer).
    """
    contours, _ = cv2.findContours(strong, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
    areas = [cv2.contourArea(c) for c in contours]
    dice = [a for c, a in zip(contours, areas) if _die_like(c, min_side, max_side)]
    if dice:  # marks cover a fraction of a die, and the die around them reaches 1.5 sides at most
        limit, reach = CLASSIC.pale_marks_share * max(dice), int(np.ceil(min(max_side, CLASSIC.pale_marks_reach * np.sqrt(max(dice)))))
    else:  # no clear die to size by: any blob that fits in a die
        limit, reach = max_side ** 2, int(np.ceil(max_side))
    out = strong
    for c, area in zip(contours, areas):
        if area >= limit:
            continue
        x, y, w, h = cv2.boundingRect(c)
        if max(w, h) >= reach:
            continue
        x0, y0 = max(0, x + w - reach), max(0, y + h - reach)
        x1, y1 = min(strong.shape[1], x + reach), min(strong.shape[0], y + reach)
        region = _fill_holes(cv2.bitwise_or(weak[y0:y1, x0:x1], strong[y0:y1, x0:x1]), max_side)  # the window's blobs, filled
        px, py = c[0, 0]
        cv2.floodFill(region, None, (int(px - x0), int(py - y0)), 64)
        outline, _ = cv2.findContours((region == 64).astype(np.uint8), cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
        if len(outline) == 1 and _die_like(outline[0], min_side, max_side) and area < CLASSIC.pale_marks_share * cv2.contourArea(outline[0]):
            if out is strong:
                out = strong.copy()
            cv2.drawContours(out, [c], -1, 0, cv2.FILLED)
    return out


def _stands_alone(patch: np.ndarray, clear: np.ndarray) -> bool:
    """Whether a faint blob is a die on its own: marks inside it, nothing clear around it.

    A die's marks differ clearly even on a pale die; a blotch of the tray's
    pattern has none. A lit patch beside the cup's rim or a die's shadow has the
    clear line it lies along just around it (a ``CLASSIC.weak_gap`` disc). A few clear
    pixels there (``CLASSIC.weak_around_clear``) are the die's own edge, which the
    opening cut off the faint outline: refusing those loses white dice.
    """
    disc = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (CLASSIC.weak_gap, CLASSIC.weak_gap))
    around = (cv2.dilate(patch, disc) > 0) & (patch == 0)
    if np.count_nonzero(around & clear) > CLASSIC.weak_around_clear:
        return False
    return np.count_nonzero(_inside(patch) & clear) >= CLASSIC.weak_mark_pixels


def _inside(patch: np.ndarray) -> np.ndarray:
    """A faint blob's inside, two pixels in from its outline: where its marks lie, not its edge."""
    return cv2.erode(patch, cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (5, 5))) > 0


def _outline_shape(contour: np.ndarray) -> tuple[float, float, bool]:
    """An outline's short and long side (its rotated rectangle) and whether it fills three quarters of that rectangle."""
    (_, _), (rw, rh), _ = cv2.minAreaRect(contour)
    pixels = cv2.contourArea(contour) + cv2.arcLength(contour, True) / 2 + 1  # the outline runs through its edge pixels' centres
    return min(rw, rh), max(rw, rh), pixels >= CLASSIC.outline_fill * rw * rh


def _die_like(contour: np.ndarray, min_side: float, max_side: float) -> bool:
    """Whether an outline holds one square, solid die of a plausible size (what a faint blob must be to be kept)."""
    lo, hi, solid = _outline_shape(contour)
    return min_side <= hi <= max_side and hi <= CLASSIC.square_aspect * lo and solid


def _extent(points: np.ndarray) -> float:
    """The longer side of the points' upright bounding box, in pixels (as ``connectedComponentsWithStats`` counts)."""
    return float((points.max(0) - points.min(0)).max() + 1)


def _may_be_dice(points: np.ndarray, ref_area: float, giant: float) -> bool:
    """Whether a piece of a frame may be dice: most of a die wide (not a strip of the frame), and not
    the frame itself (one thicker than the opening's disc survives it whole)."""
    (_, _), (rw, rh), _ = _rect(points)
    return min(rw, rh) >= CLASSIC.wall_piece_width * float(np.sqrt(ref_area)) and _extent(points) <= giant


def _rect(points: np.ndarray) -> tuple[tuple[float, float], tuple[float, float], float]:
    return cv2.minAreaRect(points.astype(np.int32))  # pixel coordinates: int32 is exact, and a quarter faster than float


def _split(points: np.ndarray, k: int) -> list[np.ndarray]:
    """Split one blob's pixels into ``k`` dice by k-means on their positions (when no clean cuts exist)."""
    crit = (cv2.TERM_CRITERIA_EPS + cv2.TERM_CRITERIA_MAX_ITER, 20, 0.5)
    cv2.setRNGSeed(12345)  # k-means starts from OpenCV's global generator: seed it so a frame always reads the same
    _, labels, _ = cv2.kmeans(points.astype(np.float32), k, None, crit, 3, cv2.KMEANS_PP_CENTERS)
    return [points[labels.ravel() == i] for i in range(k)]


def _orientation(points: np.ndarray) -> float:
    """The blob's edge direction modulo 90° (radians): touching dice lie square to each other, so
    the gradient angles of its silhouette, taken four-fold, agree on one square grid."""
    x0, y0 = points.min(0) - 2
    x1, y1 = points.max(0) + 2
    m = np.zeros((y1 - y0 + 1, x1 - x0 + 1), np.float32)
    m[points[:, 1] - y0, points[:, 0] - x0] = 1.0
    m = cv2.GaussianBlur(m, (0, 0), 1.0)
    gx = cv2.Sobel(m, cv2.CV_32F, 1, 0, ksize=3)
    gy = cv2.Sobel(m, cv2.CV_32F, 0, 1, ksize=3)
    mag = gx * gx + gy * gy
    a4 = 4.0 * np.arctan2(gy, gx)
    return float(np.arctan2((mag * np.sin(a4)).sum(), (mag * np.cos(a4)).sum()) / 4.0)


def _uv(points: np.ndarray, theta: float) -> np.ndarray:
    """Points in axes turned by ``theta`` (a die's own axes), shifted to start at 0."""
    c, s_ = np.cos(theta), np.sin(theta)
    p = points.astype(np.float32)
    uv = np.stack([p[:, 0] * c + p[:, 1] * s_, -p[:, 0] * s_ + p[:, 1] * c], 1)
    return uv - uv.min(0)


def _piece_score(points: np.ndarray, side: float, area: float) -> float:
    """How unlike one die a piece is (0: a full square of ``side`` holding ``area`` pixels), in its own axes."""
    if len(points) < 3:
        return 9.0
    (_, _), (eu, ev), _ = _rect(points)  # one die: its smallest rotated box is its own axes
    eu, ev = eu + 1, ev + 1
    return max(abs(eu / side - 1), abs(ev / side - 1), abs(len(points) / area - 1), 1.5 * max(0.0, 0.85 - len(points) / (eu * ev)))


def _best_cut(points: np.ndarray, theta: float, side: float, area: float) -> tuple[float, np.ndarray] | None:
    """The best die to cut off one end of a blob in axes ``theta``: a straight cut between 0.85 and
    1.25 sides from that end, at the seam (the thinnest line) unless a cut nearby gives a piece much
    more like one die. Returns (how unlike a die the piece is in these axes, piece mask).

    The four ways to cut (from either end, along either axis) are one row each of the same arrays:
    a few hundred points make every numpy call overhead, and this is the finder's busiest loop."""
    uv = _uv(points, theta)
    n = len(points)
    cuts = np.arange(round(CLASSIC.cut_nearest * side), round(CLASSIC.cut_farthest * side) + 2, dtype=np.float32)  # and one past the last, for its seam
    order_up = np.argsort(uv, axis=0, kind="stable")
    orders = np.empty((4, n), np.intp)
    along, across = np.empty((4, n), uv.dtype), np.empty((4, n), uv.dtype)
    for axis in (0, 1):
        o = order_up[:, axis]
        a, b = uv[o, axis], uv[o, 1 - axis]
        orders[2 * axis], along[2 * axis], across[2 * axis] = o, a, b
        orders[2 * axis + 1], along[2 * axis + 1], across[2 * axis + 1] = o[::-1], a[-1] - a[::-1], b[::-1]
    before = np.stack([np.searchsorted(row, cuts, side="left") for row in along])  # points before each cut
    counts, seam = before[:, :-1], np.diff(before, axis=1)  # seam: the points on the cut's own line
    ok = (counts > 2) & (counts < n)
    if not ok.any():
        return None
    last = np.clip(counts - 1, 0, n - 1)
    ext_along = np.take_along_axis(along, last, 1) + 1
    lo, hi = np.minimum.accumulate(across, axis=1), np.maximum.accumulate(across, axis=1)
    ext_across = np.take_along_axis(hi, last, 1) - np.take_along_axis(lo, last, 1) + 1
    cheap = np.maximum(np.maximum(np.abs(ext_along / side - 1), np.abs(ext_across / side - 1)), np.abs(counts / area - 1))
    cheap = np.where(ok, cheap, np.inf)
    # two guesses a way: the thinnest line (the seam between dice in line) and the cut whose piece is most like a die
    rows = np.arange(4)
    i = np.where(ok, seam, n + 1).argmin(axis=1)
    i = np.where(cheap[rows, i] > cheap.min(axis=1) + 0.1, cheap.argmin(axis=1), i)
    score = cheap[rows, i]
    r = int(score.argmin())
    take = np.zeros(n, bool)
    take[orders[r, :counts[r, i[r]]]] = True
    return float(score[r]), take


def _peel(points: np.ndarray, side: float, area: float, limit: int) -> tuple[list[np.ndarray], float]:
    """Cut dice one by one off a blob's ends. Each cut is tried in the blob's axes and again in the
    axes of the piece it gives (touching dice turn a little from one to the next).
    Returns index arrays and the worst piece's score."""
    idx = np.arange(len(points))
    pieces: list[np.ndarray] = []
    worst = 0.0
    while len(pieces) < limit - 1 and len(idx) >= 1.5 * area:
        rest = points[idx]
        best = _best_cut(rest, _orientation(rest), side, area)
        if best is None:
            break
        again = _best_cut(rest, np.radians(_rect(rest[best[1]])[2]), side, area) if best[0] > CLASSIC.recut_above else None
        if again is not None and again[0] < best[0]:
            best = again
        worst = max(worst, _piece_score(rest[best[1]], side, area))
        pieces.append(idx[best[1]])
        idx = idx[~best[1]]
    pieces.append(idx)
    return pieces, max(worst, _piece_score(points[idx], side, area))


def _cut_apart(points: np.ndarray, side: float | None, fallback: int = 0, limit: int = CLASSIC.most_dice_in_blob, smallest: float = 0.0) -> list[np.ndarray]:
    """Touching dice cut apart along straight lines square to their edges.

    Dice lying against each other share about one orientation; in those axes
    every die is a ``side``×``side`` square, so each cut is a straight line about
    one side from the blob's end, at the thinnest place (the seam). When the die
    size is unknown (every die in the frame touches another), the number of
    dice that explains the blob best is chosen. Falls back to k-means when no
    cuts give dice (``fallback`` dice when given). An unknown die size is only
    tried where a die fits: no smaller than ``smallest`` (what the finder would
    drop anyway), no wider than the blob is thick: each size tried is costly,
    so a speck or a strip is never peeled at all.
    """
    n = len(points)
    if side:
        sizes = [side]
    else:
        (_, _), (rw, rh), _ = _rect(points)
        sizes = [sd for sd in (float(np.sqrt(n / k)) for k in range(1, min(limit, 4) + 1)) if smallest <= sd <= 1.3 * min(rw, rh) + 1]
        if not sizes:
            return [points]
    best = None
    for sd in sizes:
        pieces, worst = _peel(points, sd, sd * sd, min(limit, int(n / (sd * sd) + 1.5)))
        score = worst + CLASSIC.cut_piece_cost * len(pieces)  # fewer dice when both explain the blob alike
        if best is None or score < best[0]:
            best = (score, pieces, worst)
        if worst < CLASSIC.cut_clean:
            break  # a clean cut into dice: more dice will not explain it better
    assert best is not None
    if best[2] > CLASSIC.cut_failed:
        k = fallback or (int(min(limit, max(2, round(n / (sizes[0] ** 2))))) if side else len(best[1]))
        return _split(points, k) if len(points) >= 4 * k else [points]
    return [points[i] for i in best[1]]


def _blob_mask(points: np.ndarray) -> tuple[np.ndarray, int, int]:
    """A blob's points as a 0/255 mask just big enough for them, and where its corner lies."""
    x0, y0 = points.min(0)
    x1, y1 = points.max(0)
    mask = np.zeros((y1 - y0 + 1, x1 - x0 + 1), np.uint8)
    mask[points[:, 1] - y0, points[:, 0] - x0] = 255
    return mask, int(x0), int(y0)


def _split_at_seams(points: np.ndarray, raw: np.ndarray, die_pixels: float | None = None) -> list[np.ndarray] | None:
    """Touching dice split where the frame itself shows the seams between them, or None.

    ``_clean`` closes small gaps so a die's marks do not break it up; it also
    closes the thin dark seam between two dice lying against each other, and
    then only their joint outline is left to cut by. Before closing, the
    seams are there: eroded by one pixel, the raw mask inside the blob falls
    apart into one core per die, and each pixel of the blob goes to the
    nearest core. None unless that gives two or more square pieces of about
    one size (``die_pixels`` each, when the frame's die size is known).
    """
    blob, x0, y0 = _blob_mask(points)
    cores = cv2.erode(cv2.bitwise_and(raw[y0:y0 + blob.shape[0], x0:x0 + blob.shape[1]], blob), np.ones((3, 3), np.uint8))
    n, labels, stats, _ = cv2.connectedComponentsWithStats(cores, connectivity=4)
    if n < 3:
        return None
    areas = stats[1:, cv2.CC_STAT_AREA]
    keep = [i + 1 for i, a in enumerate(areas) if a >= CLASSIC.seam_core_share * areas.max()]
    if len(keep) < 2:
        return None
    seeds = np.full(blob.shape, 255, np.uint8)
    core_of = np.zeros(blob.shape, np.int32)  # which kept core each seed pixel belongs to (1..)
    for k, i in enumerate(keep, 1):
        seeds[labels == i] = 0
        core_of[labels == i] = k
    _, nearest = cv2.distanceTransformWithLabels(seeds, cv2.DIST_L2, 3, labelType=cv2.DIST_LABEL_PIXEL)
    lookup = np.zeros(int(nearest.max()) + 1, np.int32)
    lookup[nearest[seeds == 0]] = core_of[seeds == 0]
    owner = np.where(blob > 0, lookup[nearest], 0)
    pieces = []
    for k in range(1, len(keep) + 1):
        ys, xs = np.nonzero(owner == k)
        piece = np.stack([xs + x0, ys + y0], 1)
        (_, _), (rw, rh), _ = _rect(piece)
        if max(rw, rh) > CLASSIC.seam_piece_aspect * max(1.0, min(rw, rh)) or (
                die_pixels and not CLASSIC.seam_piece_min * die_pixels <= len(piece) <= CLASSIC.seam_piece_max * die_pixels):
            return None
        pieces.append(piece)
    return pieces


def _refine(blob: tuple[np.ndarray, float], ref_area: float, reach: float = CLASSIC.refine_reach) -> list[tuple[np.ndarray, float]]:
    """A blob that is not one clean die, opened with a disc of ``reach`` die sides.

    What survives are die-sized cores; thin things glued to a die (the cup's
    shadow band, its rim, a glare's tail) fall away, and a ring or scribble with
    no die in it vanishes. A clean square blob is returned as it is. Beyond the
    blob's own mask counts as empty: OpenCV's default border kept any thin line
    along the mask's edge.
    """
    pts, hull_area = blob
    (_, _), (rw, rh), _ = _rect(pts)
    solid = len(pts) / hull_area
    if solid >= CLASSIC.clean_solidity and max(rw, rh) / max(1.0, min(rw, rh)) <= CLASSIC.clean_aspect and hull_area < CLASSIC.clean_area * ref_area:
        return [blob]
    side = float(np.sqrt(ref_area))
    mask, x0, y0 = _blob_mask(pts)
    k = max(3, int(side * reach)) | 1
    opened = cv2.morphologyEx(mask, cv2.MORPH_OPEN, cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (k, k)), borderType=cv2.BORDER_CONSTANT, borderValue=0)
    n, labels = cv2.connectedComponents(opened, connectivity=8)
    out = []
    for i in range(1, n):
        ys, xs = np.nonzero(labels == i)
        if len(xs) >= CLASSIC.refine_min_piece * ref_area:
            piece = np.stack([xs + x0, ys + y0], 1)
            out.append((piece, float(cv2.contourArea(cv2.convexHull(piece.astype(np.int32))))))
    return out


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
                pieces = _clear_blob_parts((blob.points, blob.hull_area), ref_area, ref_pixels, raw, min_side, giant)
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
    (_, _), (rw, rh), _ = _rect(pts)
    single = (max(rw, rh) <= max_side and max(rw, rh) / max(1.0, min(rw, rh)) < CLASSIC.single_aspect
              and len(pts) >= CLASSIC.single_fill * rw * rh)
    return _Blob(pts, hull_area, clear, single)


def _clear_blob_parts(blob: tuple[np.ndarray, float], ref_area: float | None, ref_pixels: float | None, raw: np.ndarray,
                      min_side: float, giant: float) -> list[list[np.ndarray]]:
    """A clear blob's pieces (``_refine``: thin things glued to dice opened off), each cut into its dice."""
    if ref_area:
        if _extent(blob[0]) <= giant:
            pieces = _refine(blob, ref_area)
        else:  # a dark frame or wall with dice against it: a wider disc leaves no stub of it on a die
            pieces = [p for p in _refine(blob, ref_area, CLASSIC.wall_reach) if _may_be_dice(p[0], ref_area, giant)]
    else:
        # no die size to refine by: drop rings and scribbles, and whatever is far bigger than any die
        pieces = [blob] if len(blob[0]) >= CLASSIC.no_size_fill * blob[1] and _extent(blob[0]) <= giant else []
    return [_cut_into_dice(pts, hull_area, ref_area, ref_pixels, raw, min_side) for pts, hull_area in pieces]


def _cut_into_dice(pts: np.ndarray, hull_area: float, ref_area: float | None, ref_pixels: float | None, raw: np.ndarray,
                   min_side: float) -> list[np.ndarray]:
    """A clear piece cut into the touching dice it holds (itself when it is one die)."""
    (_, _), (rw, rh), _ = _rect(pts)
    if ref_area and ref_pixels:
        ratio = hull_area / ref_area
        if ratio >= CLASSIC.touching_hull or len(pts) >= CLASSIC.touching_pixels * ref_pixels:  # touching dice: cut them apart at the die size the frame shows
            k = int(min(CLASSIC.most_dice_in_blob, max(2, round(len(pts) / ref_pixels))))  # when no cuts give dice: k-means, as many as its pixels hold
            return _split_at_seams(pts, raw, ref_pixels) or _cut_apart(pts, float(np.sqrt(ref_pixels)), fallback=k if len(pts) >= 4 * k else 1)
        if max(rw, rh) >= CLASSIC.pair_aspect * min(rw, rh) and min(rw, rh) >= CLASSIC.pair_min_width * np.sqrt(ref_pixels):
            # two smaller dice side by side (not a strip of the tray's rim): their own shape says where to cut
            return _split_at_seams(pts, raw) or _cut_apart(pts, None, smallest=min_side)
        return [pts]
    # no single die gives the size: the seams, else the blob's own shape, say how many dice touch
    return _split_at_seams(pts, raw) or (
        _cut_apart(pts, None, smallest=min_side) if max(rw, rh) / max(1.0, min(rw, rh)) >= CLASSIC.group_aspect or len(pts) < CLASSIC.group_fill * hull_area
        else [pts])


def _die_square(part: np.ndarray, parts: list[np.ndarray], scale: float, size: tuple[int, int], min_side: float,
               max_side: float) -> Candidate | None:
    """The rotated square around one die's pixels, in frame pixels, or None when the part is no die's size or a
    line (the tray's rim, a scratch, a shadow's edge). Flagged cut off at the working copy's edge, and
    misshapen when not square (a die cut out of a touching group, one of ``parts``, gets more slack)."""
    if len(part) < 3:
        return None
    (cx, cy), (rw, rh), angle = _rect(part)
    aspect = max(rw, rh) / max(1.0, min(rw, rh))
    if not min_side <= max(rw, rh) <= max_side or aspect > CLASSIC.line_aspect:
        return None
    x0, y0 = part.min(0)
    x1, y1 = part.max(0)
    cut = x0 <= 0 or y0 <= 0 or x1 >= size[0] - 1 or y1 >= size[1] - 1
    return Candidate(cx / scale, cy / scale, rw / scale, rh / scale, float(angle), cut,
                     aspect > (CLASSIC.misshapen_aspect_cut if len(parts) > 1 else CLASSIC.misshapen_aspect))
