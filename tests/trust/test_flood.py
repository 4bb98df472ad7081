"""Floods of connections and oversized requests against the real server (issue 27).

Each test runs a real ``serve --simulate`` with its caps lowered to a few
dozen connections, so that a small flood from many loopback addresses
(127.x.y.z) fills them; counts are checked, never times (the times are the
``flood`` bench's figures).
"""

from __future__ import annotations

import http.client
import json
import os
import socket
import time
from pathlib import Path

import pytest

from bench.flood import flood_run
from bench.live_server import LiveServer, ViewerPool, loopback_address
from companion.app.settings import write_config

from .conftest import PIN

SMALL = {"server.max_connections": 40, "server.reserved_connections": 10, "server.connections_per_address": 4, "server.header_timeout_s": 2, "server.body_timeout_s": 2}


def _server(tmp_path, **config) -> LiveServer:  # noqa: ANN003
    instance = tmp_path / "live"
    write_config(instance, {**SMALL, **config})
    return LiveServer(instance, pin=PIN)


def _closed_within(sock: socket.socket, seconds: float) -> bytes | None:
    """What the server sent before closing ``sock``, or None if it is still open after ``seconds``."""
    sock.settimeout(0.2)
    got = b""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            chunk = sock.recv(4096)
        except socket.timeout:
            continue
        except OSError:
            return got
        if not chunk:
            return got
        got += chunk
    return None


@pytest.mark.slow
def test_the_table_plays_on_through_a_flood_of_idle_and_slowloris_connections(tmp_path):
    figures = flood_run(idle=60, slow=20, actions=12, workdir=tmp_path, config=SMALL, settle_s=2.0, baseline=False)
    print(figures)
    assert figures["table_errors"] == 0, figures["error_samples"]
    assert figures["table_answered"] == 12 and figures["table_counts"]["bluff"] >= 1
    assert figures["flood"]["closed_by_server"] > 0, "the flood fitted in: it tested nothing"
    assert figures["health_status_after"] == 200


@pytest.mark.slow
def test_one_address_holds_a_few_connections_and_a_slow_header_is_cut_off(tmp_path):
    with _server(tmp_path) as server:
        mine = [socket.create_connection(("127.0.0.1", server.port), source_address=("127.0.9.9", 0)) for _ in range(6)]
        try:
            refused = [_closed_within(s, 3) for s in mine[4:]]
            for answer in refused:
                assert answer is not None and answer.startswith(b"HTTP/1.1 503")
                assert json.loads(answer.split(b"\r\n\r\n", 1)[1])["message"].startswith("The companion is too busy")
            # Another address is served, and the table (with the PIN) plays.
            assert server.post("/api/games", json={"players": ["Ann", "Ben"]}).status_code == 201
            # The four let in never finish a header: each is cut off by the header timeout.
            mine[0].sendall(b"GET /api/health HTTP/1.1\r\nHost: 127")
            assert all(_closed_within(s, 15) == b"" for s in mine[:4]), "a slow or silent connection was kept past the header timeout"
        finally:
            for s in mine:
                s.close()


def _open_files_under(pid: int, folder) -> list[str]:  # noqa: ANN001
    """The files process ``pid`` holds open under ``folder`` (a spooled body is unlinked at once, but stays open)."""
    found = []
    for fd in (Path("/proc") / str(pid) / "fd").iterdir():
        try:
            target = os.readlink(fd)
        except OSError:
            continue
        if target.startswith(str(folder)):
            found.append(target)
    return found


