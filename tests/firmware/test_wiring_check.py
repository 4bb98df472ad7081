"""``python -m firmware.check``: the wiring check a builder runs before the first game."""

from __future__ import annotations

import io
import threading

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


def test_the_check_command_names_the_inputs_that_never_answered(tmp_path, pin_factory, capsys, monkeypatch):
    config = tmp_path / "config.toml"
    config.write_text('[gpio]\npin_factory = "mock"\n', encoding="utf-8")
    monkeypatch.delenv("GPIOZERO_PIN_FACTORY", raising=False)
    monkeypatch.setattr(check, "make_pin_factory", lambda name: pin_factory)
    monkeypatch.setattr(check.time, "sleep", lambda s: None)
    assert check.main(["--config", str(config), "--seconds", "0"]) == 1
    assert "Never seen: believe, bluff. Check their wires" in capsys.readouterr().out


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
