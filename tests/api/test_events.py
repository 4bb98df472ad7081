"""Live updates: a real SSE client on a real server sees every change."""

from __future__ import annotations

import json
import socket
import threading

import requests


class SSEClient:
    """Reads `event: state` messages from /api/events in a thread."""

    def __init__(self, url: str) -> None:
        self.response = requests.get(url + "/api/events", stream=True, timeout=30)
        self.states: list[dict] = []
        self.ready = threading.Event()
        self.changed = threading.Condition()
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self) -> None:
        event, data = None, []
        try:
            for line in self.response.iter_lines(decode_unicode=True):
                if line.startswith("retry:"):
                    self.ready.set()
                elif line.startswith("event:"):
                    event = line.split(":", 1)[1].strip()
                elif line.startswith("data:"):
                    data.append(line.split(":", 1)[1].strip())
                elif line == "" and event:
                    with self.changed:
                        self.states.append(json.loads("".join(data)))
                        self.changed.notify_all()
                    event, data = None, []
        except (requests.RequestException, AttributeError, ValueError):
            pass  # closed by the test

    def wait_for(self, count: int, timeout: float = 20) -> list[dict]:
        with self.changed:
            self.changed.wait_for(lambda: len(self.states) >= count, timeout)
            return list(self.states)

    def close(self) -> None:
        """Shut the socket down first: a plain close waits for the next keep-alive."""
        try:
            self.response.raw._fp.fp.raw._sock.shutdown(socket.SHUT_RDWR)
        except (AttributeError, OSError):
            pass
        self.response.close()
        self.thread.join(5)


def test_every_viewer_sees_a_state_event_for_each_change(live_server):
    viewers = [SSEClient(live_server.url) for _ in range(3)]
    try:
        for v in viewers:
            assert v.ready.wait(10)
        game = live_server.post("/api/games", {"players": ["Ann", "Ben"]}).json()
        live_server.post(f"/api/games/{game['id']}/claim", {"amount": 7})
        live_server.post(f"/api/games/{game['id']}/believe", {"peeked": True})
        live_server.post(f"/api/games/{game['id']}/claim", {"amount": 9})
        live_server.post("/api/sim/dice", {"values": [1, 2, 2]})
        final = live_server.post(f"/api/games/{game['id']}/bluff").json()
        for v in viewers:
            states = v.wait_for(5)
            assert [s["events"] for s in states] == [1, 2, 3, 4, 5]
            # the last is "claim", or "confirm" when the reader was unsure of the rendered dice (R14)
            assert [s["phase"] for s in states] == ["claim", "decide", "claim", "decide", final["phase"]]
            assert states[-1]["players"] == final["players"]
    finally:
        for v in viewers:
            v.close()


def test_a_viewer_that_joins_mid_game_first_gets_the_current_state(live_server):
    game = live_server.post("/api/games", {"players": ["Ann", "Ben"]}).json()
    live_server.post(f"/api/games/{game['id']}/claim", {"amount": 7})
    viewer = SSEClient(live_server.url)
    try:
        first = viewer.wait_for(1)[0]
        assert first["id"] == game["id"] and first["phase"] == "decide"
    finally:
        viewer.close()


def test_refused_actions_send_no_event(live_server):
    game = live_server.post("/api/games", {"players": ["Ann", "Ben"]}).json()
    viewer = SSEClient(live_server.url)
    try:
        assert len(viewer.wait_for(1)) == 1
        assert live_server.post(f"/api/games/{game['id']}/claim", {"amount": 2}).status_code == 422
        live_server.post(f"/api/games/{game['id']}/claim", {"amount": 5})
        states = viewer.wait_for(2)
        assert [s["events"] for s in states] == [1, 2]
    finally:
        viewer.close()
