"""make pi-check's comparison and its conformance set, without emulation.

The comparison runs on two synthetic result files as ``read --json`` writes
them; the set is checked for size, provenance (never Byler's test split) and
that its manifest names every frame.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from tests.deploy.scripts import ROOT, load_script

FRAMES = ROOT / "tests" / "conformance" / "frames"
MANIFEST = ROOT / "tests" / "conformance" / "frames.json"
DATASETS = ROOT.parent / "shared" / "datasets"


pi_check = load_script("pi_check_under_test", ROOT / "deploy" / "pi" / "pi_check.py")


def lines(*readings: dict) -> str:
    return "".join(json.dumps(r) + "\n" for r in readings)


def reading(file: str, status: str, *faces: tuple[int, int], confidence: float = 0.99) -> dict:
    return {"file": file, "status": status, "reason": None, "total": sum(t for _, t in faces),
            "dice": [{"seen": s, "top": t, "confidence": confidence, "box": [0, 0, 10, 10]} for s, t in faces]}


def test_equal_readings_count_as_equal_whatever_the_order_and_confidence(tmp_path):
    here = tmp_path / "here.jsonl"
    pi = tmp_path / "pi.jsonl"
    here.write_text(lines(reading("a.jpg", "ok", (1, 6), (2, 5), (3, 4)), reading("b.jpg", "uncertain", (6, 1))), encoding="utf-8")
    pi.write_text(lines(reading("b.jpg", "uncertain", (6, 1), confidence=0.5), reading("a.jpg", "ok", (3, 4), (1, 6), (2, 5), confidence=0.97)), encoding="utf-8")
    rows = pi_check.compare(["a.jpg", "b.jpg"], pi_check.parse_read_lines(here.read_text()), pi_check.parse_read_lines(pi.read_text()))
    assert [r["equal"] for r in rows] == [True, True]
    assert pi_check.summary_line(rows) == "pi-check: 2 of 2 frames equal"


def test_a_status_that_flips_is_a_difference_said_in_words():
    here = pi_check.parse_read_lines(lines(reading("a.jpg", "ok", (1, 6))))
    pi = pi_check.parse_read_lines(lines(reading("a.jpg", "uncertain", (1, 6))))
    [row] = pi_check.compare(["a.jpg"], here, pi)
    assert not row["equal"] and row["why"] == "status ok here, uncertain on the Pi"


def test_a_different_value_is_a_difference():
    here = pi_check.parse_read_lines(lines(reading("a.jpg", "ok", (1, 6), (2, 5))))
    pi = pi_check.parse_read_lines(lines(reading("a.jpg", "ok", (1, 6), (3, 4))))
    [row] = pi_check.compare(["a.jpg"], here, pi)
    assert not row["equal"] and row["why"] == "top faces [5, 6] here, [4, 6] on the Pi"


def test_another_reason_for_the_same_unsure_reading_is_counted_apart_not_a_verdict_difference():
    """Both machines send the die to the table with the same values; the reason told differs (the size check's
    measure): counted as reasons differing, the frame still equal."""
    told = {**reading("a.jpg", "uncertain", (1, 6)), "reasons": [{"code": "second_look", "n": 1}]}
    other = {**reading("a.jpg", "uncertain", (1, 6)), "reasons": [{"code": "size", "seen_px": 96, "calibrated_px": 180}]}
    [row] = pi_check.compare(["a.jpg"], pi_check.parse_read_lines(lines(told)), pi_check.parse_read_lines(lines(other)))
    assert row["equal"] and not row["reasons_equal"] and row["here"]["reasons"] == ["second_look"]
    [same] = pi_check.compare(["a.jpg"], pi_check.parse_read_lines(lines(told)), pi_check.parse_read_lines(lines(told)))
    assert same["equal"] and same["reasons_equal"]


def test_a_die_found_only_on_one_machine_is_a_difference():
    here = pi_check.parse_read_lines(lines(reading("a.jpg", "uncertain", (1, 6), (2, 5))))
    pi = pi_check.parse_read_lines(lines(reading("a.jpg", "uncertain", (1, 6))))
    assert pi_check.compare(["a.jpg"], here, pi)[0]["equal"] is False


def test_a_frame_missing_from_one_side_is_a_difference():
    here = pi_check.parse_read_lines(lines(reading("a.jpg", "ok", (1, 6)), reading("b.jpg", "ok", (2, 5))))
    pi = pi_check.parse_read_lines(lines(reading("a.jpg", "ok", (1, 6))))
    rows = pi_check.compare(["a.jpg", "b.jpg"], here, pi)
    assert [r["equal"] for r in rows] == [True, False] and "missing on the Pi" in rows[1]["why"]
    assert pi_check.summary_line(rows) == "pi-check: 1 of 2 frames equal"


@pytest.mark.parametrize("text,why", [("not json\n", "line 1 of the reader's output is not JSON"),
                                      ('{"status": "ok"}\n', "line 1 of the reader's output has no 'file' field")])
def test_output_that_is_not_the_readers_is_refused_with_the_line(text, why):
    with pytest.raises(ValueError, match=why):
        pi_check.parse_read_lines(text)


def test_the_conformance_set_has_at_least_30_frames_each_in_the_manifest():
    names = pi_check.conformance_frames(FRAMES)
    manifest = json.loads(MANIFEST.read_text(encoding="utf-8"))
    assert len(names) >= 30 and sorted(manifest) == names
    kinds = {entry["kind"] for entry in manifest.values()}
    assert kinds == {"render", "photo", "far", "leaning", "turned", "near-margin"}


def test_a_set_too_small_is_refused(tmp_path):
    for i in range(3):
        (tmp_path / f"{i}.jpg").write_bytes(b"x")
    with pytest.raises(pi_check.PiError, match="has 3 frames; it needs at least 30"):
        pi_check.conformance_frames(tmp_path)


def test_no_conformance_photo_comes_from_bylers_test_split():
    manifest = json.loads(MANIFEST.read_text(encoding="utf-8"))
    photos = {name: e for name, e in manifest.items() if e["kind"] == "photo"}
    assert photos and all(e["split"] in ("train", "val") for e in photos.values())
    split_file = DATASETS / "real-dice-byler" / "split.json"
    if not split_file.exists():
        pytest.skip("../shared/datasets is not beside this checkout")
    test_split = set(json.loads(split_file.read_text(encoding="utf-8"))["test"])
    used = {Path(e["image"]).stem for e in photos.values() if e["set"] == "real-dice-byler"}
    assert used and not used & test_split
    for name, entry in photos.items():  # byte for byte the dataset's photo
        assert (FRAMES / name).read_bytes() == (DATASETS / entry["set"] / entry["image"]).read_bytes()


def test_the_turned_check_frames_are_rune55_train_or_val_photos_as_photographed_or_turned_a_quarter():
    """The frames where the first look's turned check decides: the dataset's bytes, or its pixels turned clockwise
    once (saved losslessly), each carrying rune55's CC BY credit line."""
    import cv2

    manifest = json.loads(MANIFEST.read_text(encoding="utf-8"))
    turned = {name: e for name, e in manifest.items() if e["kind"] == "turned"}
    assert turned and all(e["split"] in ("train", "val") and "CC BY 4.0" in e["credit"] for e in turned.values())
    if not (DATASETS / "real-dice-rune55").is_dir():
        pytest.skip("../shared/datasets is not beside this checkout")
    for name, entry in turned.items():
        source = DATASETS / entry["set"] / entry["image"]
        if entry["quarter_turns_clockwise"] == 0:
            assert (FRAMES / name).read_bytes() == source.read_bytes()
        else:
            expected = np.rot90(cv2.imread(str(source)), -entry["quarter_turns_clockwise"])
            assert np.array_equal(cv2.imread(str(FRAMES / name)), expected)


