"""The table: the tray's buttons and lights in front of the referee.

``buttons`` debounces the presses and hands each one here; one worker thread
pulls them from a queue and calls the referee for the game in progress
(Believe, with ``peeked`` from the lid switch; Bluff, which runs the capture
loop; Confirm, which reads the dice again). ``lights`` follows the game state.

- A press the phase does not allow is ignored, flashes the status light three
  times and is logged; so is a press made while another action was under way
  (the player pressed for a state of the game that has changed since).
- An exception anywhere in a callback or a handler is logged and counted; the
  table carries on.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from dataclasses import dataclass
from typing import Any, Callable

from companion.core.capture import DiceSource
from companion.core.errors import ElephantsBluffError, NotAllowed
from companion.core.protocols import TrayCapture
from firmware.buttons import BUTTONS, TableButtons
from firmware.devices import TableDevices, make_pin_factory
from firmware.lights import TableLights
from firmware.peek import PeekWatch
from firmware.pins import check_pin_map, pin_factory_name

log = logging.getLogger(__name__)

__all__ = ["BUTTONS", "TableController", "build_table"]


@dataclass
class _Event:
    kind: str  # "press", "lid", "state", "stop"
    name: str = ""
    seq: int = 0
    generation: int = 0
    state: dict[str, Any] | None = None


class TableController:
    """Runs the tray's buttons and lights against a ``Referee``.

    >>> from companion.core.settings import Settings
    >>> from firmware.devices import make_pin_factory
    >>> from firmware.pins import check_pin_map
    >>> class NoGame:                      # a referee with no game in progress
    ...     def add_listener(self, fn): pass
    ...     def current_game_id(self): return None
    ...     def newest_game(self): return None
    >>> devices = TableDevices.open(check_pin_map(Settings.defaults()), make_pin_factory("mock"))
    >>> table = TableController(NoGame(), devices)
    >>> table.press("bluff")["message"]
    'No game is in progress: start one on the tablet.'
    >>> table.lights_state()["bluff"]
    False
    >>> table.close()
    """

    def __init__(
        self,
        referee: Any,
        devices: TableDevices,
        *,
        dice_source: DiceSource | None = None,
        peek_watch: PeekWatch | None = None,
        debounce_s: float = 0.05,
        glitch_s: float = 0.01,
        refusal_flash_s: float = 0.9,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
        simulated: bool | None = None,
    ) -> None:
        self.referee = referee
        #: buttons may be pressed through ``press`` (mock pins of the simulated table)
        self.simulated = devices.is_simulated if simulated is None else bool(simulated and devices.is_simulated)
        self.pin_factory_name = type(devices.pin_factory).__name__
        self.devices = devices
        self.dice_source = dice_source
        self.peek_watch = peek_watch
        self.lights = TableLights(devices, refusal_flash_s=refusal_flash_s, clock=clock)
        self._queue: queue.Queue[_Event] = queue.Queue()
        self._lock = threading.RLock()  # lights, counters, outcomes
        self._press_lock = threading.Lock()  # one simulated press at a time
        self._outcome_ready = threading.Condition(self._lock)
        self._seq = 0
        self._generation = 0
        self._outcomes: dict[int, dict[str, Any]] = {}
        self._closed = False
        self.last_refusal: str | None = None
        self.stats = {"accepted": 0, "refused": 0, "stale": 0, "bounced": 0, "glitches": 0, "errors": 0}
        self.buttons = TableButtons(devices, self._pressed, debounce_s=debounce_s, glitch_s=glitch_s, simulated=self.simulated, on_problem=self._count, clock=clock, sleep=sleep)
        referee.add_listener(self._on_state)
        self._worker = threading.Thread(target=self._work, name="table-worker", daemon=True)
        self._worker.start()
        self._show_current()

    # -- what the app uses ---------------------------------------------------

    @property
    def tray_light(self) -> Any:
        """The tray's LED ring (a ``PWMLED``), for ``CaptureLoop.attach_light``."""
        return self.devices.tray_light

    @property
    def peek_warning(self) -> dict[str, Any] | None:
        """The lid check's current warning (seat and rule, never a value), or None."""
        return self.peek_watch.warning if self.peek_watch else None

    def add_warning_listener(self, fn: Callable[[dict[str, Any] | None], None]) -> None:
        """``fn(warning or None)`` whenever the lid check's warning appears or clears (for the page's stream).

        Called from the table's worker thread; without a lid switch it is never called.
        """
        if self.peek_watch is not None:
            self.peek_watch.add_listener(fn)

    def lights_state(self) -> dict[str, Any]:
        """What the tray shows now: for the page and the tests."""
        with self._lock:
            return {**self.lights.snapshot(), "last_refusal": self.last_refusal, "peek_warning": self.peek_warning}

    def press(self, button: str, *, timeout: float = 30.0) -> dict[str, Any]:
        """Press a button of the simulated table by driving its mock pin low, then high.

        The real callback, debounce, queue and worker run, exactly as for a
        finger on the tray. ``lid`` lifts the lid and puts it back. Returns what
        the table did: ``{"button", "result": done|refused|ignored|error, "message"}``.
        Raises ``NotAllowed`` off the simulated table and ``BadRequest`` for an
        unknown or unfitted button.
        """
        if self._closed:
            raise NotAllowed("The table has been shut down.")
        if not self.simulated:
            raise NotAllowed("The table's buttons can be pressed from the page only on the simulated table (serve --simulate).")
        self.buttons.fitted(button)
        with self._press_lock:
            with self._lock:
                first = self._seq + 1
            self.buttons.drive(button)
            with self._lock:
                last = self._seq
            if last < first:
                return {"button": button, "result": "ignored", "message": "The press was taken for contact bounce."}
            with self._outcome_ready:
                if not self._outcome_ready.wait_for(lambda: last in self._outcomes, timeout):
                    return {"button": button, "result": "pending", "message": "The table is still busy with this press."}
                return dict(self._outcomes[last])

    def health(self) -> str:
        """"ok", or a sentence saying why the buttons do not work (for ``/api/health``)."""
        if self._closed:
            return "The table's buttons are shut down."
        if not self._worker.is_alive():
            return "The table's button worker has stopped; restart the companion."
        return "ok"

    def capture_busy(self, busy: bool) -> None:
        """A ``CaptureLoop`` busy listener: blink fast while the camera reads, whoever asked for it."""
        if self._closed:
            return
        try:
            self.lights.busy(busy)
        except Exception:
            self._count("errors")
            log.exception("showing the capture on the lights failed")

    def wait_idle(self, timeout: float | None = None) -> bool:
        """Wait until every queued event has been handled; False if ``timeout`` passed first."""
        q = self._queue
        with q.all_tasks_done:
            return q.all_tasks_done.wait_for(lambda: q.unfinished_tasks == 0, timeout)

    def close(self) -> None:
        """Stop the worker, switch the lights off and release the pins. Idempotent."""
        if self._closed:
            return
        self._closed = True
        self._queue.put(_Event("stop"))
        if self._worker is not threading.current_thread():
            self._worker.join(timeout=10)
        if isinstance(self.dice_source, TrayCapture):
            if self.dice_source.tray_light is self.devices.tray_light:
                self.dice_source.attach_light(None)
            self.dice_source.remove_busy_listener(self.capture_busy)
        self.lights.close()
        self.devices.close()

    # -- from the buttons' callbacks: enqueue, never block ---------------------

    def _pressed(self, name: str) -> None:
        with self._lock:
            self._seq += 1
            event = _Event("lid" if name == "lid" else "press", name, self._seq, self._generation)
        self._queue.put_nowait(event)

    def _on_state(self, state: dict[str, Any]) -> None:
        """The referee's listener: runs in the acting thread, so it only shows and enqueues."""
        if self._closed:
            return
        try:
            if not self._on_the_table(state):
                return
            with self._lock:
                self._generation += 1
            self._show(state)
            if self.peek_watch is not None:
                self._queue.put_nowait(_Event("state", state=state))
        except Exception:
            self._count("errors")
            log.exception("updating the table from the game state failed; the table carries on")

    # -- the worker ----------------------------------------------------------

    def _work(self) -> None:
        while True:
            try:
                event = self._queue.get(timeout=0.05 if self.lights.flashing else None)
            except queue.Empty:
                self._restore_lights()
                continue
            try:
                if event.kind == "stop":
                    return
                self._handle(event)
            except Exception:
                self._count("errors")
                log.exception("handling %s %s failed; the table carries on", event.kind, event.name)
                self._finish(event, "error", "Something went wrong on the table; see the companion's log.")
                self._show_current()
            finally:
                self._queue.task_done()
                self._restore_lights()

    def _restore_lights(self) -> None:
        """End a refusal flash that is due; a light that fails to switch (a GPIO write error) is logged and the
        buttons carry on: it ended the worker, and every later press went unanswered."""
        try:
            self.lights.restore_due()
        except Exception:
            self._count("errors")
            log.exception("switching the table's lights back after a refusal failed; the table carries on")

    def _handle(self, event: _Event) -> None:
        if event.kind == "state":
            assert event.state is not None
            if self.peek_watch is not None and self.peek_watch.state_changed(event.state) is not None:
                self._show_current()  # the check's private reading darkened the buttons
            return
        if event.kind == "lid":
            self._handle_lid(event)
            return
        with self._lock:
            stale = event.generation != self._generation
        if stale:
            self._count("stale")
            self._refuse(event, f"{event.name.capitalize()} was pressed while the table was busy; press it again if you still mean it.", "ignored")
            return
        game_id = self.referee.current_game_id()
        if game_id is None:
            newest = self.referee.newest_game()
            over = newest is not None and newest[1] == "over"
            self._refuse(event, "The game is over: start a rematch or a new game on the tablet." if over else "No game is in progress: start one on the tablet.")
            return
        try:
            self._act(event, game_id)
        except ElephantsBluffError as exc:
            self._refuse(event, exc.message)
            self._show_current()

    def _act(self, event: _Event, game_id: str) -> None:
        if event.name == "believe":
            state = self.referee.game_state(game_id)
            peeked = self.peek_watch.peeked(game_id, state) if self.peek_watch else False
            self.referee.believe(game_id, peeked=peeked)
            self._accept(event, "Believed" + (" (the lid was lifted: re-roll at least one die)." if peeked else "."))
        elif event.name == "bluff":
            self.lights.set(False, False, "busy")
            state, _ = self.referee.bluff(game_id)
            if state.get("phase") == "confirm" and self.referee.camera_mode == "off":
                self._accept(event, "Bluff called: the table plays without the camera; type the dice on the tablet.")
            elif state.get("phase") == "confirm":
                self._accept(event, "Bluff called: the camera could not read the dice for sure; check them on the tablet.")
            else:
                self._accept(event, "Bluff called: the dice were read and the Bluff decided.")
        elif event.name == "confirm":
            self._confirm(event, game_id)

    def _confirm(self, event: _Event, game_id: str) -> None:
        state = self.referee.game_state(game_id)
        if state.get("phase") != "confirm":
            raise NotAllowed("Confirm is for checking the dice after an unclear reading; there is nothing to confirm now.")
        if self.dice_source is None:
            raise NotAllowed("This table has no camera to read the dice again: type them on the tablet.")
        self.lights.set(False, False, "busy")
        # the second look is saved and logged as the Bluff's (R14, R15): not the table's typing, which nobody did
        self.referee.read_again(game_id)
        self._accept(event, "The dice were read again and the Bluff decided.")

    def _handle_lid(self, event: _Event) -> None:
        game_id = self.referee.current_game_id()
        if game_id is None:
            self._finish(event, "done", "The lid was lifted (no game in progress).")
            return
        if self.peek_watch is None:
            self._finish(event, "done", "The lid was lifted (this table does not check peeks).")
            return
        state = self.referee.game_state(game_id)
        self.lights.set_status("busy")
        try:
            counted = self.peek_watch.lid_opened(state)
        finally:
            self._show_current()
        self._finish(event, "done", "The lid was lifted: a peek." if counted else "The lid was lifted.")

    # -- outcomes and lights -------------------------------------------------

    def _accept(self, event: _Event, message: str) -> None:
        self._count("accepted")
        log.info("table: %s pressed: %s", event.name, message)
        self._finish(event, "done", message)

    def _refuse(self, event: _Event, message: str, result: str = "refused") -> None:
        if result == "refused":
            self._count("refused")
        log.info("table: %s pressed and ignored: %s", event.name, message)
        with self._lock:
            self.last_refusal = message
        self.lights.flash_refused()
        self._finish(event, result, message)

    def _finish(self, event: _Event, result: str, message: str | None) -> None:
        with self._outcome_ready:
            self._outcomes[event.seq] = {"button": event.name, "result": result, "message": message}
            for old in [s for s in self._outcomes if s < event.seq - 50]:
                del self._outcomes[old]
            self._outcome_ready.notify_all()

    def _count(self, what: str) -> None:
        with self._lock:
            self.stats[what] += 1

    def _on_the_table(self, state: dict[str, Any]) -> bool:
        """Whether ``state`` is the game on the table: a correction of a finished game announces that game, and the
        tray showed it (Believe and Bluff dark while the game in play waited for them) and took a press made then for
        one made before it (stale)."""
        current = self.referee.current_game_id()
        return current is None or state.get("id") == current

    def _show_current(self) -> None:
        try:
            game_id = self.referee.current_game_id()
            state = self.referee.game_state(game_id) if game_id else None
        except Exception:
            log.exception("could not read the game state for the lights")
            return
        self._show(state)

    def _show(self, state: dict[str, Any] | None) -> None:
        self.lights.show(state)


