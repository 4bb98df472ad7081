"""The seam through which a Bluff gets the dice: ``DiceSource.capture()``.

The referee does not know whether a camera, a simulated table or a person's
taps produced the dice; it only gets a ``Capture``. A source never raises for a
camera problem: it returns a ``Capture`` with ``reading=None`` and a
``problem`` sentence, and the referee goes to ``confirm`` (RULES.md R14), so a
failing camera can never hang or crash a game.
"""

from __future__ import annotations

import random
import threading
from dataclasses import dataclass
from typing import Any, Protocol

from companion.core.dice import opposite_face
from companion.core.reading import OK, DieReading, Reading


@dataclass(frozen=True)
class Capture:
    """What one capture produced: the reading (or why there is none) and its images."""

    reading: Reading | None
    frame_jpeg: bytes | None = None
    annotated_jpeg: bytes | None = None
    problem: str | None = None
    #: each part of the problem as its code and the names and numbers in it (``{"code": "camera_timeout", "seconds":
    #: "3"}``), so a page can say it in the player's language; the sentence is English
    problem_codes: tuple[dict[str, Any], ...] = ()


class DiceSource(Protocol):
    """Anything that can be asked for the dice at the moment of a Bluff."""

    #: backend name for /api/health ("simulated", "picamera2", ...)
    name: str

    def capture(self) -> Capture: ...

    def health(self) -> str: ...


class ValuesDiceSource:
    """A dice source with no camera: the values set by ``set_next_values``.

    Used by the referee's own tests, where the rules, not the reader, are under
    test. ``serve --simulate`` uses the rendered simulated table and the real
    reader instead. With no values set it rolls fair dice.

    >>> src = ValuesDiceSource(rng=random.Random(1))
    >>> src.set_next_values([6, 5, 4])
    >>> src.capture().reading.tops()
    [6, 5, 4]
    """

    name = "values"

    def __init__(self, rng: random.Random | None = None) -> None:
        self._rng = rng or random.Random()
        self._next: list[int] | None = None
        self._lock = threading.Lock()
        self.uncertain_next = False

    def set_next_values(self, values: list[int]) -> None:
        with self._lock:
            self._next = list(values)

    def capture(self) -> Capture:
        with self._lock:
            values = self._next or [self._rng.randint(1, 6) for _ in range(3)]
            self._next = None
        dice = tuple(DieReading(opposite_face(v), v, 1.0, (0, 0, 0, 0)) for v in values)
        if self.uncertain_next:
            self.uncertain_next = False
            return Capture(Reading("uncertain", dice, reason="test: forced uncertain", model_id="values"))
        return Capture(Reading(OK, dice, model_id="values"))

    def health(self) -> str:
        return "ok"
