"""``python -m models.training.covered``: three real dice from above, one partly covered by a finger, a card's edge or
another die, drawn by their own code, and what the staged reader makes of the part it sees."""

from __future__ import annotations

import numpy as np
import pytest

from bench.eval_sets import plain_die
from companion.core.reading import DieReading, Reading
from models.training.covered import DICE, KINDS, UNCOVERED, Scene, cover_mask, judged, main, read, scenes

PLAIN = [(v, plain_die(v)) for v in range(1, 7)]


@pytest.mark.parametrize("kind", ["finger", "card's edge"])
@pytest.mark.parametrize("share", [0.15, 0.3, 0.5])
def test_a_cover_lies_over_the_share_of_the_die_asked_coming_from_its_side(kind, share):
    die = (150.0, 150.0, 80.0)
    mask = cover_mask(kind, (300, 300), die, share, 0.0, np.random.default_rng(3))  # coming from the right
    row = mask[150, 110:190]  # across the die's middle, left to right
    assert abs(float(row.mean()) - share) < 0.04
    assert float(mask[150, :105].max()) < 0.01  # the die's far side and beyond: bare
    assert float(mask[150, 200:].min()) > 0.99  # the cover goes on beyond the die


def test_an_unknown_cover_is_refused_in_words():
    with pytest.raises(ValueError, match="no cover called 'towel'"):
        cover_mask("towel", (100, 100), (50.0, 50.0, 30.0), 0.3, 0.0, np.random.default_rng(0))


def test_each_cover_in_turn_over_one_die_and_the_same_every_time():
    drawn = list(scenes(PLAIN, 3))
    assert [s.kind for s in drawn] == [*KINDS, UNCOVERED] * 3
    for scene in drawn:
        assert scene.frame.shape == (480, 640, 3) and 0 <= scene.covered < DICE
        assert len(scene.labels) == DICE + (scene.kind == "another die")
        assert 0.15 <= scene.share <= 0.5 or scene.kind == UNCOVERED
    again = list(scenes(PLAIN, 3))
    assert all(np.array_equal(a.frame, b.frame) and a.labels == b.labels for a, b in zip(drawn, again))  # seeded


def test_what_covers_a_die_leaves_the_other_dice_as_they_were_pasted():
    """The scene's frame differs from the same scene uncovered only around the covered die: the same stream of draws
    gives the same dice, so the frame before the cover is the uncovered frame of the same draws."""
    from models.training import covered

    for kind in KINDS:
        rng = np.random.default_rng(11)
        scene = None
        while scene is None:
            scene = covered._laid_out(rng, PLAIN, kind)
        rng = np.random.default_rng(11)
        bare = None
        while bare is None:
            bare = covered._laid_out(rng, PLAIN, UNCOVERED)
        changed = np.abs(scene.frame.astype(int) - bare.frame.astype(int)).max(axis=2) > 2  # a blurred cover's faint fringe rounds a pixel by one
        for i, (_, cx, cy, w, h) in enumerate(scene.labels[:DICE]):
            inside = changed[int(cy - h / 2):int(cy + h / 2), int(cx - w / 2):int(cx + w / 2)]
            if i == scene.covered:
                assert inside.mean() > 0.1, kind
            else:
                assert not inside.any(), kind


class _Reads:
    """A reader that gives one fixed reading: the counting of ``judged`` checked on readings chosen for it."""

    def __init__(self, reading: Reading) -> None:
        self.reading = reading

    def with_expected(self, n: int) -> "_Reads":
        return self

    def read(self, frame: np.ndarray) -> Reading:
        return self.reading


def _scene() -> Scene:
    labels = [(2, 100.0, 100.0, 60.0, 60.0), (5, 300.0, 100.0, 60.0, 60.0), (6, 100.0, 300.0, 60.0, 60.0)]
    return Scene("finger", 0.4, np.zeros((480, 640, 3), np.uint8), labels, 2)


def _die(seen: int, x: int, y: int, doubts: tuple[str, ...] = ()) -> DieReading:
    return DieReading(seen, 7 - seen, 0.99, (x - 30, y - 30, 60, 60), doubts)


