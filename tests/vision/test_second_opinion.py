"""The second opinion (``vision.second_opinion``, ``[reader] second_opinion``, on by default): a second
classifier, trained also on round things that are not dice, checks every die of a reading about to be ``ok``; where it
does not read the face, the reading goes to the table with the reason ``second_opinion`` (RULES.md R14). It never
changes a face; a missing or damaged model file leaves the reader reading without it, and ``/api/health`` says why."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from companion.app.settings import Settings
from companion.core.reading import REASON_CODES
from models.training import not_dice
from models.training.crop_robustness import CHANGES, crops_of, shared_crop_sets
from vision.classifier import CROP, cut_crop
from companion.core.protocols import Proposal
from vision.pipeline.decide import reason_in_words, sure_confidence
from vision.reader import load_reader
from vision.second_opinion import SECOND_OPINION, SECOND_OPINION_BAR, SecondOpinion, shipped_path
from vision.simtable import render_calibrated_table, render_table

#: ``not_dice``'s scenes with a glass bead in a die's place (its own seed): the 16th scene's bead, read without the
#: second opinion as a sure one beside a two and a one, the reading ok and wrong.
BEAD_SCENE = 15


@pytest.fixture(scope="module")
def reader():
    return load_reader(Settings.defaults(), threads=1)


@pytest.fixture(scope="module")
def without():
    return load_reader(Settings.defaults().with_overrides(reader__second_opinion="off"), threads=1)


@pytest.fixture(scope="module")
def bead_scene():
    from bench.eval_sets import real_val_dice

    return next(itertools.islice(not_dice.scenes(real_val_dice(), 20, "in a die's place"), BEAD_SCENE, None))


def test_a_glass_bead_read_as_a_sure_one_sends_the_reading_to_the_table(reader, without, bead_scene):
    assert bead_scene.kind == "glass bead"
    before = without.with_view("above").with_expected(3).read(bead_scene.frame)
    assert before.status == "ok" and any(not_dice.on_the_thing(d.box, bead_scene) and d.seen == 1 for d in before.dice)
    after = reader.with_view("above").with_expected(3).read(bead_scene.frame)
    assert after.status == "uncertain" and [r["code"] for r in after.reasons] == [SECOND_OPINION]
    doubted = [d for d in after.dice if SECOND_OPINION in d.doubts]
    assert len(doubted) == 1 and not_dice.on_the_thing(doubted[0].box, bead_scene)
    assert [(d.seen, d.box) for d in after.dice] == [(d.seen, d.box) for d in before.dice]  # the faces are offered as read


def test_the_games_dice_on_the_table_are_read_as_before(reader, without):
    """The simulated table in its three modes: every reading as without the second opinion (it agrees on game dice)."""
    rng = np.random.default_rng(31)
    for _ in range(6):
        frame, placed, empty = render_calibrated_table([int(v) for v in rng.integers(1, 7, 3)], rng, view="below")
        for r, w in ((reader, without), (reader.with_die_side(placed[0].side), without.with_die_side(placed[0].side)),
                     (reader.with_die_side(placed[0].side).with_empty_tray(empty), without.with_die_side(placed[0].side).with_empty_tray(empty))):
            assert r.read(frame) == w.read(frame)
    frame = render_table([1, 1, 1], np.random.default_rng(5), view="above")[0]  # ones: the face a bead imitates
    assert reader.with_view("above").read(frame) == without.with_view("above").read(frame)


def test_a_bead_cut_as_a_crop_is_never_sure(reader, without, bead_scene):
    """``classify``: the crop's face stands, its confidence under the line."""
    tx, ty, size = bead_scene.thing
    crop = cut_crop(bead_scene.frame, tx, ty, size, 0.0, size=3 * CROP)
    seen, confidence = without.classify_crop(crop)
    assert seen == 1 and confidence >= sure_confidence(without.min_confidence)
    assert reader.classify_crop(crop) == (1, pytest.approx(reader.min_confidence - 0.02))


@pytest.mark.parametrize("change", ["as cropped", "padded 0.5"])
def test_a_real_dies_crop_cut_loose_is_checked_where_the_classifier_found_the_die(reader, without, change):
    """``classify`` finds the die of a loose crop at a smaller size than the crop's (``classify_crop``): the second
    model is asked there, not of the whole crop, where the die is small and its face unsure to it. Every shared
    ``val`` crop, as cropped and with half its side of border around it, reads as without the second opinion."""
    sets = shared_crop_sets()
    if not sets:
        pytest.skip("no shared crops beside the repository (../shared/datasets)")
    cut = CHANGES[change]
    read = [(reader.classify_crop(cut(img)), without.classify_crop(cut(img))) for root in sets for _, img, _ in crops_of(root, ["val"])]
    assert len(read) > 50
    assert [a for a, _ in read] == [b for _, b in read]


