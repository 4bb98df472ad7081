"""A real ``elephants-bluff serve`` process on loopback, and a light SSE viewer.

Used by the durability and load benchmarks (``bench/load.py``) and by
the tests that need the real server: the process is started exactly as a table
starts it (waitress, ``--simulate``), on 127.0.0.1 and a free port, its output
kept in a log file, and stopped (or killed with SIGKILL) by its own pid.

>>> import tempfile, pathlib
>>> with LiveServer(pathlib.Path(tempfile.mkdtemp()), pin="4821") as server:
...     server.get("/api/health").json()["status"]
'ok'
"""

from __future__ import annotations

import os
import re
import selectors
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import requests

_URL = re.compile(r"http://127\.0\.0\.1:(\d+)/")


class ServerDidNotStart(RuntimeError):
    pass


class LiveServer:
    """``elephants-bluff serve --simulate`` on ``instance``, as its own process."""

    def __init__(self, instance: Path, *, pin: str | None = "4821", simulate: bool = True, threads: int | None = None, env: dict[str, str] | None = None) -> None:
        self.instance = Path(instance)
        self.pin = pin
        self.simulate = simulate
        self.threads = threads
        self.extra_env = env or {}
        self.proc: subprocess.Popen | None = None
        self.port: int | None = None
        self.log_path = self.instance.parent / f"{self.instance.name}-server.log"
        self._session: requests.Session | None = None
        self.starts = 0

    # --- life ------------------------------------------------------------------------

    def start(self, timeout: float = 60.0) -> "LiveServer":
        """Start and wait until it listens; raises ``ServerDidNotStart`` with its output."""
        self.instance.mkdir(parents=True, exist_ok=True)
        env = dict(os.environ)
        env.pop("ELEPHANTS_BLUFF_PIN", None)
        if self.pin is not None:
            env["ELEPHANTS_BLUFF_PIN"] = self.pin
        if self.threads is not None:
            env["ELEPHANTS_BLUFF_THREADS"] = str(self.threads)
        env["PYTHONUNBUFFERED"] = "1"
        env.update(self.extra_env)
        args = [sys.executable, "-m", "companion.app.cli", "serve", "--host", "127.0.0.1", "--port", "0", "--instance", str(self.instance)]
        if self.simulate:
            args.insert(4, "--simulate")
        start_offset = self.log_path.stat().st_size if self.log_path.exists() else 0
        with open(self.log_path, "ab") as log:
            self.proc = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=env)
        self.starts += 1
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            text = self.log_text(start_offset)
            match = _URL.search(text)
            if match:
                self.port = int(match.group(1))
                return self
            if self.proc.poll() is not None:
                raise ServerDidNotStart(f"serve exited with {self.proc.returncode}:\n{text}")
            time.sleep(0.02)
        self.kill()
        raise ServerDidNotStart(f"serve did not listen within {timeout:.0f} s:\n{self.log_text(start_offset)}")

    def kill(self) -> None:
        """SIGKILL: no clean-up of any kind, as a power cut or the OOM killer."""
        if self.proc is not None and self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGKILL)
        if self.proc is not None:
            self.proc.wait(timeout=30)
        self._close_session()

    def stop(self, timeout: float = 10.0) -> int | None:
        """A clean stop (SIGTERM, as systemd sends); SIGKILL if it does not end in ``timeout``.

        Not SIGINT: a test run started in the background ignores SIGINT, and
        the server would inherit that.
        """
        if self.proc is None:
            return None
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                os.kill(self.proc.pid, signal.SIGKILL)
                self.proc.wait(timeout=30)
        self._close_session()
        return self.proc.returncode

    def restart(self) -> "LiveServer":
        self.stop()
        return self.start()

    def __enter__(self) -> "LiveServer":
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    @property
    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    @property
    def pid(self) -> int:
        assert self.proc is not None
        return self.proc.pid

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def log_text(self, offset: int = 0) -> str:
        try:
            with open(self.log_path, "rb") as f:
                f.seek(offset)
                return f.read().decode("utf-8", "replace")
        except FileNotFoundError:
            return ""

    # --- talking to it -------------------------------------------------------------

    @property
    def session(self) -> requests.Session:
        if self._session is None:
            self._session = requests.Session()
            if self.pin is not None:
                self._session.headers["X-Table-Pin"] = self.pin
        return self._session

    def _close_session(self) -> None:
        if self._session is not None:
            self._session.close()
            self._session = None

    def get(self, path: str, **kw: Any) -> requests.Response:
        kw.setdefault("timeout", 30)
        return self.session.get(self.url + path, **kw)

    def post(self, path: str, json: Any = None, **kw: Any) -> requests.Response:
        kw.setdefault("timeout", 30)
        return self.session.post(self.url + path, json=json, **kw)


