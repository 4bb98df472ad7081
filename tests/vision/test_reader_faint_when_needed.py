"""The faint pass and the look for lost dice only when the clear pass has not already read the game's dice.

The faint pass finds pale dice on a pale tray, which the clear pass misses; it
costs about a third of a look. When the clear pass alone read the game's three
dice, sure, whole and of one size, with no lost die's marks beside them, the
two extra passes could only add a die the game does not have.
"""

from __future__ import annotations

import numpy as np
import pytest

import vision.finder
import vision.classic_reader
from vision.dataset import photo
from vision.finder import Candidate, Look, look
from vision.simtable import render_table


@pytest.fixture
def passes(monkeypatch):
    """How many times the faint pass and the look for lost dice by their marks ran."""
    count = {"faint": 0, "marks": 0}

    def spy(name, real):
        def counted(*args, **kwargs):
            count[name] += 1
            return real(*args, **kwargs)
        return counted

    monkeypatch.setattr(vision.finder, "faint_mask", spy("faint", vision.finder.faint_mask))
    monkeypatch.setattr(vision.classic_reader, "lost_dice", spy("marks", vision.classic_reader.lost_dice))
    return count


def _read_both_ways(reader, frame, monkeypatch):
    """The reading with the passes only when needed, and with them always."""
    when_needed = reader.read(frame)
    with monkeypatch.context() as m:
        m.setattr(vision.classic_reader.DiceReader, "_clear_pass_read_all", lambda self, frame, clear, kept: False)
        always = reader.read(frame)
    return when_needed, always


def test_three_dice_read_sure_by_the_clear_pass_skip_the_faint_pass_and_read_the_same(reader, passes, monkeypatch):
    for seed, seen in enumerate(([2, 4, 6], [1, 4, 6], [5, 5, 3])):
        frame, _ = render_table(seen, np.random.default_rng(seed + 5), view="below", touching=0.0, glare=0)
        passes.update(faint=0, marks=0)
        fast = reader.read(frame)
        assert passes == {"faint": 0, "marks": 1}, seed  # the marks looked for once, as a check; no faint pass
        assert fast.status == "ok" and sorted(d.seen for d in fast.dice) == sorted(seen)
        _, always = _read_both_ways(reader, frame, monkeypatch)
        assert (always.status, always.dice) == (fast.status, fast.dice)


def test_two_dice_on_the_tray_still_take_the_faint_pass(reader, passes, monkeypatch):
    frame, _ = render_table([3, 5], np.random.default_rng(2), view="below", touching=0.0, glare=0)
    when_needed, always = _read_both_ways(reader, frame, monkeypatch)
    assert passes["faint"] == 2  # once each way: two dice are not the game's three
    assert when_needed.status == "uncertain" and (when_needed.reason, when_needed.dice) == (always.reason, always.dice)


def test_white_dice_beside_three_dice_read_sure_are_still_found_by_their_marks(reader, real_dataset, monkeypatch):
    """A train photo: the clear pass reads a blue 1, a blue 1 and a red 6 sure, and loses two white dice
    on the pale tray; their pips in the clear mask call the faint pass, which finds them."""
    img, labels = photo(real_dataset, "IMG_20191209_100112")
    above = reader.with_view("above")
    clear = look(img, faint=False)
    kept = above._dice_among(img, clear.candidates)
    assert sorted(seen for _, seen, conf in kept if conf >= above.min_confidence) == [1, 1, 6]
    assert not above._clear_pass_read_all(img, clear, kept)
    when_needed, always = _read_both_ways(above, img, monkeypatch)
    assert (when_needed.reason, when_needed.dice) == (always.reason, always.dice)
    assert sorted(d.seen for d in when_needed.dice) == sorted(v for v, *_ in labels) == [1, 1, 4, 6, 6]


def _clear_look(*marks: tuple[int, int]) -> Look:
    """A 1280×960 frame's clear mask at one working pixel a frame pixel, with small square marks."""
    raw = np.zeros((960, 1280), np.uint8)
    for x, y in marks:
        raw[y:y + 5, x:x + 5] = 255
    return Look([], raw, 1.0)


def test_what_counts_as_the_clear_pass_reading_all_the_dice(reader):
    frame = np.zeros((960, 1280, 3), np.uint8)
    three = [(Candidate.square(x, 100, 64), seen, conf) for x, seen, conf in ((100, 2, 0.99), (300, 5, 0.98), (500, 1, 0.97))]
    assert reader._clear_pass_read_all(frame, _clear_look(), three)
    assert not reader._clear_pass_read_all(frame, _clear_look(), three[:2])  # fewer than the game's
    assert not reader._clear_pass_read_all(frame, _clear_look(), three + [(Candidate.square(700, 100, 64), 4, 0.99)])  # more
    assert not reader._clear_pass_read_all(frame, _clear_look(), three[:2] + [(Candidate.square(500, 100, 64), 1, 0.6)])  # one unsure
    assert not reader._clear_pass_read_all(frame, _clear_look(), three[:2] + [(Candidate.square(500, 100, 64, cut_off=True), 1, 0.99)])
    assert not reader._clear_pass_read_all(frame, _clear_look(), three[:2] + [(Candidate.square(500, 100, 64, misshapen=True), 1, 0.99)])
    assert not reader._clear_pass_read_all(frame, _clear_look(), three[:2] + [(Candidate.square(500, 100, 100), 3, 0.99)])  # odd size
    ones = [(Candidate.square(100 + 200 * i, 100, 64), 1, 0.99) for i in range(3)]
    assert not reader._clear_pass_read_all(frame, _clear_look(), ones)  # ones alone may be a big die's marks
    assert reader.with_die_side(64)._clear_pass_read_all(frame, _clear_look(), ones)  # ... not at a known die size
    small = [(Candidate.square(100 + 200 * i, 100, 20), 3, 0.99) for i in range(3)]
    assert not reader._clear_pass_read_all(frame, _clear_look(), small)  # small dice: the finer look reads them
    assert not reader._clear_pass_read_all(frame, _clear_look((700, 600), (730, 630)), three)  # a lost die's marks
    assert reader._clear_pass_read_all(frame, _clear_look((290, 90), (305, 105)), three)  # a die's own marks


def test_the_faint_pass_reads_only_its_own_new_blobs(reader, monkeypatch):
    """The clear pass's blobs were read before the faint pass ran: they are not read a second time."""
    read: list[Candidate] = []
    real = vision.classic_reader._crops

    def crops(frame, looks):
        if all(span == 1.0 for _, span in looks):  # one look each (``_dice_among``), not a second look's spans
            read.extend(c for c, _ in looks)
        return real(frame, looks)

    monkeypatch.setattr(vision.classic_reader, "_crops", crops)
    frame, _ = render_table([3, 5], np.random.default_rng(2), view="below", touching=0.0, glare=0)
    reader.read(frame)
    assert read and len(read) == len(set(read))
