"""The training data's camera effects and plain-tray negatives (no PyTorch needed to check them)."""

from __future__ import annotations

import numpy as np

from models.training.augment import GREY_SHARE, augment, distort, sensor_noise, specular
from models.training.data import tray_crops
from vision.classifier import CROP


def _flat(value=150):
    return np.full((CROP, CROP, 3), value, np.uint8)


def test_grain_is_a_few_grey_levels_around_the_crop_and_keeps_its_shape():
    rng = np.random.default_rng(1)
    spreads = []
    for _ in range(200):
        out = sensor_noise(_flat(), rng)
        assert out.shape == (CROP, CROP, 3) and out.dtype == np.uint8
        assert abs(float(out.mean()) - 150) < 3
        spreads.append(float(out.astype(np.float32).std()))
    assert 1.0 < min(spreads) and max(spreads) < 22 and np.median(spreads) > 4


def test_grain_is_sometimes_in_brightness_only_and_sometimes_per_channel():
    rng = np.random.default_rng(2)
    same = [bool((o[..., 0] == o[..., 1]).all() and (o[..., 1] == o[..., 2]).all()) for o in (sensor_noise(_flat(), rng) for _ in range(100))]
    assert 20 < sum(same) < 80


def test_a_distorted_crop_stays_a_crop():
    rng = np.random.default_rng(3)
    crop = np.random.default_rng(4).integers(0, 255, (CROP, CROP, 3)).astype(np.uint8)
    for _ in range(50):
        out = distort(crop, rng)
        assert out.shape == crop.shape and out.dtype == np.uint8


def _glint_pixels(size: float, seed: int) -> list[int]:
    """The pixels each of 300 glints makes near-white on a black die."""
    rng = np.random.default_rng(seed)
    return [int((specular(_flat(0), rng, size)[..., 0] > 200).sum()) for _ in range(300)]


def test_glints_are_at_their_usual_size_unless_told_otherwise():
    assert _glint_pixels(1.0, 8) == [int((specular(_flat(0), rng)[..., 0] > 200).sum()) for rng in [np.random.default_rng(8)] for _ in range(300)]


def test_smaller_glint_dots_light_fewer_pixels_and_none_grows_past_the_usual_largest():
    """Only the dots are scaled; the streaks (a line, not a pip's shape) stay."""
    usual, small = _glint_pixels(1.0, 9), _glint_pixels(0.5, 9)
    assert np.mean(small) < 0.8 * np.mean(usual)
    assert max(small) <= max(usual)


def test_about_the_grey_share_of_a_batch_is_made_grey():
    rng = np.random.default_rng(5)
    batch = np.random.default_rng(6).integers(0, 255, (2000, CROP, CROP, 3)).astype(np.uint8)
    out = augment(batch, rng)
    grey = np.mean([(o[..., 0] == o[..., 1]).all() and (o[..., 1] == o[..., 2]).all() for o in out])
    assert abs(grey - GREY_SHARE) < 0.04


def test_tray_crops_keep_away_from_every_labelled_die():
    """Red squares on a grey tray: no crop of the tray may hold any red."""
    img = np.full((480, 640, 3), 170, np.uint8)
    labels = []
    for value, (x, y) in enumerate([(100, 100), (320, 240), (500, 380), (560, 90)], start=1):
        img[y - 20:y + 20, x - 20:x + 20] = (30, 30, 220)
        labels.append((value, float(x), float(y), 40.0, 40.0))
    crops = tray_crops(img, labels, np.random.default_rng(7), 12)
    assert len(crops) == 12
    for c in crops:
        assert c.shape == (CROP, CROP, 3)
        assert not ((c[..., 2] > 150) & (c[..., 0] < 100)).any()


def test_a_tray_crowded_with_dice_gives_fewer_crops_not_dice():
    img = np.full((200, 200, 3), 170, np.uint8)
    labels = [(1, float(x), float(y), 40.0, 40.0) for x in range(20, 200, 40) for y in range(20, 200, 40)]
    assert tray_crops(img, labels, np.random.default_rng(8), 6) == []


