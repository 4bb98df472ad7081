"""Stage 4, classify: the face each crop shows, how sure the model is, and how close the runner-up came.

One look per die first, cut at the proposed size and ``WIDER_LOOK`` wider in
the same batch. A die not clearly sure at once, or whose two cuts read different
faces (the face then depends on where the detector drew its border), is looked
at again in its eight turns and mirrors, and the looks are averaged: a face counts the
same turned or mirrored, so where the model is unsure the looks disagree and
the mean falls, instead of one lucky look passing the threshold.

The second look also tries the die at several sizes around the proposed one
(``RELOOK_SPANS``), because a detector's side is an estimate: a square half
the die's size shows a corner of a face (a two read as a one), one twice its
size shows the tray around a small die. The size whose looks, averaged with
its neighbour's, read surest is kept; every answer kept is still a mean of
sixteen looks, so one lucky crop cannot pass the threshold alone. Another size
may settle a face the proposed size leaves open, but never overturn it for
sure: a crop cut inside a six shows its four corner marks, read as a sure four,
so a face that differs from the proposed size's is ``overturned`` and the
table confirms it (RULES.md R14). A one is never settled by a size tighter than
the proposed one: a tight square hides a face's corner marks, so a three, a five
or a dark die's two whose second mark is dim shows one mark there, surely. A one
read surest tighter is read again from the proposed and wider sizes
(``one_seen_wide``). A proposal the detector itself is unsure of is read at its
proposed size only.

A square far larger than a die makes up a one as surely: the whole die is its
mark. The reader looks inside a die read sure as a one with no other die beside
it to compare sizes with (the detector's ``propose_inside``) and reads the dice
it finds there (``read_inside``); one that reads another face makes the one that
face, never sure (``one_holding_a_die``). A die found there reading no face surely
was boxed from afar, loosely, and is looked inside once more (``a_die_seen_from_afar``).

A die read sure at the first cut whose wider cut reads the same face, but not
sure, is checked in the wider cut's eight turns and mirrors: where their mean
reads another face or falls under ``TURNED_BAR``, the die keeps its face with
the turns' probability of it, never sure. A dark die with bright marks can read
as one face at one turn and cut but not at the others. It is not sent to the
full second look: that also flags right dice whose sixteen looks come to just
under sure (docs/READING.md, "The first look's turned check").

A die whose body is as grey as the tray shows no outline of its own, only its
marks (``shape.shows_only_marks``), so nothing says where it ends, and the
detector's square may hold only part of it: a five's corner mark left out reads
as a sure four. Such a die is read again cut ``MARKS_ONLY_SPANS`` wider; where
either cut reads another face, it is ``overturned`` (``overturned_wider``).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np

from companion.core.protocols import Classifier, Proposal
from vision.classifier import CROP, MARGIN, NOT_A_DIE, FaceClassifier, cut_crop
from vision.images import CROP_MIN_SIDE, MIN_SIDE, check_frame, enlarged_to
from vision.pipeline.crop import crops

#: The second look's die sizes, as shares of the proposed side (a detector's side is an estimate);
#: neighbouring sizes are read together (docs/reading-log.md, "The size search" and "Other ways to choose among the
#: sizes", has what each range measured).
RELOOK_SPANS = (0.7, 0.85, 1.0, 1.15, 1.3, 1.5)
#: The first look also cuts each die this much wider: a face the two cuts read differently depends on where the
#: detector drew the die's border (a square inside a three shows two of its marks), so it is looked at again.
WIDER_LOOK = 1.15
#: A proposal both first cuts call "not a die" with at least this probability gets no second look: the first look
#: drops it already (``reconcile`` drops above 0.65), and turning and resizing a glare patch or the rim 48 times over
#: cost a read 20 ms where a die was never there.
SURELY_NOT_A_DIE = 0.95
#: The proposed size agrees with another size's face only when it favours that face by this much over any other
#: (a near tie at the proposed size could fall either way on another machine's floats).
AGREE_MARGIN = 0.05
#: A die read sure at the first cut with the wider cut unsure stays sure only where the wider cut's eight turns read
#: the same face at least this surely (docs/READING.md, "The first look's turned check").
TURNED_BAR = 0.71
#: A one read surest at a size tighter than the proposed one, whose proposed and wider sizes favour another face at
#: least this much, is read as that face; under it the one stays, never sure (docs/READING.md, "A one seen tight").
OTHER_FACE_OVER_ONE = 0.35
#: A die seen inside a square read as a one (``one_holding_a_die``) is a die, not the one's mark or a patch of the table,
#: where the classifier gives "not a die" less than this ...
INSIDE_A_DIE = 0.5
#: ... and reads its face, not a one, at least this surely (inside a real one, marks and specks read another face at
#: up to 0.6; docs/READING.md, "A one holding a die").
INSIDE_FACE = 0.7
#: An image given to ``classify_crop`` is cut at these shares of its short side (the die then fills that share
#: over ``MARGIN`` of the cut: 1.3 for a die filling the image, 0.6 for one filling under half of it);
#: neighbouring pairs are read together.
CROP_SPANS = (1.3, 1.2, 1.1, 1.0, 0.9, 0.8, 0.7, 0.6)
#: A die that shows only its marks (``overturned_wider``) is read again this much wider than its proposal: a box a
#: third short of the die, the most the detector's boxes of such dice fall short, is whole at the wider cut.
MARKS_ONLY_SPANS = (1.3, 1.5)


@dataclass(frozen=True)
class FaceRead:
    """What the classifier says of one crop: the face seen, its probability, the runner-up's, and "not a die"."""

    seen: int
    confidence: float
    runner_up: float
    not_a_die: float
    #: read at another size than the proposed one as another face than at the proposed size: never sure
    overturned: bool = False
    #: the first look's embeddings of the die's two cuts (proposed, ``WIDER_LOOK``) side by side, where the classifier
    #: gives embeddings: the leaning and number cues embed those same cuts, so they take them from here
    #: (``reconcile.flag_by_looks``)
    first_cuts: np.ndarray | None = field(default=None, compare=False, repr=False)
    #: the first look's two cuts themselves (2×CROP×CROP×3 BGR, proposed and ``WIDER_LOOK``): the turned check reads the
    #: wider one again, and the second opinion both with its own model, so they take them from here
    #: (``vision.second_opinion``)
    first_crops: np.ndarray | None = field(default=None, compare=False, repr=False)
    #: the share of the die's proposed side it was read at, where that is not the side itself: ``classify_crop``
    #: finds the die of a loose crop at a smaller size than the crop's, and a second look at the die (the second
    #: opinion) cuts it there
    span: float = field(default=1.0, compare=False, repr=False)

    @classmethod
    def from_probabilities(cls, p: np.ndarray, overturned: bool = False, first_cuts: np.ndarray | None = None,
                           span: float = 1.0, first_crops: np.ndarray | None = None) -> "FaceRead":
        faces = p[1:]
        order = np.argsort(-faces, kind="stable")
        return cls(int(order[0]) + 1, float(faces[order[0]]), float(faces[order[1]]), float(p[NOT_A_DIE]), overturned, first_cuts,
                   first_crops, span)

    def read_again(self, p: np.ndarray, overturned: bool = False) -> "FaceRead":
        """The face the probabilities ``p`` read of the same cut die, keeping this read's first look (its cuts and
        their embeddings, which the cues and the second opinion take from it)."""
        return FaceRead.from_probabilities(p, overturned, self.first_cuts, first_crops=self.first_crops)


