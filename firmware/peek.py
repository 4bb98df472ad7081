"""The lid's peek check (RULES.md R6), kept private (R13).

A believer who peeked must re-roll at least one die before passing a new claim.
With a reed switch under the lid, the table knows when the lid was lifted: a
lift during the receiver's turn records a peek, and the dice are read
privately at that moment. When the peeker's next claim arrives they are read
again; if every die lies where it lay, on the same face, no die was re-rolled
and the table raises a warning. The warning names the seat and the rule,
never a value, and the readings are neither stored nor logged (R13).

A check that cannot be made (the camera could not read the tray, the dice were
still moving) gives "unknown" and no warning: the table never accuses on a
guess (R14's spirit).
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass
from typing import Any, Callable

from companion.core.reading import OK, Reading

log = logging.getLogger(__name__)

#: A die counts as the same die, unmoved, when its centre is within this fraction
#: of its box size of where it was and it shows the same face.
SAME_PLACE_FRACTION = 0.3

MOVED, NOT_MOVED, UNKNOWN = "moved", "not moved", "unknown"


def dice_moved(before: Reading | None, after: Reading | None) -> str:
    """``moved``, ``not moved`` or ``unknown`` (either reading missing or not clean).

    >>> from companion.core.reading import DieReading
    >>> a = Reading(OK, tuple(DieReading(1, 6, 1.0, (x, 10, 20, 20)) for x in (0, 40, 80)))
    >>> b = Reading(OK, a.dice[:2] + (DieReading(2, 5, 1.0, (80, 10, 20, 20)),))
    >>> dice_moved(a, a), dice_moved(a, b), dice_moved(a, None)
    ('not moved', 'moved', 'unknown')
    """
    if before is None or after is None or before.status != OK or after.status != OK:
        return UNKNOWN
    if len(before.dice) != len(after.dice) or not before.dice:
        return UNKNOWN
    left = list(before.dice)
    for die in after.dice:
        cx, cy = die.box[0] + die.box[2] / 2, die.box[1] + die.box[3] / 2
        tol = SAME_PLACE_FRACTION * max(1.0, (die.box[2] + die.box[3]) / 2)
        match = next(
            (
                old
                for old in left
                if old.top == die.top and abs(old.box[0] + old.box[2] / 2 - cx) <= tol and abs(old.box[1] + old.box[3] / 2 - cy) <= tol
            ),
            None,
        )
        if match is None:
            return MOVED
        left.remove(match)
    return NOT_MOVED


@dataclass
class _Peek:
    game_id: str
    round: int
    seat: int
    baseline: Reading | None = None


def receiver_turn(state: dict[str, Any]) -> bool:
    """True while the player to act has received a claim: deciding, or making the next claim after a Believe."""
    phase = state.get("phase")
    return phase == "decide" or (phase == "claim" and state.get("claim") is not None)


class PeekWatch:
    """Remembers peeks and checks R6 when the peeker's next claim arrives.

    ``snapshot`` reads the tray privately (``CaptureLoop.snapshot``); it is
    called from the table's worker thread, never from a gpiozero callback.

    >>> from companion.core.reading import DieReading
    >>> dice = Reading(OK, tuple(DieReading(1, 6, 1.0, (x, 0, 20, 20)) for x in (0, 40, 80)))
    >>> watch = PeekWatch(snapshot=lambda: dice)
    >>> deciding = {"id": "g-1", "round": 1, "phase": "decide", "to_act": 1, "claim": {"amount": 9, "by": 0}}
    >>> watch.lid_opened(deciding)
    True
    >>> watch.peeked("g-1", deciding)
    True
    >>> watch.state_changed({"id": "g-1", "round": 1, "phase": "decide", "to_act": 2, "claim": {"amount": 10, "by": 1}})
    'not moved'
    >>> watch.warning["message"]
    'Seat 1 lifted the lid but no die seems to have been re-rolled before the next claim (rule R6).'
    """

    def __init__(self, snapshot: Callable[[], Reading | None], on_warning: Callable[[dict | None], None] | None = None) -> None:
        self._snapshot = snapshot
        self._listeners: list[Callable[[dict | None], None]] = [on_warning] if on_warning else []
        self._peek: _Peek | None = None
        self._claim_key: tuple | None = None
        self._lock = threading.Lock()
        self.warning: dict[str, Any] | None = None
        self.last_result: dict[str, Any] | None = None

    def add_listener(self, fn: Callable[[dict | None], None]) -> None:
        """``fn(warning or None)`` whenever the warning appears or clears."""
        self._listeners.append(fn)

    def lid_opened(self, state: dict[str, Any] | None) -> bool:
        """The lid was lifted; True when it counts as a peek (the receiver's turn)."""
        if not state or not receiver_turn(state):
            return False
        seat = state.get("to_act")
        with self._lock:
            p = self._peek
            if p and (p.game_id, p.round, p.seat) == (state["id"], state["round"], seat):
                return True  # lifted again in the same turn: the first reading is the one that counts
        baseline = self._take()
        with self._lock:
            self._peek = _Peek(state["id"], state["round"], seat, baseline)
        log.info("seat %s lifted the lid in round %s of %s (a peek)", seat, state["round"], state["id"])
        return True

    def peeked(self, game_id: str, state: dict[str, Any]) -> bool:
        """Whether the player to act now has lifted the lid this turn (for ``believe(peeked=...)``)."""
        with self._lock:
            p = self._peek
        return bool(p and p.game_id == game_id and p.round == state.get("round") and p.seat == state.get("to_act"))

    def state_changed(self, state: dict[str, Any]) -> str | None:
        """Feed every public state; returns the check's result when this change completed one."""
        claim = state.get("claim")
        key = (state.get("id"), state.get("round"), claim and claim.get("amount"), claim and claim.get("by"))
        with self._lock:
            new_claim = key != self._claim_key
            self._claim_key = key
            p = self._peek
        if not new_claim:
            return None
        self._set_warning(None)  # a warning concerns one claim; the next claim or round clears it
        if p is None:
            return None
        if state.get("id") != p.game_id or state.get("round") != p.round or state.get("phase") == "over":
            with self._lock:
                self._peek = None
            return None
        if not (claim and claim.get("by") == p.seat and state.get("phase") == "decide"):
            return None
        after = self._take()
        result = dice_moved(p.baseline, after)
        with self._lock:
            self._peek = None
            self.last_result = {"game": p.game_id, "round": p.round, "seat": p.seat, "result": result}
        log.info("peek check for seat %s in round %s: %s", p.seat, p.round, result)
        if result == NOT_MOVED:
            self._set_warning(
                {
                    "game": p.game_id,
                    "round": p.round,
                    "seat": p.seat,
                    "rule": "R6",
                    "message": f"Seat {p.seat} lifted the lid but no die seems to have been re-rolled before the next claim (rule R6).",
                }
            )
        return result

    def _take(self) -> Reading | None:
        try:
            return self._snapshot()
        except Exception:  # advisory check: a failure is "unknown"
            log.exception("the private peek reading failed")
            return None

    def _set_warning(self, warning: dict[str, Any] | None) -> None:
        with self._lock:
            changed = warning != self.warning
            self.warning = warning
        if not changed:
            return
        for fn in list(self._listeners):
            try:
                fn(warning)
            except Exception:
                log.exception("a peek-warning listener failed")
