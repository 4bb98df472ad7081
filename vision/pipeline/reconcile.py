"""Stage 5, reconcile: which proposals are the dice, and what about each makes the reading doubtful.

Dice cannot overlap, are all about one size, lie flat inside the tray and are
never "not a die". A proposal the classifier calls not a die is dropped; one
whose presence or absence rests on a score near a threshold (the detector's,
or the not-a-die cut) is kept as a doubt, since a missing or extra die must
make the reading uncertain, never be guessed.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass, field

import cv2
import numpy as np

from companion.core.protocols import Proposal
from vision.leaning_cue import CUE_SPANS, LeaningCue
from vision.linear_cue import embedded_at_spans
from vision.number_cue import CUE_SPANS as NUMBER_SPANS, DOUBT as MARKS, NumberCue
from vision.pipeline.classify import WIDER_LOOK, FaceRead, overturned_wider
from vision.pipeline.lens import Lens
from vision.pipeline.shape import footprint, joined_excess, shows_only_marks

#: A crop whose "not a die" probability is above this is not a die.
NOT_A_DIE_ABOVE = 0.5
#: ... and within this of that cut it could be either: a doubt.
NOT_A_DIE_MARGIN = 0.15
#: Two proposals whose centres are nearer than this share of the larger side are one die.
SAME_DIE = 0.6
#: A crop whose best face is below this is unreadable: with a weak detection too, nothing is there.
UNREADABLE = 0.5
#: A die whose side differs from the others' median (or the calibrated size) by more than this share is suspect.
SIZE_TOLERANCE = 0.3
#: A die whose square reaches further than this share of its side past the frame's edge is cut off.
CUT_OFF = 0.1
#: A proposal whose patch differs from the calibrated empty tray by less than this (mean grey levels) is the tray itself ...
EMPTY_TRAY_SAME = 6.0
#: ... and by less than this, a doubt (a faint die, or a scratch that caught the light).
EMPTY_TRAY_DOUBT = 12.0


@dataclass(frozen=True)
class Die:
    """One die kept: where the detector put it, what the classifier read, and why it alone is doubtful."""

    proposal: Proposal
    face: FaceRead
    doubts: tuple[str, ...]
    #: only its marks are told from the tray (``shape.Footprint.only_marks``), as ``flag_leaning`` found it; None
    #: where its outline was not cut (from above, or doubted as leaning already): ``read_wider_where_only_marks`` cuts it
    only_marks: bool | None = field(default=None, compare=False)


def reconcile(proposals: list[Proposal], faces: list[FaceRead], frame_size: tuple[int, int], *, borderline: list[bool],
              die_side_px: float | None = None, tray_change: list[float] | None = None, weak: list[bool] | None = None) -> list[Die]:
    """The dice among the proposals (surest first in, left to right out), each with its doubts.

    >>> p = [Proposal(50, 50, 30, 0, 0.9), Proposal(52, 51, 30, 0, 0.5), Proposal(150, 50, 30, 0, 0.9)]
    >>> f = [FaceRead(3, 0.99, 0.01, 0.0), FaceRead(3, 0.9, 0.1, 0.0), FaceRead(5, 0.99, 0.0, 0.0)]
    >>> [(d.face.seen, d.doubts) for d in reconcile(p, f, (200, 100), borderline=[False] * 3)]
    [(3, ()), (5, ())]
    """
    kept: list[tuple[Proposal, FaceRead, list[str]]] = []
    changes = tray_change if tray_change is not None else [math.inf] * len(proposals)
    faint = weak if weak is not None else borderline
    for prop, face, edge, change, thin in zip(proposals, faces, borderline, changes, faint):
        if any(_same_die(prop, k) for k, _, _ in kept):
            continue  # the surer proposal of this die is already kept
        if not shows_a_change(change):
            continue  # the calibrated empty tray looks just like this: nothing lies there
        doubts = ["low_confidence"] if change < EMPTY_TRAY_DOUBT else []
        if face.not_a_die > NOT_A_DIE_ABOVE + NOT_A_DIE_MARGIN:
            continue
        if edge and face.not_a_die > NOT_A_DIE_ABOVE - NOT_A_DIE_MARGIN:
            continue  # a faint proposal that does not look like a die either: nothing there
        if thin and face.confidence < UNREADABLE:
            continue  # neither the detector nor the classifier is sure a die is there (the cup's footprint, a shadow)
        if (face.not_a_die > NOT_A_DIE_ABOVE - NOT_A_DIE_MARGIN or edge) and not doubts:
            doubts.append("low_confidence")
        if _cut_off(prop, frame_size):
            doubts.append("cut_off")
        kept.append((prop, face, doubts))
    sides = [p.side for p, _, _ in kept]
    reference = die_side_px or (statistics.median(sides) if len(sides) >= 2 else None)
    dice = []
    for prop, face, doubts in kept:
        if reference and abs(prop.side / reference - 1) > SIZE_TOLERANCE:
            doubts.append("leaning")
        dice.append(Die(prop, face, tuple(doubts)))
    return sorted(dice, key=lambda d: (d.proposal.cx, d.proposal.cy))


def flag_leaning(dice: list[Die], grey: np.ndarray, camera_view: str = "below", empty: np.ndarray | None = None,
                 lens: Lens | None = None, die_side: float | None = None) -> list[Die]:
    """The dice, each whose outline is a leaning die's (``shape.footprint``; against the calibrated ``empty``
    tray where there is one; measured straightened where the camera's ``lens`` bends the picture) doubted as leaning
    (RULES.md R14), and where ``empty`` is known, the dice joined in an outline too big for them (``shape.joined_excess``:
    for a die's area, the dice's median side, or through a lens the calibrated ``die_side``, which ``calibrate --dice``
    measures straightened, where it is known).

    Only a camera below, looking up square through the tray, sees a flat die's outline as a square. From above (a
    photo of dice on a table, ``read --as-seen``) a camera at a slant shows every die's side faces and its shadow, so
    a flat die's outline is as long as a leaning one's: there the outline is not judged, and the leaning cue
    (``flag_leaning_by_look``), which reads how the die itself looks, is the check (docs/READING.md, "The leaning
    cue").
    """
    out = []
    side = _die_side(dice, lens, die_side)
    crowded = joined_excess(grey, empty, [d.proposal for d in dice], side, lens) if empty is not None else [False] * len(dice)
    for d, too_big in zip(dice, crowded):
        if "leaning" not in d.doubts:
            shape = footprint(grey, d.proposal, [o.proposal for o in dice if o is not d], empty, lens) if camera_view == "below" else None
            marks = None if camera_view != "below" else shape is not None and shape.only_marks
            d = Die(d.proposal, d.face, d.doubts + (("leaning",) if too_big or (shape is not None and shape.leaning) else ()), marks)
        out.append(d)
    return out


def _die_side(dice: list[Die], lens: Lens | None, calibrated: float | None) -> float:
    """A die's side for ``joined_excess``: the dice's median side as proposed; through a ``lens``, the ``calibrated``
    side (measured straightened) where it is known, else the median of the sides straightened where each die lies
    (the detector's square is a die's size where it lies in the bent picture)."""
    if not dice:
        return 0.0
    if lens is None:
        return statistics.median([d.proposal.side for d in dice])
    if calibrated:
        return calibrated
    return statistics.median([d.proposal.side * math.sqrt(lens.area_scale(d.proposal.cx, d.proposal.cy)) for d in dice])


def read_wider_where_only_marks(dice: list[Die], grey: np.ndarray, bgr: np.ndarray, classifier: object,
                                empty: np.ndarray | None = None) -> list[Die]:
    """The dice, each whose body cannot be told from the tray (``shape.shows_only_marks``; against the calibrated
    ``empty`` tray where there is one) read again wider (``classify.overturned_wider``): nothing shows where such a
    die ends, so its square may hold only part of it. Its outline is not judged either (``footprint``), so a leaning
    one is left to the leaning cue."""
    only = [i for i, d in enumerate(dice) if not d.face.overturned
            and (d.only_marks if d.only_marks is not None else shows_only_marks(grey, d.proposal, empty))]
    if not only:
        return dice
    out = list(dice)
    for i, face in zip(only, overturned_wider(classifier, bgr, [dice[i].proposal for i in only], [dice[i].face for i in only])):
        out[i] = Die(out[i].proposal, face, out[i].doubts, True)
    return out


def flag_by_looks(dice: list[Die], bgr: np.ndarray, classifier: object, leaning: LeaningCue | None,
                  numbers: NumberCue | None) -> list[Die]:
    """``flag_leaning_by_look`` with the cue ``leaning``, then ``flag_numbers_by_look`` with ``numbers`` (a cue that is
    None is not read), every cut either reads embedded in one network run: both take their first two cuts from the
    first look (``FaceRead.first_cuts``), and a crop's embedding does not depend on the batch it is in."""
    embed = getattr(classifier, "logits_and_embedding", None)
    if embed is None or not dice or (leaning is None and numbers is None):
        return dice
    spans = tuple(dict.fromkeys((CUE_SPANS if leaning is not None else ()) + (NUMBER_SPANS if numbers is not None else ())))
    known = [d.face.first_cuts for d in dice] if spans[:2] == (1.0, WIDER_LOOK) else None
    looks = np.split(embedded_at_spans(embed, bgr, [d.proposal for d in dice], spans, known), len(spans), axis=1)

    def at(wanted: tuple[float, ...]) -> np.ndarray:
        return np.concatenate([looks[spans.index(span)] for span in wanted], axis=1)

    if leaning is not None:
        dice = flag_leaning_by_look(dice, leaning, at(CUE_SPANS))
    return flag_numbers_by_look(dice, bgr, classifier, numbers, at(NUMBER_SPANS)) if numbers is not None else dice


def flag_leaning_by_look(dice: list[Die], cue: LeaningCue, features: np.ndarray) -> list[Die]:
    """The dice, each that the leaning ``cue`` reads as leaning from its ``features`` (a row a die: the classifier's
    embedding of its crops, ``leaning_cue.cue_features``, as ``flag_by_looks`` embeds them) doubted as leaning too
    (RULES.md R14): where its outline says nothing (it touches another die, or the detector boxed only its lit face),
    how it looks still may. Dice doubted as leaning already are not read again."""
    todo = [i for i, d in enumerate(dice) if "leaning" not in d.doubts]
    if not todo:
        return dice
    out = list(dice)
    for i, leaning in zip(todo, cue.leaning(features[todo])):
        if leaning:
            out[i] = Die(out[i].proposal, out[i].face, out[i].doubts + ("leaning",))
    return out


def flag_numbers_by_look(dice: list[Die], bgr: np.ndarray, classifier: object, cue: NumberCue | None,
                         features: np.ndarray | None = None) -> list[Die]:
    """The dice, each that the number ``cue`` reads as showing numbers or signs, not pips, from the ``classifier``'s
    embedding of its crop at any of ``NUMBER_SPANS`` of its proposed side (``vision.number_cue``), doubted with
    ``marks`` (RULES.md R14): the classifier reads such a die surely as some face, often wrong. The first look's
    embeddings of its first two cuts are used where the die has them (``FaceRead.first_cuts``); the other cuts are
    embedded here, every die's in one batch (``linear_cue.embedded_at_spans``, as the leaning cue's), or given in
    ``features`` where they were embedded already (``flag_by_looks``). Under a taught head, dice its gate is sure are
    the owner's are not doubted (``vision.adapt.Head.owners``): the owner taught the reader those. Without a cue, or
    with a classifier that gives no embedding, the dice as they are."""
    embed = getattr(classifier, "logits_and_embedding", None)
    if cue is None or embed is None or not dice:
        return dice
    if features is None:
        known = [d.face.first_cuts for d in dice] if NUMBER_SPANS[:2] == (1.0, WIDER_LOOK) else None
        features = embedded_at_spans(embed, bgr, [d.proposal for d in dice], NUMBER_SPANS, known)
    per_span = np.split(features, len(NUMBER_SPANS), axis=1)
    doubted = np.array([cue.numbers(e) for e in per_span]).any(axis=0)
    head = getattr(classifier, "head", None)  # a taught head: the dice its gate is sure are the owner's are left alone
    owners = head.owners(per_span[0]) if head is not None else np.zeros(len(dice), bool)
    out = list(dice)
    for i, d in enumerate(dice):
        if doubted[i] and not owners[i] and MARKS not in d.doubts:
            out[i] = Die(d.proposal, d.face, d.doubts + (MARKS,))
    return out


def _same_die(a: Proposal, b: Proposal) -> bool:
    return math.hypot(a.cx - b.cx, a.cy - b.cy) < SAME_DIE * max(a.side, b.side)


def _cut_off(p: Proposal, frame_size: tuple[int, int]) -> bool:
    w, h = frame_size
    a = math.radians(p.angle_deg)
    half = p.side * (abs(math.cos(a)) + abs(math.sin(a))) / 2
    reach = CUT_OFF * p.side
    return p.cx - half < -reach or p.cy - half < -reach or p.cx + half > w + reach or p.cy + half > h + reach


def shows_a_change(change: float) -> bool:
    """Whether a proposal whose square differs from the calibrated empty tray by ``change`` (``tray_change``) can
    hold anything: ``reconcile`` drops the others whatever the classifier reads there, so they need not be read.

    >>> shows_a_change(0.7), shows_a_change(40.0)
    (False, True)
    """
    return change >= EMPTY_TRAY_SAME


def tray_change(grey: np.ndarray, empty: np.ndarray | None, proposals: list[Proposal]) -> list[float] | None:
    """How much each proposal's square differs from the calibrated empty tray (mean absolute grey levels).

    None without an empty tray of the same size (the prior is then not used).

    >>> tray = np.full((100, 100), 90, np.uint8)
    >>> frame = tray.copy(); frame[40:60, 40:60] = 230
    >>> [round(c) for c in tray_change(frame, tray, [Proposal(50, 50, 20, 0, 0.9), Proposal(20, 20, 20, 0, 0.9)])]
    [140, 0]
    """
    if empty is None or empty.shape != grey.shape:
        return None
    out = []
    h, w = grey.shape
    for p in proposals:
        half = max(1, int(round(p.side / 2)))
        x0, y0 = max(0, int(round(p.cx)) - half), max(0, int(round(p.cy)) - half)
        x1, y1 = min(w, int(round(p.cx)) + half), min(h, int(round(p.cy)) + half)
        if x1 <= x0 or y1 <= y0:
            out.append(math.inf)
            continue
        diff = cv2.absdiff(grey[y0:y1, x0:x1], empty[y0:y1, x0:x1])
        out.append(float(diff.mean()))
    return out
