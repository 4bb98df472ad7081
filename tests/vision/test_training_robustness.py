"""The held-out robustness check: each change of the photos, and the counts it reports."""

from __future__ import annotations

import numpy as np
import pytest

from models.training.heldout import HERE, heldout_names
from models.training.robustness import CHANGES, measure
from vision.dataset import photo


@pytest.mark.parametrize("change", list(CHANGES))
def test_every_change_gives_photo_sized_images_and_only_whole_dice_as_labels(change, real_dataset):
    img, labels = photo(real_dataset, heldout_names(HERE / "validation.json")[0])
    shown = list(CHANGES[change](img, labels, np.random.default_rng(0)))
    assert shown
    for image, inside, cut in shown:
        assert image.shape == img.shape and image.dtype == np.uint8
        assert cut >= 0
        h, w = image.shape[:2]
        for _, cx, cy, bw, bh in inside:
            assert 0 <= cx - bw / 2 and cx + bw / 2 <= w and 0 <= cy - bh / 2 and cy + bh / 2 <= h


def test_the_counts_add_up_and_the_photos_as_they_are_keep_every_die(real_dataset):
    names = heldout_names(HERE / "validation.json")[:2]
    rows = measure(None, names, ["as photographed", "other table", "zoomed 2x"])
    total = sum(len(photo(real_dataset, n)[1]) for n in names)
    assert rows["as photographed"]["dice"] == rows["other table"]["dice"] == total
    for row in rows.values():
        assert 0 <= row["right"] <= row["found"] <= row["dice"]
        assert row["wrong_and_sure"] <= row["found"] - row["right"] and row["extra"] >= 0
    assert rows["zoomed 2x"]["dice"] > 0