def classify(classifier: Classifier, bgr: np.ndarray, proposals: list[Proposal], relook_below: float,
             weak: list[bool] | None = None) -> list[FaceRead]:
    """One ``FaceRead`` per proposal; those under ``relook_below`` at one look are read again, turned, at several sizes
    (``weak`` ones, whose presence the detector is unsure of, at their proposed size only: a size search would
    find the size at which a coin or a shadow looks most like a die)."""
    if not proposals:
        return []
    weak = weak or [False] * len(proposals)
    reads, wider = first_look(classifier, bgr, proposals)
    again = [i for i, r in enumerate(reads) if (r.confidence < relook_below or int(wider[i][1:].argmax()) + 1 != r.seen)
             and min(r.not_a_die, float(wider[i][NOT_A_DIE])) < SURELY_NOT_A_DIE]
    if not isinstance(classifier, FaceClassifier):
        return reads
    relooked = set(again)
    unsure_wider = [i for i, r in enumerate(reads) if i not in relooked and r.confidence >= relook_below > wider[i][1:].max()]
    if unsure_wider:
        turned = classifier.probabilities_turned(np.array([reads[i].first_crops[1] for i in unsure_wider]))  # the first look's wider cut
        for i, p in zip(unsure_wider, turned):
            reads[i] = checked_by_turns(reads[i], p)
    if again:
        sized = [i for i in again if not weak[i]]
        if sized:
            surest, as_proposed = surest_size(classifier, bgr, [proposals[i] for i in sized])
            for i, p, q in zip(sized, surest, as_proposed):
                reads[i] = reads[i].read_again(p, not agrees(q, int(p[1:].argmax()) + 1))
        plain = [i for i in again if weak[i]]
        if plain:
            for i, p in zip(plain, classifier.probabilities_turned(crops(bgr, [proposals[i] for i in plain]))):
                reads[i] = reads[i].read_again(p)
    return reads


