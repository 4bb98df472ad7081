"""The finder's faint pass: pale dice on a pale tray, which differ only at their outline and marks.

A pale die is a ring of faint difference around a patch of its own colour,
with clear marks inside. The pass measures against a tray estimated without
the clear dice, keeps a gap around every clear blob (but not around a white
die's own marks), fills die-sized holes and open rings, and keeps each outline
that is one square die with marks inside and nothing clear around it; an
outline made oblong by the die's shadow gives the square under its marks.
Each such die is whole: it is never cut apart.
"""

from __future__ import annotations

import cv2
import numpy as np

from vision.classic_tunables import CLASSIC
from vision.finder_masks import difference


def faint_mask(small: np.ndarray, strong: np.ndarray) -> np.ndarray:
    """A 0/255 mask of what differs faintly from the tray (pale dice on a pale tray), apart from
    everything in ``strong`` (``clear_masks``' closed mask)."""
    return _faint_dice(difference(small, _tray_without(small, strong)), strong)


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


def _median(img: np.ndarray) -> float:
    """The median of a uint8 image from its histogram (a few times faster than ``np.median``)."""
    cum = np.cumsum(cv2.calcHist([img], [0], None, [256], [0, 256]).ravel())
    return float(np.searchsorted(cum, cum[-1] / 2))


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
