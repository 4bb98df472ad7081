"""The number-dice cue (``vision.number_cue``): a die printed with numbers or signs makes the reading uncertain with
the reason ``marks`` (RULES.md R14), as a crop and in a photo; pip dice are not doubted; a taught head's own dice
are left alone; a missing, damaged or mismatched cue file leaves the reader reading without it, and says why."""

from __future__ import annotations


import numpy as np
import pytest

from companion.app.settings import Settings
from models.training import other_looks
from vision.classifier import cut_crop, shipped_model_id
from vision.number_cue import CUE_MARGIN, DOUBT, NumberCue, load_cue
from vision.pipeline.decide import reason_in_words, sure_confidence
from vision.reader import load_reader
from vision.simtable import render_calibrated_table, render_table


@pytest.fixture(scope="module")
def reader():
    return load_reader(Settings.defaults(), threads=1)


def _without_cue(r):
    return type(r)(r.classifier, r.proposer, **{**r.options(), "number_cue": None})


def _sixes() -> list[np.ndarray]:
    """``other_looks``' pink and white number dice showing six (its drawer and fonts, never in the cue's fit)."""
    looks = other_looks.number_dice(20)
    return [image for name in ("pink", "white") for _, image, value in looks[name] if value == 6]


def _silently_wrong(r, crops: list[np.ndarray], value: int) -> int:
    sure_at = sure_confidence(r.min_confidence)
    return sum(seen != value and conf >= sure_at for seen, conf in (r.classify_crop(c) for c in crops))


def _photo(crop: np.ndarray, seed: int = 3) -> np.ndarray:
    """The die of a crop alone in the middle of a plain 480 x 640 photo, 120 px a side."""
    import cv2

    rng = np.random.default_rng(seed)
    frame = np.full((480, 640, 3), rng.integers(90, 160, 3), np.uint8)
    patch = cv2.resize(other_looks.as_patch(crop), (134, 134), interpolation=cv2.INTER_CUBIC)
    frame[173:307, 253:387] = patch
    return frame


def test_the_shipped_cue_fits_the_shipped_classifier(reader):
    assert reader.number_cue is not None and reader.number_problem is None
    assert reader.number_cue.classifier_id == shipped_model_id()


def test_number_dice_read_as_crops_are_seldom_sure_and_wrong(reader):
    """The shipped classifier reads most printed sixes as a sure one of pips; with the cue few are sure."""
    sixes = _sixes()
    assert _silently_wrong(_without_cue(reader), sixes, 6) >= 15  # the hazard the cue is for
    assert _silently_wrong(reader, sixes, 6) <= 6


def test_number_dice_in_photos_are_seldom_read_ok_and_wrong(reader):
    """Each six alone in a photo: the detector often boxes the digit alone, which the classifier reads as a sure one;
    the cue, reading wider cuts too, sends most of those to the table with ``marks``."""
    def ok_and_wrong(r):
        readings = [r.as_photo_of_one_die().read(_photo(crop)) for crop in _sixes()]
        return sum(x.status == "ok" and x.dice[0].seen != 6 for x in readings), readings

    plain, _ = ok_and_wrong(_without_cue(reader))
    with_cue, readings = ok_and_wrong(reader)
    assert plain >= 15 and with_cue <= 9
    assert sum({"code": DOUBT} in x.reasons for x in readings) >= 12


def test_pip_dice_on_the_table_are_not_doubted(reader):
    """The game's dice rendered on the tray, read knowing nothing, the die's size and the whole tray mode."""
    doubted = 0
    for seed in range(91_000, 91_010):
        rng = np.random.default_rng(seed)
        seen = [int(v) for v in rng.integers(1, 7, 3)]
        frame, placed, empty = render_calibrated_table(seen, rng, view="below")
        sized = reader.with_die_side(placed[0].side)
        for r in (reader, sized, sized.with_empty_tray(empty)):
            doubted += any(DOUBT in d.doubts for d in r.read(frame).dice)
    assert doubted == 0


def test_a_pip_die_read_as_a_crop_keeps_its_sure_face(reader):
    frame, placed = render_table([5], np.random.default_rng(8), touching=0.0, glare=0)
    p = placed[0]
    crop = cut_crop(frame, p.cx, p.cy, p.side * 1.3, p.angle)
    assert reader.classify_crop(crop) == _without_cue(reader).classify_crop(crop)


def test_the_cue_is_kept_by_the_readers_changes(reader):
    changed = reader.with_die_side(60).with_view("above").with_expected(1).as_photo_of_one_die()
    assert changed.number_cue is reader.number_cue


def test_a_score_just_under_the_line_is_doubted_as_a_margin():
    cue = NumberCue(np.array([1.0], np.float32), 0.0, np.zeros(1, np.float32), np.ones(1, np.float32), "m", 0.7)
    under = np.log((0.7 - CUE_MARGIN / 2) / (0.3 + CUE_MARGIN / 2))
    assert cue.numbers(np.array([[under], [-3.0]])) == [True, False]


def test_the_reason_is_said_in_words():
    assert "numbers or signs" in reason_in_words({"code": DOUBT})


def test_a_cue_fit_on_another_classifier_or_embedding_is_not_used(tmp_path):
    NumberCue(np.ones(3, np.float32), 0.0, np.zeros(3, np.float32), np.ones(3, np.float32), "dice-faces-000000000000", 0.7).save(tmp_path / "cue.npz")
    cue, why = load_cue("dice-faces-b86d9ba9d319", 3, tmp_path / "cue.npz")
    assert cue is None and "dice-faces-000000000000" in why
    cue, why = load_cue("dice-faces-000000000000", 5, tmp_path / "cue.npz")
    assert cue is None and "does not fit" in why
    assert load_cue("dice-faces-000000000000", 3, tmp_path / "cue.npz")[0] is not None


def test_without_its_cue_file_the_reader_reads_and_says_why(reader, monkeypatch, tmp_path):
    import vision.number_cue

    monkeypatch.setattr(vision.number_cue, "shipped_cue_path", lambda: tmp_path / "gone.npz")
    r = load_reader(Settings.defaults(), threads=1)
    assert r.number_cue is None
    assert "numbers or signs are not doubted" in r.number_problem and "missing" in r.number_problem
    for copy in (r.with_view("above"), r.with_die_side(60), r.with_expected(1), r.with_empty_tray(None)):
        assert copy.number_problem == r.number_problem  # a copy told more of the table still says why
    sixes = _sixes()[::4]
    assert [r.classify_crop(c) for c in sixes] == [_without_cue(reader).classify_crop(c) for c in sixes]  # as before the cue


def test_under_a_taught_head_the_owners_dice_are_left_alone_and_a_guests_are_doubted(reader):
    """A head whose gate is sure every die is the owner's: no die doubted; a gate sure of none: the cue as shipped."""
    from tests.vision.conftest import gated_classifier
    from vision.reader import _embedding_of, _number_cue

    def taught(gate_bias: float):
        clf = gated_classifier(gate_bias)
        cue, problem = _number_cue(_embedding_of(clf))
        assert cue is not None and problem is None  # the shipped model's cue: the head keeps its embedding
        return type(reader)(clf, reader.proposer, **{**reader.options(), "number_cue": cue})

    sixes = _sixes()[::2]
    owners, guests = taught(50.0), taught(-50.0)
    assert _silently_wrong(owners, sixes, 6) == _silently_wrong(_without_cue(owners), sixes, 6) >= 8
    assert _silently_wrong(guests, sixes, 6) <= 3
