"""Stage 2, propose: where the dice are, from a ``Detector`` plug-in chosen by name in the settings.

Detectors register a factory under their name (``register_detector``), as
Frigate's detectors do; ``reader.detector`` picks one. Each answers a grey
frame with ``Proposal``s (centre, side, angle, score) in that frame's pixels.
A detector is asked for proposals a ``SCORE_MARGIN`` below its own threshold,
so the stages after it can tell a die that is clearly there from one whose
presence rests on a knife edge (``reconcile`` makes the latter a doubt).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Callable

import numpy as np

from companion.core.errors import SettingsError
from companion.core.protocols import Detector, Proposal
from vision.classifier import MARGIN
from vision.images import MIN_SIDE
from vision.pipeline.normalise import Normalised, colour_contrast

#: Proposals this far below the detector's score threshold are still returned, marked borderline.
SCORE_MARGIN = 0.1
#: The learned detector learns a die's side partly from real photos' axis-aligned boxes, which are up to
#: 1.41 times a turned die's side: its sides run large (median 1.11 times the true side on rendered frames
#: for the shipped model, docs/READING.md), so they are scaled by this before the stages that crop and compare sizes.
LEARNED_SIDE_SCALE = 0.9
#: ``around_marks``: a die's marks span about this share of its face (pips at a quarter of the face from its edges,
#: and their own size); the classifier's size search (0.7-1.5 times) settles the rest.
MARKS_SPAN = 0.8
#: ... each mark is at most this share of the die it would be a mark of (a die's pip is 0.15-0.35 of its face;
#: proposals this big beside the square around them overlap each other, and marks do not) ...
MARK_MAX_SHARE = 0.45
#: ... a six and a few look-alikes at most ...
MOST_MARKS = 12
#: ... the marks lie in a square (a die's face) to within this aspect ...
MARKS_ASPECT = 1.6
#: ... and the die they would be the marks of fills at least this share of the frame's short side: the case is a
#: die photographed close up, not a tray of small dice, whose spread over the tray is no die at all.
MARKS_DIE_SHARE = 0.35
#: ... or, where they lie in a line (a two or a three turned, its marks on the face's diagonal), the two outer marks'
#: centres lie this share of the face's side apart (corner pips about 0.27 of the side from its centre, each way) ...
DIAGONAL_MARKS_APART = 0.76
#: ... a three's middle mark within this share of the outer marks' distance from the point between them ...
MARKS_MIDDLE = 0.2
#: ... and the die they would be the marks of fits in the frame to within this share of its short side.
MARKS_DIE_FITS = 1.15
#: ``centred_die``: a die filling the frame, as a person's crop holds it, fills about this share of its short side.
CENTRED_SHARE = 0.85
#: ``propose_inside``: a die seen inside a square read as a one is at most this share of the square's side (a one's
#: mark or a die far off, not the square itself again).
INSIDE_MOST = 0.5


@dataclass(frozen=True)
class Proposer:
    """A loaded detector, answering a ``SCORE_MARGIN`` below ``sure_score``: proposals under it are borderline."""

    detector: Detector
    sure_score: float
    #: the detector's sides times this are the dice's sides
    side_scale: float = 1.0

    def borderline(self, proposal: Proposal) -> bool:
        """Under the detector's own threshold: there only because it was asked a margin lower."""
        return proposal.score < self.sure_score

    def weak(self, proposal: Proposal) -> bool:
        """Within the margin around the detector's threshold, on either side."""
        return proposal.score < self.sure_score + SCORE_MARGIN


_FACTORIES: dict[str, Callable[[Path | None], Proposer]] = {}


def register_detector(name: str, factory: Callable[[Path | None], Proposer]) -> None:
    """Make a detector choosable as ``reader.detector = name``; ``factory(model_path or None)`` loads it."""
    _FACTORIES[name] = factory


def detector_names() -> list[str]:
    _register_shipped()
    return sorted(_FACTORIES)


def load_detector(name: str, model: Path | None = None) -> Proposer:
    """The detector called ``name``, loaded and warmed up; ``SettingsError`` for an unknown name."""
    _register_shipped()
    if name not in _FACTORIES:
        raise SettingsError("reader.detector", None, f"must be one of {', '.join(sorted(_FACTORIES))}, not {name!r}")
    return _FACTORIES[name](model)


