"""The lid switch's peek check (RULES.md R6), private to the table (R13)."""

from __future__ import annotations

import json

import pytest

from firmware.capture import CaptureLoop
from firmware.peek import MOVED, NOT_MOVED, UNKNOWN, PeekWatch, dice_moved
from tests.firmware.helpers import ScriptedReader, TrayCamera, die_row, start_deciding
from companion.core.reading import Reading

LID = 5


def lid_table(referee, make_table, clock, *readings):
    reader = ScriptedReader(*readings)
    loop = CaptureLoop(TrayCamera(), reader, clock=clock, sleep=clock.sleep, grab_timeout_s=None)
    table = make_table(referee, capture=loop, gpio__lid_switch=LID)
    return table, reader


def test_a_peek_without_a_reroll_raises_a_warning_without_any_value(referee, make_table, clock):
    gid = start_deciding(referee)
    table, reader = lid_table(referee, make_table, clock, die_row([2, 3, 5]))
    heard = []
    table.add_warning_listener(heard.append)
    assert table.press("lid")["message"] == "The lid was lifted: a peek."
    assert table.press("believe")["message"].startswith("Believed (the lid was lifted")
    assert referee.game_state(gid)["peeked"] is True  # Believe took peeked from the lid switch

    referee.claim(gid, 10)  # seat 1 passes 10 without re-rolling
    table.wait_idle(10)
    warning = table.peek_warning
    assert warning["seat"] == 1 and warning["rule"] == "R6" and warning["round"] == 1
    assert set(warning) == {"game", "round", "seat", "rule", "message"}
    assert not any(d in warning["message"] for d in "235")  # no value of the dice, ever
    assert table.lights_state()["peek_warning"] == warning
    assert heard == [warning]  # the page's stream hears it once
    assert reader.frames_read == 2  # once at the peek, once at the claim


@pytest.mark.parametrize(
    ("readings", "result"),
    [
        pytest.param((die_row([2, 3, 5]), die_row([2, 3, 5], xs=(40, 120, 260))), MOVED, id="re-rolled: the third die was rolled away"),
        pytest.param((Reading("uncertain", (), reason="lid shadow"),), UNKNOWN, id="cannot be checked: never accuses"),
    ],
)
def test_a_peek_followed_by_a_reroll_or_an_unclear_look_raises_no_warning(referee, make_table, clock, readings, result):
    gid = start_deciding(referee)
    table, _ = lid_table(referee, make_table, clock, *readings)
    table.press("lid")
    table.press("believe")
    referee.claim(gid, 10)
    table.wait_idle(10)
    assert table.peek_warning is None
    assert table.peek_watch.last_result["result"] == result


def test_the_warning_clears_when_the_next_claim_or_round_comes(referee, make_table, clock):
    gid = start_deciding(referee)
    table, _ = lid_table(referee, make_table, clock, die_row([2, 3, 5]))
    table.press("lid")
    table.press("believe")
    referee.claim(gid, 10)
    table.wait_idle(10)
    assert table.peek_warning is not None
    table.press("believe")  # seat 2 believes without lifting the lid
    referee.claim(gid, 11)
    table.wait_idle(10)
    assert table.peek_warning is None
    assert referee.game_state(gid)["peeked"] is False


def test_lifting_the_lid_on_your_own_opening_claim_is_not_a_peek(referee, make_table, clock):
    gid = referee.new_game(["Ann", "Ben"])["id"]
    table, reader = lid_table(referee, make_table, clock, die_row([2, 3, 5]))
    assert table.press("lid")["message"] == "The lid was lifted."  # R4: the starter may peek freely
    referee.claim(gid, 9)
    table.wait_idle(10)
    assert table.peek_warning is None and reader.frames_read == 0


def test_a_peek_then_bluff_needs_no_reroll(referee, make_table, clock, dice):
    gid = start_deciding(referee)
    table, _ = lid_table(referee, make_table, clock, die_row([2, 3, 5]))
    table.press("lid")
    referee.dice_source = dice
    dice.set_next_values([6, 6, 6])
    table.press("bluff")
    referee.claim(gid, 10)  # the next round's opening claim
    table.wait_idle(10)
    assert table.peek_warning is None and table.peek_watch.last_result is None


def test_the_check_is_not_logged_with_values(referee, make_table, clock, caplog):
    import logging

    gid = start_deciding(referee)
    table, _ = lid_table(referee, make_table, clock, die_row([2, 3, 5]))
    with caplog.at_level(logging.DEBUG):
        table.press("lid")
        table.press("believe")
        referee.claim(gid, 10)
        table.wait_idle(10)
    text = " ".join(r.getMessage() for r in caplog.records if r.name.startswith("firmware"))
    assert "peek check for seat 1 in round 1: not moved" in text
    assert "[2, 3, 5]" not in text and "top" not in text
    assert "[2, 3, 5]" not in json.dumps(referee.game_state(gid))


def test_dice_moved_compares_places_and_faces():
    a = die_row([2, 3, 5])
    assert dice_moved(a, die_row([2, 3, 5], xs=(42, 118, 203))) == NOT_MOVED  # sensor jitter of a few pixels
    assert dice_moved(a, die_row([2, 3, 5], xs=(120, 40, 200))) == MOVED  # two dice swapped places and faces
    assert dice_moved(a, die_row([2, 4, 5])) == MOVED  # re-rolled onto the same spot, a new face
    assert dice_moved(a, Reading("ok", a.dice[:2])) == UNKNOWN  # a die out of view: cannot tell
    assert dice_moved(None, a) == UNKNOWN


def test_a_snapshot_that_raises_counts_as_unknown():
    def broken():
        raise RuntimeError("camera gone")

    watch = PeekWatch(broken)
    state = {"id": "g-1", "round": 1, "phase": "decide", "to_act": 1, "claim": {"amount": 9, "by": 0}}
    assert watch.lid_opened(state) is True
    watch.state_changed(state)
    assert watch.state_changed({**state, "to_act": 2, "claim": {"amount": 10, "by": 1}}) == UNKNOWN
    assert watch.warning is None


@pytest.mark.parametrize(
    "phase,is_peek",
    [("none", False), ("opening claim", False), ("decide", True), ("claim after believe", True), ("confirm", False), ("over", False)],
)
def test_a_lid_lift_counts_as_a_peek_only_in_the_receivers_turn(referee, dice, make_table, clock, phase, is_peek):
    table, _ = lid_table(referee, make_table, clock, die_row([2, 3, 5]))
    referee.dice_source = dice
    if phase != "none":
        gid = referee.new_game(["Ann", "Ben"], path_length=2)["id"]
        if phase == "over":
            referee.claim(gid, 18)
            dice.set_next_values([1, 1, 1])
            referee.bluff(gid)
        elif phase != "opening claim":
            referee.claim(gid, 9)
            if phase == "claim after believe":
                referee.believe(gid)
            elif phase == "confirm":
                dice.uncertain_next = True
                referee.bluff(gid)
    table.wait_idle(10)
    message = table.press("lid")["message"]
    assert message.endswith("a peek.") is is_peek, message
