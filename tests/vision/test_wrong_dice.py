"""``python -m models.training.wrong_dice``: each die the staged reader gets wrong, missed or misread, and what
the classifier reads at its labelled box."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import cv2
import numpy as np

from models.training.wrong_dice import wrong_dice
from vision.simtable import render_table

ROOT = Path(__file__).resolve().parents[2]


def write_photo(root: Path, seen: list[int], relabel: dict[int, int] | None = None, phantom: bool = False) -> None:
    """One rendered photo from above with YOLO labels, some changed: ``relabel`` gives a die another face,
    ``phantom`` adds a label where no die lies (the frame's top-left corner)."""
    (root / "images").mkdir(parents=True)
    (root / "labels").mkdir()
    frame, placed = render_table(seen, np.random.default_rng(5), width=640, height=480, view="above", touching=0.0, glare=0, leaning=0.0)
    cv2.imwrite(str(root / "images" / "p0.png"), frame)
    lines = []
    for i, d in enumerate(placed):
        x, y, w, h = d.box()
        face = (relabel or {}).get(i, d.seen)
        lines.append(f"{face - 1} {(x + w / 2) / 640:.6f} {(y + h / 2) / 480:.6f} {w / 640:.6f} {h / 480:.6f}")
    if phantom:
        lines.append("2 0.060000 0.080000 0.080000 0.100000")
    (root / "labels" / "p0.txt").write_text("\n".join(lines) + "\n")
    (root / "split.json").write_text(json.dumps({"val": ["p0"]}))


def test_dice_read_right_are_counted_and_not_listed(tmp_path, staged_reader):
    write_photo(tmp_path, [2, 5, 6])
    report = wrong_dice(tmp_path, staged_reader)
    assert report["dice"] == 3 and report["right"] == 3 and report["wrong"] == []


def test_a_die_read_as_another_face_than_its_label_is_misread_and_its_box_disagrees_with_the_label(tmp_path, staged_reader):
    write_photo(tmp_path, [2, 5, 6], relabel={1: 1})
    report = wrong_dice(tmp_path, staged_reader)
    assert report["right"] == 2 and report["misread"] == {"box_right": 0, "box_wrong": 1}
    (row,) = report["wrong"]
    assert row["label"] == 1 and row["read"] == 5 and row["at_box"] == 5  # the die shows five: the label is what is wrong


def test_a_label_where_no_die_lies_is_missed_and_its_box_is_not_a_die(tmp_path, staged_reader):
    write_photo(tmp_path, [2, 5, 6], phantom=True)
    report = wrong_dice(tmp_path, staged_reader)
    assert report["dice"] == 4 and report["right"] == 3
    assert report["missed"] == {"box_right": 0, "box_wrong": 1}
    (row,) = report["wrong"]
    assert row["read"] == 0 and row["at_box"] == 0
    assert report["dice"] == report["right"] + sum(report["missed"].values()) + sum(report["misread"].values())


def test_the_command_refuses_the_test_split_in_words(tmp_path):
    write_photo(tmp_path, [3])
    run = subprocess.run([sys.executable, "-m", "models.training.wrong_dice", str(tmp_path), "--split", "test"],
                         cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert run.returncode != 0 and "evaluation only" in run.stderr


def test_the_command_prints_one_json_object(tmp_path):
    write_photo(tmp_path, [2, 5, 6], relabel={0: 4})
    run = subprocess.run([sys.executable, "-m", "models.training.wrong_dice", str(tmp_path), "--json"],
                         cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    report = json.loads(run.stdout)
    assert report["dice"] == 3 and len(report["wrong"]) == 1 and report["wrong"][0]["label"] == 4


def test_a_photo_without_its_label_file_holds_no_wrong_die_and_one_without_its_image_is_named(tmp_path, staged_reader):
    """YOLO's background photo (no label file) labels no die, so none is wrong; a photo the split lists whose image
    is missing is named as skipped."""
    write_photo(tmp_path, [2, 5, 6])
    (tmp_path / "labels" / "p0.txt").unlink()
    report = wrong_dice(tmp_path, staged_reader)
    assert report["dice"] == 0 and report["wrong"] == [] and report["unreadable_files"] == []
    (tmp_path / "images" / "p0.png").unlink()
    report = wrong_dice(tmp_path, staged_reader)
    assert report["unreadable_files"] == ["p0: the split lists it, but images/ holds no photo of that name"]
