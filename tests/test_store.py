"""The durable game log: SQLite, one transaction per event, survives kill -9."""

from __future__ import annotations

import random
import sqlite3
import threading

import pytest
import requests

from companion.core.errors import NotAllowed, StoreError
from companion.app.store import GameStore
from bench.live_server import LiveServer
from tests.conftest import live


def test_the_log_is_wal_and_fully_synchronous(tmp_path):
    store = GameStore(tmp_path / "log.sqlite3")
    assert store._db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert store._db.execute("PRAGMA synchronous").fetchone()[0] == 2  # FULL
    store.close()


def test_two_writers_of_the_same_event_number_cannot_both_win(tmp_path):
    store = GameStore(tmp_path / "log.sqlite3")
    store.create_game("g-1", {"type": "game_started"}, at="t", phase="claim")
    store.append("g-1", 1, {"type": "claimed"}, at="t", phase="decide")
    with pytest.raises(NotAllowed):
        store.append("g-1", 1, {"type": "believed"}, at="t", phase="claim")
    assert [e["type"] for e in store.events("g-1")] == ["game_started", "claimed"]
    store.close()


def test_a_first_event_damaged_while_running_is_named_when_the_game_or_the_evening_is_looked_up(tmp_path):
    store = GameStore(tmp_path / "log.sqlite3")
    store.create_game("g-1", {"type": "game_started", "rematch_of": "g-0"}, at="t", phase="claim")
    assert store.rematch_links() == [("g-1", "g-0")]
    with store._lock:
        store._db.execute("UPDATE events SET data = '{not json' WHERE game_id = 'g-1'")
    for look_up in (store.rematch_links, lambda: store.events("g-1")):
        with pytest.raises(StoreError, match=r"damaged while the companion ran \(game g-1 cannot be read\)"):
            look_up()
    store.close()


@pytest.mark.parametrize("content", [b"this is not a database at all" * 100, b"SQLite format 3\x00" + b"\x00" * 50])
def test_a_damaged_or_foreign_file_is_refused_and_left_as_it_is(tmp_path, content):
    path = tmp_path / "log.sqlite3"
    path.write_bytes(content)
    with pytest.raises(StoreError, match="left as it is"):
        GameStore(path)
    assert path.read_bytes() == content


def test_another_programs_database_is_refused(tmp_path):
    path = tmp_path / "log.sqlite3"
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE notes (x)")
    db.commit()
    db.close()
    with pytest.raises(StoreError, match="another program"):
        GameStore(path)


def play_one(server: LiveServer, game_id: str, rng: random.Random) -> requests.Response:
    state = server.get(f"/api/games/{game_id}").json()
    if state["phase"] == "claim":
        return server.post(f"/api/games/{game_id}/claim", {"amount": rng.randint(state["min_claim"], min(18, state["min_claim"] + 3))})
    if state["phase"] == "decide":
        if rng.random() < 0.5 and state["min_claim"]:
            return server.post(f"/api/games/{game_id}/believe", {"peeked": rng.random() < 0.3})
        server.post("/api/sim/dice", {"values": [rng.randint(1, 6) for _ in range(3)]})
        return server.post(f"/api/games/{game_id}/bluff")
    return server.post(f"/api/games/{game_id}/confirm", {"dice": [1, 2, 3]})


def test_a_server_killed_mid_game_restarts_with_every_acknowledged_event(tmp_path):
    seed = random.randrange(1 << 30)
    print(f"seed={seed}")
    rng = random.Random(seed)
    instance = tmp_path / "instance"
    server = live(instance).start()
    try:
        game_id = server.post("/api/games", {"players": ["Ann", "Ben", "Cy"], "path_length": 30}).json()["id"]
        for kill in range(3):
            acknowledged = None
            for _ in range(rng.randint(3, 12)):
                r = play_one(server, game_id, rng)
                assert r.status_code == 200, r.text
                acknowledged = r.json().get("state", r.json())
            # one more action in flight while the process is killed: it may or may not land
            in_flight = threading.Thread(target=lambda: _ignore_errors(play_one, server, game_id, rng))
            in_flight.start()
            server.kill()
            in_flight.join()
            server = live(instance).start()
            after = server.get(f"/api/games/{game_id}").json()
            assert after["events"] in (acknowledged["events"], acknowledged["events"] + 1), f"seed={seed}"
            if after["events"] == acknowledged["events"]:
                assert after == acknowledged, f"seed={seed}"
            assert server.get("/api/games/current").json()["id"] == game_id
        assert play_one(server, game_id, rng).status_code == 200  # the game goes on
    finally:
        server.stop()


def _ignore_errors(fn, *args):
    try:
        fn(*args)
    except requests.RequestException:
        pass
