"""The pin map: which BCM pin each table device uses, checked once at start-up.

A wrong pin found only when a player presses a button is a ruined evening; a
pin used twice makes two devices fight over one wire. ``check_pin_map`` refuses
both at start-up with a ``SettingsError`` that names the setting.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any, Mapping

from companion.core.errors import SettingsError
from firmware.settings import FIRST_PIN, LAST_PIN, PIN_FACTORIES, REQUIRED_PINS, SUGGESTED_PINS

PIN_FACTORY_ENV = "GPIOZERO_PIN_FACTORY"
PIN_KEYS = tuple(REQUIRED_PINS) + tuple(SUGGESTED_PINS)


@dataclass(frozen=True)
class PinMap:
    """The checked pin of every device; ``None`` for an optional part that is not fitted.

    >>> from companion.core.settings import Settings
    >>> pins = check_pin_map(Settings.defaults())
    >>> pins.believe_button, pins.lid_switch
    (17, None)
    """

    believe_button: int
    bluff_button: int
    believe_light: int
    bluff_light: int
    status_light: int
    tray_light: int
    lid_switch: int | None = None
    confirm_button: int | None = None
    buzzer: int | None = None


def _where(settings: Any) -> str:
    path = getattr(settings, "path", None)
    return str(path) if path else "settings"


def check_pin_map(settings: Any) -> PinMap:
    """Check every ``gpio.*`` pin and return the ``PinMap``.

    Raises ``SettingsError`` naming the key when a pin is not a whole number,
    is outside GPIO2..GPIO27, or is already used by another device. Call it at
    start-up, before any device is opened.

    >>> from companion.core.settings import Settings
    >>> check_pin_map(Settings.defaults().with_overrides(gpio__bluff_button=17))
    Traceback (most recent call last):
    ...
    companion.core.errors.SettingsError: settings: gpio.bluff_button: uses BCM pin 17, which gpio.believe_button already uses; give each device its own pin
    """
    where = _where(settings)
    used: dict[int, str] = {}
    values: dict[str, int | None] = {}
    for key in PIN_KEYS:
        optional = key in SUGGESTED_PINS
        value = settings.get(key, -1 if optional else REQUIRED_PINS[key])
        if isinstance(value, bool) or not isinstance(value, int):
            raise SettingsError(where, key, f"must be a whole BCM pin number, not {value!r}")
        if optional and value == -1:
            values[key] = None
            continue
        if value in (0, 1):
            raise SettingsError(where, key, f"uses BCM pin {value}, which is reserved for the HAT ID EEPROM; use a pin from {FIRST_PIN} to {LAST_PIN}")
        if not FIRST_PIN <= value <= LAST_PIN:
            tail = ", or -1 when the part is not fitted" if optional else ""
            raise SettingsError(where, key, f"must be a BCM pin number from {FIRST_PIN} to {LAST_PIN}{tail}, not {value}")
        if value in used:
            raise SettingsError(where, key, f"uses BCM pin {value}, which {used[value]} already uses; give each device its own pin")
        used[value] = key
        values[key] = value
    return PinMap(**{k.split(".", 1)[1]: v for k, v in values.items()})  # type: ignore[arg-type]


def pin_factory_name(settings: Any, environ: Mapping[str, str] | None = None) -> str:
    """The pin factory in force: ``GPIOZERO_PIN_FACTORY`` overrides ``gpio.pin_factory``.

    >>> from companion.core.settings import Settings
    >>> pin_factory_name(Settings.defaults(), {"GPIOZERO_PIN_FACTORY": "lgpio"})
    'lgpio'
    """
    environ = os.environ if environ is None else environ
    env = environ.get(PIN_FACTORY_ENV)
    if env is not None and env != "":
        name = env.strip().lower()
        if name not in PIN_FACTORIES:
            raise SettingsError(PIN_FACTORY_ENV, None, f"must be one of {', '.join(PIN_FACTORIES)}, not {env!r}")
        return name
    name = settings.get("gpio.pin_factory", "mock")
    if name not in PIN_FACTORIES:
        raise SettingsError(_where(settings), "gpio.pin_factory", f"must be one of {', '.join(PIN_FACTORIES)}, not {name!r}")
    return name
