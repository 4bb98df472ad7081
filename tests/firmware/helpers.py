"""Helpers for the table's tests: a fake clock, a test camera, a scripted reader, game set-ups.

Everything here is the real thing except the clock (so debounce and time-outs
are exact) and the camera's pixels and reader (the vision branch owns those;
these tests are about the loop around them).
"""

from __future__ import annotations

import threading
from typing import Any

import numpy as np
from gpiozero.pins.mock import MockFactory

from companion.app.referee import Referee
from companion.app.settings import Settings
from companion.core.protocols import FrameSource
from companion.core.reading import OK, DieReading, Reading


class FakeClock:
    """A monotonic clock that moves only when told (``sleep`` moves it too)."""

    def __init__(self, start: float = 1000.0) -> None:
        self.now = start

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds

    sleep = advance


def settings(**overrides: Any) -> Settings:
    return Settings.defaults().with_overrides(**overrides)


def press(factory: MockFactory, pin: int) -> None:
    """A finger on a pull-up button: the pin goes low, then high again."""
    factory.pin(pin).drive_low()
    factory.pin(pin).drive_high()


def start_deciding(referee: Referee, amount: int = 9, **kw: Any) -> str:
    """A new 3-player game where seat 0 has claimed ``amount`` and seat 1 decides."""
    game = referee.new_game(["Ann", "Ben", "Cy"], **kw)
    referee.claim(game["id"], amount)
    return game["id"]


def die_row(tops: list[int], xs: tuple[int, ...] = (40, 120, 200)) -> Reading:
    return Reading(OK, tuple(DieReading(7 - t, t, 0.99, (x, 60, 40, 40)) for t, x in zip(tops, xs, strict=True)), model_id="test")


class TrayCamera(FrameSource):
    """A camera over a still tray: a constant frame; ``fail`` makes it raise, ``gate`` makes it wait."""

    name = "test tray"

    def __init__(self, light: Any = None) -> None:
        self.frame = np.full((120, 160, 3), 100, np.uint8)
        self.fail: Exception | None = None
        self.gate: threading.Event | None = None
        self.grabbing = threading.Event()
        self.light_during_grabs: list[float] = []
        self.light = light
        self.grabs = 0

    def grab(self) -> np.ndarray:
        self.grabs += 1
        self.grabbing.set()
        if self.light is not None:
            self.light_during_grabs.append(float(self.light.value))
        if self.gate is not None:
            self.gate.wait(10)
        if self.fail is not None:
            raise self.fail
        return self.frame.copy()


class ShakenTray(TrayCamera):
    """The dice never settle: every frame differs from the last."""

    def grab(self) -> np.ndarray:
        super().grab()
        return np.full((120, 160, 3), (self.grabs * 37) % 256, np.uint8)


class ScriptedReader:
    """Stands in for the vision branch's DiceReader: returns the readings it is given, in turn."""

    model_id = "scripted"

    def __init__(self, *readings: Reading) -> None:
        self.readings = list(readings)
        self.frames_read = 0

    def read(self, frame: np.ndarray) -> Reading:
        self.frames_read += 1
        return self.readings.pop(0) if len(self.readings) > 1 else self.readings[0]

    def annotate(self, frame: np.ndarray, reading: Reading) -> np.ndarray:
        out = frame.copy()
        out[:4] = (0, 255, 0)
        return out
