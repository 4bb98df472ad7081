"""``vision.photo_sets``: the class names a set's ``data.yaml`` gives, read as a YAML reader reads them, and the face
each names."""

from __future__ import annotations

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from vision.photo_sets import class_faces, data_yaml_names, face_named, split_folder_name

#: class names as labelling tools write them: words, numbers, spaces, dashes, quotes and commas inside
NAME = st.text(st.sampled_from("abcdefXYZ0123456789 -_',\"#:"), min_size=1, max_size=12).filter(
    lambda n: n.strip() == n and n[0] not in "-#'\"[{&*!|>%@`?:," and not n.endswith(":"))


@settings(max_examples=300, deadline=None)
@given(names=st.lists(NAME, min_size=1, max_size=8), style=st.sampled_from(["flow", "block", "indexed", "indexed flow"]))
def test_the_names_are_read_as_a_yaml_reader_reads_them(names, style):
    if style == "flow":
        text = yaml.safe_dump({"nc": len(names), "names": names}, default_flow_style=None, width=30)
    elif style == "block":
        text = yaml.safe_dump({"names": names, "path": "../data"}, default_flow_style=False)
    elif style == "indexed":
        text = yaml.safe_dump({"train": "x", "names": dict(enumerate(names))}, default_flow_style=False)
    else:
        text = "nc: 9\nnames: " + yaml.safe_dump(dict(enumerate(names)), default_flow_style=True, width=40)
    loaded = yaml.safe_load(text)["names"]
    expected = [loaded[k] for k in sorted(loaded)] if isinstance(loaded, dict) else loaded
    assert data_yaml_names(text) == [str(n) for n in expected], text


def test_a_data_yaml_without_names_gives_none_and_unreadable_names_are_refused():
    assert data_yaml_names("train: a\nval: b\nnc: 6\n") is None
    assert data_yaml_names("# names: [a]\nnc: 1\n") is None
    with pytest.raises(ValueError, match="never closed"):
        data_yaml_names("names: ['a', 'b'\n")
    with pytest.raises(ValueError, match="not numbered 0, 1, 2"):
        data_yaml_names("names:\n  1: a\n  2: b\n")
    with pytest.raises(ValueError, match="mix a list with numbered names"):
        data_yaml_names("names:\n  - a\n  1: b\n")


@pytest.mark.parametrize(("name", "face"), [
    ("1", 1), ("6", 6), ("dice-3", 3), ("3 pips", 3), ("Five", 5), ("six_dots", 6), ("face 4", 4),
    ("0", None), ("7", None), ("dice", None), ("d6", None), ("d6-2", None), ("1 2", None), ("one two", None), ("12", None),
    ("session 1", None), ("run3", None), ("train", None), ("images", None),
])
def test_a_class_name_names_a_face_only_without_doubt(name, face):
    assert face_named(name) == face


def test_class_names_must_name_each_face_once():
    assert class_faces(["two", "one", "3", "4", "5", "6", "unknown"]) == [2, 1, 3, 4, 5, 6, None]
    assert class_faces(["1", "2", "3", "4", "5", "6"]) is None  # what class + 1 says already
    for names in (["one", "one", "three", "four", "five", "six"], ["1", "2", "3", "4", "5"], ["d6"]):
        with pytest.raises(ValueError, match="do not name the faces 1 to 6 once each"):
            class_faces(names)


def test_an_exports_valid_folder_is_the_val_split():
    assert split_folder_name(["test", "train", "valid"], "val") == "valid"
    assert split_folder_name(["validation"], "valid") == "validation"
    assert split_folder_name(["train"], "test") is None
