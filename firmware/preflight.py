"""What is wrong with the table before a game, in plain words, each with what to do.

``preflight(...)`` looks at the camera (none, busy, silent, too dark, glare, burnt
out), the buttons and the lid switch (stuck, shorted, lid off), the instance
folder's disk and the clock, and returns ``Finding``s: a sentence saying what is
wrong and one saying what to do. ``check_presses(...)`` is the interactive part:
it asks for each button in turn and names a wire on the wrong pin, a swapped
pair or a dead button.

It takes the parts it looks at as plain objects (a frame source with
``open``/``grab``, a name -> gpiozero input mapping, a folder), so the same code
serves ``elephants-bluff check``, a PIN-protected page and ``/api/health``'s
detail, on the Pi (lgpio pins) and in the tests (``MockFactory`` pins, frame
sources that fail on purpose). It opens nothing itself and changes nothing.

>>> [f.code for f in check_clock(now=0.0)]
['clock_unset']
"""

from __future__ import annotations

import datetime as _dt
import shutil
import threading
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping

import numpy as np

# the light limits are calibrate's, so the check before a game and calibrate never disagree
from vision.calibrate import GLARE_BURNT, TOO_BRIGHT_BURNT, TOO_BRIGHT_MEAN, TOO_DARK_MEAN

#: the instance folder's disk is nearly full below either of these
MIN_FREE_BYTES = 200 * 1024 * 1024
MIN_FREE_SHARE = 0.05
#: a clock before this date has not been set (a Pi has no battery clock; it takes the time from the network)
CLOCK_FLOOR = _dt.datetime(2025, 1, 1, tzinfo=_dt.timezone.utc).timestamp()
#: how long the camera may take for one frame
GRAB_TIMEOUT_S = 5.0

#: the inputs' names as ``TableDevices.inputs()`` gives them -> how an owner calls them
INPUT_NAMES = {"believe": "Believe button", "bluff": "Bluff button", "confirm": "Confirm button", "lid": "lid switch"}


@dataclass(frozen=True)
class Finding:
    """One thing wrong: ``problem`` (what), ``fix`` (what to do), for ``part`` of the table. ``params``: the numbers
    and names in its sentence, so a page can say it in the player's language (``check_<code>``), the sentence its
    English."""

    code: str
    part: str
    problem: str
    fix: str
    params: dict[str, Any] = field(default_factory=dict, compare=False)

    @property
    def sentence(self) -> str:
        return f"{self.problem} {self.fix}".strip()  # a problem that says its own fix has none apart

    def to_dict(self) -> dict[str, str]:
        return {**asdict(self), "sentence": self.sentence}


# --- the camera ---------------------------------------------------------------------------

def _message(exc: BaseException) -> str:
    return str(getattr(exc, "message", "") or exc)


def camera_failure_code(exc: BaseException, when: str) -> str:
    """What a camera's error ``when`` it was opened ("open") or asked for a frame says: ``camera_library`` (its
    software is missing or broken: the message says what to install), ``camera_busy`` (another program holds it),
    ``no_camera`` (it did not open) or ``camera_silent`` (it opened, no picture); the same codes for the check before
    a game and ``/api/health``."""
    low = _message(exc).lower()
    if getattr(exc, "code", "") == "camera_library":
        return "camera_library"  # the camera's software, not its cable: the message says what to install
    if getattr(exc, "code", "") == "camera_busy" or "busy" in low or "in use" in low:
        return "camera_busy"
    return "no_camera" if when == "open" else "camera_silent"


