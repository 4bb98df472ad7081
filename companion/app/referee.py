"""The referee: runs each round as the I/O shell around the pure rules engine.

Every action follows the same path, under one lock: fold-cached state →
``decide_*`` (may refuse; nothing written) → append the event to the durable log
→ fold it into the cached state → announce it (``broadcast``). A Bluff also asks
for the dice (``dice_capture``), saves the photos under the challenge's id
(``archive``), and records the reading with the event.
"""

from __future__ import annotations

import hashlib
import json
import queue
import secrets
import threading
import time
from collections import OrderedDict
from pathlib import Path
from typing import Any, Callable, NamedTuple

from companion.app.archive import FrameArchive
from companion.app.broadcast import Broadcaster, Listener
from companion.app.dice_capture import CAPTURE_TIMEOUT_S, BoundedCapture
from companion.app.store import GameStore
from companion.core.capture import Capture, DiceSource
from companion.core.errors import BadRequest, NotAllowed, NotFound
from companion.core.files import atomic_write
from companion.rules import apply, decide_believe, decide_bluff, decide_claim, decide_confirm, decide_correction, decide_start, fold
from companion.rules.engine import bluff_event, decide_read_again, may_read_again
from companion.rules.state import SECOND_LOOK, GameState
from companion.rules.views import challenge_view, public_state

__all__ = ["CAPTURE_TIMEOUT_S", "Listener", "Referee"]


def fingerprints(capture: Capture) -> dict[str, str]:
    """Each photo of a capture by kind ("frame", "annotated"), as the archive saves them: its SHA-256, for the log."""
    photos = {"frame": capture.frame_jpeg, "annotated": capture.annotated_jpeg}
    return {kind: hashlib.sha256(data).hexdigest() for kind, data in photos.items() if data is not None}


def _iso(t: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t))


