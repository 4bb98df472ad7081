"""The head's rules, in small: when it corrects the shipped model, when a candidate is adopted, how the owner's crops are moved."""

from __future__ import annotations

import numpy as np

from vision.adapt import GATE_FULL, OVERTURNED_ODDS, Head, compare, jittered
from vision.classifier import CROP


def _head(gate_bias: float, correction: float = 10.0) -> Head:
    """A head on a 2-feature embedding that pushes face 3 by ``correction``; its gate is a constant ``sigmoid(gate_bias)``."""
    weights = np.zeros((2, 7), np.float32)
    bias = np.zeros(7, np.float32)
    bias[3] = correction
    return Head("m", np.zeros(2, np.float32), np.ones(2, np.float32), weights, bias, np.array([0.0, 0.0, gate_bias], np.float32))


def _logits(sure_face: int, margin: float) -> np.ndarray:
    z = np.zeros((1, 7), np.float32)
    z[0, sure_face] = margin
    return z


def test_a_sure_read_of_a_die_like_the_owners_is_corrected_but_not_one_of_other_dice():
    sure_wrong = _logits(2, 8.0)  # the shipped model sure of a 2 (p > 0.99)
    owners = _head(gate_bias=np.log(GATE_FULL / (1 - GATE_FULL)) + 1.0)  # the gate sure it is one of the owner's dice
    assert owners.corrected(sure_wrong, np.zeros((1, 2), np.float32)).argmax() == 3
    others = _head(gate_bias=-5.0)  # the gate sure it is not
    assert others.corrected(sure_wrong, np.zeros((1, 2), np.float32)).argmax() == 2


