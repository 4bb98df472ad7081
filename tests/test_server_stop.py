"""serve stops cleanly on SIGTERM (systemd's stop), closing the log and the table."""

from __future__ import annotations

import os
import signal

from tests.conftest import live


def test_sigterm_stops_the_server_cleanly_and_the_game_survives(tmp_path):
    server = live(tmp_path / "instance").start()
    game = server.post("/api/games", json={"players": ["Ann", "Ben"]}).json()
    server.proc.send_signal(signal.SIGTERM)
    assert server.proc.wait(20) == 0  # a clean exit, not death by the signal (-15)
    again = live(tmp_path / "instance").start()
    try:
        assert again.get("/api/games/current").json()["id"] == game["id"]
    finally:
        again.stop()


def test_a_second_companion_on_the_same_instance_is_refused_in_words(tmp_path):
    """Two on one game log each kept their own idea of the games: the second showed a game that had moved on and
    answered every action "someone else acted, retry" for good."""
    import subprocess
    import sys

    from bench.live_server import LiveServer

    first = LiveServer(tmp_path / "instance", pin="482913")
    first.start()
    try:
        env = {k: v for k, v in os.environ.items() if k != "ELEPHANTS_BLUFF_PIN"}
        second = subprocess.run([sys.executable, "-m", "companion.app.cli", "serve", "--simulate", "--port", "0", "--instance", str(tmp_path / "instance")],
                                capture_output=True, text=True, timeout=60, env={**env, "ELEPHANTS_BLUFF_PIN": "482913"})
        assert second.returncode == 2
        assert f"Another companion is already running on {tmp_path / 'instance'} (process {first.proc.pid})" in second.stderr
        assert first.get("/api/health").status_code == 200  # the first plays on
    finally:
        first.stop()
    again = LiveServer(tmp_path / "instance", pin="482913")  # once it stopped, the instance is free again
    again.start()
    again.stop()


def test_sigterm_stops_safe_mode_cleanly_too(tmp_path):
    """systemctl stop, a reboot and instance.sh's backup stop safe mode with SIGTERM: a clean exit (0), as the normal
    server's, not 2, which left the unit "failed (Result: exit-code)" after every stop."""
    from bench.live_server import LiveServer

    (tmp_path / "instance").mkdir()
    (tmp_path / "instance" / "config.toml").write_text("[game]\npath_length = 99\n", encoding="utf-8")
    server = LiveServer(tmp_path / "instance", pin="482913", simulate=False).start()
    try:
        assert server.get("/api/health").json()["status"] == "safe_mode"
    finally:
        code = server.stop()
    assert code == 0 and "SAFE MODE" in server.log_text()


def test_a_stopped_companion_leaves_each_sqlite_file_whole_with_no_write_ahead_files_beside_it(tmp_path):
    """A backup or a copy taken while the service is stopped should hold one file per database. The devices' sessions
    and the wrong-PIN budget (``auth.sqlite3``) stayed open at the stop, so their ``-wal`` and ``-shm`` stayed too."""
    import requests

    instance = tmp_path / "instance"
    server = live(instance).start()
    server.post("/api/games", json={"players": ["Ann", "Ben"]})
    assert requests.post(f"{server.url}/api/session", json={"pin": "000000"}, timeout=10).status_code == 401  # the budget writes
    assert requests.post(f"{server.url}/api/session", json={"pin": server.pin}, timeout=10).status_code == 200  # a session
    assert (instance / "auth.sqlite3-wal").exists()  # written while it runs
    server.proc.send_signal(signal.SIGTERM)
    assert server.proc.wait(20) == 0
    beside = sorted(p.name for p in instance.rglob("*") if p.name.endswith(("-wal", "-shm", "-journal")))
    assert beside == []
    again = live(instance).start()  # and nothing was lost with them
    try:
        assert len(again.get("/api/sessions").json()["sessions"]) == 1
    finally:
        again.stop()


def test_close_app_closes_the_game_log_and_auth_sqlite3_so_no_write_ahead_file_is_left_while_the_process_lives(tmp_path, settings):
    """``serve`` closes the app with ``close_app`` at its stop; here in one process, so the interpreter's own exit
    cannot be what tidies the files."""
    from companion.app.web import close_app, create_app
    from tests.conftest import PIN, PIN_HEADERS

    instance = tmp_path / "instance"
    app = create_app(instance, simulate=True, settings=settings, test_config={"TESTING": True})
    client = app.test_client()
    assert client.post("/api/games", json={"players": ["Ann", "Ben"]}, headers=PIN_HEADERS).status_code == 201
    assert client.post("/api/session", json={"pin": "000000"}).status_code == 401
    assert client.post("/api/session", json={"pin": PIN}).status_code == 200
    written = sorted(p.name for p in instance.rglob("*-wal"))
    assert "auth.sqlite3-wal" in written and len(written) == 2  # the game log's too
    close_app(app)
    assert sorted(p.name for p in instance.rglob("*") if p.name.endswith(("-wal", "-shm", "-journal"))) == []
