"""Finding the shared labelled sets (``vision.dataset.shared_datasets``): the one place the product's ``evaluate``
helpers, the benches and the training tools ask, so a maintainer moves them with one setting."""

from __future__ import annotations

from pathlib import Path

import vision.dataset
from vision.dataset import dataset_dir, shared_datasets


def _sets(root: Path) -> Path:
    (root / "real-dice-byler").mkdir(parents=True)
    (root / "real-dice-byler" / "split.json").write_text('{"train": [], "test": []}')
    return root


def test_the_setting_names_the_folder_first(tmp_path, monkeypatch):
    monkeypatch.setenv("ELEPHANTS_BLUFF_DATASETS", str(_sets(tmp_path / "mine")))
    assert shared_datasets() == (tmp_path / "mine").resolve()
    assert dataset_dir() == (tmp_path / "mine" / "real-dice-byler").resolve()


def test_a_setting_without_any_set_falls_back_to_the_usual_places(tmp_path, monkeypatch):
    (tmp_path / "empty").mkdir()
    monkeypatch.setenv("ELEPHANTS_BLUFF_DATASETS", str(tmp_path / "empty"))
    monkeypatch.setattr(vision.dataset, "SHARED_CANDIDATES", (_sets(tmp_path / "beside"),))
    assert shared_datasets() == (tmp_path / "beside").resolve()


def test_with_no_sets_anywhere_it_names_where_they_belong_and_byler_is_absent(tmp_path, monkeypatch):
    monkeypatch.delenv("ELEPHANTS_BLUFF_DATASETS", raising=False)
    monkeypatch.delenv("ELEPHANTS_BLUFF_DICE_DATASET", raising=False)
    monkeypatch.setattr(vision.dataset, "SHARED_CANDIDATES", (tmp_path / "nowhere", tmp_path / "nor here"))
    assert shared_datasets() == tmp_path / "nowhere"
    assert dataset_dir() is None
