"""The trust benchmark: a flood of idle and slowloris connections while the table plays.

A guest on the table's Wi-Fi, with no PIN, opens ``idle`` connections that
send nothing and ``slow`` connections that send a request's header one byte
every ``drip_s`` seconds (slowloris), from many loopback addresses
(127.20.x.y, 127.30.x.y: all of 127.0.0.0/8 is this machine), and opens a new
one whenever the server closes one, for as long as the table plays. Meanwhile
the table (one client with the PIN, keep-alive) starts a game and plays it:
claims, Bluffs, and a confirmation when the reading is uncertain. Figures:
every table action's time from request to response (p50, p95, max; claims
and Bluffs apart, since a Bluff reads a camera frame), the same actions
played just before without the flood on the same server, the table's errors, and what the flood saw (connections opened, closed by the server,
refused with 503). Traffic goes to 127.0.0.1 only; bounded in count and time.

``make bench`` runs the full form (300 idle + 100 slowloris, 60 table
actions); ``tests/trust/test_flood.py`` runs the same code small, with the
server's caps lowered to match, and checks counts only.
"""

from __future__ import annotations

import random
import selectors
import socket
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from bench.live_server import LiveServer, loopback_address
from bench.load import PIN, _percentile
from bench.report import BENCHES


class Flood:
    """``idle`` + ``slow`` hostile connections to ``port``, kept open (reopened) by one thread."""

    def __init__(self, port: int, *, idle: int, slow: int, drip_s: float = 2.0, reopen_s: float = 0.0, host: str = "127.0.0.1") -> None:
        self.port, self.host, self.idle, self.slow, self.drip_s, self.reopen_s = port, host, idle, slow, drip_s, reopen_s
        self._closed_at: dict[int, float] = {}
        self.opened = 0
        self.closed_by_server = 0
        self.refused = 0  # closed with the server's 503
        self.connect_errors = 0
        self._sel = selectors.DefaultSelector()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._slots: dict[int, tuple[socket.socket, bool, float]] = {}  # slot -> (socket, slow?, next drip)
        self._header = b"GET /api/health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Filler: " + b"a" * 4000

    def _open(self, slot: int) -> None:
        slow = slot >= self.idle
        source = loopback_address(slot, block=30 if slow else 20)
        try:
            s = socket.create_connection((self.host, self.port), timeout=5, source_address=(source, 0))
        except OSError:
            self.connect_errors += 1
            return
        s.setblocking(False)
        self.opened += 1
        self._slots[slot] = (s, slow, time.monotonic())
        self._sel.register(s, selectors.EVENT_READ, slot)

    def _drop(self, slot: int, refused: bool) -> None:
        s, _, _ = self._slots.pop(slot)
        try:
            self._sel.unregister(s)
        except (KeyError, ValueError):
            pass
        s.close()
        self._closed_at[slot] = time.monotonic()
        self.closed_by_server += 1
        self.refused += refused

    def start(self) -> "Flood":
        for slot in range(self.idle + self.slow):
            self._open(slot)
        self._thread = threading.Thread(target=self._run, name="flood", daemon=True)
        self._thread.start()
        return self

    def _run(self) -> None:
        offsets: dict[int, int] = {}
        while not self._stop.is_set():
            for key, _ in self._sel.select(timeout=0.05):
                slot = key.data
                try:
                    data = key.fileobj.recv(4096)  # type: ignore[union-attr]
                except (BlockingIOError, InterruptedError):
                    continue
                except OSError:
                    data = b""
                if not data or b"503" in data[:20]:
                    self._drop(slot, refused=bool(data))
            now = time.monotonic()
            for slot in range(self.idle + self.slow):
                if self._stop.is_set():
                    break
                if slot not in self._slots:
                    if now - self._closed_at.get(slot, 0.0) >= self.reopen_s:
                        self._open(slot)  # the flood never gives up a place
                    continue
                s, slow, due = self._slots[slot]
                if slow and now >= due:
                    i = offsets.get(slot, 0) % len(self._header)
                    try:
                        s.send(self._header[i : i + 1])
                    except OSError:
                        continue
                    offsets[slot] = i + 1
                    self._slots[slot] = (s, slow, now + self.drip_s)

    def open_now(self) -> int:
        return len(self._slots)

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=10)
        for s, _, _ in list(self._slots.values()):
            s.close()
        self._slots.clear()
        self._sel.close()

    def figures(self) -> dict[str, int]:
        return {"opened": self.opened, "closed_by_server": self.closed_by_server, "refused_503": self.refused, "connect_errors": self.connect_errors}


