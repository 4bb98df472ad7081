"""The classic reader (``reader.detector = "classic"``): a camera frame in, a ``Reading`` out, and an annotated image.

The second plug-in beside the staged reader (``vision.pipeline``), kept for the one set it still reads better
(docs/READING.md); ``vision.reader.load_reader`` imports it only when the settings choose it.

It finds every blob that may be a die (``finder``), cuts each upright and asks
the face classifier (``classifier``) what it shows, drops what the classifier
says is not a die, maps the seen face to the top face (``camera_view``,
``reader.opposite_faces``), and decides the status. ``ok`` means exactly the
expected number of dice, none cut off or misshapen, all confident: the referee
trusts it. Anything else is ``uncertain`` with the reason in words, and the
table confirms the values (RULES.md R14). The reader never raises on a bad
frame: it says so in the reading.

The cascade's thresholds are ``vision.classic_tunables.CLASSIC``; how each
step and number was measured is in docs/CLASSIC-READER.md.

>>> reader = DiceReader(FaceClassifier())
>>> reader.read(np.zeros((480, 640, 3), np.uint8)).status
'uncertain'
"""

from __future__ import annotations

import statistics
from dataclasses import replace
from typing import Any

import cv2
import numpy as np

from companion.core.reading import OK, UNCERTAIN, DieReading, Reading
from vision.annotate import annotate
from vision.classic_tunables import CLASSIC
from vision.classifier import CROP, NOT_A_DIE, FaceClassifier, cut_crop
from vision.finder import Candidate, Look, find_dice, look, with_faint
from vision.images import ImageError, check_frame
from vision.marks import lost_dice
from vision.pipeline.classify import classify_crop
from vision.pipeline.decide import not_as_calibrated, reason_in_words
from vision.pipeline.normalise import calibration_misfit, cut_tray, nothing_seen
from vision.reader_options import ReaderOptions

