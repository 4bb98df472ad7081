"""The evaluation sets the bench builds: the close-up set (``big``) in the shared layout, each die filling
most of its frame, one die in a phone-sized photo (``mid``), the far set (``far``), dice a few hundredths of
a big frame's width, and a table of dice of mixed sizes (``many``), read by ``evaluate`` as any shared set."""

from __future__ import annotations

import json

import cv2
import numpy as np
import pytest

from bench.eval_sets import (BIG_FILL, BIG_FRAME, FAR_FRAME, FAR_PER_FRAME, FAR_SIDE, LABELS_STAMP, MANY_APART, MANY_FRAME, MANY_PER_FRAME,
                             MANY_SIDE, MID_FILL, MID_FRAME, SET_NAMES, WHOLE_BOX, _corrections, big, far, many, mid, plain_die, up_to_date,
                             val_crops, whole)
from vision.evaluate import yolo_labels, evaluate


def _patches() -> list[tuple[int, np.ndarray]]:
    return [(value, plain_die(value)) for value in (1, 2, 3)]


def test_the_close_up_set_holds_each_die_filling_most_of_its_frame(tmp_path) -> None:
    assert big(tmp_path, _patches()) == 3
    names = json.loads((tmp_path / "split.json").read_text())["test"]
    assert len(names) == 3
    for name, (value, _) in zip(names, _patches()):
        image = cv2.imread(str(tmp_path / "images" / f"{name}.png"))
        assert image.shape == (BIG_FRAME, BIG_FRAME, 3)
        (seen, cx, cy, w, h), = yolo_labels(tmp_path / "labels" / f"{name}.txt", BIG_FRAME, BIG_FRAME)
        assert seen == value
        assert BIG_FILL[0] / 1.12 - 0.01 <= w / BIG_FRAME <= BIG_FILL[1] / 1.12 + 0.01  # the die itself, in its patch's margin
        assert w / 2 <= cx <= BIG_FRAME - w / 2 and h / 2 <= cy <= BIG_FRAME - h / 2  # wholly in the frame


def test_the_close_up_set_is_read_by_evaluate_as_any_shared_set(tmp_path, staged_reader) -> None:
    big(tmp_path, _patches())
    report = evaluate(tmp_path, staged_reader, "test")
    assert report["dice"] == 3 and report["photos"] == 3
    assert report["right"] == 3 and report["silently_wrong"] == 0, report  # plain dice close up: the look from farther reads them


def test_the_phone_photo_set_holds_one_die_a_frame_saved_as_jpeg_and_is_read_by_evaluate(tmp_path, staged_reader) -> None:
    width, height = MID_FRAME
    assert mid(tmp_path, _patches()) == 3
    names = json.loads((tmp_path / "split.json").read_text())["test"]
    for name, (value, _) in zip(names, _patches()):
        image = cv2.imread(str(tmp_path / "images" / f"{name}.jpg"))
        assert image.shape == (height, width, 3)
        (seen, cx, cy, w, h), = yolo_labels(tmp_path / "labels" / f"{name}.txt", width, height)
        assert seen == value and MID_FILL[0] / 1.12 - 0.01 <= h / height <= MID_FILL[1] / 1.12 + 0.01
        assert w / 2 <= cx <= width - w / 2 and h / 2 <= cy <= height - h / 2  # wholly in the frame
    report = evaluate(tmp_path, staged_reader, "test")
    assert report["dice"] == 3 and report["right"] == 3 and report["silently_wrong"] == 0, report


def test_the_far_set_holds_dice_a_few_hundredths_of_a_big_frame_apart_from_each_other(tmp_path) -> None:
    patches = _patches() * 2
    assert far(tmp_path, patches) == 6
    names = json.loads((tmp_path / "split.json").read_text())["test"]
    assert len(names) == 6 // FAR_PER_FRAME
    width, height = FAR_FRAME
    for name in names:
        assert cv2.imread(str(tmp_path / "images" / f"{name}.png")).shape == (height, width, 3)
        dice = yolo_labels(tmp_path / "labels" / f"{name}.txt", width, height)
        assert len(dice) == FAR_PER_FRAME
        for i, (_, cx, cy, w, h) in enumerate(dice):
            assert FAR_SIDE[0] - 1 <= w <= FAR_SIDE[1] + 1 and w / 2 <= cx <= width - w / 2 and h / 2 <= cy <= height - h / 2
            assert all(max(abs(cx - ox), abs(cy - oy)) > 1.5 * w for j, (_, ox, oy, _, _) in enumerate(dice) if j != i)


