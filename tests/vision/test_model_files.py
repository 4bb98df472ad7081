"""The shipped models are the files ``models/shipped.json`` names, and a model file named by its id must hash to it.

A model with one byte changed by a card fault still loads in onnxruntime (tried at three places in each shipped
file), and a face model with changed weights can read dice wrongly and sure of it; so a file named by an id it no
longer hashes to is refused at load, in words. With two face models in the folder the one read was whichever name
sorted last, by hash: chance.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from companion.core.errors import HardwareError
from vision import model_files
from vision.classifier import FaceClassifier, shipped_model_path
from vision.detector_learned import LearnedDetector, default_model_path
from vision.model_files import PARTS, file_id, shipped
from vision.registry import open_classifier
from vision.second_opinion import SecondOpinion, shipped_path

MODELS = Path(__file__).resolve().parents[2] / "models"


def _damaged(path: Path, folder: Path, name: str | None = None) -> Path:
    """A copy of ``path`` with one byte of its weights changed, as a card fault leaves it, named ``name`` (its own)."""
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0x40
    folder.mkdir(parents=True, exist_ok=True)
    out = folder / (name or path.name)
    out.write_bytes(bytes(data))
    return out


def test_the_manifest_names_one_whole_file_for_each_part_and_the_folder_ships_no_other():
    named = json.loads((MODELS / "shipped.json").read_text(encoding="utf-8"))
    assert sorted(named) == sorted(PARTS)
    for part, name in named.items():
        path = shipped(part)
        assert path is not None and path.name == name and name.startswith(PARTS[part])
        assert name == f"{PARTS[part]}{file_id(path.read_bytes())}.onnx"  # whole: it hashes to its name
    # every .onnx in the folder is package data and goes to every Pi: one no part reads is dead weight (or a mix-up)
    assert sorted(p.name for p in MODELS.glob("*.onnx")) == sorted(named.values())
    assert (shipped_model_path(), default_model_path(), shipped_path()) == tuple(MODELS / named[p] for p in ("faces", "detector", "second_opinion"))


@pytest.mark.parametrize("opener", [FaceClassifier, open_classifier], ids=["plain", "as the reader opens it"])
def test_a_damaged_shipped_face_model_is_refused_in_words_where_it_would_load(tmp_path, monkeypatch, opener):
    original = shipped_model_path()
    damaged = _damaged(original, tmp_path / "models")
    monkeypatch.setattr(model_files, "models_folder", lambda: damaged.parent)  # the shipped models' folder, on a worn card
    with pytest.raises(HardwareError) as refused:
        opener(damaged)
    assert refused.value.code == "bad_model"
    assert f"The dice model {damaged.name} is damaged" in refused.value.message and "reinstall the companion" in refused.value.message
    # the check is what refuses it: the same bytes under a name with no id load (an owner's own model, named freely)
    assert FaceClassifier(_damaged(original, tmp_path / "free", "my-model.onnx")).model_id.startswith("dice-faces-")


def test_a_damaged_copy_named_in_the_settings_is_refused_saying_to_mend_the_setting(tmp_path):
    damaged = _damaged(shipped_model_path(), tmp_path / "usb")
    with pytest.raises(HardwareError) as refused:
        FaceClassifier(damaged)
    assert refused.value.code == "bad_model" and "does not hash to the id in its name" in refused.value.message
    assert "check reader.model in config.toml" in refused.value.message


def test_a_damaged_detector_is_refused_in_words(tmp_path, monkeypatch):
    damaged = _damaged(default_model_path(), tmp_path / "models")
    monkeypatch.setattr(model_files, "models_folder", lambda: damaged.parent)
    with pytest.raises(HardwareError) as refused:
        LearnedDetector(damaged)
    assert refused.value.code == "bad_model" and f"The dice detector model {damaged.name} is damaged" in refused.value.message


def test_a_damaged_second_opinion_leaves_the_reader_saying_why(tmp_path):
    opinion, problem = SecondOpinion.load(_damaged(shipped_path(), tmp_path))
    assert opinion is None and problem is not None and "does not hash to the id in its name" in problem


def _folder(tmp_path: Path, manifest: object) -> Path:
    """A models folder holding the shipped face model and a candidate copied beside it, and ``manifest``."""
    folder = tmp_path / "models"
    folder.mkdir()
    shutil.copy(shipped_model_path(), folder)
    shutil.copy(MODELS / "training" / "base" / "dice-faces-5bbb6f704193.onnx", folder)
    if manifest is not None:
        (folder / "shipped.json").write_text(manifest if isinstance(manifest, str) else json.dumps(manifest), encoding="utf-8")
    return folder


def test_with_two_face_models_in_the_folder_the_named_one_is_read_whatever_sorts_last(tmp_path, monkeypatch):
    older = "dice-faces-5bbb6f704193.onnx"  # named here: the other, shipped today, sorts after it
    folder = _folder(tmp_path, {"faces": older})
    monkeypatch.setattr(model_files, "models_folder", lambda: folder)
    assert sorted(p.name for p in folder.glob("dice-faces-*.onnx"))[-1] != older  # the old rule would have read the other
    assert shipped("faces") == folder / older
    assert FaceClassifier().model_id == "dice-faces-5bbb6f704193"


@pytest.mark.parametrize("manifest", [None, "{not json", ["dice-faces-b86d9ba9d319.onnx"], {"faces": "../dice-faces-b86d9ba9d319.onnx"},
                                      {"faces": "dice-detector-4d3d2c1a8e08.onnx"}, {"faces": "dice-faces-000000000000.onnx"}],
                         ids=["no manifest", "not JSON", "not an object", "a path out of the folder", "another part's file", "a file not there"])
def test_without_a_manifest_naming_a_file_there_the_face_model_is_missing_in_words(tmp_path, monkeypatch, manifest):
    folder = _folder(tmp_path, manifest)
    monkeypatch.setattr(model_files, "models_folder", lambda: folder)
    assert shipped("faces") is None
    with pytest.raises(HardwareError) as missing:
        FaceClassifier()
    assert missing.value.code == "no_model" and "models/shipped.json" in missing.value.message and "reinstall the companion" in missing.value.message


def test_a_model_exported_into_a_models_folder_is_named_there_and_the_one_it_replaces_removed(tmp_path, monkeypatch):
    """Training's exports call ``ship``: a face model exported into ``models/`` is the one read, not a file beside it."""
    replaced = shipped_model_path().name
    folder = _folder(tmp_path, {"detector": "dice-detector-4d3d2c1a8e08.onnx", "faces": replaced})
    new = folder / "dice-faces-5bbb6f704193.onnx"
    assert model_files.ship(new, "faces")
    monkeypatch.setattr(model_files, "models_folder", lambda: folder)
    assert shipped("faces") == new and not (folder / replaced).exists()
    assert json.loads((folder / "shipped.json").read_text(encoding="utf-8"))["detector"] == "dice-detector-4d3d2c1a8e08.onnx"  # the others kept
    candidate = tmp_path / "candidate"
    candidate.mkdir()
    shutil.copy(new, candidate)
    assert not model_files.ship(candidate / new.name, "faces") and sorted(p.name for p in candidate.iterdir()) == [new.name]


