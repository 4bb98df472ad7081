"""``evaluate DIR --show FOLDER`` draws each photo or crop not read all right (``vision/evaluate_show.py``, issue 26)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import cv2
import numpy as np
import pytest

from vision.evaluate import EvaluationError, evaluate, summary
from vision.evaluate_show import CROP_SHOWN_SIDE, MissPictures, ShowFolderError
from vision.simtable import render_table

from test_evaluate import ROOT, _as_folders_per_split, write_frames


def _mislabel_first_die(root: Path, name: str) -> None:
    label = root / "labels" / f"{name}.txt"
    lines = label.read_text().splitlines()
    cls, rest = lines[0].split(" ", 1)
    lines[0] = f"{(int(cls) + 2) % 6} {rest}"  # the label names a face the die does not show
    label.write_text("\n".join(lines) + "\n")


def test_each_photo_not_read_all_right_is_drawn_and_no_other(tmp_path, reader):
    write_frames(tmp_path / "set", [[2, 5, 6], [1, 3, 4], [6, 6, 2]])
    _mislabel_first_die(tmp_path / "set", "p1")
    report = evaluate(tmp_path / "set", reader, show=tmp_path / "shown")
    missed = [m["photo"] for m in report["misses"]]
    assert "p1" in missed
    assert report["shown"] == {"folder": str(tmp_path / "shown"), "files": [f"{name}.jpg" for name in missed]}
    assert sorted(p.name for p in (tmp_path / "shown").iterdir()) == sorted(f"{name}.jpg" for name in missed)
    drawn = cv2.imread(str(tmp_path / "shown" / "p1.jpg"))
    photo = cv2.imread(str(tmp_path / "set" / "images" / "p1.png"))
    assert drawn.shape == photo.shape  # the photo itself, drawn on
    b, g, r = (drawn[..., c].astype(int) for c in range(3))
    cyan = (b - r > 90) & (g - r > 90)  # the boxes: 1 px cyan lines, softened by the JPEG
    assert cyan.sum() > 100, "the labels' boxes are drawn"
    assert f"drawn in {tmp_path / 'shown'}: {len(missed)} " in summary(report) and "(the labels in cyan)" in summary(report)


def test_without_show_nothing_is_drawn_and_the_report_has_no_shown(tmp_path, reader):
    write_frames(tmp_path / "set", [[1, 3, 4]])
    _mislabel_first_die(tmp_path / "set", "p0")
    report = evaluate(tmp_path / "set", reader)
    assert "shown" not in report and report["misses"] and "drawn in" not in summary(report)


def test_a_label_far_outside_its_photo_is_refused_before_any_photo_is_read_or_drawn(tmp_path, reader):
    """A broken export's box, a die nowhere in the photo, was read (and drawn at the photo's edge) as a die missed;
    since 2026-12-06 it is refused naming its file and line (``vision.dataset.box_problem``), and before the first
    photo is read: the photo read wrong before it is not left drawn in the folder of a run that stopped."""
    write_frames(tmp_path / "set", [[1, 3, 4], [2, 5, 6]])
    _mislabel_first_die(tmp_path / "set", "p0")  # read wrong: drawn, were the run to go on
    with open(tmp_path / "set" / "labels" / "p1.txt", "a") as labels:
        labels.write("2 1e300 -1e300 1e300 1e300\n")
    with pytest.raises(EvaluationError, match=r"p1.txt line 4: its centre \(1e\+300, -1e\+300\) lies outside the photo"):
        evaluate(tmp_path / "set", reader, show=tmp_path / "shown")
    assert list((tmp_path / "shown").iterdir()) == []


def test_a_photo_in_a_split_folder_is_drawn_under_a_flattened_name(tmp_path, reader):
    write_frames(tmp_path / "set", [[2, 5, 6], [1, 3, 4]])
    _mislabel_first_die(tmp_path / "set", "p1")
    _as_folders_per_split(tmp_path / "set", {"train": ["p0"], "val": ["p1"]})
    report = evaluate(tmp_path / "set", reader, "val", show=tmp_path / "shown")
    assert report["shown"]["files"] == ["val--p1.jpg"] and (tmp_path / "shown" / "val--p1.jpg").is_file()


def test_a_crop_read_wrong_is_drawn_enlarged_with_its_label_and_reading(tmp_path, reader):
    rng = np.random.default_rng(4)
    (tmp_path / "set" / "crops").mkdir(parents=True)
    for name, seen in (("five", 5), ("two", 2)):
        frame, (die,) = render_table([seen], rng, width=200, height=200, view="above", die_side=90, glare=0)
        x, y, w, h = die.box()
        cv2.imwrite(str(tmp_path / "set" / "crops" / f"{name}.png"), frame[y:y + h, x:x + w])
    (tmp_path / "set" / "crops.csv").write_text("file,value\ncrops/five.png,5\ncrops/two.png,4\n")  # the two labelled four
    report = evaluate(tmp_path / "set", reader, show=tmp_path / "shown")
    assert [m["photo"] for m in report["misses"]] == ["crops/two.png"]
    assert report["shown"]["files"] == ["crops--two.jpg"]
    drawn = cv2.imread(str(tmp_path / "shown" / "crops--two.jpg"))
    assert min(drawn.shape[:2]) >= CROP_SHOWN_SIDE
    assert "1 photo not read all right (each with its label and what was read)" in summary(report)


def test_two_photos_whose_flattened_names_meet_are_both_kept(tmp_path):
    pictures = MissPictures(tmp_path / "shown")
    crop = np.full((40, 40, 3), 200, np.uint8)
    first = pictures.crop("val/a.png", crop, 3, 2, 0.5, False)
    second = pictures.crop("val--a.jpg", crop, 3, 2, 0.5, False)
    assert (first, second) == ("val--a.jpg", "val--a-2.jpg")
    assert sorted(p.name for p in (tmp_path / "shown").iterdir()) == ["val--a-2.jpg", "val--a.jpg"]


def test_a_show_folder_that_is_a_file_is_refused_in_words_before_any_photo_is_read(tmp_path):
    class NeverRead:  # evaluate must stop at the folder, before the reader is asked for anything
        def __getattr__(self, name):
            raise AssertionError(f"the reader was used ({name}) before the --show folder was checked")

    write_frames(tmp_path / "set", [[1, 3, 4]])
    (tmp_path / "taken").write_text("a file, not a folder")
    with pytest.raises(ShowFolderError, match="is a file: --show needs a folder"):
        evaluate(tmp_path / "set", NeverRead(), show=tmp_path / "taken")
    with pytest.raises(ShowFolderError, match="cannot be made for the photos read wrong"):
        evaluate(tmp_path / "set", NeverRead(), show=tmp_path / "taken" / "inside")
    assert (tmp_path / "taken").read_text() == "a file, not a folder"


def test_the_command_draws_the_misses_and_refuses_a_file_in_words(tmp_path):
    write_frames(tmp_path / "set", [[1, 3, 4]])
    _mislabel_first_die(tmp_path / "set", "p0")
    done = subprocess.run([sys.executable, "-m", "companion.app.cli", "evaluate", str(tmp_path / "set"), "--show", str(tmp_path / "shown"),
                           "--instance", str(tmp_path)], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert f"drawn in {tmp_path / 'shown'}: 1 photo not read all right (the labels in cyan)" in done.stdout
    assert (tmp_path / "shown" / "p0.jpg").is_file()
    (tmp_path / "file").write_text("")
    done = subprocess.run([sys.executable, "-m", "companion.app.cli", "evaluate", str(tmp_path / "set"), "--show", str(tmp_path / "file"),
                           "--instance", str(tmp_path)], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 2 and "is a file: --show needs a folder" in done.stderr and "Traceback" not in done.stderr
