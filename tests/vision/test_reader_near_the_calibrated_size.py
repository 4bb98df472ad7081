"""Tray mode looks once more a tenth either side of the calibrated size where its only doubt is how sure a face is.

A die's face a tenth off the measured size (calibrated at another spot of the tray, dice of a slightly other make)
is cut a little loose or tight and read unsure; cut at its own size it reads sure. A die judged leaning, cut off or
missing at the calibrated size is never looked at again so: its doubt is not about the size (RULES.md R14).
"""

from __future__ import annotations

import numpy as np
import pytest

import vision.pipeline.reader as pipeline_reader
from companion.core.reading import OK, UNCERTAIN, DieReading, Reading
from vision.pipeline.normalise import normalise
from vision.simtable import render_calibrated_table


def _table(seed: int):
    rng = np.random.default_rng(seed)
    tops = [int(v) for v in rng.integers(1, 7, 3)]
    return render_calibrated_table(tops, rng, view="below")


@pytest.mark.parametrize("seed", [11, 17])
def test_a_table_unsure_at_the_calibrated_size_reads_sure_a_tenth_off_it(staged_reader, monkeypatch, seed):
    frame, placed, _ = _table(seed)
    reader = staged_reader.with_die_side(placed[0].side)
    reading = reader.read(frame)
    assert reading.status == OK and reading.extra["look"] == "near size"
    assert sorted(d.seen for d in reading.dice) == sorted(p.seen for p in placed)
    monkeypatch.setattr(pipeline_reader, "NEAR_SIZES", ())
    assert reader.read(frame).status == UNCERTAIN  # the calibrated size alone leaves it to the table


@pytest.mark.parametrize("code", ["leaning", "cut_off", "count"])
def test_a_doubt_other_than_confidence_is_never_looked_at_near_the_size(staged_reader, monkeypatch, code):
    frame, placed, _ = _table(11)
    reader = staged_reader.with_die_side(placed[0].side)
    doubted = Reading(UNCERTAIN, (DieReading(2, 5, 0.99, (0, 0, 60, 60)),), reasons=({"code": code}, {"code": "low_confidence"}))

    def no_look(*_: object, **__: object):
        raise AssertionError("the detector looked again")

    monkeypatch.setattr(pipeline_reader, "propose", no_look)
    assert reader._near_the_size(normalise(frame, reader.tray_region), doubted) is None
