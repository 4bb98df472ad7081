"""``elephants-bluff evaluate``: the counts on a labelled folder, and a clear sentence for a folder it cannot use."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import cv2
import numpy as np
import pytest

from companion.core.errors import ElephantsBluffError
from vision.evaluate import EvaluationError, evaluate
from vision.simtable import render_table

ROOT = Path(__file__).resolve().parents[2]


def write_frames(root: Path, layouts: list[list[int]], seed: int = 5) -> list[list]:
    """Rendered photos seen from above, with YOLO labels of the faces the camera sees."""
    (root / "images").mkdir(parents=True)
    (root / "labels").mkdir()
    rng = np.random.default_rng(seed)
    placed_all = []
    for i, seen in enumerate(layouts):
        frame, placed = render_table(seen, rng, width=640, height=480, view="above", touching=0.0, glare=0, leaning=0.0)
        cv2.imwrite(str(root / "images" / f"p{i}.png"), frame)
        lines = []
        for d in placed:
            x, y, w, h = d.box()
            lines.append(f"{d.seen - 1} {(x + w / 2) / 640:.6f} {(y + h / 2) / 480:.6f} {w / 640:.6f} {h / 480:.6f}")
        (root / "labels" / f"p{i}.txt").write_text("\n".join(lines) + "\n")
        placed_all.append(placed)
    (root / "split.json").write_text(json.dumps({"val": [f"p{i}" for i in range(len(layouts))]}))
    return placed_all


@pytest.fixture(scope="module")
def frames(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("frames")
    write_frames(root, [[2, 5, 6], [1, 3, 4], [6, 6, 2]])
    return root


def test_the_counts_of_a_folder_of_photos_add_up(frames, reader):
    report = evaluate(frames, reader, "val")
    assert report["kind"] == "frames" and report["photos"] == 3 and report["dice"] == 9
    assert report["right"] + report["silently_wrong"] + report["flagged"] == report["dice"]
    assert sum(sum(row) for row in report["confusion"]) == 9
    assert sum(v["dice"] for v in report["per_value"].values()) == 9
    assert report["right"] >= 7, report  # clean rendered dice: the reader gets nearly all of them


def test_dice_read_right_without_a_doubt_and_the_doubts_are_counted_from_the_dice_read(frames, reader):
    from vision.evaluate import match_boxes, read_photos

    report = evaluate(frames, reader, "val")
    expected_doubts: dict[str, int] = {}
    expected_clear = 0
    for photo in read_photos(frames, reader, "val", []):
        for (truth, *_), read, found in zip(photo.labels, photo.values_read(), match_boxes([d.box for d in photo.reading.dice], photo.labels)):
            doubts = photo.reading.dice[found].doubts if found is not None else ()
            for code in doubts:
                expected_doubts[code] = expected_doubts.get(code, 0) + 1
            expected_clear += read == truth and not doubts
    assert report["right_without_doubt"] == expected_clear <= report["right"]
    assert report["doubts"] == dict(sorted(expected_doubts.items()))
    assert report["right_without_doubt"] >= 6, report  # clean, flat rendered dice: most need no confirmation


def test_an_unsure_crop_counts_as_a_low_confidence_doubt(tmp_path, reader):
    rng = np.random.default_rng(4)
    (tmp_path / "crops").mkdir()
    frame, (die,) = render_table([5], rng, width=200, height=200, view="above", die_side=90, glare=0)
    x, y, w, h = die.box()
    cv2.imwrite(str(tmp_path / "crops" / "die.png"), frame[y:y + h, x:x + w])
    cv2.imwrite(str(tmp_path / "crops" / "noise.png"), rng.integers(0, 256, (60, 60, 3), dtype=np.uint8))
    (tmp_path / "crops.csv").write_text("file,value\ncrops/die.png,5\ncrops/noise.png,3\n")
    report = evaluate(tmp_path, reader)
    unsure = report["doubts"].get("low_confidence", 0)
    # each crop is sure and right, sure and wrong, or unsure (a doubt), whatever it shows
    assert report["right_without_doubt"] + report["silently_wrong"] + unsure == report["dice"] == 2
    assert set(report["doubts"]) <= {"low_confidence"}
    assert report["confusion"][3][3] == 0, report  # noise is not read as the three its label claims
    assert report["right_without_doubt"] == 1, report  # the clean five, read sure


def test_a_wrong_label_read_sure_counts_as_silently_wrong(tmp_path, reader):
    write_frames(tmp_path, [[2, 5, 6]])
    before = evaluate(tmp_path, reader)
    assert before["silently_wrong"] == 0
    label = tmp_path / "labels" / "p0.txt"
    lines = label.read_text().splitlines()
    cls, rest = lines[0].split(" ", 1)
    lines[0] = f"{(int(cls) + 2) % 6} {rest}"  # the label now names another face than the die shows
    label.write_text("\n".join(lines) + "\n")
    after = evaluate(tmp_path, reader)
    if before["photos_all_right"] == 1:  # read ok and right before: the same reading is now a silent error
        assert after["silently_wrong"] == 1 and after["right"] == before["right"] - 1
    else:
        assert after["flagged"] + after["silently_wrong"] == before["flagged"] + before["silently_wrong"] + 1


def test_a_label_found_wrong_by_eye_is_read_as_its_fix_says_and_listed(tmp_path, reader):
    write_frames(tmp_path, [[2, 5, 6]])
    published = evaluate(tmp_path, reader)
    label = tmp_path / "labels" / "p0.txt"
    lines = label.read_text().splitlines()
    cls, x, y, _ = lines[0].split(" ", 3)
    lines[0] = lines[0].replace(f"{cls} ", f"{(int(cls) + 2) % 6} ", 1)  # published wrong: another face than the die shows
    label.write_text("\n".join(lines) + "\n")
    fixes = {("p0", round(float(x), 4), round(float(y), 4)): int(cls) + 1}  # the face it shows, keyed as vision.dataset keys it
    wrong = evaluate(tmp_path, reader)
    fixed = evaluate(tmp_path, reader, label_fixes=fixes)
    assert wrong["right"] == published["right"] - 1  # the die read right counts wrong against the published label
    assert {k: fixed[k] for k in ("right", "silently_wrong", "flagged")} == {k: published[k] for k in ("right", "silently_wrong", "flagged")}
    assert fixed["labels_fixed"] == [f"p0@{round(float(x), 4)},{round(float(y), 4)}"]
    assert "labels_fixed" not in wrong  # the command reads labels as published and says nothing of fixes
    assert evaluate(tmp_path, reader, label_fixes={("other", 0.5, 0.5): 3})["labels_fixed"] == []


def test_the_photos_read_wrong_are_listed_with_their_labels_and_what_was_read(tmp_path, reader):
    from vision.evaluate import summary

    write_frames(tmp_path, [[2, 5, 6], [1, 3, 4]])
    label = tmp_path / "labels" / "p1.txt"
    lines = label.read_text().splitlines()
    cls, rest = lines[0].split(" ", 1)
    lines[0] = f"{(int(cls) + 2) % 6} {rest}"  # p1's first die is now labelled with a face it does not show
    label.write_text("\n".join(lines) + "\n")
    report = evaluate(tmp_path, reader)
    wrong = [m for m in report["misses"] if m["photo"] == "p1"]
    assert len(wrong) == 1 and wrong[0]["labelled"][0] == (int(cls) + 2) % 6 + 1
    assert wrong[0]["read"][0] != wrong[0]["labelled"][0]
    assert len(report["misses"]) == report["photos"] - report["photos_all_right"]
    assert sum(m["silent"] for m in report["misses"]) <= report["silently_wrong"]
    assert "  p1: " in summary(report)


def test_the_summary_lists_twenty_misses_and_points_to_json_for_the_rest():
    from vision.evaluate import Tally, summary

    tally = Tally()
    for i in range(25):
        tally.add_die(3, 2, False, ("low_confidence",))
        tally.add_miss(f"c{i}.jpg", [3], [2], False)
    text = summary(tally.as_json("crops", None))
    assert "25 photos, the first 20 (--json lists every one)" in text
    assert "  c19.jpg: 3 -> 2, flagged" in text and "c20.jpg" not in text


def test_a_folder_of_crops_is_read_die_by_die(tmp_path, reader):
    rng = np.random.default_rng(3)
    rows = ["file,value,split"]
    (tmp_path / "crops").mkdir()
    for i, seen in enumerate([1, 2, 3, 4, 5, 6]):
        frame, (die,) = render_table([seen], rng, width=200, height=200, view="above", die_side=90, glare=0)
        x, y, w, h = die.box()
        cv2.imwrite(str(tmp_path / "crops" / f"c{i}.png"), frame[max(0, y - 5):y + h + 5, max(0, x - 5):x + w + 5])
        rows.append(f"crops/c{i}.png,{seen},{'val' if i % 2 else 'train'}")
    (tmp_path / "crops.csv").write_text("\n".join(rows) + "\n")
    everything = evaluate(tmp_path, reader)
    assert everything["kind"] == "crops" and everything["dice"] == 6
    assert evaluate(tmp_path, reader, "val")["dice"] == 3
    assert everything["right"] >= 5


def test_crops_sorted_by_hand_into_a_folder_per_face_are_read_as_a_crops_csv_would_list_them(tmp_path, reader):
    """crops/val/3/c2.png: a set sorted into folders per split and face, without a crops.csv."""
    rng = np.random.default_rng(3)
    listed = ["file,value,split"]
    for i, seen in enumerate([1, 2, 3, 4, 5, 6]):
        frame, (die,) = render_table([seen], rng, width=200, height=200, view="above", die_side=90, glare=0)
        x, y, w, h = die.box()
        split = "val" if i % 2 else "train"
        path = tmp_path / "sorted" / "crops" / split / str(seen) / f"c{i}.png"
        path.parent.mkdir(parents=True)
        cv2.imwrite(str(path), frame[max(0, y - 5):y + h + 5, max(0, x - 5):x + w + 5])
        (tmp_path / "listed" / "crops").mkdir(parents=True, exist_ok=True)
        cv2.imwrite(str(tmp_path / "listed" / "crops" / f"c{i}.png"), frame[max(0, y - 5):y + h + 5, max(0, x - 5):x + w + 5])
        listed.append(f"crops/c{i}.png,{seen},{split}")
    (tmp_path / "listed" / "crops.csv").write_text("\n".join(listed) + "\n")
    (tmp_path / "sorted" / "crops" / "val" / "notes.txt").write_text("not a crop")
    for split in (None, "val"):
        by_folder, by_table = evaluate(tmp_path / "sorted", reader, split), evaluate(tmp_path / "listed", reader, split)
        assert by_folder["kind"] == "crops" and by_folder["dice"] == (6 if split is None else 3)
        assert {k: by_folder[k] for k in ("dice", "right", "per_value", "confusion")} == {k: by_table[k] for k in ("dice", "right", "per_value", "confusion")}
    with pytest.raises(EvaluationError, match=r"its folders per face\) has no split called 'test' \(it has: train, val\)"):
        evaluate(tmp_path / "sorted", reader, "test")
    for split in ("train", "val"):  # the same crops sorted per face without split folders
        for face in (p for p in (tmp_path / "sorted" / "crops" / split).iterdir() if p.is_dir()):
            for crop in face.iterdir():
                (tmp_path / "flat" / face.name).mkdir(parents=True, exist_ok=True)
                crop.rename(tmp_path / "flat" / face.name / crop.name)
    assert evaluate(tmp_path / "flat", reader)["dice"] == 6
    with pytest.raises(EvaluationError, match=r"its folders per face\) has no folder per split, so it has no split called 'val'"):
        evaluate(tmp_path / "flat", reader, "val")


@pytest.mark.parametrize(
    ("make", "words"),
    [
        (lambda root: None, "is not a folder of dice photos"),
        (lambda root: root.mkdir(), "holds neither images/ with labels/ (whole photos) nor a crops.csv or folders of crops named for their face"),
        (lambda root: (root.mkdir(), (root / "crops.csv").write_text("name,face\nx.jpg,3\n")), "must start with the header file,value"),
        (lambda root: (root.mkdir(), (root / "crops.csv").write_text("file,value\nx.jpg,9\n")), "9 is not a face from 1 to 6"),
        (lambda root: (root.mkdir(), (root / "crops.csv").write_text("file,value,split\nx.jpg,2,train\n")), "has no split called 'val' (it has: train)"),
    ],
    ids=["missing", "empty", "bad header", "bad face", "unknown split"],
)
def test_a_folder_it_cannot_use_is_refused_in_words(tmp_path, reader, make, words):
    root = tmp_path / "set"
    make(root)
    split = "val" if "split" in words else None
    with pytest.raises(EvaluationError, match=words.replace("(", r"\(").replace(")", r"\)")):
        evaluate(root, reader, split)


def test_photos_with_a_cameras_capital_suffixes_are_read_and_split_names_may_carry_their_suffix(tmp_path, reader):
    write_frames(tmp_path, [[2, 5, 6], [1, 3, 4]])
    for i, suffix in enumerate([".JPG", ".PNG"]):
        (tmp_path / "images" / f"p{i}.png").rename(tmp_path / "images" / f"p{i}{suffix}")
    every = evaluate(tmp_path, reader)
    assert every["photos"] == 2 and every["dice"] == 6 and not every["unreadable_files"]
    (tmp_path / "split.json").write_text(json.dumps({"val": ["p0.JPG", "p1"]}))
    assert evaluate(tmp_path, reader, "val")["photos"] == 2


def _as_folders_per_split(root: Path, splits: dict[str, list[str]]) -> None:
    """The set rewritten as YOLO trainers lay one out: images/SPLIT/ and labels/SPLIT/, no split.json."""
    for split, names in splits.items():
        for kind, suffix in (("images", ".png"), ("labels", ".txt")):
            (root / kind / split).mkdir()
            for name in names:
                (root / kind / f"{name}{suffix}").rename(root / kind / split / f"{name}{suffix}")
    (root / "split.json").unlink()


def test_a_set_with_a_folder_per_split_is_read_whole_or_split_by_split(tmp_path, reader):
    write_frames(tmp_path, [[2, 5, 6], [1, 3, 4], [6, 6, 2]])
    _as_folders_per_split(tmp_path, {"train": ["p0", "p1"], "val": ["p2"]})
    every = evaluate(tmp_path, reader)
    assert every["photos"] == 3 and every["dice"] == 9 and not every["unreadable_files"]
    val = evaluate(tmp_path, reader, "val")
    assert val["photos"] == 1 and val["dice"] == 3 and val["split"] == "val"
    with pytest.raises(EvaluationError, match=r"no split called 'test' \(its images/ has the folders: train, val\)"):
        evaluate(tmp_path, reader, "test")


def _as_an_export(root: Path, splits: dict[str, list[str]], yaml: str | None = None) -> None:
    """The set rewritten as Roboflow and Ultralytics export one: SPLIT/images/ beside SPLIT/labels/, no split.json."""
    for split, names in splits.items():
        for kind, suffix in (("images", ".png"), ("labels", ".txt")):
            (root / split / kind).mkdir(parents=True)
            for name in names:
                (root / kind / f"{name}{suffix}").rename(root / split / kind / f"{name}{suffix}")
    for kind in ("images", "labels"):
        (root / kind).rmdir()
    (root / "split.json").unlink()
    if yaml is not None:
        (root / "data.yaml").write_text(yaml)


def test_a_set_exported_with_images_and_labels_in_each_split_folder_is_read_whole_or_split_by_split(tmp_path, reader):
    write_frames(tmp_path / "plain", [[2, 5, 6], [1, 3, 4], [6, 6, 2]])
    whole = evaluate(tmp_path / "plain", reader)
    write_frames(tmp_path / "export", [[2, 5, 6], [1, 3, 4], [6, 6, 2]])
    _as_an_export(tmp_path / "export", {"train": ["p0", "p1"], "valid": ["p2"]},
                  "train: ../train/images\nval: ../valid/images\nnc: 6\nnames: ['1', '2', '3', '4', '5', '6']\n")
    every = evaluate(tmp_path / "export", reader)
    assert every["photos"] == 3 and every["dice"] == 9 and not every["unreadable_files"]
    for key in ("right", "silently_wrong", "flagged", "confusion"):
        assert every[key] == whole[key], key
    val = evaluate(tmp_path / "export", reader, "val")  # an export's "valid" is the val split
    assert val["photos"] == 1 and val["dice"] == 3 and val["split"] == "val"
    assert all(miss["photo"].startswith("valid/") for miss in val["misses"])
    with pytest.raises(EvaluationError, match=r"has no folder for the split 'test' \(it has: train, valid\)"):
        evaluate(tmp_path / "export", reader, "test")


def test_a_folder_per_split_called_valid_inside_images_is_the_val_split(tmp_path, reader):
    write_frames(tmp_path, [[2, 5, 6], [1, 3, 4]])
    _as_folders_per_split(tmp_path, {"train": ["p0"], "valid": ["p1"]})
    assert evaluate(tmp_path, reader, "val")["photos"] == 1


def _relabelled(root: Path, faces_of_class: list[int]) -> None:
    """Every label's class rewritten so that class ``k`` is the face ``faces_of_class[k]``."""
    class_of_face = {face: k for k, face in enumerate(faces_of_class)}
    for path in (root / "labels").glob("*.txt"):
        lines = [line.split() for line in path.read_text().splitlines() if line.strip()]
        path.write_text("".join(f"{class_of_face[int(c) + 1]} {' '.join(rest)}\n" for c, *rest in lines))


