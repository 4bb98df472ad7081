"""Shared fixtures: the app on a tmp instance folder (flaskr style) and a real server process."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
from pathlib import Path
from typing import Any, Iterator

import pytest

from companion.core.capture import ValuesDiceSource
from bench.live_server import LiveServer
from companion.app.settings import Settings
from companion.app.web import close_app, create_app

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
    close_app(app)


@pytest.fixture
def client(app):
    return app.test_client()


@pytest.fixture
def services(app):
    return app.extensions["elephants_bluff"]


@pytest.fixture
def small_card(tmp_path: Path) -> Iterator[Any]:
    """A small real file system (a 16 MB tmpfs) standing for the Pi's SD card: ``card.path`` is its folder,
    ``card.fill(leave)`` leaves only ``leave`` bytes free (to a page of 4 kB), ``card.empty()`` makes the room again.
    Needs root and mount: skipped where the machine forbids them."""
    folder = tmp_path / "card"
    folder.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=16m", "tmpfs", str(folder)], capture_output=True).returncode != 0:
        pytest.skip("this machine does not let the tests mount a small folder")

    class Card:
        path = folder

        @staticmethod
        def fill(leave: int = 0) -> None:
            free = shutil.disk_usage(folder).free
            with (folder / "filler").open("wb") as handle:  # the card's other files
                handle.write(bytes(max(0, free - leave)))
            assert shutil.disk_usage(folder).free <= leave + 4096

        @staticmethod
        def empty() -> None:
            (folder / "filler").unlink()

    try:
        yield Card
    finally:
        subprocess.run(["umount", "-l", str(folder)], capture_output=True)


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