@pytest.mark.slow
def test_a_large_body_is_refused_with_413_before_anything_is_written_to_disk(tmp_path):
    spool = tmp_path / "tmp"
    spool.mkdir()
    instance = tmp_path / "live"
    write_config(instance, SMALL)
    with LiveServer(instance, pin=PIN, env={"TMPDIR": str(spool)}) as server:
        # 600 kB announced, most of it sent: waitress's own default would spool
        # it to a temporary file (over 512 kB) while it arrives.
        conn = socket.create_connection(("127.0.0.1", server.port))
        try:
            conn.sendall(f"POST /api/games HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nX-Table-Pin: {PIN}\r\nContent-Length: 600000\r\n\r\n".encode())
            try:
                conn.sendall(b"[" * 550_000)
            except OSError:
                pass  # the server may close before all of it is sent
            time.sleep(0.3)
            assert _open_files_under(server.pid, spool) == [], "a request body was spooled to a temporary file"
            answer = _closed_within(conn, 10) or b""
            head, _, body = answer.partition(b"\r\n\r\n")
            assert head.startswith(b"HTTP/1.1 413")
            message = json.loads(body)
            assert message["error"] == "too_large" and "64 KiB" in message["message"]
        finally:
            conn.close()
        # Chunked, without a length: refused as it grows past the limit.
        conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=20)
        try:
            chunks = (b'{"players": ["' + b"A" * 4096 + b'"]}' for _ in range(64))
            conn.request("POST", "/api/games", body=chunks, headers={"Content-Type": "application/json", "X-Table-Pin": PIN}, encode_chunked=True)
            assert conn.getresponse().status == 413
        except (BrokenPipeError, ConnectionResetError):
            pass  # closed while sending: refused all the same
        finally:
            conn.close()
        # A header block over the limit gets 431 in words.
        conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=20)
        try:
            conn.request("GET", "/api/health", headers={"X-Filler": "a" * 20000})
            response = conn.getresponse()
            assert response.status == 431 and json.loads(response.read())["error"] == "headers_too_large"
        finally:
            conn.close()
        assert server.post("/api/games", json={"players": ["Ann", "Ben"]}).status_code == 201


@pytest.mark.slow
def test_guests_make_room_by_closing_idle_guests_then_their_viewers_never_the_tables_viewer(tmp_path):
    with _server(tmp_path) as server:
        table = server.session
        table.headers.pop("X-Table-Pin")
        assert table.post(server.url + "/api/session", json={"pin": PIN}, timeout=10).status_code == 200
        cookie = "; ".join(f"{c.name}={c.value}" for c in table.cookies)
        tables_viewer = socket.create_connection(("127.0.0.1", server.port))
        tables_viewer.sendall(f"GET /api/events HTTP/1.0\r\nHost: 127.0.0.1\r\nCookie: {cookie}\r\n\r\n".encode())
        assert b"200 OK" in tables_viewer.recv(4096)
        with ViewerPool(server.port, 20) as guests:  # fills the guests' share (40 - 10 reserved, less the table's)
            assert guests.status.count(200) == 20
            time.sleep(1.2)  # only connections older than a second are closed to make room
            idle = [socket.create_connection(("127.0.0.1", server.port), source_address=(loopback_address(i, block=40), 0)) for i in range(12)]
            try:
                time.sleep(1.2)
                idle += [socket.create_connection(("127.0.0.1", server.port), source_address=(loopback_address(i, block=50), 0)) for i in range(12)]
                game = table.post(server.url + "/api/games", json={"players": ["Ann", "Ben"]}, timeout=10)
                assert game.status_code == 201
                want = f"{game.json()['id']}:1".encode()
                got = b""
                deadline = time.monotonic() + 10
                tables_viewer.settimeout(0.5)
                while want not in got and time.monotonic() < deadline:
                    try:
                        got += tables_viewer.recv(65536)
                    except socket.timeout:
                        pass
                assert want in got, "the table's own viewer was closed to make room"
                deadline = time.monotonic() + 10
                while time.monotonic() < deadline and not any("closed the stream" in e for e in guests.errors):
                    time.sleep(0.1)
                assert any("closed the stream" in e for e in guests.errors), "no guest viewer made room: the flood tested nothing"
                assert sum(_closed_within(s, 0.05) is not None for s in idle[:12]) >= 1, "no idle guest was closed first"
            finally:
                for s in idle:
                    s.close()
        tables_viewer.close()
