"""Unsure dice whose box is far from the dice's size are read again in squares of that size.

A box much smaller than a die holds only a pale die's marks; a box much bigger
holds a die and the glare or the neighbour glued to it. Either reads unsure or
wrong; a square of the dice's size over the whole die reads it right.
"""

from __future__ import annotations

from dataclasses import replace

import cv2
import numpy as np
import pytest

import vision.classic_reader
from bench.reader import _match
from vision.classic_tunables import CLASSIC
from vision.dataset import photo
from vision.finder import Candidate, look
from vision.classic_reader import _squares_over
from vision.simtable import render_table


def _corners(c: Candidate) -> np.ndarray:
    return cv2.boxPoints(((c.cx, c.cy), (c.w, c.h), c.angle))


def _holds(outer: Candidate, points: np.ndarray, slack: float = 0.01) -> bool:
    polygon = _corners(outer).reshape(-1, 1, 2)
    return all(cv2.pointPolygonTest(polygon, (float(x), float(y)), True) >= -slack for x, y in points)


def test_squares_over_a_small_box_are_of_the_dice_size_and_each_holds_all_of_the_box():
    small = Candidate(200.0, 150.0, 12.0, 10.0, 30.0)
    squares = _squares_over(small, 30.0)
    assert len(squares) == 9  # the centre, four sides, four corners
    assert all((s.w, s.h, s.angle) == (30.0, 30.0, 30.0) for s in squares)
    assert all(_holds(s, _corners(small)) for s in squares)
    assert len({(round(s.cx, 3), round(s.cy, 3)) for s in squares}) == 9


def test_squares_over_a_long_box_lie_inside_it_and_move_only_along_its_length():
    long = Candidate(100.0, 100.0, 62.0, 31.0, -20.0)  # two dice side by side, or a die and its glare
    squares = _squares_over(long, 30.0)
    assert len(squares) == 3  # across, the box is already about a die wide
    assert all(_holds(long, _corners(s), slack=0.6) for s in squares)
    assert max(np.hypot(s.cx - long.cx, s.cy - long.cy) for s in squares) == pytest.approx(16.0)


def test_squares_over_a_box_keep_its_flags():
    leaning = Candidate(50.0, 50.0, 60.0, 40.0, 0.0, cut_off=True, misshapen=True)
    assert all(s.misshapen and s.cut_off and not s.guessed for s in _squares_over(leaning, 30.0))


@pytest.fixture
def glare_glued_frame():
    """A synthetic tray frame whose third die (a six) is found glued to a patch of glare: a box of
    135 × 127 pixels beside dice 96 wide, read less sure than ``CLASSIC.at_die_size_keep`` and doubted as leaning."""
    rng = np.random.default_rng(4)
    seen = [int(v) for v in rng.integers(1, 7, 3)]
    frame, placed = render_table(seen, np.random.default_rng(4), view="below")
    return frame, seen, placed


def test_a_die_glued_to_glare_reads_right_and_ok_in_a_square_of_the_dice_size(reader, glare_glued_frame, monkeypatch):
    frame, seen, placed = glare_glued_frame
    with monkeypatch.context() as m:
        m.setattr(vision.classic_reader.DiceReader, "_at_die_size", lambda self, frame, kept: kept)  # no squares of the dice's size
        before = reader.read(frame)
    assert before.status == "uncertain" and "leaning" in {r["code"] for r in before.reasons}
    after = reader.read(frame)
    assert after.status == "ok", after.reason
    labels = [(v, d.cx, d.cy, d.side, d.side) for v, d in zip(seen, placed)]
    match = _match([d.box for d in after.dice], labels)
    assert [after.dice[j].seen for j in match] == seen
    glued, die = after.dice[match[2]], placed[2]
    extent = die.side * (abs(np.cos(np.radians(die.angle))) + abs(np.sin(np.radians(die.angle))))  # its upright box
    assert glued.confidence >= CLASSIC.relook_sure and abs(glued.box[2] / extent - 1) < 0.15


def test_a_square_replaces_the_box_only_when_read_very_sure(reader, glare_glued_frame, monkeypatch):
    """The best of nine squares is a luckier draw than one look: like ``_relook``, it must reach
    ``relook_sure`` (the glued six's best square reads under 0.99999)."""
    frame, _, _ = glare_glued_frame
    monkeypatch.setattr(vision.classic_reader, "CLASSIC", replace(CLASSIC, relook_sure=0.99999))
    r = reader.read(frame)
    assert r.status == "uncertain" and "leaning" in {c["code"] for c in r.reasons}
    assert max(d.box[2] for d in r.dice) > 120  # the glued box was kept


def test_with_the_die_size_known_the_square_takes_the_tables_size(reader, glare_glued_frame):
    frame, seen, placed = glare_glued_frame
    r = reader.with_die_side(placed[0].side).read(frame)
    assert r.status == "ok" and sorted(d.seen for d in r.dice) == sorted(seen)


