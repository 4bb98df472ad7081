"""The rules engine, rule by rule (RULES.md R1-R15). Pure: no store, no clock."""

from __future__ import annotations

import copy
import random

import pytest

from companion.core.errors import BadRequest, NotAllowed, NotFound, RuleRefused
from companion.rules import apply, bluff_verdict, decide_believe, decide_bluff, decide_claim, decide_confirm, decide_correction, decide_start, fold
from companion.rules.engine import bluff_event, decide_read_again
from companion.rules.state import GameState
from companion.rules.views import public_state


class Game:
    """Plays a game through the engine the way the referee does: decide, then apply."""

    def __init__(self, players=("Ann", "Ben", "Cy"), path_length=7, starter=None, ages=None) -> None:
        self.events = [decide_start("g-t", list(players), path_length, starter, ages)]
        self.state = fold(self.events)
        self.n = 0

    def _add(self, event) -> GameState:
        self.state = apply(self.state, event)
        self.events.append(event)
        return self.state

    def claim(self, amount, seat=None):
        return self._add(decide_claim(self.state, amount, seat))

    def believe(self, peeked=False, seat=None):
        return self._add(decide_believe(self.state, peeked, seat))

    def bluff(self, dice, status="ok", seat=None):
        caller = decide_bluff(self.state, seat)
        self.n += 1
        reading = None if dice is None else {"status": status, "dice": [{"seen": 7 - v, "top": v, "confidence": 0.99, "box": [0, 0, 1, 1]} for v in dice]}
        return self._add(bluff_event(caller, f"c-t-{self.n}", reading, None if dice else "no camera", False))

    def confirm(self, dice):
        return self._add(decide_confirm(self.state, dice))

    def correct(self, cid, dice, by="Ann", at="2026-11-21T12:00:00Z", **options):
        return self._add(decide_correction(self.state, cid, dice, by, at, **options))


# --- R1: seats and turn order -------------------------------------------------------

def test_r1_the_player_to_the_left_is_the_next_seat_wrapping_around():
    g = Game()
    assert [g.state.left_of(s) for s in range(3)] == [1, 2, 0]


@pytest.mark.parametrize("count", [2, 10])
def test_r1_two_to_ten_players_may_play(count):
    g = Game(players=[f"P{i}" for i in range(count)])
    assert g.state.seats == count


@pytest.mark.parametrize("count", [0, 1, 11])
def test_r1_fewer_than_two_or_more_than_ten_players_are_refused(count):
    with pytest.raises(RuleRefused, match="2 to 10 players"):
        decide_start("g-x", [f"P{i}" for i in range(count)])


@pytest.mark.parametrize("players,words", [(["Ann", ""], "needs a name"), (["Ann", "   "], "needs a name"), (["Ann", "x" * 200], "at most 30"), (["Ann", "ann"], "same name"), (["Ann", "B\x00n"], "control"),
                                           (["Ann", "Table"], "keeps for the table itself"), (["TABLE ", "Ben"], "keeps for the table itself")])
def test_r1_bad_names_are_refused(players, words):
    with pytest.raises(RuleRefused, match=words):
        decide_start("g-x", players)


@pytest.mark.parametrize("players", ["Ann,Ben", None, ["Ann", 3], {"a": 1}])
def test_r1_players_must_be_a_list_of_names(players):
    with pytest.raises(BadRequest):
        decide_start("g-x", players)


def test_r1_two_player_game_passes_the_cup_back_and_forth():
    g = Game(players=["Ann", "Ben"])
    g.claim(5)
    assert g.state.to_act == 1
    g.believe()
    g.claim(6)
    assert g.state.to_act == 0


# --- R2: the path -------------------------------------------------------------------

def test_r2_every_elephant_starts_at_zero_on_a_path_of_seven_by_default():
    g = Game()
    assert g.state.positions() == [0, 0, 0] and g.state.path_length == 7


@pytest.mark.parametrize("length", [1, 31, "7", 7.0, True])
def test_r2_path_length_must_be_a_whole_number_from_2_to_30(length):
    with pytest.raises((RuleRefused, BadRequest)):
        decide_start("g-x", ["Ann", "Ben"], length)


# --- R3: who starts -----------------------------------------------------------------

def test_r3_the_youngest_player_starts():
    assert Game(ages=[40, 9, 12]).state.to_act == 1


