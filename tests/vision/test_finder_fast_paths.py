"""The finder's fast paths give exactly what the plain code they replace gave.

``_best_cut`` tries its four ways to cut as rows of one set of arrays, and
``_percentile`` stands in for ``np.percentile``, ``_blobs`` labels in 16 bits: all only to save time, so
each is checked here against the plain version, on the blobs the finder
really cuts (rendered touching dice) and on random ones. A look stopped after
its clear pass and finished later (``with_faint``) finds what a whole look finds.
"""

from __future__ import annotations

import numpy as np
import pytest

from vision import finder, finder_cut
from vision.classic_tunables import CLASSIC
from vision.finder import _percentile, look, with_faint
from vision.finder_cut import _best_cut, _orientation
from vision.simtable import render_table


def _best_cut_one_way_at_a_time(points, theta, side, area):
    """The loop ``_best_cut`` was before it was vectorised (each way to cut in turn)."""
    uv = finder_cut._uv(points, theta)
    best = None
    cuts = np.arange(round(0.85 * side), round(1.25 * side) + 1, dtype=np.float32)
    for axis in (0, 1):
        order_up = np.argsort(uv[:, axis], kind="stable")
        top = uv[:, axis].max()
        for end in (0, 1):
            order = order_up if end == 0 else order_up[::-1]
            sv = uv[order, axis] if end == 0 else top - uv[order, axis]
            so = uv[order, 1 - axis]
            lo, hi = np.minimum.accumulate(so), np.maximum.accumulate(so)
            counts = np.searchsorted(sv, cuts, side="left")
            ok = (counts > 2) & (counts < len(sv))
            if not ok.any():
                continue
            cc, counts = cuts[ok], counts[ok]
            ext_along = sv[counts - 1] + 1
            ext_across = hi[counts - 1] - lo[counts - 1] + 1
            cheap = np.maximum(np.maximum(np.abs(ext_along / side - 1), np.abs(ext_across / side - 1)), np.abs(counts / area - 1))
            seam = np.bincount(sv.astype(np.int64), minlength=int(cuts[-1]) + 2)[cc.astype(np.int64)]
            i = int(np.argmin(seam)) if cheap[int(np.argmin(seam))] <= cheap.min() + 0.1 else int(np.argmin(cheap))
            if best is None or cheap[i] < best[0]:
                take = np.zeros(len(points), bool)
                take[order[:counts[i]]] = True
                best = (float(cheap[i]), take)
    return best


def _touching_blobs():
    """The clear blobs of rendered chains of touching dice, in working pixels, with their die side."""
    import cv2

    blobs = []
    for seed in range(6):
        frame, placed = render_table([2, 4, 6], np.random.default_rng(300 + seed), touching=1.0, glare=0)
        scale = CLASSIC.work_side / max(frame.shape[:2])
        small = finder.shrink(frame, (round(frame.shape[1] * scale), round(frame.shape[0] * scale)))
        strong, _, _ = finder.masks(small)
        n, labels = cv2.connectedComponents(strong)
        for i in range(1, n):
            ys, xs = np.nonzero(labels == i)
            if len(xs) > 200:
                blobs.append((np.stack([xs, ys], 1), placed[0].side * scale))
    return blobs


def _same(a, b):
    return (a is None and b is None) or (a is not None and b is not None and a[0] == b[0] and np.array_equal(a[1], b[1]))


def test_the_vectorised_cut_is_the_one_the_plain_loop_picks_on_touching_dice():
    blobs = _touching_blobs()
    assert len(blobs) >= 6
    for points, side in blobs:
        for theta in (_orientation(points), 0.3):
            for s in (side, 0.8 * side, 1.2 * side):
                assert _same(_best_cut(points, theta, s, s * s), _best_cut_one_way_at_a_time(points, theta, s, s * s))


