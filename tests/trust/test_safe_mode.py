"""A broken config or game log starts the companion in safe mode, which says what is wrong and where."""

from __future__ import annotations

import hashlib
import os

import pytest

from companion.core.errors import SettingsError, StoreError
from bench.live_server import LiveServer
from companion.app.settings import all_settings, render_config
from companion.app.web.safe_mode import create_safe_app

from .conftest import PIN
from .test_corrupt_store import real_log


def test_safe_mode_page_and_api_name_the_file_the_setting_and_why():
    problem = SettingsError("/srv/eb/config.toml", "game.path_length", "must be a whole number, not '<b>seven</b>'")
    client = create_safe_app(problem).test_client()
    page = client.get("/")
    assert page.status_code == 503 and page.mimetype == "text/html"
    text = page.get_data(as_text=True)
    assert "/srv/eb/config.toml" in text and "game.path_length" in text and "must be a whole number" in text
    assert "<b>seven</b>" not in text and "&lt;b&gt;seven&lt;/b&gt;" in text  # escaped, not markup
    health = client.get("/api/health")
    assert health.status_code == 503
    assert health.get_json()["status"] == "safe_mode"
    assert health.get_json()["file"] == "/srv/eb/config.toml" and health.get_json()["setting"] == "game.path_length"
    for method, path in (("POST", "/api/games"), ("GET", "/api/games/current"), ("GET", "/api/events"), ("POST", "/api/sim/dice")):
        response = client.open(path, method=method, json={"players": ["Ann", "Ben"]})
        assert response.status_code == 503 and response.get_json()["error"] == "bad_setting"
    assert page.headers["X-Frame-Options"] == "DENY" and "frame-ancestors 'none'" in page.headers["Content-Security-Policy"]
    assert client.get("/", headers={"Host": "evil.example"}).status_code == 403


def test_safe_mode_for_a_damaged_game_log_says_what_to_do():
    problem = StoreError("The game log /srv/eb/game-log.sqlite3 is damaged (x). It was left as it is: move it away to start a fresh log, or restore a backup.")
    body = create_safe_app(problem, "/srv/eb/game-log.sqlite3").test_client().get("/api/health").get_json()
    assert body["error"] == "bad_game_log" and body["file"] == "/srv/eb/game-log.sqlite3"
    assert "Move the file away" in body["todo"]


def _config(**values) -> str:  # noqa: ANN003
    return render_config(all_settings(), {"table.pin": PIN, **values})