def test_r3_between_equally_young_players_the_first_in_seating_order_starts():
    assert Game(ages=[40, 9, 9]).state.to_act == 1


def test_r3_the_table_may_pick_the_starter():
    g = Game(starter=2, ages=[1, 50, 50])
    assert g.state.to_act == 2 and g.state.starter == 2


def test_r3_without_ages_or_starter_seat_zero_starts():
    assert Game().state.to_act == 0


@pytest.mark.parametrize("starter", [3, -1])
def test_r3_a_starter_outside_the_table_is_refused(starter):
    with pytest.raises(RuleRefused, match="seats 0 to 2"):
        decide_start("g-x", ["A", "B", "C"], 7, starter)


@pytest.mark.parametrize("ages,error", [([1, 2], BadRequest), ([5, "old", 7], BadRequest), ([5, 0, 7], RuleRefused)])
def test_r3_ages_must_be_one_plausible_age_per_player(ages, error):
    with pytest.raises(error):
        decide_start("g-x", ["A", "B", "C"], 7, None, ages)


# --- R4: the opening claim ----------------------------------------------------------

@pytest.mark.parametrize("amount", [3, 11, 18])
def test_r4_the_opening_claim_is_3_to_18(amount):
    g = Game()
    g.claim(amount)
    assert g.state.claim == (amount, 0) and g.state.phase == "decide"


@pytest.mark.parametrize("amount,words", [(2, "at least 3"), (0, "at least 3"), (19, "at most 18"), (-5, "at least 3")])
def test_r4_a_claim_outside_3_to_18_is_refused(amount, words):
    g = Game()
    with pytest.raises(RuleRefused, match=words):
        g.claim(amount)


@pytest.mark.parametrize("amount", ["12", 12.5, None, True, [12]])
def test_r4_a_claim_that_is_not_a_whole_number_is_a_bad_request(amount):
    with pytest.raises(BadRequest, match="whole number"):
        Game().claim(amount)


def test_r4_a_claim_by_the_wrong_seat_is_not_allowed():
    with pytest.raises(NotAllowed, match="Ann's turn, not Ben's"):
        Game().claim(10, seat=1)


def test_r4_a_claim_from_a_seat_that_does_not_exist_is_a_bad_request():
    with pytest.raises(BadRequest, match="no seat 7"):
        Game().claim(10, seat=7)


def test_r4_a_refused_claim_changes_nothing():
    g = Game()
    before = copy.deepcopy(g.state)
    with pytest.raises(RuleRefused):
        decide_claim(g.state, 2)
    assert g.state == before


# --- R5: the receiver decides -------------------------------------------------------

def test_r5_after_a_claim_the_player_to_the_left_must_decide():
    g = Game()
    g.claim(9)
    assert (g.state.phase, g.state.to_act, g.state.min_claim) == ("decide", 1, 10)


def test_r5_claiming_again_while_the_receiver_decides_is_not_allowed():
    g = Game()
    g.claim(9)
    with pytest.raises(NotAllowed, match="must believe the claim or call Bluff"):
        g.claim(10)


@pytest.mark.parametrize("action", ["believe", "bluff"])
def test_r5_believe_or_bluff_before_any_claim_is_not_allowed(action):
    g = Game()
    with pytest.raises(NotAllowed, match="must pass a claim"):
        decide_believe(g.state) if action == "believe" else decide_bluff(g.state)


def test_r5_only_the_receiver_may_decide():
    g = Game()
    g.claim(9)
    with pytest.raises(NotAllowed, match="Ben's turn, not Cy's"):
        g.believe(seat=2)
    with pytest.raises(NotAllowed):
        decide_bluff(g.state, seat=0)


# --- R6, R7: believing and raising --------------------------------------------------

def test_r6_a_believer_may_say_they_peeked():
    g = Game()
    g.claim(9)
    g.believe(peeked=True)
    assert g.state.peeked is True and public_state(g.state)["peeked"] is True


def test_r6_peeked_must_be_true_or_false():
    g = Game()
    g.claim(9)
    with pytest.raises(BadRequest, match="true or false"):
        g.believe(peeked="yes")


