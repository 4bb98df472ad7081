"""``python -m models.training.other_looks``: dice of looks no shared set holds, drawn by their own code and read by
``classify`` (number dice, ones printed as an emblem)."""

from __future__ import annotations

import numpy as np
import pytest

from models.training.other_looks import EMBLEMS, NUMBER_LOOKS, emblem_ones, main, number_dice, read


def test_the_drawn_dice_are_the_same_every_time_and_labelled_with_their_face():
    first, again = number_dice(per_face=2), number_dice(per_face=2)
    assert list(first) == [name for name, *_ in NUMBER_LOOKS]
    for look in first:
        assert [v for *_, v in first[look]] == [1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6]
        assert all(np.array_equal(a[1], b[1]) for a, b in zip(first[look], again[look]))
    ones = emblem_ones(per_kind=3)
    assert list(ones) == list(EMBLEMS) and all(v == 1 for crops in ones.values() for *_, v in crops)
    assert all(img.shape[0] in (40, 64, 96) and img.dtype == np.uint8 for crops in ones.values() for _, img, _ in crops)


def test_each_look_and_each_family_is_counted_as_the_crop_sweep_counts(reader):
    report = read(reader, per_face=1, per_kind=2)
    assert report["number dice"]["crops"] == 6 * len(NUMBER_LOOKS) and report["emblem one"]["crops"] == 2 * len(EMBLEMS)
    for family in ("number dice", "emblem one"):
        looks = [row for name, row in report.items() if name.startswith(family + ", ")]
        for key in ("crops", "right", "silently_wrong", "flagged"):
            assert report[family][key] == sum(row[key] for row in looks)
        for row in looks:
            assert row["silently_wrong"] <= row["crops"] - row["right"] and row["flagged"] + row["silently_wrong"] <= row["crops"]


def test_a_model_file_that_is_not_there_is_refused_in_words(tmp_path, capsys):
    with pytest.raises(SystemExit):
        main([str(tmp_path / "none.onnx")])
    assert "there is no model file at" in capsys.readouterr().err


def test_the_bench_reads_the_other_looks_in_its_short_form():
    import bench.reading  # noqa: F401  (registers the benches)
    from bench.report import BENCHES

    report = BENCHES["other_looks"](False)
    assert report["number dice"]["crops"] == 3 * 6 * len(NUMBER_LOOKS) and report["emblem one"]["crops"] == 10 * len(EMBLEMS)
