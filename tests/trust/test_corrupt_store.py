"""A damaged or foreign game log is refused with a clear message, and never replaced or changed."""

from __future__ import annotations

import hashlib
import os
import sqlite3

import pytest

from companion.core.capture import ValuesDiceSource
from companion.core.errors import StoreError
from companion.app.referee import Referee
from companion.app.store import GameStore


def _digest(path) -> str:  # noqa: ANN001
    return hashlib.sha256(path.read_bytes()).hexdigest()


def real_log(path, games: int = 30):  # noqa: ANN001, ANN201
    """A real game log with some games in it, closed cleanly (checkpointed into one file)."""
    store = GameStore(path)
    referee = Referee(store, ValuesDiceSource(), frames_dir=path.parent / "frames")
    for _ in range(games):
        gid = referee.new_game(["Ann", "Ben", "Cy"])["id"]
        for amount in range(3, 12):
            if referee.game_state(gid)["phase"] == "claim":
                referee.claim(gid, amount)
            else:
                referee.believe(gid)
    store.close()
    assert not path.with_name(path.name + "-wal").exists()
    return path


def _assert_refused_untouched(path, *words: str) -> str:  # noqa: ANN001
    before = _digest(path)
    size = path.stat().st_size
    siblings = set(os.listdir(path.parent))
    with pytest.raises(StoreError) as caught:
        GameStore(path)
    message = caught.value.message
    assert str(path) in message and "left as it is" in message
    for word in words:
        assert word in message, message
    assert "\n" not in message
    assert path.stat().st_size == size and _digest(path) == before, "the refused file was changed"
    assert set(os.listdir(path.parent)) <= siblings | {path.name + "-wal", path.name + "-shm"}
    return message


def test_a_garbage_file_is_refused_and_left_as_it_was(tmp_path):
    path = tmp_path / "game-log.sqlite3"
    path.write_bytes(os.urandom(16384))
    message = _assert_refused_untouched(path, "not an Elephants Bluff game log")
    assert "move it away" in message


@pytest.mark.parametrize("fraction", [0.02, 0.5, 0.9, 0.99])
def test_a_truncated_game_log_is_refused_and_left_as_it_was(tmp_path, fraction):
    path = real_log(tmp_path / "game-log.sqlite3")
    data = path.read_bytes()
    path.write_bytes(data[: int(len(data) * fraction)])
    _assert_refused_untouched(path, "damaged")


def test_another_programs_sqlite_file_is_refused_without_switching_it_to_wal(tmp_path):
    path = tmp_path / "game-log.sqlite3"
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE recipes (name TEXT)")
    db.execute("INSERT INTO recipes VALUES ('soup')")
    db.commit()
    db.close()
    _assert_refused_untouched(path, "another program")
    db = sqlite3.connect(path)
    try:
        assert db.execute("PRAGMA journal_mode").fetchone()[0] == "delete"
        assert db.execute("SELECT name FROM recipes").fetchall() == [("soup",)]
    finally:
        db.close()


def test_a_healthy_log_reopens_with_every_game(tmp_path):
    path = real_log(tmp_path / "game-log.sqlite3", games=3)
    store = GameStore(path)
    try:
        assert len(store.game_ids()) == 3
        assert all(len(store.events(g)) == 10 for g in store.game_ids())
    finally:
        store.close()
