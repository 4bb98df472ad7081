"""Writing a file so that a crash or a power cut leaves the old version or the new one, never half of each.

A Pi is unplugged at the end of an evening; every file the project writes for
keeps (settings, calibration, frames, models) goes through ``atomic_write``.
"""

from __future__ import annotations

import errno
import os
import shutil
from pathlib import Path


def atomic_write(path: Path | str, data: bytes | str, *, mode: int | None = None, encoding: str = "utf-8") -> None:
    """Replace ``path`` with ``data`` all at once.

    The data goes to ``NAME.part`` in the same folder (a rename is atomic
    only within one file system), which is flushed to disk before the rename;
    the folder is flushed after it, so the new name itself survives a power cut.
    One writer per file: the temporary name is fixed, so a failed write leaves
    at most that one ``.part`` file, which the next write replaces.

    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "x.txt"
    >>> atomic_write(p, "one"); atomic_write(p, "two")
    >>> p.read_text(), sorted(q.name for q in p.parent.iterdir())
    ('two', ['x.txt'])
    """
    path = Path(path)
    payload = data.encode(encoding) if isinstance(data, str) else bytes(data)
    tmp_name = path.with_name(path.name + ".part")
    try:
        fd = os.open(tmp_name, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "wb") as handle:
            handle.write(payload)
            handle.flush()
            os.fsync(handle.fileno())
        if mode is not None:
            os.chmod(tmp_name, mode)
        elif path.exists():
            os.chmod(tmp_name, path.stat().st_mode & 0o7777)
        else:
            os.chmod(tmp_name, 0o666 & ~_umask())
        os.replace(tmp_name, path)
    except BaseException as exc:
        try:
            os.unlink(tmp_name)
        except FileNotFoundError:
            pass
        if isinstance(exc, OSError) and exc.filename is None:  # a refused write names no file: this one
            exc.filename = str(path)
        raise
    _fsync_dir(path.parent)


def _umask() -> int:
    current = os.umask(0)
    os.umask(current)
    return current


def _fsync_dir(folder: Path) -> None:
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass  # some file systems refuse fsync on a folder; the rename is done
    finally:
        os.close(fd)


def unwritable(path: Path | str) -> str | None:
    """Why an existing file, and the folder beside it where SQLite keeps its write-ahead log, cannot be written, in
    words, or None. A card that fails is remounted read-only by the kernel: SQLite opens and reads such a file without
    a word and refuses only the first write, so a game log or a sessions file is checked before play, not at the
    first move.

    The folder is tried by making and removing an empty file beside it (a failed card's file system may still say
    it is mounted for writing); the file itself is never opened here: closing another descriptor of a database file
    would drop the locks SQLite holds on it in this process.

    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "log.sqlite3"
    >>> _ = p.write_bytes(b""); unwritable(p) is None
    True
    """
    path = Path(path)
    if path.exists() and not os.access(path, os.W_OK):
        return "the file is not writable by this user"
    probe = path.with_name(f".{path.name}.write-check")
    try:
        fd = os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        os.close(fd)
        os.unlink(probe)
    except OSError as exc:
        if exc.errno == errno.EROFS:
            return ("the card or disk it is on has turned read-only (a card that fails does: copy the instance folder "
                    "off it and use another card)")
        if exc.errno in (errno.EACCES, errno.EPERM):
            return "its folder is not writable by this user"
        if exc.errno == errno.ENOENT:
            return None  # no folder yet: it is made at the first write
        return f"its folder cannot be written ({exc.strerror or exc})"
    return None


#: the room below which a SQLite file that will not open with a "disk I/O error" is taken for one on a full card:
#: SQLite could not make the shared-memory file it keeps beside it. Said as damage, it sent owners to move whole
#: files away.
OPEN_ROOM = 1_000_000


def full_card(path: Path | str, exc: BaseException) -> float | None:
    """The megabytes free beside ``path`` where opening or writing it failed (``exc``) because the card is full, or
    None where room was not the cause: a damaged page is damage however full the card is.

    >>> import tempfile, pathlib
    >>> full_card(pathlib.Path(tempfile.mkdtemp()) / "log.sqlite3", OSError(errno.ENOSPC, "No space left on device")) is not None
    True
    """
    try:
        free = shutil.disk_usage(Path(path).parent).free
    except OSError:
        return None
    said = str(exc).lower()  # SQLite's "database or disk is full", the store's own "the companion's disk is full"
    if "disk is full" in said or getattr(exc, "errno", None) == errno.ENOSPC or ("disk i/o error" in said and free < OPEN_ROOM):
        return free / 1e6
    return None


def not_beside(path: Path | str) -> list[Path]:
    """The files SQLite makes beside a database it opens (``-wal``, ``-shm``) that are not there now: what a refused
    open must take away again (``take_away``), so a file refused is left with only what was there before."""
    path = Path(path)
    return [path.with_name(path.name + suffix) for suffix in ("-wal", "-shm") if not path.with_name(path.name + suffix).exists()]


def take_away(made: list[Path]) -> None:
    """Of ``not_beside``'s files, those a refused open left: SQLite removes them at a close, but not where the card had
    no room for it. A ``-wal`` with anything in it stays: it may hold what was written."""
    for file in made:
        try:
            if file.exists() and (file.name.endswith("-shm") or file.stat().st_size == 0):
                file.unlink()
        except OSError:
            pass

