"""Tray mode (die size and empty tray known) reads the detector's usual look first and skips what the tray shows as it was.

With dice of about 60 px in a 1280-px frame, the look at the calibrated size enlarges the frame to 512 px for the
detector, about 2.7 times the work of its usual 256 px; the usual look is kept when it reads sure, and the
look at the die's size follows only where it does not. Proposals where the frame looks just as the empty tray
did are dropped by ``reconcile`` whatever the classifier says, so they are not read at all (docs/READING.md).
"""

from __future__ import annotations

import numpy as np

from vision.simtable import render_calibrated_table


def _calibrated(seed: int, glare: int):
    rng = np.random.default_rng(seed)
    seen = [int(v) for v in rng.integers(1, 7, 3)]
    frame, placed, empty = render_calibrated_table(seen, rng, view="below", glare=glare)
    return seen, frame, placed, empty


def _hints(monkeypatch, detector) -> list:
    """The die sizes the detector is asked to look for, one per call to ``propose`` (None: its usual look)."""
    asked = []
    real = type(detector).propose

    def recording(self, grey, die_side_px=None):
        asked.append(die_side_px)
        return real(self, grey, die_side_px=die_side_px)

    monkeypatch.setattr(type(detector), "propose", recording)
    return asked


def _read_in_tray_mode(staged_reader, monkeypatch, seed: int, glare: int):
    """A calibrated frame read in the whole tray mode: the faces it shows, its dice, the reading, and the die sizes
    the detector was asked for."""
    seen, frame, placed, empty = _calibrated(seed, glare)
    asked = _hints(monkeypatch, staged_reader.proposer.detector)
    return seen, placed, staged_reader.with_die_side(placed[0].side).with_empty_tray(empty).read(frame), asked


def test_in_tray_mode_a_frame_the_usual_look_reads_sure_is_read_without_the_look_at_the_die_size(staged_reader, monkeypatch):
    seen, placed, reading, asked = _read_in_tray_mode(staged_reader, monkeypatch, 3, glare=0)
    assert reading.status == "ok" and reading.extra["look"] == "first"
    assert sorted(d.seen for d in reading.dice) == sorted(seen)
    assert asked == [None]  # one look, at the detector's usual scale
    assert all(d.box[2] == round(placed[0].side) for d in reading.dice)  # cut at the calibrated size all the same


def test_in_tray_mode_a_frame_the_usual_look_leaves_unsure_is_read_at_the_die_size(staged_reader, monkeypatch):
    seen, _, reading, asked = _read_in_tray_mode(staged_reader, monkeypatch, 53, glare=2)
    assert reading.status == "ok" and reading.extra["look"] == "sized"
    assert sorted(d.seen for d in reading.dice) == sorted(seen)
    assert asked[0] is None and asked[1] is not None


def test_with_the_die_size_alone_the_look_at_that_size_comes_first(staged_reader, monkeypatch):
    """Without the empty tray a die's outline is judged against its square alone, and the look at the die's size
    doubts a leaning die the usual look can miss: it stays the first look there."""
    _, frame, placed, _ = _calibrated(3, glare=0)
    asked = _hints(monkeypatch, staged_reader.proposer.detector)
    reading = staged_reader.with_die_side(placed[0].side).read(frame)
    assert reading.extra["look"] == "first" and asked[0] is not None


def test_in_tray_mode_proposals_where_the_tray_looks_as_it_did_are_not_read(staged_reader, monkeypatch):
    """The detector proposes three glare patches besides the three dice on this frame; the empty tray shows each
    patch as it was, so only the three dice are cut and classified, and the reading is the same."""
    rng = np.random.default_rng(6)
    tables = [render_calibrated_table([2, 4, 6], rng, view="below") for _ in range(8)]
    frame, placed, empty = tables[7]
    reader = staged_reader.with_die_side(placed[0].side).with_empty_tray(empty)
    batches = []
    kind = type(staged_reader.classifier)
    for read in ("probabilities", "probabilities_and_embedding"):  # the first look reads with the embedding
        real = getattr(kind, read)
        monkeypatch.setattr(kind, read, lambda self, crops, real=real: (batches.append(len(crops)), real(self, crops))[1])
    reading = reader.read(frame)
    assert reading.status == "ok" and sorted(d.seen for d in reading.dice) == [2, 4, 6]
    assert reading.extra["candidates"] == 6 and reading.extra["rejected"] == 3
    assert batches == [6]  # the three dice, each cut at its size and a little wider: nothing else was read


def test_in_tray_mode_a_reading_left_unsure_by_every_look_asks_the_detector_for_its_usual_look_once(staged_reader, monkeypatch):
    """A die leaning on the cup keeps the reading unsure through the sized and tray looks, down to the unprompted
    look, which starts from the detector's usual look: the one tray mode took first serves it again."""
    from bench.reader import calibrated_leaning_frames

    _, frame, placed, empty = next(calibrated_leaning_frames(1))
    asked = _hints(monkeypatch, staged_reader.proposer.detector)
    reading = staged_reader.with_die_side(placed[0].side).with_empty_tray(empty).read(frame)
    assert reading.status == "uncertain"
    assert asked.count(None) == 1 and len(asked) >= 2  # the usual look once, the look at the die's size after it
