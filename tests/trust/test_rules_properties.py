"""Hostile input on the pure rules engine (hypothesis).

Random sequences of valid and invalid actions — wrong phase, wrong seat, wrong
types, claims out of range, absurd dice — are fed to ``decide_*``; each accepted
event is folded in with ``apply``. After every step the invariants of
RULES.md hold:

- a refused action changes nothing (state and log are as before);
- within a round claims only rise, from 3 to 18 (R4, R7, R8);
- positions only move as the rules say: one elephant, 1 step (R8, R9) or 2
  (R10), and a correction only re-decides its own Bluff (R15);
- at most one loser, and only in phase ``over`` (R12);
- the state is always the fold of the log.
"""

from __future__ import annotations

import copy

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from companion.core.errors import ElephantsBluffError
from companion.rules import apply, decide_believe, decide_bluff, decide_claim, decide_confirm, decide_correction, decide_start, fold
from companion.rules.engine import bluff_event
from companion.rules.state import PHASE_CONFIRM, PHASE_OVER
from companion.rules.verdict import bluff_verdict

# Values a hostile or clumsy client may send where a number is expected.
junk = st.one_of(st.none(), st.booleans(), st.floats(allow_nan=True), st.text(max_size=3), st.lists(st.integers(), max_size=4), st.integers(min_value=-10**20, max_value=10**20))
amounts = st.one_of(st.integers(min_value=-2, max_value=21), junk)
seats = st.one_of(st.none(), st.integers(min_value=-2, max_value=11), junk)
die = st.one_of(st.integers(min_value=0, max_value=7), junk)
dice_lists = st.one_of(st.lists(st.integers(min_value=1, max_value=6), min_size=3, max_size=3), st.lists(die, min_size=0, max_size=5), junk)

readings = st.one_of(
    st.none(),
    st.builds(lambda tops, status: {"status": status, "reason": None, "dice": [{"seen": 7 - t, "top": t, "confidence": 0.9, "box": [0, 0, 1, 1]} for t in tops], "total": sum(tops), "model": "test"},
              st.lists(st.integers(min_value=1, max_value=6), min_size=0, max_size=4), st.sampled_from(["ok", "uncertain", "no_dice"])),
)

actions = st.one_of(
    st.tuples(st.just("claim"), amounts, seats),
    st.tuples(st.just("believe"), st.one_of(st.booleans(), junk), seats),
    st.tuples(st.just("bluff"), readings, seats),
    st.tuples(st.just("confirm"), dice_lists, st.none()),
    st.tuples(st.just("correct"), dice_lists, st.integers(min_value=0, max_value=5)),
)


def _act(state, action):
    """The event for ``action``, or the error that refuses it."""
    kind, value, extra = action
    if kind == "claim":
        return decide_claim(state, value, extra)
    if kind == "believe":
        return decide_believe(state, value, extra)
    if kind == "bluff":
        caller = decide_bluff(state, extra)
        cid = f"c-{state.id[2:]}-{len(state.challenges) + 1}"
        return bluff_event(caller, cid, value, None if value else "no reading", False)
    if kind == "confirm":
        return decide_confirm(state, value)
    ids = list(state.challenges)
    cid = ids[extra % len(ids)] if ids else "c-none-1"
    return decide_correction(state, cid, value, "Ann", "2026-01-01T00:00:00Z")


def _snapshot(state):
    return copy.deepcopy(state.__dict__)