def test_classes_named_in_a_data_yaml_are_read_as_the_faces_they_name(tmp_path, reader):
    """An export sorts its class names: with ``five, four, one, six, three, two`` class 0 is a five. Read as
    class + 1 the same dice would be counted against the wrong faces, without a word."""
    write_frames(tmp_path / "plain", [[2, 5, 6], [1, 3, 4]])
    plain = evaluate(tmp_path / "plain", reader)
    root = tmp_path / "named"
    write_frames(root, [[2, 5, 6], [1, 3, 4]])
    _relabelled(root, [5, 4, 1, 6, 3, 2])
    (root / "data.yaml").write_text("nc: 6\nnames:\n  - five\n  - four\n  - one\n  - six\n  - three\n  - two\n")
    named = evaluate(root, reader)
    for key in ("dice", "right", "silently_wrong", "flagged", "per_value", "confusion"):
        assert named[key] == plain[key], key
    (root / "data.yaml").unlink()  # the same labels without their names: counted against other faces
    assert evaluate(root, reader)["right"] < plain["right"]


def test_classes_named_in_labelimgs_classes_txt_are_read_as_the_faces_they_name(tmp_path, reader):
    write_frames(tmp_path / "plain", [[2, 5, 6], [1, 3, 4]])
    plain = evaluate(tmp_path / "plain", reader)
    root = tmp_path / "labelimg"
    write_frames(root, [[2, 5, 6], [1, 3, 4]])
    _relabelled(root, [6, 5, 4, 3, 2, 1])
    (root / "labels" / "classes.txt").write_text("6\n5\n4\n3\n2\n1\n")
    named = evaluate(root, reader)
    for key in ("dice", "right", "silently_wrong", "flagged", "confusion"):
        assert named[key] == plain[key], key


