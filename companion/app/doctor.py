"""``elephants-bluff doctor [--repair]``: checks the instance folder's files, and recovers a damaged game log.

Checks, one line each: the settings file, the game log (opened exactly as
``serve`` opens it, refusing what ``serve`` refuses), and the file of
sessions. With ``--repair``, a game log that ``serve`` refuses is first
copied aside, with its ``-wal`` and ``-journal`` files, to
``damaged-<time>/`` in the instance folder (never deleted), and then every
game whose events can all still be read is copied, event by event, into a
fresh log in its place; a game with an unreadable event is left out (it
stays in the copy aside) and named. Nothing is repaired without
``--repair``.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import tempfile
import time
from pathlib import Path
from typing import Callable

from companion.app.auth import AUTH_NAME
from companion.app.settings import CONFIG_NAME, Settings
from companion.app.store import GameStore
from companion.core.errors import SettingsError, StoreError


def doctor(instance: Path, *, repair: bool = False, say: Callable[[str], None] = print) -> int:
    """0 when everything is usable (after a repair, if asked), 1 otherwise."""
    ok = True
    try:
        settings = Settings.load(instance / CONFIG_NAME)
        say(f"ok       {CONFIG_NAME}")
    except SettingsError as exc:
        say(f"PROBLEM  {CONFIG_NAME}: {exc.why} ({exc.key or 'the whole file'}). Fix it by hand: doctor does not rewrite settings.")
        return 1
    log = instance / settings["storage.database"]
    try:
        GameStore(log).close()
        say(f"ok       {log.name}")
    except StoreError as exc:
        say(f"PROBLEM  {log.name}: {exc.message}")
        if exc.code == "newer_log":  # not damage: a repair would rewrite a newer version's log in this one's format
            say(f"         {exc.todo}")
            return 1
        if repair:
            ok = _repair_log(log, say)
        else:
            say("         Run `elephants-bluff doctor --repair` to copy it aside and recover what can be read.")
            ok = False
    auth = instance / AUTH_NAME
    if auth.exists():
        try:
            db = sqlite3.connect(f"file:{auth}?mode=ro", uri=True)
            try:
                result = db.execute("PRAGMA quick_check").fetchone()[0]
            finally:
                db.close()
            if result != "ok":
                raise sqlite3.DatabaseError(result)
            say(f"ok       {AUTH_NAME}")
        except sqlite3.DatabaseError as exc:
            say(f"PROBLEM  {AUTH_NAME}: damaged ({exc}). Move it away: every device then types the PIN again, and no game is lost.")
            ok = False
    return 0 if ok else 1


def _repair_log(log: Path, say: Callable[[str], None]) -> bool:
    aside = log.parent / f"damaged-{time.strftime('%Y%m%d-%H%M%S')}"
    aside.mkdir()
    moved = []
    for name in (log.name, log.name + "-wal", log.name + "-journal", log.name + "-shm"):
        if (log.parent / name).exists():
            shutil.copy2(log.parent / name, aside / name)
            moved.append(name)
    say(f"         copied {', '.join(moved)} to {aside.name}/ (kept: nothing is deleted)")
    games, skipped = _readable_games(aside / log.name)
    owner = log.stat()  # the service user's, where doctor runs with sudo
    for name in moved:
        (log.parent / name).unlink()
    store = GameStore(log)
    try:
        for game_id, created_at, phase, events in games:
            store.create_game(game_id, events[0][2], at=events[0][1], phase=phase if len(events) == 1 else "claim")
            for seq, at, event in events[1:]:
                store.append(game_id, seq, event, at=at, phase=phase)
    finally:
        store.close()
    _give_back(owner, [log, aside, *(aside / name for name in moved)])
    say(f"repaired {log.name}: {len(games)} game(s) recovered" + (f"; left out (unreadable): {', '.join(skipped)}" if skipped else ""))
    return True


def _give_back(owner, paths: list[Path]) -> None:  # noqa: ANN001 - an os.stat_result
    """The repaired log and the copies aside, owned as the damaged log was: run with sudo, doctor left them root's,
    and the service, which runs as its own user, could not write the log and started in safe mode again."""
    if os.geteuid() != 0:
        return
    for path in paths:
        if path.exists() and (path.stat().st_uid, path.stat().st_gid) != (owner.st_uid, owner.st_gid):
            os.chown(path, owner.st_uid, owner.st_gid)


def _readable_games(aside: Path) -> tuple[list[tuple[str, str, str, list[tuple[int, str, dict]]]], list[str]]:
    """Each game whose events all read back, and the names of those that do not.

    Read from a scratch copy of the files aside (SQLite may rewrite or delete
    a WAL when it opens a log, and the copy aside must stay as it was). A log
    cut to 0 bytes beside its WAL gets a blank header page first: SQLite then
    replays the WAL, where the history is.
    """
    with tempfile.TemporaryDirectory(prefix="eb-doctor-") as tmp:
        copy = Path(tmp) / aside.name
        for suffix in ("", "-wal", "-journal"):
            if aside.with_name(aside.name + suffix).exists():
                shutil.copy2(aside.with_name(aside.name + suffix), copy.with_name(copy.name + suffix))
        wal = copy.with_name(copy.name + "-wal")
        if copy.stat().st_size == 0 and wal.exists() and wal.stat().st_size > 32:
            kept = wal.read_bytes()
            wal.unlink()
            blank = sqlite3.connect(copy)
            blank.execute(f"PRAGMA page_size={int.from_bytes(kept[8:12], 'big') or 4096}")
            blank.execute("PRAGMA journal_mode=WAL")
            blank.execute("CREATE TABLE _blank (x)")
            blank.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            blank.close()
            wal.write_bytes(kept)
        return _games_in(copy)


def _games_in(copy: Path) -> tuple[list[tuple[str, str, str, list[tuple[int, str, dict]]]], list[str]]:
    games: list[tuple[str, str, str, list[tuple[int, str, dict]]]] = []
    skipped: list[str] = []
    if copy.stat().st_size == 0:
        return games, skipped
    try:
        db = sqlite3.connect(copy)
    except sqlite3.DatabaseError:
        return games, ["the whole file"]
    try:
        try:
            rows = db.execute("SELECT id, created_at, phase FROM games ORDER BY rowid").fetchall()  # the order they were started (store.newest_game)
        except sqlite3.DatabaseError:
            return games, ["the whole file (its list of games cannot be read)"]
        for game_id, created_at, phase in rows:
            try:
                found = db.execute("SELECT seq, at, data FROM events WHERE game_id = ? ORDER BY seq", (game_id,)).fetchall()
                events = [(seq, at, json.loads(data)) for seq, at, data in found]
                if not events or [e[0] for e in events] != list(range(len(events))) or not all(isinstance(e[2], dict) for e in events):
                    raise ValueError("gaps")
            except (sqlite3.DatabaseError, ValueError, TypeError):
                skipped.append(str(game_id))
                continue
            games.append((game_id, created_at, phase, events))
    finally:
        db.close()
    return games, skipped
