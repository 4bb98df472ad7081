"""Dice the grey frame hides are looked for in colour (``propose_in_colour``).

The detector reads grey frames; a red die on brown wood, under a warm light,
is about as bright as the wood and goes unseen. Where the grey looks find
fewer dice than the table plays with, the detector looks again at the frame's
colour contrast (``colour_contrast``: how far each pixel's colour is from the
frame's commonest), and the dice it finds there are read with the others,
every check again. That reading is kept when it is sure, or when it holds
every die (the table then checks all the dice, each boxed).
"""

from __future__ import annotations

import cv2
import numpy as np
import pytest

import vision.pipeline.reader as pipeline_reader
from models.training.robustness import CHANGES
from vision.dataset import dataset_dir
from vision.evaluate import image_of, yolo_labels, reader_for
from vision.images import load_image
from vision.pipeline.normalise import colour_contrast
from vision.simtable import render_table


def test_colour_contrast_shows_a_die_as_bright_as_the_table_in_grey() -> None:
    frame = np.full((120, 160, 3), (60, 110, 150), np.uint8)  # brown wood
    frame[40:80, 60:100] = (60, 60, 240)  # a red die, within a few grey levels of the wood
    grey = cv2.cvtColor(frame, cv2.COLOR_BGR2GRAY)
    assert abs(int(grey[60, 80]) - int(grey[10, 10])) < 5
    contrast = colour_contrast(frame)
    assert contrast[60, 80] > 100 and contrast[10, 10] == 0


def test_colour_contrast_of_a_grey_frame_is_flat() -> None:
    frame = cv2.cvtColor(np.random.default_rng(0).integers(0, 255, (60, 80), np.uint8), cv2.COLOR_GRAY2BGR)
    assert int(colour_contrast(frame).max()) <= 3


@pytest.mark.parametrize("seed", range(4))
def test_colour_contrast_is_each_pixels_own_colour_distance(seed: int) -> None:
    # the table of every (a*, b*) pair must give the bytes the distance computed pixel by pixel gives: a reading
    # may not move with how the contrast is computed (the Pi reads the same frames, make pi-check)
    rng = np.random.default_rng(seed)
    frame = rng.integers(0, 256, (97, 131, 3), dtype=np.uint8)
    frame[: 40 + seed * 10] = rng.integers(0, 256, 3, dtype=np.uint8)  # a commonest colour, other on each seed
    lab = cv2.cvtColor(frame, cv2.COLOR_BGR2LAB)
    centre = np.median(lab[::1, ::1].reshape(-1, 3)[:, 1:], axis=0).astype(np.float32)
    ab = lab[..., 1:].astype(np.float32) - centre
    by_pixel = np.clip(np.sqrt((ab * ab).sum(axis=2)) * 3.0, 0, 255).astype(np.uint8)
    assert np.array_equal(colour_contrast(frame), by_pixel)


def _skovy_under_warm_light(name: str) -> tuple[np.ndarray, list[int]]:
    """A val photo of skovy's red and cream dice on grey wood, under the robustness sweep's warm light."""
    shared = dataset_dir()
    root = None if shared is None else shared.parent / "real-dice-skovy"
    if root is None or not (root / "split.json").exists():
        pytest.skip("the skovy set is not beside the repository (../shared/datasets)")
    image = load_image(image_of(root, name))
    labels = yolo_labels(root / "labels" / f"{name}.txt", image.shape[1], image.shape[0])
    (warm, inside, _), = CHANGES["warm light"](image, labels, np.random.default_rng(0))
    return warm, [value for value, *_ in inside]


def _without_colour(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pipeline_reader, "propose_in_colour", lambda frame, proposer, found: [])


def _grey_at_its_own_scale(monkeypatch: pytest.MonkeyPatch) -> None:
    """No colour look, and no finer look after it: what the grey frame shows at the scales the die is seen at."""
    _without_colour(monkeypatch)
    monkeypatch.setattr(pipeline_reader, "propose_finer", lambda frame, proposer, net_side=None: None)


def test_a_red_die_the_grey_frame_hides_is_found_in_colour_and_read_sure(staged_reader, monkeypatch) -> None:
    frame, values = _skovy_under_warm_light("WIN_20221211_13_10_50_Pro")
    reader = reader_for(staged_reader.with_view("above"), len(values))
    reading = reader.read(frame)
    assert reading.status == "ok" and reading.extra["look"] == "colour"
    assert sorted(reading.tops()) == sorted(values)
    _without_colour(monkeypatch)
    grey_only = reader.read(frame)  # the grey looks alone, the finer one last: the table would have to check
    assert grey_only.status == "uncertain" and grey_only.extra["look"] != "colour"
    _grey_at_its_own_scale(monkeypatch)
    assert len(reader.read(frame).dice) < len(values)


def test_an_unsure_colour_reading_with_every_die_is_kept_for_the_table_to_check(staged_reader, monkeypatch) -> None:
    frame, values = _skovy_under_warm_light("WIN_20221210_14_49_38_Pro")
    reader = reader_for(staged_reader.with_view("above"), len(values))
    reading = reader.read(frame)
    assert reading.status == "uncertain" and reading.extra["look"] == "colour"
    assert len(reading.dice) == len(values) and sorted(reading.tops()) == sorted(values)
    _grey_at_its_own_scale(monkeypatch)
    assert len(reader.read(frame).dice) < len(values)


def test_no_colour_look_where_the_grey_looks_found_every_die(staged_reader, monkeypatch) -> None:
    asked: list[int] = []

    def spy(frame, proposer, found):
        asked.append(len(found))
        return []

    monkeypatch.setattr(pipeline_reader, "propose_in_colour", spy)
    rng = np.random.default_rng(3)
    frame, _ = render_table([2, 4, 6], rng, view="below")
    assert staged_reader.read(frame).status == "ok"
    assert asked == []


def test_the_colour_look_never_reads_a_grey_frame_differently(staged_reader) -> None:
    """A grey camera's frame has no colour to look at: two dice of three stay two, uncertain."""
    rng = np.random.default_rng(7)
    frame, placed = render_table([3, 5], rng, view="below")
    grey = cv2.cvtColor(cv2.cvtColor(frame, cv2.COLOR_BGR2GRAY), cv2.COLOR_GRAY2BGR)
    reading = staged_reader.read(grey)
    assert reading.status == "uncertain" and reading.extra.get("look") != "colour"
