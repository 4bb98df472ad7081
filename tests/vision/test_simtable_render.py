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
