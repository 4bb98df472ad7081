"""The staged reader: normalise → propose → crop → classify → reconcile → decide, one frame at a time.

It answers as ``vision.classic_reader.DiceReader`` does (``read``, ``annotate``,
``with_view``, ``with_die_side``, ``classify_crop``), so the capture loop, the
commands and the benches take either; ``reader.detector`` in the settings
chooses (``load_reader``).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Callable

import cv2
import numpy as np

from companion.core.protocols import Proposal
from companion.core.reading import OK, UNCERTAIN, Reading
from vision.annotate import annotate
from vision.classifier import MARGIN, FaceClassifier
from vision.pipeline.alike import flag_unlike
from vision.pipeline.classify import FaceRead, a_die_seen_from_afar, classify, classify_crop, one_holding_a_die, read_inside, readable_crop
from vision.pipeline.decide import (CONFIDENCE_MARGIN, decide, found_on_a_second_look, is_sure, missed_at_the_size, not_as_calibrated,
                                    off_the_calibrated_size, sure_confidence)
from vision.pipeline.looks import (a_mark_of, a_small_die_reads_another_face, every_die_surer, holds_a_sure_die, read_sure, surer_answer,
                                   surer_at_count, surest_first, takes_over, whole_dice_inside)
from vision.pipeline.lens import Lens
from vision.pipeline.normalise import Normalised, Unreadable, calibration_misfit, normalise
from vision.pipeline.propose import Proposer, around_marks, at_die_size, centred_die, of_die_size, propose, propose_closer, propose_farther, propose_finer, propose_in_colour, propose_inside, same_places
from vision.leaning_cue import LeaningCue
from vision.number_cue import NumberCue
from vision.pipeline.reconcile import (Die, flag_by_looks, flag_leaning, flag_numbers_by_look, read_wider_where_only_marks, reconcile,
                                       shows_a_change, tray_change)
from vision.pipeline.shape import die_sides, sides_agree
from vision.pipeline.tray import sure_rescues, uncovered_dice
from vision.reader_options import ReaderOptions
from vision.second_opinion import SECOND_OPINION, SecondOpinion, asked


#: Tray mode's last look where nothing else was sure: the dice at these shares of the calibrated size (a die's face
#: a tenth off the measured one: a calibration taken at another spot of the tray, dice of a slightly other make).
NEAR_SIZES = (0.9, 1.1)


class PipelineReader(ReaderOptions):
    """Reads dice values from frames through the named stages.

    ``camera_view`` "below" sees bottom faces (the top is the opposite face),
    "above" sees the top faces themselves. ``die_side_px`` and ``tray_region``
    are the tray's calibration: with them the detector looks for dice of that
    size inside that region only. ``leaning_cue``: a die that looks leaning
    (``vision.leaning_cue``) is doubted, from below as well as one whose outline is, from above alone (an outline
    seen from above is lengthened by the camera's slant, ``reconcile.flag_leaning``). ``number_cue``: a die whose marks look
    like numbers or signs, not pips (``vision.number_cue``), is doubted from any view. ``leaning_problem`` and
    ``number_problem``: why a cue is missing, in words for ``/api/health`` (``load_reader`` sets them; every copy made
    by a ``with_*`` keeps them, as it keeps the cues). ``dice_alike``: in tray mode (the empty tray known) a die whose
    colour is unlike every other die's is doubted (``pipeline.alike``). ``lens_distortion`` (and ``lens_distortion_k2``):
    the camera lens's bend (``pipeline.lens``): a die's outline is judged where its points lie straightened. ``on_dice``: called with each look's normalised frame and the
    dice it keeps (training code collects them so; the reading is unchanged).
    """

    def __init__(self, classifier: FaceClassifier, proposer: Proposer, *, camera_view: str = "below", opposite_faces: list[int] | None = None,
                 min_confidence: float = 0.95, expected_dice: int = 3, die_side_px: float = 0, tray_region: list[int] | None = None,
                 empty_tray: np.ndarray | None = None, empty_tray_problem: str | None = None,
                 leaning_cue: LeaningCue | None = None, number_cue: NumberCue | None = None,
                 leaning_problem: str | None = None, number_problem: str | None = None,
                 second_opinion: SecondOpinion | None = None, second_opinion_problem: str | None = None, dice_alike: bool = True,
                 lens_distortion: float = 0.0, lens_distortion_k2: float = 0.0, on_dice: Callable[[Normalised, list[Die]], None] | None = None) -> None:
        self.classifier = classifier
        self.proposer = proposer
        self.model_id = classifier.model_id
        self._set_options(camera_view=camera_view, opposite_faces=opposite_faces, min_confidence=min_confidence,
                          expected_dice=expected_dice, die_side_px=die_side_px, tray_region=tray_region)
        #: the calibrated empty tray, grey, as the camera saw it (the whole frame), or None
        self.empty_tray = empty_tray
        #: why the settings' empty tray photo is not used (missing or unreadable), in words; None when it is, or none is set
        self.empty_tray_problem = empty_tray_problem
        self.leaning_cue = leaning_cue
        self.number_cue = number_cue
        self.leaning_problem = leaning_problem
        self.number_problem = number_problem
        self.second_opinion = second_opinion
        self.second_opinion_problem = second_opinion_problem
        #: in tray mode, doubt a die whose colour is unlike every other die's (``pipeline.alike``)
        self.dice_alike = dice_alike
        #: the camera lens's bend (``vision.pipeline.lens``; 0: none): outlines are measured straightened
        self.lens_distortion = float(lens_distortion)
        #: ... and its second coefficient (``camera.lens_distortion_k2``; 0 unless the lens needs it)
        self.lens_distortion_k2 = float(lens_distortion_k2)
        self.on_dice = on_dice

    def _but(self, **changes: Any) -> "PipelineReader":
        return PipelineReader(self.classifier, self.proposer, **{**self.options(), "empty_tray": self.empty_tray,
                                                                 "empty_tray_problem": self.empty_tray_problem,
                                                                 "leaning_cue": self.leaning_cue, "number_cue": self.number_cue,
                                                                 "leaning_problem": self.leaning_problem,
                                                                 "number_problem": self.number_problem,
                                                                 "second_opinion": self.second_opinion,
                                                                 "second_opinion_problem": self.second_opinion_problem,
                                                                 "dice_alike": self.dice_alike, "lens_distortion": self.lens_distortion,
                                                                 "lens_distortion_k2": self.lens_distortion_k2,
                                                                 "on_dice": self.on_dice, **changes})

    def with_empty_tray(self, empty_tray: np.ndarray | None) -> "PipelineReader":
        """The same reader comparing each proposal with this photo of the empty tray (grey or BGR, the whole frame)."""
        if empty_tray is not None and empty_tray.ndim == 3:
            empty_tray = cv2.cvtColor(empty_tray, cv2.COLOR_BGR2GRAY)
        return self._but(empty_tray=empty_tray, empty_tray_problem=None)

    def with_lens(self, lens_distortion: float, lens_distortion_k2: float = 0.0) -> "PipelineReader":
        """The same reader for a camera whose lens bends the picture by ``lens_distortion`` and ``lens_distortion_k2``
        (``camera.lens_distortion``, ``camera.lens_distortion_k2``)."""
        return self._but(lens_distortion=lens_distortion, lens_distortion_k2=lens_distortion_k2)

    def read(self, frame: np.ndarray) -> Reading:
        """Read every die in ``frame`` (BGR uint8; grey, BGRA and 16-bit are accepted)."""
        prepared = normalise(frame, self.tray_region)
        if isinstance(prepared, Unreadable):
            return Reading(UNCERTAIN, (), reason=prepared.words, model_id=self.model_id,
                           reasons=(prepared.code,) if prepared.code else (), sure_at=self.min_confidence)
        misfit = self.calibration_misfit(np.shape(frame)[:2])
        if misfit is not None:  # a calibration made for another picture: read as if none were made, and never ok
            return not_as_calibrated(self._but(die_side_px=0, tray_region=None, empty_tray=None).read(frame), misfit)
        if not self.die_side_px:
            reading, _, surer = self._unsized(prepared)
            return self._whole_photo(prepared, reading) or surer or reading
        # tray mode: the calibrated size is the prior for every die's size. With the empty tray known too (each die's
        # outline is then measured against it, wherever a look put the die), the detector's usual look first: sure
        # there, it is the reading, without the dearer look at that size
        first = propose(prepared, self.proposer) if self.empty_tray is not None else None
        usual = of_die_size(first, self.die_side_px) if first is not None else []
        reading, kept = self._look(prepared, usual) if usual else (None, [])
        if reading is not None and reading.status == OK:
            return reading
        proposals = at_die_size(propose(prepared, self.proposer, self.die_side_px), self.die_side_px)
        if reading is None or proposals != usual:  # the same scale gives the same proposals: no need to read them twice
            reading, kept = self._look(prepared, proposals, "first" if reading is None else "sized")
        if reading.status != OK and len(kept) < self.expected_dice:  # short: what does the empty tray say?
            found = self._tray_look(prepared, kept)
            if found:
                reading = self._reading(prepared, proposals + found, look="tray")
        if reading.status == OK:
            return reading
        # told the size, the detector looked for dice of that size; where did it see dice unprompted (and closer)? Those
        # that can be of the calibrated size are read again at it; a die of another size cut at it shows a part of its
        # face or the tray around it
        unsized, places, _ = self._but(die_side_px=0)._unsized(prepared, first)
        if unsized.status == OK and not same_places(places, proposals):
            second = self._reading(prepared, of_die_size(places, self.die_side_px), look="unprompted")
            if second.status == OK:  # the same places read again at the calibrated size, with every check
                return second
        # dice of another size than calibrated: found only unprompted, offered there to confirm, never ok
        off = off_the_calibrated_size(unsized, reading, self.die_side_px, self.expected_dice, lambda: self._sides_as_calibrated(prepared, unsized))
        if off is not None:
            return off
        if missed_at_the_size(unsized, reading, self.expected_dice):  # dice of the calibrated size its look missed
            return found_on_a_second_look(unsized, reading)
        return self._near_the_size(prepared, reading) or reading

    def _sides_as_calibrated(self, prepared: Normalised, reading: Reading) -> list[float] | None:
        """The sides of ``reading``'s dice measured as ``calibrate --dice`` measures them (``shape.die_sides``: their
        outlines, against the empty tray where there is one, and the classic finder's), the scale of ``die_side_px``;
        None where they do not agree as ``calibrate --dice`` asks (``SIDE_AGREEMENT``: touching dice measured as one
        blob). Asked only where the look at that size missed dice the look knowing no size found."""
        from vision.finder import find_dice  # the classic finder, loaded only when a reading asks

        ox, oy = prepared.offset
        boxes = [(x - ox, y - oy, w, h) for x, y, w, h in (d.box for d in reading.dice)]
        sides = die_sides(prepared.grey, boxes, self._empty_region(), find_dice(prepared.bgr), self._lens(prepared))
        return sides if sides_agree(sides) else None

    def _near_the_size(self, prepared: Normalised, reading: Reading) -> Reading | None:
        """Where tray mode's ``reading`` at the calibrated size doubts only how sure its faces are (every die found, none
        leaning or cut off), the look at ``NEAR_SIZES`` times that size: the first reading sure there with every
        check, where it reads the faces the calibrated size leaned to; else None. A die judged leaning or missing at the
        calibrated size is never looked at again so. The near look firms up faces, never changes them: a die twice the
        calibrated size (a camera moved closer) is cut inside its face at either size, and a tenth more can show one
        mark of a two where the calibrated size still saw both."""
        if any(code["code"] != "low_confidence" for code in reading.reasons):
            return None
        for share in NEAR_SIZES:
            near = self._but(die_side_px=self.die_side_px * share)
            looked = near._reading(prepared, at_die_size(propose(prepared, near.proposer, near.die_side_px), near.die_side_px), "near size")
            if looked.status == OK and sorted(d.seen for d in looked.dice) == sorted(d.seen for d in reading.dice):
                return looked
        return None

    def _unsized(self, prepared: Normalised, first: list[Proposal] | None = None
                 ) -> tuple[Reading, list[Proposal], Reading | None]:
        """The reading knowing no die size, the places of the dice it kept, and a look from farther that read them
        surer where the grey looks offer one (``_grey_looks``): the detector's first look (``first`` where it was
        taken already), then where that is not sure, a closer or a farther one; where dice are still missing, a look
        in colour, and where they are missing yet (or, not knowing how many, nothing is sure), a finer look, the
        costliest."""
        reading, kept, surer = self._grey_looks(prepared, first)
        if reading.status == OK or surer is not None or (self.expected_dice and len(kept) >= self.expected_dice):
            return reading, kept, surer
        more = propose_in_colour(prepared, self.proposer, kept) if self.expected_dice else []
        if more:  # dice the grey frame hides: read with those found, every check again
            coloured, coloured_kept = self._look(prepared, kept + more, "colour")
            # sure, or unsure with every die found: the table then checks the dice, each boxed, not two of three
            if coloured.status == OK or len(coloured.dice) == self.expected_dice:
                return coloured, coloured_kept, None
        return (*self._finer_look(prepared, reading, kept), None)

    def _whole_photo(self, prepared: Normalised, reading: Reading) -> Reading | None:
        """Where a photo from above told to hold one die has no die read sure in ``reading`` after every look, the
        photo read as a person's crop of one die (``classify_crop``, as ``classify`` reads it), where that is sure;
        else None. A die filling a small photo, its marks a few pixels, is often seen by every look as its marks. It
        outranks a look from farther that read the die surer (``surer_at_count``), which is still unsure where the
        die lies. Never for the tray's camera (a tray region, the view from below): it never holds a die filling
        its frame. A whole photo read as a one does not outrank a look whose surest die, small inside the whole
        square as a die inside a one is (``a_small_die_reads_another_face``), reads another face: a small die far
        off in a big photo is a one's mark to a crop of the whole photo, and the look saw it as the die it is. A die
        filling the photo is left to the whole photo (a look can read a side face or a logo inside it), and so is a
        "die" of a few pixels (the one's own mark, a grain of the table)."""
        if self.expected_dice != 1 or self.camera_view != "above" or self.tray_region or any(read_sure(reading, d) for d in reading.dice):
            return None
        face = classify_crop(self.classifier, prepared.bgr)
        if not is_sure(face.confidence, face.runner_up, self.min_confidence):
            return None
        whole = centred_die(prepared)
        if face.seen == 1 and a_small_die_reads_another_face(reading, whole):
            return None  # a small die read whole as a one's mark, which a look saw as the die it is
        die = self._alone_holding_a_die(prepared, Die(whole, face, ()))
        if die.face.overturned:
            return None  # a die far off in a big photo, read whole as a one's mark
        [die] = flag_numbers_by_look([die], prepared.bgr, self.classifier, self.number_cue)
        return self._decided(prepared, [whole], [die], "whole photo")

    def _grey_looks(self, prepared: Normalised, first: list[Proposal] | None = None
                    ) -> tuple[Reading, list[Proposal], Reading | None]:
        """The detector's first look at the grey frame (``first``: its proposals, where it was taken already), then
        where that is not sure, a closer one, or the looks from farther the detector offers (``far_net_sides``,
        nearest first: a die filling the frame seen as its marks; none whose die holds a die the first look read
        sure, ``holds_a_sure_die``), and where every look saw only marks, the die around them (``around_marks``),
        else the first look's reading, and a look from farther that reads the same count surer (``surer_at_count``),
        which ``read`` takes unless the whole photo read as a crop is sure (``_whole_photo``)."""
        first = propose(prepared, self.proposer) if first is None else first
        reading, kept = self._look(prepared, first)
        if reading.status == OK:
            return reading, kept, None
        closer = propose_closer(prepared, self.proposer, first)
        if closer is not None:  # the dice were small for the detector's first look: read its closer look
            near, near_kept = self._look(prepared, closer, "closer")
            if near.status != OK and every_die_surer(reading, near, self.expected_dice):
                return reading, kept, None  # bigger dice among the small ones, seen closer as their marks
            marks = self._around_marks_taking_over(prepared, closer, near)  # small to the detector: maybe a die's marks
            return (*(marks or (near, near_kept)), None)
        surer: Reading | None = None
        for step, net_side in enumerate(getattr(self.proposer.detector, "far_net_sides", (None,))):
            look = "farther" if step == 0 else "farthest"
            farther = propose_farther(prepared, self.proposer, first, net_side)
            if farther is not None:  # big dice: the first look may have taken a die's marks for dice
                far, far_kept = self._look(prepared, farther, look)
                if holds_a_sure_die(far, reading):
                    continue  # a small die in a plain space (a cup, a cloth) seen from farther as a mark of the space
                if far.status == OK or len(far.dice) == self.expected_dice != len(reading.dice):
                    return far, far_kept, None
                if surer is None and surer_at_count(far, reading, self.expected_dice):  # the die seen whole: surer
                    surer = replace(far, extra={**far.extra, "look": f"{look}, surer"})
        marks = self._around_marks_taking_over(prepared, first, reading)
        return (*marks, None) if marks else (reading, kept, surer)

    def _around_marks_taking_over(self, prepared: Normalised, proposals: list[Proposal], reading: Reading
                                  ) -> tuple[Reading, list[Proposal]] | None:
        """Where ``reading`` (of ``proposals``) has no die sure, the one die those proposals may be the marks of
        (``around_marks``), when that reading takes over (``takes_over``); else None."""
        whole = around_marks(prepared, proposals, self.proposer.borderline) if not any(read_sure(reading, d) for d in reading.dice) else None
        if whole is not None:  # seen as marks: the one die they would be the marks of
            marks, marks_kept = self._around_marks(prepared, whole)
            if takes_over(marks, reading, self.expected_dice):
                return marks, marks_kept
        return None

    def _around_marks(self, prepared: Normalised, whole: Proposal) -> tuple[Reading, list[Proposal]]:
        """``_look`` at the die around the marks, ``whole``: never sure where the square at the frame's centre
        (``centred_die``) reads another face, as a face another size overturns is never sure (``classify``)."""
        dice = self._dice(prepared, [whole])
        if dice:
            centred = classify(self.classifier, prepared.bgr, [centred_die(prepared)], relook_below=sure_confidence(self.min_confidence))[0]
            if centred.seen != dice[0].face.seen:
                dice = [replace(dice[0], face=replace(dice[0].face, overturned=True))]
        return self._decided(prepared, [whole], dice, "marks"), [d.proposal for d in dice]

    def _finer_look(self, prepared: Normalised, reading: Reading, kept: list[Proposal]) -> tuple[Reading, list[Proposal]]:
        """The whole frame looked at finer (``propose_finer``), and where that is not sure, closer at what it found:
        dice a few hundredths of a big frame's width, which the first look sees at a few of its pixels. Where neither
        is sure, the finer looks the detector offers after it (``fine_net_sides``: in a phone's big photo, finer
        still), each in the same way, until one holds the expected count. A look is taken when it is sure, or when it
        comes nearer the expected count than ``reading`` with a die where ``reading`` read each of its sure ones
        (``takes_over``, offered the looks ``surest_first``; the table then checks more of the dice, each boxed, still
        uncertain). What a look proposes on a die read sure, much smaller than that
        die, is one of its marks and is dropped first. Else ``reading`` stands."""
        sure = [d for d in reading.dice if read_sure(reading, d)]
        looks: list[tuple[Reading, list[Proposal]]] = []
        inside: tuple[Reading, list[Proposal]] | None = None
        for step, net_side in enumerate(getattr(self.proposer.detector, "fine_net_sides", (None,))):
            found = propose_finer(prepared, self.proposer, net_side)
            fine = [p for p in found or () if not any(a_mark_of(p, die, prepared.offset) for die in sure)]
            name = "finer" if step == 0 else "finest"
            if found and len(fine) < len(found) and inside is None:  # or was a die read sure a table seen from afar?
                whole = self._look(prepared, list(found), f"{name}, inside")
                if whole_dice_inside(whole[0], self.expected_dice):
                    if whole[0].status == OK:
                        return whole
                    inside = whole
            if not fine:
                continue
            looks.append(self._look(prepared, fine, name))
            if looks[-1][0].status == OK:
                break
            closer = propose_closer(prepared, self.proposer, fine)
            if closer is not None:
                looks.append(self._look(prepared, closer, f"{name}, closer"))
                if looks[-1][0].status == OK:
                    break
            if self.expected_dice and any(len(look[0].dice) == self.expected_dice for look in looks):
                break  # every die found: a finer look still would not make the reading surer (more found is junk or marks)
        for found in sorted(looks, key=lambda look: surest_first(look[0], self.expected_dice)):
            if takes_over(found[0], reading, self.expected_dice):
                return found
        return inside if inside is not None else (reading, kept)

    def _reading(self, prepared: Normalised, proposals: list[Proposal], look: str = "first") -> Reading:
        """Classify, reconcile and decide on ``proposals`` (from the detector's ``look``) in the normalised frame."""
        return self._look(prepared, proposals, look)[0]

    def _look(self, prepared: Normalised, proposals: list[Proposal], look: str = "first") -> tuple[Reading, list[Proposal]]:
        """``_reading``, and the proposals of the dice it kept."""
        dice = self._dice(prepared, proposals)
        return self._decided(prepared, proposals, dice, look), [d.proposal for d in dice]

    def _dice(self, prepared: Normalised, proposals: list[Proposal]) -> list[Die]:
        """The dice among ``proposals``: classified, reconciled, and checked for leaning."""
        changes = tray_change(prepared.grey, self._empty_region(), proposals)
        if changes is not None:  # where the empty tray looks just as it did, nothing lies: not worth reading
            proposals, changes = [p for p, c in zip(proposals, changes) if shows_a_change(c)], [c for c in changes if shows_a_change(c)]
        weak = [self.proposer.weak(p) for p in proposals]
        faces = classify(self.classifier, prepared.bgr, proposals, relook_below=sure_confidence(self.min_confidence), weak=weak)
        h, w = prepared.grey.shape
        dice = reconcile(proposals, faces, (w, h), borderline=[self.proposer.borderline(p) for p in proposals], die_side_px=self.die_side_px,
                         tray_change=changes, weak=weak)
        if len(dice) == 1 and not self.die_side_px:  # told the die's size, every square is a die's: none holds a die far off
            dice = [self._alone_holding_a_die(prepared, dice[0])]
        dice = flag_leaning(dice, prepared.grey, self.camera_view, self._empty_region(), self._lens(prepared), self.die_side_px)
        dice = read_wider_where_only_marks(dice, prepared.grey, prepared.bgr, self.classifier, self._empty_region())
        dice = flag_by_looks(dice, prepared.bgr, self.classifier, self.leaning_cue, self.number_cue)
        if self.dice_alike and self.empty_tray is not None:  # tray mode: the table's own set of dice (``pipeline.alike``)
            dice = flag_unlike(dice, prepared.bgr)
        if self.on_dice is not None:
            self.on_dice(prepared, dice)
        return dice

    def _alone_holding_a_die(self, prepared: Normalised, die: Die) -> Die:
        """``die``, where it is read sure as a one and its square holds a smaller die the detector sees inside it
        (``propose_inside``) reading another face, with that die's face, never sure (``one_holding_a_die``): a small
        die far off in a plain square (a frame around a small photo, a table around a die) reads whole as a one's
        mark, as surely as a one. Asked of a die with no other beside it (among two or more, a square far larger
        than the others is doubted already, ``reconcile``) and only of sure ones: it costs a detector run. Where a
        die seen inside reads no face surely (``a_die_seen_from_afar``), the detector looks inside that die once more:
        a die far smaller than the square is seen from as far as the square was, its box loose."""
        sure = sure_confidence(self.min_confidence)
        if die.face.seen != 1 or die.face.confidence < sure:
            return die
        found, inside = self._read_inside(prepared, die.proposal, sure)
        face = one_holding_a_die(die.face, inside)
        afar = a_die_seen_from_afar(inside) if face is die.face else None
        if afar is not None:
            _, closer = self._read_inside(prepared, found[afar], sure)
            face = one_holding_a_die(die.face, closer)
        return replace(die, face=face)

    def _read_inside(self, prepared: Normalised, square: Proposal, sure: float) -> tuple[list[Proposal], list[FaceRead]]:
        """The dice the detector sees inside ``square`` that may show another face than one, and their reads."""
        return read_inside(self.classifier, prepared.bgr, propose_inside(prepared, self.proposer, square), sure)

    def _tray_look(self, prepared: Normalised, found: list[Proposal]) -> list[Proposal]:
        """Dice the empty tray's photo shows outside ``found`` that the classifier reads sure (``pipeline.tray``)."""
        candidates = uncovered_dice(prepared.grey, self._empty_region(), found, self.die_side_px or 0.0)
        if not candidates:
            return []
        faces = classify(self.classifier, prepared.bgr, candidates, relook_below=sure_confidence(self.min_confidence),
                         weak=[True] * len(candidates))  # at the calibrated size only
        return sure_rescues(candidates, faces, self.min_confidence)

    def _decided(self, prepared: Normalised, proposals: list[Proposal], dice: list[Die], look: str = "first") -> Reading:
        """``decide``'s reading of ``dice``; where it is ``ok``, asked again with the dice the second opinion doubts
        (``vision.second_opinion``): only a reading about to be acted on costs that model a run."""
        extra = {"candidates": len(proposals), "rejected": len(proposals) - len(dice), "detector": getattr(self.proposer.detector, "model_id", ""), "look": look}

        def decided(these: list[Die]) -> Reading:
            return decide(these, expected=self.expected_dice, min_confidence=self.min_confidence, camera_view=self.camera_view,
                          opposite=self.opposite, offset=prepared.offset, model_id=self.model_id, extra=extra)

        reading = decided(dice)
        if reading.status != OK:
            return reading
        if self.second_opinion is None:
            return reading
        doubted = self._second_opinion_doubts(prepared.bgr, dice)
        if not any(doubted):
            return reading
        return decided([replace(d, doubts=d.doubts + (SECOND_OPINION,)) if no else d for d, no in zip(dice, doubted)])

    def _second_opinion_doubts(self, bgr: np.ndarray, dice: list[Die]) -> list[bool]:
        """Per die, whether the second opinion doubts it (dice a taught head's gate is sure are the owner's are not asked)."""
        ask = asked(dice, self.classifier)
        put = [d for d, a in zip(dice, ask) if a]
        at = [replace(d.proposal, side=d.proposal.side * d.face.span) for d in put]  # where the classifier read each die
        cut = [d.face.first_crops if d.face.span == 1.0 else None for d in put]  # as the first look cut them, where it did
        answers = iter(self.second_opinion.doubted(bgr, at, [d.face.seen for d in put], cut)) if put else iter(())
        return [next(answers) if a else False for a in ask]

    def calibration_misfit(self, frame_size: tuple[int, ...]) -> dict | None:
        """Whether the tray's region and the empty tray's photo were set for a picture of another (height, width)
        than ``frame_size`` (``normalise.calibration_misfit``): such a frame is read as if no calibration were made."""
        if not self.tray_region and self.empty_tray is None:
            return None
        return calibration_misfit(frame_size, self.tray_region, None if self.empty_tray is None else self.empty_tray.shape)

    def _lens(self, prepared: Normalised) -> Lens | None:
        """The camera lens's bend for the pixels of ``prepared`` (None: the lens bends nothing)."""
        return Lens.of_frame(self.lens_distortion, *prepared.frame_size, prepared.offset, k2=self.lens_distortion_k2)

    def _empty_region(self) -> np.ndarray | None:
        """The empty tray cut to the tray region, as ``normalise`` cuts the frame."""
        if self.empty_tray is None or not self.tray_region:
            return self.empty_tray
        x, y, w, h = self.tray_region
        return self.empty_tray[y:y + h, x:x + w]

    def classify_crop(self, crop: np.ndarray) -> tuple[int, float]:
        """The face value and confidence of one image holding one die: read first as a crop, the die roughly centred
        (45-100 % of its short side); where that is not sure, also as a photo of one die, which the detector finds
        wherever and however small it lies (a phone's picture of one die on a table: read as a crop, a die at a
        quarter of the picture's side is mostly read wrong, though unsure). ``surer_answer`` keeps one of the two.
        A crop of a few pixels is enlarged first (``readable_crop``). A die whose marks the number cue reads as numbers
        or signs (``vision.number_cue``) is never sure: its confidence stays under the line, as an unsure photo's; so is
        a sure one the second opinion doubts (``vision.second_opinion``)."""
        crop = readable_crop(crop)  # the photo look below reads the crop as enlarged too
        face = classify_crop(self.classifier, crop)
        unsure = round(self.min_confidence - CONFIDENCE_MARGIN, 6)
        if self._shows_numbers(crop):
            seen, confidence = surer_answer(face.seen, face.confidence, self.as_photo_of_one_die().read(crop), self.min_confidence)
            return seen, min(confidence, unsure)
        if face.confidence >= sure_confidence(self.min_confidence):
            if self.second_opinion is not None and self._second_opinion_doubts(crop, [Die(_filling(crop), face, ())])[0]:
                return face.seen, min(face.confidence, unsure)
            return face.seen, face.confidence
        return surer_answer(face.seen, face.confidence, self.as_photo_of_one_die().read(crop), self.min_confidence)

    def _shows_numbers(self, crop: np.ndarray) -> bool:
        """Whether the number cue reads the die of a crop, cut as ``classify_crop`` cuts it filling the crop, as
        showing numbers or signs."""
        if self.number_cue is None:
            return False
        [die] = flag_numbers_by_look([Die(_filling(crop), FaceRead(1, 0.0, 0.0, 0.0), ())], crop, self.classifier, self.number_cue)
        return bool(die.doubts)

    def as_photo_of_one_die(self) -> "PipelineReader":
        """The reader of an image of one die that is no frame of this tray: no calibration, one die, the face seen."""
        return self._but(camera_view="above", die_side_px=0, tray_region=None, empty_tray=None, leaning_cue=None,
                         expected_dice=1, on_dice=None)

    def annotate(self, frame: np.ndarray, reading: Reading) -> np.ndarray:
        """A copy of the frame with each die's box and values, and the status, drawn on it."""
        return annotate(frame, reading, self.min_confidence)


def _filling(crop: np.ndarray) -> Proposal:
    """The die of a crop as ``classify_crop`` cuts it: centred, filling the crop's short side."""
    h, w = crop.shape[:2]
    return Proposal(w / 2, h / 2, min(h, w) / MARGIN, 0.0, 1.0)