def test_the_vectorised_cut_is_the_one_the_plain_loop_picks_on_random_blobs():
    rng = np.random.default_rng(7)
    for _ in range(200):
        points = np.unique(rng.integers(0, rng.integers(8, 60), (rng.integers(5, 600), 2)), axis=0)
        side = float(rng.uniform(4, 25))
        theta = float(rng.uniform(-np.pi / 4, np.pi / 4))
        assert _same(_best_cut(points, theta, side, side * side), _best_cut_one_way_at_a_time(points, theta, side, side * side))


def test_no_cut_is_offered_when_no_way_leaves_a_piece_on_both_sides():
    tiny = np.array([[0, 0], [1, 0], [0, 1]])
    assert _best_cut(tiny, 0.0, 10.0, 100.0) is None


@pytest.mark.parametrize("values", [[5.0], [3, 9], [1.5, 2.5, 10.0], list(range(7)), [4.0, 4.0, 4.0, 9.0]])
def test_the_die_size_percentile_is_numpys(values):
    for q in (0, 25, 50, 75, 90, 100):
        assert _percentile(values, q) == float(np.percentile(values, q))


def test_the_die_size_percentile_is_numpys_on_random_areas():
    rng = np.random.default_rng(8)
    for _ in range(300):
        values = list(rng.uniform(10, 900, rng.integers(1, 12)))
        assert _percentile(values, 75) == float(np.percentile(values, 75))


def test_the_faint_pass_goes_on_from_the_clear_pass_and_cuts_no_blob_twice(monkeypatch):
    cuts, gathered = [], []
    real_cut, real_gather = finder.clear_blob_parts, finder._gather
    monkeypatch.setattr(finder, "clear_blob_parts", lambda *a, **k: cuts.append(1) or real_cut(*a, **k))
    monkeypatch.setattr(finder, "_gather", lambda *a, **k: gathered.append(1) or real_gather(*a, **k))
    for seed in range(4):
        frame, _ = render_table([6, 6, 6], np.random.default_rng(seed), view="below", touching=1.0)
        whole = look(frame)
        cuts.clear()
        gathered.clear()
        clear = look(frame, faint=False)
        cut_once, gathered_once = len(cuts), len(gathered)
        finished = with_faint(clear)
        assert not clear.faint and finished.faint
        assert finished.candidates == whole.candidates
        assert len(cuts) == cut_once > 0  # the second half reused the clear blobs' cuts
        assert len(gathered) - gathered_once < gathered_once  # ... and gathered only the blobs the faint pass changed


def test_the_clear_pass_alone_gives_the_same_blobs_as_a_look_whose_faint_mask_is_empty():
    frame, _ = render_table([2, 3, 4], np.random.default_rng(9), view="below")
    clear = look(frame, faint=False)
    assert clear.strong is not None
    assert finder._blobs_to_dice(clear, np.zeros_like(clear.strong)) == clear.candidates


@pytest.mark.parametrize("seed", range(4))
def test_blobs_labelled_in_16_bits_are_those_labelled_in_32(seed):
    import cv2

    rng = np.random.default_rng(seed)
    mask = (rng.random((240, 320)) < (0.02, 0.3, 0.5, 0.7)[seed]).astype(np.uint8) * 255  # few to very many blobs
    n, labels, stats, centres = finder._blobs(mask)
    n32, labels32, stats32, centres32 = cv2.connectedComponentsWithStats(mask, connectivity=8)
    assert labels.dtype == np.uint16 and n == n32
    assert np.array_equal(labels, labels32) and np.array_equal(stats, stats32) and np.allclose(centres, centres32)


def test_a_mask_that_could_hold_more_blobs_than_16_bits_count_is_labelled_in_32():
    checkerboard = np.zeros((1000, 600), np.uint8)
    checkerboard[::2, ::2] = 255  # every other pixel both ways: 150 000 blobs apart
    n, labels, _, _ = finder._blobs(checkerboard)
    assert labels.dtype == np.int32 and n == 150_001  # and the background