def _table_action(data, state):
    """What a table playing by the rules would do now (sometimes a claim too high or too low)."""
    tops = st.lists(st.integers(min_value=1, max_value=6), min_size=3, max_size=3)
    if state.phase == "claim":
        near = st.integers(min_value=state.min_claim - 1, max_value=state.min_claim + 4)
        return ("claim", data.draw(st.one_of(near, st.just(18))), data.draw(st.sampled_from([None, state.to_act])))
    if state.phase == "decide":
        if data.draw(st.booleans()):
            return ("believe", data.draw(st.booleans()), None)
        status = data.draw(st.sampled_from(["ok", "ok", "ok", "uncertain"]))
        values = data.draw(tops)
        return ("bluff", {"status": status, "reason": None, "dice": [{"seen": 7 - t, "top": t, "confidence": 0.9, "box": [0, 0, 1, 1]} for t in values], "total": sum(values), "model": "test"}, None)
    if state.phase == "confirm":
        return ("confirm", data.draw(tops), None)
    return ("correct", data.draw(tops), data.draw(st.integers(min_value=0, max_value=5)))


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    players=st.integers(min_value=2, max_value=10),
    path_length=st.integers(min_value=2, max_value=6),
    starter=st.integers(min_value=0, max_value=9),
    steps=st.integers(min_value=1, max_value=80),
    data=st.data(),
)
def test_random_actions_keep_every_rule_invariant(players, path_length, starter, steps, data):
    start = decide_start("g-prop", [f"P{i}" for i in range(players)], path_length, starter % players)
    log = [start]
    state = fold(log)
    accepted = after_end = 0
    for _ in range(steps):
        if state.phase == PHASE_OVER:
            after_end += 1
            if after_end > 4:  # a few corrections and refusals after the end are enough
                break
        # Mostly what a table would do, often something hostile or out of turn.
        action = data.draw(actions) if data.draw(st.integers(0, 3)) == 0 else _table_action(data, state)
        before, log_before = _snapshot(state), list(log)
        try:
            event = _act(state, action)
        except ElephantsBluffError as exc:
            # Refused: a message for the table, and nothing changed.
            assert exc.message and exc.status in (400, 404, 409, 422)
            assert _snapshot(state) == before and log == log_before
            continue
        accepted += 1
        new = apply(state, event)
        assert _snapshot(state) == before, "apply must not change the state it is given"
        _check_step(state, new, event)
        log.append(event)
        state = new
        assert _snapshot(fold(log)) == _snapshot(state), "the state is the fold of the log"
    assert state.events == len(log) == accepted + 1


def _check_step(old, new, event):
    kind = event["type"]
    old_pos, new_pos = old.positions(), new.positions()
    assert all(0 <= p <= new.path_length for p in new_pos)
    # At most one loser, and only when the game is over (R12).
    assert (new.loser is not None) == (new.phase == PHASE_OVER)
    if new.loser is not None:
        assert new_pos[new.loser] == new.path_length
    if old.phase == PHASE_OVER:
        assert kind == "corrected", "nothing but a correction is accepted after the game ends"
    if kind == "claimed":
        # Claims rise within a round, from 3 to 18 (R4, R7, R8).
        assert 3 <= event["amount"] <= 18
        if old.claim is not None:
            assert event["amount"] > old.claim[0]
        assert new.round == old.round and new_pos == old_pos
        assert new.to_act == (event["seat"] + 1) % len(new.players)
    elif kind == "believed":
        moved = [s for s in range(len(new_pos)) if new_pos[s] != old_pos[s]]
        if old.claim[0] == 18:  # R8: believing 18 costs one step
            assert moved == [event["seat"]] and new_pos[event["seat"]] == min(old.path_length, old_pos[event["seat"]] + 1)
        else:
            assert moved == [] and new.phase == "claim" and new.to_act == event["seat"]
    elif kind in ("bluff_called", "confirmed"):
        moved = [s for s in range(len(new_pos)) if new_pos[s] != old_pos[s]]
        if new.phase == PHASE_CONFIRM:
            assert moved == [] and kind == "bluff_called"  # R14: nobody moves on an uncertain reading
        else:
            challenge = new.challenges[new.last_challenge]
            verdict = bluff_verdict(challenge.claim, sum(challenge.dice))
            mover = challenge.claimer if verdict.mover == "claimer" else challenge.caller
            assert moved == [mover]
            assert new_pos[mover] == min(old.path_length, old_pos[mover] + verdict.steps)
            assert new.phase == PHASE_OVER or (new.to_act == mover and new.round == old.round + 1)  # R11
    elif kind == "corrected":
        # R15: the same moves, the corrected Bluff's one re-decided; rounds since stay played.
        assert len(new.moves) == len(old.moves) and new.round >= old.round
        changed = [i for i, (a, b) in enumerate(zip(old.moves, new.moves)) if a != b]
        assert all(new.moves[i].challenge == event["challenge"] for i in changed)
        assert new.challenges[event["challenge"]].corrections[-1]["new"] == event["dice"]