def test_the_ship_command_names_a_copied_model_and_the_makefile_recipe_uses_it(tmp_path, monkeypatch, capsys):
    """make train-second-opinion copied its file in by hand, leaving shipped.json naming the one it deleted: the
    reader then ran with no second opinion (a review found it)."""
    replaced = shipped_path()
    folder = _folder(tmp_path, {"second_opinion": replaced.name})
    shutil.copy(replaced, folder)
    new = folder / "second-opinion-5bbb6f704193.onnx"
    shutil.copy(MODELS / "training" / "base" / "dice-faces-5bbb6f704193.onnx", new)
    assert model_files.main(["ship", str(new), "second_opinion"]) == 0
    monkeypatch.setattr(model_files, "models_folder", lambda: folder)
    assert shipped("second_opinion") == new and not (folder / replaced.name).exists()
    assert model_files.main(["ship", str(new), "faces"]) == 2  # not a face model's file name
    makefile = (MODELS.parent / "Makefile").read_text(encoding="utf-8")
    recipe = makefile[makefile.index("train-second-opinion:"):].split("\n.PHONY")[0]
    assert "-m vision.model_files ship models/second-opinion-" in recipe and "rm -f models/second-opinion" not in recipe
    assert "naming" not in capsys.readouterr().err


def test_a_file_of_the_owners_named_with_twelve_digits_that_are_no_hash_is_refused_with_how_to_mend_it(tmp_path):
    """A date-stamped name looks like an id: it is not taken for a card fault, and the owner is told to rename it."""
    copy = tmp_path / "dice-faces-202406011230.onnx"
    shutil.copy(shipped_model_path(), copy)
    with pytest.raises(HardwareError) as refused:
        FaceClassifier(copy)
    assert "does not hash to the id in its name" in refused.value.message and "rename it without those 12 digits" in refused.value.message
    assert "card fault" not in refused.value.message