BROKEN_CONFIGS = {
    "binary garbage": (os.urandom(512) + b"\xff\xfe", None, "not a text file"),
    "half written": (_config().encode()[: len(_config()) // 2].rsplit(b"\n", 1)[0] + b'\nframes_dir = "fra', None, "line"),
    "wrong type": (_config().replace("path_length = 7", 'path_length = "seven"').encode(), "game.path_length", "whole number"),
    "out of range": (_config().replace("path_length = 7", "path_length = 300").encode(), "game.path_length", "between 2 and 30"),
    "unknown key": (_config().encode() + b"\n[table2]\ncolour = 3\n", "table2.colour", "not a known setting"),
    "unquoted pin": (_config().replace(f'pin = "{PIN}"', "pin = 982451").encode(), "table.pin", "text in quotes"),
    "a folder": (None, None, "is a folder"),
    "empty": (b"", "table.pin", "is empty"),
    "cut at a line": (_config().encode()[: _config().encode().index(b"[server]")], None, "cut short"),
}


@pytest.mark.slow
@pytest.mark.parametrize("case", list(BROKEN_CONFIGS))
def test_serve_with_a_broken_config_starts_in_safe_mode_and_leaves_the_file(tmp_path, case):
    data, key, why = BROKEN_CONFIGS[case]
    instance = tmp_path / "instance"
    instance.mkdir()
    config = instance / "config.toml"
    if data is None:
        config.mkdir()
    else:
        config.write_bytes(data)
    with LiveServer(instance, pin=None) as server:
        page = server.get("/")
        health = server.get("/api/health")
        refused = server.post("/api/games", json={"players": ["Ann", "Ben"]}, headers={"X-Table-Pin": PIN})
    assert page.status_code == 503 and health.status_code == 503 and refused.status_code == 503
    assert "config.toml" in page.text and why in page.text, page.text
    assert health.json()["file"] == "config.toml" and health.json()["setting"] == key
    assert str(instance) not in page.text + health.text, "an absolute path was shown to the network"
    assert str(config) in server.log_text(), "the log (read by the person who fixes it) names the whole path"
    if key:
        assert key in page.text
    assert "982451" not in page.text + health.text, "the page repeated the table PIN"
    assert config.is_dir() if data is None else config.read_bytes() == data
    assert not (instance / "game-log.sqlite3").exists(), "safe mode wrote a game log"
    assert "SAFE MODE" in server.log_text()


@pytest.mark.slow
def test_a_bad_pin_in_the_environment_is_named_as_such(tmp_path):
    with LiveServer(tmp_path / "instance", pin="12 4") as server:
        health = server.get("/api/health").json()
    assert health["setting"] == "ELEPHANTS_BLUFF_PIN" and "without spaces" in health["why"]


@pytest.mark.slow
@pytest.mark.parametrize("damage", ["garbage", "truncated"])
def test_serve_with_a_damaged_game_log_refuses_it_in_safe_mode_and_never_replaces_it(tmp_path, damage):
    instance = tmp_path / "instance"
    instance.mkdir()
    log = instance / "game-log.sqlite3"
    if damage == "garbage":
        log.write_bytes(os.urandom(20000))
    else:
        real_log(log)
        data = log.read_bytes()
        log.write_bytes(data[: len(data) // 2])
    before = hashlib.sha256(log.read_bytes()).hexdigest()
    with LiveServer(instance, pin=PIN) as server:
        health = server.get("/api/health")
        page = server.get("/")
        assert server.post("/api/games", json={"players": ["Ann", "Ben"]}).status_code == 503
    assert health.status_code == 503 and health.json()["error"] == "bad_game_log"
    assert health.json()["file"] == "game-log.sqlite3" and "game-log.sqlite3" in page.text and "Move the file away" in page.text
    assert str(instance) not in page.text + health.text
    assert hashlib.sha256(log.read_bytes()).hexdigest() == before
    # A person moves it away: the companion starts normally with a fresh log.
    log.rename(instance / "damaged.sqlite3")
    for extra in ("-wal", "-shm"):
        (instance / f"game-log.sqlite3{extra}").unlink(missing_ok=True)
    with LiveServer(instance, pin=PIN) as server:
        assert server.get("/api/health").json()["status"] == "ok"
        assert server.post("/api/games", json={"players": ["Ann", "Ben"]}).status_code == 201


@pytest.mark.slow
@pytest.mark.parametrize("damage", ["sessions file garbage", "key a folder"])
def test_serve_with_a_damaged_sessions_file_or_key_names_that_file_not_the_game_log(tmp_path, damage):
    """The sessions file (auth.sqlite3) and their key (secret_key) are not the game log: safe mode named the game log and
    told to repair it, or stopped on a traceback."""
    instance = tmp_path / "instance"
    instance.mkdir()
    (instance / "config.toml").write_text(_config())
    name = "auth.sqlite3" if damage == "sessions file garbage" else "secret_key"
    if damage == "sessions file garbage":
        (instance / name).write_bytes(b"SQLite format 3\x00" + bytes(200))
    else:
        (instance / name).mkdir()
    with LiveServer(instance, pin=None) as server:
        health = server.get("/api/health")
        page = server.get("/")
    body = health.json()
    assert health.status_code == 503 and body["error"] == "bad_file" and body["file"] == name and body["setting"] is None, body
    assert "every device types the PIN again" in body["todo"] and "game log" not in body["todo"]
    assert name in page.text and str(instance) not in page.text + health.text
    assert "Traceback" not in server.log_text() and "SAFE MODE" in server.log_text()
    assert (instance / name).is_dir() if damage == "key a folder" else (instance / name).read_bytes().startswith(b"SQLite format 3")
