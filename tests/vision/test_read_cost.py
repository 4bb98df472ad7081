"""Where a read's time goes (``bench.read_cost``): the crops a read cuts are counted, the same on any host, and held
to a budget; metering a reader changes none of its readings and gives its sessions back."""

from __future__ import annotations

import numpy as np
import pytest

from bench.read_cost import meter, read_cost
from bench.reading import speed_frames, tray_mode_reads

#: The face model's crops in the median read of the speed rows' frames (knowing nothing / in tray mode). A crop costs
#: about 0.25 ms on one core here, a fortieth of the 10-ms read: a change that cuts more must be timed (``python -m
#: bench --full --only reading``), its cost written in docs/reading-log.md, and the budget raised here with it.
#: Counted when the budget was set (2026-12-04): the eight plain reads cut 12, 12, 12, 20, 20, 22, 26 and 136, a
#: median of 20; the tray-mode reads 12 but one (20). The plain budget leaves 2 crops over it: another CPU's last
#: float may tip one die's turned check (8 crops) in one frame, which moves that median by 1, while a cut more a die
#: (3 crops a read) still moves it by 3. Tray mode's seven equal reads hold against such a tip as they are.
CROPS_BUDGET = 22
CROPS_BUDGET_TRAY_MODE = 12


def _plain(reader, frames):
    return [(reader, frame) for frame in frames]


def test_the_median_read_of_the_speed_frames_cuts_no_more_face_model_crops_than_its_budget(staged_reader):
    plain = read_cost(staged_reader, _plain(staged_reader, speed_frames()), repeats=1)
    tray = read_cost(staged_reader, tray_mode_reads(staged_reader), repeats=1)
    assert plain["face_model_crops_median"] <= CROPS_BUDGET, plain
    assert tray["face_model_crops_median"] <= CROPS_BUDGET_TRAY_MODE, tray


def test_a_read_is_counted_alike_every_time_it_is_read(staged_reader):
    frame = speed_frames()[0]
    counts = []
    for _ in range(2):
        with meter(staged_reader) as meters:
            staged_reader.read(frame)
            counts.append({name: (m.runs, m.rows) for name, m in meters.items()})
    assert counts[0] == counts[1]
    assert counts[0]["face model"][1] >= 3 and counts[0]["detector"][0] >= 1  # three dice, one detector look at least


def test_every_network_run_is_counted_with_the_rows_it_read(staged_reader):
    with meter(staged_reader) as meters:
        staged_reader.classifier.probabilities(np.zeros((5, 40, 40, 3), np.uint8))
        staged_reader.classifier.probabilities(np.zeros((2, 40, 40, 3), np.uint8))
    assert (meters["face model"].runs, meters["face model"].rows) == (2, 7)
    assert meters["face model"].seconds > 0
    assert (meters["detector"].runs, meters["second opinion"].runs) == (0, 0)


def test_metering_leaves_the_readings_as_they_were(staged_reader):
    frames = speed_frames()[:3]
    before = [staged_reader.read(f) for f in frames]
    with meter(staged_reader):
        metered = [staged_reader.read(f) for f in frames]
    assert metered == before
    assert [[d.doubts for d in r.dice] for r in metered] == [[d.doubts for d in r.dice] for r in before]


def test_the_sessions_are_given_back_even_when_a_read_fails(staged_reader):
    sessions = (staged_reader.classifier._session, staged_reader.second_opinion.classifier._session,
                staged_reader.proposer.detector.session)
    with pytest.raises(RuntimeError):
        with meter(staged_reader):
            assert staged_reader.classifier._session is not sessions[0]
            raise RuntimeError("a read that failed")
    assert (staged_reader.classifier._session, staged_reader.second_opinion.classifier._session,
            staged_reader.proposer.detector.session) == sessions


def test_a_reader_without_a_second_opinion_is_metered_without_one(staged_reader):
    alone = staged_reader._but(second_opinion=None)
    with meter(alone) as meters:
        alone.read(speed_frames()[0])
    assert set(meters) == {"face model", "detector"}


def test_the_report_gives_each_models_share_and_the_reads_median(staged_reader):
    out = read_cost(staged_reader, _plain(staged_reader, speed_frames()[:2]), repeats=2)
    assert out["reads"] == 4 and out["read_median_ms"] > 0
    assert set(out["models"]) == {"face model", "second opinion", "detector"}
    assert out["models"]["face model"]["rows_a_read"] >= out["face_model_crops_median"] / 2
    assert 0 < out["models_share_of_read"] <= 1  # the models' runs are a part of the reads they were timed in
