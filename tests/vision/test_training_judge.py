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


def test_a_candidate_that_reads_fewer_table_frames_ok_or_more_wrong_is_named_worse():
    from models.training.judge import table_lines, worse

    shipped = {"model": "a", "table_tray": {"frames": 432, "ok_and_right": 426, "uncertain": 6, "ok_but_wrong": 0}}
    candidate = {"model": "b", "table_tray": {"frames": 432, "ok_and_right": 411, "uncertain": 20, "ok_but_wrong": 1}}
    assert worse(candidate, shipped) == ["table_tray: 411 frames ok and right against 426",
                                         "table_tray: 1 frames ok but wrong against 0"]
    assert worse(shipped, shipped) == []
    assert table_lines([shipped, candidate])[0].split() == ["table_tray", "432", "426", "(0)", "411", "(1)"]


def test_a_negative_number_of_table_layouts_is_refused_in_words(capsys):
    with pytest.raises(SystemExit):
        main([str(SHIPPED), "--table", "-1"])
    assert "--table is how many times the 216 outcomes are rendered" in capsys.readouterr().err


def test_the_table_is_read_three_ways_every_frame_counted_once_and_none_ok_but_wrong():
    """The shipped pair on the 216 outcomes once: knowing nothing, the size, the whole tray mode (about 40 s)."""
    from models.training.judge import TABLE_MODES, judge_table, reader_of

    read = judge_table(reader_of(None), 1)
    assert list(read) == [name for name, *_ in TABLE_MODES]
    for counts in read.values():
        assert counts["frames"] == 216
        assert counts["ok_and_right"] + counts["uncertain"] + counts["ok_but_wrong"] == 216
        assert counts["ok_but_wrong"] == 0  # a silent wrong verdict on the game's own dice: never