def _styles_drawn(monkeypatch, n: int) -> list:
    """The styles of every die ``synth_face_crops`` pastes for ``n`` crops."""
    from models.training import data

    drawn = []
    real_paste = data.paste_die

    def paste(frame, die, style, rng, mirrored, shadow):
        drawn.append(style)
        real_paste(frame, die, style, rng, mirrored, shadow)

    monkeypatch.setattr(data, "paste_die", paste)
    data.synth_face_crops(n, np.random.default_rng(5))
    return drawn


def test_about_the_drilled_share_of_synthetic_pip_dice_is_drawn_drilled_and_no_elephant_is(monkeypatch):
    from models.training import data

    monkeypatch.setattr(data, "DRILLED_SHARE", 0.5)  # as tried (the shipped recipe's share is 0)
    drawn = _styles_drawn(monkeypatch, 400)
    pips = [s for s in drawn if s.marks == "pip"]
    assert not any(s.drilled for s in drawn if s.marks == "elephant")
    assert abs(sum(s.drilled for s in pips) / len(pips) - 0.5) < 0.1


def test_at_a_drilled_share_of_zero_no_die_is_drilled(monkeypatch):
    from models.training import data

    monkeypatch.setattr(data, "DRILLED_SHARE", 0.0)
    drawn = _styles_drawn(monkeypatch, 100)
    assert any(s.marks == "pip" for s in drawn) and not any(s.drilled for s in drawn)


def _square_die(side=20):
    crop = np.zeros((CROP, CROP, 3), np.uint8)
    lo = (CROP - side) // 2
    crop[lo:lo + side, lo:lo + side] = 255
    return crop


def test_a_squashed_die_loses_a_tenth_to_half_of_its_area_along_an_axis_turned_any_way():
    from models.training.augment import SQUASH_RANGE, squash
    rng = np.random.default_rng(5)
    areas = [int((squash(_square_die(), rng)[..., 0] > 127).sum()) / 400 for _ in range(200)]
    assert SQUASH_RANGE[0] - 0.1 < min(areas) and max(areas) < SQUASH_RANGE[1] + 0.1
    assert max(areas) - min(areas) > 0.25  # squashed by different amounts


def test_augment_squashes_only_the_share_asked_for_and_leaves_the_recipe_without_it_unchanged():
    dice = np.array([_square_die()] * 400)
    lit = lambda x: (x.astype(np.float32).mean(axis=3) > 100).sum(axis=(1, 2))  # noqa: E731 (brightness changes, not the area much)
    plain = augment(dice, np.random.default_rng(6), squashed=0.0)
    again = augment(dice, np.random.default_rng(6))
    assert (plain == again).all()  # squashed=0 draws nothing more: the shipped recipe's crops are the same
    narrowed = lit(augment(dice, np.random.default_rng(6), squashed=0.5)) < 0.92 * lit(plain).max()
    assert 0.35 < narrowed.mean() < 0.65


def test_augment_turns_only_the_share_asked_for_into_dark_dice_with_light_marks():
    dice = np.array([_square_die()] * 400)  # a white face on black
    plain = augment(dice, np.random.default_rng(7))
    assert (plain == augment(dice, np.random.default_rng(7), inverted=0.0)).all()  # the recipe without it is unchanged
    out = augment(dice, np.random.default_rng(7), inverted=0.5).astype(np.float32).mean(axis=3)
    face, corner = out[:, 15:25, 15:25].mean(axis=(1, 2)), out[:, :5, :5].mean(axis=(1, 2))
    dark_faces = face < corner
    assert 0.35 < dark_faces.mean() < 0.65



def test_augment_gives_a_phones_tone_only_to_the_share_asked_for_and_leaves_the_recipe_without_it_unchanged():
    from models.training.augment import phone_tone

    dice = np.array([_square_die()] * 200)
    plain = augment(dice, np.random.default_rng(8), strong=True)
    assert (plain == augment(dice, np.random.default_rng(8), strong=True, camera_tone=0.0)).all()
    toned = augment(dice, np.random.default_rng(8), strong=True, camera_tone=0.5)
    assert not (toned == plain).all()
    grey = np.full((CROP, CROP, 3), 128, np.uint8)
    levels = {int(phone_tone(grey, np.random.default_rng(k))[CROP // 2, CROP // 2, 0]) for k in range(40)}
    assert min(levels) < 100 and max(levels) > 160  # mid-grey lifted by some curves, deepened by others
