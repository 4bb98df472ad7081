"""``models.training.crop_robustness``: ``classify`` on hand-sorted crops changed as another person's crop would be."""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np
import pytest

from companion.app.settings import Settings
from models.training.crop_robustness import BENCH_CHANGES, CHANGES, crops_of, main, measure
from vision.evaluate import EvaluationError
from vision.images import CROP_MIN_SIDE
from vision.reader import load_reader
from vision.simtable import render_table


@pytest.fixture(scope="module")
def reader():
    return load_reader(Settings.defaults(), threads=1)


def _crop_folder(root: Path) -> Path:
    """Six crops, one of each face, of rendered dice from above, each with a little table around it."""
    root.mkdir(parents=True, exist_ok=True)
    rows = ["file,value,split"]
    frame, placed = render_table([1, 2, 3, 4, 5, 6], np.random.default_rng(11), view="above")
    for k, die in enumerate(placed):
        r = int(die.side * 0.75)
        x, y = int(die.cx), int(die.cy)
        cv2.imwrite(str(root / f"die{k}.png"), frame[y - r:y + r, x - r:x + r])
        rows.append(f"die{k}.png,{die.seen},val")
    (root / "crops.csv").write_text("\n".join(rows) + "\n")
    return root


def test_every_change_reads_every_crop_and_counts_each_once(reader, tmp_path):
    crops = crops_of(_crop_folder(tmp_path / "set"), ["val"])
    report = measure(reader, crops, list(CHANGES))
    assert set(report) == set(CHANGES)
    for row in report.values():
        assert row["crops"] == 6
        assert 0 <= row["silently_wrong"] <= 6 - row["right"]
        assert 0 <= row["flagged"] <= 6
    assert report["as cropped"]["right"] == 6 and report["as cropped"]["silently_wrong"] == 0


def test_each_change_gives_an_image_classify_accepts(tmp_path):
    image = np.full((60, 56, 3), 120, np.uint8)
    for name, change in CHANGES.items():
        out = change(image)
        assert out.dtype == np.uint8 and out.ndim == 3 and min(out.shape[:2]) >= CROP_MIN_SIDE, name


def test_the_test_split_is_never_read(tmp_path):
    with pytest.raises(EvaluationError, match="evaluation only"):
        crops_of(_crop_folder(tmp_path / "set"), ["val", "test"])


def test_a_folder_without_crops_is_refused_in_words(tmp_path):
    with pytest.raises(EvaluationError, match="has no crops.csv"):
        crops_of(tmp_path, ["val"])


def test_the_command_prints_one_json_object(tmp_path, capsys):
    folder = _crop_folder(tmp_path / "set")
    assert main([str(folder), "--split", "val", "--only", "as cropped", "--only", "grey", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert list(report) == ["as cropped", "grey"] and report["as cropped"]["crops"] == 6


def test_the_command_names_a_folder_it_cannot_read(tmp_path, capsys):
    with pytest.raises(SystemExit):
        main([str(tmp_path / "nothing"), "--split", "val"])
    assert "has no crops.csv" in capsys.readouterr().err


def test_the_bench_reads_the_shared_val_crops_changed_and_reports_silently_wrong_per_1000():
    import bench.reading  # noqa: F401  (registers the benches)
    from bench.report import BENCHES, GOALS
    from models.training.crop_robustness import shared_crop_sets

    if not shared_crop_sets():
        pytest.skip("the shared crops are not beside the repository (../shared/datasets)")
    report = BENCHES["crops"](False)
    assert list(report["changes"]) == ["as cropped", "off centre 0.2", "16 px"]
    val_crops = report["changes"]["as cropped"]["crops"]
    assert val_crops > 0 and report["all"]["crops"] == 3 * val_crops
    assert report["all"]["silently_wrong_per_1000"] == round(1000 * report["all"]["silently_wrong"] / report["all"]["crops"], 2)
    assert any(path == "crops.all.silently_wrong_per_1000" for _, path, *_ in GOALS)


def test_the_benchs_crop_figure_sums_the_thirteen_changes_it_always_has():
    """The bench compares its crop figure with earlier runs', so the changes added later are the command's alone."""
    assert len(BENCH_CHANGES) == 13 and set(BENCH_CHANGES) < set(CHANGES)
    assert list(CHANGES)[:13] == list(BENCH_CHANGES)


def test_out_of_focus_takes_the_same_share_of_detail_from_a_small_and_a_big_crop():
    rng = np.random.default_rng(5)
    small = rng.integers(0, 256, (40, 40, 3)).astype(np.uint8)
    big = cv2.resize(small, (160, 160), interpolation=cv2.INTER_NEAREST)
    change = CHANGES["out of focus 0.1"]
    shrunk = cv2.resize(change(big), (40, 40), interpolation=cv2.INTER_AREA).astype(float)
    assert np.abs(shrunk - change(small).astype(float)).mean() < 4  # the same blur, measured in dice
    assert change(small).std() < small.std() / 3  # and it does take the detail away