class DiceReader(ReaderOptions):
    """Reads dice values from frames.

    ``camera_view`` "below" sees bottom faces (the top is the opposite face),
    "above" sees the top faces themselves.
    """

    def __init__(self, classifier: FaceClassifier, *, camera_view: str = "below", opposite_faces: list[int] | None = None,
                 min_confidence: float = 0.95, expected_dice: int = 3, die_side_px: float = 0,
                 tray_region: list[int] | None = None) -> None:
        self.classifier = classifier
        self.model_id = classifier.model_id
        self._set_options(camera_view=camera_view, opposite_faces=opposite_faces, min_confidence=min_confidence,
                          expected_dice=expected_dice, die_side_px=die_side_px, tray_region=tray_region)

    def _but(self, **changes: Any) -> "DiceReader":
        return DiceReader(self.classifier, **{**self.options(), **changes})

    def _uncertain(self, reason: str, *codes: dict[str, Any]) -> Reading:
        return Reading(UNCERTAIN, (), reason=reason, model_id=self.model_id, reasons=codes, sure_at=self.min_confidence)

    def calibration_misfit(self, frame_size: tuple[int, ...]) -> dict | None:
        """Whether the tray's region was set for a picture of another (height, width) than ``frame_size``."""
        return calibration_misfit(frame_size, self.tray_region) if self.tray_region else None

    def read(self, frame: np.ndarray) -> Reading:
        """Read every die in ``frame`` (BGR uint8; grey and BGRA are accepted)."""
        try:
            frame = check_frame(frame)
        except ImageError as exc:
            return self._uncertain(exc.message)
        misfit = self.calibration_misfit(frame.shape[:2])
        if misfit is not None:  # a region set for another picture: read the whole picture, never ok
            return not_as_calibrated(self._but(die_side_px=0, tray_region=None).read(frame), misfit)
        region, (ox, oy) = cut_tray(frame, self.tray_region)  # the staged reader's cut and "dark" (its normalise stage)
        nothing = nothing_seen(region, frame)
        if nothing is not None:
            return self._uncertain(nothing.words, nothing.code)
        frame = region
        default, cands, kept = self._candidates(frame)
        cands, kept = self._other_look(frame, cands, kept)
        cands, kept = self._by_marks(frame, default, cands, kept)
        kept = self._relook(frame, kept)
        kept = self._at_die_size(frame, kept)
        kept = self._one_reading_per_die(kept)
        kept.sort(key=lambda t: (t[0].cx, t[0].cy))
        odd_size = _odd_sizes([c.side for c, _, _ in kept])
        dice = tuple(DieReading(seen, self.top_of(seen), conf, _shift(c.box(), ox, oy), self._doubts(c, conf, bool(odd)))
                     for (c, seen, conf), odd in zip(kept, odd_size))
        codes: list[dict[str, Any]] = []  # why it is uncertain (companion.core.reading.REASON_CODES); ``_in_words`` for people
        if len(dice) != self.expected_dice:
            codes.append({"code": "count", "found": len(dice), "expected": self.expected_dice})
        codes += [{"code": doubt} for doubt in ("cut_off", "leaning") if any(doubt in d.doubts for d in dice)]
        low = [d.confidence for d in dice if "low_confidence" in d.doubts]
        if low:
            codes.append({"code": "low_confidence", "n": len(low), "lowest": round(min(low), 2)})
        extra = {"candidates": len(cands), "rejected": len(cands) - len(kept)}
        if codes:
            return Reading(UNCERTAIN, dice, reason="; ".join(reason_in_words(c) for c in codes), model_id=self.model_id, extra=extra,
                           reasons=tuple(codes), sure_at=self.min_confidence)
        return Reading(OK, dice, model_id=self.model_id, extra=extra, sure_at=self.min_confidence)

    def _doubts(self, c: Candidate, confidence: float, odd_size: bool) -> tuple[str, ...]:
        """Why this die alone makes a reading uncertain: cut off by the frame's edge; leaning (not
        square, or its side more than ``CLASSIC.size_tolerance`` off the other dice's median: a die on its
        edge, or a box holding only part of a die or more than one); read unsure."""
        return tuple(doubt for doubt, yes in (("cut_off", c.cut_off), ("leaning", c.misshapen or odd_size),
                                               ("low_confidence", confidence < self.min_confidence)) if yes)

    def _dice_among(self, frame: np.ndarray, cands: list[Candidate], sure_only: bool = False,
                    known: dict[Candidate, np.ndarray] | None = None) -> list[tuple[Candidate, int, float]]:
        """The candidates the classifier takes for dice, with the face seen and its confidence (one look each);
        only those read sure when ``sure_only`` (the coarse look's close-up guesses). ``known`` holds the
        probabilities of candidates read before, and takes those of the others."""
        known = {} if known is None else known
        todo = [c for c in cands if c not in known]
        if todo:
            known.update(zip(todo, self.classifier.probabilities(_crops(frame, [(c, 1.0) for c in todo]))))
        probs = [known[c] for c in cands]
        kept: list[tuple[Candidate, int, float]] = []
        for c, p in zip(cands, probs):
            seen = int(p[1:].argmax()) + 1
            if p[NOT_A_DIE] > CLASSIC.reject_above or (sure_only and p[seen] < self.min_confidence):
                continue
            kept.append((c, seen, float(p[seen])))
        return kept

    def _other_look(self, frame: np.ndarray, cands: list[Candidate], kept: list[tuple[Candidate, int, float]]
                    ) -> tuple[list[Candidate], list[tuple[Candidate, int, float]]]:
        """The finer or the coarser look (``_other_work_side``), when the dice are small or big: the candidates
        and the dice kept (the coarser look's own are guesses, ``_as_guesses``)."""
        other = self._other_work_side(frame, kept)
        if other > CLASSIC.work_side:
            fine_cands = find_dice(frame, None, work_side=other)
            fine = self._dice_among(frame, fine_cands)
            if _counts(fine, self.min_confidence) >= _counts(kept, self.min_confidence):  # it can lose what it no longer opens away
                return fine_cands, fine
        elif other:
            # dice big for the default look: the coarser look's boxes can be a fifth of a die off, so it only adds
            # the dice the default look did not find, each unsure (just under the threshold) until the second
            # look reads it very sure; marks inside them are dropped with ``_one_reading_per_die``
            added = self._as_guesses([(c, seen, conf) for c, seen, conf in self._dice_among(frame, find_dice(frame, None, work_side=other))
                                      if not any(_same_die(c, k) for k, _, _ in kept)])
            return cands + [c for c, _, _ in added], kept + added
        return cands, kept

    def _other_work_side(self, frame: np.ndarray, kept: list[tuple[Candidate, int, float]]) -> int:
        """The working side for a finer look when the dice read sure are small in the default look, for a
        coarser one when they are big, else 0.

        The finder's rules are tuned for dice about ``fine_die_side`` working
        pixels wide: smaller dice lose their outline and marks to the
        shrinking, bigger ones half melt into the tray estimate. The finer look
        replaces the default one only when it reads at least as many dice sure
        (a rim it opened away before may glue to a die); the coarser one's boxes
        can be a fifth of a die off, so it only adds the dice the default look
        did not find, as guesses (``_as_guesses``). A table whose die size is
        known never takes either. Measured in docs/CLASSIC-READER.md.
        """
        sure_side = self._sure_side(kept)
        if self.die_side_px or not sure_side:
            return 0
        long_side = max(frame.shape[:2])
        side = sure_side * CLASSIC.work_side / long_side
        if side > CLASSIC.big_die_side:
            return max(CLASSIC.close_up_work_side, round(CLASSIC.work_side * CLASSIC.fine_die_side / side))
        if side >= CLASSIC.small_die_side:
            return 0
        return int(min(long_side, CLASSIC.fine_max_work_side, round(CLASSIC.work_side * CLASSIC.fine_die_side / max(side, 1.0))))

    def _sure_side(self, kept: list[tuple[Candidate, int, float]]) -> float:
        """The median side of the dice read sure (frame pixels), 0 when none is: a lone unsure speck
        says nothing of the dice's size."""
        sure = [c.side for c, _, conf in kept if conf >= self.min_confidence]
        return float(statistics.median(sure)) if sure else 0.0

    def _as_guesses(self, dice: list[tuple[Candidate, int, float]]) -> list[tuple[Candidate, int, float]]:
        """Dice a look only guessed at (``Candidate.guessed``), each unsure (just under the threshold) until
        ``_relook`` reads it very sure and the same at every span."""
        unsure = float(np.nextafter(self.min_confidence, 0.0))
        return [(replace(c, guessed=True), value, min(conf, unsure)) for c, value, conf in dice]

    def _candidates(self, frame: np.ndarray) -> tuple[Look, list[Candidate], list[tuple[Candidate, int, float]]]:
        """The default look, its blobs and the dice among them; then, when the die size is not known and
        the default look may have seen only a big die's marks or parts (``_may_be_marks``), a coarse
        look's close-up dice (sure ones only).

        A die filling a fifth of a photo or more melts into the default look's
        tray estimate and only its marks are found; on a copy a third the size
        it is an ordinary die. The look costs 1-2 ms, so a frame whose dice
        read sure and of one ordinary size skips it (docs/CLASSIC-READER.md).
        """
        default, kept = self._default_look(frame)
        if self.die_side_px or not self._may_be_marks(frame, kept):
            return default, default.candidates, kept
        long_side = max(frame.shape[:2])
        coarse = find_dice(frame, None, work_side=CLASSIC.close_up_work_side, smallest=CLASSIC.close_up_prefilter * CLASSIC.close_up_min_side)
        close_ups = [c for c in coarse if c.side >= CLASSIC.close_up_min_side * long_side]
        return default, default.candidates + close_ups, kept + self._dice_among(frame, close_ups, sure_only=True)

    def _default_look(self, frame: np.ndarray) -> tuple[Look, list[tuple[Candidate, int, float]]]:
        """The default look and the dice among its candidates; its faint pass only when the clear pass
        has not already read the game's dice (``_clear_pass_read_all``).

        The faint pass finds pale dice on a pale tray and costs about a third
        of the look. When the clear pass alone read the game's dice, each sure,
        whole, of one size, with no lost die's marks beside them, it and the
        look by marks (``_by_marks``) could only add a die the game does not
        have. Otherwise the faint pass goes on from where the clear pass
        stopped (``with_faint``), and only its new blobs are read.
        """
        clear = look(frame, self.die_side_px, faint=False)
        known: dict[Candidate, np.ndarray] = {}
        kept = self._dice_among(frame, clear.candidates, known=known)
        if self._clear_pass_read_all(frame, clear, kept):
            return clear, kept
        default = with_faint(clear)
        return default, self._dice_among(frame, default.candidates, known=known)

    def _clear_pass_read_all(self, frame: np.ndarray, clear: Look, kept: list[tuple[Candidate, int, float]]) -> bool:
        """Whether the dice read are the game's, all of them: as many as expected, each read sure, whole
        (not cut off, square) and of the others' size, none that calls another look (small dice, or a
        big die's marks or parts, ``_may_be_marks``), and no marks of a lost die beside them (a white
        die on a pale tray, whose pips still show in the clear mask: ``vision.marks``)."""
        if len(kept) != self.expected_dice or any(conf < self.min_confidence or c.cut_off or c.misshapen for c, _, conf in kept):
            return False
        if _odd_sizes([c.side for c, _, _ in kept]).any() or self._other_work_side(frame, kept):
            return False
        if not self.die_side_px and self._may_be_marks(frame, kept):
            return False
        return not self._lost_dice(clear, kept)

    def _may_be_marks(self, frame: np.ndarray, kept: list[tuple[Candidate, int, float]]) -> bool:
        """Whether the dice the default look read may be a big die's marks or parts (the close-up look must
        run): none read sure but ones, a one unsure or of another size than the sure dice (a mark cut out
        with its rim of shade reads as a die showing one), or a sure die big for the default look."""
        big = CLASSIC.big_die_side * max(frame.shape[:2]) / CLASSIC.work_side
        sure = [(c, seen) for c, seen, conf in kept if conf >= self.min_confidence]
        dice = [c.side for c, seen in sure if seen != 1]
        if not dice or any(c.side > big for c, _ in sure) or any(seen == 1 and conf < self.min_confidence for _, seen, conf in kept):
            return True
        size = float(statistics.median(dice))  # a sure one of the other dice's size is a die showing one
        return any(seen == 1 and abs(c.side / size - 1) > CLASSIC.size_tolerance for c, seen in sure)

    def _by_marks(self, frame: np.ndarray, default: Look, cands: list[Candidate], kept: list[tuple[Candidate, int, float]]
                  ) -> tuple[list[Candidate], list[tuple[Candidate, int, float]]]:
        """The dice the finder lost, found again by their marks (``vision.marks``: a white die on a pale
        tray), at the size of the dice read sure (or the table's, when known).

        A square around a group of marks is a guess: it is kept when its first
        look reads it a die at ``marks_first`` or more and it overlaps no die
        already kept (dice never overlap: such a square holds that die's own
        marks, or part of it), unsure until ``_relook`` reads it very sure and
        the same at every span.
        """
        if not default.faint:
            return cands, kept  # the clear pass read the game's dice (``_default_look``): none was lost
        lost = self._lost_dice(default, kept)
        if not lost:
            return cands, kept
        added = self._as_guesses([(c, value, conf) for c, value, conf in self._dice_among(frame, lost)
                                  if conf >= CLASSIC.marks_first and _clear_of(c, [k for k, _, _ in kept])])
        return cands + lost, kept + added

    def _die_size(self, kept: list[tuple[Candidate, int, float]]) -> float:
        """The dice's side in frame pixels: the table's (``calibrate --dice``), else the sure dice's median;
        0 when neither is known."""
        return self.die_side_px or self._sure_side(kept)

    def _lost_dice(self, seen: Look, kept: list[tuple[Candidate, int, float]]) -> list[Candidate]:
        """Squares around the marks in the look's clear mask that lie apart from every die kept
        (``vision.marks``), at the dice's size (``_die_size``); none without a size."""
        side = self._die_size(kept)
        return lost_dice(seen, [c for c, _, _ in kept], side) if side else []

    def _relook(self, frame: np.ndarray, kept: list[tuple[Candidate, int, float]]) -> list[tuple[Candidate, int, float]]:
        """Each unsure die read again: its 8 turns and mirrors averaged (``probabilities_turned``),
        from its box and from crops a little smaller and bigger (a shadow or a
        neighbour makes the finder's box too big, a pale edge too small:
        a pale die's box can be only 0.6-0.8 of the die). The surest of those
        looks wins, and makes a die sure only when very sure (``relook_sure``):
        the best of several looks is a luckier draw than one, and a close-up
        die's elephant, cut out alone, reads as a one at 0.9 and more. A die a
        look only ``guessed`` must read the same value at every span: its box
        may hold only part of the die. Measured in docs/CLASSIC-READER.md.
        """
        unsure = [i for i, (_, _, conf) in enumerate(kept) if conf < self.min_confidence]
        if not unsure:
            return kept
        looks = [(kept[i][0], span) for i in unsure for span in CLASSIC.relook_spans]
        probs = self.classifier.probabilities_turned(_crops(frame, looks)).reshape(len(unsure), len(CLASSIC.relook_spans), -1)
        out = list(kept)
        for i, answers in zip(unsure, probs):
            if kept[i][0].guessed and len({int(p[1:].argmax()) for p in answers}) > 1:
                continue  # a coarse look's box, read differently at different spans: part of a die, or more
            for p in answers:
                seen = int(p[1:].argmax()) + 1
                sure_enough = p[seen] < self.min_confidence or p[seen] >= CLASSIC.relook_sure  # still flagged, or very sure
                if p[NOT_A_DIE] <= CLASSIC.reject_above and p[seen] > out[i][2] and sure_enough:
                    out[i] = (out[i][0], seen, float(p[seen]))
        return out

    def _at_die_size(self, frame: np.ndarray, kept: list[tuple[Candidate, int, float]]) -> list[tuple[Candidate, int, float]]:
        """Each die not very sure (``CLASSIC.at_die_size_keep``) whose box is far from the dice's size (the table's, or the sure dice's
        median) read again in squares of that size placed over its box (``_squares_over``); the surest
        square read very sure (``CLASSIC.relook_sure``) that overlaps no other die takes its place.

        A box much smaller than a die holds a pale die's marks, or its darker
        half (a white die on a pale tray: the finder sees only its pips); a
        box much bigger holds a die and a glare patch or a neighbour glued to
        it. Either reads unsure or wrong, and is flagged; a square of the
        dice's size over the whole die, and nothing else, reads it right. The
        squares hold all of a small box or lie inside a big one, at its
        centre and pushed to its sides and corners. Each is looked at once,
        and the two surest again in their eight turns. A box that was not
        square keeps its doubt (a die leaning on the cup, RULES.md R14): only
        its size and its confidence are settled by the square. Dice a look
        only guessed at keep ``_relook``'s rule. Measured in docs/CLASSIC-READER.md.
        """
        side = self._die_size(kept)
        if not side:
            return kept
        out = list(kept)
        for i, (c, _, conf) in enumerate(kept):
            small = c.side < (1 - CLASSIC.size_tolerance) * side
            big = max(c.w, c.h) > (1 + CLASSIC.size_tolerance) * side
            if conf >= max(self.min_confidence, CLASSIC.at_die_size_keep) or c.guessed or not (small or big):
                continue
            others = [k for j, (k, _, _) in enumerate(out) if j != i]
            squares = [s for s in _squares_over(c, side) if _clear_of(s, others)]
            crops = _crops(frame, [(s, 1.0) for s in squares])
            if len(squares) > CLASSIC.at_die_size_turned:
                surest = np.argsort(-self.classifier.probabilities(crops)[:, 1:].max(axis=1))[:CLASSIC.at_die_size_turned]
                squares, crops = [squares[j] for j in surest], crops[surest]
            for s, p in zip(squares, self.classifier.probabilities_turned(crops)):
                seen = int(p[1:].argmax()) + 1
                if p[NOT_A_DIE] <= CLASSIC.reject_above and p[seen] >= CLASSIC.relook_sure and p[seen] > out[i][2]:
                    out[i] = (s, seen, float(p[seen]))
        return out

    def _one_reading_per_die(self, kept: list[tuple[Candidate, int, float]]) -> list[tuple[Candidate, int, float]]:
        """Where two accepted blobs overlap (the two looks found one die, or a die and its marks), keep one.

        A blob whose centre lies inside a surer, bigger die is dropped when it
        is much smaller (a mark of that die) or about as big (the same die seen
        twice). A big blob holding two or more die-sized blobs is a group of
        touching dice, not one die: the big blob goes.
        """
        order = sorted(range(len(kept)), key=lambda i: -kept[i][0].side)
        dropped: set[int] = set()
        for i in order:
            big, _, conf = kept[i]
            if i in dropped or conf < self.min_confidence:
                continue
            inside = [j for j in order if j != i and j not in dropped and _centre_inside(kept[j][0], big)]
            dice_sized = [j for j in inside if kept[j][0].side >= CLASSIC.close_up_mark_share * big.side and kept[j][2] >= self.min_confidence
                          and not (kept[j][1] == 1 and kept[j][0].side < CLASSIC.close_up_one_share * big.side)]  # one mark, cut out with its rim, reads as a one
            if len(dice_sized) >= 2 or any(kept[j][2] > conf for j in dice_sized):
                dropped.add(i)  # a group of dice, or the same die found surer by the other look
                continue
            dropped.update(inside)
        return [k for i, k in enumerate(kept) if i not in dropped]

    def classify_crop(self, crop: np.ndarray) -> tuple[int, float]:
        """The face value and confidence of one image holding one die roughly centred (45-100 % of its short
        side): the staged reader's crop look (``vision.pipeline.classify.classify_crop``); only the staged reader also
        reads an unsure picture as a photo of one die, with its learned detector."""
        face = classify_crop(self.classifier, crop)
        return face.seen, face.confidence

    def annotate(self, frame: np.ndarray, reading: Reading) -> np.ndarray:
        """A copy of the frame with each die's box and values, and the status, drawn on it."""
        return annotate(frame, reading, self.min_confidence)


