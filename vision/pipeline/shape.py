"""A die's footprint in the frame: is it the square of a die lying flat, or the longer shape of one leaning?

The detector proposes a square for every die, so a die leaning on the cup's
wall (RULES.md R14: the referee must not trust it) looks to it like any other.
Seen from below, a die tilted by 20-45 degrees shows its tilted face and one
side face: an outline about 1.1-1.4 times as long as it is wide, where a flat
die's is square. This stage measures that outline: the pixels around the
proposal that differ from the patch's own border (Otsu's cut on the
difference), the blob under the die's centre, and its tightest rotated box.

In tray mode the outline is what differs from the calibrated empty tray
instead (``empty``): the tray, the room and the glare there are the same, so
the die's outline is cut cleanly even where it lies on glare or the cup's rim; crumbs fallen on the tray since
then, joined to a die's outline, are taken off before its shape is judged (``_without_crumbs``).

A blob much bigger than one die, or one reaching well out of the die's
proposed square, is touching dice, glare or the cup's rim joined to the die:
its shape says nothing about the die, so it is not judged; nor is a blob far
smaller than the die, a mark of a die whose body is as grey as the tray. The learned
detector often boxes only a leaning die's lit face, so its side face reaches
out of the square too and such an outline is not judged either: one way a
leaning die is still trusted (docs/reading-log.md, "Leaning dice still trusted
without the empty tray", has the figures; letting outlines reach further out
doubted as many flat dice as leaning ones).
Everything here is integer image work up to the box's sides (with a lens known, the outline's points are
straightened in float64 and kept as float32 first), so this machine and the Pi's arm64 CPU measure the same outline.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import cv2
import numpy as np

from companion.core.protocols import Proposal
from vision.pipeline.lens import Lens

#: The patch measured reaches this many die sides from the centre (room for a leaning die's side face).
REACH = 1.1
#: ``die_sides``: a die's side is an outline's that is at least this share of the reader's box and at most its inverse.
OUTLINE_SHARE = 0.5
#: ``calibrate --dice`` and tray mode's size check: the dice's sides may differ this much from their median (more:
#: touching or leaning dice, or a blob that is no die, and the measure is not taken).
SIDE_AGREEMENT = 0.15
#: An outline longer than this times its width is a die leaning on something (seen from below, through the tray).
LEANING_ASPECT = 1.07
#: A blob bigger than this many dice' areas is joined to something else (touching dice, the rim): not judged.
JOINED_AREA = 2.0
#: A blob smaller than this many dice' areas is not the die's outline but one of its marks: a die whose body is as
#: grey as the tray behind it (a teal or mid-blue die on the grey tray) shows no outline of its own, only its marks,
#: and a mark's shape says nothing of how the die lies: not judged. A die's own outline, flat or leaning, covers at
#: least about two thirds of its box (docs/reading-log.md, "A die as grey as the tray").
MARK_AREA = 0.4
#: An outline with more than this share of its pixels beyond ``SQUARE_REACH`` of the die's side from its centre
#: (along the proposal's turned axes) has something joined to the die: not judged.
JOINED_OUTSIDE = 0.25
SQUARE_REACH = 0.6
#: The die's blob is the one under its centre, or where the centre pixel is background (a dark mark, a
#: glint), the commonest within this share of its side around the centre.
CENTRE_SHARE = 0.25
#: With the empty tray: a pixel is the die's where it differs from the empty tray by more than this (grey levels).
EMPTY_DIFFERS = 25
#: ... and the outline touches another die when any of it lies within this share of a side of that die's centre
#: (along its turned axes): then the outline may be both dice, and the square must hold it as without the empty tray.
TOUCH_REACH = 0.55
#: Dice joined in one outline against the empty tray with more than this many die areas each: one of them leans.
JOINED_EXCESS = 1.085
#: Dice whose centres all lie at least this many die sides apart share no outline but through something bridging
#: them (a leaning die's side face reaches under one side out of its square): each is judged by its own outline
#: (``footprint``), and the frame-wide outline is not cut.
JOIN_REACH = 2.5
#: ``outline_side`` cuts the patch this many sides around the box's centre: a box a third too small still holds the die.
MEASURE_REACH = 1.5
#: Gaps under this many pixels in the die's outline (its marks, a glint) are closed before the blob is taken.
CLOSE_PX = 5
#: Against the empty tray, an outline long enough to be a leaning die is measured again without what is narrower
#: than this share of the die's side (``_without_crumbs``): crumbs and dust fallen beside the die since calibrate.
#: Each piece so taken off is a crumb only where it is at most ``CRUMB_REACH`` of a side long (a side face seen at
#: its edges only is as long as the die), and the outline left must be square by ``CRUMB_MARGIN`` under
#: ``LEANING_ASPECT``; else the die stays doubted.
CRUMB_SHARE = 0.25
CRUMB_REACH = 0.3
CRUMB_MARGIN = 0.02


@dataclass(frozen=True)
class Footprint:
    """The outline under a proposed die: its long side over its short side, its area in die areas, and the
    share of it outside the die's proposed square."""

    aspect: float
    area: float
    outside: float = 0.0
    #: cut against the calibrated empty tray and touching no other die's square: nothing else differs from the
    #: empty tray, so an outline reaching out of the square is the die's own side face, not glare or the rim
    against_empty: bool = False

    @property
    def only_marks(self) -> bool:
        """The blob is one of the die's marks, not its outline (``MARK_AREA``): its body is as grey as the tray."""
        return self.area < MARK_AREA

    @property
    def leaning(self) -> bool:
        """The outline of a die leaning on something, not of one lying flat (and not joined to another blob), seen from
        below. From above an outline tells nothing of the kind (``reconcile.flag_leaning``); nor does a mark's shape."""
        return (self.aspect > LEANING_ASPECT and MARK_AREA <= self.area < JOINED_AREA
                and (self.against_empty or self.outside <= JOINED_OUTSIDE))