def test_r7_the_believer_passes_a_claim_at_least_one_higher():
    g = Game()
    g.claim(9)
    g.believe()
    assert (g.state.phase, g.state.to_act, g.state.min_claim) == ("claim", 1, 10)
    g.claim(10)
    assert g.state.claim == (10, 1) and g.state.to_act == 2


@pytest.mark.parametrize("amount", [9, 5])
def test_r7_a_claim_not_higher_than_the_one_received_is_refused(amount):
    g = Game()
    g.claim(9)
    g.believe()
    with pytest.raises(RuleRefused, match="You received 9: your claim must be at least 10"):
        g.claim(amount)


def test_r7_claims_may_jump_by_more_than_one():
    g = Game()
    g.claim(4)
    g.believe()
    g.claim(17)
    assert g.state.claim == (17, 1)


# --- R8: eighteen -------------------------------------------------------------------

def test_r8_a_claim_of_18_cannot_be_raised():
    g = Game()
    g.claim(18)
    assert g.state.min_claim is None and public_state(g.state)["eighteen"] is True


def test_r8_believing_18_moves_the_believer_one_step_and_they_start():
    g = Game()
    g.claim(18)
    g.believe()
    assert g.state.positions() == [0, 1, 0]
    assert (g.state.phase, g.state.to_act, g.state.claim, g.state.round) == ("claim", 1, None, 2)
    assert g.state.moves[-1].rule == "R8"


# --- R9, R10: the Bluff verdict -----------------------------------------------------

@pytest.mark.parametrize(
    "claim,total,expected",
    [(11, 10, ("claimer", 1, "R9")), (11, 11, ("caller", 1, "R9")), (11, 15, ("caller", 1, "R9")), (3, 3, ("caller", 1, "R9")), (17, 16, ("claimer", 1, "R9")),
     (18, 18, ("caller", 2, "R10")), (18, 17, ("claimer", 2, "R10")), (18, 3, ("claimer", 2, "R10"))],
)
def test_r9_r10_bluff_verdicts(claim, total, expected):
    assert tuple(bluff_verdict(claim, total)) == expected


def test_r9_a_bluff_on_a_lie_moves_the_claimer():
    g = Game()
    g.claim(12)
    g.bluff([1, 2, 3])
    assert g.state.positions() == [1, 0, 0]
    c = g.state.challenges["c-t-1"]
    assert (c.claimer, c.caller, c.total, c.mover, c.steps) == (0, 1, 6, 0, 1)


def test_r9_a_bluff_on_a_true_claim_moves_the_caller_even_when_exactly_equal():
    g = Game()
    g.claim(12)
    g.bluff([4, 4, 4])
    assert g.state.positions() == [0, 1, 0]


def test_r10_a_bluff_on_18_with_18_moves_the_caller_two_steps():
    g = Game()
    g.claim(18)
    g.bluff([6, 6, 6])
    assert g.state.positions() == [0, 2, 0]


def test_r10_a_bluff_on_18_with_less_moves_the_claimer_two_steps():
    g = Game()
    g.claim(18)
    g.bluff([6, 6, 5])
    assert g.state.positions() == [2, 0, 0]


def test_r9_the_claimer_is_whoever_passed_the_last_claim():
    g = Game()
    g.claim(5)
    g.believe()
    g.claim(13)  # Ben to Cy
    g.bluff([1, 1, 1])
    assert g.state.positions() == [0, 1, 0]


# --- R11: who starts next -----------------------------------------------------------

def test_r11_whoever_moved_starts_the_next_round_from_a_fresh_claim():
    g = Game()
    g.claim(12)
    g.bluff([6, 6, 6])  # Ben was wrong
    assert (g.state.phase, g.state.to_act, g.state.starter, g.state.round, g.state.min_claim) == ("claim", 1, 1, 2, 3)


# --- R12: the red square ------------------------------------------------------------

def test_r12_reaching_the_red_square_ends_the_game_with_that_player_the_loser():
    g = Game(players=["Ann", "Ben"], path_length=2)
    for _ in range(2):
        g.claim(12, seat=g.state.to_act)
        g.bluff([1, 1, 1])  # the claimer lies each time
    assert g.state.phase == "over" and g.state.loser == 0 and g.state.to_act is None
    assert public_state(g.state)["loser"] == 0


