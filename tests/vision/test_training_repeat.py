"""``train --repeat SOURCE=N`` shows a training source N times an epoch; a bad value is refused in words.

These need PyTorch, the ``train`` extra (``make train`` installs it); without it they are skipped.
"""

from __future__ import annotations

import argparse

import pytest

pytest.importorskip("torch", reason="PyTorch is the optional train extra (make test-training installs it and runs these)")

from models.training.train import parse_repeats, run_key  # noqa: E402


def test_repeats_are_read_as_source_and_count():
    assert parse_repeats("set_rune55-tray=3, set_skovy=2") == {"set_rune55-tray": 3, "set_skovy": 2}


@pytest.mark.parametrize("bad", ["set_skovy", "set_skovy=0", "set_skovy=two", "=3x"])
def test_a_repeat_that_is_not_a_source_and_a_whole_count_is_refused(bad):
    with pytest.raises(argparse.ArgumentTypeError, match="SOURCE=N"):
        parse_repeats(bad)


def test_a_run_without_repeats_keeps_the_checkpoint_key_it_had_before_the_option():
    before = argparse.Namespace(seed=3, epochs=5)
    assert run_key(argparse.Namespace(seed=3, epochs=5, repeat={})) == run_key(before)
    assert run_key(argparse.Namespace(seed=3, epochs=5, repeat={"set_skovy": 2})) != run_key(before)


def test_a_run_without_the_closer_look_crops_keeps_its_data_cache_and_checkpoint_keys():
    """``--detector-closer`` off: ``make train``'s recipe finds the data cache and checkpoints it made before the option."""
    from models.training.train import DATA_ARGS

    before = argparse.Namespace(seed=3, epochs=5, detector_reps=2)
    off = argparse.Namespace(seed=3, epochs=5, detector_reps=2, detector_closer=False)
    on = argparse.Namespace(seed=3, epochs=5, detector_reps=2, detector_closer=True)
    assert run_key(off) == run_key(before) and run_key(off, DATA_ARGS) == run_key(before, DATA_ARGS)
    assert run_key(on, DATA_ARGS) != run_key(before, DATA_ARGS)


@pytest.mark.parametrize("option", ["other_bodies", "faint_marks", "numerals", "other_marks", "round_things", "hard_repeat"])
def test_a_run_without_drawn_extras_keeps_its_data_cache_and_checkpoint_keys(option):
    """``--other-bodies 0``, ``--faint-marks 0``, ``--numerals 0``, ``--other-marks 0`` or ``--hard-repeat 0``: ``make train``'s recipe finds the checkpoints
    it made before the option; the data cache is shared with runs that add them (drawn or chosen after it)."""
    from models.training.train import DATA_ARGS

    before = argparse.Namespace(seed=3, epochs=5, detector_reps=2)
    off = argparse.Namespace(seed=3, epochs=5, detector_reps=2, **{option: 0})
    on = argparse.Namespace(seed=3, epochs=5, detector_reps=2, **{option: 3000})
    assert run_key(off) == run_key(before) and run_key(on) != run_key(before)
    assert run_key(on, DATA_ARGS) == run_key(before, DATA_ARGS)


@pytest.mark.parametrize("flag", ["--other-bodies", "--faint-marks", "--numerals", "--other-marks", "--round-things"])
def test_a_negative_count_of_drawn_extras_is_refused_in_words(capsys, flag):
    from models.training.train import main

    with pytest.raises(SystemExit):
        main([flag, "-5", "--quick"])
    assert f"{flag} is a number of crops" in capsys.readouterr().err


@pytest.mark.parametrize("argv", [["--hard-repeat", "2"], ["--hard-repeat", "-1", "--init", "models/dice-faces-b86d9ba9d319.onnx"]])
def test_hard_examples_without_a_starting_model_or_a_count_are_refused_in_words(capsys, argv):
    """The hard crops are the ones the ``--init`` model reads badly: without it there is nothing to ask."""
    from models.training.train import main

    with pytest.raises(SystemExit):
        main(argv + ["--quick"])
    assert "--hard-repeat is a number of extra showings" in capsys.readouterr().err


def test_hard_examples_are_the_crops_the_model_reads_with_their_own_face_under_half():
    """Drawn dice the shipped model reads surely are not hard under their own face, and are hard labelled with the
    face it thinks least likely: the model is asked as it reads in use, not as the training net is."""
    import numpy as np

    from models.training import data
    from models.training.train import hard_examples
    from vision.classifier import FaceClassifier

    classifier = FaceClassifier()
    crops, faces = data.synth_face_crops(40, np.random.default_rng(5))
    read = classifier.probabilities(crops)
    sure = read[np.arange(len(faces)), faces] > 0.9
    assert sure.sum() >= 20
    crops, faces, read = crops[sure], faces[sure], read[sure]
    assert not hard_examples(classifier.path, crops, faces).any()
    assert hard_examples(classifier.path, crops, read.argmin(axis=1)).all()
