"""The reader on rendered frames and on every kind of bad frame: right, or uncertain with a reason."""

from __future__ import annotations

import numpy as np
import pytest

from companion.core.reading import Reading
from vision.simtable import render_table


def _frame(tops, seed, view="below", **kw):
    seen = [7 - t for t in tops] if view == "below" else list(tops)
    return render_table(seen, np.random.default_rng(seed), view=view, **kw)


SEEDS = [([1, 2, 3], 11), ([4, 5, 6], 12), ([6, 6, 6], 13), ([1, 1, 2], 14), ([3, 5, 2], 15), ([2, 4, 6], 16)]


def test_rendered_three_dice_frames_read_back_their_top_faces_or_say_uncertain(reader):
    """Never silently wrong; and most plain frames (dice apart, no glare) are read outright."""
    ok = 0
    for tops, seed in SEEDS:
        frame, placed = _frame(tops, seed, touching=0.0, glare=0)
        r = reader.read(frame)
        if r.status == "ok":
            order = sorted(range(3), key=lambda i: placed[i].cx)
            assert r.tops() == [tops[i] for i in order], (seed, r)
            assert all(d.seen == 7 - d.top for d in r.dice)
            ok += 1
        else:
            assert r.reason
        assert r.model_id == reader.model_id and r.model_id.startswith("dice-faces-")
    assert ok >= 4, f"only {ok} of {len(SEEDS)} plain frames read outright"


def test_reading_from_above_reports_the_faces_seen(reader):
    frame, placed = _frame([2, 3, 5], 21, view="above", touching=0.0, glare=0)
    r = reader.with_view("above").read(frame)
    assert r.status == "ok", r.reason
    assert sorted(r.tops()) == [2, 3, 5] and all(d.seen == d.top for d in r.dice)


@pytest.mark.parametrize("count", [2, 4])
def test_two_or_four_dice_are_uncertain_with_the_count_in_words(reader, count):
    frame, _ = _frame([3] * count, 30 + count, touching=0.0, glare=0)
    r = reader.read(frame)
    assert r.status == "uncertain"
    assert "expected 3" in r.reason


def test_a_die_cut_off_by_the_frame_edge_is_uncertain(reader):
    frame, placed = _frame([4, 4, 4], 41, touching=0.0, glare=0)
    d = placed[0]
    # shift the frame so the first die hangs over the left edge (the other two lie further left: gone too)
    cut = int(d.cx - d.side * 0.1)
    r = reader.read(np.ascontiguousarray(frame[:, cut:]))
    assert r.status == "uncertain"
    assert "cut off" in r.reason or "expected 3" in r.reason


def test_a_squashed_die_reads_as_leaning_or_uncertain(reader):
    frame, placed = _frame([2, 5, 6], 51, touching=0.0, glare=0)
    import cv2

    squashed = cv2.resize(frame, (1280, 480))  # every die now twice as wide as tall
    r = reader.read(squashed)
    assert r.status == "uncertain"


@pytest.mark.parametrize("frame,words", [
    (np.zeros((960, 1280, 3), np.uint8), "dark"),
    (np.full((960, 1280, 3), 200, np.uint8), "blank"),
    (np.full((960, 1280, 3), (20, 30, 220), np.uint8), "blank"),  # one flat colour: blank, not judged across channels
    (np.zeros((1, 1, 3), np.uint8), "too small"),
    (np.zeros((0, 0, 3), np.uint8), "too small"),
    (np.zeros((100, 100, 2), np.uint8), "unusable shape"),
    (np.zeros((100, 100, 3), np.float32), "8-bit"),
    (np.zeros((7000, 7000, 3), np.uint8)[:, :, :1].repeat(1, axis=2).reshape(7000, 7000), "too large"),
    ("not an array", "not an image"),
])
def test_bad_frames_are_uncertain_with_a_reason_never_an_exception(reader, frame, words):
    r = reader.read(frame)
    assert r.status == "uncertain" and r.dice == ()
    assert words in r.reason


@pytest.mark.parametrize("seed", [1, 7, 8])
def test_dice_in_a_dim_room_small_in_a_big_photo_are_read_not_called_lights_off(reader, staged_reader, seed):
    """Three dice photographed from above at a quarter of the light, the photo a sixteenth of a 5 MP frame (its
    median colour around it): the whole picture varies less than ``FLAT_STD`` on the small sample, but the dice are
    there to read (``normalise._flat``'s finer look)."""
    frame, _ = render_table([2, 5, 3], np.random.default_rng(seed), view="above", width=640, height=480, touching=0.0, glare=0)
    dim = (frame.astype(np.float32) * 0.25).astype(np.uint8)
    big = np.empty((1920, 2560, 3), np.uint8)
    big[:] = np.median(dim.reshape(-1, 3), axis=0)
    big[720:1200, 960:1600] = dim
    r = staged_reader.with_view("above").read(big)
    assert r.status == "ok" and sorted(d.seen for d in r.dice) == [2, 3, 5], r.reason
    classic = reader.with_view("above").read(big)  # it finds none of these dim dice, but looks for them
    assert not {c["code"] for c in classic.reasons} & {"dark", "blank"}, classic.reason