def play(server: LiveServer, actions: int, rng: random.Random) -> tuple[list[tuple[str, float]], list[str], dict[str, int]]:
    """The table plays ``actions`` actions (claims, Bluffs, confirmations); each one's kind and seconds, and the errors."""
    times: list[tuple[str, float]] = []
    errors: list[str] = []
    counts = {"claim": 0, "bluff": 0, "confirm": 0, "verdicts": 0, "games": 0}
    state: dict[str, Any] | None = None
    for _ in range(actions):
        if state is None or state["phase"] == "over":
            path, body, kind = "/api/games", {"players": ["Ann", "Ben", "Cy"], "path_length": 30}, "games"
        elif state["phase"] == "claim":
            path, body, kind = f"/api/games/{state['id']}/claim", {"amount": min(18, state["min_claim"] + rng.choice([0, 1]))}, "claim"
        elif state["phase"] == "decide":
            path, body, kind = f"/api/games/{state['id']}/bluff", {}, "bluff"
        else:
            path, body, kind = f"/api/games/{state['id']}/confirm", {"dice": [rng.randint(1, 6) for _ in range(3)]}, "confirm"
        t = time.perf_counter()
        try:
            response = server.post(path, json=body, timeout=15)
        except Exception as exc:  # noqa: BLE001 - every failure is a figure
            errors.append(f"{kind}: {exc.__class__.__name__}")
            state = None
            continue
        times.append((kind, time.perf_counter() - t))
        if response.status_code not in (200, 201):
            errors.append(f"{kind}: {response.status_code} {response.text[:100]}")
            state = None
            continue
        counts[kind] += 1
        data = response.json()
        state = data.get("state", data)
        challenge = data.get("challenge")
        if kind == "confirm" or (challenge is not None and challenge.get("verdict")):
            counts["verdicts"] += 1
    return times, errors, counts


def _ms(times: list[tuple[str, float]], kinds: tuple[str, ...]) -> dict[str, Any]:
    ms = [t * 1000 for kind, t in times if kind in kinds]
    return {"n": len(ms), "p50": round(_percentile(ms, 50), 2) if ms else None, "p95": round(_percentile(ms, 95), 2) if ms else None, "max": round(max(ms), 2) if ms else None}


def flood_run(*, idle: int = 300, slow: int = 100, actions: int = 60, reopen_s: float = 0.0, workdir: Path | None = None, config: dict[str, Any] | None = None, settle_s: float = 3.0, seed: int = 7, baseline: bool = True) -> dict[str, Any]:
    """Start a server; the table plays ``actions`` actions alone (the baseline), then again in the flood."""
    own_tmp = None
    if workdir is None:
        own_tmp = tempfile.TemporaryDirectory(prefix="eb-flood-")
        workdir = Path(own_tmp.name)
    instance = Path(workdir) / "flood"
    if config:
        from companion.app.settings import write_config

        write_config(instance, config)
    server = LiveServer(instance, pin=PIN)
    flood = None
    try:
        server.start()
        alone, alone_errors, _ = play(server, actions, random.Random(seed)) if baseline else ([], [], {})
        server._close_session()  # the table comes back on a new connection, into the flood
        flood = Flood(server.port, idle=idle, slow=slow, reopen_s=reopen_s).start()
        time.sleep(settle_s)  # the flood holds its places before the table comes
        open_when_table_came = flood.open_now()
        times, errors, counts = play(server, actions, random.Random(seed))
        health = server.get("/api/health", timeout=15).status_code
    finally:
        if flood is not None:
            flood.stop()
        server.stop()
        if own_tmp is not None:
            own_tmp.cleanup()
    light = ("games", "claim", "confirm")
    return {
        "idle_connections": idle,
        "slowloris_connections": slow,
        "flood_reopens_after_s": reopen_s,
        "flood_open_when_the_table_came": open_when_table_came,
        "flood": flood.figures(),
        "table_actions": actions,
        "table_answered": len(times),
        "table_counts": counts,
        "table_errors": len(errors),
        "error_samples": errors[:5],
        "health_status_after": health,
        "in_flood_ms": {"all": _ms(times, light + ("bluff",)), "claims_and_confirms": _ms(times, light), "bluffs": _ms(times, ("bluff",))},
        "no_flood_ms": {"all": _ms(alone, light + ("bluff",)), "claims_and_confirms": _ms(alone, light), "bluffs": _ms(alone, ("bluff",))},
        "no_flood_errors": len(alone_errors),
        "goal_p95_ms": 200,
    }


def bench_flood(full: bool) -> dict[str, Any]:
    if full:
        # A flood that reopens each closed connection at once (a storm), and one that waits a second first.
        storm = flood_run(idle=300, slow=100, actions=80)
        storm["reopening_after_1_s"] = flood_run(idle=300, slow=100, actions=80, reopen_s=1.0)
        return storm
    return flood_run(idle=100, slow=40, actions=20, config={"server.max_connections": 80, "server.reserved_connections": 20})


BENCHES["flood"] = bench_flood
