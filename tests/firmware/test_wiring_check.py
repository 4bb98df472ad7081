"""``python -m firmware.check``: the wiring check a builder runs before the first game."""

from __future__ import annotations

import io
import threading
from pathlib import Path

from companion.app.settings import Settings
from firmware import check
from firmware.devices import TableDevices
from firmware.pins import check_pin_map


class Screen(io.StringIO):
    """Captures the output and says when the prompt to press appears."""

    def __init__(self) -> None:
        super().__init__()
        self.prompted = threading.Event()

    def write(self, s: str) -> int:
        if "Press each button" in s:
            self.prompted.set()
        return super().write(s)


def test_the_check_lights_every_output_and_names_every_input(pin_factory):
    settings = Settings.defaults().with_overrides(gpio__lid_switch=5, gpio__buzzer=25)
    devices = TableDevices.open(check_pin_map(settings), pin_factory)
    pin_factory.pin(5).drive_low()  # the lid lies closed
    screen, stop, result = Screen(), threading.Event(), []
    runner = threading.Thread(target=lambda: result.extend(check.run_check(devices, show_s=0, listen_s=10, out=screen, sleep=lambda s: None, stop=stop)))
    runner.start()
    try:
        assert screen.prompted.wait(10)
        pin_factory.pin(27).drive_low()  # Bluff
        pin_factory.pin(27).drive_high()
        pin_factory.pin(5).drive_high()  # the lid lifted
    finally:
        stop.set()
        runner.join(10)
    try:
        assert result == ["bluff pressed", "lid lifted"]
        text = screen.getvalue()
        for name in ("Believe button's light", "Bluff button's light", "status light", "tray's LED ring", "buzzer"):
            assert f"on:  {name}" in text
        for pin, level in ((22, True), (23, True), (24, True), (18, 0.8), (25, True)):
            states = [s for _, s in pin_factory.pin(pin).states]
            assert level in states and states[-1] in (0, False), pin  # lit once, dark at the end
    finally:
        devices.close()


def _lgpio_config(tmp_path, pin_factory, monkeypatch, text: str = "") -> str:
    """A Pi's config.toml (lgpio pins), its pins gpiozero's mock ones."""
    config = tmp_path / "config.toml"
    config.write_text('[gpio]\npin_factory = "lgpio"\n' + text, encoding="utf-8")
    monkeypatch.delenv("GPIOZERO_PIN_FACTORY", raising=False)
    monkeypatch.setattr(check, "make_pin_factory", lambda name: pin_factory if name == "lgpio" else None)
    monkeypatch.setattr(check.time, "sleep", lambda s: None)
    return str(config)


def test_the_check_command_names_the_inputs_that_never_answered(tmp_path, pin_factory, capsys, monkeypatch):
    assert check.main(["--config", _lgpio_config(tmp_path, pin_factory, monkeypatch), "--seconds", "0"]) == 1
    out = capsys.readouterr().out
    assert "pins: lgpio, from" in out and "Never seen: believe, bluff. Check their wires" in out


def test_the_check_command_reads_the_whole_config_the_pi_installer_and_serve_init_write(tmp_path):
    """It refused every real config.toml ("teach.collect: is not a known setting"): run as ``python -m firmware.check``
    it knew only the table's settings, not the app's, the camera's or teaching's. Run so, in its own process, it gets
    past the whole file to the pins (lgpio, which cannot start off a Pi: said in words)."""
    import os
    import subprocess
    import sys

    from companion.app.settings import all_settings, render_config

    (tmp_path / "config.toml").write_text(render_config(all_settings(), {"gpio.pin_factory": "lgpio", "table.pin": "7319",
                                                                           "camera.backend": "picamera2"}))
    env = {k: v for k, v in os.environ.items() if k != "GPIOZERO_PIN_FACTORY"}
    run = subprocess.run([sys.executable, "-m", "firmware.check", "--config", "config.toml", "--seconds", "0"], cwd=tmp_path,
                         env={**env, "PYTHONPATH": str(Path(check.__file__).parents[1])}, capture_output=True, text=True, timeout=120)
    assert "not a known setting" not in run.stderr, run.stderr
    assert run.returncode == 2 and ("pin factory 'lgpio' could not start" in run.stderr or "no pin factory called 'lgpio'" in run.stderr), run.stderr


def test_the_check_command_refuses_a_missing_config_and_the_simulated_pins_rather_than_blame_the_wires(tmp_path, capsys, monkeypatch):
    """With no file (run from the wrong folder) or pin_factory = "mock" it drove simulated pins, lit nothing on the
    tray and said "Never seen: believe, bluff. Check their wires"."""
    monkeypatch.delenv("GPIOZERO_PIN_FACTORY", raising=False)
    assert check.main(["--config", str(tmp_path / "config.toml"), "--seconds", "0"]) == 2
    assert f"there is no {tmp_path / 'config.toml'}" in capsys.readouterr().err
    (tmp_path / "config.toml").write_text('[gpio]\npin_factory = "mock"\n')
    assert check.main(["--config", str(tmp_path / "config.toml"), "--seconds", "0"]) == 2
    err = capsys.readouterr().err
    assert "gpio.pin_factory is mock" in err and 'pin_factory = "lgpio"' in err and "Never seen" not in err


def test_the_check_command_refuses_a_bad_pin_map_in_words(tmp_path, capsys):
    config = tmp_path / "config.toml"
    config.write_text("[gpio]\nstatus_light = 17\n", encoding="utf-8")
    assert check.main(["--config", str(config)]) == 2
    assert "gpio.status_light: uses BCM pin 17, which gpio.believe_button already uses" in capsys.readouterr().err


def test_the_check_command_says_when_there_are_no_buttons(tmp_path, capsys, monkeypatch):
    config = tmp_path / "config.toml"
    config.write_text('[gpio]\npin_factory = "none"\n', encoding="utf-8")
    monkeypatch.delenv("GPIOZERO_PIN_FACTORY", raising=False)
    assert check.main(["--config", str(config)]) == 2
    assert "no buttons to check" in capsys.readouterr().err