def footprint(grey: np.ndarray, p: Proposal, others: list[Proposal] = (), empty: np.ndarray | None = None,
              lens: Lens | None = None) -> Footprint | None:
    """The outline under ``p`` in ``grey`` (uint8), or None where none can be told from the background or where it
    runs into one of the ``others`` (touching dice: one blob, whose shape says nothing of either). Where only a mark
    of the die is told (``Footprint.only_marks``), its shape is not judged.
    ``empty``: the calibrated empty tray, the same size as ``grey``: the outline is what differs from it.
    ``lens``: the camera's bend (``vision.pipeline.lens``): the outline's long and short sides are measured where its
    points lie straightened, so a flat die near the frame's edge, squeezed by a wide lens, is square again.

    >>> grey = np.full((200, 200), 60, np.uint8)
    >>> grey[80:120, 80:120] = 220  # a flat die, 40 px
    >>> f = footprint(grey, Proposal(100, 100, 40, 0, 0.9)); round(f.aspect, 2), f.leaning
    (1.0, False)
    >>> grey[80:120, 120:132] = 160  # and a side face showing: the die leans
    >>> footprint(grey, Proposal(100, 100, 40, 0, 0.9)).leaning
    True
    """
    cut = _outline(grey, p, empty, REACH)
    if cut is None:
        return None
    labels, blob, x0, y0 = cut
    x1, y1 = x0 + labels.shape[1], y0 + labels.shape[0]
    against_empty = empty is not None and empty.shape == grey.shape
    for o in others:
        ox, oy = int(round(o.cx)) - x0, int(round(o.cy)) - y0
        if 0 <= ox < labels.shape[1] and 0 <= oy < labels.shape[0] and labels[oy, ox] == blob:
            return None
    pixels = (labels == blob).astype(np.uint8)
    points = cv2.findNonZero(pixels)
    area = len(points) / max(1.0, p.side * p.side)
    if area < MARK_AREA:
        return Footprint(1.0, area)  # one of the die's marks: its body is not told from the tray, its shape not judged
    aspect = _aspect(pixels, lens, (x0, y0))
    if aspect is None:
        return None
    near = [o for o in others if _may_reach((x0, y0, x1, y1), o, TOUCH_REACH)]
    clean = against_empty and not any(_outside(points.reshape(-1, 2), o, x0, y0, TOUCH_REACH) < 1.0 for o in near)
    if clean and aspect > LEANING_ASPECT:  # long: the die's own shape, or crumbs fallen against it since calibrate?
        kept = _without_crumbs(pixels, p.side, (int(round(p.cx)) - x0, int(round(p.cy)) - y0))
        square = _aspect(kept, lens, (x0, y0)) if kept is not None else None
        if square is not None and square < LEANING_ASPECT - CRUMB_MARGIN:
            aspect = square
    return Footprint(aspect, area, _outside(points.reshape(-1, 2), p, x0, y0), clean)