def test_the_calibrated_tray_group_is_read_with_its_own_settings_and_its_frames_never_clash():
    """tests/conformance/tray: a calibrate'd tray (die size, empty tray) whose frames pi-check reads with --instance."""
    tray = pi_check.instance_group(ROOT / "tests" / "conformance" / "tray")
    assert tray is not None
    frames, names, instance = tray
    assert len(names) >= 6 and (instance / "config.toml").is_file() and (instance / "empty.jpg").is_file()
    assert not set(names) & {p.name for p in FRAMES.iterdir()}  # one reading per name: the groups must not share names
    manifest = json.loads((instance / "frames.json").read_text(encoding="utf-8"))
    assert sorted(manifest) == names


def test_the_close_up_group_holds_real_dice_read_with_one_expected_and_its_frames_never_clash():
    """tests/conformance/closeup: patterson's casino dice filling the frame, read with one die expected, so the die
    around its marks is read on both machines; and real val dice far off inside a square read as a one, so the look
    inside is too (rune55's carry its credit line)."""
    group = pi_check.instance_group(ROOT / "tests" / "conformance" / "closeup")
    assert group is not None
    frames, names, instance = group
    assert len(names) >= 6 and "expected_dice = 1" in (instance / "config.toml").read_text(encoding="utf-8")
    others = {p.name for p in FRAMES.iterdir()} | {p.name for p in (ROOT / "tests" / "conformance" / "tray" / "frames").iterdir()}
    assert not set(names) & others
    manifest = json.loads((instance / "frames.json").read_text(encoding="utf-8"))
    assert sorted(manifest) == names
    assert all(e["set"] == "real-dice-patterson" for e in manifest.values() if e["kind"] != "closeup-inside")
    inside = [e for e in manifest.values() if e["kind"] == "closeup-inside"]  # a die far off inside a square read as a one
    assert len(inside) >= 2 and all(e["split"] == "val" and ("credit" in e) == (e["set"] == "real-dice-rune55") for e in inside)
    assert set(pi_check.GROUPS) == {ROOT / "tests" / "conformance" / name for name in ("tray", "closeup", "bigframe", "calibrated", "lens")}