@pytest.mark.parametrize(("yaml", "label", "words"), [
    ("names: ['dice']\n", "0 0.5 0.5 0.1 0.1\n", r"data.yaml: its class names \('dice'\) do not name the faces 1 to 6"),
    ("names: [one, two, three, four, five, six, unknown]\n", "6 0.5 0.5 0.1 0.1\n", r"line 1: class 6 is named 'unknown', not a face"),
    ("names: [six, five, four, three, two, one]\n", "7 0.5 0.5 0.1 0.1\n", r"line 1: class 7 is not among the 6 classes the set names"),
    ("names: [one, two, three, four, five, six]\n", "7 0.5 0.5 0.1 0.1\n", r"line 1: class 7 is not a face \(classes 0-5 are faces 1-6\)"),
    ("names: one two\n", "0 0.5 0.5 0.1 0.1\n", r"data.yaml: its names are neither a list nor one name per line"),
], ids=["a detector's one class", "a class naming no face", "a class past the names", "past the faces in order", "names unreadable"])
def test_a_data_yaml_whose_names_are_not_the_faces_is_refused_in_words(tmp_path, reader, yaml, label, words):
    write_frames(tmp_path, [[3, 3, 3]])
    (tmp_path / "labels" / "p0.txt").write_text(label)
    (tmp_path / "data.yaml").write_text(yaml)
    with pytest.raises(EvaluationError, match=words):
        evaluate(tmp_path, reader)


