"""The table's GPIO and capture settings (registered with ``companion.core.settings`` when imported).

Pins are BCM numbers (the ``GPIOnn`` names), not physical header positions;
``hardware/PINS.md`` and ``hardware/wiring.svg`` show both and a test checks that
they agree with the defaults below. Optional devices default to ``-1`` (not
fitted): an unfitted reed switch configured on a floating pin would read as an
open lid and mark every Believe as a peek. ``SUGGESTED_PINS`` says where the
hardware documents wire them when they are fitted.
"""

from __future__ import annotations

from typing import Any, Callable

from companion.core.settings import Setting, one_of, register_settings

#: BCM pins a pin-map entry may use: GPIO2..GPIO27 on the 40-pin header.
#: GPIO0/1 carry the HAT ID EEPROM bus and are refused.
FIRST_PIN, LAST_PIN = 2, 27

PIN_FACTORIES = ("lgpio", "rpigpio", "pigpio", "native", "mock", "none")

#: Required devices: key -> default BCM pin.
REQUIRED_PINS: dict[str, int] = {
    "gpio.believe_button": 17,
    "gpio.bluff_button": 27,
    "gpio.believe_light": 22,
    "gpio.bluff_light": 23,
    "gpio.status_light": 24,
    "gpio.tray_light": 18,
}

#: Optional devices: default -1 (not fitted); the pin the hardware documents use when fitted.
SUGGESTED_PINS: dict[str, int] = {
    "gpio.lid_switch": 5,
    "gpio.confirm_button": 6,
    "gpio.buzzer": 25,
}


def _required_pin(v: Any) -> str | None:
    if not FIRST_PIN <= v <= LAST_PIN:
        return f"must be a BCM pin number from {FIRST_PIN} to {LAST_PIN}, not {v}"
    return None


def _optional_pin(v: Any) -> str | None:
    if v == -1:
        return None
    if not FIRST_PIN <= v <= LAST_PIN:
        return f"must be a BCM pin number from {FIRST_PIN} to {LAST_PIN}, or -1 when the part is not fitted, not {v}"
    return None


def _number_between(low: float, high: float, unit: str = "") -> Callable[[Any], str | None]:
    return lambda v: None if low <= v <= high else f"must be between {low:g} and {high:g}{unit}, not {v:g}"


_DOCS = {
    "gpio.believe_button": "BCM pin of the Believe button (to ground; the internal pull-up is used).",
    "gpio.bluff_button": "BCM pin of the Bluff button (to ground; the internal pull-up is used).",
    "gpio.believe_light": "BCM pin of the LED in the Believe button (lit while Believe may be pressed).",
    "gpio.bluff_light": "BCM pin of the LED in the Bluff button (lit while Bluff may be pressed).",
    "gpio.status_light": "BCM pin of the status LED (on: ready; slow blink: confirm the dice on the tablet; fast blink: reading; 3 flashes: press refused).",
    "gpio.tray_light": "BCM pin driving the MOSFET of the LED ring under the tray (PWM; on only during a capture).",
    "gpio.lid_switch": "BCM pin of the reed switch that senses the lid (closed lid pulls it to ground); -1: not fitted. Suggested: 5.",
    "gpio.confirm_button": "BCM pin of the optional Confirm button (in phase confirm: read the dice again); -1: not fitted. Suggested: 6.",
    "gpio.buzzer": "BCM pin of the optional active buzzer (beeps a verdict); -1: not fitted. Suggested: 25.",
}

SETTINGS: list[Setting] = [
    Setting("gpio.pin_factory", "mock", "gpiozero pin factory: lgpio on a Pi, mock for the simulated table, none for no buttons at all. GPIOZERO_PIN_FACTORY overrides it.", one_of(*PIN_FACTORIES)),
    *(Setting(k, v, _DOCS[k], _required_pin) for k, v in REQUIRED_PINS.items()),
    *(Setting(k, -1, _DOCS[k], _optional_pin) for k in SUGGESTED_PINS),
    Setting("gpio.debounce_ms", 50, "Edges of one button closer together than this are one press (the project's own debounce; gpiozero's mock pins ignore bounce_time).", _number_between(0, 1000, " ms")),
    Setting("gpio.glitch_ms", 10, "An edge counts as a press only when the input still reads pressed this long after it (or at one of two more looks as far apart): a spike of electrical noise on the lead is not a press. 0: every edge the debounce takes is a press.", _number_between(0, 100, " ms")),
    Setting("capture.light_level", 0.8, "Brightness of the tray's LED ring during a capture, 0.05 to 1 (PWM duty).", _number_between(0.05, 1.0)),
    Setting("capture.still_timeout_s", 3.0, "How long a capture waits for the dice to lie still before it gives up and asks the table to type the dice.", _number_between(0.2, 30.0, " s")),
    Setting("capture.still_threshold", 2.0, "Mean grey-level change (0-255) between two frames below which the tray counts as still.", _number_between(0.1, 50.0)),
    Setting("capture.still_frames", 3, "How many still frame-to-frame comparisons in a row mean the dice lie still.", _number_between(1, 30)),
    Setting("capture.grab_timeout_s", 5.0, "A camera that gives no frame for this long is reported as not answering (the game goes to confirm, never hangs).", _number_between(0.5, 60.0, " s")),
    Setting("capture.jpeg_quality", 90, "JPEG quality of the saved Bluff frames (50-100).", _number_between(50, 100)),
]

register_settings(SETTINGS)
