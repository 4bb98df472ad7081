"""The number-dice cue's fit (``models.training.number_cue``): it writes a cue the reader loads, fit on the embedding,
that flags number dice it never saw and leaves real pip dice read sure alone; it refuses what it must not write."""

from __future__ import annotations

import json

import pytest

from models.training import number_cue
from vision.classifier import shipped_model_id
from vision.number_cue import NumberCue, load_cue


def test_the_fit_writes_a_cue_that_flags_number_dice_and_leaves_real_pip_dice_read_sure(real_dataset, tmp_path, capsys):
    out = tmp_path / "cue.npz"
    assert number_cue.main(["--quick", "--json", "--out", str(out)]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["model"].startswith("dice-faces-") and report["fit on"]["real train dice"] > 100
    cue = NumberCue.load(out)
    assert cue.classifier_id == shipped_model_id() and cue.threshold == pytest.approx(number_cue.THRESHOLD)
    assert load_cue(shipped_model_id(), cue.width, out)[0] is not None
    flagged = report["flagged"]
    numbers = flagged["other_looks number dice"]
    assert numbers["n"] == 60 and numbers["doubted"] >= numbers["n"] // 2  # dice of another drawer and other fonts
    real = [row for name, row in flagged.items() if name.startswith("val_") or name.startswith("byler")]
    assert sum(row["n"] for row in real) > 200
    assert sum(row["doubted"] for row in real) <= 0.01 * sum(row["n"] for row in real)
    game = flagged["rendered game dice, read sure and right"]
    assert game["doubted"] <= 0.02 * game["n"]


def test_a_missing_model_is_refused_in_words(tmp_path, capsys):
    with pytest.raises(SystemExit):
        number_cue.main([str(tmp_path / "nothing.onnx"), "--quick", "--out", str(tmp_path / "cue.npz")])
    assert "there is no model file at" in capsys.readouterr().err


@pytest.mark.parametrize("args", [["--quick"], ["MODEL", "--quick"]])
def test_a_quick_or_candidates_cue_never_overwrites_the_shipped_one(tmp_path, capsys, args):
    model = tmp_path / "candidate.onnx"
    model.write_bytes(b"not read: refused first")
    with pytest.raises(SystemExit):
        number_cue.main([str(model) if a == "MODEL" else a for a in args])
    assert "give --out" in capsys.readouterr().err


def test_things_not_dice_taught_to_the_cue_are_doubted_where_the_shipped_recipe_lets_most_through(real_dataset, tmp_path, capsys):
    """``--things N`` adds drawn things that are not dice to what the cue doubts: most of the held-out ones of the same
    drawer are then doubted (the shipped cue doubts about one in fourteen of them)."""
    out = tmp_path / "cue.npz"
    assert number_cue.main(["--quick", "--json", "--things", "300", "--out", str(out)]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["fit on"]["things that are not dice"] == 300
    things = report["flagged"]["things that are not dice of the fit's drawer"]
    assert things["n"] == 300 and things["doubted"] > 0.5 * things["n"]
    real = [row for name, row in report["flagged"].items() if name.startswith("val_") or name.startswith("byler")]
    assert sum(row["doubted"] for row in real) <= 0.02 * sum(row["n"] for row in real)


@pytest.mark.parametrize("args, words", [(["--things", "-1"], "--things is a number of drawn things"),
                                         (["--things", "10"], "a cue fit with --things is a candidate")])
def test_a_negative_count_of_things_or_a_things_cue_over_the_shipped_one_is_refused_in_words(capsys, args, words):
    with pytest.raises(SystemExit):
        number_cue.main(args)
    assert words in capsys.readouterr().err
