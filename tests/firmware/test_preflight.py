"""firmware.preflight: each thing that can be wrong before a game is found and said with what to do.

The pins are gpiozero's ``MockFactory`` pins (the ``pin_factory`` fixture:
``Device.pin_factory`` for the test, reset after); the cameras are frame sources
that fail in each way a real one does.
"""

from __future__ import annotations

import doctest
import json
import threading
import time
from collections import namedtuple

import numpy as np
import pytest
from gpiozero import DigitalInputDevice

from firmware import preflight as pf
from firmware.preflight import Finding, check_camera, check_clock, check_disk, check_inputs, check_presses, format_findings, preflight


class CameraError(Exception):
    """Stands in for the backends' error: a sentence in ``message`` and a ``code``."""

    def __init__(self, message: str, code: str = "no_camera") -> None:
        super().__init__(message)
        self.message, self.code = message, code


class Source:
    """A frame source that opens or grabs as told: an error to raise, a frame to give, or a hang."""

    def __init__(self, frame=None, open_error=None, grab_error=None, hang_s=0.0):
        self.frame, self.open_error, self.grab_error, self.hang_s = frame, open_error, grab_error, hang_s
        self.opened = 0

    def open(self):
        self.opened += 1
        if self.open_error:
            raise self.open_error

    def grab(self):
        if self.hang_s:
            time.sleep(self.hang_s)
        if self.grab_error:
            raise self.grab_error
        return self.frame


def tray(level=140, glare_px=0, size=(240, 320)):
    """A grey tray frame at ``level`` with a few dice-like darker squares and ``glare_px`` burnt pixels near the top left."""
    frame = np.full((*size, 3), level, np.uint8)
    frame[100:130, 100:130] = max(level - 60, 0)
    frame[100:130, 200:230] = max(level - 60, 0)
    if glare_px:
        side = int(np.sqrt(glare_px))
        frame[10:10 + side, 10:10 + side] = 255
    return frame


def codes(findings):
    return [f.code for f in findings]


# --- the camera -------------------------------------------------------------------------------

def test_a_good_tray_frame_has_no_finding():
    assert check_camera(Source(tray())) == []


def test_no_camera_says_to_check_the_ribbon_cable():
    [f] = check_camera(Source(open_error=CameraError("The Pi camera cannot be started (no cameras available); check its ribbon cable.")))
    assert f.code == "no_camera" and "ribbon cable" in f.fix and "no cameras available" in f.problem
    assert "no cameras available" in f.params["detail"]  # a page words the finding itself, with the camera's own message


def test_a_missing_camera_library_says_what_to_install_not_to_reseat_the_cable():
    """picamera2 not installed: the check said to power the Pi off and reseat the ribbon cable."""
    missing = CameraError("The Pi camera library (picamera2) is not installed; on Raspberry Pi OS: sudo apt install python3-picamera2.", code="camera_library")
    [f] = check_camera(Source(open_error=missing))
    assert f.code == "camera_library" and "sudo apt install python3-picamera2" in f.sentence
    assert "ribbon" not in f.sentence and "Power the Pi off" not in f.sentence


def test_a_busy_camera_says_which_program_to_stop():
    busy = CameraError("The Pi camera cannot be started (Failed to acquire camera: Device or resource busy); check its ribbon cable.")
    [f] = check_camera(Source(open_error=busy))
    assert f.code == "camera_busy" and "systemctl stop elephants-bluff" in f.fix


def test_a_camera_that_gives_no_frame_is_silent_not_missing():
    [f] = check_camera(Source(grab_error=CameraError("The Pi camera stopped giving frames (timeout).", code="no_frame")))
    assert f.code == "camera_silent" and "stopped giving frames" in f.problem


def test_a_camera_that_hangs_is_reported_within_the_timeout():
    start = time.monotonic()
    [f] = check_camera(Source(tray(), hang_s=2.0), timeout_s=0.2)
    assert f.code == "camera_silent" and "no frame within 0.2 s" in f.problem
    assert time.monotonic() - start < 2.0  # it did not wait for the hung grab


