"""The real photos' labels as every tool reads them: the train labels found wrong are corrected once, for all."""

from __future__ import annotations

import json
import shutil

import cv2
import pytest

from bench import reader as bench
from bench.eval_sets import real_val_dice
from vision.dataset import TRAIN_LABEL_FIXES, VAL_LABEL_FIXES, labels_in_pixels, split_names
from bench.finder_eval import evaluate
from vision.evaluate import yolo_labels


@pytest.fixture
def rune55(real_dataset):
    root = real_dataset.parent / "real-dice-rune55"
    if not (root / "split.json").is_file():
        pytest.skip("real-dice-rune55 is not beside the repository")
    return root


def test_each_train_label_found_wrong_is_read_corrected_and_as_published_on_request(real_dataset):
    train = set(split_names(real_dataset, "train"))
    for (name, cx, cy), value in TRAIN_LABEL_FIXES.items():
        assert name in train  # the test split is never corrected by hand here
        h, w = cv2.imread(str(real_dataset / "images" / f"{name}.jpg")).shape[:2]
        fixed = {(round(x / w, 4), round(y / h, 4)): v for v, x, y, _, _ in labels_in_pixels(real_dataset, name, w, h)}
        published = {(round(x / w, 4), round(y / h, 4)): v for v, x, y, _, _ in labels_in_pixels(real_dataset, name, w, h, fixes=False)}
        assert fixed[(cx, cy)] == value != published[(cx, cy)]


def test_the_bench_and_the_finder_evaluation_read_the_correctedyolo_labels(real_dataset, reader):
    names = sorted({name for name, _, _ in TRAIN_LABEL_FIXES})
    photos = [p for p in bench.split_photos(real_dataset, "train") if p[0] in names]
    values = {(p[0], round(cx / p[1].shape[1], 4), round(cy / p[1].shape[0], 4)): v for p in photos for v, cx, cy, _, _ in p[2]}
    assert all(values[key] == value for key, value in TRAIN_LABEL_FIXES.items())
    res = evaluate(photos, reader)
    assert res["right_and_sure"] + res["wrong_and_sure"] <= round(res["found_share"] * res["dice"])
    assert res["right_and_sure"] <= round(res["accuracy"] * res["dice"])
    # a die with no doubt on it was read sure, so the silently wrong are among the wrong and sure
    assert res["silently_wrong"] <= res["wrong_and_sure"]


def test_a_die_read_sure_with_no_doubt_against_its_label_counts_as_silently_wrong(real_dataset, reader):
    """The finder evaluation's ``silently_wrong`` counts what the referee would act on: a die it reads
    with no doubt on it whose value differs from the label (here a label changed on purpose)."""
    name, img, labels = bench.split_photos(real_dataset, "train")[0]
    before = evaluate([(name, img, labels)], reader)
    seen = reader.with_view("above").read(img)
    matched = bench._match([d.box for d in seen.dice], labels)
    k = next(i for i, j in enumerate(matched) if j is not None and not seen.dice[j].doubts and seen.dice[j].top == labels[i][0])
    value, *rest = labels[k]
    relabelled = labels[:k] + [(value % 6 + 1, *rest)] + labels[k + 1:]
    after = evaluate([(name, img, relabelled)], reader)
    assert after["silently_wrong"] == before["silently_wrong"] + 1
    assert after["wrong_and_sure"] == before["wrong_and_sure"] + 1


def test_each_rune55_val_label_found_wrong_is_read_corrected_and_as_published_on_request(rune55):
    val = set(json.loads((rune55 / "split.json").read_text())["val"])
    for (name, cx, cy), value in VAL_LABEL_FIXES.items():
        assert name in val
        h, w = cv2.imread(str(rune55 / "images" / f"{name}.jpg")).shape[:2]
        fixed = {(round(x / w, 4), round(y / h, 4)): v for v, x, y, _, _ in labels_in_pixels(rune55, name, w, h)}
        published = {(round(x / w, 4), round(y / h, 4)): v for v, x, y, _, _ in labels_in_pixels(rune55, name, w, h, fixes=False)}
        assert fixed[(cx, cy)] == value != published[(cx, cy)]
        assert published == {**fixed, (cx, cy): published[(cx, cy)]}  # no other die of the photo changed


def test_the_evaluation_sets_are_cut_with_the_corrected_val_labels_and_evaluate_reads_them_as_published(rune55, tmp_path):
    """The green die photographed showing three marks in a row, labelled four: the cup sets paste it as a three,
    while ``evaluate`` on the shared folder keeps the label as published."""
    name = "PXL_20240219_192137038_jpg.rf.484fbe653d6e6e86380422b71a3dadaa"
    root = tmp_path / "real-dice-rune55"
    (root / "images").mkdir(parents=True)
    (root / "labels").mkdir()
    shutil.copy(rune55 / "images" / f"{name}.jpg", root / "images")
    shutil.copy(rune55 / "labels" / f"{name}.txt", root / "labels")
    (root / "split.json").write_text(json.dumps({"train": [], "val": [name]}))
    published = sorted(v for v, *_ in yolo_labels(root / "labels" / f"{name}.txt", 640, 640))
    cut = sorted(seen for seen, _ in real_val_dice(tmp_path))
    assert published.count(4) == cut.count(4) + 1 and cut.count(3) == published.count(3) + 1


def test_real_dice_are_pasted_from_the_train_split_for_training_and_never_from_test(rune55, tmp_path):
    """``real_val_dice(split="train")`` (the number-dice cue's pasted negatives) cuts the train photos' dice, none of the
    val ones; the test split is refused in words."""
    root = tmp_path / "real-dice-rune55"
    (root / "images").mkdir(parents=True)
    (root / "labels").mkdir()
    names = json.loads((rune55 / "split.json").read_text())
    train, val = names["train"][:40], names["val"][:20]  # many of its photos hold tray dice too small to paste
    for name in train + val:
        shutil.copy(rune55 / "images" / f"{name}.jpg", root / "images")
        shutil.copy(rune55 / "labels" / f"{name}.txt", root / "labels")
    (root / "split.json").write_text(json.dumps({"train": train, "val": val}))
    from_train, from_val = real_val_dice(tmp_path, split="train"), real_val_dice(tmp_path)
    assert from_train and from_val
    assert not any(any(a.shape == b.shape and (a == b).all() for _, b in from_val) for _, a in from_train)
    with pytest.raises(ValueError, match="never the test split"):
        real_val_dice(tmp_path, split="test")
