"""Viewers and actions together on the real server (short form: 10 viewers x 5 s).

Checks counts only: no failed action, no dropped stream, every viewer got every
event. Delays are figures, reported by ``make bench`` (50 viewers x 60 s).
"""

from __future__ import annotations

import time

import pytest

from bench.live_server import LiveServer, ViewerPool
from bench.load import load_run

from .conftest import PIN


@pytest.mark.slow
def test_every_viewer_gets_every_event_while_the_table_plays(tmp_path):
    figures = load_run(viewers=10, rate=20, seconds=5, workdir=tmp_path, settle_s=10)
    print(figures)
    assert figures["actions_acknowledged"] == figures["actions_sent"] == 100
    assert figures["deliveries_missing"] == 0
    assert figures["errors"] == 0, figures["error_samples"]
    assert figures["viewers_still_counted_after_leaving"] == 0, "viewers who left still hold server threads"


@pytest.mark.slow
def test_viewers_past_the_cap_are_refused_so_the_table_can_always_act(tmp_path):
    """Each stream holds a server thread; without a cap, open pages froze every action."""
    with LiveServer(tmp_path / "live", pin=PIN, threads=12) as server:  # cap: 12 - 3 = 9 viewers
        with ViewerPool(server.port, 12) as viewers:
            assert viewers.status.count(200) == 9 and viewers.status.count(503) == 3
            refused = [e for e in viewers.errors if "503" in e]
            assert len(refused) == 3
            action = server.post("/api/games", json={"players": ["Ann", "Ben"]}, timeout=20)
            assert action.status_code == 201
            want = f"{action.json()['id']}:1"
            deadline = time.monotonic() + 10
            while time.monotonic() < deadline and sum(want in r for r in viewers.received) < 9:
                time.sleep(0.02)
            assert sum(want in r for r in viewers.received) == 9
        # The viewers left: the server frees their threads (at its next keep-alives).
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and server.get("/api/health").json()["viewers"] != 0:
            time.sleep(0.25)
        assert server.get("/api/health").json()["viewers"] == 0
        with ViewerPool(server.port, 9) as again:
            assert again.status == [200] * 9
