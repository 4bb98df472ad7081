"""Things that lie on a games table and are not dice (``models.training.data.table_thing_crops``): round things,
printed tiles and card corners, toy bricks' studded tops, drawn for the number-dice cue's fit as things to doubt."""

from __future__ import annotations

import numpy as np
import pytest

from models.training.data import TABLE_THINGS, _printed_thing, _studded_thing, table_thing_crops
from vision.classifier import CROP, NOT_A_DIE


def test_table_things_are_crops_of_the_classifiers_size_labelled_not_a_die_and_seeded():
    x, y = table_thing_crops(16, np.random.default_rng(4))
    again, _ = table_thing_crops(16, np.random.default_rng(4))
    assert x.shape == (16, CROP, CROP, 3) and x.dtype == np.uint8 and np.array_equal(x, again)
    assert y.tolist() == [NOT_A_DIE] * 16


@pytest.mark.parametrize("draw", [_printed_thing, _studded_thing])
def test_a_printed_or_studded_thing_covers_the_middle_of_its_ground(draw):
    """Drawn on a flat ground around its middle, each thing covers a good part of a die's square there."""
    rng = np.random.default_rng(3)
    for _ in range(10):
        frame = np.full((150, 150, 3), 128.0, np.float32)
        draw(frame, 75.0, 50.0, rng)
        middle = frame[50:100, 50:100]
        assert (np.abs(middle - 128.0).max(axis=2) > 10).mean() > 0.3


def test_the_kinds_share_the_draw_as_table_things_says():
    assert set(TABLE_THINGS) == {"round", "printed", "studded"} and abs(sum(TABLE_THINGS.values()) - 1.0) < 1e-9