def test_r12_two_steps_with_one_square_left_stops_on_the_red_square():
    g = Game(players=["Ann", "Ben"], path_length=2)
    g.claim(12)
    g.bluff([1, 1, 1])  # Ann at 1
    g.claim(18)
    g.bluff([1, 1, 1])  # Ann +2 -> 3, capped at 2
    assert g.state.positions() == [2, 0] and g.state.loser == 0


@pytest.mark.parametrize("action", ["claim", "believe", "bluff", "confirm"])
def test_r12_nothing_can_be_played_after_the_game_is_over(action):
    g = Game(players=["Ann", "Ben"], path_length=2)
    g.claim(18)
    g.bluff([1, 1, 1])
    with pytest.raises(NotAllowed, match="The game is over: Ann lost"):
        {"claim": lambda: decide_claim(g.state, 5), "believe": lambda: decide_believe(g.state), "bluff": lambda: decide_bluff(g.state), "confirm": lambda: decide_confirm(g.state, [1, 2, 3])}[action]()


def test_r12_believing_18_can_end_the_game():
    g = Game(players=["Ann", "Ben"], path_length=2)
    g.claim(18)
    g.believe()
    g.claim(18)
    g.believe()  # Ann receives 18 and believes
    g.claim(18)
    g.believe()  # Ben again: 2 steps
    assert g.state.loser == 1


# --- R14: uncertain readings --------------------------------------------------------

@pytest.mark.parametrize("dice,status", [([1, 2, 3], "uncertain"), ([1, 2], "ok"), (None, None)])
def test_r14_an_uncertain_or_missing_reading_asks_the_table_to_confirm(dice, status):
    g = Game()
    g.claim(10)
    g.bluff(dice, status=status)
    assert g.state.phase == "confirm" and g.state.to_act is None and g.state.positions() == [0, 0, 0]
    assert not g.state.challenges["c-t-1"].decided


def test_r14_confirmed_dice_decide_the_bluff():
    g = Game()
    g.claim(10)
    g.bluff([1, 2, 3], status="uncertain")
    g.confirm([6, 5, 1])
    c = g.state.challenges["c-t-1"]
    assert c.dice == [6, 5, 1] and c.source == "table" and g.state.positions() == [0, 1, 0]


@pytest.mark.parametrize("dice,error", [([1, 2], BadRequest), ("123", BadRequest), ([1, 2, "3"], BadRequest), ([0, 2, 3], RuleRefused), ([1, 2, 7], RuleRefused)])
def test_r14_confirmed_dice_must_be_three_faces_from_1_to_6(dice, error):
    g = Game()
    g.claim(10)
    g.bluff(None)
    with pytest.raises(error):
        g.confirm(dice)
    assert g.state.phase == "confirm"


def test_r14_the_confirmation_keeps_when_and_which_session_and_what_was_read():
    g = Game()
    g.claim(10)
    g.bluff([1, 2, 3], status="uncertain")
    g._add(decide_confirm(g.state, [4, 2, 3], at="2026-11-21T20:04:00Z", session="device-01"))
    c = g.state.challenges["c-t-1"]
    assert c.confirmed == {"at": "2026-11-21T20:04:00Z", "session": "device-01", "read": [1, 2, 3]}
    assert c.dice == [4, 2, 3] and c.source == "table"
    assert fold(g.events) == g.state


def _sure(tops):
    return {"status": "ok", "dice": [{"top": t, "seen": 7 - t} for t in tops]}


def test_r14_a_second_look_sure_of_three_dice_decides_the_bluff_as_the_camera_and_keeps_the_first():
    g = Game()
    g.claim(10)
    g.bluff([1, 2, 3], status="uncertain")
    first = copy.deepcopy(g.state.challenges["c-t-1"])
    g._add(decide_read_again(g.state, _sure([6, 5, 1]), True, at="2026-12-06T20:04:00Z"))
    c = g.state.challenges["c-t-1"]
    assert c.dice == [6, 5, 1] and c.source == "camera" and c.confirmed is None and g.state.positions() == [0, 1, 0]
    assert c.reading == _sure([6, 5, 1]) and c.problem is None and c.has_images and c.photo == "c-t-1-look2"
    assert c.first_look == {"reading": first.reading, "problem": first.problem, "problem_codes": first.problem_codes,
                            "has_images": first.has_images, "read_again_at": "2026-12-06T20:04:00Z"}
    assert fold(g.events) == g.state


