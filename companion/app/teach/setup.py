"""The camera set-up and the guided "show each face" capture, as the tablet's set-up page uses them.

Everything here shows or reads the tray, so it is refused while a game is in
progress (the dice of a round are hidden, RULES.md R13); the web layer serves
it only to a device that showed the table PIN. It stores what ``elephants-bluff
calibrate`` stores (``camera.tray_region``, ``camera.empty_tray`` and the
camera's locked exposure, ``reader.die_side_px``, the lens's bend) in ``config.toml`` and
switches the running reader to it at once. A face shown on the tray is added to
the table's own dataset labelled with the face the camera SAW: the opposite of
the TOP face the player put up (the page always speaks of the top face).

Each refusal is a sentence a player understands, with a ``code`` the page
translates; nothing is saved on a refusal.
"""

from __future__ import annotations

import time
from typing import Any

import cv2
import numpy as np

from companion.core.dice import STANDARD_OPPOSITE, is_face, opposite_face
from companion.core.errors import BadRequest, ElephantsBluffError, HardwareError, NotAllowed

#: The preview's width at most, in pixels (the page asks about once a second).
PREVIEW_WIDTH = 640
#: Shots of each face the guided capture asks for.
SHOTS_PER_FACE = 4


class SetupRefused(ElephantsBluffError, ValueError):
    """A set-up step that cannot be done with what the camera sees now; ``code`` for the page, nothing saved."""

    status = 422

    def __init__(self, message: str, code: str, **params: Any) -> None:
        super().__init__(message, code=code)
        self.params = params

    def to_json(self) -> dict[str, Any]:
        return {**super().to_json(), "params": self.params}


def refuse_during_a_game(services: Any) -> None:
    """The camera shows the dice: no set-up while a game is in progress (R13)."""
    if services.referee.current_game_id() is not None:
        raise NotAllowed("A game is in progress: the camera set-up shows the tray and its dice, so it opens only between games.", code="game_in_progress")


def _loop(services: Any) -> Any:
    loop = services.dice_source
    if getattr(loop, "frame_source", None) is None or getattr(loop, "reader", None) is None:
        raise HardwareError("There is no camera to set up: the companion is playing without one.", code="no_camera")
    return loop


def grab(services: Any) -> np.ndarray:
    """One frame of the tray now, lit as at a Bluff (``CaptureLoop.set_up_frame``)."""
    refuse_during_a_game(services)
    loop = _loop(services)
    try:
        frame = loop.set_up_frame()  # the ring lit, as at a Bluff: what is set up is what play sees
    except ElephantsBluffError:
        raise
    except Exception as exc:  # a camera backend's own error: said in words, never a crash
        raise HardwareError(f"The camera gave no picture ({exc.__class__.__name__}); check its cable and try again.", code="no_frame") from None
    if frame is None or getattr(frame, "ndim", 0) not in (2, 3):
        raise HardwareError("The camera gave no picture; check its cable and try again.", code="no_frame")
    return frame if frame.ndim == 3 else cv2.cvtColor(frame, cv2.COLOR_GRAY2BGR)


def preview_jpeg(services: Any) -> bytes:
    """The tray now, small, as a JPEG (the page's live preview)."""
    frame = grab(services)
    h, w = frame.shape[:2]
    if w > PREVIEW_WIDTH:
        frame = cv2.resize(frame, (PREVIEW_WIDTH, round(h * PREVIEW_WIDTH / w)), interpolation=cv2.INTER_AREA)
    return cv2.imencode(".jpg", frame, [cv2.IMWRITE_JPEG_QUALITY, 75])[1].tobytes()


