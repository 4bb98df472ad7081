"""The crop the classifier sees (``vision.classifier.cut_crop``), the same however big the die is in the frame.

A die many times the crop's size is halved with a Gaussian pyramid before the
turn-and-cut (a wide blur on the full-size patch cost a millisecond a die);
its crop must still be the crop of the same die photographed smaller.
"""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from vision.classifier import CROP, cut_crop
from vision.simtable import render_table


@pytest.mark.parametrize("seed", range(3))
def test_a_big_dies_crop_matches_the_crop_of_the_same_die_four_times_smaller(seed):
    frame, placed = render_table([5], np.random.default_rng(seed), die_side=300, touching=0.0, glare=0)
    d = placed[0]
    small = cv2.resize(frame, (320, 240), interpolation=cv2.INTER_AREA)  # small pixel i covers big pixels 4i..4i+3
    big_crop = cut_crop(frame, d.cx, d.cy, d.side, d.angle).astype(float)
    small_crop = cut_crop(small, (d.cx - 1.5) / 4, (d.cy - 1.5) / 4, d.side / 4, d.angle).astype(float)
    assert big_crop.shape == (CROP, CROP, 3)
    assert np.abs(big_crop - small_crop).mean() < 2.5
    moved = cut_crop(frame, d.cx + 0.04 * d.side, d.cy, d.side, d.angle).astype(float)
    assert np.abs(big_crop - moved).mean() > 4 * np.abs(big_crop - small_crop).mean()  # the comparison can tell 4 % of a die


def test_a_die_at_the_frames_corner_is_cut_with_its_edge_repeated_not_refused():
    frame, placed = render_table([3], np.random.default_rng(7), die_side=300, touching=0.0, glare=0)
    crop = cut_crop(frame, 2.0, 2.0, 300.0, 30.0)
    assert crop.shape == (CROP, CROP, 3) and crop.dtype == np.uint8
