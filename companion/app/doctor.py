"""``elephants-bluff doctor [--repair]``: checks the instance folder's files, and recovers a damaged game log.

Checks, one line each: the settings file, the game log (opened exactly as
``serve`` opens it, refusing what ``serve`` refuses), and the file of
sessions. With ``--repair``, a game log that ``serve`` refuses is first
copied aside, with its ``-wal`` and ``-journal`` files, to
``damaged-<time>/`` in the instance folder (never deleted), and then every
game whose events can all still be read is copied, event by event, into a
fresh log, which takes the damaged one's place once it is whole; a game with
an unreadable event is left out (it stays in the copy aside) and named.
Nothing is repaired without ``--repair``, and a log that is not damaged (a
newer version's, or one on a full card) is never repaired.
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
from companion.core.files import full_card, not_beside, take_away


#: how far the fresh log's write-ahead file may grow while the recovered games are written into it (SQLite's
#: automatic checkpoint, every 1,000 pages of 4 KB)
WAL_BOUND = 4_200_000


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
        # not damage: a repair would rewrite a newer version's log in this one's format, fill a full card more, or
        # try to copy aside on a card that takes no writes
        if exc.code in ("newer_log", "no_room", "unwritable"):
            say(f"         {exc.todo}")
            return 1
        if repair:
            ok = _repair_log(log, say)
        else:
            say("         Run `elephants-bluff doctor --repair` to copy it aside and recover what can be read.")
            ok = False
    auth = instance / AUTH_NAME
    if auth.exists():
        made = not_beside(auth)
        try:
            db = sqlite3.connect(f"file:{auth}?mode=ro", uri=True)
            try:
                result = db.execute("PRAGMA quick_check").fetchone()[0]
            finally:
                db.close()
                take_away(made)  # looked at, not changed: not even the files SQLite makes beside it
            if result != "ok":
                raise sqlite3.DatabaseError(result)
            say(f"ok       {AUTH_NAME}")
        except sqlite3.DatabaseError as exc:
            free_mb = full_card(auth, exc)
            if free_mb is not None:  # not damage: nothing to move
                say(f"PROBLEM  {AUTH_NAME}: cannot be opened: the card is full ({free_mb:.1f} MB free). Free some room on the card; "
                    "the file is not damaged by it.")
                ok = False
            elif repair:
                say(f"PROBLEM  {AUTH_NAME}: damaged ({exc}).")
                ok = _move_sessions_aside(auth, say) and ok
            else:
                say(f"PROBLEM  {AUTH_NAME}: damaged ({exc}). Run `elephants-bluff doctor --repair` to move it aside: every "
                    "device then types the PIN again, and no game is lost.")
                ok = False
    return 0 if ok else 1


def _move_sessions_aside(auth: Path, say: Callable[[str], None]) -> bool:
    """The damaged file of the devices' sessions moved (not copied: it holds no game) to a ``damaged-<time>/`` folder;
    the next start makes a fresh one, and every device types the PIN again."""
    aside = _free_name(auth.parent, f"damaged-{time.strftime('%Y%m%d-%H%M%S')}")
    family = _family(auth)
    owner = auth.stat()
    try:
        aside.mkdir()
        for name in family:
            os.replace(auth.parent / name, aside / name)
    except OSError as exc:
        why, todo = _why(exc, auth.parent, 0)
        say(f"PROBLEM  {auth.name} could not be moved aside to {aside.name}/: {why}. Move it away yourself, or {todo}")
        return False
    _give_back(owner, [aside])
    say(f"moved    {', '.join(family)} to {aside.name}/ (kept): the next start makes a fresh one; every device types the PIN "
        "again, and no game is lost")
    return True


def _repair_log(log: Path, say: Callable[[str], None]) -> bool:
    """The damaged files copied aside, every readable game written into a fresh log beside them, and only then the
    fresh log put in the damaged one's place. A card too full for the copy or for the fresh log (a full card is a
    common cause of the damage) leaves the damaged log exactly as it was, and says so."""
    aside = _free_name(log.parent, f"damaged-{time.strftime('%Y%m%d-%H%M%S')}")
    family = _family(log)
    size = sum((log.parent / name).stat().st_size for name in family)
    try:
        aside.mkdir()
        for name in family:
            shutil.copy2(log.parent / name, aside / name)
    except OSError as exc:
        shutil.rmtree(aside, ignore_errors=True)  # a part copy is no copy: only what this run made goes
        why, todo = _why(exc, log.parent, size)
        say(f"PROBLEM  {log.name} could not be copied aside to {aside.name}/: {why}. Nothing was changed: {todo}")
        return False
    say(f"         copied {', '.join(family)} to {aside.name}/ (kept: nothing is deleted)")
    games, skipped = _readable_games(aside / log.name)
    owner = log.stat()  # the service user's, where doctor runs with sudo
    fresh = log.with_name(log.name + ".repairing")
    _remove_log(fresh)  # a run cut short left it: it was never put in place
    try:
        store = GameStore(fresh)
        try:
            for game_id, created_at, phase, events in games:
                store.create_game(game_id, events[0][2], at=events[0][1], phase=phase if len(events) == 1 else "claim")
                for seq, at, event in events[1:]:
                    store.append(game_id, seq, event, at=at, phase=phase)
        finally:
            store.close()
    except (OSError, sqlite3.Error, StoreError) as exc:
        _remove_log(fresh)
        why, todo = _why(exc, log.parent, size + WAL_BOUND)
        say(f"PROBLEM  the recovered games could not be written beside {log.name}: {why}. Nothing was changed: "
            f"the damaged log is still in place, and its copy in {aside.name}/. To go on, {todo}")
        return False
    for name in family:  # the damaged log's WAL must not be replayed into the fresh log
        if name != log.name:
            (log.parent / name).unlink()
    os.replace(fresh, log)
    _give_back(owner, [log, aside, *(aside / name for name in family)])
    say(f"repaired {log.name}: {len(games)} game(s) recovered" + (f"; left out (unreadable): {', '.join(skipped)}" if skipped else ""))
    return True


def _free_name(folder: Path, name: str) -> Path:
    """``name`` in ``folder``, or ``name-2``, ``name-3``, … where a repair in the same second made it already."""
    path, n = folder / name, 1
    while path.exists():
        n += 1
        path = folder / f"{name}-{n}"
    return path


#: a SQLite file and the files SQLite keeps beside it
SUFFIXES = ("", "-wal", "-journal", "-shm")


def _family(path: Path) -> list[str]:
    """The names of ``path`` and of the files beside it that are there (``SUFFIXES``)."""
    return [path.name + suffix for suffix in SUFFIXES if path.with_name(path.name + suffix).exists()]


def _remove_log(path: Path) -> None:
    for suffix in SUFFIXES:
        path.with_name(path.name + suffix).unlink(missing_ok=True)


def _card_full(exc: Exception, folder: Path, needs: int) -> str | None:
    """Why a write failed when the card had no room for it, in words; None when room was not the cause. SQLite on
    a full card says "database or disk is full", or only "disk I/O error" (its shared memory could not grow): the
    room left is looked at too."""
    free = shutil.disk_usage(folder).free
    if full_card(folder / "any", exc) is None and free >= needs:  # the store's own 507 says "disk is full" too
        return None
    return f"the card is full ({free / 1e6:.1f} MB free; this step needs up to {needs / 1e6:.1f} MB)"


def _why(exc: Exception, folder: Path, needs: int) -> tuple[str, str]:
    """What stopped a step and what to do, for a sentence of doctor's."""
    full = _card_full(exc, folder, needs)
    if full:
        return full, "free some room on the card (old photos in the instance's frames folder, or copies kept by earlier repairs and restores), then run it again."
    what = exc.message.rstrip(".") if isinstance(exc, StoreError) else str(exc.strerror if isinstance(exc, OSError) and exc.strerror else exc)
    return what, "mend what is named above, then run it again."


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