def _probabilities(logits: np.ndarray) -> np.ndarray:
    e = np.exp(logits - logits.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def test_a_face_the_head_overturns_is_read_but_never_sure():
    """The shipped model and the taught head disagree: the head's face wins, by too little for the reading to be ok (R14)."""
    from vision.pipeline.decide import is_sure

    owners = _head(gate_bias=np.log(GATE_FULL / (1 - GATE_FULL)) + 1.0)
    p = _probabilities(owners.corrected(_logits(2, 8.0), np.zeros((1, 2), np.float32)))[0]
    assert p.argmax() == 3 and np.isclose(np.log(p[3] / p[2]), OVERTURNED_ODDS, atol=1e-4)
    assert not is_sure(float(p[3]), float(p[2]), 0.5)


def test_a_face_the_head_only_makes_surer_may_be_sure():
    owners = _head(gate_bias=np.log(GATE_FULL / (1 - GATE_FULL)) + 1.0)
    p = _probabilities(owners.corrected(_logits(3, 2.0), np.zeros((1, 2), np.float32)))[0]  # the shipped model leans to 3, unsure
    assert p.argmax() == 3 and p[3] > 0.99


def test_an_unsure_read_is_corrected_only_as_far_as_the_gate_lets_it():
    unsure = _logits(2, 0.5)
    halfway = _head(gate_bias=float(np.log(0.8 / 0.2)))  # a gate score of 0.8: between the start and full
    corrected = halfway.corrected(unsure, np.zeros((1, 2), np.float32))
    assert 0 < corrected[0, 3] < 10 and corrected.argmax() == 3


def _scores(right: int, sure: int, silently_wrong: int = 0) -> dict:
    return {"dice": 12, "right": right, "accuracy": right / 12, "silently_wrong": silently_wrong, "sure_right": sure}


def test_as_many_right_but_more_of_them_sure_is_better_on_the_owners_dice():
    verdict = compare({"owner": _scores(12, 2), "rendered": _scores(12, 12)}, {"owner": _scores(12, 11), "rendered": _scores(12, 12)})
    assert verdict.adopt and "2 → 11 of them sure" in verdict.why


def test_no_better_on_the_owners_dice_is_refused_and_says_so():
    verdict = compare({"owner": _scores(12, 5)}, {"owner": _scores(12, 5)})
    assert not verdict.adopt and verdict.why.startswith("not better on your own dice (12 → 12 of 12 right, 5 → 5 of them sure)")
    assert not compare({"owner": _scores(12, 5)}, {"owner": _scores(11, 11)}).adopt


def test_surer_on_the_owners_dice_but_worse_elsewhere_is_refused():
    verdict = compare({"owner": _scores(12, 2), "rendered": _scores(12, 12)}, {"owner": _scores(12, 11), "rendered": _scores(11, 11)})
    assert not verdict.adopt and "worse on rendered" in verdict.why


def test_the_owners_crops_are_moved_a_little_and_the_same_every_time():
    rng = np.random.default_rng(0)
    crops = rng.integers(0, 255, (5, CROP, CROP, 3), dtype=np.uint8)
    a = jittered(crops, np.random.default_rng(29))
    b = jittered(crops, np.random.default_rng(29))
    assert a.shape == crops.shape and a.dtype == np.uint8 and np.array_equal(a, b)
    assert not np.array_equal(a, crops)


def test_a_die_the_taught_model_reads_otherwise_than_the_shipped_one_is_read_its_way_but_never_sure():
    """The eight looks of a rendered 5, read by the shipped model and by a head that pushes every die of the owner's
    towards 3: the taught model says 3 (the mean of its looks), the shipped model 5, so the die is not sure."""
    from vision.adapt import AdaptedClassifier
    from vision.classifier import cut_crop
    from vision.embedding import EmbeddingClassifier
    from vision.pipeline.decide import is_sure
    from vision.simtable import render_table

    frame, placed = render_table([5], np.random.default_rng(8), touching=0.0, glare=0)
    crop = cut_crop(frame, placed[0].cx, placed[0].cy, placed[0].side, placed[0].angle)[None]
    shipped = EmbeddingClassifier()
    d = shipped.logits_and_embedding(crop)[1].shape[1]
    always = np.zeros(d + 1, np.float32)
    always[-1] = 50.0  # the gate: every die is the owner's
    bias = np.zeros(7, np.float32)
    bias[3] = 40.0
    head = Head(shipped.model_id, np.zeros(d, np.float32), np.ones(d, np.float32), np.zeros((d, 7), np.float32), bias, always)
    assert shipped.probabilities_turned(crop)[0].argmax() == 5
    taught = AdaptedClassifier(head)
    first, _ = taught.probabilities_and_embedding(crop)  # the reader's first look, which keeps the embedding
    np.testing.assert_array_equal(first, taught.probabilities(crop))
    assert first[0].argmax() == 3
    p = taught.probabilities_turned(crop)[0]
    assert p.argmax() == 3
    runner_up = np.sort(p[1:])[-2]
    assert not is_sure(float(p[3]), float(runner_up), 0.5)


def test_the_renderers_check_set_is_made_again_when_its_crops_are_gone_never_read_as_no_dice(tmp_path):
    """A taught model must read the renderer's dice no worse than the active one; a set whose crops were deleted read as
    0 dice, so any model passed that check (found by a CLI audit)."""
    import shutil

    from vision.adapt import read_crops_csv, write_rendered_set

    folder = write_rendered_set(tmp_path / "eval-rendered", dice=12)
    listed = read_crops_csv(folder)
    assert len(listed) == 12 and all(path.is_file() for path, _, _ in listed)
    kept = {path: path.stat().st_mtime_ns for path, _, _ in listed}
    assert write_rendered_set(folder, dice=12) == folder  # whole: kept as it is, not drawn again
    assert {path: path.stat().st_mtime_ns for path, _, _ in read_crops_csv(folder)} == kept
    listed[3][0].unlink()  # one crop gone
    write_rendered_set(folder, dice=12)
    assert all(path.is_file() for path, _, _ in read_crops_csv(folder))
    shutil.rmtree(folder / "crops")  # every crop gone, crops.csv and VERSION kept
    again = read_crops_csv(write_rendered_set(folder, dice=12))
    assert [(p.name, v) for p, v, _ in again] == [(p.name, v) for p, v, _ in listed] and all(p.is_file() for p, _, _ in again)


def test_the_renderers_check_set_that_cannot_be_written_is_refused_in_words(tmp_path):
    import pytest

    from vision.adapt import TeachError, write_rendered_set

    (tmp_path / "models").write_text("a file where the models folder belongs")
    with pytest.raises(TeachError, match="cannot be written in .*eval-rendered \\(Not a directory\\)"):
        write_rendered_set(tmp_path / "models" / "eval-rendered", dice=3)
    assert (tmp_path / "models").read_text() == "a file where the models folder belongs"
