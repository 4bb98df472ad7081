"""Dice with other bodies (``DieStyle.body``): swirled and translucent dice, drawn for training only.

The plain body is every die drawn before the option, pixel for pixel (``test_simtable_looks`` holds the digests);
here: a plain body draws no random number, a swirled one holds both its colours, a translucent one shows the marks
of a face behind it, and each still shows as many marks as its face.
"""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from models.training.data import other_body_style, synth_face_crops
from vision.simtable import LUMA, DieStyle, _body, face_texture


def test_a_plain_body_is_one_colour_and_draws_no_random_number():
    rng = np.random.default_rng(4)
    state = rng.bit_generator.state
    body = _body(64, DieStyle(), rng)
    assert rng.bit_generator.state == state
    assert np.all(body == np.float32(DieStyle().face))


def test_a_swirled_body_holds_both_its_colours():
    style = DieStyle((30, 30, 30), (235, 235, 235), "pip", body="swirl", body_colour=(40, 40, 200))
    body = _body(96, style, np.random.default_rng(2))
    near_face = np.linalg.norm(body - np.float32(style.face), axis=2) < 40
    near_streak = np.linalg.norm(body - np.float32(style.body_colour), axis=2) < 60
    assert near_face.mean() > 0.1 and near_streak.mean() > 0.05
    assert body.min() >= 0 and body.max() <= 255


def test_a_translucent_body_shows_the_marks_of_a_face_behind_it_faintly():
    style = DieStyle((60, 20, 20), (240, 240, 240), "pip", 1.2, body="translucent")  # dark: its glow adds at most 11 levels
    bodies = [_body(96, style, np.random.default_rng(seed)) for seed in range(6)]
    for body in bodies:
        lighter = body @ LUMA - np.float32(style.face) @ LUMA
        assert 0 <= body.min() and body.max() <= 255
        assert lighter.max() > 25  # some mark of the face behind shows through
        assert lighter.max() < 0.8 * (np.float32(style.mark) - np.float32(style.face)) @ LUMA  # never as bright as a mark


def test_an_unknown_body_is_refused_in_words():
    with pytest.raises(ValueError, match="plain, swirl or translucent"):
        _body(32, DieStyle(body="glitter"), np.random.default_rng(0))


def _marks(texture: np.ndarray, style: DieStyle) -> int:
    """Marks a face shows: blobs of pixels far lighter (or darker) than the body's brightest (darkest) part."""
    luma = texture @ LUMA
    light = (style.mark[0] * 0.114 + style.mark[1] * 0.587 + style.mark[2] * 0.299) > 128
    mask = (luma > 200) if light else (luma < 50)
    mask = mask.astype(np.uint8)
    mask[:14], mask[-14:], mask[:, :14], mask[:, -14:] = 0, 0, 0, 0
    _, _, stats, _ = cv2.connectedComponentsWithStats(mask)
    return sum(1 for s in stats[1:] if s[cv2.CC_STAT_AREA] >= 12)


@pytest.mark.parametrize("body", ["swirl", "translucent"])
def test_every_face_on_another_body_shows_as_many_marks_as_its_value(body):
    style = (DieStyle((30, 30, 30), (240, 240, 240), "pip", body="swirl", body_colour=(40, 40, 200)) if body == "swirl"
             else DieStyle((150, 70, 20), (240, 240, 240), "pip", body="translucent"))
    for value in range(1, 7):
        assert _marks(face_texture(value, 128, style, np.random.default_rng(value)), style) == value, value


def test_the_other_bodies_are_half_swirled_half_translucent_with_marks_that_stand_out():
    rng = np.random.default_rng(11)
    styles = [other_body_style(rng) for _ in range(300)]
    kinds = [s.body for s in styles]
    assert 100 < kinds.count("swirl") < 200 and kinds.count("swirl") + kinds.count("translucent") == 300
    for s in styles:
        assert abs((np.float32(s.mark) - np.float32(s.face)) @ LUMA) > 60, s


def test_synthetic_crops_of_other_bodies_are_labelled_dice_of_every_face_and_seeded():
    x, y = synth_face_crops(30, np.random.default_rng(3), other_body_style)
    again, _ = synth_face_crops(30, np.random.default_rng(3), other_body_style)
    assert x.shape == (30, 40, 40, 3) and x.dtype == np.uint8 and np.array_equal(x, again)
    assert set(y.tolist()) <= set(range(1, 7)) and len(set(y.tolist())) >= 5
    plain, _ = synth_face_crops(30, np.random.default_rng(3))
    assert not np.array_equal(x, plain)