def loopback_address(i: int, block: int = 10) -> str:
    """The ``i``-th of many loopback source addresses (127.<block+>.x.y): all of 127.0.0.0/8 is this machine."""
    return f"127.{block + i // 62500}.{i // 250 % 250}.{1 + i % 250}"


class ViewerPool:
    """``n`` viewers of ``GET /api/events`` on raw sockets, read by one thread.

    Each viewer records the SSE ``id`` (``<game>:<events>``) of every event it
    gets, with the ``time.monotonic()`` at which it arrived. HTTP/1.0 keeps the
    stream unchunked. Bounded: ``close`` ends the thread and every socket.
    Each viewer connects from its own loopback address (127.0.10.1, 127.0.10.2,
    …), as viewers on their own phones would: the server caps the connections
    of one address (``server.connections_per_address``).
    """

    def __init__(self, port: int, n: int, *, host: str = "127.0.0.1", path: str = "/api/events", keep_text: int = 0) -> None:
        self.port, self.n, self.host, self.path = port, n, host, path
        self.keep_text = keep_text  # keep up to this many bytes of each stream (for content checks)
        self.text: list[bytearray] = [bytearray() for _ in range(n)]
        self.received: list[dict[str, float]] = [{} for _ in range(n)]
        self.errors: list[str] = []
        self.connected = [False] * n
        self.status: list[int | None] = [None] * n
        self._socks: list[socket.socket] = []
        self._buffers: list[bytes] = [b""] * n
        self._sel = selectors.DefaultSelector()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def open(self, timeout: float = 30.0) -> "ViewerPool":
        for i in range(self.n):
            s = socket.create_connection((self.host, self.port), timeout=timeout, source_address=(loopback_address(i), 0))
            s.sendall(f"GET {self.path} HTTP/1.0\r\nHost: {self.host}:{self.port}\r\nAccept: text/event-stream\r\n\r\n".encode())
            s.setblocking(False)
            self._socks.append(s)
            self._sel.register(s, selectors.EVENT_READ, i)
        self._thread = threading.Thread(target=self._run, name="sse-viewers", daemon=True)
        self._thread.start()
        deadline = time.monotonic() + timeout
        while not all(self.connected) and time.monotonic() < deadline:
            time.sleep(0.01)
        if not all(self.connected):
            self.errors.append(f"{self.connected.count(False)} viewers got no stream within {timeout:.0f} s")
        return self

    def _run(self) -> None:
        while not self._stop.is_set():
            for key, _ in self._sel.select(timeout=0.1):
                i = key.data
                try:
                    chunk = key.fileobj.recv(65536)  # type: ignore[union-attr]
                except (BlockingIOError, InterruptedError):
                    continue
                except OSError as exc:
                    self.errors.append(f"viewer {i}: {exc}")
                    self._sel.unregister(key.fileobj)
                    continue
                now = time.monotonic()
                if not chunk:
                    if not self._stop.is_set() and self.status[i] == 200:
                        self.errors.append(f"viewer {i}: the server closed the stream")
                    self._sel.unregister(key.fileobj)
                    continue
                self._feed(i, chunk, now)

    def _feed(self, i: int, chunk: bytes, now: float) -> None:
        if len(self.text[i]) < self.keep_text:
            self.text[i] += chunk[: self.keep_text - len(self.text[i])]
        buf = self._buffers[i] + chunk
        if not self.connected[i]:
            head, sep, rest = buf.partition(b"\r\n\r\n")
            if not sep:
                self._buffers[i] = buf
                return
            status = head.split(b"\r\n", 1)[0]
            try:
                self.status[i] = int(status.split()[1])
            except (IndexError, ValueError):
                self.status[i] = 0
            if self.status[i] != 200:
                self.errors.append(f"viewer {i}: {status.decode('latin-1')}")
            self.connected[i] = True
            buf = rest
        *blocks, buf = buf.split(b"\n\n")
        self._buffers[i] = buf
        for block in blocks:
            for line in block.split(b"\n"):
                if line.startswith(b"id: "):
                    self.received[i].setdefault(line[4:].decode(), now)

    def close(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=10)
        for s in self._socks:
            try:
                self._sel.unregister(s)
            except (KeyError, ValueError):
                pass
            s.close()
        self._sel.close()

    def __enter__(self) -> "ViewerPool":
        return self.open()

    def __exit__(self, *exc: Any) -> None:
        self.close()