@pytest.mark.parametrize("reading", [None, {"status": "uncertain", "dice": _sure([1, 2, 3])["dice"]}, _sure([4, 5])],
                         ids=["no reading", "unsure", "two dice"])
def test_r14_a_second_look_not_sure_of_three_dice_decides_nothing(reading):
    g = Game()
    g.claim(10)
    g.bluff([1, 2, 3], status="uncertain")
    with pytest.raises(NotAllowed, match="still cannot read all three dice"):
        decide_read_again(g.state, reading, True)
    assert g.state.phase == "confirm" and not g.state.challenges["c-t-1"].decided


def test_r14_the_dice_are_read_again_only_while_the_table_is_asked_to_confirm_them():
    g = Game()
    g.claim(10)
    with pytest.raises(NotAllowed, match="nothing to confirm now"):
        decide_read_again(g.state, _sure([1, 2, 3]), True)
    g.bluff([6, 6, 6])  # read sure at once: decided
    with pytest.raises(NotAllowed, match="nothing to confirm now"):
        decide_read_again(g.state, _sure([1, 2, 3]), True)


def test_r14_confirming_when_nothing_waits_is_not_allowed():
    g = Game()
    g.claim(10)
    with pytest.raises(NotAllowed, match="no dice to confirm"):
        g.confirm([1, 2, 3])


def test_r14_no_claim_or_decision_while_the_dice_wait_for_confirmation():
    g = Game()
    g.claim(10)
    g.bluff(None)
    with pytest.raises(NotAllowed, match="confirm the dice"):
        decide_claim(g.state, 5)


# --- R15: corrections ---------------------------------------------------------------

def test_r15_a_correction_re_decides_the_bluff_and_keeps_who_when_old_and_new():
    g = Game()
    g.claim(10)
    g.bluff([1, 2, 3])  # Ann moved (claim 10 > 6)
    g.correct("c-t-1", [6, 5, 4], by="Cy", at="2026-11-21T12:00:00Z")
    c = g.state.challenges["c-t-1"]
    assert g.state.positions() == [0, 1, 0]
    assert c.corrections == [{"by": "Cy", "at": "2026-11-21T12:00:00Z", "old": [1, 2, 3], "new": [6, 5, 4]}]
    assert c.source == "correction" and c.mover == 1


def test_r15_with_nothing_played_since_the_new_mover_starts_the_round():
    g = Game()
    g.claim(10)
    g.bluff([1, 2, 3])
    assert g.state.to_act == 0
    g.correct("c-t-1", [6, 5, 4])
    assert g.state.to_act == 1 and g.state.starter == 1


def test_r15_rounds_played_since_stay_as_they_were_played():
    g = Game()
    g.claim(10)
    g.bluff([1, 2, 3])  # round 1: Ann +1
    g.claim(12, seat=0)
    g.bluff([6, 6, 6])  # round 2: Ben +1, Ben starts round 3
    g.claim(5, seat=1)
    g.correct("c-t-1", [6, 6, 6])  # round 1 re-decided: Ben instead of Ann
    assert g.state.positions() == [0, 2, 0]
    assert (g.state.phase, g.state.to_act, g.state.claim, g.state.round) == ("decide", 2, (5, 1), 3)


def test_r15_a_correction_that_puts_an_elephant_on_red_ends_the_game():
    g = Game(players=["Ann", "Ben"], path_length=2)
    g.claim(10)
    g.bluff([1, 2, 3])  # Ann 1
    g.claim(10, seat=0)
    g.bluff([6, 6, 6])  # Ben 1
    g.correct("c-t-2", [1, 1, 1])  # Ann instead: 2 -> red
    assert g.state.phase == "over" and g.state.loser == 0


def test_r15_a_correction_that_takes_back_the_losing_move_resumes_the_game():
    g2 = Game(players=["Ann", "Ben"], path_length=2)
    g2.claim(18)
    g2.bluff([1, 1, 1])  # Ann +2 -> red
    g2.correct("c-t-1", [6, 6, 6], after_game_over=True)  # Ben +2 -> red instead
    assert g2.state.loser == 1
    g3 = Game(players=["Ann", "Ben", "Cy"], path_length=2)
    g3.claim(10)
    g3.bluff([6, 6, 6])  # Ben 1
    g3.claim(10, seat=1)
    g3.bluff([1, 1, 1])  # Ben 2 -> loses
    assert g3.state.loser == 1
    g3.correct("c-t-2", [6, 6, 6], after_game_over=True)  # Cy was wrong instead: Cy 1, nobody on red
    assert (g3.state.phase, g3.state.loser, g3.state.to_act, g3.state.positions()) == ("claim", None, 2, [0, 1, 1])


