"""serve stops cleanly on SIGTERM (systemd's stop), closing the log and the table."""

from __future__ import annotations

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
