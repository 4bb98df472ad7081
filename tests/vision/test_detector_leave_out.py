"""``detector.train --leave-out SET``: a detector that never saw one shared set's photos, neither to learn from nor
to pick its epoch on, so the whole reader can be read on dice and a camera it never met (models/DETECTOR_CARD.md,
"Dice never seen").

Which sets stay is plain Python and runs everywhere; the training command's refusals need PyTorch (the ``train``
extra) and are skipped without it.
"""

from __future__ import annotations

import argparse

import pytest

from models.training.detector import real


def test_leaving_rune55_out_drops_both_its_cameras_and_nothing_else():
    assert real.sets_without(("real-dice-rune55",)) == ("byler", "skovy")


def test_leaving_skovy_out_keeps_both_rune55_cameras():
    assert real.sets_without(("real-dice-skovy",)) == ("byler", "rune55-tray", "rune55-cup")


def test_leaving_nothing_out_keeps_every_frame_set_and_both_out_leaves_byler():
    assert real.sets_without(()) == real.SETS
    assert real.sets_without(("real-dice-skovy", "real-dice-rune55")) == ("byler",)


@pytest.mark.parametrize("folder, why", [
    ("real-dice-byler", "base model"),
    ("real-dice-patterson", "no whole frames"),
    ("real-dice-nowhere", "no such set"),
])
def test_a_set_the_detector_cannot_leave_out_is_refused_in_words(folder, why):
    with pytest.raises(ValueError) as refused:
        real.sets_without(("real-dice-skovy", folder))
    assert folder in str(refused.value) and why in str(refused.value)
    assert "real-dice-rune55, real-dice-skovy" in str(refused.value)  # what it can leave out


def test_the_command_refuses_such_a_set_before_it_makes_its_work_folder(tmp_path, capsys):
    pytest.importorskip("torch", reason="PyTorch is the optional train extra (make test-training installs it and runs these)")
    from models.training.detector.train import main

    with pytest.raises(SystemExit):
        main(["--leave-out", "real-dice-byler", "--work", str(tmp_path / "work")])
    assert "cannot leave out real-dice-byler" in capsys.readouterr().err
    assert not (tmp_path / "work").exists()


def _checkpoint(path, leave_out):
    torch = pytest.importorskip("torch", reason="PyTorch is the optional train extra (make test-training installs it and runs these)")
    args = {"widths": (8, 16)} | ({"leave_out": leave_out} if leave_out is not None else {})  # None: a run from before
    torch.save({"args": args, "model": {}}, path)


@pytest.mark.parametrize("theirs, ours", [((), ("real-dice-rune55",)), (("real-dice-skovy",), ("real-dice-rune55",)),
                                          (("real-dice-rune55",), ())])
def test_resuming_a_run_that_left_out_other_sets_is_refused_before_any_data_is_made(tmp_path, theirs, ours):
    _checkpoint(tmp_path / "last.pt", theirs)
    from models.training.detector.train import main

    with pytest.raises(SystemExit) as refused:
        main(["--work", str(tmp_path), "--resume"] + (["--leave-out", ",".join(ours)] if ours else []))
    assert "go on from a checkpoint of the same run" in str(refused.value)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["last.pt"]  # no frames rendered, nothing written


def test_starting_from_a_run_that_left_out_other_sets_is_refused(tmp_path):
    _checkpoint(tmp_path / "best.pt", ())
    from models.training.detector.train import main

    with pytest.raises(SystemExit) as refused:
        main(["--work", str(tmp_path / "run2"), "--init", str(tmp_path / "best.pt"), "--leave-out", "real-dice-skovy"])
    assert "left out no set, not real-dice-skovy" in str(refused.value)
    assert not any((tmp_path / "run2").iterdir())


@pytest.mark.parametrize("leave_out", [(), ("real-dice-rune55",)])
def test_a_checkpoint_of_the_same_run_goes_on(tmp_path, leave_out):
    _checkpoint(tmp_path / "last.pt", leave_out if leave_out else None)  # a run from before the option left none out
    from models.training.detector.train import refuse_other_runs

    refuse_other_runs(argparse.Namespace(resume=True, init=None, leave_out=leave_out), tmp_path)
    _checkpoint(tmp_path / "best.pt", leave_out)
    refuse_other_runs(argparse.Namespace(resume=False, init=str(tmp_path / "best.pt"), leave_out=leave_out), tmp_path / "new")


def test_the_rendered_frames_with_other_real_dice_pasted_in_are_cached_apart(tmp_path):
    pytest.importorskip("torch", reason="PyTorch is the optional train extra (make test-training installs it and runs these)")
    from models.training.detector.train import synth_cache

    every = synth_cache(tmp_path, 5, 2, None, 1)  # no real dice to paste in: rendered dice only
    without = synth_cache(tmp_path, 5, 2, None, 1, tag="-without-rune55")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["synth-5-2-without-rune55.npz", "synth-5-2.npz"]
    assert every["imgs"].shape == without["imgs"].shape