def first_look(classifier: Classifier, bgr: np.ndarray, proposals: list[Proposal]) -> tuple[list[FaceRead], np.ndarray]:
    """Each proposal read once at its proposed size (a ``FaceRead``, with its two cuts, and their embeddings where the
    classifier gives them), and the N×7 probabilities of the cut ``WIDER_LOOK`` wider; both cuts in one batch.

    >>> reads, wider = first_look(FaceClassifier(), np.full((120, 120, 3), 90, np.uint8), [Proposal(60, 60, 30, 0, 0.9)])
    >>> len(reads), wider.shape, reads[0].first_cuts is None, reads[0].first_crops.shape
    (1, (1, 7), True, (2, 40, 40, 3))
    """
    n = len(proposals)
    cut = np.concatenate([crops(bgr, proposals), crops(bgr, proposals, WIDER_LOOK)])
    both_cuts = [cut[[i, n + i]] for i in range(n)]
    with_embedding = getattr(classifier, "probabilities_and_embedding", None)
    if with_embedding is None:
        both = classifier.probabilities(cut)
        return [FaceRead.from_probabilities(p, first_crops=both_cuts[i]) for i, p in enumerate(both[:n])], both[n:]
    both, embedded = with_embedding(cut)
    reads = [FaceRead.from_probabilities(p, first_cuts=np.concatenate([embedded[i], embedded[n + i]]), first_crops=both_cuts[i])
             for i, p in enumerate(both[:n])]
    return reads, both[n:]


def overturned_wider(classifier: Classifier, bgr: np.ndarray, proposals: list[Proposal], faces: list[FaceRead]) -> list[FaceRead]:
    """``faces``, each whose die (``proposals``, the same order) reads another face cut at either of
    ``MARKS_ONLY_SPANS`` of its side (the mean of its eight turns and mirrors) ``overturned``, so never sure: the
    proposed square may hold only part of the die, and the wider cut holds the rest (RULES.md R14). Only the face
    matters, not how sure the wider cut is: it also holds the tray, a neighbour's edge, and reads less surely.

    >>> frame = np.full((160, 160, 3), 90, np.uint8)
    >>> [f.overturned for f in overturned_wider(FaceClassifier(), frame, [Proposal(80, 80, 30, 0, 0.9)], [FaceRead(6, 0.99, 0.0, 0.0)])]
    [True]
    """
    if not proposals or not isinstance(classifier, FaceClassifier):
        return list(faces)
    n = len(proposals)
    looks = classifier.probabilities_turned(np.concatenate([crops(bgr, proposals, span) for span in MARKS_ONLY_SPANS]))
    wider_faces = looks[:, 1:].argmax(axis=1).reshape(len(MARKS_ONLY_SPANS), n) + 1
    return [replace(f, overturned=True) if any(int(w) != f.seen for w in wider_faces[:, i]) else f for i, f in enumerate(faces)]


def checked_by_turns(read: FaceRead, turned: np.ndarray) -> FaceRead:
    """``read`` as it stands where the turned probabilities ``turned`` favour its face at ``TURNED_BAR`` or more;
    else its face with their probability of it, so never sure (the face offered to the table is the first look's).

    >>> first = FaceRead(3, 0.99, 0.01, 0.0)
    >>> checked_by_turns(first, np.array([0, 0, 0, .9, .1, 0, 0])) is first
    True
    >>> checked_by_turns(first, np.array([0, 0, 0, .4, 0, 0, .6]))
    FaceRead(seen=3, confidence=0.4, runner_up=0.6, not_a_die=0.0, overturned=False)
    """
    face = read.seen
    if int(turned[1:].argmax()) + 1 == face and turned[face] >= TURNED_BAR:
        return read
    return replace(read, confidence=float(turned[face]), runner_up=float(np.delete(turned[1:], face - 1).max()))


def agrees(p: np.ndarray, face: int) -> bool:
    """Whether the probabilities ``p`` (not a die, faces 1-6) favour ``face`` over every other face by ``AGREE_MARGIN``.

    >>> agrees(np.array([0, .1, .1, .1, .6, .0, .1]), 4), agrees(np.array([0, 0, 0, 0, .47, 0, .53]), 4)
    (True, False)
    """
    others = np.delete(p[1:], face - 1)
    return bool(p[face] >= others.max() + AGREE_MARGIN)