def test_a_face_the_second_model_reads_just_over_the_bar_is_still_doubted(reader, monkeypatch):
    """The margin: a probability within 0.02 above the bar could fall under it on the Pi, so it counts as under."""
    opinion = reader.second_opinion
    frame = np.full((120, 120, 3), 128, np.uint8)

    for p, doubted in ((SECOND_OPINION_BAR + 0.01, True), (SECOND_OPINION_BAR + 0.03, False)):
        monkeypatch.setattr(opinion.classifier, "probabilities", lambda crops, p=p: np.tile([0, p, 1 - p, 0, 0, 0, 0], (len(crops), 1)))
        assert opinion.doubted(frame, [Proposal(60, 60, 40, 0, 0.9)], [1]) == [doubted]


def test_it_reads_a_dies_first_cuts_as_the_first_look_made_them_not_cutting_again(reader):
    """The first look's two cuts of a die (``FaceRead.first_crops``) are the second opinion's own ``SPANS``, so it takes
    them from the die's read: the same pixels as cut afresh, the same answers, and what it reads is what it is given."""
    from vision.pipeline.classify import first_look
    from vision.pipeline.crop import crops
    from vision.second_opinion import SPANS

    rng = np.random.default_rng(7)
    frame, placed = render_table([2, 4, 6], rng, view="below")
    at = [Proposal(d.cx, d.cy, d.side, d.angle, 0.9) for d in placed]
    reads, _ = first_look(reader.classifier, frame, at)
    given = [r.first_crops for r in reads]
    for k, span in enumerate(SPANS):
        assert np.array_equal(np.array([g[k] for g in given]), crops(frame, at, span))
    opinion, faces = reader.second_opinion, [r.seen for r in reads]
    assert opinion.doubted(frame, at, faces, given) == opinion.doubted(frame, at, faces) == [False] * 3
    blank = np.full((len(SPANS), CROP, CROP, 3), 128, np.uint8)  # no die in the cuts it is given: it doubts that die
    assert opinion.doubted(frame, at, faces, [given[0], blank, None]) == [False, True, False]


def test_the_reason_is_a_code_the_page_knows_and_said_in_words():
    assert SECOND_OPINION in REASON_CODES
    assert "second check" in reason_in_words({"code": SECOND_OPINION})


def test_the_shipped_file_is_found_and_named_by_its_hash():
    opinion, problem = SecondOpinion.load()
    assert problem is None and opinion.path == shipped_path() and opinion.model_id.startswith("second-opinion-")
    import hashlib

    assert opinion.model_id == "second-opinion-" + hashlib.sha256(shipped_path().read_bytes()).hexdigest()[:12]


@pytest.mark.parametrize("content", [None, b"not a model", b""])
def test_without_its_model_file_the_reader_reads_and_says_why(tmp_path, without, bead_scene, content):
    path = tmp_path / "second-opinion-x.onnx"
    if content is not None:
        path.write_bytes(content)
    r = load_reader(Settings.defaults().with_overrides(reader__second_opinion=str(path)), threads=1)
    assert r.second_opinion is None
    assert "not checked again" in r.second_opinion_problem
    assert ("missing" if content is None else "cannot be loaded") in r.second_opinion_problem
    for copy in (r.with_view("above"), r.with_die_side(60), r.with_expected(1), r.with_empty_tray(None)):
        assert copy.second_opinion_problem == r.second_opinion_problem  # a copy told more of the table still says why
    assert r.with_view("above").with_expected(3).read(bead_scene.frame) == without.with_view("above").with_expected(3).read(bead_scene.frame)


def test_it_is_on_by_default_and_off_says_no_problem(without, reader):
    """The default reader asks the shipped file; a table that turns it off (about 1 ms a reading: docs/READING.md,
    "The second opinion") reads without it, and that is no problem for ``/api/health``."""
    assert reader.second_opinion is not None and reader.second_opinion.path == shipped_path()
    assert reader.second_opinion_problem is None
    assert without.second_opinion is None and without.second_opinion_problem is None
    on = load_reader(Settings.defaults().with_overrides(reader__second_opinion="on"), threads=1)
    assert on.second_opinion is not None and on.second_opinion.path == shipped_path()


def test_under_a_taught_head_the_owners_dice_are_not_asked_and_a_guests_are(reader, bead_scene):
    """A head whose gate is sure every die is the owner's: the second opinion asks none (the owner taught them, the
    second model never saw them); a gate sure of none: every die is asked, as without a head."""
    from tests.vision.conftest import gated_classifier

    def taught(gate_bias: float):
        return type(reader)(gated_classifier(gate_bias), reader.proposer, **{**reader.options(), "second_opinion": reader.second_opinion})

    owners, guests = taught(50.0), taught(-50.0)
    assert owners.with_view("above").with_expected(3).read(bead_scene.frame).status == "ok"  # the owner's, so not asked
    guest = guests.with_view("above").with_expected(3).read(bead_scene.frame)
    assert guest.status == "uncertain" and [r["code"] for r in guest.reasons] == [SECOND_OPINION]
