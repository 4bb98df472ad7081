"""``train --round-things N``: round things that are not dice (shiny balls, glass beads, marbles, flat discs), drawn
for stage 2 and labelled "not a die" (``models.training.data.round_thing_crops``)."""

from __future__ import annotations

import numpy as np

from models.training.data import round_thing_crops
from vision.classifier import CROP, NOT_A_DIE


def test_round_things_are_crops_of_the_classifiers_size_labelled_not_a_die_and_seeded():
    x, y = round_thing_crops(12, np.random.default_rng(4))
    again, _ = round_thing_crops(12, np.random.default_rng(4))
    assert x.shape == (12, CROP, CROP, 3) and x.dtype == np.uint8 and np.array_equal(x, again)
    assert y.tolist() == [NOT_A_DIE] * 12


def test_a_shiny_ball_shows_its_lamps_highlight_as_the_bead_the_reader_misread_did():
    """Most crops are lit balls: somewhere brighter than the rest of the thing by far (the shine), not a flat patch."""
    x, _ = round_thing_crops(40, np.random.default_rng(9))
    grey = x.mean(axis=3)
    centre = grey[:, CROP // 4:3 * CROP // 4, CROP // 4:3 * CROP // 4]
    shining = (centre.max(axis=(1, 2)) - np.median(centre, axis=(1, 2))) > 60
    assert 0.3 < shining.mean() < 0.95  # balls with a shine, and flat discs without