def test_noise_without_dice_is_found_to_hold_no_dice(reader):
    frame = np.random.default_rng(0).integers(90, 110, (480, 640, 3)).astype(np.uint8)
    r = reader.read(frame)
    assert r.status == "uncertain" and "found 0 dice" in r.reason


def test_grey_and_bgra_frames_are_read_like_colour_ones(reader):
    import cv2

    frame, _ = _frame([1, 3, 6], 61, touching=0.0, glare=0)
    bgra = cv2.cvtColor(frame, cv2.COLOR_BGR2BGRA)
    assert reader.read(bgra).tops() == reader.read(frame).tops()
    grey = cv2.cvtColor(frame, cv2.COLOR_BGR2GRAY)
    assert len(reader.read(grey).dice) == 3


def test_annotated_frame_has_the_frame_size_and_differs_where_the_dice_are(reader):
    frame, _ = _frame([6, 5, 4], 71, touching=0.0, glare=0)
    r = reader.read(frame)
    out = reader.annotate(frame, r)
    assert out.shape == frame.shape and not np.array_equal(out, frame)
    x, y, w, h = r.dice[0].box
    assert not np.array_equal(out[y:y + h + 1, x:x + w + 1], frame[y:y + h + 1, x:x + w + 1])
    assert reader.annotate(np.zeros((1, 1), np.uint8), r).ndim == 3


def test_reading_survives_json_round_trip_with_model_id(reader):
    frame, _ = _frame([2, 2, 3], 81, touching=0.0, glare=0)
    r = reader.read(frame)
    back = Reading.from_json(r.to_json())
    assert back.tops() == r.tops() and back.model_id == reader.model_id and back.status == r.status


def test_opposite_faces_setting_maps_seen_to_top(reader):
    from vision.classic_reader import DiceReader

    odd = DiceReader(reader.classifier, opposite_faces=[2, 1, 4, 3, 6, 5])
    frame, placed = render_table([1, 3, 5], np.random.default_rng(91), touching=0.0, glare=0)
    r = odd.read(frame)
    assert sorted(d.top for d in r.dice) == [2, 4, 6] and sorted(d.seen for d in r.dice) == [1, 3, 5]


def test_an_uncertain_reading_says_why_in_codes_the_page_can_translate(reader):
    from companion.core.reading import REASON_CODES, Reading

    frame, placed = _frame([2, 5], 61, touching=0.0, glare=0)  # a die missing from the tray
    r = reader.read(frame)
    assert r.status == "uncertain"
    assert {"code": "count", "found": len(r.dice), "expected": 3} in r.reasons
    assert all(c["code"] in REASON_CODES for c in r.reasons)
    assert r.sure_at == reader.min_confidence
    again = Reading.from_json(r.to_json())  # kept with the Bluff in the game log, and read back for the replay
    assert again.reasons == r.reasons and again.sure_at == r.sure_at


def test_a_sure_reading_has_no_reason_and_keeps_the_confidence_it_was_sure_at(reader):
    frame, _ = _frame([1, 3, 6], 62, touching=0.0, glare=0)
    r = reader.read(frame)
    assert r.status == "ok", r.reason
    assert r.reasons == () and r.to_json()["reasons"] == [] and r.to_json()["sure_at"] == reader.min_confidence


def test_a_reader_made_without_settings_is_as_sure_as_the_settings_default(reader):
    """``DiceReader``'s own default and ``reader.min_confidence``'s are one choice (models/MODEL_CARD.md): a tool or
    test that builds a reader by hand must flag the dice the referee flags."""
    from companion.app.settings import Settings
    from vision.classic_reader import DiceReader

    assert DiceReader(reader.classifier).min_confidence == Settings.defaults()["reader.min_confidence"] == reader.min_confidence


def test_a_dark_frame_says_so_in_a_code(reader):
    r = reader.read(np.zeros((480, 640, 3), np.uint8))
    assert r.reasons == ({"code": "dark"},)


