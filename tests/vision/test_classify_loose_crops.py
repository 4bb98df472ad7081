"""``classify`` on a picture of one die that is no tight crop: where reading the image as a crop is not sure, the
staged reader reads it as a photo of one die (``PipelineReader.classify_crop``, ``surer_answer``)."""

from __future__ import annotations

import numpy as np
import pytest

from bench.reader import split_photos
from models.training.heldout import HERE, heldout_names
from vision.pipeline.classify import classify_crop
from vision.pipeline.decide import CONFIDENCE_MARGIN

#: the die's side as a share of the picture's: a phone's picture of one die on the table
LOOSE = 0.3


def _loose_pictures(root, share: float) -> list[tuple[int, np.ndarray]]:
    """Each held-out die whose square around it, the die at ``share`` of its side, lies inside the photo and holds
    no other die: (value, picture)."""
    held_out = set(heldout_names(HERE / "validation.json"))
    out = []
    for _, img, labels in [p for p in split_photos(root, "train") if p[0] in held_out]:
        height, width = img.shape[:2]
        for i, (value, x, y, w, h) in enumerate(labels):
            side = int(round(max(w, h) / share))
            x0, y0 = int(round(x - side / 2)), int(round(y - side / 2))
            inside = x0 >= 0 and y0 >= 0 and x0 + side <= width and y0 + side <= height
            alone = not any(j != i and abs(ox - x) < (side + ow) / 2 and abs(oy - y) < (side + oh) / 2
                            for j, (_, ox, oy, ow, oh) in enumerate(labels))
            if inside and alone:
                out.append((value, img[y0:y0 + side, x0:x0 + side]))
    return out


@pytest.fixture(scope="module")
def loose_pictures(real_dataset):
    return _loose_pictures(real_dataset, LOOSE)


def test_a_die_at_a_third_of_the_picture_is_read_as_the_photo_of_one_die(staged_reader, loose_pictures):
    """31 held-out dice: read as crops, 11 right (all unsure); as photos of one die, 30."""
    assert len(loose_pictures) >= 25
    right = sure_wrong = 0
    for value, picture in loose_pictures:
        seen, confidence = staged_reader.classify_crop(picture)
        right += seen == value
        sure_wrong += seen != value and confidence >= staged_reader.min_confidence
    assert sure_wrong == 0
    assert right >= 0.9 * len(loose_pictures), f"{right} of {len(loose_pictures)}"


def test_the_tray_calibration_does_not_confine_a_picture_of_one_die(staged_reader, loose_pictures):
    """The instance's tray region and die size describe its camera's frames, not a picture given to ``classify``."""
    calibrated = staged_reader.with_die_side(400)._but(tray_region=[0, 0, 8, 8], expected_dice=3)
    photo_reader = calibrated.as_photo_of_one_die()
    assert not photo_reader.die_side_px and not photo_reader.tray_region and photo_reader.expected_dice == 1
    for value, picture in loose_pictures[:6]:
        assert calibrated.classify_crop(picture) == staged_reader.classify_crop(picture)


def test_a_crop_read_sure_is_not_read_again_as_a_photo(staged_reader, real_dataset, monkeypatch):
    """The photo look costs a detector pass: only a crop left unsure pays for it."""
    _, img, labels = split_photos(real_dataset, "train")[0]
    value, x, y, w, h = labels[0]
    half = max(w, h) * 0.55
    tight = img[int(y - half):int(y + half), int(x - half):int(x + half)]
    face = classify_crop(staged_reader.classifier, tight)
    assert face.confidence >= staged_reader.min_confidence + CONFIDENCE_MARGIN, "pick a die the crop look reads sure"

    def no_photo_look(*_):
        raise AssertionError("read again as a photo")
    monkeypatch.setattr(type(staged_reader), "as_photo_of_one_die", no_photo_look)
    assert staged_reader.classify_crop(tight) == (face.seen, face.confidence)


def test_a_picture_without_a_die_keeps_the_crop_answer_and_is_not_sure(staged_reader):
    grey = np.full((200, 200, 3), 128, np.uint8)
    seen, confidence = staged_reader.classify_crop(grey)
    face = classify_crop(staged_reader.classifier, grey)
    assert (seen, confidence) == (face.seen, face.confidence)
    assert confidence < staged_reader.min_confidence