def test_r15_correcting_with_the_same_dice_is_refused():
    g = Game()
    g.claim(10)
    g.bluff([1, 2, 3])
    with pytest.raises(RuleRefused, match="already the dice"):
        g.correct("c-t-1", [1, 2, 3])


def test_r15_an_unknown_bluff_cannot_be_corrected():
    with pytest.raises(NotFound):
        Game().correct("c-t-9", [1, 2, 3])


def test_r15_a_bluff_waiting_for_confirmation_is_confirmed_not_corrected():
    g = Game()
    g.claim(10)
    g.bluff(None)
    with pytest.raises(NotAllowed, match="not been confirmed"):
        g.correct("c-t-1", [1, 2, 3])


def test_r15_no_correction_while_another_bluff_waits_for_confirmation():
    g = Game()
    g.claim(10)
    g.bluff([1, 2, 3])
    g.claim(10, seat=0)
    g.bluff(None)
    with pytest.raises(NotAllowed, match="Confirm the dice of the current Bluff"):
        g.correct("c-t-1", [6, 6, 6])


@pytest.mark.parametrize("by", ["", "   ", None, 5, "x" * 61])
def test_r15_a_correction_names_who_made_it(by):
    g = Game()
    g.claim(10)
    g.bluff([1, 2, 3])
    with pytest.raises(BadRequest, match="who makes the correction"):
        g.correct("c-t-1", [6, 6, 6], by=by)


@pytest.mark.parametrize("by", ["Mallory", "Ann Smith", "Anne"])
def test_r15_who_corrects_must_be_a_player_of_this_game_or_the_table(by):
    g = Game()
    g.claim(10)
    g.bluff([1, 2, 3])
    with pytest.raises(RuleRefused, match="not playing in this game"):
        g.correct("c-t-1", [6, 6, 6], by=by)
    assert g.state.challenges["c-t-1"].corrections == [] and g.state.positions() == [1, 0, 0]


def test_r15_the_correction_keeps_the_players_name_as_entered_and_the_session():
    g = Game()
    g.claim(10)
    g.bluff([1, 2, 3])
    g.correct("c-t-1", [6, 6, 6], by="  cY ", session="device-ab12")
    assert g.state.challenges["c-t-1"].corrections[0]["by"] == "Cy"
    assert g.state.challenges["c-t-1"].corrections[0]["session"] == "device-ab12"
    g.correct("c-t-1", [1, 1, 1], by="TABLE")
    assert g.state.challenges["c-t-1"].corrections[1]["by"] == "table"
    assert public_state(g.state)["last_correction"]["by"] == "table"


def test_r15_r12_a_correction_after_game_over_must_be_confirmed_and_then_says_it_reopened():
    g = Game(players=["Ann", "Ben", "Cy"], path_length=2)
    g.claim(10)
    g.bluff([6, 6, 6])  # Ben 1
    g.claim(10, seat=1)
    g.bluff([1, 1, 1])  # Ben 2 -> loses (R12)
    events = len(g.events)
    with pytest.raises(NotAllowed, match="game is over"):
        g.correct("c-t-2", [6, 6, 6])
    assert len(g.events) == events and g.state.phase == "over" and g.state.loser == 1
    with pytest.raises(BadRequest):
        g.correct("c-t-2", [6, 6, 6], after_game_over="yes")
    g.correct("c-t-2", [6, 6, 6], after_game_over=True)
    assert g.state.phase == "claim" and g.state.loser is None
    seen = public_state(g.state)["last_correction"]
    assert seen["after_game_over"] is True and seen["reopened"] is True and seen["challenge"] == "c-t-2"
    assert g.state.challenges["c-t-2"].corrections[0]["after_game_over"] is True
    assert fold(g.events) == g.state


