"""An unsure die is read again, turned and mirrored, from its box and a smaller and a bigger crop (``DiceReader._relook``).

The classifier here is scripted (its answers are what is under test: which look
wins), the finder, crops and reader are the real ones on a simulated frame.
"""

from __future__ import annotations

import numpy as np
import pytest

from vision.classic_tunables import CLASSIC
from vision.classic_reader import DiceReader
from vision.simtable import render_table


def _row(value: int, conf: float, not_a_die: float = 0.0) -> list[float]:
    row = [not_a_die] + [(1.0 - conf - not_a_die) / 5] * 6
    row[value] = conf
    return row


class ScriptedLooks:
    """Answers the first look with ``first`` and the turned looks again with ``again``, and counts the looks."""

    model_id = "scripted"

    def __init__(self, first: list[list[float]], again: list[list[float]]):
        self.answers = [np.array(first, np.float32), np.array(again, np.float32)]
        self.calls: list[int] = []

    def probabilities(self, crops: np.ndarray) -> np.ndarray:
        assert not self.calls, "the first look is one plain look at every blob"
        return self._answer(crops)

    def probabilities_turned(self, crops: np.ndarray) -> np.ndarray:
        assert self.calls, "only a die the first look doubted is looked at again"
        return self._answer(crops)

    def _answer(self, crops: np.ndarray) -> np.ndarray:
        self.calls.append(len(crops))
        answer = self.answers[len(self.calls) - 1]
        assert len(answer) == len(crops), "the reader asked about a different number of crops than scripted"
        return answer


def _looks(*rows: list[float]) -> list[list[float]]:
    """One die's second looks: ``rows`` for the first spans, the rest a plain unsure five (which never wins)."""
    return list(rows) + [_row(5, 0.4)] * (len(CLASSIC.relook_spans) - len(rows))


@pytest.fixture(scope="module")
def three_dice_apart():
    frame, placed = render_table([3, 3, 3], np.random.default_rng(21), touching=0.0, glare=0, view="above")
    return frame


def _read(frame, first, again=()):
    looks = ScriptedLooks(first, list(again))
    reader = DiceReader(looks, camera_view="above", min_confidence=0.9, die_side_px=0)
    return reader.read(frame), looks


def test_a_sure_die_is_never_looked_at_again(three_dice_apart):
    reading, looks = _read(three_dice_apart, [_row(3, 0.99)] * 3)
    assert looks.calls == [3] and reading.status == "ok"


def test_an_unsure_die_a_second_look_reads_surely_is_read_sure(three_dice_apart):
    reading, looks = _read(three_dice_apart, [_row(5, 0.6), _row(3, 0.99), _row(3, 0.99)], _looks(_row(5, 0.5), _row(3, 0.96), _row(5, 0.7)))
    assert looks.calls == [3, len(CLASSIC.relook_spans)]
    assert reading.status == "ok" and [d.seen for d in reading.dice] == [3, 3, 3]
    assert sorted(d.confidence for d in reading.dice)[0] == pytest.approx(0.96)


def test_a_second_look_still_under_the_bar_leaves_the_die_unsure(three_dice_apart):
    """Surer than the first look but under 0.9: the table confirms (R14), shown at the surer reading."""
    reading, _ = _read(three_dice_apart, [_row(5, 0.6), _row(3, 0.99), _row(3, 0.99)], _looks(_row(3, 0.85), _row(3, 0.8), _row(5, 0.7)))
    assert reading.status == "uncertain" and "low confidence" in reading.reason
    assert sorted(d.confidence for d in reading.dice)[0] == pytest.approx(0.85)


def test_a_second_look_only_fairly_sure_leaves_the_die_unsure(three_dice_apart):
    """0.93 passes the reader's 0.9 but not the bar for a best of three looks (``relook_sure``): the table confirms (R14)."""
    reading, _ = _read(three_dice_apart, [_row(5, 0.6), _row(3, 0.99), _row(3, 0.99)], [_row(3, 0.93)] * len(CLASSIC.relook_spans))
    assert reading.status == "uncertain" and "low confidence" in reading.reason
    assert sorted(d.confidence for d in reading.dice)[0] == pytest.approx(0.6)


def test_only_the_unsure_dice_are_looked_at_again(three_dice_apart):
    reading, looks = _read(three_dice_apart, [_row(5, 0.6), _row(3, 0.99), _row(4, 0.7)], [_row(5, 0.95)] * len(CLASSIC.relook_spans) + [_row(4, 0.96)] * len(CLASSIC.relook_spans))
    assert looks.calls == [3, 2 * len(CLASSIC.relook_spans)]
    assert reading.status == "ok" and sorted(d.seen for d in reading.dice) == [3, 4, 5]


def test_a_second_look_that_sees_no_die_changes_nothing(three_dice_apart):
    reading, _ = _read(three_dice_apart, [_row(5, 0.6), _row(3, 0.99), _row(3, 0.99)], [_row(3, 0.3, not_a_die=0.6)] * len(CLASSIC.relook_spans))
    assert reading.status == "uncertain"
    assert sorted(d.seen for d in reading.dice) == [3, 3, 5]