def surest_size(classifier: FaceClassifier, bgr: np.ndarray, proposals: list[Proposal]) -> tuple[np.ndarray, np.ndarray]:
    """Two N×7 probability arrays: per proposal, the mean over eight turns of the two neighbouring ``RELOOK_SPANS``
    that reads surest, and the same at the proposed size (spans 1.0 and the next).

    >>> frame = np.full((120, 120, 3), 90, np.uint8)
    >>> [p.shape for p in surest_size(FaceClassifier(), frame, [Proposal(60, 60, 30, 0, 0.9)])]
    [(1, 7), (1, 7)]
    """
    cut = np.concatenate([crops(bgr, proposals, span) for span in RELOOK_SPANS])
    pairs, surest = _surest_pair(classifier.probabilities_turned(cut).reshape(len(RELOOK_SPANS), len(proposals), -1))
    return one_seen_wide(pairs, surest, RELOOK_SPANS.index(1.0))


def one_seen_wide(pairs: np.ndarray, surest: np.ndarray, at: int) -> tuple[np.ndarray, np.ndarray]:
    """From ``_surest_pair``'s pairs ((S-1)×N×7, sizes in order, pair ``at`` the proposed size and the next) and its
    surest pair per die: the pair each die's face is read from, and the pair that face must agree with to be sure
    (``agrees``; the proposed size's, as a rule).

    A one whose surest pair is tighter than the proposed size is read from the proposed and wider pairs instead:
    their surest, where it also reads a one (then its confidence counts) or another face at ``OTHER_FACE_OVER_ONE`` or
    more (then that face, agreeing or not with the proposed size as any other); else the one stays, checked against
    the wider pairs, which favour another face, so it is never sure.

    >>> tight, proposed, wider = [0, .98, .01, 0, 0, 0, 0], [0, .5, .05, .4, 0, 0, .05], [0, .3, 0, .6, 0, 0, .1]
    >>> read, check = one_seen_wide(np.array([[tight], [proposed], [wider]]), np.array([tight]), 1)
    >>> int(read[0][1:].argmax()) + 1, float(read[0][3]), agrees(check[0], 3)
    (3, 0.6, False)
    >>> faint = [0, .2, .25, .3, 0, 0, .25]
    >>> read, check = one_seen_wide(np.array([[tight], [faint], [faint]]), np.array([tight]), 1)
    >>> int(read[0][1:].argmax()) + 1, agrees(check[0], 1)
    (1, False)
    """
    read, check = surest.copy(), pairs[at].copy()
    wide = _surest_of(pairs[at:])[1]
    for i in np.flatnonzero((surest[:, 1:].argmax(axis=1) == 0) & (_surest_of(pairs)[0] < at)):
        if int(wide[i, 1:].argmax()) == 0 or wide[i, 1:].max() >= OTHER_FACE_OVER_ONE:
            read[i] = wide[i]
        else:
            check[i] = wide[i]
    return read, check


def read_inside(classifier: Classifier, bgr: np.ndarray, inside: list[Proposal], relook_below: float
                ) -> tuple[list[Proposal], list[FaceRead]]:
    """The dice seen inside a square read as a one (``propose.propose_inside``, surest first) that may show another
    face, and their reads: each is read once at its proposed size (a one's marks and the specks around it are many,
    and a full read of each would cost a read of a frame of three dice), and those read as a die showing another
    face are read as any proposal (``classify``), in the same order.

    >>> read_inside(FaceClassifier(), np.full((120, 120, 3), 90, np.uint8), [Proposal(60, 60, 30, 0, 0.9)], 0.97)
    ([], [])
    """
    if not inside:
        return [], []
    once = [FaceRead.from_probabilities(p) for p in classifier.probabilities(crops(bgr, inside))]
    maybe = [p for p, r in zip(inside, once) if r.seen != 1 and r.not_a_die < INSIDE_A_DIE]
    return (maybe, classify(classifier, bgr, maybe, relook_below)) if maybe else ([], [])


