"""Choosing among a frame's looks: which of the staged reader's readings of one frame stands.

The reader looks at a frame more than once where its first look is not sure: closer, farther, finer, around what
may be one die's marks, the whole photo as a person's crop, inside a square read as a one. Each rule here compares
readings (or a crop's read with a photo's) and says which one the table gets. They are functions of readings only,
no frame or model, so each is shown by its own examples; ``vision.pipeline.reader`` calls them in order.
"""

from __future__ import annotations

from companion.core.protocols import Proposal
from companion.core.reading import OK, DieReading, Reading
from vision.pipeline.decide import CONFIDENCE_MARGIN
from vision.pipeline.propose import INSIDE_MOST

#: A proposal of the finer look under this share of the side of a die read sure, lying on that die, is one of its marks.
MARK_SHARE = 0.6
#: ``a_small_die_reads_another_face``: a look's die of fewer pixels than this shows marks of a few pixels (a one's own
#: mark, a grain of the table), too few to outrank the whole photo's sure one; a die far off in a big photo is bigger.
FACE_OVER_WHOLE_MIN_SIDE = 48


def surer_answer(seen: int, confidence: float, photo: Reading, min_confidence: float) -> tuple[int, float]:
    """Of a crop's unsure face (``seen``, ``confidence``) and the ``photo`` reading of the same image as a photo of
    one die: the photo's die where it found one die, read surer; its confidence only where the reading is ok. An
    unsure photo reading (the die cut off by the image's edge, seen leaning with a side face in view, not sure) may
    change the face, never to a confidence at or above ``min_confidence``; where it reads the crop's face, the
    crop's confidence stays.

    >>> from companion.core.reading import UNCERTAIN, DieReading
    >>> def photo(status, *dice): return Reading(status, tuple(DieReading(s, s, c, (0, 0, 9, 9)) for s, c in dice))
    >>> surer_answer(2, 0.4, photo(OK, (5, 0.99)), 0.95)
    (5, 0.99)
    >>> surer_answer(2, 0.4, photo(UNCERTAIN, (5, 0.99)), 0.95)  # leaning: another face, not sure
    (5, 0.93)
    >>> surer_answer(5, 0.94, photo(UNCERTAIN, (5, 0.99)), 0.95)  # the same face: the crop's confidence stays
    (5, 0.94)
    >>> surer_answer(2, 0.8, photo(OK, (5, 0.7)), 0.95), surer_answer(2, 0.4, photo(UNCERTAIN, (5, 0.99), (3, 0.99)), 0.95)
    ((2, 0.8), (2, 0.4))
    """
    if len(photo.dice) != 1 or photo.dice[0].confidence <= confidence:
        return seen, confidence
    die = photo.dice[0]
    if photo.status == OK:
        return die.seen, die.confidence
    if die.seen != seen:
        return die.seen, min(die.confidence, round(min_confidence - CONFIDENCE_MARGIN, 6))
    return seen, confidence


def surest_first(reading: Reading, expected_dice: int) -> tuple[bool, int, int]:
    """The order in which the finer looks' readings are offered to ``takes_over``: sure ones first, then the one
    reading the most dice sure, then the one nearest the expected count. In a big photo of a crowded tray the look
    nearest the count may hold junk or dice split in two; dice read sure were seen at a size the classifier reads.

    >>> from companion.core.reading import UNCERTAIN, DieReading
    >>> def r(*conf): return Reading(UNCERTAIN, tuple(DieReading(2, 5, c, (9 * i, 0, 9, 9)) for i, c in enumerate(conf)), sure_at=0.95)
    >>> near, surer = r(.99, .5, .5, .5), r(.99, .99, .99)  # four dice expected
    >>> sorted([near, surer], key=lambda x: surest_first(x, 4)) == [surer, near]
    True
    """
    return reading.status != OK, -sure_count(reading), abs(len(reading.dice) - expected_dice)


def takes_over(found: Reading, reading: Reading, expected_dice: int) -> bool:
    """Whether a later look's reading ``found`` replaces ``reading``: when it is sure, or, knowing the dice the table
    plays with, when it comes nearer their count and has a die where ``reading`` read each of its sure ones (a few
    unsure finds never replace dice read sure; in place of unsure ones, they box more of the dice for the table).

    >>> from companion.core.reading import UNCERTAIN, DieReading
    >>> def r(status, *dice): return Reading(status, tuple(DieReading(2, 5, c, (x, 0, 9, 9)) for x, c in dice), sure_at=0.95)
    >>> takes_over(r(OK, (0, .99), (20, .99), (40, .99)), r(UNCERTAIN, (0, .99)), 3)
    True
    >>> takes_over(r(UNCERTAIN, (0, .6), (20, .99)), r(UNCERTAIN, (0, .99)), 3)  # the sure die is still there
    True
    >>> takes_over(r(UNCERTAIN, (50, .2), (70, .99), (90, .3)), r(UNCERTAIN, (0, .99), (20, .99)), 3)
    False
    >>> takes_over(r(UNCERTAIN, (50, .2), (70, .6), (90, .3)), r(UNCERTAIN, (0, .5)), 3)  # none sure before
    True
    >>> takes_over(r(UNCERTAIN, (0, .99), (20, .6)), r(UNCERTAIN, (0, .99)), 0)  # not knowing how many: sure only
    False
    """
    if found.status == OK:
        return True
    if not expected_dice:
        return False
    nearer = abs(len(found.dice) - expected_dice) < abs(len(reading.dice) - expected_dice)
    return nearer and all(any(same_place(d, e) for e in found.dice) for d in reading.dice if read_sure(reading, d))


