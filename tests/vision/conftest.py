"""Shared fixtures for the reader's tests: the real reader (loaded once) and the real photos."""

from __future__ import annotations

import pytest

from companion.settings import Settings
from vision.bench import dataset_dir
from vision.reader import DiceReader, load_reader


@pytest.fixture(scope="session")
def reader() -> DiceReader:
    return load_reader(Settings.defaults())


@pytest.fixture(scope="session")
def real_dataset():
    root = dataset_dir()
    if root is None:
        pytest.skip("the real-dice-byler dataset is not beside the repository (../shared/datasets); set ELEPHANTS_BLUFF_DICE_DATASET")
    return root