def _box_sides(pixels: np.ndarray, lens: Lens | None = None, corner: tuple[int, int] = (0, 0)) -> tuple[float, float] | None:
    """The sides of the tightest rotated box around the blob ``pixels`` (0/1 uint8, not empty), through its edge
    pixels' centres; None where it is under a pixel wide. With ``lens``, the edge pixels straightened first (the
    patch's ``corner`` lies there in the picture the lens is given for)."""
    outline, _ = cv2.findContours(pixels, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_NONE)
    points = np.concatenate(outline)  # the outline's rectangle is all the points' (same hull)
    if lens is not None:
        points = lens.straightened(points.reshape(-1, 2) + corner)
    (_, _), (a, b), _ = cv2.minAreaRect(points)
    return (a, b) if min(a, b) >= 1 else None


def _aspect(pixels: np.ndarray, lens: Lens | None = None, corner: tuple[int, int] = (0, 0)) -> float | None:
    """The long side over the short side of ``_box_sides``; None where it is under a pixel wide."""
    sides = _box_sides(pixels, lens, corner)
    return max(sides) / min(sides) if sides is not None else None


def _without_crumbs(pixels: np.ndarray, side: float, centre: tuple[int, int]) -> np.ndarray | None:
    """The blob ``pixels`` (0/1 uint8) without the crumbs stuck to it: opened by a disc ``CRUMB_SHARE`` of the die's
    ``side`` across, the part left under the die's ``centre``, where every piece that took off is a crumb (under
    ``CRUMB_REACH`` of a side long); else None (the outline stands as cut).

    A crumb or a speck of dust fallen on the tray beside the die is narrower than the disc and short. A leaning die's
    side face as grey as the tray differs from it at its edges only: thin too, but as long as the die, so it is never
    taken for crumbs (nor is a long scratch, a doubt the table settles)."""
    across = max(3, int(CRUMB_SHARE * side) | 1)
    opened = cv2.morphologyEx(pixels, cv2.MORPH_OPEN, cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (across, across)))
    _, labels = cv2.connectedComponents(opened)
    blob = _blob_under_centre(labels, centre[0], centre[1], max(1, int(CENTRE_SHARE * side)))  # inside: ``_outline``
    if not blob:
        return None
    kept = (labels == blob).astype(np.uint8)
    _, _, pieces, _ = cv2.connectedComponentsWithStats(pixels - kept)
    longest = int(pieces[1:, cv2.CC_STAT_WIDTH:cv2.CC_STAT_HEIGHT + 1].max()) if len(pieces) > 1 else 0
    return kept if longest <= CRUMB_REACH * side else None


def shows_only_marks(grey: np.ndarray, p: Proposal, empty: np.ndarray | None = None) -> bool:
    """Whether all of the die under ``p`` that ``footprint``'s cut tells from the background is one of its marks
    (``Footprint.only_marks``): its body as grey as the tray, so nothing shows where it ends. ``reconcile`` takes
    this from the footprint it judged already where it has one; this is for the dice it has none of.

    >>> grey = np.full((200, 200), 90, np.uint8)
    >>> grey[96:104, 92:110] = 20  # a mark; the die's body is the tray's grey
    >>> shows_only_marks(grey, Proposal(100, 100, 40, 0, 0.9))
    True
    >>> grey[80:120, 80:120] = 200; shows_only_marks(grey, Proposal(100, 100, 40, 0, 0.9))
    False
    """
    shape = footprint(grey, p, (), empty)
    return shape is not None and shape.only_marks