def check(services: Any) -> dict[str, Any]:
    """Exposure and focus hints on the tray now: codes the page translates, the measures, and the frame's size; and
    ``calibration`` where the region or the empty tray kept were set for another picture (a camera since switched to
    another resolution, a region typed by hand); ``lens`` where the camera has a wide lens whose bend was never
    measured; ``region_small`` where the region kept is narrower than the die."""
    from companion.app.services import calibration_problem, lens_problem
    from vision.calibrate import MIN_SHARPNESS, frame_problems

    frame = grab(services)
    problems, measures = frame_problems(frame)  # no reader: dice on the tray are no hint here, the check is any time
    hints = [{"code": p.code, "message": p.message} for p in problems]
    h, w = frame.shape[:2]
    stale = calibration_problem(_loop(services).reader, frame.shape)
    if stale:  # a region or an empty tray kept for another picture: every reading goes to the table until set again
        hints.append({"code": "calibration", "message": stale, "frame": [w, h]})
    unmeasured = lens_problem(_loop(services).frame_source, _loop(services).reader)
    if unmeasured:  # the Camera Module 3 Wide, its bend never measured: flat dice at the tray's edge go to the table
        hints.append({"code": "lens", "message": unmeasured})
    small = getattr(_loop(services).reader, "region_problem", None)
    if small:  # a region typed by hand, or drawn before the die was measured: no die is ever found in it
        hints.append({"code": "region_small", "message": small})
    return {"hints": hints, "notes": measures.get("notes", []), "brightness": measures["mean"], "sharpness": measures["sharpness"],
            "min_sharpness": MIN_SHARPNESS, "glare": measures["burnt"], "suggested_region": measures["tray_region"],
            "region": list(services.settings.get("camera.tray_region", []) or []), "frame": [w, h],
            "die_side_px": services.settings.get("reader.die_side_px", 0), "empty_tray": bool(services.settings.get("camera.empty_tray", "")),
            "lens_distortion": services.settings.get("camera.lens_distortion", 0.0),
            "lens_distortion_k2": services.settings.get("camera.lens_distortion_k2", 0.0),
            "shots_per_top": shots_per_top(services), "shots_wanted": SHOTS_PER_FACE}


def _apply(services: Any, updates: dict[str, Any], empty_tray_png: bytes | None = None) -> None:
    """Store ``updates`` in config.toml, with the empty tray's photo they were taken with where one is given (both or
    neither), and switch the running reader to them (the same model stays)."""
    from vision.calibrate import store, store_with_empty_tray
    from vision.reader import load_reader

    if empty_tray_png is None:
        store(services.instance, updates)
    else:
        store_with_empty_tray(services.instance, empty_tray_png, updates)
    settings = services.settings.with_overrides(**{k.replace(".", "__", 1): v for k, v in updates.items()})
    settings.path = services.settings.path or services.instance / "config.toml"
    reader = load_reader(settings)
    loop = _loop(services)
    from companion.app.services import reader_problems

    stale = reader_problems(loop.reader)  # what the reader it replaces did without: said no more unless still true
    services.problems[:] = [p for p in services.problems if p not in stale] + reader_problems(reader)
    loop.reader = reader
    services.settings = settings
    services.model_id = reader.model_id


def set_region(services: Any, region: Any) -> dict[str, Any]:
    """Store the tray's region ``[x, y, width, height]`` in the frame's pixels; ``[]`` for the whole frame. A region
    reaching outside the picture (one kept for another picture, sent back) is refused with ``region_outside``; one
    smaller than one die (``reader.die_side_px``, or 16 pixels before a die is measured) holds no dice, so every reading
    would find none: refused with ``region_small`` (the page draws a region by dragging; a tap makes a tiny one)."""
    from vision.images import MIN_SIDE
    from vision.pipeline.normalise import calibration_misfit

    frame = grab(services)
    h, w = frame.shape[:2]
    if region != []:
        if not isinstance(region, list) or len(region) != 4 or not all(isinstance(v, int) and not isinstance(v, bool) for v in region):
            raise BadRequest("'region' is [x, y, width, height] in whole pixels of the camera's picture, or [] for the whole picture.")
        if calibration_misfit(frame.shape[:2], region) is not None:  # the reader's own rule
            raise SetupRefused(f"The tray's region must lie inside the camera's picture ({w}×{h}): draw it again on the picture.",
                               "region_outside", frame=f"{w}×{h}")
        die = int(services.settings.get("reader.die_side_px", 0) or 0)
        if min(region[2], region[3]) < max(MIN_SIDE, die):  # a tap on the picture, not a box drawn round the tray
            raise SetupRefused(f"The tray's region ({region[2]}×{region[3]} pixels) is smaller than "
                               + (f"one die ({die} pixels)" if die > MIN_SIDE else f"{MIN_SIDE}×{MIN_SIDE} pixels")
                               + ": draw it round the whole tray.", "region_small", die=die)
    _apply(services, {"camera.tray_region": region})
    return check(services)


