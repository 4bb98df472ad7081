"""The Elephants Bluff rules engine: pure functions over a game's event log.

No I/O lives here (no Flask, no SQL, no clock, no randomness): a game's state is
``fold(events)``, and every action is first checked by ``decide_*`` which either
returns the event to append or raises an error a player understands. The
referee (``companion/app/referee.py``) is the I/O shell around it.
"""

from companion.rules.engine import (
    apply,
    decide_believe,
    decide_bluff,
    decide_claim,
    decide_confirm,
    decide_correction,
    decide_start,
    fold,
)
from companion.rules.state import Challenge, GameState, Move
from companion.rules.verdict import bluff_verdict

__all__ = [
    "Challenge",
    "GameState",
    "Move",
    "apply",
    "bluff_verdict",
    "decide_believe",
    "decide_bluff",
    "decide_claim",
    "decide_confirm",
    "decide_correction",
    "decide_start",
    "fold",
]
