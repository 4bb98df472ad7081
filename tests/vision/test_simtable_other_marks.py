"""Dice printed with their number instead of marks (``DieStyle.marks == "numeral"``), or with marks of other shapes
and a big emblem for the one (``SHAPED_MARKS``, ``DieStyle.one_scale``), drawn for training only.

Number dice are another look a table may bring; a lone digit in the middle of a face looks to a classifier that
never saw one like the single mark of a one. Drawn, the face holds one glyph of the ink's colour, centred, and no
other die is drawn differently (``test_simtable_looks`` holds the simulated table's digests).
"""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from models.training.data import numeral_style, other_marks_style, synth_face_crops
from vision.simtable import LUMA, SHAPED_MARKS, DieStyle, face_texture

WHITE_BLACK = DieStyle((235, 235, 235), (20, 20, 20), "numeral", 1.0)


def _ink(texture: np.ndarray) -> np.ndarray:
    """The face's dark ink, as a mask, away from the shaded border."""
    mask = ((texture @ LUMA) < 100).astype(np.uint8)
    border = texture.shape[0] // 7
    mask[:border], mask[-border:], mask[:, :border], mask[:, -border:] = 0, 0, 0, 0
    return mask


@pytest.mark.parametrize("value", range(1, 7))
def test_a_number_die_shows_one_centred_glyph_of_its_inks_colour(value):
    texture = face_texture(value, 128, WHITE_BLACK, np.random.default_rng(value))
    ink = _ink(texture)
    ys, xs = np.nonzero(ink)
    assert len(xs) > 150  # a digit, not a speck
    assert abs(xs.mean() - 64) < 16 and abs(ys.mean() - 64) < 16  # centred on the face
    assert 0.3 * 128 < ys.max() - ys.min() < 0.8 * 128  # about half the face tall
    n, _, stats, _ = cv2.connectedComponentsWithStats(ink)
    assert max(stats[1:, cv2.CC_STAT_AREA]) > 0.5 * len(xs)  # one glyph (a six's underline or a font's dot beside it)


def test_the_faces_differ_by_their_number_not_by_a_count_of_marks():
    one, four = (_ink(face_texture(v, 128, WHITE_BLACK, np.random.default_rng(9))) for v in (1, 4))
    n_one, n_four = (cv2.connectedComponents(ink)[0] - 1 for ink in (one, four))
    assert not np.array_equal(one, four) and n_four < 4  # one glyph, not four marks


def test_number_styles_are_light_with_dark_ink_or_dark_with_light_ink():
    rng = np.random.default_rng(11)
    styles = [numeral_style(rng) for _ in range(300)]
    assert all(s.marks == "numeral" for s in styles)
    contrast = [abs(float((np.float32(s.face) - np.float32(s.mark)) @ LUMA)) for s in styles]
    assert min(contrast) > 60
    dark = sum(1 for s in styles if np.float32(s.face) @ LUMA < 128)
    assert 100 < dark < 200


def test_synthetic_number_dice_are_labelled_with_their_number_and_seeded():
    x, y = synth_face_crops(30, np.random.default_rng(3), numeral_style)
    again, labels = synth_face_crops(30, np.random.default_rng(3), numeral_style)
    assert x.shape == (30, 40, 40, 3) and np.array_equal(x, again) and np.array_equal(y, labels)
    assert set(y.tolist()) <= set(range(1, 7)) and len(set(y.tolist())) >= 5


@pytest.mark.parametrize("kind", SHAPED_MARKS)
@pytest.mark.parametrize("value", [1, 3, 5])
def test_shaped_marks_are_counted_as_pips_are_one_mark_each(kind, value):
    style = DieStyle((235, 235, 235), (20, 20, 20), kind, 1.2)
    n = cv2.connectedComponents(_ink(face_texture(value, 160, style, np.random.default_rng(value))))[0] - 1
    assert n == value


def test_a_big_emblem_one_is_bigger_than_its_pips_and_every_other_face_is_drawn_as_before():
    plain = DieStyle((235, 235, 235), (20, 20, 20), "pip", 1.0)
    emblem = DieStyle((235, 235, 235), (20, 20, 20), "pip", 1.0, one_scale=2.0)
    one_plain, one_big = (_ink(face_texture(1, 128, s, np.random.default_rng(3))).sum() for s in (plain, emblem))
    assert 3.0 < one_big / one_plain < 5.0  # twice the radius: about four times the ink
    assert np.array_equal(face_texture(4, 128, plain, np.random.default_rng(3)), face_texture(4, 128, emblem, np.random.default_rng(3)))


def test_other_marks_styles_are_shaped_or_round_with_a_big_one_for_about_half():
    rng = np.random.default_rng(12)
    styles = [other_marks_style(rng) for _ in range(400)]
    shaped = sum(s.marks in SHAPED_MARKS for s in styles)
    assert 190 < shaped < 290 and all(s.marks in SHAPED_MARKS + ("pip",) for s in styles)
    big = sum(s.one_scale > 1 for s in styles)
    assert 150 < big < 250 and all(s.one_scale == 1.0 or 1.5 <= s.one_scale <= 2.6 for s in styles)