def store_empty_tray(services: Any) -> dict[str, Any]:
    """The empty tray's photo as the reader's reference, with the region found on it unless one that fits the picture
    is set (one kept for another resolution is replaced); exposure locked where the camera can."""
    from vision.calibrate import BRIGHT, DARK, dice_left_on, empty_tray_name, frame_problems, not_empty
    from vision.pipeline.normalise import calibration_misfit

    frame = grab(services)
    problems, measures = frame_problems(frame)
    blocking = [p for p in problems if p.code in (DARK, BRIGHT)]
    if blocking:
        raise SetupRefused(blocking[0].message, blocking[0].code)
    left = dice_left_on(frame, _loop(services).reader)
    if left:
        # where each lies ([x, y, w, h] in the camera's pixels): the page rings it on the preview, so what the reader
        # takes for a die on a tray the player sees empty (a crumb, a reflection) can be found
        raise SetupRefused(not_empty(left).message, "not_empty", n=len(left), at=[[int(v) for v in die.box] for die in left])
    png = cv2.imencode(".png", cv2.cvtColor(frame, cv2.COLOR_BGR2GRAY))[1].tobytes()
    updates: dict[str, Any] = {"camera.empty_tray": empty_tray_name(png)}
    region = services.settings.get("camera.tray_region")
    kept_tray = getattr(_loop(services).reader, "empty_tray", None)  # the empty tray's photo the reader holds now
    kept_for = None if kept_tray is None else kept_tray.shape[:2]
    if not region or calibration_misfit(frame.shape[:2], region, kept_for) is not None:
        # none kept, or one kept for another picture: one outside this one, or kept with an empty tray of another size
        # (a smaller picture's region lies inside a larger one, a quarter of it)
        updates["camera.tray_region"] = measures["tray_region"]
    meta_fn = getattr(_loop(services).frame_source, "metadata", None)
    if meta_fn is not None:
        meta = meta_fn() or {}
        if "ExposureTime" in meta:
            updates["camera.exposure_us"] = int(meta["ExposureTime"])
        if "AnalogueGain" in meta:
            updates["camera.analogue_gain"] = round(float(meta["AnalogueGain"]), 3)
    _apply(services, updates, png)
    return {"stored": sorted(updates), **check(services)}


def measure_lens(services: Any) -> dict[str, Any]:
    """"Lay the chessboard": the bend of the camera's wide lens becomes ``camera.lens_distortion`` and
    ``camera.lens_distortion_k2`` (what ``calibrate --lens`` stores), so flat dice near the tray's edge are not taken
    for leaning ones. The die's size was measured through the old bend, so ``measure_die_again`` says when one is kept
    (the page asks for it again)."""
    from vision.calibrate import measure_lens as measure

    frame = grab(services)
    bend, problems = measure(frame)
    if bend is None:
        raise SetupRefused(problems[0].message, problems[0].code)
    return _store_lens(services, *bend)


def forget_lens(services: Any) -> dict[str, Any]:
    """The camera's lens draws straight lines straight (another camera, or a bend measured on a board that was not
    flat): ``camera.lens_distortion`` and ``camera.lens_distortion_k2`` back to 0."""
    refuse_during_a_game(services)
    _loop(services)
    return _store_lens(services, 0.0, 0.0)


def _store_lens(services: Any, k: float, k2: float) -> dict[str, Any]:
    """The lens's bend stored (the running reader takes it), and the page's answer: ``measure_die_again`` where a die
    size is kept, measured through another bend than this one (a bend measured or forgotten as it was changes none)."""
    before = (services.settings.get("camera.lens_distortion", 0.0), services.settings.get("camera.lens_distortion_k2", 0.0))
    _apply(services, {"camera.lens_distortion": k, "camera.lens_distortion_k2": k2})
    changed = (float(before[0]), float(before[1])) != (float(k), float(k2))
    return {"lens_distortion": k, "lens_distortion_k2": k2, "measure_die_again": changed and bool(services.settings.get("reader.die_side_px", 0))}