def outline_side(grey: np.ndarray, p: Proposal, empty: np.ndarray | None = None, lens: Lens | None = None) -> float | None:
    """The side of the die under ``p`` from its outline (the square root of its tightest rotated box's area), cut as
    ``footprint`` cuts it but within ``MEASURE_REACH`` sides of the centre, so a box a third off the die's size
    still holds all of it; None where no outline is told or it reaches the patch's edge (joined to something).
    ``calibrate --dice`` measures the dice so: the detector's box is some tenths off either way. With ``lens``, the
    outline straightened: the side a die shows at the frame's centre, wherever it lies.

    >>> grey = np.full((200, 200), 60, np.uint8)
    >>> grey[80:120, 80:120] = 220  # a flat die, 40 px, boxed a quarter too small
    >>> round(outline_side(grey, Proposal(100, 100, 30, 0, 0.9)))
    40
    >>> grey[:, 100:] = 220  # the die joined to a bright half of the frame
    >>> outline_side(grey, Proposal(100, 100, 30, 0, 0.9)) is None
    True
    """
    cut = _outline(grey, p, empty, MEASURE_REACH)
    if cut is None:
        return None
    labels, blob, x0, y0 = cut
    pixels = (labels == blob).astype(np.uint8)
    ys, xs = np.nonzero(pixels)
    if xs.min() == 0 or ys.min() == 0 or xs.max() == pixels.shape[1] - 1 or ys.max() == pixels.shape[0] - 1:
        return None
    sides = _box_sides(pixels, lens, (x0, y0))
    return math.sqrt((sides[0] + 1) * (sides[1] + 1)) if sides is not None else None  # + 1: to the edge pixels' outer sides


def _outline(grey: np.ndarray, p: Proposal, empty: np.ndarray | None, reach: float
             ) -> tuple[np.ndarray, int, int, int] | None:
    """The patch ``reach`` sides around ``p`` cut into blobs (what differs from the empty tray where it is given,
    else Otsu's cut on the difference from the patch's own border), and the blob under the die's centre: the labels,
    that blob's label, and the patch's corner (x0, y0). None where the patch is too small or no blob is there."""
    h, w = grey.shape[:2]
    half = int(reach * p.side)
    cx, cy = int(round(p.cx)), int(round(p.cy))
    x0, y0, x1, y1 = max(0, cx - half), max(0, cy - half), min(w, cx + half + 1), min(h, cy + half + 1)
    if x1 - x0 < 8 or y1 - y0 < 8 or not (x0 <= cx < x1 and y0 <= cy < y1):
        return None
    if empty is not None and empty.shape == grey.shape:
        mask = _differs_from_empty(grey[y0:y1, x0:x1], empty[y0:y1, x0:x1])
    else:
        patch = grey[y0:y1, x0:x1].astype(np.int16)
        border = np.concatenate([patch[0], patch[-1], patch[:, 0], patch[:, -1]])
        diff = np.abs(patch - int(np.median(border))).astype(np.uint8)
        _, mask = cv2.threshold(diff, 0, 255, cv2.THRESH_BINARY + cv2.THRESH_OTSU)
    mask = cv2.morphologyEx(mask, cv2.MORPH_CLOSE, np.ones((CLOSE_PX, CLOSE_PX), np.uint8))
    _, labels = cv2.connectedComponents(mask)
    blob = _blob_under_centre(labels, cx - x0, cy - y0, max(1, int(CENTRE_SHARE * p.side)))
    return (labels, blob, x0, y0) if blob else None