def test_r15_r11_a_game_reopened_by_correcting_an_earlier_bluff_is_started_by_whoever_moved_last():
    g = Game(players=["Ann", "Ben"], path_length=3)
    g.claim(10)
    g.bluff([1, 1, 2])  # round 1: Ann 1
    g.claim(10, seat=0)
    g.bluff([6, 6, 6])  # round 2: Ben 1
    g.claim(10, seat=1)
    g.bluff([1, 1, 2])  # round 3: Ben 2
    g.claim(10, seat=1)
    g.bluff([1, 1, 2])  # round 4: Ben 3 -> red, the game is over
    assert g.state.loser == 1
    g.correct("c-t-2", [1, 1, 2], after_game_over=True)  # round 2 was Ann's step: Ann 2, Ben 2
    assert (g.state.phase, g.state.loser, g.state.positions()) == ("claim", None, [2, 2])
    # R11: Ben moved last (round 4, as it was played), so Ben starts round 5, not round 2's new mover
    assert (g.state.to_act, g.state.starter, g.state.round) == (1, 1, 5)
    assert fold(g.events) == g.state


def test_r15_a_round_a_correction_cut_short_goes_on_as_it_was_when_the_correction_is_taken_back():
    g = Game(players=["Ann", "Ben"], path_length=2)
    g.claim(10)
    g.bluff([1, 1, 2])  # round 1: Ann 1
    g.claim(10, seat=0)
    g.bluff([6, 6, 6])  # round 2: Ben 1; Ben starts round 3
    g.claim(10, seat=1)  # round 3: Ben claims 10, Ann to decide
    g.correct("c-t-2", [1, 1, 2])  # round 2 was Ann's step: Ann on red, the game ends mid-round
    assert (g.state.phase, g.state.loser, g.state.claim) == ("over", 0, None)
    g.correct("c-t-2", [6, 6, 6], after_game_over=True)  # the mistake taken back
    assert g.state.positions() == [1, 1] and g.state.loser is None
    assert (g.state.phase, g.state.round, g.state.to_act, g.state.starter, g.state.claim) == ("decide", 3, 0, 1, (10, 1))
    g.believe(seat=0)  # play goes on from Ben's claim
    assert (g.state.phase, g.state.to_act, g.state.min_claim) == ("claim", 0, 11)
    assert fold(g.events) == g.state


def test_r15_r11_a_round_cut_short_before_its_first_claim_is_started_by_whoever_moved_last():
    g = Game(players=["Ann", "Ben", "Cy"], path_length=2)
    g.claim(10)
    g.bluff([1, 1, 2])  # round 1: Ann 1
    g.claim(10, seat=0)
    g.bluff([1, 1, 2])  # round 2: Ann 2 -> red, the game is over
    assert g.state.loser == 0
    g.correct("c-t-2", [6, 6, 6], after_game_over=True)  # Ben, who called, moves instead: Ann 1, Ben 1
    assert g.state.phase == "claim" and g.state.claim is None and g.state.to_act == 1
    g.correct("c-t-1", [6, 6, 6])  # round 1: Ben instead of Ann, nothing claimed since: Ben 2 -> red
    assert (g.state.phase, g.state.loser) == ("over", 1)
    g.correct("c-t-1", [1, 1, 2], after_game_over=True)  # taken back: round 3 not begun, Ben moved last
    assert (g.state.phase, g.state.round, g.state.to_act, g.state.starter, g.state.claim) == ("claim", 3, 1, 1, None)
    assert g.state.positions() == [1, 1, 0]
    assert fold(g.events) == g.state


def test_r15_a_correction_during_play_needs_no_confirmation_and_reopens_nothing():
    g = Game()
    g.claim(10)
    g.bluff([1, 2, 3])
    g.correct("c-t-1", [6, 6, 6])
    seen = public_state(g.state)["last_correction"]
    assert seen["after_game_over"] is False and seen["reopened"] is False


# --- the round's history (claims, believes, peeks, Bluffs; R13) ------------------------

def test_r13_the_history_holds_what_the_table_did_and_never_a_die():
    g = Game()
    g.claim(9)  # Ann -> Ben
    g.believe(peeked=True)  # Ben peeked (R6)
    g.claim(12, seat=1)
    g.bluff([6, 6, 6])  # Cy calls Bluff on Ben's 12
    history = public_state(g.state)["history"]
    assert [(h["type"], h["seat"], h["amount"]) for h in history] == [("claim", 0, 9), ("believe", 1, 9), ("claim", 1, 12), ("bluff", 2, 12)]
    assert history[1]["peeked"] is True and all(h["round"] == 1 for h in history)
    assert all(set(h) <= {"round", "type", "seat", "amount", "peeked", "challenge"} for h in history)


