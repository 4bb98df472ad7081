"""``python -m models.training.speed``: the face models timed as the reader runs them, and bad paths refused in words."""

from __future__ import annotations

import pytest

from models.training.speed import main
from vision.classifier import shipped_model_path


def test_the_shipped_model_and_a_named_one_are_timed_with_their_sizes(capsys):
    assert main(["--repeats", "5"]) == 0
    assert main([str(shipped_model_path()), "--repeats", "5"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("shipped: median ") and "for 3 crops" in lines[0]
    assert lines[1].startswith(str(shipped_model_path())) and f"{shipped_model_path().stat().st_size} bytes" in lines[1]


def test_a_missing_file_is_refused_in_words(tmp_path, capsys):
    with pytest.raises(SystemExit) as stop:
        main([str(tmp_path / "none.onnx")])
    assert stop.value.code == 2 and "no such model file" in capsys.readouterr().err


def test_a_file_that_is_not_a_model_is_refused_in_words(tmp_path, capsys):
    bad = tmp_path / "notes.onnx"
    bad.write_text("not a model")
    assert main([str(bad), "--repeats", "5"]) == 1
    said = capsys.readouterr().err
    assert "cannot be loaded, so it cannot be timed" in said and "reinstall the companion" not in said


def test_the_detectors_file_is_refused_as_no_face_model_without_telling_to_reinstall(capsys):
    """A candidate that loads but is no face model (here the shipped detector): the reader's words, not its advice to
    reinstall the companion, which a file named to time does not need."""
    from vision.detector_learned import default_model_path

    assert main([str(default_model_path()), "--repeats", "5"]) == 1
    said = capsys.readouterr().err
    assert "is not a face model" in said and "so it cannot be timed" in said and "reinstall" not in said


def test_repeats_below_one_are_refused(capsys):
    with pytest.raises(SystemExit) as stop:
        main(["--repeats", "0"])
    assert stop.value.code == 2 and "--repeats" in capsys.readouterr().err
