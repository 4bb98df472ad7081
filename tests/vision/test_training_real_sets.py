"""The classifier's crops from every shared real set (``models.training.real_sets``): cut as a detector would,
with "not a die" crops that hold no whole die, small dice left out, and never a ``test`` photo."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from models.training import real_sets
from vision.classifier import CROP


def _frame(dice: list[tuple[int, float, float, float]], size: int = 400) -> real_sets.Frame:
    """A black frame with white squares for dice (value, cx, cy, side)."""
    img = np.zeros((size, size, 3), np.uint8)
    labels = []
    for v, cx, cy, s in dice:
        cv2.rectangle(img, (int(cx - s / 2), int(cy - s / 2)), (int(cx + s / 2), int(cy + s / 2)), (255, 255, 255), -1)
        labels.append((v, cx, cy, s, s))
    return real_sets.Frame("synthetic", None, "x", img, labels)


def test_die_crops_are_jittered_turned_and_leave_out_dice_too_small_to_read(monkeypatch):
    cuts = []
    real_cut = real_sets.cut_crop

    def record(img, cx, cy, side, angle=0.0):
        cuts.append((cx, cy, side, angle))
        return real_cut(img, cx, cy, side, angle)

    monkeypatch.setattr(real_sets, "cut_crop", record)
    f = _frame([(3, 100, 100, 50), (5, 300, 300, real_sets.MIN_SIDE - 2)])
    xs, ys = real_sets.die_crops(f, np.random.default_rng(0), 200)
    assert ys == [3] * 200  # the small die is taught no face
    xs = np.array(xs)
    assert xs.shape == (200, CROP, CROP, 3)
    assert (xs[:, CROP // 2, CROP // 2] == 255).all()  # the die is always under the crop's centre
    c = np.array(cuts)
    off = np.hypot(c[:, 0] - 100, c[:, 1] - 100) / 50
    assert off.max() <= real_sets.CENTRE_JITTER and off.max() > 0.8 * real_sets.CENTRE_JITTER
    assert c[:, 2].min() >= 50 * (1 - real_sets.SIDE_JITTER) and c[:, 2].max() <= 50 * (1 + real_sets.SIDE_JITTER)
    assert c[:, 2].max() - c[:, 2].min() > 50 * real_sets.SIDE_JITTER
    assert np.histogram(c[:, 3] % 360, bins=8, range=(0, 360))[0].min() > 5  # any angle, not only quarter turns


def test_not_a_die_crops_are_never_centred_on_a_die(monkeypatch):
    cuts = []

    def record(img, cx, cy, side, angle=0.0):
        cuts.append((cx, cy, side))
        return np.zeros((CROP, CROP, 3), np.uint8)

    monkeypatch.setattr(real_sets, "cut_crop", record)
    dice = [(2, 120, 120, 50), (4, 172, 120, 50), (6, 300, 300, 50)]
    out = real_sets.not_a_die_crops(_frame(dice), np.random.default_rng(1), 6)
    assert len(out) == len(cuts) >= 13  # 6 background, up to 6 halves, the one close pair's gap
    for cx, cy, _ in cuts:
        assert min(np.hypot(cx - x, cy - y) / s for _, x, y, s in dice) > 0.45
    far = [c for c in cuts if min(np.hypot(c[0] - x, c[1] - y) for _, x, y, _ in dice) > 0.7 * 0.8 * 50 + 25]
    assert len(far) >= 6  # plain background well away from every die
    gap = [c for c in cuts if abs(c[0] - 146) < 1 and abs(c[1] - 120) < 1]
    assert len(gap) == 1  # the two touching dice: the crop between them


def test_lookalikes_are_seeded_crops():
    bg = [np.full((CROP, CROP, 3), 90, np.uint8)]
    a = real_sets.lookalikes(12, bg, np.random.default_rng(5))
    b = real_sets.lookalikes(12, bg, np.random.default_rng(5))
    assert all(x.shape == (CROP, CROP, 3) and x.dtype == np.uint8 for x in a)
    assert all((x == y).all() for x, y in zip(a, b))
    assert max(float(x.std()) for x in a) > 10  # something is drawn on the plain background


@pytest.mark.parametrize("reader", [real_sets.frames, real_sets.hand_crops])
def test_the_test_split_is_refused(reader):
    with pytest.raises(ValueError, match="evaluation only"):
        reader("real-dice-byler", "test")


def test_val_crops_come_from_the_val_splits_only(real_dataset):
    root = real_sets.shared_root()
    if not (root / "real-dice-skovy" / "crops.csv").exists():
        pytest.skip("the newer shared sets are not beside the repository")
    train = real_sets.hand_crops("real-dice-skovy", "train")
    val = real_sets.hand_crops("real-dice-skovy", "val")
    assert len(train) == 120 and len(val) == 22
    v = real_sets.val_crops()
    assert len(v["val_skovy_crops"][0]) == 22 and len(v["val_patterson_crops"][0]) == 49
    assert all(len(x) == len(y) and set(y.tolist()) <= set(range(1, 7)) for x, y in v.values())


def test_a_wider_side_range_cuts_dice_at_every_size_in_it(monkeypatch):
    sides = []
    real_cut = real_sets.cut_crop

    def record(img, cx, cy, side, angle=0.0):
        sides.append(side)
        return real_cut(img, cx, cy, side, angle)

    monkeypatch.setattr(real_sets, "cut_crop", record)
    real_sets.die_crops(_frame([(2, 200, 200, 60)]), np.random.default_rng(4), 300, side_range=(0.8, 1.35))
    assert 0.8 * 60 <= min(sides) < 0.85 * 60 and 1.3 * 60 < max(sides) <= 1.35 * 60


def _rendered(seen: list[int], seed: int) -> tuple[real_sets.Frame, list]:
    from vision.simtable import render_table

    frame, placed = render_table(seen, np.random.default_rng(seed), touching=0.0, glare=0)
    labels = [(d.seen, d.cx, d.cy, d.side, d.side) for d in placed]
    return real_sets.Frame("rendered", None, "x", frame, labels), placed


def test_the_detectors_own_crops_carry_the_face_of_the_die_they_lie_on():
    from vision.pipeline.propose import load_detector

    frame, _ = _rendered([2, 5, 6], 7)
    xs, ys = real_sets.detector_crops(frame, load_detector("learned"))
    assert sorted(ys) == [2, 2, 5, 5, 6, 6]  # each die at the reader's two spans, no false find
    assert np.array(xs).shape == (6, CROP, CROP, 3)


def test_with_its_closer_look_the_detectors_crops_also_hold_the_dice_as_the_reader_reads_small_dice():
    """A rendered table's dice are about 12 of the detector's pixels at its first look: the reader reads them from its
    closer look (tighter sides), so ``closer`` adds that look's crops of each die, with the same faces."""
    from vision.pipeline.normalise import normalise
    from vision.pipeline.propose import load_detector, propose, propose_closer

    frame, _ = _rendered([2, 5, 6], 7)
    proposer = load_detector("learned")
    norm = normalise(frame.image)
    assert propose_closer(norm, proposer, propose(norm, proposer))  # the reader takes the closer look here
    xs, ys = real_sets.detector_crops(frame, proposer, closer=True)
    assert sorted(ys) == [2] * 4 + [5] * 4 + [6] * 4 and np.array(xs).shape == (12, CROP, CROP, 3)
    first, _ = real_sets.detector_crops(frame, proposer)
    assert all(np.array_equal(a, b) for a, b in zip(first, xs[:6]))  # the first look's crops as before, then the closer look's


def test_a_detector_find_far_from_every_labelled_die_teaches_not_a_die():
    from vision.pipeline.propose import load_detector

    frame, placed = _rendered([2, 5, 6], 7)
    far = [lab for lab, d in zip(frame.labels, placed)
           if all(np.hypot(d.cx - o.cx, d.cy - o.cy) > 2 * d.side for o in placed if o is not d)]
    assert far, "the layout has a die well apart from the others"
    frame.labels = [lab for lab in frame.labels if lab is not far[0]]  # a find the labels do not hold
    _, ys = real_sets.detector_crops(frame, load_detector("learned"))
    assert ys.count(0) == 2 and len(ys) == 6