def _camera_failed(exc: BaseException, when: str) -> Finding:
    text = _message(exc)
    code = camera_failure_code(exc, when)
    if code == "camera_busy":
        return Finding("camera_busy", "camera", f"The camera is busy: another program holds it ({text}).",
                       "Stop the other program (the companion's service: sudo systemctl stop elephants-bluff; or rpicam-hello), then check again.",
                       {"detail": text})
    if code == "camera_library":
        return Finding("camera_library", "camera", f"The camera cannot be used: {text}", "", {"detail": text})
    if code == "no_camera":
        return Finding("no_camera", "camera", f"No camera answers ({text}).",
                       "Power the Pi off, check that the camera's ribbon cable sits straight and fully in both sockets (contacts facing the right way), "
                       "and that `rpicam-hello --list-cameras` lists it.", {"detail": text})
    return Finding("camera_silent", "camera", f"The camera opened but gave no picture ({text}).",
                   "Restart the Pi; if it stays silent, reseat the ribbon cable or try another one.", {"detail": text})


def _grab(source: Any, timeout_s: float) -> Any:
    box: dict[str, Any] = {}

    def grab() -> None:
        try:
            box["frame"] = source.grab()
        except BaseException as exc:  # noqa: BLE001 - reported as a finding
            box["error"] = exc

    worker = threading.Thread(target=grab, daemon=True)
    worker.start()
    worker.join(timeout_s)
    if worker.is_alive():
        raise TimeoutError(f"no frame within {timeout_s:g} s")
    if "error" in box:
        raise box["error"]
    return box.get("frame")


def check_light(frame: Any) -> list[Finding]:
    """Too dark, washed out or glare on a frame of the lit tray (BGR or grey ``uint8``)."""
    array = np.asarray(frame) if frame is not None else None
    if array is None or array.dtype != np.uint8 or array.ndim not in (2, 3) or array.size == 0 or min(array.shape[:2]) < 8:
        shape = "nothing" if array is None else f"{array.dtype} {array.shape}"
        return [Finding("bad_frame", "camera", f"The camera's picture is not an image the reader can use ({shape}).",
                        "Set camera.backend to the camera you have (picamera2 on a Pi) and restart the service.", {"detail": shape})]
    grey = array if array.ndim == 2 else array[..., :3].astype(np.float32) @ np.array([0.114, 0.587, 0.299], dtype=np.float32)
    mean = float(grey.mean())
    burnt = float((grey >= 250).mean())
    if mean < TOO_DARK_MEAN:
        return [Finding("tray_dark", "light", f"The tray is too dark (brightness {mean:.0f} of 255).",
                        "Check that the LED ring lights during a capture (its 12 V lead and the MOSFET), raise capture.light_level, "
                        "and keep the lens hood's cap off.", {"brightness": round(mean)})]
    if mean > TOO_BRIGHT_MEAN or burnt > TOO_BRIGHT_BURNT:
        return [Finding("tray_bright", "light", f"The tray is washed out ({burnt:.0%} of the picture burnt white).",
                        "Lower capture.light_level, shade the table from a lamp or window above it, and run `elephants-bluff calibrate` again.",
                        {"burnt_percent": round(burnt * 100)})]
    if burnt > GLARE_BURNT:
        ys, xs = np.nonzero(grey >= 250)
        vertical, horizontal = _part_of(xs.mean() / grey.shape[1], ys.mean() / grey.shape[0])
        return [Finding("tray_glare", "light", f"There is glare on the tray, {_where_in(vertical, horizontal)} of the picture.",
                        "Point the LED ring down (hardware/LIGHTING.md), fit the lens hood, clean the acrylic, and keep lamps off the tray.",
                        {"vertical": vertical, "horizontal": horizontal})]
    return []


def _part_of(x: float, y: float) -> tuple[str, str]:
    """Which third of the picture, up and down (top, middle, bottom) and across (left, centre, right), (x, y) lies in
    (shares of its width and height)."""
    return "top" if y < 1 / 3 else "bottom" if y > 2 / 3 else "middle", "left" if x < 1 / 3 else "right" if x > 2 / 3 else "centre"


def _where_in(vertical: str, horizontal: str) -> str:
    return "in the centre" if (vertical, horizontal) == ("middle", "centre") else f"at the {vertical} {horizontal}"


