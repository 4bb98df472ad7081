"""The leaning cue and the number cue read together (``reconcile.flag_by_looks``): every cut either cue reads goes to
the network in one run, and each die is doubted exactly as the two cues read one after the other doubt it."""

from __future__ import annotations

import numpy as np
import pytest

from companion.app.settings import Settings
from companion.core.protocols import Proposal
from models.training import other_looks
from vision.leaning_cue import CUE_SPANS as LEANING_SPANS, cue_features
from vision.number_cue import CUE_SPANS as NUMBER_SPANS
from vision.pipeline.classify import first_look
from vision.pipeline.reconcile import Die, flag_by_looks, flag_numbers_by_look
from vision.reader import load_reader
from vision.simtable import render_calibrated_table


@pytest.fixture(scope="module")
def reader():
    return load_reader(Settings.defaults(), threads=1)


class Counting:
    """The reader's classifier, counting its network runs and the crops in each."""

    def __init__(self, classifier) -> None:
        self.classifier = classifier
        self.runs: list[int] = []

    def logits_and_embedding(self, crops: np.ndarray):
        self.runs.append(len(crops))
        return self.classifier.logits_and_embedding(crops)


def _dice(reader, frame: np.ndarray, proposals: list[Proposal]) -> list[Die]:
    reads, _ = first_look(reader.classifier, frame, proposals)
    return [Die(p, r, ()) for p, r in zip(proposals, reads)]


def _one_after_the_other(reader, dice: list[Die], frame: np.ndarray) -> list[Die]:
    """The dice as the leaning cue reads them alone (its features embedded as its fit embeds them, ``cue_features``,
    for the dice not doubted as leaning already), then the number cue alone (``flag_numbers_by_look``)."""
    todo = [i for i, d in enumerate(dice) if "leaning" not in d.doubts]
    leaning = {}
    if todo:
        features = cue_features(reader.classifier.logits_and_embedding, frame, [dice[i].proposal for i in todo])
        leaning = dict(zip(todo, reader.leaning_cue.leaning(features)))
    flagged = [Die(d.proposal, d.face, d.doubts + ("leaning",)) if leaning.get(i) else d for i, d in enumerate(dice)]
    return flag_numbers_by_look(flagged, frame, reader.classifier, reader.number_cue)


def _leaning_tables() -> list[tuple[np.ndarray, list[Proposal]]]:
    """Tables with a die leaning on the cup, as the leaning cue's fit holds them out (seeds 50,400 on)."""
    out = []
    for seed in range(50400, 50412):
        rng = np.random.default_rng(seed)
        seen = [int(v) for v in rng.integers(1, 7, 3)]
        frame, placed, _ = render_calibrated_table(seen, rng, view="below", leaning=float(rng.uniform(20, 45)))
        out.append((frame, [Proposal(p.cx, p.cy, p.side, 0.0, 0.9) for p in placed]))
    return out


def _number_die_photo(crop: np.ndarray) -> tuple[np.ndarray, list[Proposal]]:
    """A printed six alone on a plain grey frame (``other_looks``' drawer), its die's place."""
    import cv2

    frame = np.full((480, 640, 3), 128, np.uint8)
    frame[173:307, 253:387] = cv2.resize(other_looks.as_patch(crop), (134, 134), interpolation=cv2.INTER_CUBIC)
    return frame, [Proposal(320, 240, 134 / 1.3, 0.0, 0.9)]


def test_together_they_doubt_each_die_as_the_two_read_one_after_the_other(reader):
    sixes = [image for name in ("pink", "white") for _, image, value in other_looks.number_dice(6)[name] if value == 6]
    scenes = _leaning_tables() + [_number_die_photo(crop) for crop in sixes[:6]]
    doubts = {"leaning": 0, "marks": 0}
    for n, (frame, proposals) in enumerate(scenes):
        dice = _dice(reader, frame, proposals)
        if n % 3 == 0:  # one die doubted as leaning by its outline already: the leaning cue skips it
            dice[-1] = Die(dice[-1].proposal, dice[-1].face, ("leaning",))
        one_by_one = _one_after_the_other(reader, dice, frame)
        together = flag_by_looks(dice, frame, reader.classifier, reader.leaning_cue, reader.number_cue)
        assert [d.doubts for d in together] == [d.doubts for d in one_by_one]
        doubts["leaning"] += sum("leaning" in d.doubts for d in (together if n % 3 else together[:-1]))
        doubts["marks"] += sum("marks" in d.doubts for d in together)
    assert doubts["leaning"] >= 2 and doubts["marks"] >= 3  # both cues had dice to doubt


def test_every_cut_goes_to_the_network_in_one_run_and_only_the_cuts_a_cue_reads(reader):
    frame, proposals = _leaning_tables()[0]
    dice = _dice(reader, frame, proposals)
    wider = len(set(LEANING_SPANS + NUMBER_SPANS)) - 2  # the first two cuts are the first look's
    for leaning, numbers, crops in ((reader.leaning_cue, reader.number_cue, wider * 3), (None, reader.number_cue, 3),
                                    (reader.leaning_cue, None, 3), (None, None, None)):
        counting = Counting(reader.classifier)
        flag_by_looks(dice, frame, counting, leaning, numbers)
        assert counting.runs == ([crops] if crops else [])


def test_a_die_the_first_look_did_not_cut_is_cut_at_every_span(reader):
    """A die with no first look (the whole photo's, a crop's) has its first two cuts made here, in the same run."""
    frame, proposals = _leaning_tables()[1]
    dice = [Die(d.proposal, type(d.face)(d.face.seen, d.face.confidence, d.face.runner_up, d.face.not_a_die), ())
            for d in _dice(reader, frame, proposals)]
    counting = Counting(reader.classifier)
    together = flag_by_looks(dice, frame, counting, reader.leaning_cue, reader.number_cue)
    assert counting.runs == [4 * 3]
    one_by_one = _one_after_the_other(reader, dice, frame)
    assert [d.doubts for d in together] == [d.doubts for d in one_by_one]