def propose(frame: Normalised, proposer: Proposer, die_side_px: float | None = None) -> list[Proposal]:
    """The detector's proposals for the normalised frame, in that frame's pixels, surest first."""
    hint = die_side_px / proposer.side_scale if die_side_px else None
    return _scaled(proposer, proposer.detector.propose(frame.grey, die_side_px=hint), proposer.side_scale)


def at_die_size(proposals: list[Proposal], die_side_px: float) -> list[Proposal]:
    """``proposals`` with the calibrated die side instead of the detector's own estimate.

    Under a flat tray at a fixed distance every flat die's face has the calibrated
    size, while the detector's side is an estimate some tenths off either way: cut at
    that estimate, a die is read from a corner of its face or with the tray around it,
    and compared with the calibration it looks leaning when it lies flat. A leaning
    die's outline is still measured, at the right size (``shape.footprint``).

    >>> at_die_size([Proposal(50, 50, 41, 10, 0.9)], 60)
    [Proposal(cx=50, cy=50, side=60, angle_deg=10, score=0.9)]
    """
    return [replace(p, side=die_side_px) for p in proposals]


def of_die_size(proposals: list[Proposal], die_side_px: float) -> list[Proposal]:
    """The ``proposals`` that can be one of the calibrated dice (``Proposal.of_die_size``), at that size
    (``at_die_size``): a look taken without the size, kept to what can be one of those dice.

    >>> of_die_size([Proposal(50, 50, 41, 10, 0.9), Proposal(90, 50, 12, 0, 0.8)], 60)
    [Proposal(cx=50, cy=50, side=60, angle_deg=10, score=0.9)]
    """
    return at_die_size([p for p in proposals if p.of_die_size(die_side_px)], die_side_px)


def same_places(a: list[Proposal], b: list[Proposal], reach: float = 0.25) -> bool:
    """Whether two lists of proposals put dice in the same places (each within ``reach`` of a side of one in the other):
    a second reading of the same places would only repeat the first.

    >>> same_places([Proposal(50, 50, 40, 0, 0.9)], [Proposal(52, 49, 40, 30, 0.8)]), same_places([Proposal(50, 50, 40, 0, 0.9)], [])
    (True, False)
    """
    if len(a) != len(b):
        return False
    return all(any(abs(p.cx - q.cx) <= reach * p.side and abs(p.cy - q.cy) <= reach * p.side for q in b) for p in a)


def propose_in_colour(frame: Normalised, proposer: Proposer, found: list[Proposal]) -> list[Proposal]:
    """The detector's proposals on ``colour_contrast`` of the frame, away from the dice ``found`` already: dice
    that differ from the table in colour more than in brightness (a red die on brown wood, a warm light),
    which the grey frame hides. Surest first."""
    if frame.bgr.ndim != 3:
        return []
    seen = propose(Normalised(frame.bgr, colour_contrast(frame.bgr), frame.offset, frame.whole_size), proposer)
    return [p for p in seen if not any(abs(p.cx - q.cx) <= 0.5 * max(p.side, q.side) and abs(p.cy - q.cy) <= 0.5 * max(p.side, q.side) for q in found)]


def propose_closer(frame: Normalised, proposer: Proposer, first: list[Proposal]) -> list[Proposal] | None:
    """A closer second look at the dice ``propose`` found without a die size, from a detector that can take
    one (``propose_closer``); None when it cannot or there is nothing to gain (the dice were not small)."""
    return _second_look(frame, proposer, first, "propose_closer")


def propose_farther(frame: Normalised, proposer: Proposer, first: list[Proposal], net_side: int | None = None) -> list[Proposal] | None:
    """A second look from farther at what ``propose`` found without a die size, from a detector that can
    take one (``propose_farther``; ``net_side``: how far, the frame's long side in the detector's pixels,
    its own default when None); None when it cannot or sees no big dice (a die filling the frame)."""
    return _second_look(frame, proposer, first, "propose_farther", **({} if net_side is None else {"net_side": net_side}))