def check_camera(source: Any, timeout_s: float = GRAB_TIMEOUT_S, frame_findings: Callable[[Any], list[Finding]] | None = None) -> list[Finding]:
    """Opens (idempotent) and grabs one frame; no camera, busy, silent, or the light's findings, and
    ``frame_findings``' on the same frame (the app's: whether the reader's set-up fits the picture)."""
    try:
        source.open()
    except Exception as exc:  # noqa: BLE001 - every backend fails its own way
        return [_camera_failed(exc, "open")]
    try:
        frame = _grab(source, timeout_s)
    except Exception as exc:  # noqa: BLE001
        return [_camera_failed(exc, "grab")]
    light = check_light(frame)
    if frame_findings is None or any(f.code == "bad_frame" for f in light):
        return light
    return light + frame_findings(frame)


# --- the buttons and the lid ------------------------------------------------------------------

def _pin_of(device: Any) -> str:
    label = _pin_label(device)
    return f"BCM pin {label[4:]}" if label.startswith("BCM ") else f"pin {label}" if label else "its pin"


def _pin_label(device: Any) -> str:
    """The input's pin as the wiring names it, in no language: "BCM 17" (a GPIO pin), another name, or ""."""
    info = getattr(getattr(device, "pin", None), "info", None)
    name = str(getattr(info, "name", "") or "")
    return f"BCM {name[4:]}" if name.startswith("GPIO") and name[4:].isdigit() else name


def check_inputs(inputs: Mapping[str, Any], *, lid_should_be_on: bool = True) -> list[Finding]:
    """Buttons that read pressed while nobody presses them, and a lid switch that says the lid is off.

    ``inputs``: name -> gpiozero input (active = pressed, or lid on), as ``TableDevices.inputs()`` gives.
    """
    findings = []
    for name, device in inputs.items():
        what = INPUT_NAMES.get(name, name)
        active = bool(device.is_active)
        if name == "lid":
            if lid_should_be_on and not active:
                findings.append(Finding("lid_off", what, f"The lid switch ({_pin_of(device)}) says the lid is off the cup ring.",
                                        "Put the lid on; if it is on, the magnet in the lid's rim is not over the reed switch "
                                        "(turn the lid) or a switch wire is loose. Set gpio.lid_switch = -1 if no switch is fitted.",
                                        {"pin": _pin_label(device)}))
        elif active:
            findings.append(Finding("button_stuck", what, f"The {what} ({_pin_of(device)}) reads pressed while nobody presses it.",
                                    f"Free the button if it is stuck down; if it is not, its wire touches ground or is on the wrong pin "
                                    f"(hardware/PINS.md gives the pin for the {what}).", {"input": name, "pin": _pin_label(device)}))
    return findings


def check_presses(inputs: Mapping[str, Any], ask: Callable[[str], None], *, timeout_s: float = 10.0,
                  poll_s: float = 0.01, clock: Callable[[], float] = time.monotonic) -> list[Finding]:
    """Asks for each button in turn (``ask(name)``) and watches every input while it waits.

    A press seen on another button's pin is a swapped or misplaced wire; no
    press at all is a wire on a pin the settings do not name, a loose wire or a
    dead button.
    """
    findings = []
    buttons = [n for n in inputs if n != "lid"]
    for name in buttons:
        what = INPUT_NAMES.get(name, name)
        before = {n: bool(d.is_active) for n, d in inputs.items()}
        ask(name)
        seen_on = None
        deadline = clock() + timeout_s
        while clock() < deadline and seen_on is None:
            for other in buttons:
                if bool(inputs[other].is_active) and not before[other]:
                    seen_on = other
                    break
            else:
                time.sleep(poll_s)
        if seen_on is None:
            findings.append(Finding("button_silent", what, f"No press of the {what} reached {_pin_of(inputs[name])} in {timeout_s:g} s.",
                                    f"Its wire is on another pin, loose, or the button is broken: check the {what}'s two wires "
                                    f"against hardware/PINS.md (one to its GPIO pin, one to GND).",
                                    {"input": name, "pin": _pin_label(inputs[name]), "seconds": timeout_s}))
        elif seen_on != name:
            other = INPUT_NAMES.get(seen_on, seen_on)
            findings.append(Finding("button_wrong_pin", what, f"Pressing the {what} was seen on the {other}'s pin ({_pin_of(inputs[seen_on])}).",
                                    f"The wires are swapped or misplaced: move the {what}'s wire to {_pin_of(inputs[name])} "
                                    f"(hardware/PINS.md), or set the pins in config.toml to match the wiring.",
                                    {"input": name, "seen_on": seen_on, "pin": _pin_label(inputs[name]), "seen_pin": _pin_label(inputs[seen_on])}))
        # wait for the release before asking for the next one
        deadline = clock() + timeout_s
        while clock() < deadline and any(bool(inputs[b].is_active) and not before[b] for b in buttons):
            time.sleep(poll_s)
    return findings


