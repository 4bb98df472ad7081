"""``train --leave-out SET``: a run that never sees one shared set's dice, to measure how the recipe reads dice it
was never shown (docs/classifier-log.md, "Dice never seen").

The set's own sources go, and so do the detector's crops of its frames, which lie inside ``set_detector`` among
every other set's: ``real_sets.detector_crop_span`` must find exactly them in the order ``all_detector_crops``
cut them. These need PyTorch (the ``train`` extra); without it they are skipped.
"""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("torch", reason="PyTorch is the optional train extra (make test-training installs it and runs these)")

from models.training import real_sets  # noqa: E402
from models.training.train import without_sets  # noqa: E402
from vision.classifier import CROP  # noqa: E402

#: Three frame sets, one with two subsets, as real_sets.FRAME_SETS is laid out; each frame gives this many crops.
FAKE_SETS = {"real-dice-a": {"x": (1, 1), "y": (1, 1)}, "real-dice-b": {None: (1, 1)}, "real-dice-c": {None: (1, 1)}}
FRAMES = {("real-dice-a", "x"): [3, 0, 2], ("real-dice-a", "y"): [1], ("real-dice-b", None): [4, 4], ("real-dice-c", None): [2]}
SET_CODE = {"byler": 9, "real-dice-a": 1, "real-dice-b": 2, "real-dice-c": 3}


@pytest.fixture
def fake_frames(monkeypatch):
    """Frames whose crops carry their set's code in every pixel, counted per frame as FRAMES says."""
    monkeypatch.setattr(real_sets, "FRAME_SETS", FAKE_SETS)
    monkeypatch.setattr(real_sets, "frames", lambda name, split, subset=None: [(name, n) for n in FRAMES[(name, subset)]])
    monkeypatch.setattr(real_sets, "byler_frames", lambda names: [("byler", 5)] * len(names))

    def crops(frame, proposer, closer=False):
        name, n = frame
        return [np.full((CROP, CROP, 3), SET_CODE[name], np.uint8)] * n, [1] * n

    monkeypatch.setattr(real_sets, "detector_crops", crops)
    import vision.pipeline.propose as propose

    monkeypatch.setattr(propose, "load_detector", lambda kind, path=None: None)


@pytest.mark.parametrize("left_out", ["real-dice-a", "real-dice-b", "real-dice-c"])
def test_the_detector_crops_left_out_are_exactly_the_sets_own_in_every_copy(fake_frames, left_out):
    x, y = real_sets.all_detector_crops(["p1", "p2"])
    sets = {"set_detector": (np.concatenate([x] * 2), np.concatenate([y] * 2))}
    out = without_sets(sets, (left_out,), {left_out: real_sets.detector_crop_span(left_out)}, copies=2)
    codes = out["set_detector"][0][:, 0, 0, 0]
    before = np.concatenate([x] * 2)[:, 0, 0, 0]
    assert SET_CODE[left_out] not in codes
    for other in set(SET_CODE) - {left_out}:
        assert (codes == SET_CODE[other]).sum() == (before == SET_CODE[other]).sum()


def test_a_set_without_frames_leaves_the_detector_crops_alone(fake_frames):
    assert real_sets.detector_crop_span("real-dice-patterson") == (0, 0)
    sets = {"set_patterson-crops": 1, "set_detector": (np.arange(6), np.arange(6))}
    out = without_sets(sets, ("real-dice-patterson",), {"real-dice-patterson": (0, 0)}, copies=2)
    assert list(out) == ["set_detector"] and out["set_detector"][0].tolist() == list(range(6))


@pytest.mark.parametrize("argv, words", [
    (["--leave-out", "real-dice-byler"], "cannot leave out"),
    (["--leave-out", "real-dice-nowhere"], "cannot leave out"),
    (["--leave-out", "real-dice-skovy", "--quick"], "whole run's data"),
])
def test_a_set_training_cannot_leave_out_is_refused_in_words_before_any_data_is_made(argv, words, capsys, tmp_path):
    from models.training.train import main

    with pytest.raises(SystemExit):
        main(argv + ["--work", str(tmp_path)])
    assert words in capsys.readouterr().err
    assert not any(tmp_path.iterdir())


def test_a_run_that_leaves_no_set_out_keeps_its_keys_and_one_that_does_gets_its_own_checkpoint_not_its_own_data():
    import argparse

    from models.training.train import DATA_ARGS, run_key

    before = argparse.Namespace(seed=3, epochs=5)
    assert run_key(argparse.Namespace(seed=3, epochs=5, leave_out=())) == run_key(before)
    left_out = argparse.Namespace(seed=3, epochs=5, leave_out=("real-dice-patterson",))
    assert run_key(left_out) != run_key(before)
    assert run_key(left_out, DATA_ARGS) == run_key(before, DATA_ARGS)  # the data cache is shared: the set is dropped after