def test_a_folder_of_photos_without_any_photo_is_refused_in_words(tmp_path, reader):
    (tmp_path / "images").mkdir()
    (tmp_path / "labels").mkdir()
    (tmp_path / "images" / "notes.txt").write_text("photos to come")
    with pytest.raises(EvaluationError, match="images holds no photos"):
        evaluate(tmp_path, reader)
    (tmp_path / "images" / "IMG_0001.HEIC").write_bytes(b"\0\0\0\x18ftypheic")
    with pytest.raises(EvaluationError, match="its HEIC photos .an iPhone's. must first be saved as JPEG"):
        evaluate(tmp_path, reader)


def test_a_split_json_that_is_not_an_object_of_splits_is_refused_in_words(tmp_path, reader):
    write_frames(tmp_path, [[2, 5, 6]])
    (tmp_path / "split.json").write_text(json.dumps(["p0"]))
    with pytest.raises(EvaluationError, match="split.json is not a JSON object of split names to lists of photo names"):
        evaluate(tmp_path, reader, "val")


def test_a_split_json_with_a_byte_order_mark_is_read(tmp_path, reader):
    write_frames(tmp_path, [[2, 5, 6], [1, 3, 4]])
    (tmp_path / "split.json").write_text(json.dumps({"val": ["p1"]}), encoding="utf-8-sig")
    assert evaluate(tmp_path, reader, "val")["photos"] == 1


def test_a_split_that_is_not_a_list_of_photo_names_is_refused_in_words(tmp_path, reader):
    write_frames(tmp_path, [[2, 5, 6]])
    (tmp_path / "split.json").write_text(json.dumps({"val": {"p0": 1}}))
    with pytest.raises(EvaluationError, match="the split 'val' must be a list of photo names"):
        evaluate(tmp_path, reader, "val")