def around_marks(frame: Normalised, proposals: list[Proposal], borderline: Callable[[Proposal], bool]) -> Proposal | None:
    """The one die whose marks ``proposals`` may be, or None: a die filling much of the frame, with big marks (a
    translucent casino die, a single big mark), is taken by the detector for several small dice even from farther,
    and each of them reads as nothing sure. The square around the proposals the detector was sure of, ``MARKS_SPAN``
    of a die's face, is that die, when they are few, small beside it, spread over a square, and it fills much of the
    frame. The reader reads it like any proposal and takes it only as it takes every later look (``takes_over``).

    >>> frame = Normalised(np.zeros((200, 200, 3), np.uint8), np.zeros((200, 200), np.uint8), (0, 0))
    >>> pips = [Proposal(x, y, 20, 0, 0.8) for x, y in ((60, 60), (140, 60), (100, 100), (60, 140), (140, 140))]
    >>> die = around_marks(frame, pips, lambda p: p.score < 0.3)
    >>> (die.cx, die.cy, die.side)
    (100.0, 100.0, 125.0)
    >>> overlapping = [Proposal(x, y, 60, 0, 0.8) for x, y in ((80, 80), (120, 80), (80, 120))]
    >>> around_marks(frame, pips[:1], lambda p: False), around_marks(frame, overlapping, lambda p: False)
    (None, None)
    >>> around_marks(frame, pips, lambda p: True), around_marks(Normalised(frame.bgr, np.zeros((800, 800), np.uint8), (0, 0)), pips, lambda p: False)
    (None, None)
    >>> around_marks(frame, [Proposal(10 + 18 * i, 100, 16, 0, 0.8) for i in range(10)], lambda p: False)  # a row of dice
    """
    marks = [p for p in proposals if not borderline(p)]
    if not 2 <= len(marks) <= MOST_MARKS:
        return None
    half = float(np.median([p.side for p in marks])) / 2
    x0, x1 = min(p.cx for p in marks) - half, max(p.cx for p in marks) + half
    y0, y1 = min(p.cy for p in marks) - half, max(p.cy for p in marks) + half
    width, height = x1 - x0, y1 - y0
    short = min(frame.grey.shape[:2])
    if max(width, height) <= MARKS_ASPECT * min(width, height):
        die = Proposal((x0 + x1) / 2, (y0 + y1) / 2, max(width, height) / MARKS_SPAN, 0.0, max(p.score for p in marks))
    else:
        die = _around_diagonal_marks(marks)
        if die is not None and die.side > MARKS_DIE_FITS * short:  # a line of marks longer than a die the frame holds
            return None
    if die is None or max(p.side for p in marks) > MARK_MAX_SHARE * die.side or die.side < MARKS_DIE_SHARE * short:
        return None
    return die


def _around_diagonal_marks(marks: list[Proposal]) -> Proposal | None:
    """The die whose face's diagonal ``marks`` lie on (a two or a three seen turned: the square around them is no
    square), or None where they are not two, or three with the middle one between the others. Its side follows from
    the outer marks' distance, its turn from their line's (the diagonal is 45 degrees off the face's sides).

    >>> three = [Proposal(100, 60, 14, 0, 0.8), Proposal(100, 100, 14, 0, 0.8), Proposal(100, 140, 14, 0, 0.8)]
    >>> die = _around_diagonal_marks(three)
    >>> (die.cx, die.cy, round(die.side), die.angle_deg)
    (100.0, 100.0, 105, 45.0)
    >>> _around_diagonal_marks([Proposal(100, 60, 14, 0, 0.8), Proposal(130, 100, 14, 0, 0.8), Proposal(100, 140, 14, 0, 0.8)])
    >>> _around_diagonal_marks(three + [Proposal(100, 120, 14, 0, 0.8)])  # four in a row: no face has them so
    """
    if len(marks) > 3:
        return None
    centres = np.array([(p.cx, p.cy) for p in marks], np.float64)
    gaps = np.linalg.norm(centres[:, None] - centres[None], axis=2)
    i, j = np.unravel_index(int(np.argmax(gaps)), gaps.shape)
    apart = float(gaps[i, j])
    if apart <= 0:
        return None
    middle = (centres[i] + centres[j]) / 2
    if float(np.linalg.norm(centres - middle, axis=1).min()) > MARKS_MIDDLE * apart and len(marks) == 3:
        return None
    along = (centres[j] - centres[i]) / apart
    cx, cy = middle
    angle = (float(np.degrees(np.arctan2(along[1], along[0]))) - 45.0) % 90.0
    return Proposal(float(cx), float(cy), apart / DIAGONAL_MARKS_APART, angle, max(p.score for p in marks))


