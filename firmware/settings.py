"""The table's GPIO settings (see ``companion/settings.py``)."""

from __future__ import annotations

from companion.settings import Setting, one_of

SETTINGS: list[Setting] = [
    Setting("gpio.pin_factory", "mock", "gpiozero pin factory: lgpio on a Pi, mock for the simulated table, none for no buttons at all. GPIOZERO_PIN_FACTORY overrides it.", one_of("lgpio", "rpigpio", "pigpio", "native", "mock", "none")),
]
