"""Shared fixtures: the app on a tmp instance folder (flaskr style) and a real server process."""

from __future__ import annotations

import os
import socket
from pathlib import Path
from typing import Iterator

import pytest

from companion.core.capture import ValuesDiceSource
from bench.live_server import LiveServer
from companion.app.settings import Settings
from companion.app.web import create_app

# onnxruntime's usage telemetry off for the whole run, as vision/onnx_runtime.py keeps it off for the reader: a test
# that imports onnxruntime itself, before the reader does, would otherwise switch it on for the process.
os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")

PIN = "4321"
PIN_HEADERS = {"X-Table-Pin": PIN}
ROOT = Path(__file__).resolve().parent.parent


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """Keep the conftest files out of `--doctest-modules`' collection: they hold no doctests, and as modules several
    share the basename `conftest`, so collecting two test folders by name (`pytest tests/page tests/firmware`) failed
    on an "import file mismatch". Pytest still loads each one as the conftest of its folder."""
    return True if collection_path.name == "conftest.py" else None


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


def live(instance: Path) -> LiveServer:
    """A real ``serve --simulate`` process (``bench.live_server``) with the tests' PIN."""
    return LiveServer(instance, pin=PIN)


@pytest.fixture
def live_server(tmp_path: Path) -> Iterator[LiveServer]:
    server = live(tmp_path / "instance").start()
    yield server
    server.stop()