def test_the_big_frame_group_holds_real_photos_small_in_a_phones_frame_read_with_their_dice_expected():
    """tests/conformance/bigframe: Byler train photos of five dice in a 4032×3024 frame, so the finest look runs on
    both machines; its frames never share a name with another group's."""
    group = pi_check.instance_group(ROOT / "tests" / "conformance" / "bigframe")
    assert group is not None
    frames, names, instance = group
    assert len(names) >= 2 and "expected_dice = 5" in (instance / "config.toml").read_text(encoding="utf-8")
    others = {p.name for p in FRAMES.iterdir()} | {p.name for folder in ("tray", "closeup") for p in (ROOT / "tests" / "conformance" / folder / "frames").iterdir()}
    assert not set(names) & others
    manifest = json.loads((instance / "frames.json").read_text(encoding="utf-8"))
    assert sorted(manifest) == names and all(e["set"] == "real-dice-byler" and e["split"] == "train" for e in manifest.values())
    assert all(e["frame"] == [4032, 3024] and len(e["seen"]) == 5 for e in manifest.values())


def test_the_calibrated_group_holds_real_val_photos_told_a_die_side_from_above_with_their_credit():
    """tests/conformance/calibrated: ``mid`` photos read told a die side the look at it misses, so the size check's
    measure (and the classic finder's outlines in it) runs on both machines; rune55's carry their credit line."""
    group = pi_check.instance_group(ROOT / "tests" / "conformance" / "calibrated")
    assert group is not None
    frames, names, instance = group
    config = (instance / "config.toml").read_text(encoding="utf-8")
    assert len(names) >= 4 and "expected_dice = 1" in config and "die_side_px = 180" in config and 'camera_view = "above"' in config
    others = {p.name for p in FRAMES.iterdir()} | {p.name for folder in ("tray", "closeup", "bigframe") for p in (ROOT / "tests" / "conformance" / folder / "frames").iterdir()}
    assert not set(names) & others
    manifest = json.loads((instance / "frames.json").read_text(encoding="utf-8"))
    assert sorted(manifest) == names and all(e["split"] == "val" and ("credit" in e) == (e["set"] == "real-dice-rune55") for e in manifest.values())


def test_the_lens_group_is_a_calibrated_tray_seen_through_a_wide_lens_with_a_leaning_die_among_its_frames():
    """tests/conformance/lens: the tray's frames and empty photo bent by a wide lens, read told its bend, so each die's
    outline is straightened (float maths) on both machines; its frames never share a name with another group's."""
    group = pi_check.instance_group(ROOT / "tests" / "conformance" / "lens")
    assert group is not None
    frames, names, instance = group
    config = (instance / "config.toml").read_text(encoding="utf-8")
    assert len(names) >= 4 and "lens_distortion = 0.15" in config and "lens_distortion_k2 = 0.1" in config and "die_side_px = 64" in config and (instance / "empty.jpg").is_file()
    others = {p.name for p in FRAMES.iterdir()} | {p.name for folder in ("tray", "closeup", "bigframe", "calibrated")
                                                   for p in (ROOT / "tests" / "conformance" / folder / "frames").iterdir()}
    assert not set(names) & others
    manifest = json.loads((instance / "frames.json").read_text(encoding="utf-8"))
    assert sorted(manifest) == names and any(e["options"].get("leaning") for e in manifest.values())


def test_a_folder_without_settings_is_no_group(tmp_path):
    (tmp_path / "frames").mkdir()
    (tmp_path / "frames" / "a.jpg").write_bytes(b"")
    assert pi_check.instance_group(tmp_path) is None
    (tmp_path / "config.toml").write_text("[reader]\ndie_side_px = 64\n", encoding="utf-8")
    assert pi_check.instance_group(tmp_path) == (tmp_path / "frames", ["a.jpg"], tmp_path)


def test_each_pi_the_check_plays_has_its_own_result_file_and_only_the_pi_4_keeps_the_versions():
    """A Pi 4 (Cortex-A72, the default) and a Pi 5 (Cortex-A76): each CPU's run writes its own result; the Pi 4's
    whole-set run is the one that writes tested-versions.txt (the Pi 5's is a second check of the same versions)."""
    assert pi_check.DEFAULT_CPU == "cortex-a72" and set(pi_check.PI_CPUS) == {"cortex-a72", "cortex-a76"}
    assert pi_check.OUTPUTS["cortex-a72"] == pi_check.OUTPUT and len(set(pi_check.OUTPUTS.values())) == len(pi_check.PI_CPUS)
    assert set(pi_check.OUTPUTS) == set(pi_check.PI_CPUS)


def test_a_cpu_the_check_does_not_play_is_refused_before_anything_runs(capsys):
    with pytest.raises(SystemExit) as stop:
        pi_check.main(["--cpu", "cortex-a53"])
    assert stop.value.code == 2 and "invalid choice: 'cortex-a53'" in capsys.readouterr().err
