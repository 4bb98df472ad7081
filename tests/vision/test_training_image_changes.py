"""The pixel changes both robustness sweeps share (``models.training.image_changes``): each keeps the image's shape
and dtype, and does what its name says, so "grey" or "JPEG 30" mean the same in the photo sweep and the crop sweep."""

from __future__ import annotations

import numpy as np

from models.training.image_changes import grey, jpeg, light


def _image() -> np.ndarray:
    rng = np.random.default_rng(11)
    return rng.integers(0, 256, (48, 64, 3), dtype=np.uint8)


def test_every_change_keeps_the_images_shape_and_dtype_and_leaves_the_original_alone():
    img = _image()
    before = img.copy()
    for change in (jpeg(30), grey, light(0.5), light(1.4), light((0.75, 0.95, 1.2))):
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
