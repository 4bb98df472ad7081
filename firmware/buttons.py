"""The tray's inputs: Believe, Bluff, the optional Confirm button and lid switch, debounced.

gpiozero calls the callbacks on its own threads. Here a callback does the
least it can: it debounces the edge, makes sure the input is still pressed a
moment later (``glitch_s``) and hands the press on (``on_press``), never raising,
so one bad edge can never stop the table. The moment is why a callback may wait
(three looks ``glitch_s`` apart at most): a spike of electrical noise on a long
lead to the tray is an edge too, and without the look it was a Believe or a
Bluff nobody pressed. A finger holds a button for tens of milliseconds; a spike
lasts microseconds. On the simulated table ``drive`` presses a button by driving
its mock pin.
"""

from __future__ import annotations

import logging
import time
from typing import Any, Callable

from companion.core.errors import BadRequest
from firmware.debounce import Debouncer
from firmware.devices import TableDevices

log = logging.getLogger(__name__)

#: the inputs a table may have; "lid" is the reed switch (a press: the lid is lifted)
BUTTONS = ("believe", "bluff", "confirm", "lid")
PIN_KEYS = {"believe": "gpio.believe_button", "bluff": "gpio.bluff_button", "confirm": "gpio.confirm_button", "lid": "gpio.lid_switch"}
#: how many times, ``glitch_s`` apart, an input is looked at after its edge before the edge is taken for noise: a
#: button whose contacts still chatter at the first look is pressed at the next
GLITCH_LOOKS = 3


class TableButtons:
    """Debounced presses of the fitted inputs, handed to ``on_press(name)``.

    >>> from companion.core.settings import Settings
    >>> from firmware.devices import make_pin_factory
    >>> from firmware.pins import check_pin_map
    >>> devices = TableDevices.open(check_pin_map(Settings.defaults()), make_pin_factory("mock"))
    >>> pressed = []
    >>> buttons = TableButtons(devices, pressed.append, simulated=True)
    >>> buttons.drive("bluff"); pressed
    ['bluff']
    >>> devices.close()
    """

    def __init__(
        self,
        devices: TableDevices,
        on_press: Callable[[str], None],
        *,
        debounce_s: float = 0.05,
        glitch_s: float = 0.01,
        simulated: bool = False,
        on_problem: Callable[[str], None] = lambda what: None,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.devices = devices
        self.simulated = simulated
        self._on_press = on_press
        #: told "bounced" for an edge taken for contact bounce, "glitches" for one taken for noise (the input no
        #: longer pressed at any look), "errors" for a failed callback
        self._on_problem = on_problem
        self._debouncer = Debouncer(debounce_s, clock=clock)
        if glitch_s < 0:
            raise ValueError(f"the glitch check's wait must not be negative, not {glitch_s}")
        self.glitch_s = float(glitch_s)
        self._sleep = sleep
        self._wire()

    def fitted(self, name: str) -> Any:
        """The gpiozero device of input ``name``; ``BadRequest`` for an unknown or unfitted one."""
        if not isinstance(name, str) or name not in BUTTONS:
            raise BadRequest(f"There is no button called {name!r}; the table's buttons are {', '.join(BUTTONS)}.")
        device = self.devices.inputs().get(name)
        if device is None:
            raise BadRequest(f"This table has no {name} {'switch' if name == 'lid' else 'button'} fitted ({PIN_KEYS[name]} is -1).")
        return device

    def drive(self, name: str) -> None:
        """Press ``name`` on mock pins (the lid: lift it and put it back), after the debounce window so it counts.
        The mock pin calls back on this thread, so the pin is held through the glitch check's looks."""
        device = self.fitted(name)
        wait = self._debouncer.quiet_in(name)
        if wait:
            self._sleep(wait + 0.001)  # a program does not bounce: let the window pass so this press counts
        if name == "lid":
            device.pin.drive_high()
            device.pin.drive_low()
        else:
            device.pin.drive_low()
            device.pin.drive_high()

    def _wire(self) -> None:
        d = self.devices
        for name in ("believe", "bluff", "confirm"):
            button = d.inputs().get(name)
            if button is not None:
                button.when_activated = self._callback(name, True)
                button.when_deactivated = self._callback(name, False)
        if d.lid_switch is not None:
            if self.simulated:
                d.lid_switch.pin.drive_low()  # the simulated lid starts closed (magnet on the reed)
            d.lid_switch.when_deactivated = self._callback("lid", True)  # reed opens: lid lifted
            d.lid_switch.when_activated = self._callback("lid", False)

    def _callback(self, name: str, active: bool) -> Callable[[], None]:
        def on_edge() -> None:
            try:
                if not self._debouncer.edge(name, active=active):
                    if active:
                        self._on_problem("bounced")
                    return
                if active:
                    if not self._still_pressed(name):
                        self._on_problem("glitches")
                        log.info("table: an edge of the %s input was taken for electrical noise (not pressed a moment later)", name)
                        return
                    self._on_press(name)
            except Exception:
                self._on_problem("errors")
                log.exception("the %s input's callback failed; the table carries on", name)

        return on_edge

    def _still_pressed(self, name: str) -> bool:
        """Whether ``name`` reads pressed (the lid: lifted) at one of ``GLITCH_LOOKS`` looks ``glitch_s`` apart after
        its edge; always, where ``glitch_s`` is 0."""
        if not self.glitch_s:
            return True
        device = self.devices.inputs()[name]
        for _ in range(GLITCH_LOOKS):
            self._sleep(self.glitch_s)
            if device.is_active != (name == "lid"):  # the reed switch opens (deactivates) when the lid is lifted
                return True
        return False
