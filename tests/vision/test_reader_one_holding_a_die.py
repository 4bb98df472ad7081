"""A square read as a one that holds a smaller die reading another face is never sure (``one_holding_a_die``).

A die far off in a plain square reads whole as a one's mark, as surely as a one: the robustness sweep on the
``mid`` built set (real val dice, one to a 1280×960 cup frame) found a four read as a sure one in a square five
times its side, the photo set in a phone's 12 MP frame and three times farther away, and a five and a six read so
by the whole photo read as a person's crop (on another table, where no look read the die sure). The detector,
looking inside the square (``propose_inside``), sees the die; read, it shows its own face, so the square's one was
its mark: offered as that face, never sure (RULES.md R14). Where the die it sees there reads no face surely (boxed
from as far as the square, at twice its side), it looks inside that die once more. A whole photo read as a one also gives way to a look
whose surest die, small inside the whole photo's square, reads another face (``a_small_die_reads_another_face``): the
look saw the die as the die it is.
"""

from __future__ import annotations

import numpy as np
import pytest

from models.training.robustness import CHANGES, _any_photo, reader_with_model
from vision.evaluate import reader_for
from vision.pipeline.classify import INSIDE_A_DIE, INSIDE_FACE, FaceRead, one_holding_a_die
from vision.pipeline import looks as looks_module
from vision.pipeline import reader as reader_module
from vision.pipeline.reader import PipelineReader

#: ``mid`` photos and the sweep's changes that read them as a sure one (name, change, which of its frames)
FAR_FOUR = ("m0141", "in a 12 MP frame", 0)
FARTHER_FOUR = ("m0141", "3x farther", 0)
#: a six whose photo sits in a 12 MP frame: the first look reads the photo's square (1,429 px) as a sure one, and the
#: detector, looking inside, boxes the 163-px die at twice its side, where it reads no face surely
SIX_SEEN_FROM_AFAR = ("m0095", "in a 12 MP frame", 0)
FIVE_ON_ANOTHER_TABLE = ("m0020", "7 other tables", 0)
SIX_ON_ANOTHER_TABLE = ("m0064", "7 other tables", 1)
THREE_TURNED = ("m0098", "turned 30°", 0)
ONE_ON_ANOTHER_TABLE = ("m0010", "other table", 0)
#: a one of the one-die cup set (half a 128-px frame) zoomed in: a look reads its mark, 23 px, as a four
CUP_ONE_ZOOMED = ("c0053", "zoomed 2x", 0)


@pytest.fixture(scope="module")
def cup_set(tmp_path_factory):
    from bench.eval_sets import SHARED, cup, real_val_dice

    if not (SHARED / "real-dice-skovy" / "crops.csv").is_file():
        pytest.skip("the shared real dice sets are not beside the repository (../shared/datasets)")
    root = tmp_path_factory.mktemp("cup")
    cup(root, 1, real_val_dice())
    return root


def _read(root, name: str, change: str, which: int):
    img, labels = _any_photo(root, name)
    image, inside, cut = list(CHANGES[change](img, labels, np.random.default_rng(int(name[1:]))))[which]
    return reader_for(reader_with_model(None, "learned"), len(inside) + cut).read(image), [v for v, *_ in inside]


def _not_looking_inside(self, prepared, die):
    return die


@pytest.mark.parametrize("case", [FAR_FOUR, FARTHER_FOUR])
def test_a_four_far_off_in_a_square_read_as_a_one_is_offered_as_a_four_never_sure(mid_set, monkeypatch, case):
    reading, labelled = _read(mid_set, *case)
    assert [d.seen for d in reading.dice] == labelled == [4]
    assert reading.status == "uncertain"
    monkeypatch.setattr(PipelineReader, "_alone_holding_a_die", _not_looking_inside)
    without, _ = _read(mid_set, *case)
    assert without.status == "ok" and [d.seen for d in without.dice] == [1]  # what the sweep found


def test_a_die_inside_a_one_read_unsure_from_afar_is_looked_at_once_more_and_offered_as_its_face(mid_set, monkeypatch):
    reading, labelled = _read(mid_set, *SIX_SEEN_FROM_AFAR)
    assert [d.seen for d in reading.dice] == labelled == [6]
    assert reading.status == "uncertain"
    monkeypatch.setattr(reader_module, "a_die_seen_from_afar", lambda inside: None)
    without, _ = _read(mid_set, *SIX_SEEN_FROM_AFAR)
    assert without.status == "ok" and [d.seen for d in without.dice] == [1]  # what the sweep found


@pytest.mark.parametrize("case,value", [(FIVE_ON_ANOTHER_TABLE, 5), (SIX_ON_ANOTHER_TABLE, 6)])
def test_a_whole_photo_read_as_a_one_around_a_die_reading_another_face_is_not_taken(mid_set, monkeypatch, case, value):
    """Either check alone keeps it: the die seen inside the whole photo's square, and the look whose die reads
    another face (``a_small_die_reads_another_face``)."""
    reading, labelled = _read(mid_set, *case)
    assert labelled == [value] and reading.extra["look"] != "whole photo"
    assert reading.status == "uncertain" and [d.seen for d in reading.dice] == [value]  # the look that found the die
    with monkeypatch.context() as m:
        m.setattr(PipelineReader, "_alone_holding_a_die", _not_looking_inside)
        assert _read(mid_set, *case)[0].extra["look"] != "whole photo"
    with monkeypatch.context() as m:
        m.setattr(reader_module, "a_small_die_reads_another_face", lambda reading, square: False)
        assert _read(mid_set, *case)[0].extra["look"] != "whole photo"
    monkeypatch.setattr(PipelineReader, "_alone_holding_a_die", _not_looking_inside)
    monkeypatch.setattr(reader_module, "a_small_die_reads_another_face", lambda reading, square: False)
    without, _ = _read(mid_set, *case)
    assert without.extra["look"] == "whole photo" and without.status == "ok" and [d.seen for d in without.dice] == [1]