def test_the_history_on_screen_is_this_round_and_the_last_one():
    g = Game()
    for r in range(3):
        g.claim(10)
        g.bluff([1, 1, 1])  # the claimer moves and starts again
    assert g.state.round == 4 and {h["round"] for h in public_state(g.state)["history"]} == {3}
    g.claim(10)
    assert {h["round"] for h in public_state(g.state)["history"]} == {3, 4}


def test_a_rematch_names_the_game_it_follows():
    event = decide_start("g-2", ["Ann", "Ben"], 7, 1, rematch_of="g-1")
    assert fold([event]).rematch_of == "g-1" and public_state(fold([event]))["rematch_of"] == "g-1"
    assert "rematch_of" not in decide_start("g-3", ["Ann", "Ben"])


# --- the log is the source of truth -------------------------------------------------

def test_state_is_the_fold_of_the_log_and_apply_never_changes_its_input():
    g = Game()
    g.claim(10)
    before = copy.deepcopy(g.state)
    event = decide_believe(g.state, True)
    after = apply(g.state, event)
    assert g.state == before and after != before
    g.state = after
    g.events.append(event)
    g.claim(14)
    g.bluff([6, 6, 1])
    g.correct("c-t-1", [1, 1, 1])
    assert fold(g.events) == g.state


def test_a_log_must_start_with_the_game():
    with pytest.raises(ValueError):
        fold([{"type": "claimed", "seat": 0, "amount": 5}])
    with pytest.raises(ValueError):
        fold([])


@pytest.mark.parametrize("seed", range(12))
def test_apply_leaves_every_earlier_state_as_it_was_through_claims_bluffs_confirmations_and_corrections(seed):
    """Each state the referee has announced stays what it was, whatever comes after (apply copies what it changes)."""
    rng = random.Random(seed)
    g = Game(players=["Ann", "Ben", "Cy", "Dee"][: rng.randint(2, 4)], path_length=rng.randint(5, 9))
    kept = [(g.state, copy.deepcopy(g.state))]
    for _ in range(120):
        state = g.state
        decided = [c for c in state.challenges.values() if c.decided]
        if decided and state.phase != "confirm" and rng.random() < (0.5 if state.phase == "over" else 0.1):
            g.correct(rng.choice(decided).id, [rng.randint(1, 6) for _ in range(3)], after_game_over=state.phase == "over")
        elif state.phase == "over":
            break
        elif state.phase == "confirm":
            g.confirm([rng.randint(1, 6) for _ in range(3)])
        elif state.phase == "claim":
            g.claim(rng.randint(state.min_claim, min(18, state.min_claim + 4)))
        elif state.claim[0] < 18 and rng.random() < 0.5:
            g.believe(peeked=rng.random() < 0.5)
        else:
            g.bluff([rng.randint(1, 6) for _ in range(3)], status=rng.choice(["ok", "ok", "uncertain"]))
        kept.append((g.state, copy.deepcopy(g.state)))
    assert all(state == snapshot for state, snapshot in kept)
    assert fold(g.events) == g.state
    assert len(kept) > 15 and any(c.corrections for c in g.state.challenges.values())


def test_r14_a_bluff_keeps_its_problem_codes_and_a_log_written_before_them_still_folds():
    """Each part of why a Bluff had no reading is kept by code (the pages word it in the player's language); an event
    from a log written before the codes has none, and folds the same otherwise."""
    g = Game()
    g.claim(10)
    event = bluff_event(decide_bluff(g.state), "c-t-1", None, "The camera did not answer within 3 s: type the dice in.", False,
                        [{"code": "camera_timeout", "seconds": "3"}])
    g._add(event)
    assert public_state(g.state)["phase"] == "confirm"
    assert g.state.challenges["c-t-1"].problem_codes == [{"code": "camera_timeout", "seconds": "3"}]
    older = copy.deepcopy(g.events)
    del older[-1]["problem_codes"]
    state = fold(older)
    assert state.challenges["c-t-1"].problem_codes == [] and state.challenges["c-t-1"].problem == event["problem"]
    assert public_state(state) == public_state(g.state)