def joined_excess(grey: np.ndarray, empty: np.ndarray, dice: list[Proposal], die_side: float, lens: Lens | None = None) -> list[bool]:
    """For each die, whether it lies in one outline (against the empty tray) with other dice whose area is more than
    ``JOINED_EXCESS`` die areas for each die in it: flat dice pushed together fill about one die area each; a leaning
    die's side face, or something else lying against them, adds to it. Its shape cannot be judged (``footprint``
    gives up on joined outlines), but its size can. With ``lens``, the outline's area is taken straightened (as
    ``die_side``, measured so, is: ``outline_side``)."""
    out = [False] * len(dice)
    if empty is None or empty.shape != grey.shape or len(dice) < 2 or die_side <= 0:
        return out
    if all(math.hypot(a.cx - b.cx, a.cy - b.cy) >= JOIN_REACH * die_side for i, a in enumerate(dice) for b in dice[i + 1:]):
        return out  # no two dice near enough to share an outline: the frame-wide cut (about 2 ms) would only say so
    mask = cv2.morphologyEx(_differs_from_empty(grey, empty), cv2.MORPH_CLOSE, np.ones((CLOSE_PX, CLOSE_PX), np.uint8))
    _, labels = cv2.connectedComponents(mask)  # its areas are counted below for the few outlines under dice only (fast)
    h, w = labels.shape
    reach = max(1, int(CENTRE_SHARE * die_side))
    under = [_blob_under_centre(labels, min(w - 1, max(0, int(round(d.cx)))), min(h - 1, max(0, int(round(d.cy)))), reach) for d in dice]
    areas: dict[int, int] = {}
    for i, label in enumerate(under):
        members = sum(u == label for u in under)
        if label and members >= 2:
            area = areas.setdefault(label, _straightened_area(labels == label, lens))
            out[i] = area / (die_side * die_side) / members > JOINED_EXCESS
    return out


def _straightened_area(blob: np.ndarray, lens: Lens | None) -> float:
    """The pixels of ``blob`` (bool), each counted as the area it covers where a lens without bend would show it
    (``lens`` None: one each)."""
    if lens is None:
        return float(np.count_nonzero(blob))
    ys, xs = np.nonzero(blob)
    return float(lens.area_scale(xs, ys).sum())


def _differs_from_empty(grey: np.ndarray, empty: np.ndarray) -> np.ndarray:
    """255 where ``grey`` differs from the ``empty`` tray by more than ``EMPTY_DIFFERS`` grey levels, else 0."""
    return cv2.threshold(cv2.absdiff(grey, empty), EMPTY_DIFFERS, 255, cv2.THRESH_BINARY)[1]


def _blob_under_centre(labels: np.ndarray, x: int, y: int, reach: int) -> int:
    """The label under (x, y), or the commonest non-zero label within ``reach`` of it (0: none)."""
    if labels[y, x]:
        return int(labels[y, x])
    window = labels[max(0, y - reach):y + reach + 1, max(0, x - reach):x + reach + 1]
    found, counts = np.unique(window[window > 0], return_counts=True)
    return int(found[counts.argmax()]) if len(found) else 0


def _may_reach(patch: tuple[int, int, int, int], p: Proposal, reach_share: float) -> bool:
    """Whether ``p``'s square of ``reach_share`` sides from its centre, turned any way, can reach into ``patch``
    (x0, y0, x1, y1): a die farther off has none of the patch's points near it (``_outside`` is then 1).

    >>> _may_reach((0, 0, 50, 50), Proposal(70, 25, 30, 0, 0.9), 0.55), _may_reach((0, 0, 50, 50), Proposal(200, 25, 30, 0, 0.9), 0.55)
    (True, False)
    """
    x0, y0, x1, y1 = patch
    dx, dy = max(x0 - p.cx, 0.0, p.cx - x1), max(y0 - p.cy, 0.0, p.cy - y1)
    return math.hypot(dx, dy) <= reach_share * p.side * math.sqrt(2) + 1.0