@pytest.mark.parametrize("frame", [None, np.zeros((0, 0, 3), np.uint8), np.zeros((120, 160, 3), np.float32), np.zeros((1, 1, 3), np.uint8)])
def test_a_frame_the_reader_cannot_use_is_named(frame):
    assert codes(check_camera(Source(frame))) == ["bad_frame"]


def test_a_dark_tray_says_to_check_the_ring():
    [f] = check_camera(Source(tray(level=20)))
    assert f.code == "tray_dark" and "LED ring" in f.fix and "brightness" in f.problem
    assert f.params == {"brightness": 20} and "brightness 20 of 255" in f.problem


def test_a_washed_out_tray_says_to_lower_the_light():
    [f] = check_camera(Source(tray(level=230)))
    assert f.code == "tray_bright" and "light_level" in f.fix
    assert f"({f.params['burnt_percent']}% of the picture" in f.problem


def test_glare_is_found_and_placed():
    frame = tray(glare_px=400)  # 0.5 % of the picture burnt, top left
    [f] = check_camera(Source(frame))
    assert f.code == "tray_glare" and "top left" in f.problem and "LIGHTING.md" in f.fix
    assert f.params == {"vertical": "top", "horizontal": "left"}  # the page words the place in the player's language
    assert check_camera(Source(tray(glare_px=16))) == []  # a few hot pixels are no glare


# --- the buttons and the lid (gpiozero mock pins) ------------------------------------------------

@pytest.fixture
def inputs(pin_factory):
    devices = {
        "believe": DigitalInputDevice(17, pull_up=True),
        "bluff": DigitalInputDevice(27, pull_up=True),
        "lid": DigitalInputDevice(5, pull_up=True),
    }
    pin_factory.pin(5).drive_low()  # the lid is on: the reed switch pulls its pin to ground
    yield devices
    for device in devices.values():
        device.close()


def test_buttons_at_rest_and_the_lid_on_have_no_finding(inputs):
    assert check_inputs(inputs) == []


def test_a_stuck_button_is_named_with_its_pin(inputs, pin_factory):
    pin_factory.pin(27).drive_low()
    [f] = check_inputs(inputs)
    assert f.code == "button_stuck" and f.part == "Bluff button" and "BCM pin 27" in f.problem and "PINS.md" in f.fix
    assert f.params == {"input": "bluff", "pin": "BCM 27"}


def test_the_lid_off_is_said_and_how_to_turn_the_check_off(inputs, pin_factory):
    pin_factory.pin(5).drive_high()
    [f] = check_inputs(inputs)
    assert f.code == "lid_off" and "BCM pin 5" in f.problem and "gpio.lid_switch = -1" in f.fix and f.params == {"pin": "BCM 5"}
    assert check_inputs(inputs, lid_should_be_on=False) == []


def _person(pin_factory, presses):
    """``ask`` for check_presses: for each button asked, press (and release) the BCM pin that ``presses`` says."""
    asked = []

    def ask(name):
        asked.append(name)
        pin = presses.get(name)
        if pin is None:
            return

        def press():
            time.sleep(0.02)
            pin_factory.pin(pin).drive_low()
            time.sleep(0.05)
            pin_factory.pin(pin).drive_high()

        threading.Thread(target=press, daemon=True).start()

    return ask, asked


def test_each_button_pressed_on_its_own_pin_has_no_finding(inputs, pin_factory):
    ask, asked = _person(pin_factory, {"believe": 17, "bluff": 27})
    assert check_presses(inputs, ask, timeout_s=2.0) == [] and asked == ["believe", "bluff"]


def test_swapped_wires_are_named(inputs, pin_factory):
    ask, _ = _person(pin_factory, {"believe": 27, "bluff": 17})
    found = check_presses(inputs, ask, timeout_s=2.0)
    assert codes(found) == ["button_wrong_pin", "button_wrong_pin"]
    assert "Pressing the Believe button was seen on the Bluff button's pin (BCM pin 27)" in found[0].problem
    assert "BCM pin 17" in found[0].fix
    assert found[0].params == {"input": "believe", "seen_on": "bluff", "pin": "BCM 17", "seen_pin": "BCM 27"}


