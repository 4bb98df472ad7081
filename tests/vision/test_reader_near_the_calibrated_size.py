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


@pytest.mark.parametrize("seed", [11, 17])
def test_the_near_look_firms_up_the_faces_the_calibrated_size_leaned_to_and_never_changes_them(staged_reader, seed):
    """Told the faces it read unsure were others, the same table's sure near look is not taken: a die twice the
    calibrated size is cut inside its face at either size, and a tenth more can show one mark of a two."""
    frame, placed, _ = _table(seed)
    reader = staged_reader.with_die_side(placed[0].side)
    prepared = normalise(frame, reader.tray_region)
    faces = sorted(p.seen for p in placed)

    def unsure(seen):
        return Reading(UNCERTAIN, tuple(DieReading(s, 7 - s, 0.8, (0, 0, 60, 60)) for s in seen),
                       reasons=({"code": "low_confidence", "n": len(seen), "lowest": 0.8},))

    leaned = reader._near_the_size(prepared, unsure(faces))
    assert leaned is not None and leaned.status == OK and sorted(d.seen for d in leaned.dice) == faces
    other = [faces[0] % 6 + 1, *faces[1:]]
    assert reader._near_the_size(prepared, unsure(other)) is None