def _outside(points: np.ndarray, p: Proposal, x0: int, y0: int, reach_share: float = SQUARE_REACH) -> float:
    """The share of ``points`` (patch x, y) further than ``reach_share`` sides from ``p``'s centre along its turned axes."""
    t = np.radians(p.angle_deg)
    dx, dy = points[:, 0] + x0 - p.cx, points[:, 1] + y0 - p.cy
    u, v = dx * np.cos(t) + dy * np.sin(t), dy * np.cos(t) - dx * np.sin(t)
    reach = reach_share * p.side
    return float(np.mean((np.abs(u) > reach) | (np.abs(v) > reach)))


def die_sides(grey: np.ndarray, boxes: list[tuple[int, int, int, int]], empty: np.ndarray | None = None,
              found: list | None = None, lens: Lens | None = None) -> list[float]:
    """The read dice's sides in pixels, each die measured by its outline in two ways: cut as ``footprint`` cuts one
    (``outline_side``, against the empty tray's photo where ``calibrate`` stored one) and by the classic
    finder (``found``: its outlines whose centre lies in the die's box, the biggest). A measure counts only between
    ``OUTLINE_SHARE`` of the reader's box and its inverse: the box is some tenths off either way (a one with a big
    mark is boxed at about 0.6 of the die), a mark alone is smaller and an outline joined to glare bigger. Each way
    misses some dice (a face as grey as the tray leaves only its marks to the first; the second boxes the marks of
    real dice of other looks), so the way that measures every die with the sides agreeing best is kept (on a tie,
    as for one die, the outline); where neither measures every die, each die's biggest measure, or its box's side.
    With ``lens``, both ways measure straightened: the side each die would show at the frame's centre.

    >>> grey = np.full((200, 300), 60, np.uint8); grey[80:120, 80:120] = 220; grey[80:120, 180:220] = 220  # 40 px
    >>> [round(s) for s in die_sides(grey, [(83, 83, 34, 34), (183, 83, 34, 34)])]
    [40, 40]
    >>> lost = np.full((200, 300), 60, np.uint8); lost[96:104, 96:104] = 220  # a die as grey as the tray: its mark
    >>> [round(s) for s in die_sides(lost, [(83, 83, 34, 34)])]
    [34]
    """
    ways = []
    for way in ("outline", "finder"):
        sides = []
        for x, y, w, h in boxes:
            box = max(w, h)
            if way == "outline":
                measures = [outline_side(grey, Proposal(x + w / 2, y + h / 2, box, 0.0, 0.0), empty, lens)]
            else:
                measures = [c.side * (math.sqrt(lens.area_scale(c.cx, c.cy)) if lens is not None else 1.0)
                            for c in found or () if x <= c.cx <= x + w and y <= c.cy <= y + h]
            fit = [m for m in measures if m is not None and OUTLINE_SHARE <= m / box <= 1 / OUTLINE_SHARE]
            sides.append(max(fit) if fit else None)
        ways.append(sides)
    whole = [sides for sides in ways if sides and all(s is not None for s in sides)]
    if whole:
        return min(whole, key=_spread)
    return [max((s for s in per_die if s is not None), default=float(max(box[2:]))) for per_die, box in zip(zip(*ways), boxes)]


def sides_agree(sides: list[float]) -> bool:
    """Whether ``sides`` measure dice of one size: each within ``SIDE_AGREEMENT`` of their median, as ``calibrate
    --dice`` asks of the dice it measures and tray mode of the dice it measures against the calibrated side (two
    touching dice measured as one blob do not agree). No sides measure nothing, so they do not agree.

    >>> sides_agree([40, 42, 38]), sides_agree([40, 41, 80]), sides_agree([])
    (True, False, False)
    """
    return bool(sides) and _spread(sides) <= SIDE_AGREEMENT


def _spread(sides: list[float]) -> float:
    """How far the farthest of ``sides`` lies from their median, as a share of it."""
    median = float(np.median(sides))
    return max(abs(s / median - 1) for s in sides)
