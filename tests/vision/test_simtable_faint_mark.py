"""A die with one faint mark (``DieStyle.faint_mark``), drawn for training only.

Off, a face is drawn as before, pixel for pixel and with the same random numbers (``test_simtable_looks`` holds
the digests of the simulated table); on, exactly one mark of a face of two or more is dimmer than the others, and
still a mark: lighter than the body, by the share of contrast it keeps.
"""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from models.training.data import FAINT_MARK_RANGE, faint_mark_style, synth_face_crops
from vision.simtable import LUMA, DieStyle, face_texture

DARK_PIPS = DieStyle((30, 30, 30), (240, 240, 240), "pip", 1.2)


def _mark_brightness(texture: np.ndarray, style: DieStyle) -> list[float]:
    """Each mark's brightest pixel, marks found as blobs clearly lighter than the body."""
    luma = texture @ LUMA
    body = float(np.float32(style.face) @ LUMA)
    mask = (luma > body + 40).astype(np.uint8)
    mask[:14], mask[-14:], mask[:, :14], mask[:, -14:] = 0, 0, 0, 0
    n, labels, stats, _ = cv2.connectedComponentsWithStats(mask)
    return [float(luma[labels == i].max()) for i in range(1, n) if stats[i, cv2.CC_STAT_AREA] >= 12]


def test_a_face_without_a_faint_mark_draws_as_before_with_the_same_random_numbers():
    a, b = np.random.default_rng(5), np.random.default_rng(5)
    whole = face_texture(4, 96, DARK_PIPS, a)
    again = face_texture(4, 96, DieStyle((30, 30, 30), (240, 240, 240), "pip", 1.2, faint_mark=0.0), b)
    assert np.array_equal(whole, again) and a.bit_generator.state == b.bit_generator.state


@pytest.mark.parametrize("value", range(2, 7))
def test_one_mark_of_a_face_is_faint_and_still_a_mark(value):
    faint = DieStyle((30, 30, 30), (240, 240, 240), "pip", 1.0, faint_mark=0.6)
    marks = _mark_brightness(face_texture(value, 128, faint, np.random.default_rng(value)), faint)
    assert len(marks) == value
    whole_contrast = (240 - 30)
    dim = sorted(marks)
    assert dim[0] - 30 < 0.55 * whole_contrast  # one mark keeps about 40 % of its contrast (the edge shading darkens it more)
    assert dim[1] - 30 > 0.7 * whole_contrast  # every other mark is whole


def test_a_one_has_no_other_mark_to_be_faint_beside():
    faint = DieStyle((30, 30, 30), (240, 240, 240), "pip", 1.2, faint_mark=0.6)
    rng = np.random.default_rng(1)
    face_texture(1, 96, faint, rng)
    plain_rng = np.random.default_rng(1)
    face_texture(1, 96, DARK_PIPS, plain_rng)
    assert rng.bit_generator.state == plain_rng.bit_generator.state  # no mark drawn to be faint


def test_the_faint_mark_styles_keep_a_share_of_contrast_in_range_half_of_them_dark():
    rng = np.random.default_rng(11)
    styles = [faint_mark_style(rng) for _ in range(400)]
    assert all(FAINT_MARK_RANGE[0] <= s.faint_mark <= FAINT_MARK_RANGE[1] for s in styles)
    dark = sum(1 for s in styles if np.float32(s.face) @ LUMA < 128)
    assert 150 < dark < 320


def test_synthetic_crops_with_a_faint_mark_are_labelled_with_every_mark_and_seeded():
    x, y = synth_face_crops(30, np.random.default_rng(3), faint_mark_style)
    again, labels = synth_face_crops(30, np.random.default_rng(3), faint_mark_style)
    assert x.shape == (30, 40, 40, 3) and np.array_equal(x, again) and np.array_equal(y, labels)
    assert set(y.tolist()) <= set(range(1, 7)) and len(set(y.tolist())) >= 5
