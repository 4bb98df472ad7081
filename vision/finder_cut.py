"""The finder's blobs made into dice: thin things opened off, touching dice cut apart.

A clear blob that is not one clean die is opened with a disc most of a die
wide (``_refine``); one far longer than any group of dice (a dark frame, a
box's wall) with a wider one, keeping only pieces that may be dice. A piece
too big for one die is split where the mask before closing shows the seams
between dice (``_split_at_seams``), else cut along straight lines in the
dice's own axes (``_cut_apart``), with k-means as the fallback.
"""

from __future__ import annotations

import cv2
import numpy as np

from vision.classic_tunables import CLASSIC


def clear_blob_parts(blob: tuple[np.ndarray, float], ref_area: float | None, ref_pixels: float | None, raw: np.ndarray,
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
    (_, _), (rw, rh), _ = min_rect(pts)
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


def _refine(blob: tuple[np.ndarray, float], ref_area: float, reach: float = CLASSIC.refine_reach) -> list[tuple[np.ndarray, float]]:
    """A blob that is not one clean die, opened with a disc of ``reach`` die sides.

    What survives are die-sized cores; thin things glued to a die (the cup's
    shadow band, its rim, a glare's tail) fall away, and a ring or scribble with
    no die in it vanishes. A clean square blob is returned as it is. Beyond the
    blob's own mask counts as empty: OpenCV's default border kept any thin line
    along the mask's edge.
    """
    pts, hull_area = blob
    (_, _), (rw, rh), _ = min_rect(pts)
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


def _may_be_dice(points: np.ndarray, ref_area: float, giant: float) -> bool:
    """Whether a piece of a frame may be dice: most of a die wide (not a strip of the frame), and not
    the frame itself (one thicker than the opening's disc survives it whole)."""
    (_, _), (rw, rh), _ = min_rect(points)
    return min(rw, rh) >= CLASSIC.wall_piece_width * float(np.sqrt(ref_area)) and _extent(points) <= giant


def _extent(points: np.ndarray) -> float:
    """The longer side of the points' upright bounding box, in pixels (as ``connectedComponentsWithStats`` counts)."""
    return float((points.max(0) - points.min(0)).max() + 1)


def min_rect(points: np.ndarray) -> tuple[tuple[float, float], tuple[float, float], float]:
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
    (_, _), (eu, ev), _ = min_rect(points)  # one die: its smallest rotated box is its own axes
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
        again = _best_cut(rest, np.radians(min_rect(rest[best[1]])[2]), side, area) if best[0] > CLASSIC.recut_above else None
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
        (_, _), (rw, rh), _ = min_rect(points)
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
        (_, _), (rw, rh), _ = min_rect(piece)
        if max(rw, rh) > CLASSIC.seam_piece_aspect * max(1.0, min(rw, rh)) or (
                die_pixels and not CLASSIC.seam_piece_min * die_pixels <= len(piece) <= CLASSIC.seam_piece_max * die_pixels):
            return None
        pieces.append(piece)
    return pieces
