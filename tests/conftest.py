"""Shared fixtures: the app on a tmp instance folder (flaskr style) and a real server process."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Iterator

import pytest
import requests

from companion.dice import ValuesDiceSource
from companion.settings import Settings
from companion.web import create_app

PIN = "4321"
PIN_HEADERS = {"X-Table-Pin": PIN}
ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def settings() -> Settings:
    return Settings.defaults().with_overrides(table__pin=PIN)


@pytest.fixture
def app(tmp_path: Path, settings: Settings):
    """The app with a values-only dice source: here the API and rules are under test, not the reader."""
    app = create_app(tmp_path / "instance", simulate=True, settings=settings, test_config={"TESTING": True}, dice_source=ValuesDiceSource())
    yield app
    app.extensions["elephants_bluff"].close()


@pytest.fixture
def client(app):
    return app.test_client()


@pytest.fixture
def services(app):
    return app.extensions["elephants_bluff"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class LiveServer:
    """A real ``elephants-bluff serve`` process on a free loopback port."""

    def __init__(self, instance: Path, *extra: str, env: dict[str, str] | None = None) -> None:
        self.instance = instance
        self.extra = extra
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.env = {**os.environ, "ELEPHANTS_BLUFF_PIN": PIN, "PYTHONUNBUFFERED": "1", **(env or {})}
        self.proc: subprocess.Popen | None = None

    def start(self, timeout: float = 60.0) -> "LiveServer":
        cmd = [sys.executable, "-m", "companion.cli", "serve", "--simulate", "--instance", str(self.instance), "--port", str(self.port), *self.extra]
        self.log = open(self.instance.parent / f"server-{self.port}.log", "ab")
        self.proc = subprocess.Popen(cmd, stdout=self.log, stderr=subprocess.STDOUT, env=self.env, cwd=ROOT)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"the server exited with {self.proc.returncode}: {self.read_log()}")
            try:
                if requests.get(self.url + "/api/health", timeout=1).status_code == 200:
                    return self
            except requests.RequestException:
                time.sleep(0.1)
        raise RuntimeError("the server did not start: " + self.read_log())

    def read_log(self) -> str:
        return (self.instance.parent / f"server-{self.port}.log").read_text(errors="replace")

    def kill(self) -> None:
        """kill -9: no clean-up code runs in the server."""
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait(10)
        self.log.close()

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)
        if not self.log.closed:
            self.log.close()

    def post(self, path: str, json: object = None) -> requests.Response:
        return requests.post(self.url + path, json=json, headers=PIN_HEADERS, timeout=30)

    def get(self, path: str) -> requests.Response:
        return requests.get(self.url + path, timeout=30)


@pytest.fixture
def live_server(tmp_path: Path) -> Iterator[LiveServer]:
    server = LiveServer(tmp_path / "instance").start()
    yield server
    server.stop()
