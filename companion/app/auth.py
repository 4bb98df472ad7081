"""Who may act: the devices let in by the table PIN, and the wrong PINs tried.

Kept in ``auth.sqlite3`` in the instance folder, apart from the game log (a
damaged log of sessions never touches a game's history, and the game log's
format stays as it is):

- **sessions**: a device that typed the PIN gets a random token (256 bits) in
  its cookie; only the token's SHA-256 is stored, with its expiry, so the file
  alone lets nobody in. Nothing in the cookie is derived from the PIN. Each
  session also stores an HMAC of the PIN it was opened under (keyed with the
  instance's secret key): when the PIN changes, every older session ends.
  Sessions are listed and revoked by the page and ``elephants-bluff sessions``.
- **wrong PINs**: each one, with its time and address, for the page's
  "12 wrong PINs in the last hour", and the rate limits' own records
  (``SQLiteLimitsStorage``, a storage for the ``limits`` library under
  Flask-Limiter), so the guessing budget survives a restart.

>>> import tempfile, pathlib
>>> store = AuthStore(pathlib.Path(tempfile.mkdtemp()) / "auth.sqlite3")
>>> token, sid = store.open_session("tag", hours=1, address="192.0.2.1", agent="tablet")
>>> store.session_for(token, "tag")["id"] == sid, store.session_for(token, "other-pin")
(True, None)
>>> store.session_for(token, "tag") is None  # the PIN changed: the session ended for good
True
"""

from __future__ import annotations

import hashlib
import secrets
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any, Callable
from urllib.parse import unquote, urlparse

from limits.storage import MovingWindowSupport, Storage

from companion.core.errors import InstanceFileError, InsufficientStorage
from companion.core.files import full_card, not_beside, take_away, unwritable

AUTH_NAME = "auth.sqlite3"
#: how long a wrong PIN's time and address are kept: the devices page counts the last hour's; a week leaves an owner
#: time to look in the file after a night of guessing
WRONG_PINS_KEPT_S = 7 * 86400
#: how often a device's requests note the time it was last seen: the devices page shows it to the minute, and a
#: write on every request (each tap, each look of the devices page) would only wear the SD card
LAST_SEEN_STEP_S = 60
_SCHEMA = """
CREATE TABLE IF NOT EXISTS sessions (
    id TEXT PRIMARY KEY,
    token_sha256 TEXT NOT NULL UNIQUE,
    pin_tag TEXT NOT NULL,
    created_at REAL NOT NULL,
    expires_at REAL NOT NULL,
    last_seen REAL NOT NULL,
    address TEXT NOT NULL,
    agent TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS wrong_pins (at REAL NOT NULL, address TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS wrong_pins_at ON wrong_pins (at);
CREATE TABLE IF NOT EXISTS limit_hits (key TEXT NOT NULL, at REAL NOT NULL, expires_at REAL NOT NULL);
CREATE INDEX IF NOT EXISTS limit_hits_key ON limit_hits (key, at);
CREATE TABLE IF NOT EXISTS limit_counters (key TEXT PRIMARY KEY, value INTEGER NOT NULL, expires_at REAL NOT NULL);
"""


def _connect(path: Path) -> sqlite3.Connection:
    why = unwritable(path)
    if why is not None and not path.exists():  # a card turned read-only before the first start: not "damaged"
        raise InstanceFileError(str(path), f"the file of the devices' sessions cannot be made: {why}",
                                "Make the instance folder writable, or use another card, then restart the companion.")
    if why is not None:
        raise InstanceFileError(str(path), f"the file of the devices' sessions cannot be written: {why}",
                                "Make it writable, then restart the companion.")
    made = not_beside(path)
    db = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        db = sqlite3.connect(path, check_same_thread=False, isolation_level=None, timeout=10)
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=NORMAL")
        db.executescript(_SCHEMA)
        return db
    except (sqlite3.DatabaseError, OSError) as exc:
        if db is not None:
            db.close()
        take_away(made)  # a refused file is left with only what was there before
        free_mb = full_card(path, exc)
        if free_mb is not None:
            raise InstanceFileError(str(path), f"the file of the devices' sessions cannot be opened: the card it is on is full ({free_mb:.1f} MB free)",
                                    "Free some room on the card (old Bluff photos in the frames folder can go), then restart the companion. "
                                    "Do not move the file away: a full card alone does not damage it.") from None
        if isinstance(exc, sqlite3.DatabaseError):
            raise InstanceFileError(str(path), f"the file of the devices' sessions is damaged ({exc})",
                                    "Run `elephants-bluff doctor --repair` (it moves the file aside), or move it away yourself, then restart "
                                    "the companion: a fresh one is made, every device types the PIN again, and no game is lost.") from None
        raise InstanceFileError(str(path), f"the file of the devices' sessions cannot be opened: {exc.strerror or exc}",
                                "Make the instance folder writable (or free the disk), then restart the companion.") from None