@pytest.mark.parametrize("table", [
    "\ufeffFile,Value,Split\nc0.png,2,val\nc1.png,6,val\n",
    "c0.png,2,val\nc1.png,6,val\n",
    "file;value;split\r\nc0.png;2;val\r\nc1.png;6;val\r\n",
    "file\tvalue\tsplit\nc0.png\t2\tval\nc1.png\t6\tval\n",
], ids=["byte-order mark and capitals", "no header", "semicolons", "tabs"])
def test_a_crops_csv_as_a_spreadsheet_saves_it_is_read(tmp_path, reader, table):
    rng = np.random.default_rng(9)
    for i, seen in enumerate([2, 6]):
        frame, (die,) = render_table([seen], rng, width=200, height=200, view="above", die_side=90, glare=0)
        x, y, w, h = die.box()
        cv2.imwrite(str(tmp_path / f"c{i}.png"), frame[y:y + h, x:x + w])
    (tmp_path / "crops.csv").write_bytes(table.encode("utf-8"))
    report = evaluate(tmp_path, reader, "val")
    assert report["dice"] == 2 and report["confusion"][2][2] + report["confusion"][6][6] == report["right"] >= 1


def test_a_crops_csv_may_name_its_crops_bare_or_with_windows_slashes(tmp_path, reader):
    (tmp_path / "crops" / "deep").mkdir(parents=True)
    rng = np.random.default_rng(10)
    frame, (die,) = render_table([4], rng, width=200, height=200, view="above", die_side=90, glare=0)
    x, y, w, h = die.box()
    cv2.imwrite(str(tmp_path / "crops" / "a.png"), frame[y:y + h, x:x + w])
    cv2.imwrite(str(tmp_path / "crops" / "deep" / "b.png"), frame[y:y + h, x:x + w])
    (tmp_path / "crops.csv").write_text("file,value\na.png,4\ncrops\\deep\\b.png,4\n")
    report = evaluate(tmp_path, reader)
    assert report["dice"] == 2 and not report["unreadable_files"]


def test_a_bad_face_in_a_crops_csv_without_a_header_names_its_own_line(tmp_path, reader):
    (tmp_path / "crops.csv").write_text("a.png,3\nb.png,8\n")
    with pytest.raises(EvaluationError, match=r"line 2: 8 is not a face"):
        evaluate(tmp_path, reader)


def test_a_crops_csv_that_is_not_text_is_refused_in_words(tmp_path, reader):
    (tmp_path / "crops.csv").write_bytes(b"\xff\xfe\x00f\x00i\x00l\x00e")
    with pytest.raises(EvaluationError, match="is not a UTF-8 text file"):
        evaluate(tmp_path, reader)


def test_a_broken_label_line_names_the_file_and_line(frames, tmp_path, reader):
    root = tmp_path / "copy"
    write_frames(root, [[3, 3, 3]])
    (root / "labels" / "p0.txt").write_text("2 0.5 0.5 0.1\n")
    with pytest.raises(ElephantsBluffError, match=r"p0.txt line 1 is not a YOLO label"):
        evaluate(root, reader)


def test_labels_drawn_as_turned_boxes_or_polygons_are_read_as_the_box_around_them(tmp_path, reader):
    """A labelling tool's OBB or segment export (``class x1 y1 x2 y2 ...``) is read as YOLO trainers read it for a
    detector, the upright box around the corners: the same counts as the same dice labelled with boxes."""
    placed = write_frames(tmp_path, [[2, 5, 6], [1, 3, 4]])
    as_boxes = evaluate(tmp_path, reader)
    for i, dice in enumerate(placed):
        lines = [f"{d.seen - 1} " + " ".join(f"{x / 640:.6f} {y / 480:.6f}" for x, y in d.corners()) for d in dice]
        (tmp_path / "labels" / f"p{i}.txt").write_text("\n".join(lines) + "\n")
    as_corners = evaluate(tmp_path, reader)
    assert as_corners["dice"] == 6 and not as_corners["unreadable_files"]
    for key in ("right", "silently_wrong", "flagged", "per_value", "confusion", "photos_all_right"):
        assert as_corners[key] == as_boxes[key], key


@pytest.mark.parametrize("content, words", [
    (b"2 0.5 0.5 0.1 0.1 0.2 0.3 0.4\n", r"p0.txt line 1 is not a YOLO label"),  # seven numbers: no box, no pairs
    (b"2.5 0.5 0.5 0.1 0.1\n", r"p0.txt line 1 is not a YOLO label"),  # a class between two classes
    (b"2 0.5 nan 0.1 0.1\n", r"p0.txt line 1 is not a YOLO label"),  # a box nowhere
    (b"\xff\xfe2\x00 \x000\x00.\x005\x00", r"p0.txt is not a text file of YOLO labels"),
])
def test_a_label_file_neither_boxes_nor_polygons_is_refused_in_words(tmp_path, reader, content, words):
    write_frames(tmp_path, [[3, 3, 3]])
    (tmp_path / "labels" / "p0.txt").write_bytes(content)
    with pytest.raises(EvaluationError, match=words):
        evaluate(tmp_path, reader)


def test_classes_written_as_whole_floats_are_read_as_their_classes(tmp_path, reader):
    """A label file a spreadsheet or pandas wrote (``2.0 0.5 ...``) counts the same dice as one written ``2 0.5 ...``."""
    write_frames(tmp_path, [[2, 5, 6], [1, 3, 4]])
    as_written = evaluate(tmp_path, reader)
    for path in (tmp_path / "labels").glob("*.txt"):
        path.write_text("".join(f"{float(c)} {' '.join(rest)}\n" for c, *rest in (line.split() for line in path.read_text().splitlines())))
    as_floats = evaluate(tmp_path, reader)
    for key in ("dice", "right", "silently_wrong", "flagged", "confusion"):
        assert as_floats[key] == as_written[key], key