def test_a_whole_photo_read_as_a_one_gives_way_to_a_look_that_read_the_die_as_another_face(mid_set, monkeypatch):
    """A three turned 30 degrees on the table: the first look reads the die a three (unsure), the whole photo read as
    a crop a sure one (the die its mark), and the die seen inside that square reads under the bar: the look's three
    is offered, never sure."""
    reading, labelled = _read(mid_set, *THREE_TURNED)
    assert labelled == [3] and reading.status == "uncertain" and [d.seen for d in reading.dice] == [3]
    monkeypatch.setattr(reader_module, "a_small_die_reads_another_face", lambda reading, square: False)
    without, _ = _read(mid_set, *THREE_TURNED)
    assert without.extra["look"] == "whole photo" and without.status == "ok" and [d.seen for d in without.dice] == [1]


def test_a_whole_photo_read_as_a_one_stays_where_the_look_read_a_one_too(mid_set):
    """A one on another table: the look reads it a one, unsure; the whole photo a sure one, which is taken."""
    reading, labelled = _read(mid_set, *ONE_ON_ANOTHER_TABLE)
    assert labelled == [1] and reading.extra["look"] == "whole photo" and reading.status == "ok" and [d.seen for d in reading.dice] == [1]


def test_a_whole_photo_read_as_a_one_stays_where_the_look_read_a_mark_of_a_few_pixels_as_another_face(cup_set, monkeypatch):
    """A one zoomed in, half its frame: the look's surest die is its mark (23 px) read as a four, too small to outrank
    the whole photo's sure one (``FACE_OVER_WHOLE_MIN_SIDE``); without that floor the one goes to the table."""
    reading, labelled = _read(cup_set, *CUP_ONE_ZOOMED)
    assert labelled == [1] and reading.extra["look"] == "whole photo" and reading.status == "ok" and [d.seen for d in reading.dice] == [1]
    monkeypatch.setattr(looks_module, "FACE_OVER_WHOLE_MIN_SIDE", 16)
    without, _ = _read(cup_set, *CUP_ONE_ZOOMED)
    assert without.status == "uncertain" and without.extra["look"] != "whole photo"


ONE = FaceRead(1, 0.98, 0.01, 0.0)


def test_a_die_inside_reading_another_face_surely_enough_overturns_the_one_with_its_face():
    inside = FaceRead(4, INSIDE_FACE, 0.2, INSIDE_A_DIE - 0.01)
    read = one_holding_a_die(ONE, [inside])
    assert (read.seen, read.confidence, read.overturned) == (4, INSIDE_FACE, True)


@pytest.mark.parametrize("inside", [
    FaceRead(4, INSIDE_FACE - 0.01, 0.2, 0.0),  # a speck or a mark read as some face, unsurely
    FaceRead(4, 0.99, 0.0, INSIDE_A_DIE),  # no die
    FaceRead(1, 0.99, 0.0, 0.0),  # the one's own mark, or a die far off that shows one too
])
def test_the_one_stands_where_nothing_inside_is_a_die_reading_another_face(inside):
    assert one_holding_a_die(ONE, [inside]) is ONE


def test_the_first_die_inside_that_qualifies_gives_the_face():
    read = one_holding_a_die(ONE, [FaceRead(1, 0.9, 0.0, 0.0), FaceRead(6, 0.8, 0.1, 0.0), FaceRead(5, 0.99, 0.0, 0.0)])
    assert read.seen == 6 and read.overturned


class _SeesInside:
    """A detector plug-in whose look inside a square answers what it is given (the real one needs a photo that holds such dice)."""

    def __init__(self, found):
        self.found, self.asked = found, []

    def propose_inside(self, grey, square):
        self.asked.append(square)
        return list(self.found)


def test_propose_inside_keeps_dice_smaller_than_half_the_square_big_enough_to_show_a_face_and_above_the_threshold():
    from companion.core.protocols import Proposal
    from vision.classifier import MARGIN
    from vision.images import MIN_SIDE
    from vision.pipeline.normalise import Normalised
    from vision.pipeline.propose import INSIDE_MOST, Proposer, propose_inside

    square = Proposal(100, 100, 100, 0, 0.9)
    die, speck, itself, faint = (Proposal(90, 95, 30, 0, 0.8), Proposal(100, 100, MIN_SIDE - 1, 0, 0.8),
                                 Proposal(100, 100, INSIDE_MOST * 100 + 1, 0, 0.9), Proposal(120, 120, 30, 0, 0.2))
    detector = _SeesInside([die, speck, itself, faint])
    frame = Normalised(np.zeros((200, 200, 3), np.uint8), np.zeros((200, 200), np.uint8), (0, 0))
    assert propose_inside(frame, Proposer(detector, 0.3), square) == [die]
    assert detector.asked[0].side == square.side * MARGIN  # the crop the classifier read, margin and all
