"""Stage 6, decide: ``ok`` only when every die is read for sure, else ``uncertain`` with a reason per die.

Every threshold has a margin around it: a die read within ``CONFIDENCE_MARGIN``
above the confidence the settings ask for, or whose runner-up face came within
``FACE_GAP`` of it, counts as unsure. So the tiny float differences between
two machines (this one and the Pi's arm64 CPU) can never flip a verdict: a
reading near a knife edge goes to the table (RULES.md R14) on both.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable
from dataclasses import replace
from typing import Any, Sequence

from companion.core.dice import opposite_face
from companion.core.reading import OK, UNCERTAIN, DieReading, Reading
from vision.pipeline.normalise import flat_in_words
from vision.pipeline.reconcile import SIZE_TOLERANCE, Die

#: A die is sure only this far above ``reader.min_confidence``.
CONFIDENCE_MARGIN = 0.02
#: ... and only when the runner-up face is at least this far below it.
FACE_GAP = 0.5


def sure_confidence(min_confidence: float) -> float:
    """The confidence a face must reach to count as sure: ``reader.min_confidence`` and its margin above it.

    Every place that calls a face sure asks this, so the margin is one number.

    >>> round(sure_confidence(0.95), 2)
    0.97
    """
    return min_confidence + CONFIDENCE_MARGIN


def is_sure(confidence: float, runner_up: float, min_confidence: float) -> bool:
    """Whether a face read with ``confidence`` (runner-up ``runner_up``) is sure, margins included.

    >>> is_sure(0.99, 0.005, 0.95), is_sure(0.96, 0.01, 0.95), is_sure(0.4, 0.35, 0.0)
    (True, False, False)
    """
    return confidence >= sure_confidence(min_confidence) and confidence - runner_up >= FACE_GAP


def decide(dice: Sequence[Die], *, expected: int, min_confidence: float, camera_view: str, opposite: Sequence[int],
           offset: tuple[int, int], model_id: str, extra: dict[str, Any] | None = None) -> Reading:
    """The ``Reading`` of the reconciled dice: boxes in whole-frame pixels, tops from what the camera saw."""
    ox, oy = offset
    out = []
    for d in dice:
        p = d.proposal
        doubts = list(d.doubts)
        if (d.face.overturned or not is_sure(d.face.confidence, d.face.runner_up, min_confidence)) and "low_confidence" not in doubts:
            doubts.append("low_confidence")
        top = opposite_face(d.face.seen, opposite) if camera_view == "below" else d.face.seen
        half = p.side / 2
        box = (int(round(p.cx - half)) + ox, int(round(p.cy - half)) + oy, int(round(p.side)), int(round(p.side)))
        out.append(DieReading(d.face.seen, top, d.face.confidence, box, tuple(doubts)))
    codes: list[dict[str, Any]] = []
    if len(out) != expected:
        codes.append({"code": "count", "found": len(out), "expected": expected})
    codes += [{"code": doubt} for doubt in ("cut_off", "leaning", "marks", "second_opinion", "unlike") if any(doubt in d.doubts for d in out)]
    low = [d.confidence for d in out if "low_confidence" in d.doubts]
    if low:
        codes.append({"code": "low_confidence", "n": len(low), "lowest": round(min(low), 2)})
    if codes:
        return Reading(UNCERTAIN, tuple(out), reason="; ".join(reason_in_words(c) for c in codes), model_id=model_id,
                       extra=extra or {}, reasons=tuple(codes), sure_at=min_confidence)
    return Reading(OK, tuple(out), model_id=model_id, extra=extra or {}, sure_at=min_confidence)


def off_the_calibrated_size(unprompted: Reading, short: Reading, die_side_px: float, expected: int,
                            measured: Callable[[], list[float] | None] | None = None) -> Reading | None:
    """Where tray mode's reading at the calibrated size, ``short``, found fewer than the ``expected`` dice and the look
    that knew no size, ``unprompted``, found more of them, most of the expected dice (or where ``short`` found them
    all but is not sure, and ``unprompted`` is sure of every die and sees them bigger), whose median side is more than
    ``SIZE_TOLERANCE`` off ``die_side_px``: that reading, never ok, with the reason ``size`` (the dice's side and the
    calibrated one, in pixels) beside its own. Dice of another size than ``calibrate`` measured (other dice, a camera
    moved) are not seen at the calibrated size; the table then confirms the dice boxed where they are, each read
    sure offered as read, and is told to measure the die again, also where the unprompted look doubted one of them
    or missed one (a die leaning, read unsure or cut wider than its neighbours keeps its own reason). Else None.
    Where ``short`` missed dice, the sides compared are ``measured``'s where it gives them: ``unprompted``'s dice
    measured as ``calibrate --dice`` measures them (``shape.die_sides``), the scale ``die_side_px`` is in; a
    detector's box of a real die is some tenths off that measure either way, and a die missed at a size it has
    would be told to be another (their boxes where the measures disagree, as touching dice do). Where ``short`` found
    every die, their boxes, bigger only (a die smaller than told is cut with the tray around it, not in parts).

    >>> def r(status, *sides): return Reading(status, tuple(DieReading(2, 5, 0.99, (0, 0, s, s)) for s in sides), sure_at=0.95)
    >>> off_the_calibrated_size(r(OK, 180, 170, 176), r(UNCERTAIN), 110, 3).reasons
    ({'code': 'size', 'seen_px': 176, 'calibrated_px': 110},)
    >>> off_the_calibrated_size(r(OK, 120, 118, 121), r(UNCERTAIN), 110, 3) is None  # the calibrated size: no news
    True
    >>> off_the_calibrated_size(r(UNCERTAIN, 180, 260, 176), r(UNCERTAIN), 110, 3).reasons[-1]['seen_px']  # one cut wider
    180
    >>> [c['code'] for c in off_the_calibrated_size(r(UNCERTAIN, 180, 170), r(UNCERTAIN), 110, 3).reasons]  # one missed
    ['size']
    >>> off_the_calibrated_size(r(UNCERTAIN, 180), r(UNCERTAIN), 110, 3) is None  # one of three is no size to go by
    True
    >>> off_the_calibrated_size(r(UNCERTAIN, 180, 170), r(UNCERTAIN, 110, 112), 110, 3) is None  # no more than at the size
    True
    >>> off_the_calibrated_size(r(OK, 180, 170, 176), r(UNCERTAIN, 60, 60, 60), 60, 3).reasons[-1]['seen_px']  # parts at 60
    176
    >>> off_the_calibrated_size(r(UNCERTAIN, 180, 170, 176), r(UNCERTAIN, 60, 60, 60), 60, 3) is None  # not sure of them
    True
    >>> off_the_calibrated_size(r(OK, 60), r(UNCERTAIN, 96), 96, 1) is None  # smaller than told: its own doubt stands
    True
    >>> off_the_calibrated_size(r(UNCERTAIN, 70, 72), r(UNCERTAIN), 110, 3, lambda: [108.0, 112.0]) is None  # boxed small, measured at the size
    True
    >>> off_the_calibrated_size(r(UNCERTAIN, 110, 112), r(UNCERTAIN), 110, 3, lambda: [60.0, 62.0]).reasons[-1]['seen_px']
    61
    """
    found = unprompted.dice
    if not die_side_px or 2 * len(found) <= expected:
        return None
    if len(short.dice) >= expected:  # cut at the calibrated size, parts of bigger dice can pass for every die
        # only a sure reading of every die, bigger: a die smaller than told is cut with the tray around it, not in parts
        seen = statistics.median(max(d.box[2:]) for d in found)
        if unprompted.status != OK or len(found) != expected or seen < die_side_px:
            return None
    elif not missed_at_the_size(unprompted, short, expected):
        return None
    else:
        sides = measured() if measured is not None else None
        seen = statistics.median(sides or [max(d.box[2:]) for d in found])
    if abs(seen / die_side_px - 1) <= SIZE_TOLERANCE:
        return None
    code = {"code": "size", "seen_px": int(round(seen)), "calibrated_px": int(round(die_side_px))}
    codes = (*unprompted.reasons, code)
    return replace(unprompted, status=UNCERTAIN, reasons=codes, reason="; ".join(reason_in_words(c) for c in codes))


def missed_at_the_size(unprompted: Reading, short: Reading, expected: int) -> bool:
    """Whether tray mode's reading at the calibrated size, ``short``, missed dice the look that knew no size,
    ``unprompted``, found: fewer than the ``expected`` dice there, more unprompted, and those most of the expected.

    >>> def r(n): return Reading(UNCERTAIN, tuple(DieReading(2, 5, 0.99, (0, 0, 9, 9)) for _ in range(n)), sure_at=0.95)
    >>> missed_at_the_size(r(3), r(1), 3), missed_at_the_size(r(1), r(0), 3), missed_at_the_size(r(3), r(3), 3)
    (True, False, False)
    """
    found = len(unprompted.dice)
    return len(short.dice) < expected and found > len(short.dice) and 2 * found > expected


def found_on_a_second_look(unprompted: Reading, short: Reading) -> Reading:
    """Where tray mode's reading at the calibrated size, ``short``, missed dice that the look knowing no size,
    ``unprompted``, found at that size (``missed_at_the_size``; not ``off_the_calibrated_size``): that look's
    reading, never ok, with the reason ``second_look`` {n: the dice it found more} beside its own. The calibrated
    size is tray mode's check that a die is one; a die it missed (on the cup's rim, half hidden, of another look)
    is offered where it lies for the table to confirm, each read as that look read it.

    >>> die = DieReading(2, 5, 0.99, (0, 0, 9, 9))
    >>> found_on_a_second_look(Reading(OK, (die, die, die), sure_at=0.95), Reading(UNCERTAIN, (die,), sure_at=0.95)).reasons
    ({'code': 'second_look', 'n': 2},)
    """
    codes = (*unprompted.reasons, {"code": "second_look", "n": len(unprompted.dice) - len(short.dice)})
    return replace(unprompted, status=UNCERTAIN, reasons=codes, reason="; ".join(reason_in_words(c) for c in codes))


def not_as_calibrated(reading: Reading, misfit: dict[str, Any]) -> Reading:
    """A reading made without a calibration that does not fit the camera's picture (``normalise.calibration_misfit``):
    never ok, with the reason ``calibration`` beside its own, so the table confirms and hears what to set up again.

    >>> die = DieReading(2, 5, 0.99, (0, 0, 9, 9))
    >>> r = not_as_calibrated(Reading(OK, (die,) * 3, sure_at=0.95), {"code": "calibration", "frame": [640, 480], "empty_tray": [1280, 960]})
    >>> r.status, r.reason
    ('uncertain', "the camera's picture is 640x480 but the empty tray's photo is 1280x960: read without the set-up; set up the camera again (calibrate)")
    """
    words = reason_in_words(misfit)
    return replace(reading, status=UNCERTAIN, reasons=(*reading.reasons, misfit),
                   reason=f"{reading.reason}; {words}" if reading.reason else words)


def reason_in_words(code: dict[str, Any]) -> str:
    """A reason code (``companion.core.reading.REASON_CODES``) as the English the logs and the command line show.

    >>> reason_in_words({"code": "count", "found": 2, "expected": 3})
    'found 2 dice, expected 3'
    """
    kind = code["code"]
    if kind == "count":
        return f"found {code['found']} {'die' if code['found'] == 1 else 'dice'}, expected {code['expected']}"
    if kind == "low_confidence":
        return f"low confidence on {code['n']} {'die' if code['n'] == 1 else 'dice'} (lowest {code['lowest']:.2f})"
    if kind in ("dark", "blank"):
        return flat_in_words(kind)
    if kind == "second_look":
        return f"{code['n']} {'die was' if code['n'] == 1 else 'dice were'} found only on a second look, not at the calibrated size"
    if kind == "size":
        how = "bigger" if code["seen_px"] > code["calibrated_px"] else "smaller"
        return f"the dice look {how} than calibrated ({code['seen_px']} px, not {code['calibrated_px']}): measure the die again (calibrate --dice)"
    if kind == "calibration":  # the annotated photo's font has no "×" or brackets
        frame = "x".join(str(v) for v in code["frame"])
        made = (f"but the empty tray's photo is {'x'.join(str(v) for v in code['empty_tray'])}" if "empty_tray" in code
                else "and the tray's region ({}, {}, {} by {}) does not lie inside it".format(*code["region"]))
        return f"the camera's picture is {frame} {made}: read without the set-up; set up the camera again (calibrate)"
    return {"cut_off": "a die is cut off by the frame's edge", "leaning": "a die looks leaning or misshapen (not flat on the tray?)",
            "marks": "a die's marks look like numbers or signs, not the dots this reader knows",
            "second_opinion": "a second check does not read a die the same (a bead or a game piece taken for a die?)",
            "unlike": "a die does not look like the others (another die, or something else on the tray?)"}[kind]