def test_crops_whose_faces_are_named_in_words_are_read_as_those_faces(tmp_path, reader):
    """A classification export names its class folders as its classes were named (``three``, ``dice-3``), its
    validation folder ``valid``; a crops.csv may name the face in words: the same crops, the same counts."""
    frame, placed = render_table([3, 5, 1], np.random.default_rng(4), width=480, height=360, view="above", touching=0.0, glare=0, leaning=0.0)
    crops = [frame[int(d.cy - d.side * 0.7):int(d.cy + d.side * 0.7), int(d.cx - d.side * 0.7):int(d.cx + d.side * 0.7)] for d in placed]
    names = {3: "three", 5: "dice-5", 1: "One"}
    for split in ("train", "valid"):
        for d, image in zip(placed, crops):
            (tmp_path / "export" / split / names[d.seen]).mkdir(parents=True, exist_ok=True)
            cv2.imwrite(str(tmp_path / "export" / split / names[d.seen] / f"d{d.seen}.png"), image)
    every = evaluate(tmp_path / "export", reader)
    assert every["kind"] == "crops" and every["dice"] == 6 and sorted(v for v in every["per_value"] if every["per_value"][v]["dice"]) == ["1", "3", "5"]
    val = evaluate(tmp_path / "export", reader, "val")
    assert val["dice"] == 3
    (tmp_path / "listed").mkdir()
    for d, image in zip(placed, crops):
        cv2.imwrite(str(tmp_path / "listed" / f"d{d.seen}.png"), image)
    (tmp_path / "listed" / "crops.csv").write_text("file,value\n" + "".join(f"d{d.seen}.png,{names[d.seen]}\n" for d in placed))
    listed = evaluate(tmp_path / "listed", reader)
    assert listed["dice"] == 3 and listed["confusion"] == val["confusion"]


def test_folders_named_for_something_else_than_a_face_are_not_taken_for_faces(tmp_path, reader):
    """``session 1/`` and ``run 3/`` name photo sessions, not faces: such a folder is refused as before, not read as
    crops of ones and threes."""
    for folder in ("session 1", "run 3"):
        (tmp_path / folder).mkdir()
        cv2.imwrite(str(tmp_path / folder / "a.png"), np.full((64, 64, 3), 200, np.uint8))
    with pytest.raises(EvaluationError, match="holds neither images/ with labels/"):
        evaluate(tmp_path, reader)


def test_an_unreadable_image_is_reported_and_the_rest_read(tmp_path, reader):
    write_frames(tmp_path, [[2, 5, 6], [1, 3, 4]])
    (tmp_path / "images" / "p1.png").write_bytes(b"not a picture")
    report = evaluate(tmp_path, reader)
    assert report["photos"] == 1 and len(report["unreadable_files"]) == 1


def test_the_command_prints_one_json_object_with_the_documented_keys(frames, tmp_path):
    out = subprocess.run([sys.executable, "-m", "companion.app.cli", "evaluate", str(frames), "--split", "val", "--json", "--instance", str(tmp_path)],
                         cwd=ROOT, capture_output=True, text=True, check=True).stdout
    report = json.loads(out)
    assert {"dice", "right", "accuracy", "silently_wrong", "flagged", "photos", "photos_all_right", "per_value", "confusion",
            "right_without_doubt", "doubts", "misses"} <= set(report)


def test_the_command_names_the_model_that_read_and_says_when_the_instances_taught_model_cannot(frames, tmp_path):
    """``--instance`` reads with the instance's active model; where that taught model's file is gone, the shipped one
    reads, and the command says so on stderr and names the shipped model in the report, so the figures are never
    taken for the taught model's."""
    from vision.classifier import file_model_id, shipped_model_path

    (tmp_path / "models").mkdir()
    (tmp_path / "models" / "registry.json").write_text(json.dumps({"active": "taught-abc", "models": {"taught-abc": {"head": "taught-abc.npz"}}}))
    done = subprocess.run([sys.executable, "-m", "companion.app.cli", "evaluate", str(frames), "--split", "val", "--json", "--instance", str(tmp_path)],
                          cwd=ROOT, capture_output=True, text=True, check=True)
    assert json.loads(done.stdout)["model"] == file_model_id(shipped_model_path())
    assert "The taught model taught-abc cannot be loaded" in done.stderr and "so the shipped model reads" in done.stderr
    text = subprocess.run([sys.executable, "-m", "companion.app.cli", "evaluate", str(frames), "--split", "val", "--instance", str(tmp_path)],
                          cwd=ROOT, capture_output=True, text=True, check=True).stdout
    assert f"read by the face model {file_model_id(shipped_model_path())}" in text