def test_a_button_on_a_pin_the_settings_do_not_name_is_silent(inputs, pin_factory):
    ask, _ = _person(pin_factory, {"believe": 17, "bluff": 22})  # the Bluff wire went to GPIO22
    [f] = check_presses(inputs, ask, timeout_s=0.3)
    assert f.code == "button_silent" and f.part == "Bluff button" and "BCM pin 27" in f.problem and "GND" in f.fix


# --- the disk and the clock --------------------------------------------------------------------

Usage = namedtuple("Usage", "total used free")


def test_a_nearly_full_card_says_how_much_is_left_and_what_to_delete(tmp_path):
    [f] = check_disk(tmp_path, usage=lambda p: Usage(32_000_000_000, 31_900_000_000, 100_000_000))
    assert f.code == "disk_full" and "100 MB free of 32.0 GB" in f.problem and "frames/" in f.fix
    assert f.params == {"free_mb": 100, "total_gb": "32.0"}  # as the sentence shows it


def test_a_card_with_room_has_no_finding(tmp_path):
    assert check_disk(tmp_path, usage=lambda p: Usage(32_000_000_000, 8_000_000_000, 24_000_000_000)) == []


def test_a_small_card_is_judged_by_its_share_too(tmp_path):
    # 300 MB free is above the fixed floor, but 3 % of a 10 GB card
    assert codes(check_disk(tmp_path, usage=lambda p: Usage(10_000_000_000, 9_700_000_000, 300_000_000))) == ["disk_full"]


def test_the_disk_of_an_instance_folder_not_made_yet_is_its_parents(tmp_path):
    seen = []
    check_disk(tmp_path / "not" / "yet", usage=lambda p: seen.append(p) or Usage(1, 0, 1))
    assert seen == [str(tmp_path)]


def test_an_unset_clock_says_when_it_thinks_it_is():
    [f] = check_clock(now=86_400.0)
    assert f.code == "clock_unset" and "1970-01-02" in f.problem and "timedatectl" in f.fix and f.params == {"date": "1970-01-02"}
    assert check_clock(now=pf.CLOCK_FLOOR + 1) == []


# --- all of it ---------------------------------------------------------------------------------

def test_preflight_collects_every_part_and_formats_one_line_each(inputs, pin_factory, tmp_path, monkeypatch):
    monkeypatch.setattr(pf.shutil, "disk_usage", lambda p: Usage(32_000_000_000, 31_950_000_000, 50_000_000))
    pin_factory.pin(17).drive_low()
    found = preflight(frames=Source(tray(level=15)), inputs=inputs, instance=tmp_path, now=0.0)
    assert codes(found) == ["tray_dark", "button_stuck", "disk_full", "clock_unset"]
    text = format_findings(found)
    assert text.splitlines()[0].startswith("1. light: The tray is too dark") and len(text.splitlines()) == 4


def test_preflight_on_a_ready_table_says_ready(inputs, tmp_path, monkeypatch):
    monkeypatch.setattr(pf.shutil, "disk_usage", lambda p: Usage(32_000_000_000, 8_000_000_000, 24_000_000_000))
    found = preflight(frames=Source(tray()), inputs=inputs, instance=tmp_path, now=pf.CLOCK_FLOOR + 86_400)
    assert found == [] and format_findings(found).startswith("Ready:")


def test_a_finding_is_json_ready_for_the_health_detail():
    f = Finding("clock_unset", "clock", "The clock is not set.", "Connect the network.", {"date": "1970-01-02"})
    assert f.to_dict() == {"code": "clock_unset", "part": "clock", "problem": "The clock is not set.", "fix": "Connect the network.",
                           "params": {"date": "1970-01-02"}, "sentence": "The clock is not set. Connect the network."}
    assert json.loads(json.dumps(f.to_dict())) == f.to_dict()


def test_the_docstring_examples_run():
    result = doctest.testmod(pf)
    assert result.attempted > 0 and result.failed == 0
