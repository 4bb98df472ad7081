"""The simulated table's renderer: real-looking frames where the dice are where it says."""

from __future__ import annotations

import numpy as np
import pytest

from vision.simtable import DieStyle, face_texture, layout_dice, render_table


def test_same_seed_renders_the_same_frame():
    a, da = render_table([1, 2, 3], np.random.default_rng(4))
    b, db = render_table([1, 2, 3], np.random.default_rng(4))
    assert np.array_equal(a, b) and da == db


@pytest.mark.parametrize("view", ["below", "above"])
def test_frame_is_a_bgr_camera_frame_with_every_die_inside_it(view):
    frame, dice = render_table([6, 1, 4], np.random.default_rng(1), view=view)
    assert frame.shape == (960, 1280, 3) and frame.dtype == np.uint8
    assert [d.seen for d in dice] == [6, 1, 4]
    for d in dice:
        x, y, w, h = d.box()
        assert x >= 0 and y >= 0 and x + w <= 1280 and y + h <= 960
        # the die is drawn where it is said to be: its centre differs from the frame's median
        patch = frame[int(d.cy) - 5:int(d.cy) + 5, int(d.cx) - 5:int(d.cx) + 5].astype(int)
        assert np.abs(patch.mean(axis=(0, 1)) - np.median(frame.reshape(-1, 3), axis=0)).max() > 20


def test_dice_never_overlap_even_when_pushed_together():
    rng = np.random.default_rng(2)
    pos = layout_dice(6, rng, 1280, 960, 64, None, touching=1.0)
    for i in range(len(pos)):
        for j in range(i):
            assert np.hypot(pos[i][0] - pos[j][0], pos[i][1] - pos[j][1]) >= 64 * 0.99


def test_faces_show_more_mark_pixels_for_more_marks():
    rng = np.random.default_rng(3)
    style = DieStyle(marks="pip")
    counts = []
    for v in range(1, 7):
        face = face_texture(v, 120, style, rng)
        counts.append(int((np.abs(face - np.array(style.face, np.float32)).max(axis=2) > 60)[20:100, 20:100].sum()))
    assert counts == sorted(counts)


def test_empty_table_renders_without_dice():
    frame, dice = render_table([], np.random.default_rng(0))
    assert dice == [] and frame.shape == (960, 1280, 3)


@pytest.mark.parametrize("tilt", [20.0, 35.0, 45.0])
def test_a_leaning_die_shows_its_face_foreshortened_and_its_side_face_beside_it(tilt):
    """From below, a die leaning on the cup by ``tilt`` shows its face cos(tilt) long and the side face it
    leans towards sin(tilt) long beside it, darker: a footprint longer than a die, one die wide."""
    import cv2

    from vision.simtable import PlacedDie, paste_leaning_die

    frame = np.full((300, 300, 3), 20.0, np.float32)
    die = PlacedDie(4, 150.0, 150.0, 80.0, 30.0)
    paste_leaning_die(frame, die, DieStyle((235, 235, 235), (90, 40, 200), "pip", 1.0), np.random.default_rng(1), False, tilt)
    drawn = (frame.max(axis=2) > 60).astype(np.uint8)
    (cx, cy), (w, h), _ = cv2.minAreaRect(cv2.findNonZero(drawn))
    t = np.radians(tilt)
    assert max(w, h) == pytest.approx(80 * (np.cos(t) + np.sin(t)), rel=0.06)
    assert min(w, h) == pytest.approx(80, rel=0.06)
    assert (cx, cy) == pytest.approx((150, 150), abs=2)
    u = np.array([np.cos(np.radians(30)), np.sin(np.radians(30))])
    start = np.array([150.0, 150.0]) - u * 80 * (np.cos(t) + np.sin(t)) / 2
    face = start + u * 80 * np.cos(t) / 2  # the middle of the face, then of the side face
    side = start + u * 80 * (np.cos(t) + np.sin(t) / 2)

    def brightness(p):
        x, y = int(p[0]), int(p[1])
        return frame[y - 3:y + 4, x - 3:x + 4].mean()
    assert brightness(side) < 0.9 * brightness(face)


def test_render_table_leans_only_the_first_die_when_asked():
    flat, placed = render_table([2, 3, 4], np.random.default_rng(8), touching=0.0)
    leaning, placed_leaning = render_table([2, 3, 4], np.random.default_rng(8), touching=0.0, leaning=30.0)
    assert [(d.seen, d.cx, d.cy, d.angle) for d in placed] == [(d.seen, d.cx, d.cy, d.angle) for d in placed_leaning]
    x, y, w, h = placed[0].box()
    assert not np.array_equal(flat[y:y + h, x:x + w], leaning[y:y + h, x:x + w])


def _pip_rim(face: np.ndarray, cx: float, cy: float, radius: float, angle: float) -> float:
    """The mean brightness just inside a pip's rim, in the direction ``angle`` (degrees) from its centre."""
    t = np.radians(angle)
    x, y = cx + 0.75 * radius * np.cos(t), cy + 0.75 * radius * np.sin(t)
    return float(face[int(round(y)) - 1:int(round(y)) + 2, int(round(x)) - 1:int(round(x)) + 2].mean())


def test_drilled_pips_catch_the_light_on_one_side_of_their_rim_only():
    """A drilled pip (most real dice) is a hollow lit from one side: somewhere on its rim it is much
    brighter than the pip's colour, while the opposite side of the rim is not."""
    size, radius = 160, 160 * 0.085 * 1.5
    dark = DieStyle((30, 30, 30), (40, 40, 200), "pip", 1.5)
    plain = face_texture(1, size, dark, np.random.default_rng(7))
    drilled = face_texture(1, size, DieStyle((30, 30, 30), (40, 40, 200), "pip", 1.5, drilled=True), np.random.default_rng(7))
    around = [_pip_rim(drilled, size / 2, size / 2, radius, a) for a in range(0, 360, 15)]
    plain_rim = [_pip_rim(plain, size / 2, size / 2, radius, a) for a in range(0, 360, 15)]
    brightest = int(np.argmax(around))
    assert around[brightest] > max(plain_rim) + 40
    assert around[(brightest + 12) % 24] < around[brightest] - 40  # the far side of the rim: no crescent
    # away from the pip the face is as a printed die's (but for the face's own random shading: a few levels)
    yy, xx = np.mgrid[0:size, 0:size]
    away = np.hypot(xx - size / 2, yy - size / 2) > 1.4 * radius
    assert np.abs(drilled - plain)[away].max() < 8


def test_the_simulated_table_draws_printed_marks_unless_told():
    """``drilled`` is off by default: the simulated table's frames do not change with the training looks."""
    assert DieStyle().drilled is False and DieStyle.random(np.random.default_rng(1)).drilled is False
