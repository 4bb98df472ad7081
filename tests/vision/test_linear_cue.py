"""A cue file (``vision.linear_cue``, the leaning and the number-dice cue alike): it round-trips, and a missing,
damaged, inconsistent or pickled file is refused in words that name the cue, never loaded half."""

from __future__ import annotations

import numpy as np
import pytest

from vision.leaning_cue import LeaningCue
from vision.number_cue import NumberCue

KINDS = pytest.mark.parametrize("kind", [LeaningCue, NumberCue], ids=["leaning", "number"])


@KINDS
def test_the_cue_file_round_trips(tmp_path, kind):
    kind(np.array([1.0, 0.0], np.float32), 0.5, np.zeros(2, np.float32), np.ones(2, np.float32), "m", 0.9).save(tmp_path / "cue.npz")
    back = kind.load(tmp_path / "cue.npz")
    assert type(back) is kind and back.classifier_id == "m" and back.threshold == pytest.approx(0.9) and back.width == 2
    assert back.bias == pytest.approx(0.5)


@KINDS
def test_a_missing_cue_file_is_said_in_words(tmp_path, kind):
    with pytest.raises(ValueError, match=f"the {kind.KIND} gone.npz is missing"):
        kind.load(tmp_path / "gone.npz")


@KINDS
def test_a_damaged_cue_file_is_said_in_words(tmp_path, kind):
    bad = tmp_path / "cue.npz"
    bad.write_bytes(b"PK\x03\x04 not really a zip")
    with pytest.raises(ValueError, match=f"the {kind.KIND} cue.npz cannot be read"):
        kind.load(bad)


@KINDS
def test_a_cue_whose_parts_do_not_fit_is_refused(tmp_path, kind):
    np.savez(tmp_path / "cue.npz", weight=np.ones(3, np.float32), bias=np.float32(0), mean=np.zeros(2, np.float32),
             scale=np.ones(2, np.float32), classifier_id=np.str_("m"), threshold=np.float32(0.9))
    with pytest.raises(ValueError, match="damaged"):
        kind.load(tmp_path / "cue.npz")


@KINDS
def test_a_cue_with_pickled_objects_is_not_loaded(tmp_path, kind):
    np.savez(tmp_path / "cue.npz", weight=np.array([object()], dtype=object))
    with pytest.raises(ValueError, match="cannot be read"):
        kind.load(tmp_path / "cue.npz")
