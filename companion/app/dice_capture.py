"""Asking the dice source for the dice, on one thread and within a time limit, so a camera can never hang a game."""

from __future__ import annotations

import logging
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from typing import Any, Callable

from companion.app.allocator import give_back_freed_memory
from companion.core.capture import Capture, DiceSource

log = logging.getLogger(__name__)

#: how long a Bluff waits for the camera before asking the table to type the dice
CAPTURE_TIMEOUT_S = 10.0


class BoundedCapture:
    """Every capture runs on one long-lived thread, bounded in time.

    One thread, because OpenCV and onnxruntime keep per-thread buffers: run
    from whichever of the server's many threads handled the request, a long
    game grew the server by megabytes per Bluff. Bounded, because a hung
    camera must send the Bluff to confirm (R14), never hang the game.

    >>> from companion.core.capture import ValuesDiceSource
    >>> source = ValuesDiceSource()
    >>> source.set_next_values([6, 5, 4])
    >>> BoundedCapture(source).capture().reading.tops()
    [6, 5, 4]
    """

    def __init__(self, source: DiceSource, timeout_s: float = CAPTURE_TIMEOUT_S) -> None:
        self.source = source
        self.timeout_s = timeout_s
        #: why the last capture gave no reading, or None; and its parts by code (``Capture.problem_codes``)
        self.problem: str | None = None
        self.problem_codes: tuple[dict[str, Any], ...] = ()
        self._thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="dice-capture")
        self._pending: Future | None = None

    def capture(self, take: Callable[[], Capture] | None = None) -> Capture:
        """The source's capture (or ``take``'s); a problem is kept for /api/health until a reading comes."""
        result = self.bounded(take or self.source.capture)
        self.problem = (result.problem or "The camera gave no reading.") if result.reading is None else None
        self.problem_codes = result.problem_codes if result.reading is None else ()
        return result

    def bounded(self, take: Callable[[], Capture]) -> Capture:
        """``take()`` on the capture thread within the time limit, leaving ``problem`` as it is (a second look)."""
        if self._pending is not None and not self._pending.done():
            return Capture(None, problem="The camera is still stuck on an earlier photo: type the dice in.", problem_codes=({"code": "camera_stuck"},))
        future = self._thread.submit(self._take, take)
        try:
            return future.result(timeout=self.timeout_s)
        except FutureTimeout:
            self._pending = future
            log.error("the dice source did not answer within %.1f s", self.timeout_s)
            return Capture(None, problem=f"The camera did not answer within {self.timeout_s:g} s: type the dice in.",
                           problem_codes=({"code": "camera_timeout", "seconds": f"{self.timeout_s:g}"},))

    @property
    def pending(self) -> Future | None:
        """A capture still running after its time ran out (the camera is stuck)."""
        return self._pending

    @staticmethod
    def _take(take: Callable[[], Capture]) -> Capture:
        try:
            return take()
        except Exception as exc:  # a source must not raise; if one does, the game still goes on (R14)
            log.exception("dice source failed")
            return Capture(None, problem=f"The camera failed ({exc.__class__.__name__}): type the dice in.",
                           problem_codes=({"code": "camera_failed", "detail": exc.__class__.__name__},))
        finally:
            # A reading's crops, tensors and JPEGs are freed by now; their pages go back to the system.
            give_back_freed_memory()

    def close(self) -> None:
        self._thread.shutdown(wait=False, cancel_futures=True)
