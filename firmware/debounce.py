"""The project's own debounce: one press of a button is one action.

A mechanical button or a reed switch chatters for a few milliseconds when it
closes and opens. gpiozero can debounce, but its mock pins ignore
``bounce_time``, so the simulated table and the tests would not exercise it.
This debounce runs in our code, on every backend, with an injectable clock so
that tests are exact.

The rule: an edge starts an action only when that input has been quiet (no
edge at all, pressed or released) for the whole window. Chatter keeps the input
noisy, so however long it lasts it makes one action, never two.
"""

from __future__ import annotations

import threading
import time
from typing import Callable


class Debouncer:
    """Decides which edges of each named input are real presses.

    >>> t = [0.0]
    >>> d = Debouncer(0.05, clock=lambda: t[0])
    >>> d.edge("bluff", active=True), d.edge("bluff", active=False), d.edge("bluff", active=True)
    (True, False, False)
    >>> t[0] = 0.2
    >>> d.edge("bluff", active=True)
    True
    """

    def __init__(self, window_s: float, clock: Callable[[], float] = time.monotonic) -> None:
        if window_s < 0:
            raise ValueError(f"the debounce window must not be negative, not {window_s}")
        self.window_s = float(window_s)
        self._clock = clock
        self._last_edge: dict[str, float] = {}
        self._lock = threading.Lock()

    def edge(self, name: str, *, active: bool) -> bool:
        """Record an edge of ``name``; True when it is an accepted activation.

        Release edges (``active=False``) are recorded but never accepted: they
        only keep the input "noisy".
        """
        now = self._clock()
        with self._lock:
            last = self._last_edge.get(name)
            self._last_edge[name] = now
        quiet = last is None or now - last >= self.window_s
        return active and quiet

    def quiet_in(self, name: str) -> float:
        """Seconds until ``name`` has been quiet for the whole window (0 if it already has)."""
        with self._lock:
            last = self._last_edge.get(name)
        if last is None:
            return 0.0
        return max(0.0, self.window_s - (self._clock() - last))
