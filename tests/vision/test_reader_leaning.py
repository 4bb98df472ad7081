"""A die leaning on the cup (RULES.md R14): the referee must not trust it, and never reads it wrong.

The simulated table renders such a die (``render_table(leaning=...)``): from
below, its face foreshortened and, beside it, the darker side face it leans
towards.
"""

from __future__ import annotations

import pytest

from bench.reader import leaning_frames


def _leaning_frames():
    """Twenty seeded three-dice frames whose first die leans on the cup by 20-45 degrees, numbered."""
    return enumerate(leaning_frames(20, first_seed=1000))


def test_a_frame_with_a_leaning_die_is_never_read_ok_with_a_wrong_value(reader):
    """What a leaning die shows the camera is its bottom face, foreshortened; when the reader trusts the
    frame, it has read that face (whose opposite is the face most nearly up)."""
    for seed, (seen, frame, placed) in _leaning_frames():
        for r in (reader.read(frame), reader.with_die_side(placed[0].side).read(frame)):
            if r.status == "ok":
                assert sorted(d.seen for d in r.dice) == sorted(seen), seed


@pytest.mark.xfail(strict=True, reason="known limit: a die leaning 20-45 degrees on the cup is read ok in about 3 of 10 "
                                       "frames: its face alone, or with part of its side face, gives a box squarer than "
                                       "the 1.3 that flags a misshapen die, read sure; its seen face is read right each "
                                       "time, but R14 wants the table to confirm")
def test_a_frame_with_a_leaning_die_is_never_read_ok(reader):
    trusted = [seed for seed, (_, frame, _) in _leaning_frames() if reader.read(frame).status == "ok"]
    assert trusted == []


def test_the_bench_counts_the_leaning_frames_the_reader_trusted(reader):
    from bench.reader import synthetic_leaning

    report = synthetic_leaning(reader, 4)
    assert report["frames"] == 4 and report["readings"] == 8  # each frame with its die size unknown and known
    assert 0 <= report["ok_but_wrong"] <= report["trusted"] <= 8
    assert report["uncertain_share"] == pytest.approx(1 - report["trusted"] / 8, abs=1e-4)


def test_the_bench_counts_frames_from_above_leaning_and_flat_apart(staged_reader):
    """``from_above``: every other frame has a leaning die; the leaning ones count trusted readings, the flat ones
    readings ok and right; a reading ok and wrong is counted in its kind and in the sum."""
    from bench.reader import from_above

    report = from_above(staged_reader, 6)
    lean, flat = report["leaning"], report["flat"]
    assert lean["frames"] == flat["frames"] == 3
    assert 0 <= lean["ok_but_wrong"] <= lean["trusted"] <= 3
    assert flat["ok_and_right"] + flat["ok_but_wrong"] <= 3
    assert report["ok_but_wrong"] == lean["ok_but_wrong"] + flat["ok_but_wrong"]
    assert lean["uncertain_share"] == pytest.approx(1 - lean["trusted"] / 3, abs=1e-4)
    assert flat["ok_share"] == pytest.approx(flat["ok_and_right"] / 3, abs=1e-4)


def test_the_staged_reader_doubts_most_leaning_dice_by_their_outline_and_never_reads_one_wrong(staged_reader):
    """The learned detector proposes a square for a leaning die too; its outline (the tilted face and a side face,
    ``vision.pipeline.shape``) is longer than a flat die's. On these 20 frames, read with the die size unknown and
    known, the staged reader trusts 9 of 40 readings and doubts 26 as leaning (without the outline: 26 trusted,
    1 doubted as leaning), every trusted one read right; on the bench's 100 frames it trusts 40 of 200. (The
    outline alone: the shipped reader's leaning cue is left out here, and tested below.)"""
    outline_only = type(staged_reader)(staged_reader.classifier, staged_reader.proposer, **staged_reader.options())
    trusted = leaning = 0
    for seed, (seen, frame, placed) in _leaning_frames():
        for r in (outline_only.read(frame), outline_only.with_die_side(placed[0].side).read(frame)):
            leaning += any(x.get("code") == "leaning" for x in r.reasons)
            if r.status == "ok":
                trusted += 1
                assert sorted(d.seen for d in r.dice) == sorted(seen), seed
    assert trusted <= 12 and leaning >= 24, f"{trusted} of 40 readings with a leaning die trusted, {leaning} doubted as leaning"


def test_dice_lying_flat_apart_have_square_outlines(staged_reader):
    from vision.simtable import render_table
    import numpy as np

    flagged = 0
    for seed in range(10):
        frame, _ = render_table([2, 4, 6], np.random.default_rng(300 + seed), touching=0.0, glare=0)
        r = staged_reader.read(frame)
        flagged += sum("leaning" in d.doubts for d in r.dice)
    assert flagged <= 1, f"{flagged} of 30 flat dice taken for leaning"


def test_flat_dice_as_grey_as_the_tray_are_not_taken_for_leaning(staged_reader):
    """Teal dice on the grey tray show no outline of their own, only their marks (``shape.MARK_AREA``): lying flat,
    they are not doubted as leaning (1 of 60 here; 32 before, by their marks' shapes), and one of them leaning still
    makes the reading uncertain."""
    from vision.simtable import LOOKS, render_table
    import numpy as np

    teal = LOOKS["teal-small-elephants"]
    flagged = 0
    for seed in range(20):
        frame, _ = render_table([2, 4, 6], np.random.default_rng(700 + seed), touching=0.0, glare=0, look=teal)
        flagged += sum("leaning" in d.doubts for d in staged_reader.read(frame).dice)
    assert flagged <= 3, f"{flagged} of 60 flat teal dice taken for leaning"
    trusted = []
    for seed in range(10):
        frame, placed = render_table([2, 4, 6], np.random.default_rng(720 + seed), touching=0.0, glare=0, look=teal,
                                     leaning=35.0)
        r = staged_reader.read(frame)
        if r.status == "ok":
            trusted.append(seed)
    assert len(trusted) <= 1, f"frames with a leaning teal die trusted: {trusted}"


def test_with_the_leaning_cue_no_frame_with_a_leaning_die_is_trusted_here(staged_reader):
    """The shipped reader adds the leaning cue (``vision.leaning_cue``) to the outline: on these 20 frames, read with
    the die size unknown and known, none of the 40 readings is trusted (9 by the outline alone)."""
    assert staged_reader.leaning_cue is not None
    trusted = [seed for seed, (_, frame, placed) in _leaning_frames()
               for r in (staged_reader.read(frame), staged_reader.with_die_side(placed[0].side).read(frame)) if r.status == "ok"]
    assert trusted == []