def _one_die(services: Any, frame: np.ndarray, top: int | None) -> Any:
    """The reading of a frame that must show exactly one die (read without the calibrated die size)."""
    reader = _loop(services).reader.with_expected(1)
    reading = reader.read(frame)
    shown = f"a die with {top} on top" if top else "one die"
    if not reading.dice:
        raise SetupRefused(f"No die is on the tray: put {shown} anywhere in the tray, then try again.", "no_die", top=top)
    if len(reading.dice) > 1:
        raise SetupRefused(f"There are {len(reading.dice)} dice on the tray: leave only {shown}, then try again.", "too_many", n=len(reading.dice), top=top)
    if any(c.get("code") in ("cut_off", "leaning") for c in reading.reasons):
        raise SetupRefused("The die is cut off by the picture's edge or is not lying flat: lay it flat in the middle of the tray.", "not_flat", top=top)
    return reading


def measure_die(services: Any) -> dict[str, Any]:
    """"Place one die": its side in pixels becomes ``reader.die_side_px``."""
    from vision.calibrate import measure_die_side

    frame = grab(services)
    reading = _one_die(services, frame, None)
    side, _, _ = measure_die_side(frame, _loop(services).reader.with_die_side(0).with_expected(1))  # the die's own side, not its box's
    if side is None or side < 8:
        raise SetupRefused("The die cannot be measured: lay it flat in the middle of the tray, away from glare, then try again.", "not_measured")
    _apply(services, {"reader.die_side_px": int(side)})
    return {"die_side_px": int(side), "box": [int(v) for v in reading.dice[0].box]}


def capture_face(services: Any, top: Any) -> dict[str, Any]:
    """One shot of the guided capture: one die with ``top`` on top; its crop joins the table's dataset, labelled as the camera saw it."""
    from companion.app.teach.dataset import OwnerDataset, seen_face

    if not is_face(top):
        raise BadRequest("'top' is the face on top of the die, a whole number from 1 to 6.")
    frame = grab(services)
    reading = _one_die(services, frame, top)
    die = reading.dice[0]
    view = services.settings.get("camera.camera_view", "below")
    opposite = services.settings.get("reader.opposite_faces", list(STANDARD_OPPOSITE))
    dataset = OwnerDataset(services.instance, max_crops=services.settings.get("teach.max_crops", 3000), camera_view=view, opposite=opposite)
    shot = f"s-{time.strftime('%Y%m%dT%H%M%S', time.gmtime())}-{int(time.time() * 1000) % 1000:03d}"
    dataset.add(shot, frame, [list(die.box)], [top], "setup", reading.model_id)
    read_top = die.top if view == "below" else die.seen
    return {"top": top, "seen": seen_face(top, view, opposite), "read_top": read_top, "confidence": round(float(die.confidence), 3),
            "agrees": read_top == top, "box": [int(v) for v in die.box], "shots_per_top": shots_per_top(services, dataset),
            "shots_wanted": SHOTS_PER_FACE}


def shots_per_top(services: Any, dataset: Any = None) -> dict[str, int]:
    """How many shots of "Show each face" the table's dataset keeps for each top face ("1" to "6"): the page shows
    them after a reload or on another tablet too, not only after its own shot."""
    from companion.app.teach.dataset import OwnerDataset

    view = services.settings.get("camera.camera_view", "below")
    opposite = services.settings.get("reader.opposite_faces", list(STANDARD_OPPOSITE))
    if dataset is None:
        dataset = OwnerDataset(services.instance, max_crops=services.settings.get("teach.max_crops", 3000), camera_view=view, opposite=opposite)
    shown = {str(v): 0 for v in range(1, 7)}
    for row in dataset.rows():
        if row.challenge.startswith("s-"):
            t = opposite_face(row.value, opposite) if view == "below" else row.value
            shown[str(t)] += 1
    return shown
