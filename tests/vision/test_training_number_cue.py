"""The number-dice cue screen: fit on the embedding, read on dice it never saw (``models.training.number_cue``)."""

from __future__ import annotations

import json

import pytest

from models.training import number_cue


def test_the_screened_cue_flags_number_dice_and_leaves_real_pip_dice_read_sure(real_dataset, capsys):
    assert number_cue.main(["--quick", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["model"].startswith("dice-faces-") and report["fit on"]["real train dice"] > 100
    flagged = report["flagged"]
    numbers = flagged["other_looks number dice"]
    assert numbers["n"] == 60 and numbers["at 0.7"] >= numbers["n"] // 2  # dice of another drawer and other fonts
    real = [row for name, row in flagged.items() if name.startswith("val_")]
    assert sum(row["n"] for row in real) > 200
    assert sum(row["at 0.7"] for row in real) <= 0.01 * sum(row["n"] for row in real)
    game = flagged["rendered game dice, read sure and right"]
    assert game["at 0.7"] <= 0.02 * game["n"]


def test_a_missing_model_is_refused_in_words(tmp_path, capsys):
    with pytest.raises(SystemExit):
        number_cue.main([str(tmp_path / "nothing.onnx"), "--quick"])
    assert "there is no model file at" in capsys.readouterr().err
