"""The referee: the I/O shell around the pure rules engine.

Every action follows the same path, under one lock: fold-cached state →
``decide_*`` (may refuse; nothing written) → append the event to the durable log
→ fold it into the cached state → tell the listeners (the SSE stream, the
table's lights). A Bluff also asks the ``DiceSource`` for the dice, saves the
frames under the challenge's id, and records the reading with the event.
"""

from __future__ import annotations

import logging
import os
import queue
import secrets
import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from pathlib import Path
from typing import Any, Callable

from companion.core.capture import Capture, DiceSource
from companion.core.files import atomic_write
from companion.core.errors import NotFound
from companion.rules import apply, decide_believe, decide_bluff, decide_claim, decide_confirm, decide_correction, decide_start, fold
from companion.rules.engine import bluff_event
from companion.rules.state import GameState
from companion.rules.views import challenge_view, public_state
from companion.app.store import GameStore

log = logging.getLogger(__name__)

Listener = Callable[[dict[str, Any]], None]

#: how long a Bluff waits for the camera before asking the table to type the dice
CAPTURE_TIMEOUT_S = 10.0


def _iso(t: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t))


class Referee:
    """Runs games: validates actions, logs them durably, and announces each change.

    >>> import tempfile, pathlib
    >>> from companion.core.capture import ValuesDiceSource
    >>> tmp = pathlib.Path(tempfile.mkdtemp())
    >>> ref = Referee(GameStore(tmp / "log.sqlite3"), ValuesDiceSource(), frames_dir=tmp / "frames")
    >>> game = ref.new_game(["Ann", "Ben"])
    >>> ref.claim(game["id"], 9)["phase"]
    'decide'
    """

    def __init__(self, store: GameStore, dice_source: DiceSource, *, frames_dir: Path, default_path_length: int = 7, clock: Callable[[], float] = time.time, capture_timeout_s: float = CAPTURE_TIMEOUT_S) -> None:
        self.store = store
        self.capture_timeout_s = capture_timeout_s
        self._capture_thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="dice-capture")
        self._pending_capture: Future | None = None
        #: what is wrong right now with the camera or the frames folder, for /api/health
        self.problems: dict[str, str] = {}
        self.dice_source = dice_source
        self.frames_dir = frames_dir
        self.default_path_length = default_path_length
        self._clock = clock
        self._lock = threading.RLock()
        self._states: dict[str, GameState] = {}
        self._listeners: list[Listener] = []
        self._subscribers: list[queue.Queue] = []
        self._sub_lock = threading.Lock()

    # --- reading -------------------------------------------------------------------

    def _state(self, game_id: str) -> GameState:
        state = self._states.get(game_id)
        if state is None:
            if not isinstance(game_id, str) or not game_id.startswith("g-"):
                raise NotFound("There is no such game.")
            events = self.store.events(game_id)
            if not events:
                raise NotFound("There is no such game.")
            state = self._states[game_id] = fold(events)
        return state

    def current_game_id(self) -> str | None:
        return self.store.current_game_id()

    def game_state(self, game_id: str) -> dict[str, Any]:
        return public_state(self._state(game_id))

    def game_ids(self) -> list[str]:
        return self.store.game_ids()

    def challenge(self, challenge_id: str) -> dict[str, Any]:
        state = self._game_of_challenge(challenge_id)
        return challenge_view(state, state.challenges[challenge_id])

    def challenges(self, game_id: str) -> list[dict[str, Any]]:
        state = self._state(game_id)
        return [challenge_view(state, c) for c in state.challenges.values()]

    def _game_of_challenge(self, challenge_id: str) -> GameState:
        if isinstance(challenge_id, str) and challenge_id.startswith("c-"):
            # A challenge id carries its game's id: c-<game token>-<n>.
            game_token = challenge_id[2:].rsplit("-", 1)[0]
            try:
                state = self._state("g-" + game_token)
            except NotFound:
                state = None
            if state is not None and challenge_id in state.challenges:
                return state
        raise NotFound("There is no such Bluff.")

    def frame_path(self, challenge_id: str, kind: str) -> Path:
        """Where a challenge's frame lives; only for ids that exist (never a client's path)."""
        state = self._game_of_challenge(challenge_id)
        if not state.challenges[challenge_id].has_images:
            raise NotFound("This Bluff has no saved photo.")
        suffix = "-annotated.jpg" if kind == "annotated" else ".jpg"
        return self.frames_dir / f"{challenge_id}{suffix}"

    # --- acting ----------------------------------------------------------------------

    def new_game(self, players: Any, path_length: Any = None, starter: Any = None, ages: Any = None) -> dict[str, Any]:
        with self._lock:
            game_id = "g-" + secrets.token_hex(6)
            event = decide_start(game_id, players, self.default_path_length if path_length is None else path_length, starter, ages)
            state = fold([event])
            self.store.create_game(game_id, event, at=_iso(self._clock()), phase=state.phase)
            self._states[game_id] = state
            return self._announce(state)

    def claim(self, game_id: str, amount: Any, seat: Any = None) -> dict[str, Any]:
        with self._lock:
            state = self._state(game_id)
            return self._commit(state, decide_claim(state, amount, seat))

    def believe(self, game_id: str, peeked: Any = False, seat: Any = None) -> dict[str, Any]:
        with self._lock:
            state = self._state(game_id)
            return self._commit(state, decide_believe(state, peeked, seat))

    def bluff(self, game_id: str, seat: Any = None) -> tuple[dict[str, Any], dict[str, Any]]:
        """R9: the dice are read only now (R13), saved, and the Bluff decided or sent to confirm."""
        with self._lock:
            state = self._state(game_id)
            caller = decide_bluff(state, seat)
            challenge_id = f"c-{game_id[2:]}-{len(state.challenges) + 1}"
            capture = self._capture()
            has_images, problem = self._save_frames(challenge_id, capture)
            reading = capture.reading.to_json() if capture.reading is not None else None
            event = bluff_event(caller, challenge_id, reading, problem, has_images)
            public = self._commit(state, event)
            return public, self.challenge(challenge_id)

    def confirm(self, game_id: str, dice: Any) -> dict[str, Any]:
        with self._lock:
            state = self._state(game_id)
            return self._commit(state, decide_confirm(state, dice))

    def correct(self, challenge_id: str, dice: Any, by: Any = "table") -> tuple[dict[str, Any], dict[str, Any]]:
        """R15: re-decide a Bluff; the correction (who, when, old, new) joins the log."""
        with self._lock:
            state = self._game_of_challenge(challenge_id)
            event = decide_correction(state, challenge_id, dice, by, _iso(self._clock()))
            public = self._commit(state, event)
            return public, self.challenge(challenge_id)

    def _capture(self) -> Capture:
        """The source's capture, bounded in time; /api/health shows the camera's problem until a reading comes."""
        capture = self._bounded_capture()
        if capture.reading is None:
            self.problems["camera"] = capture.problem or "The camera gave no reading."
        else:
            self.problems.pop("camera", None)
        return capture

    def _bounded_capture(self, take: Callable[[], Capture] | None = None) -> Capture:
        """Every capture runs on one long-lived thread, bounded in time.

        One thread, because OpenCV and onnxruntime keep per-thread buffers: run
        from whichever of the server's many threads handled the request, a
        long game grew the server by megabytes per Bluff. Bounded, because a
        hung camera must send the Bluff to confirm (R14), never hang the game.
        """
        if self._pending_capture is not None and not self._pending_capture.done():
            return Capture(None, problem="The camera is still stuck on an earlier photo: type the dice in.")
        future = self._capture_thread.submit(self._capture_now, take or self.dice_source.capture)
        try:
            return future.result(timeout=self.capture_timeout_s)
        except FutureTimeout:
            self._pending_capture = future
            log.error("the dice source did not answer within %.1f s", self.capture_timeout_s)
            return Capture(None, problem=f"The camera did not answer within {self.capture_timeout_s:g} s: type the dice in.")

    def capture_again(self, take: Callable[[], Capture]) -> Capture:
        """A second look at the dice (the table's Confirm button), under the same thread and time bound as a Bluff's."""
        return self._bounded_capture(take)

    @staticmethod
    def _capture_now(take: Callable[[], Capture]) -> Capture:
        try:
            return take()
        except Exception as exc:  # a source must not raise; if one does, the game still goes on (R14)
            log.exception("dice source failed")
            return Capture(None, problem=f"The camera failed ({exc.__class__.__name__}): type the dice in.")

    def close(self) -> None:
        self._capture_thread.shutdown(wait=False, cancel_futures=True)
        self.store.close()

    def _save_frames(self, challenge_id: str, capture: Capture) -> tuple[bool, str | None]:
        """Write the frames before the event that names them; a full disk loses only the photo."""
        problem = capture.problem
        if capture.frame_jpeg is None:
            return False, problem
        try:
            self.frames_dir.mkdir(parents=True, exist_ok=True)
            atomic_write(self.frames_dir / f"{challenge_id}.jpg", capture.frame_jpeg)
            if capture.annotated_jpeg is not None:
                atomic_write(self.frames_dir / f"{challenge_id}-annotated.jpg", capture.annotated_jpeg)
            self.problems.pop("frames", None)
            return True, problem
        except OSError as exc:
            log.error("could not save the frames of %s: %s", challenge_id, exc)
            note = f"The photo could not be saved ({exc.strerror or exc})."
            self.problems["frames"] = f"The photos of Bluffs cannot be saved in {self.frames_dir} ({exc.strerror or exc})."
            return False, f"{problem} {note}" if problem else note

    def _commit(self, state: GameState, event: dict[str, Any]) -> dict[str, Any]:
        new_state = apply(state, event)
        self.store.append(state.id, state.events, event, at=_iso(self._clock()), phase=new_state.phase)
        self._states[state.id] = new_state
        return self._announce(new_state)

    # --- telling others ----------------------------------------------------------------

    def _announce(self, state: GameState) -> dict[str, Any]:
        public = public_state(state)
        self.notify("state", public)
        for fn in list(self._listeners):
            try:
                fn(public)
            except Exception:
                log.exception("a state listener failed")
        return public

    def notify(self, kind: str, payload: dict[str, Any] | None) -> None:
        """Send ``(kind, payload)`` to every live viewer: "state", or a side note like "warning"."""
        with self._sub_lock:
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
        with self._sub_lock:
            if limit is not None and len(self._subscribers) >= limit:
                return None
            self._subscribers.append(q)
        return q

    def unsubscribe(self, q: queue.Queue) -> None:
        with self._sub_lock:
            if q in self._subscribers:
                self._subscribers.remove(q)

    @property
    def viewer_count(self) -> int:
        with self._sub_lock:
            return len(self._subscribers)