def holds_a_sure_die(far: Reading, reading: Reading) -> bool:
    """Whether a die of the look from farther, ``far``, holds a die that ``reading`` read sure showing another face,
    of more than one mark: the first look then saw a whole die there, not one of a big die's marks (a mark alone in
    its crop reads as a die showing one), and the look from farther took the plain space around it for a die, the
    die for its mark. (The same face read whole from farther is the same die, its marks first boxed alone.)

    >>> from companion.core.reading import UNCERTAIN, DieReading
    >>> first = Reading(UNCERTAIN, (DieReading(3, 4, 0.999, (543, 607, 90, 90)),), sure_at=0.95)
    >>> holds_a_sure_die(Reading(OK, (DieReading(1, 6, 0.99, (134, 203, 969, 969)),)), first)  # the cup around it
    True
    >>> holds_a_sure_die(Reading(OK, (DieReading(3, 4, 0.99, (500, 560, 200, 200)),)), first)  # the die, whole
    False
    >>> marks = Reading(UNCERTAIN, (DieReading(1, 6, 0.99, (100, 100, 30, 30)), DieReading(1, 6, 0.99, (160, 160, 30, 30))), sure_at=0.95)
    >>> holds_a_sure_die(Reading(OK, (DieReading(2, 5, 0.99, (80, 80, 120, 120)),)), marks)  # a big two's marks
    False
    """
    inside = [d for d in reading.dice if read_sure(reading, d) and d.seen > 1]
    return any(d.seen != big.seen and a_mark_of(box_as_proposal(d), big) for big in far.dice for d in inside)


def surer_at_count(found: Reading, reading: Reading, expected_dice: int) -> bool:
    """Whether a look from farther, ``found``, holding the dice the table plays with as ``reading`` does, reads more
    of them sure: a die filling the frame, whose face the first look boxed only a part of (read unsure, or as
    another face), seen whole. Still uncertain where a die is (leaning, cut off by the frame's edge): only the face
    the table is asked to check changes.

    >>> from companion.core.reading import UNCERTAIN, DieReading
    >>> def r(*dice): return Reading(UNCERTAIN, tuple(DieReading(s, 7 - s, c, (0, 0, 9, 9)) for s, c in dice), sure_at=0.95)
    >>> surer_at_count(r((5, .98)), r((4, .79)), 1), surer_at_count(r((5, .8)), r((4, .79)), 1)
    (True, False)
    >>> surer_at_count(r((5, .98)), r((4, .99)), 1), surer_at_count(r((5, .98)), r((4, .5)), 0)  # not surer; count unknown
    (False, False)
    """
    if not expected_dice or not len(found.dice) == len(reading.dice) == expected_dice:
        return False
    return sure_count(found) > sure_count(reading)


def every_die_surer(first: Reading, closer: Reading, expected_dice: int) -> bool:
    """Whether the first look, ``first``, holds every die the table plays with where the closer look (``closer``)
    does not, and reads more of them sure: where small dice sent the detector closer, bigger dice beside them are
    seen closer as their marks, a die split in two or its marks boxed alone and read unsure, or as another face.
    (Holding as many dice, the closer look saw the same dice closer, the look small dice need.)

    >>> from companion.core.reading import UNCERTAIN, DieReading
    >>> def r(*conf): return Reading(UNCERTAIN, tuple(DieReading(2, 5, c, (20 * i, 0, 9, 9)) for i, c in enumerate(conf)), sure_at=0.95)
    >>> every_die_surer(r(.99, .99, .7), r(.99, .4, .4, .7), 3), every_die_surer(r(.99, .99), r(.99, .4, .7, .6), 3)
    (True, False)
    >>> every_die_surer(r(.99, .99, .7), r(.99, .4, .4), 3), every_die_surer(r(.99, .6, .7), r(.99, .99, .7, .1), 3)
    (False, False)
    >>> every_die_surer(r(.99, .99, .7), r(.99, .4, .4, .7), 0)  # not knowing how many
    False
    """
    holds_all = bool(expected_dice) and len(first.dice) == expected_dice != len(closer.dice)
    return holds_all and sure_count(first) > sure_count(closer)