def test_a_far_frame_with_no_room_left_for_its_dice_says_so_instead_of_drawing_for_ever(tmp_path, monkeypatch) -> None:
    import bench.eval_sets as eval_sets

    monkeypatch.setattr(eval_sets, "FAR_FRAME", (120, 90))  # three dice 2 sides apart cannot fit
    with pytest.raises(ValueError, match="no room for 3 dice .* in a 120×90 frame"):
        far(tmp_path, _patches())


def test_the_far_set_is_read_by_evaluate_and_plain_dice_there_are_never_read_wrong_as_sure(tmp_path, staged_reader) -> None:
    far(tmp_path, _patches() * 2)
    report = evaluate(tmp_path, staged_reader, "test")
    assert report["dice"] == 6 and report["photos"] == 2
    assert report["silently_wrong"] == 0 and report["right"] >= 5, report  # plain white dice 20-40 px on grey: found at once


def test_the_many_set_holds_every_die_once_several_to_a_frame_apart_and_of_mixed_sizes(tmp_path, staged_reader) -> None:
    patches = _patches() * 10
    assert many(tmp_path, patches) == 30
    names = json.loads((tmp_path / "split.json").read_text())["test"]
    width, height = MANY_FRAME
    seen_all = []
    for name in names:
        assert cv2.imread(str(tmp_path / "images" / f"{name}.png")).shape == (height, width, 3)
        dice = yolo_labels(tmp_path / "labels" / f"{name}.txt", width, height)
        assert 1 <= len(dice) <= MANY_PER_FRAME[1]
        for i, (seen, cx, cy, w, h) in enumerate(dice):
            assert MANY_SIDE[0] - 1 <= w <= MANY_SIDE[1] + 1 and w / 2 <= cx <= width - w / 2 and h / 2 <= cy <= height - h / 2
            assert all(max(abs(cx - ox), abs(cy - oy)) > MANY_APART * w for j, (_, ox, oy, _, _) in enumerate(dice) if j != i)
            seen_all.append(seen)
    assert sorted(seen_all) == sorted(v for v, _ in patches)  # each die once: none dropped for want of a place
    report = evaluate(tmp_path, staged_reader, "test")
    assert report["dice"] == 30 and report["silently_wrong"] == 0 and report["right"] >= 28, report  # plain dice, 60-140 px


def test_sets_cut_before_a_label_correction_are_not_up_to_date_so_the_bench_cuts_them_again(tmp_path) -> None:
    for name in SET_NAMES:
        (tmp_path / name).mkdir()
        (tmp_path / name / "split.json").write_text('{"test": []}')
    assert not up_to_date(tmp_path)  # no record of the corrections they were cut with
    (tmp_path / LABELS_STAMP).write_text(json.dumps(_corrections()[:-1]))
    assert not up_to_date(tmp_path)  # cut before the last correction
    (tmp_path / LABELS_STAMP).write_text(json.dumps(_corrections()))
    assert up_to_date(tmp_path)
    (tmp_path / "far" / "split.json").unlink()
    assert not up_to_date(tmp_path)  # a set missing


def test_the_whole_set_holds_each_crop_unchanged_labelled_at_its_centre(tmp_path) -> None:
    crops = [(value, plain_die(value, side)) for value, side in ((1, 60), (4, 90), (6, 75))]
    assert whole(tmp_path, crops) == 3
    names = json.loads((tmp_path / "split.json").read_text())["test"]
    for name, (value, image) in zip(names, crops):
        assert np.array_equal(cv2.imread(str(tmp_path / "images" / f"{name}.png")), image)  # PNG: the crop's own pixels
        (seen, cx, cy, w, h), = yolo_labels(tmp_path / "labels" / f"{name}.txt", image.shape[1], image.shape[0])
        assert seen == value and abs(cx - image.shape[1] / 2) < 0.5 and abs(w - WHOLE_BOX * image.shape[0]) < 0.5


def test_plain_dice_filling_the_whole_photo_are_read_right_by_evaluate(tmp_path, staged_reader) -> None:
    whole(tmp_path, [(value, plain_die(value)) for value in (2, 3, 5)])
    report = evaluate(tmp_path, staged_reader, "test")
    assert report["dice"] == 3 and report["silently_wrong"] == 0 and report["right"] == 3, report


def test_the_whole_set_takes_only_the_hand_sorted_val_crops(tmp_path) -> None:
    root = tmp_path / "real-dice-skovy"
    (root / "crops").mkdir(parents=True)
    for name in ("a", "b"):
        cv2.imwrite(str(root / "crops" / f"{name}.png"), plain_die(3))
    (root / "crops.csv").write_text("file,value,split\ncrops/a.png,3,val\ncrops/b.png,3,train\ncrops/gone.png,2,val\n")
    assert [value for value, _ in val_crops(tmp_path)] == [3]
