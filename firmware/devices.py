"""The table's gpiozero devices, opened from a checked ``PinMap``.

Every device is created with an explicit ``pin_factory``, as gpiozero's own
devices allow, so the same code drives lgpio pins on the Pi and ``MockFactory``
pins in the simulated table and the tests. Buttons and the lid's reed switch
are wired to ground and use the internal pull-up; gpiozero's ``bounce_time`` is
left off because ``firmware.debounce`` does that job on every backend. They are
``DigitalInputDevice``s rather than ``Button``s: the table has no use for
"held" events, and a ``Button`` keeps a hold-watching thread per input.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from importlib.metadata import entry_points
from typing import Any

from gpiozero import LED, PWMLED, Buzzer, Device, DigitalInputDevice
from gpiozero.pins.mock import MockFactory, MockPWMPin

from companion.core.errors import HardwareError
from firmware.pins import PinMap

log = logging.getLogger(__name__)

#: PWM frequency of the tray's LED ring. gpiozero's default (100 Hz) puts dark bands
#: across a rolling-shutter picture whenever the exposure is not a whole number of
#: periods; at 2 kHz a period is 0.5 ms, shorter than any exposure the dim box uses.
RING_PWM_HZ = 2000


#: How many state changes a simulated pin remembers (gpiozero's mock keeps them all).
MOCK_PIN_HISTORY = 256


class BoundedMockPin(MockPWMPin):
    """gpiozero's mock PWM pin, remembering only its last ``MOCK_PIN_HISTORY`` state changes.

    ``MockPin`` appends every change to ``states`` for tests to inspect; a
    ``serve --simulate`` left running for days (a blinking status light, a
    button pressed from the page) would grow by about 100 bytes a change, for
    ever. The last few hundred changes are all a test ever looks at.
    """

    def _change_state(self, value: Any) -> bool:
        changed = super()._change_state(value)
        if changed and len(self.states) > 2 * MOCK_PIN_HISTORY:
            del self.states[:-MOCK_PIN_HISTORY]  # trimmed in batches: one list copy per MOCK_PIN_HISTORY changes
        return changed


def make_pin_factory(name: str) -> Any:
    """The gpiozero pin factory called ``name`` ("lgpio", "mock", ...).

    ``mock`` gives a ``MockFactory`` whose pins can do PWM (the tray's LED ring
    needs it) and remember a bounded history (``BoundedMockPin``). A factory that cannot load here (no lgpio off a Pi, no
    /dev/gpiochip) is a ``HardwareError`` saying what to do.

    >>> type(make_pin_factory("mock")).__name__
    'MockFactory'
    """
    if name == "mock":
        return MockFactory(pin_class=BoundedMockPin)
    found = [ep for ep in entry_points(group="gpiozero_pin_factories") if ep.name == name]
    if not found:
        raise HardwareError(f"gpiozero has no pin factory called {name!r} here; install its library (python3-lgpio on a Pi) or set gpio.pin_factory to mock or none.")
    try:
        return found[0].load()()
    except Exception as exc:  # the backends raise ImportError, OSError, their own errors
        raise HardwareError(
            f"The GPIO pin factory {name!r} could not start ({exc}). On a Raspberry Pi, run the service as a user in the gpio group; "
            "off a Pi, set gpio.pin_factory to mock (simulated buttons) or none (no buttons)."
        ) from exc


@dataclass
class TableDevices:
    """The open devices of one table; optional parts are ``None`` when not fitted.

    >>> from companion.core.settings import Settings
    >>> from firmware.pins import check_pin_map
    >>> devices = TableDevices.open(check_pin_map(Settings.defaults()), make_pin_factory("mock"))
    >>> devices.believe_light.is_lit, devices.lid_switch is None
    (False, True)
    >>> devices.close()
    """

    pins: PinMap
    pin_factory: Any
    believe_button: DigitalInputDevice
    bluff_button: DigitalInputDevice
    believe_light: LED
    bluff_light: LED
    status_light: LED
    tray_light: PWMLED
    lid_switch: DigitalInputDevice | None = None
    confirm_button: DigitalInputDevice | None = None
    buzzer: Buzzer | None = None
    _opened: list[Device] = field(default_factory=list, repr=False)

    @classmethod
    def open(cls, pins: PinMap, pin_factory: Any) -> "TableDevices":
        """Open every fitted device; on any failure close what was opened and raise ``HardwareError``."""
        opened: list[Device] = []

        def add(kind: type, pin: int | None, what: str, **kw: Any) -> Any:
            if pin is None:
                return None
            try:
                dev = kind(pin, pin_factory=pin_factory, **kw)
            except Exception as exc:
                for d in reversed(opened):
                    d.close()
                raise HardwareError(f"The {what} on BCM pin {pin} could not be opened ({exc}).") from exc
            opened.append(dev)
            return dev

        devices = cls(
            pins=pins,
            pin_factory=pin_factory,
            believe_button=add(DigitalInputDevice, pins.believe_button, "Believe button", pull_up=True, bounce_time=None),
            bluff_button=add(DigitalInputDevice, pins.bluff_button, "Bluff button", pull_up=True, bounce_time=None),
            believe_light=add(LED, pins.believe_light, "Believe button's light"),
            bluff_light=add(LED, pins.bluff_light, "Bluff button's light"),
            status_light=add(LED, pins.status_light, "status light"),
            tray_light=add(PWMLED, pins.tray_light, "tray's LED ring", frequency=RING_PWM_HZ),
            lid_switch=add(DigitalInputDevice, pins.lid_switch, "lid switch", pull_up=True, bounce_time=None),
            confirm_button=add(DigitalInputDevice, pins.confirm_button, "Confirm button", pull_up=True, bounce_time=None),
            buzzer=add(Buzzer, pins.buzzer, "buzzer"),
        )
        devices._opened = opened
        return devices

    @property
    def is_simulated(self) -> bool:
        return isinstance(self.pin_factory, MockFactory)

    def inputs(self) -> dict[str, DigitalInputDevice]:
        """The fitted inputs by the name the page and ``press`` use."""
        named = {"believe": self.believe_button, "bluff": self.bluff_button, "lid": self.lid_switch, "confirm": self.confirm_button}
        return {k: v for k, v in named.items() if v is not None}

    def close(self) -> None:
        """Switch everything off and release the pins. Idempotent."""
        for dev in reversed(self._opened):
            try:
                dev.close()
            except Exception:  # closing must not stop the others from closing
                log.exception("closing %r failed", dev)
        self._opened = []