def centred_die(frame: Normalised) -> Proposal:
    """The die a frame holds when the die fills it: the square ``CENTRED_SHARE`` of its short side at its centre. The
    die around a die's marks (``around_marks``) is read sure only where this square reads the same face: marks of a
    logo, or another face's marks showing through a translucent die, can make a square around them that is not
    the die.

    >>> frame = Normalised(np.zeros((100, 200, 3), np.uint8), np.zeros((100, 200), np.uint8), (0, 0))
    >>> centred_die(frame)
    Proposal(cx=100.0, cy=50.0, side=85.0, angle_deg=0.0, score=1.0)
    """
    h, w = frame.grey.shape[:2]
    return Proposal(w / 2, h / 2, CENTRED_SHARE * min(h, w), 0.0, 1.0)


def propose_inside(frame: Normalised, proposer: Proposer, square: Proposal) -> list[Proposal]:
    """The dice a detector that can look inside a square (``propose_inside``) sees in ``square`` (a die read as a one)
    and the margin the classifier's crop shows around it: at most ``INSIDE_MOST`` of its side, at least ``MIN_SIDE``
    pixels (a smaller one shows no face to read) and above the detector's own threshold, surest first; [] from a
    detector that cannot. A small die far off in a plain square (a big frame around a small photo, a table around a
    die) is read whole as a one's mark; looked at inside, it is a die.

    >>> frame = Normalised(np.zeros((100, 100, 3), np.uint8), np.full((100, 100), 90, np.uint8), (0, 0))
    >>> propose_inside(frame, Proposer(object(), 0.3), Proposal(50, 50, 60, 0, 0.9))
    []
    """
    region = replace(square, side=square.side * MARGIN)
    found = _other_look(frame, proposer, "propose_inside", region) or []
    return [p for p in found if MIN_SIDE <= p.side <= INSIDE_MOST * square.side and not proposer.borderline(p)]


def propose_finer(frame: Normalised, proposer: Proposer, net_side: int | None = None) -> list[Proposal] | None:
    """A finer look at the whole frame from a detector that can take one (``propose_finer``: small dice in a big
    frame; ``net_side``, one of its ``fine_net_sides``, or its first); None when it cannot or there is nothing to gain."""
    return _other_look(frame, proposer, "propose_finer", **({} if net_side is None else {"net_side": net_side}))


def _second_look(frame: Normalised, proposer: Proposer, first: list[Proposal], method: str, **options: int) -> list[Proposal] | None:
    return _other_look(frame, proposer, method, _scaled(proposer, first, 1 / proposer.side_scale), **options)


def _other_look(frame: Normalised, proposer: Proposer, method: str, *args: object, **options: int) -> list[Proposal] | None:
    """The detector's ``method`` (one of its looks besides ``propose``) on the grey frame, its sides scaled to the dice's;
    None when the detector has no such look or finds nothing to gain."""
    look = getattr(proposer.detector, method, None)
    found = None if look is None else look(frame.grey, *args, **options)
    return None if found is None else _scaled(proposer, found, proposer.side_scale)


def _scaled(proposer: Proposer, found: list[Proposal], factor: float) -> list[Proposal]:
    """``found`` with their sides times ``factor``, surest first."""
    scaled = [replace(p, side=p.side * factor) for p in found] if factor != 1.0 else list(found)
    return sorted(scaled, key=lambda p: -p.score)


def _register_shipped() -> None:
    if "learned" not in _FACTORIES:
        from vision.detector_learned import LearnedDetector

        def learned(model: Path | None) -> Proposer:
            detector = LearnedDetector(model)  # loaded and warmed up once; its own threshold travels in the file
            sure = detector.score_threshold
            detector.score_threshold = max(0.01, sure - SCORE_MARGIN)
            return Proposer(detector, sure, LEARNED_SIDE_SCALE)

        register_detector("learned", learned)
