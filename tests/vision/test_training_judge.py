"""The candidate judge: every set a choice may read (never Byler's test split), the shipped model first."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from models.training.judge import JUDGED, main

SHIPPED = next(Path("models").glob("dice-faces-*.onnx"))
BASE = Path("models/training/base/dice-faces-5bbb6f704193.onnx")


def test_byler_test_split_is_never_among_the_judged_sets(capsys):
    assert all(split != "test" for _, _, split, _ in JUDGED)
    assert {"rune55_val", "skovy_val", "patterson_val_crops", "cup_one", "big", "far", "mid", "many", "rendered"} <= {n for n, *_ in JUDGED}
    with pytest.raises(SystemExit):
        main([str(SHIPPED), "--only", "byler_test"])
    assert "invalid choice: 'byler_test'" in capsys.readouterr().err


def test_a_model_file_that_is_not_there_is_refused_in_words(tmp_path, capsys):
    with pytest.raises(SystemExit):
        main([str(tmp_path / "nowhere.onnx")])
    assert "there is no model file at" in capsys.readouterr().err


def test_the_shipped_model_judged_against_itself_is_worse_nowhere(real_dataset, capsys):
    main([str(SHIPPED), "--only", "skovy_val_crops", "--json"])
    report = json.loads(capsys.readouterr().out)
    shipped, candidate = report["results"]
    assert shipped == candidate and shipped["skovy_val_crops"]["dice"] == 22
    assert report["worse"] == {shipped["model"]: []}


def test_a_candidate_that_reads_fewer_dice_right_is_named_worse(real_dataset, capsys):
    """The base model, before stage 2 learned the shared sets' dice, reads patterson's val crops worse."""
    main([str(BASE), "--only", "patterson_val_crops"])
    out = capsys.readouterr().out
    rows = {line.split()[0]: line.split() for line in out.splitlines()}
    assert rows["patterson_val_crops"][1] == "49"
    shipped_right, base_right = int(rows["patterson_val_crops"][2]), int(rows["patterson_val_crops"][5])
    assert base_right < shipped_right
    assert f"dice-faces-5bbb6f704193: patterson_val_crops: {base_right} right against {shipped_right}" in out


def test_a_candidate_detector_is_named_beside_its_classifier(real_dataset, capsys):
    detector = next(Path("models").glob("dice-detector-*.onnx"))
    main([str(SHIPPED), "--detector", str(detector), "--only", "skovy_val_crops", "--json"])
    report = json.loads(capsys.readouterr().out)
    assert report["results"][1]["model"] == f"{SHIPPED.stem} with {detector.stem}"
    assert report["results"][0]["model"] == SHIPPED.stem