class CheckedPhoto(NamedTuple):
    """A Bluff's photo as read once: its bytes and their SHA-256 (checked against the log where the log has one)."""

    data: bytes
    sha256: str


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

    #: games whose folded state stays in memory (an evening's few, and then some); a server
    #: that runs for months would otherwise hold every game it ever refereed
    STATES_KEPT = 32
    #: how far back (in games) an evening's rematches and a rematch's refusal look
    EVENING_LOOKBACK = 500

    def __init__(self, store: GameStore, dice_source: DiceSource, *, frames_dir: Path, default_path_length: int = 7, clock: Callable[[], float] = time.time, capture_timeout_s: float = CAPTURE_TIMEOUT_S) -> None:
        self.store = store
        self.dice_capture = BoundedCapture(dice_source, capture_timeout_s)
        self.archive = FrameArchive(frames_dir)
        self.broadcast = Broadcaster()
        self.default_path_length = default_path_length
        self._clock = clock
        self._lock = threading.RLock()
        # The newest-used games' folded states; any other game is folded again from its log when asked.
        self._states: OrderedDict[str, GameState] = OrderedDict()
        self._camera_file = Path(frames_dir).parent / "table-camera.json"
        self._camera_mode = self._load_camera_mode()

    # --- playing with or without the camera ------------------------------------------------

    #: "auto": the camera reads the dice when it works, else the table types them; "off": always typed
    CAMERA_MODES = ("auto", "off")
    #: why a Bluff's dice are typed (the page shows its own words; this is the API's and the log's)
    TYPED_NO_CAMERA = "Played without the camera: the table types the three top faces."

    def _load_camera_mode(self) -> str:
        try:
            mode = json.loads(self._camera_file.read_text(encoding="utf-8")).get("camera")
        except (OSError, ValueError, AttributeError):
            return "auto"
        return mode if mode in self.CAMERA_MODES else "auto"

    @property
    def camera_mode(self) -> str:
        return self._camera_mode

    def set_camera_mode(self, mode: Any) -> dict[str, Any]:
        """The table setting: read the dice with the camera ("auto") or type them at each Bluff ("off"); kept across restarts.

        Kept first, then in force: a card that refuses the file (full, turned read-only) raises its ``OSError`` (the
        routes say it in words) and the table plays on as it was, rather than with a setting the next start forgets.
        """
        if mode not in self.CAMERA_MODES:
            raise BadRequest("'camera' is \"auto\" (the camera reads the dice when it works) or \"off\" (the table types them).")
        with self._lock:
            atomic_write(self._camera_file, json.dumps({"camera": mode}))
            self._camera_mode = mode
        self.notify("table", self.table_view())
        return self.table_view()

    def camera_works(self) -> bool:
        try:
            return self.dice_source.health() == "ok"
        except Exception:
            return False

    def table_view(self) -> dict[str, Any]:
        works = self.camera_works()
        return {"camera": self._camera_mode, "camera_works": works, "dice_typed": self._camera_mode == "off" or not works}

    @property
    def dice_source(self) -> DiceSource:
        return self.dice_capture.source

    @dice_source.setter
    def dice_source(self, source: DiceSource) -> None:
        self.dice_capture.source = source

    @property
    def frames_dir(self) -> Path:
        return self.archive.frames_dir

    @property
    def capture_timeout_s(self) -> float:
        return self.dice_capture.timeout_s

    @capture_timeout_s.setter
    def capture_timeout_s(self, seconds: float) -> None:
        self.dice_capture.timeout_s = seconds

    @property
    def problems(self) -> dict[str, str]:
        """What is wrong right now with the camera or the frames folder, for /api/health."""
        found = {"camera": self.dice_capture.problem, "frames": self.archive.problem}
        return {k: v for k, v in found.items() if v}

    # --- reading -------------------------------------------------------------------

    def _state(self, game_id: str) -> GameState:
        with self._lock:
            state = self._states.get(game_id)
            if state is None:
                if not isinstance(game_id, str) or not game_id.startswith("g-"):
                    raise NotFound("There is no such game.")
                events = self.store.events(game_id)
                if not events:
                    raise NotFound("There is no such game.")
                state = fold(events)
            self._keep(state)
            return state

    def _keep(self, state: GameState) -> None:
        """Cache ``state`` as the newest used; the log is the truth, so the oldest cached falls out past the bound."""
        self._states[state.id] = state
        self._states.move_to_end(state.id)
        while len(self._states) > self.STATES_KEPT:
            self._states.popitem(last=False)

    def current_game_id(self) -> str | None:
        return self.store.current_game_id()

    def newest_game(self) -> tuple[str, str] | None:
        """The id and phase of the game started last, finished or not (the tray's words for a press after it)."""
        return self.store.newest_game()

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

    def names_photo(self, photo: str) -> bool:
        """Whether the log has a Bluff with this saved photo (the frames folder's sweep at start): a Bluff's own, or
        the second look that decided it (``<id>-look2``), whose first look's photo is kept too."""
        second = photo.endswith(SECOND_LOOK)
        challenge_id = photo.removesuffix(SECOND_LOOK)
        try:
            challenge = self._game_of_challenge(challenge_id).challenges[challenge_id]
        except NotFound:
            return False
        if second:
            return challenge.first_look is not None and challenge.has_images
        return bool(challenge.first_look["has_images"]) if challenge.first_look is not None else challenge.has_images

    def frame_path(self, challenge_id: str, kind: str) -> Path:
        """Where a challenge's frame lives (the photo its reading came from); only for ids that exist, never a client's
        path. The file may be missing or changed: ``frame_photo`` is how a photo is shown or learned from."""
        return self._frame(challenge_id, kind)[0]

    def frame_photo(self, challenge_id: str, kind: str) -> CheckedPhoto:
        """A challenge's photo, read once and checked against the fingerprint logged with it. A photo whose bytes are
        not those (damaged, or another photo put in its place) is ``NotFound`` with why: never shown, replayed or
        learned from as this Bluff's (R15). The bytes checked are the bytes handed on, with the digest that checked
        them, so a photo swapped between a check and a second read cannot slip through."""
        path, logged = self._frame(challenge_id, kind)
        try:
            data = path.read_bytes()
        except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
            raise NotFound("This Bluff's photo is missing from the frames folder.") from None
        except OSError as exc:
            raise NotFound(f"This Bluff's photo could not be read from the frames folder ({exc.strerror or exc}).") from None
        digest = hashlib.sha256(data).hexdigest()
        if logged is not None and digest != logged:
            raise NotFound("This Bluff's photo was changed or damaged since it was saved, so it is not shown as this Bluff's; "
                           "its reading and verdict are kept in the game log.", code="photo_changed")
        return CheckedPhoto(data, digest)

    def _frame(self, challenge_id: str, kind: str) -> tuple[Path, str | None]:
        """A challenge's photo of ``kind``: where it lives, and the fingerprint logged with it (None in logs from before
        fingerprints were kept)."""
        challenge = self._game_of_challenge(challenge_id).challenges[challenge_id]
        if not challenge.has_images:
            raise NotFound("This Bluff has no saved photo.")
        return self.archive.path(challenge.photo, kind), challenge.photo_sha256.get("annotated" if kind == "annotated" else "frame")  # the archive's kinds

    # --- acting ----------------------------------------------------------------------

    def new_game(self, players: Any, path_length: Any = None, starter: Any = None, ages: Any = None) -> dict[str, Any]:
        with self._lock:
            game_id = "g-" + secrets.token_hex(6)
            event = decide_start(game_id, players, self.default_path_length if path_length is None else path_length, starter, ages)
            state = fold([event])
            self.store.create_game(game_id, event, at=_iso(self._clock()), phase=state.phase)
            self._keep(state)
            return self._announce(state)

    def claim(self, game_id: str, amount: Any, seat: Any = None, *, seen: Any = None) -> dict[str, Any]:
        with self._lock:
            state = self._playing(game_id, seen)
            return self._commit(state, decide_claim(state, amount, seat))

    def believe(self, game_id: str, peeked: Any = False, seat: Any = None, *, seen: Any = None) -> dict[str, Any]:
        with self._lock:
            state = self._playing(game_id, seen)
            return self._commit(state, decide_believe(state, peeked, seat))

    def bluff(self, game_id: str, seat: Any = None, *, seen: Any = None) -> tuple[dict[str, Any], dict[str, Any]]:
        """R9: the dice are read only now (R13), saved, and the Bluff decided or sent to confirm."""
        with self._lock:
            state = self._playing(game_id, seen)
            caller = decide_bluff(state, seat)
            challenge_id = f"c-{game_id[2:]}-{len(state.challenges) + 1}"
            if self._camera_mode == "off":
                capture = Capture(None, problem=self.TYPED_NO_CAMERA, problem_codes=({"code": "played_without_camera"},))
            else:  # a missing or failing camera gives no reading and says why: the table types the dice (R14)
                capture = self.dice_capture.capture()
            reading = capture.reading.to_json() if capture.reading is not None else None
            public = self._commit_look(state, challenge_id, capture, lambda saved, capture, photos: bluff_event(
                caller, challenge_id, reading, capture.problem, saved, list(capture.problem_codes), photo_sha256=photos))
            return public, self.challenge(challenge_id)

    def confirm(self, game_id: str, dice: Any, session: str | None = None, *, seen: Any = None) -> dict[str, Any]:
        with self._lock:
            state = self._playing(game_id, seen)
            return self._commit(state, decide_confirm(state, dice, at=_iso(self._clock()), session=session))

    def _playing(self, game_id: str, seen: Any) -> GameState:
        """The game, for a move in it: refused while another game is on the table (one left for a newer game takes
        no move: a tablet that missed the new game's start played on in it, unseen), and, where the screen says
        which state it showed (``seen``: its number of events), refused once the game has moved on since (a tap on
        a screen out of date, after a network gap or another tablet's move, acted for another player or on another
        Bluff)."""
        state = self._state(game_id)
        if seen is not None:
            if isinstance(seen, bool) or not isinstance(seen, int) or seen < 1:
                raise BadRequest("'events' is the number of events of the game the screen shows (a whole number from 1).")
            if seen != state.events:
                raise NotAllowed("The game has moved on since this screen showed it: look at the table again, then play.", code="moved_on")
        current = self.store.current_game_id()
        if state.phase != "over" and current is not None and current != game_id:
            raise NotAllowed("This game was left for a newer one, which is on the table now: play there.", code="game_left")
        return state

    def correct(self, challenge_id: str, dice: Any, by: Any = "table", *, session: str | None = None, after_game_over: Any = False) -> tuple[dict[str, Any], dict[str, Any]]:
        """R15: re-decide a Bluff; the correction (who, which session, when, old, new) joins the log."""
        with self._lock:
            state = self._game_of_challenge(challenge_id)
            event = decide_correction(state, challenge_id, dice, by, _iso(self._clock()), session=session, after_game_over=after_game_over)
            newest = self.store.newest_game() if state.phase == "over" else None
            if newest is not None and newest[0] != state.id and apply(state, event).phase != "over":
                # the table has played on (a rematch, a new game): the correction could change who lost, but this
                # game cannot be open again beside the one on the table
                raise NotAllowed("The table has started another game since this one ended, so a correction that would "
                                 "let this game go on cannot be made: nobody would be on the red square.", code="game_followed")
            public = self._commit(state, event)
            return public, self.challenge(challenge_id)

    def rematch(self, game_id: str) -> dict[str, Any]:
        """A new game after a finished one: the same players in the same seats and path; the loser starts."""
        with self._lock:
            old = self._state(game_id)
            if old.phase != "over":
                raise NotAllowed("A rematch follows a finished game: this one is still being played.")
            if any(rematch_of == game_id for _, rematch_of in self.store.rematch_links(self.EVENING_LOOKBACK)):
                raise NotAllowed("This game has had its rematch already: the page shows it.", code="rematched")
            game_id_new = "g-" + secrets.token_hex(6)
            event = decide_start(game_id_new, list(old.players), old.path_length, old.loser, None, rematch_of=game_id)
            state = fold([event])
            self.store.create_game(game_id_new, event, at=_iso(self._clock()), phase=state.phase)
            self._keep(state)
            return self._announce(state)

    def evening(self, game_id: str) -> dict[str, Any]:
        """The games of one evening: this game and the rematches before and after it, with a tally of losses."""
        with self._lock:
            chain = [self._state(game_id)]
            seen = {game_id}
            while chain[0].rematch_of and chain[0].rematch_of not in seen and len(chain) < 200:
                seen.add(chain[0].rematch_of)
                try:
                    chain.insert(0, self._state(chain[0].rematch_of))
                except NotFound:
                    break
            followers: dict[str, str] = {}
            for gid, rematch_of in self.store.rematch_links(self.EVENING_LOOKBACK):
                if gid not in seen and rematch_of:
                    followers.setdefault(rematch_of, gid)
            while chain[-1].id in followers and followers[chain[-1].id] not in seen and len(chain) < 200:
                nxt = followers[chain[-1].id]
                seen.add(nxt)
                chain.append(self._state(nxt))
            names: list[str] = []
            for st in chain:
                names += [n for n in st.players if n not in names]
            lost = {n: 0 for n in names}
            for st in chain:
                if st.loser is not None:
                    lost[st.players[st.loser]] += 1
            return {
                "games": [{"id": st.id, "phase": st.phase, "loser": st.players[st.loser] if st.loser is not None else None, "rounds": st.round} for st in chain],
                "tally": [{"name": n, "lost": lost[n]} for n in names],
            }

    def read_again(self, game_id: str) -> tuple[dict[str, Any], dict[str, Any]]:
        """R14: a second look at the dice of the Bluff the table is asked to confirm (the table's Confirm button, once
        the dice lie flat), under the same thread and time bound as a Bluff's. Sure of all three, it decides the Bluff
        and its photo and reading become the Bluff's (R15), saved and logged as a Bluff's are; unsure, or a table
        playing without the camera, ``NotAllowed`` and nothing changes."""
        with self._lock:
            state = self._state(game_id)
            may_read_again(state)
            if self._camera_mode == "off":
                raise NotAllowed("The table plays without the camera: type the dice on the tablet.")
            challenge_id = state.last_challenge
            assert challenge_id is not None
            capture = self.dice_capture.bounded(self.dice_capture.source.capture)  # a hung camera must not hang the table
            reading = capture.reading.to_json() if capture.reading is not None else None
            decide_read_again(state, reading, False)  # refused before any photo is written
            public = self._commit_look(state, challenge_id + SECOND_LOOK, capture, lambda saved, _, photos: decide_read_again(
                state, reading, saved, at=_iso(self._clock()), photo_sha256=photos))
            return public, self.challenge(challenge_id)

    def _commit_look(self, state: GameState, photo: str, capture: Capture,
                     event_for: Callable[[bool, Capture, dict[str, str] | None], dict[str, Any]]) -> dict[str, Any]:
        """Log the event of a look at the dice with its photos (a Bluff's, or a second look's): staged under
        ``photo``, they get their names only once the event naming them is in the log (archive.py), and go if it is
        not. ``event_for(saved, capture, fingerprints)``: the event, told whether they were saved (the capture then
        carries the disk's problem when they were not)."""
        saved, capture = self.archive.stage(photo, capture)
        event = event_for(saved, capture, fingerprints(capture) if saved else None)
        try:
            # Published before the state is announced: a page that hears of this look finds its photo.
            return self._commit(state, event, before_announce=(lambda: self.archive.publish(photo)) if saved else None)
        except BaseException:
            self.archive.discard(photo)
            raise

    def close(self) -> None:
        self.dice_capture.close()
        self.store.close()

    def _commit(self, state: GameState, event: dict[str, Any], before_announce: Callable[[], None] | None = None) -> dict[str, Any]:
        new_state = apply(state, event)
        try:
            self.store.append(state.id, state.events, event, at=_iso(self._clock()), phase=new_state.phase)
        except NotAllowed:
            # another writer's event took this place in the log: the retry the refusal asks for reads the log again
            with self._lock:
                self._states.pop(state.id, None)
            raise
        self._keep(new_state)
        if before_announce is not None:
            before_announce()
        return self._announce(new_state)



    def _announce(self, state: GameState) -> dict[str, Any]:
        public = public_state(state)
        self.broadcast.announce(public)
        return public

    # --- the live viewers and listeners (``broadcast``) ------------------------------------

    def notify(self, kind: str, payload: dict[str, Any] | None) -> None:
        self.broadcast.notify(kind, payload)

    def add_listener(self, fn: Listener) -> None:
        self.broadcast.add_listener(fn)

    def subscribe(self, maxsize: int = 64, limit: int | None = None) -> queue.Queue | None:
        return self.broadcast.subscribe(maxsize, limit)

    def unsubscribe(self, q: queue.Queue) -> None:
        self.broadcast.unsubscribe(q)

    @property
    def viewer_count(self) -> int:
        return self.broadcast.viewer_count
