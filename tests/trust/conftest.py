"""Fixtures of the trust tests: the real app on a real instance folder, and real servers."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from companion.core.capture import DiceSource, ValuesDiceSource
from bench.live_server import LiveServer
from companion.app.services import build_services
from companion.app.settings import Settings
from companion.app.web import close_app, create_app

PIN = "4821"
PIN_HEADERS = {"X-Table-Pin": PIN}


def build_app(instance: Path, dice_source: DiceSource | None = None, *, simulate: bool = True, **overrides: Any):
    """The real app on ``instance`` (services, table and all) with ``dice_source`` as its camera."""
    settings = Settings.defaults().with_overrides(**{"table__pin": PIN, **overrides})
    services = build_services(instance, settings, simulate=simulate, dice_source=dice_source or ValuesDiceSource())
    app = create_app(instance, simulate=simulate, settings=settings, test_config={"TESTING": True}, services=services)
    return app


@pytest.fixture
def app(tmp_path):
    app = build_app(tmp_path / "instance")
    yield app
    close_app(app)


@pytest.fixture
def live_server(tmp_path):
    server = LiveServer(tmp_path / "live", pin=PIN)
    server.start()
    yield server
    server.stop()


def start_game(client, players=("Ann", "Ben", "Cy"), **extra):
    response = client.post("/api/games", json={"players": list(players), **extra}, headers=PIN_HEADERS)
    assert response.status_code == 201, response.get_json()
    return response.get_json()
