"""Shared fixtures for the reader's tests: the real reader (loaded once) and the real photos."""

from __future__ import annotations

import pytest

import vision.classic_reader
from bench.eval_sets import real_val_dice
from bench.reader import dataset_dir
from companion.app.settings import Settings
from vision.classic_tunables import CLASSIC
from vision.classic_reader import DiceReader
from vision.reader import load_reader


@pytest.fixture(scope="session")
def reader() -> DiceReader:
    """The classic reader (the hand-tuned finder and its cascade), which most of these tests describe."""
    return load_reader(Settings.defaults().with_overrides(reader__detector="classic"))


@pytest.fixture(scope="session")
def staged_reader():
    """The staged reader with the shipped learned detector (the default)."""
    return load_reader(Settings.defaults())


@pytest.fixture(scope="session")
def real_dataset():
    root = dataset_dir()
    if root is None:
        pytest.skip("the real-dice-byler dataset is not beside the repository (../shared/datasets); set ELEPHANTS_BLUFF_DICE_DATASET")
    return root


@pytest.fixture(scope="session")
def val_dice(real_dataset):
    """Every real die of the shared sets' val splits, cut with a margin (``bench.eval_sets.real_val_dice``)."""
    dice = real_val_dice(real_dataset.parent)
    if len(dice) < 150:
        pytest.skip("the shared sets' val dice are not all beside the repository")
    return dice


@pytest.fixture(scope="session")
def rune55_photo():
    """``rune55_photo(name)``: one of rune55's photos (BGR) and its labels in pixels, as ``evaluate`` reads them."""
    from vision.dataset import shared_datasets
    from vision.evaluate import image_of, yolo_labels
    from vision.images import load_image

    root = shared_datasets() / "real-dice-rune55"

    def photo(name: str):
        image = image_of(root, name) if root.is_dir() else None
        if image is None:
            pytest.skip("the shared real dice sets are not beside the repository (../shared/datasets)")
        frame = load_image(image)
        return frame, yolo_labels(root / "labels" / f"{name}.txt", frame.shape[1], frame.shape[0])

    return photo


@pytest.fixture
def work_sides(monkeypatch):
    """The working sides of every find the reader makes."""
    seen: list[int] = []

    def spy_on(real):
        def spy(frame, die_side=None, work_side=CLASSIC.work_side, smallest=0.0, **more):
            seen.append(work_side)
            return real(frame, die_side, work_side=work_side, smallest=smallest, **more)
        return spy

    for name in ("find_dice", "look"):  # the default look keeps its mask (``vision.marks``), the others only their blobs
        monkeypatch.setattr(vision.classic_reader, name, spy_on(getattr(vision.classic_reader, name)))
    return seen


@pytest.fixture(scope="session")
def mid_set(tmp_path_factory):
    """The built set ``mid`` (``bench.eval_sets.mid``: real val dice pasted one a photo into phone-sized frames), built
    once into a temporary folder."""
    from bench.eval_sets import SHARED, mid

    if not (SHARED / "real-dice-skovy" / "crops.csv").is_file():
        pytest.skip("the shared real dice sets are not beside the repository (../shared/datasets)")
    root = tmp_path_factory.mktemp("mid")
    mid(root, real_val_dice())
    return root


def gated_classifier(gate_bias: float):
    """The shipped classifier under a taught head that corrects nothing, whose gate says every die is the owner's (a
    large positive ``gate_bias``) or none is (a large negative one): what a taught table's cues and checks consult."""
    import numpy as np

    from vision.adapt import AdaptedClassifier, Head
    from vision.classifier import CROP, shipped_model_id
    from vision.embedding import EmbeddingClassifier

    d = EmbeddingClassifier().logits_and_embedding(np.zeros((1, CROP, CROP, 3), np.uint8))[1].shape[1]
    gate = np.zeros(d + 1, np.float32)
    gate[-1] = gate_bias
    return AdaptedClassifier(Head(shipped_model_id(), np.zeros(d, np.float32), np.ones(d, np.float32), np.zeros((d, 7), np.float32),
                                  np.zeros(7, np.float32), gate))


@pytest.fixture
def camera_on(tmp_path):
    """An instance in ``tmp_path`` whose camera is one image file (``camera.backend = "files"``, seen from below):
    call it with the frame the camera is to show."""
    import cv2

    def show(frame) -> None:
        img = tmp_path / "tray.png"
        cv2.imwrite(str(img), frame)
        (tmp_path / "config.toml").write_text(f'[camera]\nbackend = "files"\nfiles_dir = "{img}"\ncamera_view = "below"\n')

    return show