def test_a_covered_six_read_a_sure_three_is_a_wrong_verdict_and_doubted_it_is_not():
    sure = Reading("ok", (_die(2, 100, 100), _die(5, 300, 100), _die(3, 100, 300)), sure_at=0.95)
    assert judged(_Reads(sure), _scene()) == {"frames": 1, "ok": 1, "ok_and_right": 0, "wrong_verdicts": 1,
                                              "covered_right": 0, "covered_surely_wrong": 1}
    other_doubted = Reading("uncertain", (_die(2, 100, 100), _die(5, 300, 100, ("low_confidence",)), _die(3, 100, 300)), sure_at=0.95)
    assert judged(_Reads(other_doubted), _scene())["covered_surely_wrong"] == 1  # waiting for the others to be sure
    doubted = Reading("uncertain", (_die(2, 100, 100), _die(5, 300, 100), _die(3, 100, 300, ("low_confidence",))), sure_at=0.95)
    assert judged(_Reads(doubted), _scene()) == {"frames": 1, "ok": 0, "ok_and_right": 0, "wrong_verdicts": 0,
                                                 "covered_right": 0, "covered_surely_wrong": 0}
    right = Reading("ok", (_die(2, 100, 100), _die(5, 300, 100), _die(6, 100, 300)), sure_at=0.95)
    assert judged(_Reads(right), _scene()) == {"frames": 1, "ok": 1, "ok_and_right": 1, "wrong_verdicts": 0,
                                               "covered_right": 1, "covered_surely_wrong": 0}
    missed = Reading("ok", (_die(2, 100, 100), _die(5, 300, 100)), sure_at=0.95)
    assert judged(_Reads(missed), _scene())["wrong_verdicts"] == 1


def test_the_counts_add_up_per_cover_and_in_all(staged_reader):
    report = read(staged_reader, per_kind=1, dice=PLAIN)
    assert list(report) == [*KINDS, UNCOVERED, "all"]
    assert report["all"]["frames"] == len(KINDS)  # the covered kinds only: the uncovered are the control
    for key in report["all"]:
        assert report["all"][key] == sum(report[kind][key] for kind in KINDS)


def test_no_covered_die_of_the_shared_sets_makes_a_reading_ok_and_wrong(staged_reader, val_dice):
    """Real dice from above, one covered over 15-50 % of its side: the part seen is often another face whole, so a
    reading acted on would be wrong; the table must confirm instead (RULES.md R14)."""
    report = read(staged_reader, per_kind=4, dice=val_dice)
    assert {kind: report[kind]["wrong_verdicts"] for kind in [*KINDS, UNCOVERED]} == dict.fromkeys([*KINDS, UNCOVERED], 0)
    assert report["all"]["covered_surely_wrong"] == 0


def test_too_few_real_dice_to_paste_are_refused_in_words(staged_reader):
    with pytest.raises(ValueError, match="the scenes need at least 3 real dice to paste; found 2"):
        read(staged_reader, per_kind=1, dice=PLAIN[:2])


@pytest.mark.parametrize("argv, words", [(["--per-kind", "0"], "--per-kind must be at least 1")])
def test_the_command_refuses_what_it_cannot_read_in_words(capsys, argv, words):
    with pytest.raises(SystemExit):
        main(argv)
    assert words in capsys.readouterr().err


def test_the_bench_reads_the_covered_dice_in_its_short_form(val_dice):
    import bench.reading  # noqa: F401  (registers the benches)
    from bench.report import BENCHES

    report = BENCHES["covered"](False)
    assert [report[kind]["frames"] for kind in [*KINDS, UNCOVERED]] == [5] * (len(KINDS) + 1)


def test_a_covered_die_the_reader_missed_is_missed_not_read_as_the_die_over_it():
    labels = [(2, 100.0, 100.0, 60.0, 60.0), (5, 300.0, 100.0, 60.0, 60.0), (6, 100.0, 300.0, 60.0, 60.0), (3, 125.0, 275.0, 60.0, 60.0)]
    scene = Scene("another die", 0.45, np.zeros((480, 640, 3), np.uint8), labels, 2)
    over_only = Reading("uncertain", (_die(2, 100, 100), _die(5, 300, 100), _die(3, 126, 274)), sure_at=0.95)
    assert judged(_Reads(over_only), scene)["covered_surely_wrong"] == 0  # the three is the die over it, read right
    both = Reading("ok", (_die(2, 100, 100), _die(5, 300, 100), _die(6, 92, 308), _die(3, 126, 274)), sure_at=0.95)
    assert judged(_Reads(both), scene)["ok_and_right"] == 1
