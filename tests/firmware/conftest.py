"""Fixtures for the table's tests: mock pins, a fake clock, a real referee on SQLite."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from gpiozero import Device
from gpiozero.pins.mock import MockFactory, MockPWMPin

from companion.core.capture import ValuesDiceSource
from companion.app.referee import Referee
from companion.app.store import GameStore
from firmware.table import build_table
from tests.firmware.helpers import FakeClock, settings


@pytest.fixture
def pin_factory():
    """``Device.pin_factory`` is a PWM-capable ``MockFactory`` for the test, reset after."""
    factory = MockFactory(pin_class=MockPWMPin)
    previous = Device.pin_factory
    Device.pin_factory = factory
    yield factory
    factory.reset()
    factory.close()
    Device.pin_factory = previous


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def dice() -> ValuesDiceSource:
    return ValuesDiceSource()


@pytest.fixture
def referee(tmp_path: Path, dice: ValuesDiceSource):
    ref = Referee(GameStore(tmp_path / "game-log.sqlite3"), dice, frames_dir=tmp_path / "frames")
    yield ref
    ref.store.close()


@pytest.fixture
def make_table(pin_factory, clock):
    """Builds tables through ``build_table`` with the mock pins and the fake clock; closes them after."""
    made = []

    def make(referee: Any, *, capture: Any = None, **overrides: Any):
        table = build_table(settings(**overrides), referee, simulate=True, capture=capture, pin_factory=pin_factory, environ={}, clock=clock, sleep=clock.sleep)
        made.append(table)
        return table

    yield make
    for table in made:
        table.close()