def _counts(kept: list[tuple[Candidate, int, float]], sure_at: float) -> tuple[int, int]:
    """How many dice a look read sure, and how many in all: which of two looks read more."""
    return sum(conf >= sure_at for _, _, conf in kept), len(kept)


def _odd_sizes(sides: list[float]) -> np.ndarray:
    """Which dice differ in side from the others' median by more than ``CLASSIC.size_tolerance`` (none of one or no die)."""
    if len(sides) < 2:
        return np.zeros(len(sides), bool)
    a = np.array(sides)
    return np.abs(a / statistics.median(sides) - 1) > CLASSIC.size_tolerance


def _crops(frame: np.ndarray, looks: list[tuple[Candidate, float]]) -> np.ndarray:
    """The classifier's crops (N×CROP×CROP×3) of each candidate, its box scaled by the span given with it."""
    crops = [cut_crop(frame, c.cx, c.cy, max(c.w, c.h) * span, c.angle) for c, span in looks]
    return np.array(crops, np.uint8).reshape(-1, CROP, CROP, 3)


def _squares_over(c: Candidate, side: float) -> list[Candidate]:
    """Squares of ``side`` in ``c``'s axes that hold all of ``c`` (when it is smaller) or lie inside it
    (when bigger): at its centre, and pushed to its sides and corners along each axis where the sizes
    differ by more than a tenth of a die."""
    a = np.radians(c.angle)
    u, v = np.array([np.cos(a), np.sin(a)]), np.array([-np.sin(a), np.cos(a)])
    du, dv = abs(c.w - side) / 2, abs(c.h - side) / 2
    steps_u = (-du, 0.0, du) if du > CLASSIC.square_step * side else (0.0,)
    steps_v = (-dv, 0.0, dv) if dv > CLASSIC.square_step * side else (0.0,)
    return [replace(c, cx=float(c.cx + su * u[0] + sv * v[0]), cy=float(c.cy + su * u[1] + sv * v[1]), w=side, h=side)
            for su in steps_u for sv in steps_v]


