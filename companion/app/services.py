"""Builds the running companion from its settings: store, dice source, referee, table.

This is the one place that knows which camera, reader and GPIO backend are in
use; the referee and the web layer only see the small interfaces.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from companion.core.capture import DiceSource
from companion.core.errors import HardwareError
from companion.core.files import unwritable
from companion.app.referee import Referee
from companion.app.settings import Settings
from companion.app.store import GameStore
from companion.core.reading import UNCERTAIN, Reading
from firmware.preflight import Finding, camera_failure_code

log = logging.getLogger(__name__)


@dataclass
class Services:
    """Everything a request may need, built once per app."""

    settings: Settings
    instance: Path
    referee: Referee
    dice_source: DiceSource
    simulate: bool
    sim_table: Any = None  # has set_next_values(values) in simulation
    table: Any = None  # firmware TableController (buttons and lights), None without GPIO
    gpio_name: str = "none"
    model_id: str = "none"
    problems: list[Finding] = field(default_factory=list)  # start-up problems shown by /api/health (``problem``)
    owner_dataset: Any = None  # teach.dataset.Collector: the crops of every Bluff the table agreed
    model_follower: Any = None  # teach.follow.ModelFollower (the app starts it): the reader follows a terminal's teach or rollback

    def close(self) -> None:
        for helper in (self.model_follower, self.owner_dataset):
            if helper is not None:
                helper.close()
        for part in (self.table, self.dice_source):
            _close_quietly(part)  # one failing part must not keep the others open
        self.referee.close()


def build_services(instance: Path, settings: Settings, *, simulate: bool, dice_source: DiceSource | None = None, sweep: bool = True) -> Services:
    """Open the log, the camera and reader, the referee and the table.

    ``serve --simulate`` always uses the simulated table's camera and gpiozero's
    mock pins, whatever the file says. ``dice_source`` replaces the camera and
    reader entirely (the referee's own tests, where the rules are under test).
    ``sweep``: tidy the photos folder as a start does; ``check`` does not, as it may run beside a running companion
    whose Bluff's photo waits, pending, for its log entry.
    """
    instance.mkdir(parents=True, exist_ok=True)
    store = GameStore(instance / settings["storage.database"])
    frames_dir = instance / settings["storage.frames_dir"]
    problems: list[Finding] = []
    model_id = "none"
    if dice_source is None:
        dice_source, model_id = _build_camera(settings, simulate, problems)
    referee = Referee(store, dice_source, frames_dir=frames_dir, default_path_length=settings["game.path_length"])
    referee.archive.configure(keep=settings["storage.frames_keep"], keep_days=settings["storage.frames_days"])
    if sweep:
        referee.archive.sweep(referee.names_photo)  # photos of a write cut off by a kill, and the oldest past the limits
    try:
        table = _build_table(settings, referee, dice_source, simulate, problems)
    except Exception:
        _close_quietly(dice_source)
        store.close()
        raise
    if table is not None:
        table.add_warning_listener(lambda warning: referee.notify("warning", warning))
    from companion.app.teach.dataset import attach

    owner_dataset = attach(referee, instance, settings)
    return Services(
        settings=settings,
        instance=instance,
        referee=referee,
        dice_source=dice_source,
        simulate=simulate,
        sim_table=dice_source if simulate else None,
        table=table,
        gpio_name=table.pin_factory_name if table is not None else "none",
        model_id=model_id,
        problems=problems,
        owner_dataset=owner_dataset,
    )


def _build_camera(settings: Settings, simulate: bool, problems: list[Finding]) -> tuple[DiceSource, str]:
    """Frame source → reader → capture loop (light, wait for still dice, read).

    A missing camera or model does not stop the companion: it is reported by
    ``/api/health`` and every Bluff goes to ``confirm`` with the reason (R14).
    The simulated camera renders settled dice in every frame, so its loop takes
    one frame instead of waiting for the dice to lie still.
    """
    from firmware.capture import CaptureLoop
    from vision.reader import load_reader
    from vision.sources import build_frame_source

    if simulate:
        settings = settings.with_overrides(camera__backend="simulated")
    frames = build_frame_source(settings)
    try:
        frames.open()
    except HardwareError as exc:
        log.error("camera: %s", exc.message)
        problems.append(problem(camera_failure_code(exc, "open"), "camera", exc.message))
    try:
        reader: Any = load_reader(settings)
        model_id = reader.model_id
    except HardwareError as exc:
        log.error("reader: %s", exc.message)
        reader, model_id = _NoModel(exc.message), "missing"
    problems += reader_problems(reader)
    return CaptureLoop.from_settings(settings, frames, reader, wait_for_still=not simulate), model_id


def problem(code: str, part: str, message: str, **params: Any) -> Finding:
    """One thing ``/api/health`` says is wrong: its English ``message``, and for a page in the player's language its
    ``code`` and the names and numbers in it (``params``; ``detail``, the message itself, for the parts a page shows
    as the server says them: a camera's or a file's own error)."""
    return Finding(code, part, message, "", {"detail": message, **params})


def reader_problems(reader: Any) -> list[Finding]:
    """What the reader does without, for ``/api/health`` and ``check`` (code ``reader``, its part in ``reader_part``):
    its model files that cannot be loaded (every reading then uncertain), a taught model that cannot (the shipped one
    reads), a cue or the second opinion missing or made for another model, the calibrated empty tray's photo missing
    or unreadable, a tray region narrower than the measured die."""
    return [problem("reader", "reader", text, reader_part=part) for part, text in reader_problems_by_part(reader)]


#: The reader's parts whose problems ``reader_problems_by_part`` names, by the attribute that holds each one's (and
#: ``model``, its model files, and ``taught_model``, the instance's taught face model, which its classifier holds).
READER_PARTS = {"leaning_cue": "leaning_problem", "number_cue": "number_problem", "second_opinion": "second_opinion_problem",
                "empty_tray": "empty_tray_problem", "region": "region_problem"}


def reader_problems_by_part(reader: Any) -> list[tuple[str, str]]:
    """What the reader does without, each with the part it is about: ``model`` (a model file it cannot load, so it
    reads nothing), ``taught_model`` (the taught face model it cannot load, so the shipped one reads), or one of
    ``READER_PARTS``, so that a page can say which in the player's language."""
    if isinstance(reader, _NoModel):
        return [("model", reader.why)]
    found = [("taught_model", getattr(getattr(reader, "classifier", None), "load_problem", None))]
    found += [(part, getattr(reader, name, None)) for part, name in READER_PARTS.items()]
    return [(part, problem) for part, problem in found if problem]


def calibration_problem(reader: Any, frame_size: tuple[int, ...] | None) -> str | None:
    """Whether the camera's set-up (the tray's region, the empty tray's photo) was made for another picture than one
    of ``frame_size`` (height, width), in words for ``check``, the set-up page and ``/api/health``; every reading is
    then made without it and goes to the table (the reason ``calibration``). None when it fits, when the reader keeps
    no set-up, or when no frame was seen yet (``frame_size`` None)."""
    misfit_of = getattr(reader, "calibration_misfit", None)
    misfit = misfit_of(tuple(frame_size[:2])) if misfit_of is not None and frame_size is not None and len(frame_size) >= 2 else None
    if misfit is None:
        return None
    made = (f"the empty tray's photo is {'×'.join(map(str, misfit['empty_tray']))}" if "empty_tray" in misfit
            else f"the tray's region {misfit['region']} does not lie inside this picture")
    return (f"The camera's picture is {'×'.join(map(str, misfit['frame']))}, not the one its set-up was made for ({made}), "
            "so every reading goes to the table: set the tray's region and the empty tray again (the set-up page, or "
            "elephants-bluff calibrate).")


def current_problems(services: Services, camera_status: str) -> list[Finding]:
    """Everything ``/api/health`` says is wrong now, each with its code: the start-up's problems (the camera, the
    buttons, the reader), the buttons' worker stopped since, the camera's own health (``camera_status``, its ``health()``: asked once a request), the
    last capture's and the photos folder's problems (the referee keeps them until a reading or a save works again),
    and a set-up made for another picture."""
    found = list(services.problems)
    if camera_status != "ok" and all(p.problem != camera_status for p in found):  # not the start-up's camera again
        found.append(problem("camera_silent", "camera", camera_status))
    unlogged = unwritable(services.referee.store.path)
    if unlogged is not None:  # every move would be refused: the table hears it before the first one
        found.append(problem("log_unwritable", "log", f"The game log cannot be written ({unlogged}), so no move can be saved: "
                             "mend it, then restart the companion.", detail=unlogged))
    buttons = services.table.health() if services.table is not None else "ok"
    if buttons != "ok":  # the table's worker stopped: every press would go unanswered
        found.append(problem("no_buttons", "buttons", buttons))
    said, referee = services.referee.problems, services.referee
    if said.get("camera") and said["camera"] != camera_status:  # its parts by code: the page words them (Capture.problem_codes)
        found.append(problem("no_reading", "camera", said["camera"], codes=list(referee.dice_capture.problem_codes)))
    if said.get("frames"):
        found.append(problem("photos_unsaved", "photos", said["frames"], detail=referee.archive.problem_detail or said["frames"]))
    stale = calibration_finding(getattr(services.dice_source, "reader", None), getattr(services.dice_source, "frame_size", None))
    if stale is not None:  # the camera still works: its readings go to the table until it is set up again
        found.append(stale)
    return found


def calibration_finding(reader: Any, frame_size: tuple[int, ...] | None) -> Finding | None:
    """``calibration_problem`` as the finding ``/api/health`` and ``check`` both give (code ``calibration``, the
    camera's picture as ``frame``, W×H), or None when the set-up fits."""
    stale = calibration_problem(reader, frame_size)
    return problem("calibration", "camera", stale, frame=f"{frame_size[1]}×{frame_size[0]}") if stale else None


def lens_problem(frame_source: Any, reader: Any) -> str | None:
    """Whether the camera is a wide one (``wide_lens``: the Pi's Camera Module 3 Wide) whose bend was never measured,
    in words for ``check`` and the set-up page: flat dice near the tray's edge then look leaning and go to the table
    (docs/READING.md, "A wide lens"). None for any other camera, or once ``camera.lens_distortion`` is set."""
    if not getattr(frame_source, "wide_lens", False) or getattr(reader, "lens_distortion", 0.0) or getattr(reader, "lens_distortion_k2", 0.0):
        return None
    return (f"The camera has a wide lens ({frame_source.model}) and its bend is not measured, so flat dice near the tray's "
            "edge look leaning and go to the table: lay the printed chessboard face down on the tray and measure the lens "
            "(the set-up page's \"The lens\", or elephants-bluff calibrate --lens).")


class _NoModel:
    """Stands in for a reader whose model file is missing: every reading is uncertain, with why."""

    model_id = "missing"

    def __init__(self, why: str) -> None:
        self.why = why

    def read(self, frame: Any) -> Reading:
        return Reading(UNCERTAIN, (), reason=self.why, model_id=self.model_id)

    def annotate(self, frame: Any, reading: Reading) -> Any:
        return frame


def _close_quietly(part: Any) -> None:
    close = getattr(part, "close", None)
    if close is not None:
        try:
            close()
        except Exception:
            log.exception("closing %r failed", part)


def _build_table(settings: Settings, referee: Referee, capture: Any, simulate: bool, problems: list[Finding]) -> Any:
    """The buttons and lights; a bad pin map stops start-up, missing GPIO hardware does not."""
    from firmware.pins import check_pin_map
    from firmware.table import build_table

    check_pin_map(settings)  # SettingsError naming the key: refuse to start
    try:
        return build_table(settings, referee, simulate=simulate, capture=capture)
    except HardwareError as exc:
        log.error("no table buttons: %s", exc.message)
        problems.append(problem("no_buttons", "buttons", exc.message))
        return None