def test_the_command_says_what_is_wrong_with_a_folder(tmp_path):
    done = subprocess.run([sys.executable, "-m", "companion.app.cli", "evaluate", str(tmp_path / "nowhere"), "--instance", str(tmp_path)],
                          cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 2 and "is not a folder of dice photos" in done.stderr and "Traceback" not in done.stderr


# A set read with the wrong faces or the wrong boxes must never give a wrong figure without a word (found by a CLI
# audit): a row, a photo or a label line listed twice was counted twice; labels in pixels, of no size or outside the
# photo were read as boxes; a run that measured nothing ended as a success.


def _crops(root: Path, faces: list[int], seed: int = 3) -> list[str]:
    """Rendered crops of one die each, ``c0.png`` ... in ``root/crops``; their names as a crops.csv lists them."""
    rng = np.random.default_rng(seed)
    (root / "crops").mkdir(parents=True)
    names = []
    for i, seen in enumerate(faces):
        frame, (die,) = render_table([seen], rng, width=200, height=200, view="above", die_side=90, glare=0)
        x, y, w, h = die.box()
        cv2.imwrite(str(root / "crops" / f"c{i}.png"), frame[max(0, y - 5):y + h + 5, max(0, x - 5):x + w + 5])
        names.append(f"crops/c{i}.png")
    return names


def test_a_crop_listed_twice_with_the_same_face_is_read_once_and_said(tmp_path, reader):
    names = _crops(tmp_path, [1, 3, 6])
    rows = [f"{name},{face},val" for name, face in zip(names, [1, 3, 6])]
    (tmp_path / "crops.csv").write_text("file,value,split\n" + "\n".join(rows) + "\n")
    once = evaluate(tmp_path, reader)
    # the first crop again as it was, and again named bare (crops/ is where a bare name is looked for)
    (tmp_path / "crops.csv").write_text("file,value,split\n" + "\n".join(rows + [rows[0], "c0.png,1,val"]) + "\n")
    again = evaluate(tmp_path, reader)
    for key in ("dice", "right", "silently_wrong", "flagged", "photos", "confusion"):
        assert again[key] == once[key], key
    assert once["dice"] == 3 and once["warnings"] == []
    assert again["warnings"] == [f"{tmp_path / 'crops.csv'} lists 1 crop more than once (crops/c0.png on lines 2, 5 and 6); it is read once."]


def test_a_crop_listed_as_two_faces_is_refused_naming_the_file_and_both_lines(tmp_path, reader):
    names = _crops(tmp_path, [1, 3])
    (tmp_path / "crops.csv").write_text(f"file,value,split\n{names[0]},1,val\n{names[1]},3,val\n{names[0]},2,train\n")
    with pytest.raises(EvaluationError, match=r"crops.csv lists crops/c0.png as two faces, a 1 on line 2 and a 2 on line 4"):
        evaluate(tmp_path, reader, "val")  # even where one of the two lines is in another split


def test_a_crop_of_the_split_listed_in_another_split_too_is_said(tmp_path, reader):
    names = _crops(tmp_path, [1, 3])
    (tmp_path / "crops.csv").write_text(f"file,value,split\n{names[0]},1,train\n{names[1]},3,val\n{names[0]},1,val\n")
    val = evaluate(tmp_path, reader, "val")
    assert val["dice"] == 2
    assert val["warnings"] == [f"{tmp_path / 'crops.csv'} lists 1 crop of the split 'val' in the split 'train' too "
                               "(crops/c0.png on lines 2 and 4): a model taught on 'train' has seen it."]
    every = evaluate(tmp_path, reader)
    assert every["dice"] == 2 and "crops/c0.png on lines 2 and 4); it is read once" in every["warnings"][0]


def test_a_photo_listed_twice_in_split_json_is_read_once_and_said(tmp_path, reader):
    write_frames(tmp_path, [[2, 5, 6], [1, 3, 4]])
    once = evaluate(tmp_path, reader, "val")
    (tmp_path / "split.json").write_text(json.dumps({"val": ["p0", "p1", "p0.png"], "train": ["p1"]}))
    again = evaluate(tmp_path, reader, "val")
    for key in ("dice", "right", "silently_wrong", "flagged", "photos", "confusion"):
        assert again[key] == once[key], key
    split_file = tmp_path / "split.json"
    assert again["warnings"] == [f"{split_file} lists 1 photo twice in the split 'val' (p0); it is read once.",
                                 f"{split_file} lists 1 photo of the split 'val' in the split 'train' too (p1): a model taught on 'train' has seen it."]


def test_a_label_line_repeated_is_counted_once_and_said(tmp_path, reader):
    write_frames(tmp_path, [[2, 5, 6]])
    once = evaluate(tmp_path, reader)
    label = tmp_path / "labels" / "p0.txt"
    lines = label.read_text().splitlines()
    label.write_text("\n".join(lines + [lines[1]]) + "\n")  # an export that wrote one box twice
    again = evaluate(tmp_path, reader)
    for key in ("dice", "right", "silently_wrong", "flagged", "extra", "confusion"):
        assert again[key] == once[key], key
    assert again["warnings"] == [f"{label} line 4 repeats line 2 (a 5 in the same box); the die is counted once."]


def test_one_box_labelled_as_two_faces_is_refused_naming_both_lines(tmp_path, reader):
    write_frames(tmp_path, [[2, 5, 6]])
    label = tmp_path / "labels" / "p0.txt"
    lines = label.read_text().splitlines()
    label.write_text("\n".join(lines + ["0 " + lines[1].split(" ", 1)[1]]) + "\n")
    with pytest.raises(EvaluationError, match=r"p0.txt lines 2 and 4 label the same box as two faces, a 5 and a 1"):
        evaluate(tmp_path, reader)


@pytest.mark.parametrize(("line", "words"), [
    ("2 320.5 240 40 42", r"line 1: its centre \(320.5, 240\) lies outside the photo: .* from 0 to 1 \(were these written in pixels\?\)"),
    ("2 0.5 0.5 0 0", r"line 1: its width and height \(0 × 0\) must be more than 0"),
    ("2 0.5 0.5 -0.1 -0.1", r"line 1: its width and height \(-0.1 × -0.1\) must be more than 0"),
    ("2 1.5 -0.5 0.1 0.1", r"line 1: its centre \(1.5, -0.5\) lies outside the photo"),
    ("2 0.5 0.5 1.2 0.1", r"line 1: its width and height \(1.2 × 0.1\) are larger than the photo"),
], ids=["in pixels", "no size", "a size below 0", "centre outside", "wider than the photo"])
def test_a_label_whose_box_is_no_box_in_the_photo_is_refused_naming_the_file_and_line(tmp_path, reader, line, words):
    write_frames(tmp_path, [[3, 3, 3]])
    (tmp_path / "labels" / "p0.txt").write_text(line + "\n")
    with pytest.raises(EvaluationError, match=r"p0.txt " + words):
        evaluate(tmp_path, reader)


def test_a_label_an_export_rounded_a_hair_past_the_edge_is_read(tmp_path, reader):
    """An export's rounding (a centre at 1.0004, a whole-photo box at 1.0005) is a box in the photo, not an error."""
    write_frames(tmp_path, [[3]])
    (tmp_path / "labels" / "p0.txt").write_text("2 1.0004 -0.0004 0.05 0.05\n2 0.5 0.5 1.0005 1.0\n")
    assert evaluate(tmp_path, reader)["dice"] == 2


def _run(args: list[str], capsys) -> tuple[int, str, str]:
    from companion.app.cli import main

    status = main(args)
    out, err = capsys.readouterr()
    return status, out, err


@pytest.mark.parametrize("case", ["every crop missing", "a crops.csv of its header alone", "an empty split", "the split's one photo missing"])
def test_the_command_ends_with_status_1_and_says_why_when_it_measured_nothing(tmp_path, capsys, case):
    """A run that counted no die is no figure: it says why on stderr and ends with status 1, the report still printed."""
    root = tmp_path / "set"
    split: list[str] = []
    if case == "every crop missing":
        root.mkdir()
        (root / "crops.csv").write_text("file,value\ncrops/a.png,3\ncrops/b.png,4\n")
        why = "none of the 2 crops of the folder could be read"
    elif case == "a crops.csv of its header alone":
        root.mkdir()
        (root / "crops.csv").write_text("file,value,split\n")
        why = "the folder lists no crops"
    elif case == "an empty split":
        write_frames(root, [[2, 5, 6]])
        (root / "split.json").write_text(json.dumps({"train": ["p0"], "val": []}))
        split, why = ["--split", "val"], "the split 'val' lists no photos"
    else:
        write_frames(root, [[2, 5, 6]])
        (root / "images" / "p0.png").unlink()
        split, why = ["--split", "val"], "the one photo of the split 'val' could not be read"
    status, out, err = _run(["evaluate", str(root), *split, "--instance", str(tmp_path / "instance")], capsys)
    assert status == 1 and f"elephants-bluff: Nothing was measured: {why}" in err
    assert out.startswith("crops: no dice" if "crop" in case else "frames (val): no dice")  # the split named where it counts nothing
    status, out, _ = _run(["evaluate", str(root), *split, "--json", "--instance", str(tmp_path / "instance")], capsys)
    assert status == 1 and json.loads(out)["dice"] == 0


def test_a_photo_without_a_label_file_is_read_as_one_of_no_dice_where_every_die_found_is_invented(tmp_path, capsys):
    """YOLO's layout leaves a background photo (no dice on it) without a label file: it was skipped as unreadable, so
    the dice invented on the photos a set holds to catch them were not counted, and the run ended with status 1."""
    root = tmp_path / "set"
    write_frames(root, [[2, 5, 6], [1, 3, 4]])
    (root / "labels" / "p1.txt").unlink()  # p1 shows three dice nobody labelled: each one found is counted invented
    status, out, err = _run(["evaluate", str(root), "--split", "val", "--json", "--instance", str(tmp_path / "instance")], capsys)
    report = json.loads(out)
    assert status == 0 and err == "" and report["unreadable_files"] == []
    assert report["photos"] == 2 and report["dice"] == 3 and report["extra"] >= 1
    assert report["warnings"] == ["1 photo has no label file (p1): each is read as a photo of no dice, where any die read is invented"]
    assert any(m["photo"] == "p1" and m["labelled"] == [] and m["extra"] == report["extra"] for m in report["misses"])


def test_a_set_of_background_photos_alone_measures_the_dice_invented_on_them(tmp_path, capsys):
    """Photos of no dice (an empty tray, a table) and no label files: the figure is how many dice were invented."""
    root = tmp_path / "set"
    (root / "images").mkdir(parents=True)
    (root / "labels").mkdir()
    for i in range(2):
        cv2.imwrite(str(root / "images" / f"empty{i}.png"), np.full((480, 640, 3), 90 + 60 * i, np.uint8))
    status, out, err = _run(["evaluate", str(root), "--instance", str(tmp_path / "instance")], capsys)
    assert status == 0 and err == ""
    assert out.startswith("frames: no dice labelled; 0 dice invented on its 2 photos")
    assert "warning: 2 photos have no label file (empty0, empty1)" in out


@pytest.mark.parametrize("kind", ["frames", "crops"])
def test_the_command_ends_with_status_1_where_part_of_the_set_could_not_be_read(tmp_path, capsys, kind):
    """Figures of part of a set are not the set's: it ended as a success with a photo unreadable (a maintainer's
    script took 2 photos' figures for 3's). The report is printed, the rest counted, the reason said on stderr."""
    root = tmp_path / "set"
    if kind == "frames":
        write_frames(root, [[2, 5, 6], [1, 3, 4], [6, 6, 1]])
        (root / "images" / "p1.png").write_bytes(b"not a picture")
        why = "Part of the folder was measured: 1 photo could not be read (named under \"unreadable\"); the figures are of the 2 photos read."
    else:
        (root / "crops").mkdir(parents=True)
        (root / "crops.csv").write_text("file,value\ncrops/a.png,3\ncrops/b.png,4\n")
        (root / "crops" / "a.png").write_bytes(b"not a picture")
        import cv2
        import numpy as np

        cv2.imwrite(str(root / "crops" / "b.png"), np.full((40, 40, 3), 200, np.uint8))
        why = "Part of the folder was measured: 1 crop could not be read (named under \"unreadable\"); the figures are of the 1 crop read."
    status, out, err = _run(["evaluate", str(root), "--instance", str(tmp_path / "instance")], capsys)
    assert status == 1 and f"elephants-bluff: {why}" in err and "unreadable: " in out
    status, out, _ = _run(["evaluate", str(root), "--json", "--instance", str(tmp_path / "instance")], capsys)
    report = json.loads(out)
    assert status == 1 and len(report["unreadable_files"]) == 1 and report["dice"] == (6 if kind == "frames" else 1)
