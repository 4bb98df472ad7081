"""``calibrate`` from a terminal lights the tray's LED ring, so what it locks and keeps is the tray as a Bluff sees it.

The command opened the camera alone: the exposure it locked and the empty tray it kept were the room's light, while
every Bluff is read with the ring lit (only the set-up page lit it).
"""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
import pytest
from gpiozero.pins.mock import MockFactory, MockPWMPin

import companion.app.settings  # noqa: F401 - registers the gpio, capture and camera settings config.toml holds
from companion.core.errors import HardwareError
from companion.core.protocols import FrameSource
from companion.core.settings import Settings
from firmware.devices import TableDevices
from firmware.lit_tray import LitTraySource
from firmware.pins import check_pin_map
from vision.calibrate import calibrate

RING_PIN = 18  # gpio.tray_light's default


class RingLitTray(FrameSource):
    """An empty tray under the ring on ``factory``'s pin: bright where the ring is lit, dim by the room's light."""

    name = "picamera2"

    def __init__(self, factory: MockFactory) -> None:
        self.factory = factory
        self.ring_at_grabs: list[float] = []
        self.fail: HardwareError | None = None
        self.opened = False

    def open(self) -> None:
        if self.fail is not None:
            raise self.fail
        self.opened = True

    def close(self) -> None:
        self.opened = False

    def ring(self) -> float:
        return float(self.factory.pin(RING_PIN).state)

    def grab(self) -> np.ndarray:
        level = self.ring()
        self.ring_at_grabs.append(level)
        frame = np.full((240, 320, 3), int(50 + 120 * level), np.uint8)
        cv2.circle(frame, (160, 120), 100, (int(60 + 130 * level),) * 3, -1)  # the tray's window, a little brighter
        return frame

    def metadata(self) -> dict:
        """What the Pi camera settled on: a short exposure under the ring, a long one by the room's light."""
        return {"ExposureTime": 4000 if self.ring() > 0 else 30000, "AnalogueGain": 1.0, "ColourGains": [1.5, 1.4]}


@pytest.fixture
def factory():
    f = MockFactory(pin_class=MockPWMPin)
    yield f
    f.reset()
    f.close()


def _instance(tmp_path: Path, **settings) -> Path:
    lines = ["[camera]", 'backend = "simulated"', "[capture]", f"light_level = {settings.get('light_level', 0.6)}"]
    (tmp_path / "config.toml").write_text("\n".join(lines) + "\n")
    return tmp_path


def _lit_by(camera: RingLitTray, factory: MockFactory):
    return lambda settings, _source: LitTraySource(settings, camera, pin_factory=factory, frame_interval_s=0)


def test_calibrate_locks_and_keeps_the_empty_tray_lit_by_the_ring_and_puts_it_out_after(tmp_path, factory):
    instance = _instance(tmp_path)
    camera = RingLitTray(factory)
    said: list[str] = []

    class Out:
        def write(self, s: str) -> None:
            said.append(s)

        def flush(self) -> None:
            pass

    assert calibrate(instance, out=Out(), light=_lit_by(camera, factory)) == 0
    text = "".join(said)
    assert "the tray's LED ring was lit, as at each Bluff" in text and "not lit" not in text
    assert camera.ring_at_grabs and set(camera.ring_at_grabs) == {0.6}  # every frame at capture.light_level
    stored = Settings.load(instance / "config.toml")
    assert stored["camera.exposure_us"] == 4000  # the exposure under the ring, not the room's 30000
    kept = cv2.imread(str(instance / stored["camera.empty_tray"]), cv2.IMREAD_GRAYSCALE)
    assert kept is not None and kept[0, 0] == 50 + 72  # the tray as lit, not the room's 50
    assert camera.ring() == 0 and not camera.opened  # the ring out and the camera released
    TableDevices.open(check_pin_map(stored), factory).close()  # and the pins free for the companion


def test_pins_a_running_companion_holds_leave_the_ring_dark_and_calibrate_says_why(tmp_path, factory, capsys):
    instance = _instance(tmp_path)
    held = TableDevices.open(check_pin_map(Settings.load(instance / "config.toml")), factory)
    try:
        camera = RingLitTray(factory)
        assert calibrate(instance, out=__import__("sys").stdout, light=_lit_by(camera, factory), dry_run=True) == 0
        out = capsys.readouterr().out
        assert "the tray's LED ring was not lit (its pin could not be opened" in out
        assert "stop it first" in out and "prefer the set-up page" in out
        assert set(camera.ring_at_grabs) == {0.0}
        assert "camera.exposure_us = 30000" in out  # what it would lock is said to be the room's light, above
    finally:
        held.close()


def test_a_camera_that_will_not_open_leaves_the_ring_out_and_the_pins_free(tmp_path, factory, capsys):
    instance = _instance(tmp_path)
    camera = RingLitTray(factory)
    camera.fail = HardwareError("No camera answered: check its ribbon cable.")
    assert calibrate(instance, out=__import__("sys").stdout, light=_lit_by(camera, factory)) == 1
    assert "camera: No camera answered" in capsys.readouterr().out
    assert camera.ring() == 0
    TableDevices.open(check_pin_map(Settings.load(instance / "config.toml")), factory).close()


def test_the_dice_and_the_lens_are_measured_lit_too(tmp_path, factory):
    instance = _instance(tmp_path)
    camera = RingLitTray(factory)
    calibrate(instance, light=_lit_by(camera, factory), lens=True, dry_run=True)  # no chessboard: nothing to fit
    assert camera.ring_at_grabs and set(camera.ring_at_grabs) == {0.6} and camera.ring() == 0


@pytest.mark.parametrize("pins, because", [("mock", "gpio.pin_factory is mock"), ("none", "gpio.pin_factory is none")])
def test_the_command_line_says_when_there_is_no_ring_to_light(tmp_path, capsys, monkeypatch, pins, because):
    from companion.app.cli import main

    monkeypatch.delenv("GPIOZERO_PIN_FACTORY", raising=False)
    (tmp_path / "config.toml").write_text(f'[gpio]\npin_factory = "{pins}"\n')
    main(["calibrate", "--dry-run", "--instance", str(tmp_path)])  # the simulated table has dice on it: not stored
    out = capsys.readouterr().out
    assert f"the tray's LED ring was not lit ({because}" in out