def a_die_seen_from_afar(inside: list[FaceRead]) -> int | None:
    """Which of the reads of the dice seen inside a square read as a one (``read_inside``, surest first) is a die
    (``INSIDE_A_DIE``) whose face is read neither a one nor surely another (under ``INSIDE_FACE``), where
    ``one_holding_a_die`` found none read surely: the first such, or None. Inside a big square the detector sees a
    small die from as far as it saw the square, and its box may be twice the die: looked at inside once more, its
    face shows.

    >>> a_die_seen_from_afar([FaceRead(1, 0.6, 0.2, 0.1), FaceRead(3, 0.3, 0.2, 0.03)])
    1
    >>> a_die_seen_from_afar([FaceRead(3, 0.3, 0.2, 0.6)]) is None  # more likely no die
    True
    """
    for i, read in enumerate(inside):
        if read.seen != 1 and read.confidence < INSIDE_FACE and read.not_a_die < INSIDE_A_DIE:
            return i
    return None


def one_holding_a_die(one: FaceRead, inside: list[FaceRead]) -> FaceRead:
    """``one``, the read of a square as a die showing one, given the reads of the dice the detector sees inside that
    square (``propose.propose_inside``, surest first): where one of them reads a die (``INSIDE_A_DIE``) showing
    another face (``INSIDE_FACE``), the square's one was that die seen from afar, its mark: that die's face,
    ``overturned`` (never sure; the table confirms, RULES.md R14). A one's own mark, seen inside, reads as a one or as
    no die, and a speck as nothing sure: ``one`` stands.

    >>> one = FaceRead(1, 0.98, 0.01, 0.0)
    >>> one_holding_a_die(one, [FaceRead(1, 0.6, 0.2, 0.3), FaceRead(4, 0.99, 0.0, 0.0)])
    FaceRead(seen=4, confidence=0.99, runner_up=0.0, not_a_die=0.0, overturned=True)
    >>> one_holding_a_die(one, [FaceRead(1, 0.9, 0.05, 0.0), FaceRead(3, 0.6, 0.2, 0.1), FaceRead(3, 0.9, 0.0, 0.6)]) is one
    True
    """
    for read in inside:
        if read.seen != 1 and read.confidence >= INSIDE_FACE and read.not_a_die < INSIDE_A_DIE:
            return replace(read, overturned=True, first_cuts=one.first_cuts, first_crops=one.first_crops)
    return one


def _surest_pair(per_size: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """From S×N×7 probabilities (S sizes in order, N dice): the (S-1)×N×7 means of neighbouring sizes, and the
    N×7 pair that reads surest for each die."""
    pairs = _neighbour_pairs(per_size)
    return pairs, _surest_of(pairs)[1]


def _neighbour_pairs(per_size: np.ndarray) -> np.ndarray:
    """The (S-1)×N×7 means of neighbouring sizes' probabilities in S×N×7 (sizes in order)."""
    return (per_size[:-1] + per_size[1:]) / 2


def _surest_of(pairs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Of P×N×7 pairs: per die, the index of the pair whose best face is surest (the first on a tie) and that pair."""
    index = pairs[:, :, 1:].max(axis=2).argmax(axis=0)
    return index, pairs[index, np.arange(pairs.shape[1])]


def readable_crop(image: object) -> np.ndarray:
    """``image`` as a crop of one die is read: a usable BGR frame (``check_frame``) at least ``CROP_MIN_SIDE`` a side,
    enlarged to a frame's ``MIN_SIDE`` where smaller (a die of a few pixels is still read); else ``ImageError``."""
    return enlarged_to(check_frame(image, "the crop", CROP_MIN_SIDE), MIN_SIDE)


def classify_crop(classifier: FaceClassifier, image: np.ndarray) -> FaceRead:
    """The face of one image holding one die roughly centred (45-100 % of its short side): the die is read at
    the sizes ``CROP_SPANS`` in its eight turns, and the pair of neighbouring sizes whose sixteen looks read
    surest is kept (a person's crop says little of the die's size: tight, loose, with a side face showing). The read's
    ``span`` is the smaller size of that pair, as a share of the die filling the crop.

    >>> r = classify_crop(FaceClassifier(), np.full((64, 64, 3), 128, np.uint8))
    >>> 1 <= r.seen <= 6 and 0 <= r.confidence <= 1 and r.span in CROP_SPANS
    True
    """
    img = readable_crop(image)
    h, w = img.shape[:2]
    side = min(h, w)
    cut = np.array([cut_crop(img, w / 2, h / 2, side * s / MARGIN) for s in CROP_SPANS], np.uint8).reshape(-1, CROP, CROP, 3)
    index, surest = _surest_of(_neighbour_pairs(classifier.probabilities_turned(cut)[:, None, :]))
    return FaceRead.from_probabilities(surest[0], span=CROP_SPANS[int(index[0]) + 1])
