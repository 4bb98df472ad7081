"""The candidate judge: every set a choice may read (never Byler's test split), the shipped model first."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from models.training.judge import JUDGED, main
from vision.classifier import shipped_model_path
from vision.detector_learned import default_model_path

SHIPPED = shipped_model_path()  # the file models/shipped.json names
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


@pytest.fixture(scope="module")
def base_cues(tmp_path_factory) -> tuple[Path, dict[str, Path]]:
    """The base model's own cues fit once at the fits' test size (half a minute each) into a folder of this module's,
    and what ``candidate_cues`` gave: the tests that judge the base model read them from there."""
    from models.training.judge import candidate_cues

    folder = tmp_path_factory.mktemp("base-cues")
    return folder, candidate_cues(BASE, folder, leaning=True, quick=True)


def test_a_candidate_that_reads_fewer_dice_right_is_named_worse(real_dataset, capsys, base_cues, monkeypatch):
    """The base model, before stage 2 learned the shared sets' dice, reads patterson's val crops worse. Its own
    number-dice cue is fit at the fit's test size, into a folder of the tests' own (the full fit, four minutes on a
    fresh clone, is the cue command's; a cue only doubts dice, so the dice right do not depend on it)."""
    import functools

    from models.training import judge

    monkeypatch.setattr(judge, "candidate_cues", functools.partial(judge.candidate_cues, quick=True))
    main([str(BASE), "--only", "patterson_val_crops", "--cues", str(base_cues[0])])
    out = capsys.readouterr().out
    rows = {line.split()[0]: line.split() for line in out.splitlines()}
    assert rows["patterson_val_crops"][1] == "49"
    shipped_right, base_right = int(rows["patterson_val_crops"][2]), int(rows["patterson_val_crops"][5])
    assert base_right < shipped_right
    assert f"dice-faces-5bbb6f704193: patterson_val_crops: {base_right} right against {shipped_right}" in out


def test_a_candidate_detector_is_named_beside_its_classifier(real_dataset, capsys):
    detector = default_model_path()
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


def test_a_candidate_with_more_wrong_verdicts_on_things_not_dice_is_named_worse():
    from models.training.judge import table_lines, worse

    shipped = {"model": "a", "things in a die's place": {"frames": 160, "ok": 5, "wrong_verdicts": 5}}
    candidate = {"model": "b", "things in a die's place": {"frames": 160, "ok": 7, "wrong_verdicts": 6}}
    assert worse(candidate, shipped) == ["things in a die's place: 6 wrong verdicts against 5"]
    assert worse(shipped, candidate) == []
    assert table_lines([shipped, candidate])[0].split() == ["things_in_a_die's_place", "160", "5", "(5)", "7", "(6)"]


def test_the_judge_reads_the_things_not_dice_in_each_way(val_dice, capsys):
    from models.training.not_dice import KINDS, MODES

    main([str(SHIPPED), "--only", "skovy_val_crops", "--things", "1", "--json"])
    report = json.loads(capsys.readouterr().out)
    shipped, candidate = report["results"]
    assert [shipped[f"things {mode}"]["frames"] for mode in MODES] == [len(KINDS)] * len(MODES)
    assert shipped == candidate and report["worse"] == {shipped["model"]: []}


def test_a_candidate_that_reads_covered_dice_surely_wrong_is_named_worse():
    from models.training.judge import table_lines, worse

    shipped = {"model": "a", "covered": {"frames": 60, "ok": 9, "wrong_verdicts": 0, "covered_surely_wrong": 0}}
    candidate = {"model": "b", "covered": {"frames": 60, "ok": 12, "wrong_verdicts": 1, "covered_surely_wrong": 2}}
    assert worse(candidate, shipped) == ["covered: 1 wrong verdicts against 0",
                                         "covered: 2 covered dice read wrong without a doubt against 0"]
    assert worse(shipped, candidate) == []
    assert table_lines([shipped, candidate])[0].split() == ["covered", "60", "9", "(0)", "12", "(1)"]


def test_the_judge_reads_the_covered_dice(val_dice, capsys):
    from models.training.covered import KINDS

    main([str(SHIPPED), "--only", "skovy_val_crops", "--covered", "1", "--json"])
    report = json.loads(capsys.readouterr().out)
    shipped, candidate = report["results"]
    assert shipped["covered"]["frames"] == len(KINDS)
    assert shipped == candidate and report["worse"] == {shipped["model"]: []}


@pytest.mark.parametrize("flag", ["--table", "--things", "--covered"])
def test_a_negative_number_of_scenes_is_refused_in_words(capsys, flag):
    with pytest.raises(SystemExit):
        main([str(SHIPPED), flag, "-1"])
    assert f"{flag} is how many" in capsys.readouterr().err


def test_the_table_is_read_three_ways_every_frame_counted_once_and_none_ok_but_wrong():
    """The shipped pair on the 216 outcomes once: knowing nothing, the size, the whole tray mode (about 40 s)."""
    from models.training.judge import TABLE_MODES, judge_table, reader_of

    read = judge_table(reader_of(None), 1)
    assert list(read) == [name for name, *_ in TABLE_MODES]
    for counts in read.values():
        assert counts["frames"] == 216
        assert counts["ok_and_right"] + counts["uncertain"] + counts["ok_but_wrong"] == 216
        assert counts["ok_but_wrong"] == 0  # a silent wrong verdict on the game's own dice: never


def test_a_candidate_is_read_with_cues_fit_on_its_own_model_once(real_dataset, base_cues):
    """Fit on the shipped model, the shipped cues would not be used for the base model; its own are fit, kept and
    used again as they are."""
    from models.training.judge import candidate_cues, reader_of
    from vision.classifier import file_model_id

    assert "fit on the dice model" in reader_of(BASE).number_problem
    folder, cues = base_cues
    assert sorted(cues) == ["leaning_cue", "number_cue"] and all(path.parent == folder for path in cues.values())
    reader = reader_of(BASE, cues=cues)
    assert reader.number_problem is None and reader.leaning_problem is None
    assert reader.number_cue.classifier_id == reader.leaning_cue.classifier_id == file_model_id(BASE)
    written = {key: path.stat().st_mtime_ns for key, path in cues.items()}
    assert candidate_cues(BASE, folder, leaning=True, quick=True) == cues
    assert {key: path.stat().st_mtime_ns for key, path in cues.items()} == written
    assert candidate_cues(SHIPPED, folder, leaning=True, quick=True) == {}  # its cues are the shipped ones


def test_a_cue_file_fit_on_another_model_is_fit_again(real_dataset, tmp_path):
    from models.training.judge import candidate_cues
    from vision.classifier import file_model_id
    from vision.number_cue import NumberCue, shipped_cue_path

    path = tmp_path / f"{file_model_id(BASE)}-quick-number-cue.npz"
    path.write_bytes(shipped_cue_path().read_bytes())  # the shipped model's cue under the candidate's name
    cues = candidate_cues(BASE, tmp_path, leaning=False, quick=True)
    assert cues == {"number_cue": path} and NumberCue.load(path).classifier_id == file_model_id(BASE)


def test_a_refit_number_cue_is_judged_as_the_shipped_model_with_it(real_dataset, capsys):
    """The shipped cue given as the refit one: the same model with the same cue reads every die as shipped."""
    from vision.number_cue import shipped_cue_path

    main(["--number-cue", str(shipped_cue_path()), "--only", "skovy_val_crops", "--json"])
    report = json.loads(capsys.readouterr().out)
    shipped, candidate = report["results"]
    assert candidate["model"] == f"{SHIPPED.stem} with {shipped_cue_path().stem}"
    assert {k: v for k, v in candidate.items() if k != "model"} == {k: v for k, v in shipped.items() if k != "model"}
    assert report["worse"] == {candidate["model"]: []}


def test_nothing_to_judge_is_refused_in_words(capsys):
    with pytest.raises(SystemExit):
        main(["--only", "skovy_val_crops"])
    assert "name a candidate to judge" in capsys.readouterr().err


def test_a_number_cue_that_is_missing_or_fit_on_another_model_is_refused_in_words(tmp_path, capsys):
    from vision.number_cue import NumberCue, shipped_cue_path

    with pytest.raises(SystemExit):
        main(["--number-cue", str(tmp_path / "none.npz")])
    assert "the number-dice cue none.npz is missing" in capsys.readouterr().err
    other = tmp_path / "other.npz"
    NumberCue(**{**NumberCue.load(shipped_cue_path()).__dict__, "classifier_id": "dice-faces-000000000000"}).save(other)
    with pytest.raises(SystemExit):
        main(["--number-cue", str(other)])
    assert "was fit on the dice model dice-faces-000000000000, not the shipped" in capsys.readouterr().err
