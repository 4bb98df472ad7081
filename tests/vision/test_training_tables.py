"""The real photos' dice moved onto other tables for training (no PyTorch needed to check them)."""

from __future__ import annotations

import cv2
import numpy as np

from models.training.tables import DIE_CORE, other_table, table_texture, tray_mask

TRAY = (182, 188, 190)


def _tray_with_die(die_colour=(40, 40, 40), angle=30.0, shadow=False):
    """A grey tray (gently shaded, like the photos) with one square die turned by ``angle``, and its label."""
    img = np.empty((240, 320, 3), np.float32)
    img[:] = TRAY
    img *= np.linspace(0.92, 1.05, 320, dtype=np.float32)[None, :, None]
    if shadow:
        cv2.circle(img, (230, 170), 40, tuple(0.7 * c for c in TRAY), -1)
    corners = cv2.boxPoints(((120.0, 110.0), (50.0, 50.0), angle)).astype(np.int32)
    cv2.fillConvexPoly(img, corners, die_colour)
    for dx, dy in ((-10, -10), (10, 10)):
        cv2.circle(img, (120 + dx, 110 + dy), 4, (250, 250, 250), -1)
    x0, y0 = corners.min(0)
    x1, y1 = corners.max(0)
    label = (2, 120.0, 110.0, float(x1 - x0), float(y1 - y0))
    return np.clip(img, 0, 255).astype(np.uint8), [label], corners


def _inside(corners, shrink=0.85):
    """A mask of the die's square, a little smaller than it (its edge pixels are blended)."""
    c = corners.astype(np.float32)
    centre = c.mean(0)
    mask = np.zeros((240, 320), np.uint8)
    cv2.fillConvexPoly(mask, (centre + (c - centre) * shrink).astype(np.int32), 255)
    return mask > 0


def test_a_dark_die_is_kept_whole_even_at_its_corners_outside_the_kept_disc():
    img, labels, corners = _tray_with_die()
    out = other_table(img, labels, np.random.default_rng(1))
    die = _inside(corners)
    assert np.abs(out[die].astype(int) - img[die].astype(int)).max() <= 2


def test_a_die_the_trays_own_colour_keeps_the_disc_at_its_centre():
    img, labels, corners = _tray_with_die(die_colour=TRAY)
    weight, _ = tray_mask(img, labels)
    _, cx, cy, bw, bh = labels[0]
    yy, xx = np.mgrid[0:240, 0:320]
    core = (xx - cx) ** 2 + (yy - cy) ** 2 < (0.8 * DIE_CORE * max(bw, bh)) ** 2
    assert weight[core].max() < 0.05


def test_the_tray_away_from_the_die_becomes_another_table():
    img, labels, _ = _tray_with_die()
    rng = np.random.default_rng(2)
    changed = 0
    for _ in range(10):
        out = other_table(img, labels, rng)
        assert out.shape == img.shape and out.dtype == np.uint8
        far = np.abs(out[:60, 200:].astype(int) - img[:60, 200:].astype(int)).mean()
        changed += far > 15
    assert changed >= 8


def test_the_trays_shadow_carries_over_to_the_new_table():
    img, labels, _ = _tray_with_die(shadow=True)
    weight, shade = tray_mask(img, labels)
    assert weight[170, 230] > 0.95 and 0.6 < shade[170, 230] < 0.8
    assert 0.9 < shade[40, 230] < 1.1 and shade[120, 10] < shade[120, 310]  # and the light's fall-off across the tray
    out = other_table(img, labels, np.random.default_rng(3)).astype(np.float32)
    assert out[160:180, 220:240].mean() < 0.85 * out[30:50, 220:240].mean()


def test_tables_are_of_every_kind_and_the_same_for_the_same_seed():
    rng = np.random.default_rng(4)
    means = [float(table_texture(60, 80, rng).mean()) for _ in range(60)]
    assert min(means) < 70 and max(means) > 190  # dark cloth and white paper both come up
    a = table_texture(60, 80, np.random.default_rng(5))
    b = table_texture(60, 80, np.random.default_rng(5))
    assert a.dtype == np.float32 and a.shape == (60, 80, 3) and np.array_equal(a, b)


def test_the_held_out_check_reads_every_die_once_on_each_other_table():
    from models.training.heldout import HERE, evaluate, held_out_reader, heldout_names

    names = heldout_names(HERE / "validation.json")[:2]
    reader = held_out_reader()
    plain = evaluate(reader, names)
    tables = evaluate(reader, names, tables=2)
    assert tables["dice"] == 2 * plain["dice"] > 0
    assert all(" table " in w for w in tables["wrong"])
