"""``elephants-bluff check`` and the table's own check: what is wrong before a game, each with what to do.

The findings come from ``firmware.preflight``; this module hands it the
parts the app has (the camera of the capture loop, the table's inputs, the
instance folder). ``/api/health`` carries the checks that cost nothing (the
buttons and lid, the disk, the clock); ``GET /api/check`` (PIN) and the
command also look through the camera.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from firmware.capture import CaptureLoop
from firmware.preflight import GRAB_TIMEOUT_S, Finding, format_findings, preflight


def quick_findings(services: Any) -> list[Finding]:
    """The checks that grab no frame: inputs (when the table has buttons), disk, clock."""
    inputs = services.table.devices.inputs() if services.table is not None else None
    return preflight(inputs=inputs, instance=services.instance, lid_should_be_on=True)


def full_findings(services: Any) -> list[Finding]:
    """Every check, the camera too (one frame, bounded in time: its light, and whether the reader's set-up was made
    for its picture), the buttons that could not start, and what the reader does without.

    The camera's frame is taken as a Bluff's is (``LitAsABluff``): with the ring off, a camera that sees the tray
    only by its ring was "too dark, check the ring's MOSFET" while every Bluff read fine, and the ring's glare, the
    first cause of a reading the table must confirm, could never be seen."""
    loop = services.dice_source if isinstance(services.dice_source, CaptureLoop) else None
    frames = loop.frame_source if loop is not None else None
    inputs = services.table.devices.inputs() if services.table is not None else None
    reader = loop.reader if loop is not None else None
    lit = LitAsABluff(loop) if loop is not None else None
    return (
        preflight(frames=lit, inputs=inputs, instance=services.instance, grab_timeout_s=lit.grab_timeout_s if lit else GRAB_TIMEOUT_S,
                  frame_findings=lambda frame: calibration_findings(reader, frame) + lens_findings(frames, reader))
        + start_up_findings(services)
        + reader_findings(services)
    )


class LitAsABluff:
    """The capture loop's camera as the check asks it for a frame: the ring lit and the picture settled under it,
    taken in turn with the Bluffs (``CaptureLoop.set_up_frame``, as the set-up page's light check)."""

    def __init__(self, loop: CaptureLoop) -> None:
        self.loop = loop
        self.name = loop.name
        #: a camera's time to answer, and the dice's time to lie still under the light
        self.grab_timeout_s = GRAB_TIMEOUT_S + loop.still_timeout_s

    def open(self) -> None:
        self.loop.open()

    def grab(self) -> Any:
        return self.loop.set_up_frame()


def start_up_findings(services: Any) -> list[Finding]:
    """What start-up could not build and no check of its own looks at: the buttons (lgpio that cannot start, pins
    another program holds), which ``check`` called ready."""
    return [f for f in services.problems if f.code == "no_buttons"]


def calibration_findings(reader: Any, frame: Any) -> list[Finding]:
    """The camera's set-up made for another picture than ``frame`` (``services.calibration_finding``)."""
    from companion.app.services import calibration_finding

    found = calibration_finding(reader, getattr(frame, "shape", None))
    return [found] if found is not None else []


def lens_findings(frames: Any, reader: Any) -> list[Finding]:
    """A wide camera whose lens's bend was never measured (``services.lens_problem``), as a finding."""
    from companion.app.services import lens_problem

    problem = lens_problem(frames, reader)
    return [Finding("lens", "camera", problem, "")] if problem else []


def reader_findings(services: Any) -> list[Finding]:
    """The reader's problems (``services.reader_problems``: a model or cue it cannot use, the empty tray's photo) as
    findings; each sentence already says what to do."""
    from companion.app.services import reader_problems

    if not isinstance(services.dice_source, CaptureLoop):
        return []
    return reader_problems(services.dice_source.reader)


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("check", help="say what is wrong with the table before a game: camera, buttons, lid, disk, clock")
    p.add_argument("--instance", type=Path, default=Path("instance"))
    p.add_argument("--json", action="store_true", help="one JSON object with every finding")
    p.set_defaults(func=_check)


def _check(args: argparse.Namespace) -> int:
    from companion.app.services import build_services
    from companion.app.settings import CONFIG_NAME, Settings
    from companion.core.settings import require_instance

    require_instance(args.instance)
    settings = Settings.load(args.instance / CONFIG_NAME)
    services = build_services(args.instance, settings, simulate=False, sweep=False)  # a running companion's pending photo stays
    try:
        findings = full_findings(services)
    finally:
        services.close()
    if args.json:
        print(json.dumps({"ready": not findings, "findings": [f.to_dict() for f in findings]}))
    else:
        print(format_findings(findings))
    return 1 if findings else 0
