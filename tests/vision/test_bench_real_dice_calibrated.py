"""The reading bench calibrates each photo of a one-die set as ``calibrate --dice`` would and reads it in tray mode."""

from __future__ import annotations

import cv2
import numpy as np

import bench.reading
from bench.reading import real_dice_calibrated
from vision.simtable import render_table


def _one_die_set(root, faces) -> None:
    """A folder in the shared layout (``images/``, ``labels/``): one rendered die a photo, seen from above."""
    (root / "images").mkdir(parents=True)
    (root / "labels").mkdir()
    for i, face in enumerate(faces):
        frame, placed = render_table([face], np.random.default_rng(i), view="above", width=640, height=480, die_side=90.0, glare=0)
        die = placed[0]
        cv2.imwrite(str(root / "images" / f"d{i}.png"), frame)
        (root / "labels" / f"d{i}.txt").write_text(f"{face - 1} {die.cx / 640} {die.cy / 480} {die.side / 640} {die.side / 480}\n")


def test_each_photo_is_calibrated_on_itself_and_read_at_that_size(staged_reader, tmp_path, monkeypatch):
    _one_die_set(tmp_path / "one", [2, 5, 6])
    monkeypatch.setattr(bench.reading, "SETS", [("one", tmp_path / "one", None, False)])
    out = real_dice_calibrated(staged_reader, ("one",))
    counts = out["one"]
    assert counts["photos"] == 3 and counts["calibrated"] == counts["dice"] == 3
    assert counts["right"] == 3 and counts["silently_wrong"] == 0
    assert out["all"] == counts


def test_a_set_read_by_its_checked_labels_counts_the_fixes_and_the_die_read_right(staged_reader, tmp_path):
    from bench.reading import accuracy

    _one_die_set(tmp_path / "one", [2, 5])
    label = tmp_path / "one" / "labels" / "d0.txt"
    _, x, y, rest = label.read_text().split(" ", 3)
    label.write_text(f"3 {x} {y} {rest}")  # published as a four; the photo shows its two
    fixes = {("d0", round(float(x), 4), round(float(y), 4)): 2}
    out = accuracy(staged_reader, False, sets=[("published", tmp_path / "one", None, False)],
                   checked=[("checked", tmp_path / "one", None, fixes), ("gone", tmp_path / "gone", None, fixes)])
    assert out["checked"]["labels_fixed"] == 1 and out["checked"]["right"] == out["published"]["right"] + 1 == 2
    assert out["checked"]["silently_wrong_per_1000"] == 0
    assert out["gone"].startswith("skipped:")
