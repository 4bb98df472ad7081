"""Fitting the leaning cue (``models.training.leaning_cue``): numpy only, so these run in CI."""

from __future__ import annotations

import numpy as np
import pytest

from models.training.leaning_cue import fit, frames_flagged, main
from vision.classifier import shipped_model_id
from vision.leaning_cue import LeaningCue


def test_the_fit_tells_apart_features_that_differ():
    rng = np.random.default_rng(0)
    flat = rng.normal(0, 1, (3000, 8)).astype(np.float32)
    leaning = rng.normal(0, 1, (1000, 8)).astype(np.float32)
    leaning[:, 3] += 6  # one feature says "a side face shows"
    cue = fit(np.concatenate([flat, leaning]), np.array([0] * 3000 + [1] * 1000), "m", threshold=0.5)
    assert np.mean(cue.leaning(leaning)) > 0.95 and np.mean(cue.leaning(flat)) < 0.02


def test_frames_are_counted_once_whichever_of_their_dice_is_doubted():
    cue = LeaningCue(np.array([1.0], np.float32), 0.0, np.zeros(1, np.float32), np.ones(1, np.float32), "m", 0.9)
    x = np.array([[9.0], [9.0], [-9.0], [-9.0], [9.0]], np.float32)
    assert frames_flagged(cue, x, np.array([1, 1, 2, 2, 3])) == (2, 3)


def test_the_command_writes_a_cue_for_the_shipped_classifier(tmp_path, capsys):
    out = tmp_path / "cue.npz"
    assert main(["--leaning", "5", "--flat", "5", "--above", "0", "--no-real-flat", "--out", str(out)]) == 0
    cue = LeaningCue.load(out)
    assert cue.classifier_id == shipped_model_id() and cue.width > 0
    said = capsys.readouterr().out
    assert "held out, from below:" in said and "from above" not in said and "real" not in said


def test_frames_from_above_and_real_train_photos_of_flat_dice_are_fit_and_reported(tmp_path, capsys, monkeypatch):
    """From above the cue is the only leaning check, and real photos' flat dice show side faces: both are in the fit,
    each with its held-out count. Only ``train`` photos are read, never a val or test split."""
    import models.training.leaning_cue as leaning_cue
    from vision.dataset import shared_datasets

    if not (shared_datasets() / "real-dice-byler" / "split.json").is_file():
        pytest.skip("the shared sets are not beside the repository")
    read: list[str] = []
    real_split_names = leaning_cue.split_names
    monkeypatch.setattr(leaning_cue, "split_names", lambda root, split: read.append(split) or real_split_names(root, split))
    out = tmp_path / "cue.npz"
    assert main(["--leaning", "5", "--flat", "5", "--above", "10", "--real-photos", "5", "--out", str(out)]) == 0
    said = capsys.readouterr().out
    assert "held out, from above: " in said and "flat frames doubted" in said.split("from above")[1]
    assert "held out, real train photos read as seen: " in said
    assert read and set(read) == {"train"}
    assert LeaningCue.load(out).classifier_id == shipped_model_id()


def test_too_few_frames_are_refused_in_words(capsys):
    with pytest.raises(SystemExit):
        main(["--leaning", "2", "--flat", "5"])
    assert "at least 5 frames" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["--leaning", "5", "--flat", "5", "--above", "4"])
    assert "at least 10 from above" in capsys.readouterr().err


def test_the_command_writes_a_cue_for_a_candidate_model_named_by_its_file(tmp_path, capsys):
    from pathlib import Path

    from vision.classifier import file_model_id

    candidate = Path("models/training/base/dice-faces-5bbb6f704193.onnx")
    out = tmp_path / "cue.npz"
    assert main(["--leaning", "5", "--flat", "5", "--above", "0", "--no-real-flat", "--model", str(candidate), "--out", str(out)]) == 0
    cue = LeaningCue.load(out)
    assert cue.classifier_id == file_model_id(candidate) != shipped_model_id()
    assert "classifier dice-faces-5bbb6f704193" in capsys.readouterr().out


@pytest.mark.parametrize("argv, says", [
    (["--model", "nowhere.onnx", "--out", "cue.npz"], "there is no model file at nowhere.onnx"),
    (["--model", "models/training/base/dice-faces-5bbb6f704193.onnx"], "goes elsewhere than the shipped cue: give --out"),
])
def test_a_candidate_cue_without_its_model_file_or_over_the_shipped_cue_is_refused_in_words(argv, says, capsys):
    with pytest.raises(SystemExit):
        main(argv)
    assert says in capsys.readouterr().err