def _sha(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


class AuthStore:
    """Sessions and wrong PINs in SQLite (see the module)."""

    def __init__(self, path: Path, clock: Callable[[], float] = time.time) -> None:
        self.path = path
        self.clock = clock
        self._lock = threading.Lock()
        self._db = _connect(path)
        self._uncounted = False  # a wrong PIN could not be written down (``can_count``)

    # --- sessions ------------------------------------------------------------------

    def open_session(self, pin_tag: str, *, hours: float, address: str, agent: str) -> tuple[str, str]:
        """A new session: (the token for the cookie, the session's public id). What has ended goes at the same time
        (``forget_the_ended``)."""
        token, sid = secrets.token_urlsafe(32), "s-" + secrets.token_hex(4)
        now = self.clock()
        with self._lock:
            self._forget_the_ended(now)
            self._write("the device could not be let in", "INSERT INTO sessions VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                        (sid, _sha(token), pin_tag, now, now + hours * 3600, now, address[:64], agent[:120]))
        return token, sid

    def _write(self, doing: str, sql: str, params: tuple[Any, ...] = ()) -> int:
        """One write a request asked for (not bookkeeping: ``_tidy``), its rows changed; refused in words
        (``_refused``), never a stock 500. The caller holds the lock."""
        try:
            return self._db.execute(sql, params).rowcount
        except sqlite3.OperationalError as exc:  # a card turned read-only, a full disk
            raise self._refused(exc, doing) from None

    def _refused(self, exc: sqlite3.OperationalError, doing: str) -> Exception:
        """A write of this file refused, in words: a full card is the 507 every full card's refusal is (the page says
        it in the player's language); anything else (a card turned read-only) names the file."""
        if full_card(self.path, exc) is not None:
            return InsufficientStorage(f"{doing[0].upper()}{doing[1:]}: the companion's disk is full. Free some room (old Bluff photos can go) and try again.")
        return InstanceFileError(self.path.name, f"{doing}: the file of the devices' sessions cannot be written ({exc})",
                                 "Free the disk or mend the card, then restart the companion.")

    def session_for(self, token: Any, pin_tag: str) -> dict[str, Any] | None:
        """The live session of ``token`` under the PIN now in force, or None (an ended one is deleted).

        Every request of a device let in asks this, so its writes (an ended session's deletion, the time last seen,
        at most once a minute: ``LAST_SEEN_STEP_S``) are bookkeeping that a full card must not turn into an error on
        every tap: the game log's own refusal then says what is wrong, in words."""
        if not isinstance(token, str) or not 20 <= len(token) <= 100:
            return None
        now = self.clock()
        with self._lock:
            row = self._db.execute("SELECT id, pin_tag, expires_at, created_at, address, agent, last_seen FROM sessions WHERE token_sha256 = ?", (_sha(token),)).fetchone()
            if row is None:
                return None
            if row[1] != pin_tag or row[2] <= now:
                self._tidy(("DELETE FROM sessions WHERE id = ?", (row[0],)))  # without room, refused all the same
                return None
            if not 0 <= now - row[6] < LAST_SEEN_STEP_S:  # a clock set back since is noted too
                self._tidy(("UPDATE sessions SET last_seen = ? WHERE id = ?", (now, row[0])))
        return {"id": row[0], "expires_at": row[2], "created_at": row[3], "address": row[4], "agent": row[5]}

    def sessions(self, pin_tag: str | None = None) -> list[dict[str, Any]]:
        """Every live session, newest first (ended ones are deleted on the way)."""
        now = self.clock()
        with self._lock:
            self._db.execute("DELETE FROM sessions WHERE expires_at <= ?" + (" OR pin_tag != ?" if pin_tag is not None else ""), (now, pin_tag) if pin_tag is not None else (now,))
            rows = self._db.execute("SELECT id, created_at, last_seen, expires_at, address, agent FROM sessions ORDER BY created_at DESC").fetchall()
        return [{"id": r[0], "created_at": _iso(r[1]), "last_seen": _iso(r[2]), "expires_at": _iso(r[3]), "address": r[4], "device": r[5]} for r in rows]

    def revoke(self, session_id: str) -> bool:
        with self._lock:
            return self._write("the device's session could not be ended", "DELETE FROM sessions WHERE id = ?", (session_id,)) > 0

    def revoke_token(self, token: Any) -> bool:
        """The session of ``token`` ended, whichever PIN it was opened under: a device let in again, whose old cookie
        must be worth nothing. One write; the old session's last-seen time is not noted first (``session_for``)."""
        if not isinstance(token, str):
            return False
        with self._lock:
            return self._write("the device's old session could not be ended", "DELETE FROM sessions WHERE token_sha256 = ?", (_sha(token),)) > 0

    def revoke_all(self) -> int:
        with self._lock:
            return self._write("the devices' sessions could not be ended", "DELETE FROM sessions")

    def end_sessions_of_other_pins(self, pin_tag: str) -> bool:
        """Called at start: a changed PIN ends every session opened under the old one. Where the card has no room
        for the deletion (``_tidy``) they stay ended all the same (``session_for`` refuses a session of another
        PIN), and go at the next start with room."""
        with self._lock:
            return self._tidy(("DELETE FROM sessions WHERE pin_tag != ?", (pin_tag,)))

    def forget_the_ended(self) -> bool:
        """Called at start, and at each login: the sessions ended by their hours, the wrong PINs older than a week
        (``WRONG_PINS_KEPT_S``) and the guessing budget's spent entries go, each with the address (and a
        session's browser) it kept. A guest's phone that never came back, or tried a PIN once, is not kept for good:
        only the devices list, a device's own next request and the next wrong PIN deleted them before."""
        with self._lock:
            return self._forget_the_ended(self.clock())

    def _forget_the_ended(self, now: float) -> bool:
        return self._tidy(("DELETE FROM sessions WHERE expires_at <= ?", (now,)),
                          ("DELETE FROM wrong_pins WHERE at < ?", (now - WRONG_PINS_KEPT_S,)),
                          ("DELETE FROM limit_hits WHERE expires_at < ?", (now,)),
                          ("DELETE FROM limit_counters WHERE expires_at < ?", (now,)))

    def _tidy(self, *statements: tuple[str, tuple[Any, ...]]) -> bool:
        """Bookkeeping writes (the time a session was last seen, what has ended), in one transaction; whether they were
        done. A card too full, or turned read-only, leaves them all undone for a later request, start or login, rather
        than stop a tap, a start or a login over tidying. The caller holds the lock."""
        try:
            with self._db:  # isolation_level None: the context commits or rolls back
                self._db.execute("BEGIN IMMEDIATE")
                for sql, params in statements:
                    self._db.execute(sql, params)
        except sqlite3.OperationalError:
            return False
        return True

    # --- wrong PINs ------------------------------------------------------------------

    def wrong_pin(self, address: str) -> bool:
        """Write a wrong PIN down; False where the card had no room, and from then on ``can_count`` is False until a
        write gets through again: a PIN that cannot be counted must not be checked (``security.check_pins``)."""
        now = self.clock()
        with self._lock:
            try:
                self._db.execute("INSERT INTO wrong_pins VALUES (?, ?)", (now, address[:64]))
            except sqlite3.OperationalError:
                self._uncounted = True
                return False
            self._tidy(("DELETE FROM wrong_pins WHERE at < ?", (now - WRONG_PINS_KEPT_S,)))
            return True

    def could_not_count(self) -> None:
        """A wrong PIN written down that the guessing budget could not count (``SQLiteLimitsStorage``): as for one that
        could not be written down, no PIN is checked until a write gets through again (``can_count``)."""
        with self._lock:
            self._uncounted = True

    def can_count(self) -> bool:
        """Whether a wrong PIN can be written down now. After one could not be, a write is tried (a row added and
        taken away again) each time this is asked, so the check comes back by itself once the card has room."""
        with self._lock:
            if self._uncounted and self._tidy(("INSERT INTO wrong_pins VALUES (0, '')", ()),
                                              ("DELETE FROM wrong_pins WHERE at = 0 AND address = ''", ())):
                self._uncounted = False
            return not self._uncounted

    def wrong_pins_since(self, seconds: float) -> int:
        with self._lock:
            return self._db.execute("SELECT COUNT(*) FROM wrong_pins WHERE at >= ?", (self.clock() - seconds,)).fetchone()[0]

    def close(self) -> None:
        with self._lock:
            self._db.close()


def _iso(t: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t))


class SQLiteLimitsStorage(Storage, MovingWindowSupport):
    """A storage for the ``limits`` library (Flask-Limiter's) in the instance's ``auth.sqlite3``.

    Its own URI scheme, ``eb-sqlite:///<absolute path>``; the moving-window
    strategy's entries are rows with their times, so a restart keeps them.

    >>> import tempfile, pathlib
    >>> from limits import parse
    >>> from limits.strategies import MovingWindowRateLimiter
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "auth.sqlite3"
    >>> limiter = MovingWindowRateLimiter(SQLiteLimitsStorage(f"eb-sqlite://{path}"))
    >>> [limiter.hit(parse("2/minute"), "x") for _ in range(3)]
    [True, True, False]
    >>> MovingWindowRateLimiter(SQLiteLimitsStorage(f"eb-sqlite://{path}")).test(parse("2/minute"), "x")  # after a restart
    False
    """

    STORAGE_SCHEME = ["eb-sqlite"]

    def __init__(self, uri: str | None = None, wrap_exceptions: bool = False, clock: Callable[[], float] = time.time,
                 cannot_count: Callable[[], None] | None = None, **options: Any) -> None:
        path = Path(unquote(urlparse(uri or "").path))
        self.clock = clock
        self._cannot_count = cannot_count
        self._lock = threading.Lock()
        self._db = _connect(path)
        super().__init__(uri, wrap_exceptions=wrap_exceptions, **options)

    @property
    def base_exceptions(self) -> type[Exception]:
        return sqlite3.Error

    def acquire_entry(self, key: str, limit: int, expiry: int, amount: int = 1) -> bool:
        if amount > limit:
            return False
        now = self.clock()
        with self._lock:
            try:
                with self._db:  # isolation_level None: the context commits or rolls back
                    self._db.execute("BEGIN IMMEDIATE")
                    count = self._db.execute("SELECT COUNT(*) FROM limit_hits WHERE key = ? AND at > ?", (key, now - expiry)).fetchone()[0]
                    if count + amount > limit:
                        return False
                    self._db.executemany("INSERT INTO limit_hits VALUES (?, ?, ?)", [(key, now, now + expiry)] * amount)
                    self._db.execute("DELETE FROM limit_hits WHERE expires_at < ?", (now - 86400,))
                    return True
            except sqlite3.OperationalError:
                # a wrong PIN written down but not counted (a card with room for one write only): said to the store of
                # wrong PINs, so no PIN is checked until a write gets through again; a hit not taken, never a crash
                if self._cannot_count is None:
                    raise
                self._cannot_count()
                return False

    def get_moving_window(self, key: str, limit: int, expiry: int) -> tuple[float, int]:
        now = self.clock()
        with self._lock:
            oldest, count = self._db.execute("SELECT MIN(at), COUNT(*) FROM limit_hits WHERE key = ? AND at > ?", (key, now - expiry)).fetchone()
        return (oldest if count else now), count

    # The fixed-window strategies' counters (unused by the moving window, kept working).
    def incr(self, key: str, expiry: int, amount: int = 1) -> int:
        now = self.clock()
        with self._lock:
            self._db.execute("DELETE FROM limit_counters WHERE key = ? AND expires_at <= ?", (key, now))
            self._db.execute(
                "INSERT INTO limit_counters VALUES (?, ?, ?) ON CONFLICT(key) DO UPDATE SET value = value + excluded.value",
                (key, amount, now + expiry),
            )
            return self._db.execute("SELECT value FROM limit_counters WHERE key = ?", (key,)).fetchone()[0]

    def get(self, key: str) -> int:
        with self._lock:
            row = self._db.execute("SELECT value FROM limit_counters WHERE key = ? AND expires_at > ?", (key, self.clock())).fetchone()
        return row[0] if row else 0

    def get_expiry(self, key: str) -> float:
        with self._lock:
            row = self._db.execute("SELECT expires_at FROM limit_counters WHERE key = ?", (key,)).fetchone()
        return row[0] if row else self.clock()

    def check(self) -> bool:
        with self._lock:
            return self._db.execute("SELECT 1").fetchone() == (1,)

    def reset(self) -> int | None:
        with self._lock:
            n = self._db.execute("DELETE FROM limit_hits").rowcount
            return n + self._db.execute("DELETE FROM limit_counters").rowcount

    def clear(self, key: str) -> None:
        with self._lock:
            self._db.execute("DELETE FROM limit_hits WHERE key = ?", (key,))
            self._db.execute("DELETE FROM limit_counters WHERE key = ?", (key,))

    def close(self) -> None:
        with self._lock:
            self._db.close()