# --- the disk and the clock --------------------------------------------------------------------

def check_disk(folder: str | Path, *, min_free_bytes: int = MIN_FREE_BYTES, min_free_share: float = MIN_FREE_SHARE,
               usage: Callable[[str], Any] | None = None) -> list[Finding]:
    """Nearly full when less than ``min_free_bytes`` or ``min_free_share`` of the disk holding ``folder`` is free."""
    path = Path(folder)
    while not path.exists() and path != path.parent:
        path = path.parent
    total, _, free = (usage or shutil.disk_usage)(str(path))
    if free < min_free_bytes or (total and free / total < min_free_share):
        return [Finding("disk_full", "SD card", f"The SD card is nearly full: {free / 1e6:.0f} MB free of {total / 1e9:.1f} GB.",
                        "Saved Bluff frames and the game log need room: copy the instance folder off the Pi (deploy/README.md, backup), "
                        "delete old frames from its frames/ folder, or move to a larger card.",
                        {"free_mb": round(free / 1e6), "total_gb": f"{total / 1e9:.1f}"})]
    return []


def check_clock(now: float | None = None) -> list[Finding]:
    """The clock is unset when it reads earlier than ``CLOCK_FLOOR`` (the Pi has not had the time from the network)."""
    now = time.time() if now is None else now
    if now < CLOCK_FLOOR:
        shown = _dt.datetime.fromtimestamp(now, _dt.timezone.utc).strftime("%Y-%m-%d")
        return [Finding("clock_unset", "clock", f"The Pi's clock is not set (it says {shown}), so the game log's times are wrong.",
                        "Connect the Pi to the network and wait a minute for the time to arrive (timedatectl shows 'System clock synchronized: yes').",
                        {"date": shown})]
    return []


# --- all of it --------------------------------------------------------------------------------

def preflight(*, frames: Any = None, inputs: Mapping[str, Any] | None = None, instance: str | Path = ".",
              now: float | None = None, lid_should_be_on: bool = True, grab_timeout_s: float = GRAB_TIMEOUT_S,
              frame_findings: Callable[[Any], list[Finding]] | None = None) -> list[Finding]:
    """Every check that needs no one at the table; an empty list means ready.

    ``frames``: the camera (a frame source with ``open`` and ``grab``), or None
    to leave it out; ``inputs``: name -> gpiozero input (``TableDevices.inputs()``),
    or None; ``instance``: the instance folder (for the disk); ``frame_findings``: more checks of the
    camera's frame (``check_camera``).
    """
    findings: list[Finding] = []
    if frames is not None:
        findings += check_camera(frames, grab_timeout_s, frame_findings)
    if inputs:
        findings += check_inputs(inputs, lid_should_be_on=lid_should_be_on)
    findings += check_disk(instance)
    findings += check_clock(now)
    return findings


def format_findings(findings: list[Finding]) -> str:
    """The text ``elephants-bluff check`` prints: one numbered line per finding, or that all is well."""
    if not findings:
        return "Ready: the camera, the buttons, the lid switch, the disk and the clock look right."
    return "\n".join(f"{i}. {f.part}: {f.sentence}" for i, f in enumerate(findings, 1))
