"""The durable game log: every event of every game, in SQLite.

One transaction per event, WAL mode and ``synchronous=FULL``: once ``append``
returns, the event survives a kill -9 or a power cut, and a restart folds the
log back into the same state. Nothing but events is stored; a game's state is
always recomputed from them (``companion.rules.fold``).

A file that is not a game log, or is damaged, is refused with a clear message
and never replaced: it may hold the only record of a game.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from pathlib import Path
from typing import Any

from companion.core.errors import InsufficientStorage, NotAllowed, StoreError
from companion.core.files import full_card, not_beside, take_away, unwritable

SCHEMA_VERSION = 1
APPLICATION_ID = 0x45424C46  # "EBLF": marks the file as ours

_SCHEMA = """
CREATE TABLE games (
    id TEXT PRIMARY KEY,
    created_at TEXT NOT NULL,
    phase TEXT NOT NULL
);
CREATE TABLE events (
    game_id TEXT NOT NULL REFERENCES games(id),
    seq INTEGER NOT NULL,
    at TEXT NOT NULL,
    type TEXT NOT NULL,
    data TEXT NOT NULL,
    PRIMARY KEY (game_id, seq)
);
"""


class GameStore:
    """An append-only event log per game.

    >>> import tempfile, pathlib
    >>> store = GameStore(pathlib.Path(tempfile.mkdtemp()) / "log.sqlite3")
    >>> store.create_game("g-1", {"type": "game_started"}, at="2026-01-01T00:00:00Z", phase="claim")
    >>> [e["type"] for e in store.events("g-1")]
    ['game_started']
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()
        fresh = not path.exists() or path.stat().st_size == 0
        self._db: sqlite3.Connection | None = None
        if fresh and path.exists():
            # An empty file beside a write-ahead log or a journal is not a fresh log:
            # the history may be in the WAL, and opening it as new would lose it.
            beside = [path.name + suffix for suffix in ("-wal", "-journal") if (path.parent / (path.name + suffix)).exists() and (path.parent / (path.name + suffix)).stat().st_size > 0]
            if beside:
                raise StoreError(
                    f"The game log {path} is empty but {beside[0]} beside it holds data: the log was cut short and its history may be in that file. "
                    "It was left as it is: run `elephants-bluff doctor --repair` to copy both aside and recover what can be read, or restore a backup."
                )
        why = unwritable(path)
        if why is not None and not path.exists():  # a card turned read-only before the first game, not a damaged log
            raise StoreError(f"The game log {path} cannot be made: {why}.", code="unwritable",
                             todo="Make the instance folder writable, or use another card, then restart the companion.")
        if why is not None:
            raise StoreError(f"The game log {path} cannot be written: {why}. Nothing was changed in it.", code="unwritable",
                             todo="Keep the file (its games are whole): make it writable, or copy the instance folder to a card that works, then restart the companion.")
        # what SQLite makes beside the log when it opens it: a refused log is left with only what was there before
        self._made_beside = not_beside(path)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(path, check_same_thread=False, isolation_level=None, timeout=10)
            if not fresh:
                # Check before any PRAGMA that writes (journal_mode=WAL rewrites the
                # header): a file that is not ours is refused exactly as it was.
                self._check()
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=FULL")
            self._db.execute("PRAGMA foreign_keys=ON")
            if fresh:
                self._create()
            else:
                self._check_events()
        except _NewerLog as newer:
            self._close_refused()
            raise StoreError(
                f"The game log {path} was written by a newer version of the companion (its format is {newer.version}; this "
                f"version reads format {SCHEMA_VERSION}). It was left as it is.",
                code="newer_log",
                todo="Update the companion to the version that wrote it (on the Pi: run deploy/install-pi.sh from that version), "
                     "then restart it. Do not repair it: a repair would rewrite it in the older format.",
            ) from None
        except sqlite3.DatabaseError as exc:
            self._close_refused()
            no_room = _no_room(path, exc)
            if no_room:
                raise no_room from None
            raise StoreError(
                f"The game log {path} is damaged or is not an Elephants Bluff game log ({exc}). "
                "It was left as it is: move it away to start a fresh log, or restore a backup."
            ) from None
        except OSError as exc:
            self._close_refused()
            raise _no_room(path, exc) or StoreError(f"The game log {path} cannot be opened: {exc.strerror or exc}.") from None

    def _close_refused(self) -> None:
        if self._db is not None:
            try:
                self._db.close()
            except sqlite3.Error:
                pass
        take_away(self._made_beside)

    def _create(self) -> None:
        self._db.executescript("BEGIN;" + _SCHEMA + f"PRAGMA application_id={APPLICATION_ID}; PRAGMA user_version={SCHEMA_VERSION}; COMMIT;")

    def _check(self) -> None:
        app_id = self._db.execute("PRAGMA application_id").fetchone()[0]
        version = self._db.execute("PRAGMA user_version").fetchone()[0]
        if app_id != APPLICATION_ID:
            raise sqlite3.DatabaseError("it belongs to another program")
        if version > SCHEMA_VERSION:
            raise _NewerLog(version)
        if version != SCHEMA_VERSION:
            raise sqlite3.DatabaseError(f"it has format {version}, this version reads format {SCHEMA_VERSION}")
        result = self._db.execute("PRAGMA quick_check").fetchone()[0]
        if result != "ok":
            lines = result.splitlines()
            first = "; ".join(line for line in lines[:3] if not line.startswith("***"))
            raise sqlite3.DatabaseError(f"integrity check failed: {first}{' …' if len(lines) > 3 else ''}")

    def _check_events(self) -> None:
        """Every event must read back (a zeroed page can pass SQLite's check and still hold garbage)."""
        for game_id, seq, data in self._db.execute("SELECT game_id, seq, data FROM events"):
            try:
                event = json.loads(data)
            except (ValueError, TypeError):
                raise sqlite3.DatabaseError(f"event {seq} of game {game_id} cannot be read") from None
            if not isinstance(event, dict) or "type" not in event:
                raise sqlite3.DatabaseError(f"event {seq} of game {game_id} is not an event")

    def _transaction(self):  # noqa: ANN202 - a tiny context manager
        return _Tx(self._db)

    def create_game(self, game_id: str, event: dict[str, Any], *, at: str, phase: str) -> None:
        with self._lock:
            try:
                with self._transaction():
                    self._db.execute("INSERT INTO games (id, created_at, phase) VALUES (?, ?, ?)", (game_id, at, phase))
                    self._db.execute("INSERT INTO events (game_id, seq, at, type, data) VALUES (?, 0, ?, ?, ?)", (game_id, at, event["type"], json.dumps(event)))
            except sqlite3.OperationalError as exc:
                raise _write_error(exc, "The game could not be started", self.path) from None

    def append(self, game_id: str, seq: int, event: dict[str, Any], *, at: str, phase: str) -> None:
        """Append event number ``seq``; a second writer of the same seq is refused."""
        with self._lock:
            try:
                with self._transaction():
                    self._db.execute("INSERT INTO events (game_id, seq, at, type, data) VALUES (?, ?, ?, ?, ?)", (game_id, seq, at, event["type"], json.dumps(event)))
                    self._db.execute("UPDATE games SET phase = ? WHERE id = ?", (phase, game_id))
            except sqlite3.IntegrityError:
                raise NotAllowed("Someone else acted at the same moment: look at the table again and retry.") from None
            except sqlite3.OperationalError as exc:
                raise _write_error(exc, "The action could not be written", self.path) from None

    def events(self, game_id: str) -> list[dict[str, Any]]:
        with self._lock:
            rows = self._db.execute("SELECT data FROM events WHERE game_id = ? ORDER BY seq", (game_id,)).fetchall()
        try:
            return [json.loads(r[0]) for r in rows]
        except (ValueError, TypeError):
            raise self._damaged(game_id) from None

    def game_ids(self) -> list[str]:
        with self._lock:
            return [r[0] for r in self._db.execute("SELECT id FROM games ORDER BY rowid")]

    def rematch_links(self, newest: int = 500) -> list[tuple[str, str | None]]:
        """``(game, the game it is a rematch of)`` for the ``newest`` games, oldest first.

        Read from each game's first event only, so the referee can find an
        evening's games without folding every game's log.
        """
        with self._lock:
            rows = self._db.execute(
                "SELECT g.id, e.data FROM (SELECT id, rowid AS r FROM games ORDER BY rowid DESC LIMIT ?) g"
                " JOIN events e ON e.game_id = g.id AND e.seq = 0 ORDER BY g.r",
                (newest,),
            ).fetchall()
        links: list[tuple[str, str | None]] = []
        for game_id, data in rows:
            try:
                rematch_of = json.loads(data).get("rematch_of")
            except (ValueError, TypeError, AttributeError):
                raise self._damaged(game_id) from None
            links.append((game_id, rematch_of if isinstance(rematch_of, str) else None))
        return links

    def current_game_id(self) -> str | None:
        """The game on the table: the newest one, while it is not over. A game left unfinished when a newer one was
        started stays saved, but is no longer in progress: it neither comes back when the newer one ends nor keeps the
        camera set-up closed (R13), and the tray's buttons never act on it."""
        newest = self.newest_game()
        return newest[0] if newest and newest[1] != "over" else None

    def newest_game(self) -> tuple[str, str] | None:
        """The id and phase of the game started last, finished or not; None before any game.

        Games are in the order they were started (SQLite's rowid, which only grows), never by their ``created_at``:
        a Pi without a battery clock may start with a time before the last game's, and the game just started was
        then not the one on the table (no game in progress, the buttons refused, the camera set-up open during
        play, R13)."""
        with self._lock:
            row = self._db.execute("SELECT id, phase FROM games ORDER BY rowid DESC LIMIT 1").fetchone()
        return (row[0], row[1]) if row else None

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def _damaged(self, game_id: str) -> StoreError:
        """A game's event that no longer reads back, found while the companion runs."""
        return StoreError(f"The game log {self.path.name} was damaged while the companion ran (game {game_id} cannot be read): restart it to check the log.")


