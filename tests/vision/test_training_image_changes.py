"""The pixel changes both robustness sweeps share (``models.training.image_changes``): each keeps the image's shape
and dtype, and does what its name says, so "grey" or "JPEG 30" mean the same in the photo sweep and the crop sweep."""

from __future__ import annotations

import numpy as np

from models.training.image_changes import blurred, defocused, grey, haze, jpeg, light, off_a_screen, posterised, sharpened, tone, upscaled


def _image() -> np.ndarray:
    rng = np.random.default_rng(11)
    return rng.integers(0, 256, (48, 64, 3), dtype=np.uint8)


def test_every_change_keeps_the_images_shape_and_dtype_and_leaves_the_original_alone():
    img = _image()
    before = img.copy()
    for change in (jpeg(30), grey, light(0.5), light(1.4), light((0.75, 0.95, 1.2)), tone(0.5), tone(2.0), haze(0.5), sharpened(1.0),
                   blurred(1.5), upscaled(4), defocused(0.05), posterised(4), off_a_screen(4)):
        out = change(img)
        assert out.shape == img.shape and out.dtype == np.uint8
    np.testing.assert_array_equal(img, before)


def test_grey_gives_three_equal_channels():
    out = grey(_image())
    assert np.array_equal(out[..., 0], out[..., 1]) and np.array_equal(out[..., 1], out[..., 2])


def test_light_scales_and_clips_and_a_tint_scales_each_channel_by_its_own_factor():
    img = np.full((4, 4, 3), 200, np.uint8)
    assert int(light(0.5)(img).max()) == 100
    assert int(light(1.4)(img).min()) == 255  # 280 clipped, never wrapped round to 24
    tinted = light((0.5, 1.0, 1.25))(img)
    assert tinted[0, 0].tolist() == [100, 200, 250]


def test_heavier_jpeg_loses_more_of_the_image():
    img = _image()
    error = {q: float(np.abs(jpeg(q)(img).astype(int) - img).mean()) for q in (95, 30, 10)}
    assert error[95] < error[30] < error[10]


def test_a_tone_curve_keeps_black_and_white_and_lifts_or_deepens_the_middle():
    img = np.array([[[0, 64, 255]]], np.uint8)
    assert tone(0.5)(img)[0, 0].tolist() == [0, 128, 255]
    assert tone(2.0)(img)[0, 0].tolist() == [0, 16, 255]


def test_haze_draws_every_level_towards_mid_grey_and_halves_the_contrast():
    img = np.array([[[0, 128, 255]]], np.uint8)
    assert haze(0.5)(img)[0, 0].tolist() == [64, 128, 192]


def test_sharpening_leaves_a_flat_image_alone_and_overshoots_at_an_edge():
    flat = np.full((20, 20, 3), 90, np.uint8)
    np.testing.assert_array_equal(sharpened(1.0)(flat), flat)
    edge = flat.copy()
    edge[:, 10:] = 160
    out = sharpened(1.0)(edge)
    assert int(out[10, 9, 0]) < 90 and int(out[10, 10, 0]) > 160  # the halo either side of the edge


def test_a_heavier_blur_softens_an_edge_more_and_leaves_a_flat_image_alone():
    flat = np.full((32, 32, 3), 90, np.uint8)
    assert np.array_equal(blurred(2.5)(flat), flat)
    edge = np.zeros((32, 32, 3), np.uint8)
    edge[:, 16:] = 200
    steps = [int(np.abs(np.diff(blurred(s)(edge)[16, :, 0].astype(int))).max()) for s in (1.5, 2.5)]
    assert 200 > steps[0] > steps[1]


def test_an_upscaled_picture_loses_the_detail_finer_than_its_small_pixels():
    stripes = np.zeros((32, 32, 3), np.uint8)
    stripes[:, ::2] = 200  # one-pixel stripes
    assert int(np.ptp(upscaled(4)(stripes)[16, 4:28, 0])) < 20  # averaged away
    wide = np.zeros((32, 32, 3), np.uint8)
    wide[:, 16:] = 200
    assert int(upscaled(4)(wide)[16, 2, 0]) < 10 and int(upscaled(4)(wide)[16, 29, 0]) > 190  # kept


def test_defocus_spreads_a_point_into_a_flat_disc():
    point = np.zeros((41, 101, 3), np.uint8)
    point[20, 50] = 255
    spread = defocused(0.05)(point)[..., 0].astype(int)  # a disc 5 px in radius
    inside = spread[20, 47:54]
    assert int(spread[20, 50]) < 20 and int(np.ptp(inside)) <= 1 and inside.min() > 0 and spread[20, 57] == 0


def test_posterising_keeps_the_top_bits_of_every_level():
    levels = np.arange(256, dtype=np.uint8).reshape(1, 256, 1).repeat(3, axis=2)
    out = posterised(4)(levels)
    assert set(np.unique(out).tolist()) == set(range(0, 256, 16)) and (out <= levels).all()


def test_a_picture_off_a_screen_has_bands_between_four_fifths_and_all_of_the_light():
    flat = np.full((40, 40, 3), 200, np.uint8)
    out = off_a_screen(4)(flat)
    assert 158 <= int(out.min()) <= 162 and int(out.max()) >= 198
