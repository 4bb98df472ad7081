"""The model card's table of every set (``models.training.card.every_set``): ``evaluate``'s counts, one line a set."""

from __future__ import annotations

import cv2
import numpy as np

from models.training.card import every_set
from models.training.data import synth_face_crops
from vision.evaluate import evaluate


def test_each_set_gets_a_line_with_evaluates_counts_and_a_missing_set_says_it_is_not_there(tmp_path, reader):
    """The sets given, then the sets read by their checked labels (here one not there), each a line in that order."""
    crops, faces = synth_face_crops(6, np.random.default_rng(11))
    rows = ["file,value"]
    for i, (crop, face) in enumerate(zip(crops, faces)):
        cv2.imwrite(str(tmp_path / f"c{i}.png"), crop)
        rows.append(f"c{i}.png,{int(face)}")
    (tmp_path / "crops.csv").write_text("\n".join(rows) + "\n")
    report = evaluate(tmp_path, reader, None, crops=True)
    lines = every_set(reader, [("patterson_val_crops", tmp_path, None, True), ("skovy_val", tmp_path / "nowhere", "val", False)],
                      checked=[("rune55_val_checked_labels", tmp_path / "not-here", "val", {})])
    assert lines[0].startswith("| set | dice | right |") and len(lines) == 5
    assert lines[2] == (f"| patterson `val` crops | 6 | {report['right']} ({report['accuracy']:.2%}) | "
                        f"{report['silently_wrong']} | {report['flagged']} | {report['right_without_doubt']} | "
                        f"{report['photos_all_right']} of {report['photos']} |")
    assert lines[3].startswith("| skovy `val` (webcam frames) | skipped: ") and str(tmp_path / "nowhere") in lines[3]
    assert lines[4].startswith("| rune55 `val` by its labels checked by eye | skipped: ") and "not-here" in lines[4]