def test_a_box_that_was_not_square_keeps_its_leaning_doubt_when_its_square_reads_sure(reader, glare_glued_frame):
    """A die leaning on the cup (RULES.md R14) shows a box that is not square: a square of the dice's
    size may read one of its faces sure, but the referee must still ask the table."""
    frame, _, _ = glare_glued_frame
    kept = reader._dice_among(frame, look(frame).candidates)
    i = max(range(len(kept)), key=lambda k: kept[k][0].side)
    kept[i] = (replace(kept[i][0], misshapen=True), kept[i][1], kept[i][2])  # the glued box, as if not square
    after = reader._at_die_size(frame, kept)
    square, value, confidence = after[i]
    others = [c.side for j, (c, _, _) in enumerate(kept) if j != i]
    assert square.side == pytest.approx(np.median(others), rel=0.01) and confidence >= CLASSIC.relook_sure
    assert square.misshapen and "leaning" in reader._doubts(square, confidence, odd_size=False)
    assert [k for j, k in enumerate(after) if j != i] == [k for j, k in enumerate(kept) if j != i]


@pytest.fixture
def turned_looks(reader, monkeypatch):
    """How many crops the classifier read in their eight turns."""
    count = [0]
    real = reader.classifier.probabilities_turned

    def counted(crops):
        count[0] += len(crops)
        return real(crops)

    monkeypatch.setattr(reader.classifier, "probabilities_turned", counted)
    return count


def test_sure_dice_dice_of_the_right_size_and_guessed_dice_are_not_looked_at_again(reader, glare_glued_frame, turned_looks):
    frame, _, _ = glare_glued_frame
    dice = [(Candidate.square(480.0, 279.0, 96.0), 5, 0.99), (Candidate(572.5, 373.0, 97.0, 98.0, 0.0), 6, 0.99)]
    cases = {
        "a small die read very sure": (Candidate.square(199.5, 173.5, 40.0), 6, 0.995),
        "an unsure die of the dice's size": (Candidate.square(199.5, 173.5, 100.0), 6, 0.6),
        "a guessed die": (Candidate(199.5, 173.5, 135.0, 127.0, 0.0, guessed=True), 6, 0.6),
    }
    for why, die in cases.items():
        kept = [die] + dice
        assert reader._at_die_size(frame, kept) == kept, why
    assert turned_looks[0] == 0


def test_only_the_two_surest_squares_at_one_look_are_read_in_their_eight_turns(reader, glare_glued_frame, turned_looks):
    frame, _, _ = glare_glued_frame
    kept = reader._dice_among(frame, look(frame).candidates)
    after = reader._at_die_size(frame, kept)
    assert turned_looks[0] == CLASSIC.at_die_size_turned == 2  # of the nine squares over the one glued box
    assert sum(a != k for a, k in zip(after, kept)) == 1


def test_a_square_that_would_overlap_another_die_is_never_taken(reader, glare_glued_frame, turned_looks):
    frame, _, _ = glare_glued_frame
    neighbour = (Candidate.square(480.0, 279.0, 96.0), 5, 0.99)
    marks_of_the_neighbour = (Candidate.square(480.0, 279.0, 30.0), 2, 0.6)  # every square over it covers the die
    kept = [marks_of_the_neighbour, neighbour, (Candidate(572.5, 373.0, 97.0, 98.0, 0.0), 6, 0.99)]
    assert reader._at_die_size(frame, kept) == kept
    assert turned_looks[0] == 0


def test_without_a_sure_die_or_the_tables_size_nothing_is_looked_at_again(reader, glare_glued_frame, turned_looks):
    frame, _, _ = glare_glued_frame
    kept = [(Candidate.square(199.5, 173.5, 30.0), 6, 0.6), (Candidate.square(480.0, 279.0, 96.0), 5, 0.7)]
    assert reader._at_die_size(frame, kept) == kept
    assert turned_looks[0] == 0


def test_a_white_die_whose_box_holds_only_its_pips_is_read_whole(reader, real_dataset, monkeypatch):
    """A train photo: a white six on the pale tray, found as a 19-pixel box around two of its pips
    (read a three, unsure) beside dice about 33 pixels wide."""
    img, labels = photo(real_dataset, "IMG_20191208_112434")
    above = reader.with_view("above")
    six = [lab for lab in labels if abs(lab[1] - 487) < 10 and abs(lab[2] - 128) < 10]
    assert [v for v, *_ in six] == [6]

    def reading_of_the_six():
        r = above.read(img)
        j = _match([d.box for d in r.dice], six)[0]
        return r.dice[j]

    with monkeypatch.context() as m:
        m.setattr(vision.classic_reader.DiceReader, "_at_die_size", lambda self, frame, kept: kept)
        before = reading_of_the_six()
    assert before.box[2] < 22 and (before.top != 6 or before.confidence < above.min_confidence)
    after = reading_of_the_six()
    assert after.top == 6 and after.confidence >= CLASSIC.relook_sure and after.box[2] >= 28
