"""Telling others about each change: the page's live viewers (SSE) and in-process listeners (the table's lights)."""

from __future__ import annotations

import logging
import queue
import threading
from typing import Any, Callable

log = logging.getLogger(__name__)

Listener = Callable[[dict[str, Any]], None]


class Broadcaster:
    """Fans each announced game state out to viewer queues and listeners; a slow viewer never holds a game up.

    >>> b = Broadcaster()
    >>> q = b.subscribe()
    >>> b.announce({"phase": "claim"})
    >>> q.get_nowait()
    ('state', {'phase': 'claim'})
    """

    def __init__(self) -> None:
        self._listeners: list[Listener] = []
        self._subscribers: list[queue.Queue] = []
        self._lock = threading.Lock()

    def announce(self, public: dict[str, Any]) -> None:
        """The new public state to every viewer, then to every listener (a failing listener is logged, not raised)."""
        self.notify("state", public)
        for fn in list(self._listeners):
            try:
                fn(public)
            except Exception:
                log.exception("a state listener failed")

    def notify(self, kind: str, payload: dict[str, Any] | None) -> None:
        """Send ``(kind, payload)`` to every live viewer: "state", or a side note like "warning"."""
        with self._lock:
            subscribers = list(self._subscribers)
        for q in subscribers:
            try:
                q.put_nowait((kind, payload))
            except queue.Full:
                pass  # a stalled viewer misses a message; the next state carries everything

    def add_listener(self, fn: Listener) -> None:
        """``fn(public_state)`` after every change, in the acting thread; it must not block."""
        self._listeners.append(fn)

    def subscribe(self, maxsize: int = 64, limit: int | None = None) -> queue.Queue | None:
        """A queue of every announced state; None when ``limit`` viewers already watch."""
        q: queue.Queue = queue.Queue(maxsize=maxsize)
        with self._lock:
            if limit is not None and len(self._subscribers) >= limit:
                return None
            self._subscribers.append(q)
        return q

    def unsubscribe(self, q: queue.Queue) -> None:
        with self._lock:
            if q in self._subscribers:
                self._subscribers.remove(q)

    @property
    def viewer_count(self) -> int:
        with self._lock:
            return len(self._subscribers)
