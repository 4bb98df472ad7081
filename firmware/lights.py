"""The tray's lights and buzzer: what they show for each phase, the busy blink, and the refusal flash.

The Believe and Bluff LEDs are lit while those buttons may be pressed (phase
``decide``); the status LED is on while a game runs, blinks slowly in
``confirm`` (type the dice on the tablet), quickly while the camera reads, and
three times for a refused press, then goes back to what the phase wants.
"""

from __future__ import annotations

import threading
import time
from typing import Any, Callable

from firmware.devices import TableDevices


def status_for(state: dict[str, Any] | None) -> str:
    """The status light for a game state: off with no game or a finished one, slow blink in confirm.

    >>> status_for(None), status_for({"phase": "decide"}), status_for({"phase": "confirm"}), status_for({"phase": "over"})
    ('off', 'on', 'blink', 'off')
    """
    phase = state.get("phase") if state else None
    return {None: "off", "over": "off", "confirm": "blink"}.get(phase, "on")


class TableLights:
    """Drives the LEDs and the buzzer of ``devices``; safe to call from any thread.

    >>> from companion.core.settings import Settings
    >>> from firmware.devices import make_pin_factory
    >>> from firmware.pins import check_pin_map
    >>> devices = TableDevices.open(check_pin_map(Settings.defaults()), make_pin_factory("mock"))
    >>> lights = TableLights(devices)
    >>> lights.show({"phase": "decide", "id": "g-1"})
    >>> lights.snapshot()["bluff"], lights.status
    (True, 'on')
    >>> devices.close()
    """

    def __init__(self, devices: TableDevices, *, refusal_flash_s: float = 0.9, clock: Callable[[], float] = time.monotonic) -> None:
        self.devices = devices
        self.refusal_flash_s = refusal_flash_s
        self._clock = clock
        self._lock = threading.RLock()
        self._last_state: dict[str, Any] | None = None
        #: what the status LED shows now: off, on, blink, busy, refused
        self.status = "off"
        self._wanted = "off"
        self._restore_at: float | None = None
        self._closed = False

    @property
    def flashing(self) -> bool:
        """A refusal flash is showing (the table's worker polls ``restore_due`` until it ends)."""
        return self._restore_at is not None

    def show(self, state: dict[str, Any] | None) -> None:
        """Show a game state: Believe and Bluff lit in ``decide``, the status for its phase, a beep for news."""
        phase = state.get("phase") if state else None
        with self._lock:
            previous = self._last_state
            self._last_state = state
            self.set(phase == "decide", phase == "decide", status_for(state))
        self._beep_for(previous, state)

    def busy(self, busy: bool) -> None:
        """The camera reads (fast blink, buttons dark) or has finished (the status of the last state shown)."""
        if busy:
            self.set(False, False, "busy")
        else:
            # only the status light: Believe and Bluff stay dark until the state that follows the
            # capture (a verdict, or the end of the lid check) says what may be pressed
            self.set_status(status_for(self._last_state))

    def set(self, believe: bool, bluff: bool, status: str) -> None:
        d = self.devices
        with self._lock:
            if self._closed:
                return
            d.believe_light.value = believe
            d.bluff_light.value = bluff
            self._wanted = status
            if status == "busy":
                self._restore_at = None  # the reading matters more than an old refusal
            self._apply_status()

    def set_status(self, status: str) -> None:
        with self._lock:
            self._wanted = status
            self._apply_status()

    def flash_refused(self) -> None:
        """Three quick flashes; a second refusal restarts them."""
        with self._lock:
            self._restore_at = self._clock() + self.refusal_flash_s
            self.status = "restart"
            self._apply_status()

    def restore_due(self) -> None:
        """End the refusal flash once its time is up."""
        with self._lock:
            if self._restore_at is None or self._clock() < self._restore_at:
                return
            self._restore_at = None
            self._apply_status()

    def snapshot(self) -> dict[str, Any]:
        """What the tray shows now: for the page and the tests."""
        d = self.devices
        with self._lock:
            return {
                "believe": bool(d.believe_light.is_lit),
                "bluff": bool(d.bluff_light.is_lit),
                "status": self.status,
                "tray": float(d.tray_light.value),
                "buzzer": bool(d.buzzer.is_active) if d.buzzer else None,
                "lid": ("closed" if d.lid_switch.is_active else "open") if d.lid_switch else None,
            }

    def close(self) -> None:
        with self._lock:
            self._closed = True

    def _apply_status(self) -> None:
        """Show the refusal flash while it lasts, else the status the phase wants."""
        led = self.devices.status_light
        with self._lock:
            shown = "refused" if self._restore_at is not None else self._wanted
            if self._closed or shown == self.status:
                return
            self.status = shown
            if shown == "on":
                led.on()
            elif shown == "off":
                led.off()
            elif shown == "blink":
                led.blink(on_time=0.5, off_time=0.5)
            elif shown == "busy":
                led.blink(on_time=0.08, off_time=0.08)
            elif shown == "refused":
                led.blink(on_time=0.12, off_time=0.12, n=3)

    def _beep_for(self, previous: dict[str, Any] | None, state: dict[str, Any] | None) -> None:
        buzzer = self.devices.buzzer
        if buzzer is None or not state or not previous or previous.get("id") != state.get("id"):
            return
        if state.get("phase") == "over" and previous.get("phase") != "over":
            buzzer.beep(on_time=0.3, off_time=0.2, n=3, background=True)
        elif state.get("last_challenge") and state.get("last_challenge") != previous.get("last_challenge"):
            buzzer.beep(on_time=0.15, off_time=0.1, n=1, background=True)