def whole_dice_inside(found: Reading, expected_dice: int) -> bool:
    """Whether a finer look that kept the proposals lying on a die read sure (``found``) saw dice there, not that
    die's marks: it is sure, or it holds the dice the table plays with, most of them read sure; it holds two dice or
    more, not all showing one face, and fewer than half of them read as ones (a mark alone in its crop is a single
    dot, a few marks read alike; real dice inside what an earlier look took for one die, a tray seen from afar, show
    every face). Such a reading replaces the one with the big die, uncertain where it is.

    >>> from companion.core.reading import UNCERTAIN, DieReading
    >>> def r(status, *faces, c=.99): return Reading(status, tuple(DieReading(f, 7 - f, c, (20 * i, 0, 9, 9)) for i, f in enumerate(faces)), sure_at=0.95)
    >>> whole_dice_inside(r(OK, 1, 1, 2), 3), whole_dice_inside(r(OK, 1, 4, 6), 3), whole_dice_inside(r(UNCERTAIN, 3, 5, 1, 6, 2, 4), 6)
    (False, True, True)
    >>> whole_dice_inside(r(UNCERTAIN, 3, 5, 6), 4), whole_dice_inside(r(UNCERTAIN, 3, 5, 6), 0), whole_dice_inside(r(UNCERTAIN, 5, 3, c=.2), 2)
    (False, False, False)
    >>> whole_dice_inside(r(OK, 4), 1), whole_dice_inside(r(OK, 2, 2, 2), 3)  # one die, or marks read alike
    (False, False)
    """
    faces = [d.seen for d in found.dice]
    if len(faces) < 2 or len(set(faces)) == 1 or 2 * faces.count(1) >= len(faces):
        return False
    if found.status == OK:
        return True
    most_sure = 2 * sure_count(found) > len(found.dice)
    return expected_dice > 0 and len(found.dice) == expected_dice and most_sure


def a_mark_of(p: Proposal, die: DieReading, offset: tuple[int, int] = (0, 0)) -> bool:
    """Whether ``p`` (in the normalised frame, whose corner lies at ``offset`` in the frame) is much smaller than
    ``die`` and lies in its box (in the frame): one of its marks, as a finer look sees a big die. Asked of dice read
    sure only: a box the first look drew around a whole table photo holds real dice.

    >>> die = DieReading(5, 2, 0.99, (70, 70, 60, 60))
    >>> a_mark_of(Proposal(110, 95, 12, 0, 0.5), die), a_mark_of(Proposal(200, 95, 12, 0, 0.5), die)
    (True, False)
    >>> a_mark_of(Proposal(10, 95, 12, 0, 0.5), die, offset=(100, 0))  # the tray region's corner at x = 100
    True
    """
    x, y, w, h = die.box
    cx, cy = p.cx + offset[0], p.cy + offset[1]
    return p.side < MARK_SHARE * min(w, h) and abs(cx - x - w / 2) <= w / 2 and abs(cy - y - h / 2) <= h / 2


def a_small_die_reads_another_face(reading: Reading, square: Proposal) -> bool:
    """Whether the die ``reading`` reads surest shows another face than one and is small inside ``square`` (a whole
    photo read as a one), at most ``INSIDE_MOST`` of its side as a die seen inside a one is (``propose_inside``), and
    at least ``FACE_OVER_WHOLE_MIN_SIDE`` pixels.

    >>> from companion.core.reading import UNCERTAIN, DieReading
    >>> def r(*dice): return Reading(UNCERTAIN, tuple(DieReading(s, 7 - s, c, (0, 0, w, w)) for s, c, w in dice))
    >>> square = Proposal(100, 100, 170, 0.0, 1.0)
    >>> a_small_die_reads_another_face(r((5, 0.43, 60)), square), a_small_die_reads_another_face(r((5, 0.43, 150)), square)
    (True, False)
    >>> a_small_die_reads_another_face(r((5, 0.43, 20)), square)
    False
    >>> a_small_die_reads_another_face(r((1, 0.3, 60), (3, 0.2, 60)), square), a_small_die_reads_another_face(r(), square)
    (False, False)
    """
    if not reading.dice:
        return False
    surest = max(reading.dice, key=lambda d: d.confidence)
    return surest.seen != 1 and FACE_OVER_WHOLE_MIN_SIDE <= max(surest.box[2:]) <= INSIDE_MOST * square.side


def read_sure(reading: Reading, die: DieReading) -> bool:
    """Whether ``die`` of ``reading`` is read at or above the reading's sure line."""
    return reading.sure_at is not None and die.confidence >= reading.sure_at


def sure_count(reading: Reading) -> int:
    """How many dice of ``reading`` are read at or above its sure line (``_sure``)."""
    return sum(read_sure(reading, d) for d in reading.dice)


def box_as_proposal(die: DieReading) -> Proposal:
    """``die``'s box as a proposal (its centre and longer side; no angle, no score), in the frame's pixels."""
    x, y, w, h = die.box
    return Proposal(x + w / 2, y + h / 2, max(w, h), 0.0, 0.0)


def same_place(a: DieReading, b: DieReading) -> bool:
    """Whether two dice's boxes are centred within half the smaller box's side of each other."""
    (ax, ay, aw, ah), (bx, by, bw, bh) = a.box, b.box
    return abs(ax + aw / 2 - bx - bw / 2) <= min(aw, bw) / 2 and abs(ay + ah / 2 - by - bh / 2) <= min(ah, bh) / 2