class _NewerLog(Exception):
    """A game log of our own, in a format a newer version wrote: not damage (``GameStore``)."""

    def __init__(self, version: int) -> None:
        super().__init__(version)
        self.version = version


def _no_room(path: Path, exc: Exception) -> StoreError | None:
    """The error for a log that could not be opened because its card is full (``full_card``), or None."""
    free_mb = full_card(path, exc)
    if free_mb is None:
        return None
    return StoreError(
        f"The game log {path} cannot be opened: the card it is on is full ({free_mb:.1f} MB free). It was left as it is.",
        code="no_room",
        todo="Free some room on the card (copy the instance folder off the Pi, then delete old Bluff photos from its frames "
             "folder), then restart the companion. Do not move the log away or repair it: a full card alone does not damage it.",
    )


def _write_error(exc: sqlite3.OperationalError, doing: str, path: Path) -> Exception:
    """A full card (``full_card``'s rule, as at opening: SQLite's "database or disk is full", or a "disk I/O error"
    with almost no room left) is a 507 that says so; any other failed write a StoreError. Nothing was changed either
    way."""
    if full_card(path, exc) is not None:
        return InsufficientStorage(f"{doing}: the companion's disk is full. Nothing was changed; free some space (old Bluff photos can go) and try again.")
    return StoreError(f"{doing} in the game log ({exc}); nothing was changed.")


class _Tx:
    """BEGIN IMMEDIATE … COMMIT, or ROLLBACK on any error: all or nothing."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self.db = db

    def __enter__(self) -> None:
        self.db.execute("BEGIN IMMEDIATE")

    def __exit__(self, exc_type, exc, tb) -> None:  # noqa: ANN001
        if exc_type is None:
            self.db.execute("COMMIT")
        elif self.db.in_transaction:  # SQLite already rolled back after some errors (a full disk)
            self.db.execute("ROLLBACK")
