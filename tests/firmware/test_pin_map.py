"""The pin map is checked at start-up, and the pin factory is chosen once."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from gpiozero import LED

from companion.core.errors import HardwareError, SettingsError
from companion.app.settings import Settings
from firmware.debounce import Debouncer
from firmware.devices import MOCK_PIN_HISTORY, make_pin_factory
from firmware.pins import PinMap, check_pin_map, pin_factory_name
from firmware.table import build_table
from tests.firmware.helpers import settings


def test_the_default_pin_map_is_valid_and_leaves_optional_parts_unfitted():
    assert check_pin_map(Settings.defaults()) == PinMap(17, 27, 22, 23, 24, 18, None, None, None)


def test_a_pin_used_twice_names_both_settings():
    with pytest.raises(SettingsError) as err:
        check_pin_map(settings(gpio__lid_switch=24))
    assert err.value.key == "gpio.lid_switch"
    assert "BCM pin 24, which gpio.status_light already uses" in err.value.message


@pytest.mark.parametrize(
    "key,value,why",
    [
        ("gpio.bluff_button", 40, "must be a BCM pin number from 2 to 27, not 40"),
        ("gpio.tray_light", -1, "must be a BCM pin number from 2 to 27, not -1"),  # required: cannot be unfitted
        ("gpio.buzzer", 30, "or -1 when the part is not fitted, not 30"),
        ("gpio.status_light", 0, "reserved for the HAT ID EEPROM"),
        ("gpio.believe_light", "22", "must be a whole BCM pin number, not '22'"),
        ("gpio.believe_light", True, "must be a whole BCM pin number, not True"),
    ],
)
def test_a_wrong_pin_is_a_clear_settings_error_naming_the_key(key, value, why):
    with pytest.raises(SettingsError) as err:
        check_pin_map(settings(**{key.replace(".", "__"): value}))
    assert err.value.key == key and why in err.value.message


def test_a_wrong_pin_in_config_toml_is_refused_when_the_file_is_loaded(tmp_path: Path):
    path = tmp_path / "config.toml"
    path.write_text("[gpio]\nbluff_button = 99\n", encoding="utf-8")
    with pytest.raises(SettingsError) as err:
        Settings.load(path, environ={})
    assert err.value.key == "gpio.bluff_button" and "from 2 to 27" in err.value.message


def test_a_double_pin_in_config_toml_names_the_file(tmp_path: Path):
    path = tmp_path / "config.toml"
    path.write_text("[gpio]\nconfirm_button = 17\n", encoding="utf-8")
    with pytest.raises(SettingsError, match=r"config.toml: gpio.confirm_button: uses BCM pin 17, which gpio.believe_button"):
        check_pin_map(Settings.load(path, environ={}))


def test_the_environment_overrides_the_pin_factory_setting():
    s = settings(gpio__pin_factory="mock")
    assert pin_factory_name(s, {}) == "mock"
    assert pin_factory_name(s, {"GPIOZERO_PIN_FACTORY": "lgpio"}) == "lgpio"
    assert pin_factory_name(s, {"GPIOZERO_PIN_FACTORY": ""}) == "mock"
    with pytest.raises(SettingsError, match="GPIOZERO_PIN_FACTORY: must be one of lgpio"):
        pin_factory_name(s, {"GPIOZERO_PIN_FACTORY": "raspberry"})


def test_no_pin_factory_means_no_table(referee):
    assert build_table(settings(gpio__pin_factory="none"), referee, simulate=True, environ={}) is None
    assert build_table(settings(gpio__pin_factory="mock"), referee, simulate=False, environ={"GPIOZERO_PIN_FACTORY": "none"}) is None


def test_simulate_uses_mock_pins_whatever_the_setting(referee):
    table = build_table(settings(gpio__pin_factory="lgpio"), referee, simulate=True, environ={})
    try:
        assert table.simulated and type(table.devices.pin_factory).__name__ == "MockFactory"
        assert table.pin_factory_name == "mock"
        referee.new_game(["Ann", "Ben"])
        assert table.press("bluff")["result"] == "refused"
    finally:
        table.close()


def test_build_table_refuses_a_bad_pin_map_before_opening_anything(referee):
    with pytest.raises(SettingsError, match="gpio.bluff_light"):
        build_table(settings(gpio__bluff_light=22), referee, simulate=True, environ={})


@pytest.mark.skipif(os.path.exists("/dev/gpiochip0"), reason="this machine has real GPIO; the failure path needs one without")
def test_a_real_pin_factory_off_a_pi_is_a_hardware_error_that_says_what_to_do():
    with pytest.raises(HardwareError, match="set gpio.pin_factory to mock"):
        make_pin_factory("lgpio")


def test_debounce_needs_a_quiet_window_before_a_new_press():
    t = [0.0]
    d = Debouncer(0.05, clock=lambda: t[0])
    assert d.edge("a", active=True)
    t[0] = 0.03
    assert not d.edge("a", active=False)  # release bounce
    t[0] = 0.06
    assert not d.edge("a", active=True)  # only 30 ms quiet
    assert d.quiet_in("a") == pytest.approx(0.05)
    assert d.edge("b", active=True)  # each input has its own window
    t[0] = 0.2
    assert d.quiet_in("a") == 0 and d.edge("a", active=True)
    with pytest.raises(ValueError, match="must not be negative"):
        Debouncer(-1)


def test_the_simulated_pins_remember_a_bounded_history():
    """A ``serve --simulate`` left running (a blinking light, presses from the page) does not grow for ever."""
    factory = make_pin_factory("mock")
    try:
        led = LED(5, pin_factory=factory)
        for _ in range(5000):
            led.toggle()
        states = led.pin.states
        assert len(states) <= 2 * MOCK_PIN_HISTORY + 1
        assert [s.state for s in states[-2:]] == [True, False] and led.is_lit is False  # the latest changes are kept, in order
    finally:
        factory.close()