def _same_die(a: Candidate, b: Candidate) -> bool:
    """Whether two looks' blobs are one die: about the same size, one's centre inside the other."""
    return min(a.side, b.side) >= CLASSIC.same_die_size * max(a.side, b.side) and (_centre_inside(a, b) or _centre_inside(b, a))


def _overlap(a: Candidate, b: Candidate) -> float:
    """How much of the smaller of two rotated squares the other covers (0..1)."""
    kind, pts = cv2.rotatedRectangleIntersection(((a.cx, a.cy), (a.w, a.h), a.angle), ((b.cx, b.cy), (b.w, b.h), b.angle))
    if kind == cv2.INTERSECT_NONE or pts is None:
        return 0.0
    return float(cv2.contourArea(cv2.convexHull(pts))) / max(1e-6, min(a.w * a.h, b.w * b.h))


def _clear_of(square: Candidate, dice: list[Candidate]) -> bool:
    """Whether ``square`` overlaps none of ``dice`` by more than ``CLASSIC.die_overlap``: dice never overlap, so a
    square that does holds a found die's own marks or part of it."""
    return not any(_overlap(square, d) > CLASSIC.die_overlap for d in dice)


def _centre_inside(small: Candidate, big: Candidate) -> bool:
    """Whether ``small``'s centre lies within ``big``'s square (in its own axes)."""
    a = np.radians(big.angle)
    dx, dy = small.cx - big.cx, small.cy - big.cy
    u, v = dx * np.cos(a) + dy * np.sin(a), -dx * np.sin(a) + dy * np.cos(a)
    return abs(u) <= big.w / 2 and abs(v) <= big.h / 2


def _shift(box: tuple[int, int, int, int], dx: int, dy: int) -> tuple[int, int, int, int]:
    return box[0] + dx, box[1] + dy, box[2], box[3]