def test_the_die_cut_off_by_the_edge_is_the_one_that_carries_the_doubt(reader):
    frame, placed = _frame([4, 4, 4], 41, touching=0.0, glare=0)
    d = min(placed, key=lambda p: p.cx)
    r = reader.read(np.ascontiguousarray(frame[:, int(d.cx - d.side * 0.1):]))
    cut = [die for die in r.dice if die.box[0] <= 0]
    assert cut and all("cut_off" in die.doubts for die in cut), r.dice
    assert all("cut_off" not in die.doubts for die in r.dice if die.box[0] > 0)
    assert {"code": "cut_off"} in r.reasons


def _two_dice_and_a_small_one():
    """A box holding only part of a die (a pale die's lit half) is about this much smaller than the rest."""
    from vision.simtable import DieStyle, PlacedDie, finish, paste_die

    rng = np.random.default_rng(5)
    frame = np.full((960, 1280, 3), (205, 210, 215), np.float32)
    red = DieStyle((40, 40, 190), (245, 245, 245), "pip", 1.0)
    for x, side in ((300, 64), (640, 64), (980, 38)):
        paste_die(frame, PlacedDie(3, x, 480, side, 10.0), red, rng, mirrored=False, shadow=False)
    return finish(frame, rng, blur=0.4, noise=2.0, jpeg_quality=95)


def test_a_die_much_smaller_than_the_others_is_doubted_as_leaning_and_the_others_are_not(reader):
    r = reader.read(_two_dice_and_a_small_one())
    assert len(r.dice) == 3, r
    small = min(r.dice, key=lambda die: die.box[2])
    assert "leaning" in small.doubts and small.confidence >= reader.min_confidence  # read sure, and still doubted
    assert all(die.doubts == () for die in r.dice if die is not small)
    assert r.status == "uncertain" and {"code": "leaning"} in r.reasons


def test_an_unsure_die_is_doubted_for_its_confidence_and_a_sure_reading_doubts_none(reader):
    frame, _ = _frame([6, 5, 4], 71, touching=0.0, glare=0)
    sure = reader.read(frame)
    assert sure.status == "ok" and all(die.doubts == () for die in sure.dice)
    strict = reader._but(min_confidence=0.99999)
    r = strict.read(frame)
    unsure = [die for die in r.dice if die.confidence < 0.99999]
    assert unsure and all("low_confidence" in die.doubts for die in unsure)
    assert r.reasons[-1]["code"] == "low_confidence" and r.reasons[-1]["n"] == len(unsure)


def test_the_annotated_frame_marks_only_the_doubted_die_orange_even_when_it_reads_sure(reader):
    frame = _two_dice_and_a_small_one()
    r = reader.read(frame)
    out = reader.annotate(frame, r)
    orange, green = np.array([0, 140, 255]), np.array([60, 200, 60])
    assert sorted(bool(die.doubts) for die in r.dice) == [False, False, True]
    for die in r.dice:
        x, y, w, h = die.box
        edge = out[y - 1:y + 2, x + w // 2].astype(int)  # the box's top side, half way along
        want = orange if die.doubts else green
        assert (np.abs(edge - want).sum(axis=1) < 60).any(), (die, edge)


def test_doubts_stay_out_of_the_reading_json_and_its_equality(reader):
    frame, placed = _frame([4, 4, 4], 41, touching=0.0, glare=0)
    d = min(placed, key=lambda p: p.cx)
    r = reader.read(np.ascontiguousarray(frame[:, int(d.cx - d.side * 0.1):]))
    assert any(die.doubts for die in r.dice)
    as_json = r.to_json()
    assert all(set(die) == {"seen", "top", "confidence", "box"} for die in as_json["dice"])  # API.md's four keys
    from dataclasses import replace

    assert all(die.doubts == () for die in Reading.from_json(as_json).dice)
    assert all(replace(die, doubts=()) == die for die in r.dice)  # evidence, not part of what the die reads


def test_the_bench_counts_a_wrong_die_that_carries_a_doubt_as_flagged_even_when_read_sure(reader):
    """In a three-dice game a doubted die makes the referee confirm, so it is not silently wrong."""
    from bench import reader as bench

    frame = _two_dice_and_a_small_one()  # three 3s; the small one is doubted as leaning, yet read sure
    labels = [(3, 300.0, 480.0, 64.0, 64.0), (3, 640.0, 480.0, 64.0, 64.0), (5, 980.0, 480.0, 38.0, 38.0)]  # the small one mislabelled
    scores = bench.real_frames(reader, [("small", frame, labels)])["model"]
    assert scores["wrong"] == 1
    assert scores["wrong_flagged_share"] == 1.0  # it carries a doubt
    assert scores["wrong_unsure_share"] == 0.0  # but it was read sure