def build_table(
    settings: Any,
    referee: Any,
    *,
    simulate: bool,
    capture: DiceSource | None = None,
    pin_factory: Any = None,
    environ: dict[str, str] | None = None,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
) -> TableController | None:
    """The table for the app: pins checked, devices opened, lights following the referee.

    Returns None when the pin factory is ``none`` (no buttons: the tablet does
    everything). ``simulate`` uses gpiozero's ``MockFactory`` whatever the
    setting says, so ``serve --simulate`` runs this same code with mock pins.
    ``GPIOZERO_PIN_FACTORY`` overrides ``gpio.pin_factory``. ``capture`` serves
    the Confirm button's second reading; a ``TrayCapture`` (the capture loop)
    also gets the tray's LED ring and serves the lid's private peek check.

    >>> from companion.core.settings import Settings
    >>> build_table(Settings.defaults().with_overrides(gpio__pin_factory="none"), referee=None, simulate=True, environ={}) is None
    True
    """
    pins = check_pin_map(settings)
    name = pin_factory_name(settings, environ)
    if name == "none":
        return None
    factory = pin_factory if pin_factory is not None else make_pin_factory("mock" if simulate else name)
    devices = TableDevices.open(pins, factory)
    try:
        peek = None
        if devices.lid_switch is not None:
            peek = PeekWatch(capture.snapshot if isinstance(capture, TrayCapture) else (lambda: None))
        table = TableController(
            referee,
            devices,
            dice_source=capture,
            peek_watch=peek,
            debounce_s=settings["gpio.debounce_ms"] / 1000.0,
            glitch_s=settings["gpio.glitch_ms"] / 1000.0,
            clock=clock,
            sleep=sleep,
            simulated=simulate or name == "mock",
        )
    except Exception:
        devices.close()
        raise
    #: for /api/health's "gpio" field
    table.pin_factory_name = "mock" if simulate else name
    if isinstance(capture, TrayCapture):
        capture.attach_light(devices.tray_light)
        capture.add_busy_listener(table.capture_busy)
    return table
