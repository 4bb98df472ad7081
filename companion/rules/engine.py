"""Commands in, events out; events folded into state (RULES.md R1-R15).

``decide_*`` functions check an action against the state and return the event
to append, or raise (``BadRequest`` 400 for wrong types, ``NotAllowed`` 409 for
the wrong phase or seat, ``RuleRefused`` 422 for a value the rules refuse).
They never change the state: the caller appends the event to the durable log
first, and only then folds it in with ``apply``. So a refused action leaves the
log untouched, and the state is always exactly the fold of the log.
"""

from __future__ import annotations

import copy
from typing import Any, Iterable

from companion.core.dice import is_face
from companion.core.errors import BadRequest, NotAllowed, NotFound, RuleRefused
from companion.rules.names import TABLE, player_names
from companion.rules.state import (
    PHASE_CLAIM,
    PHASE_CONFIRM,
    PHASE_DECIDE,
    PHASE_OVER,
    Challenge,
    GameState,
    Move,
)
from companion.rules.verdict import MAX_CLAIM, bluff_verdict

MIN_PLAYERS, MAX_PLAYERS = 2, 10  # R1
MIN_PATH, MAX_PATH = 2, 30
MIN_CLAIM = 3  # R4

Event = dict[str, Any]


# --- type checks shared by the commands -------------------------------------------------

def _int(value: Any, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise BadRequest(f"The {what} must be a whole number.")
    return value


def _dice(values: Any) -> list[int]:
    if not isinstance(values, list) or len(values) != 3:
        raise BadRequest("Give the three dice as a list of three numbers, like [6, 2, 5].")
    dice = [_int(v, "value of each die") for v in values]
    if not all(is_face(v) for v in dice):
        raise RuleRefused("Each die shows 1 to 6 elephants.")
    return dice


def _name(state: GameState, seat: int | None) -> str:
    return state.players[seat] if seat is not None else "nobody"


def _check_turn(state: GameState, seat: Any, phase: str, doing: str) -> int:
    """The action must come in ``phase`` from the seat whose turn it is."""
    if state.phase == PHASE_OVER:
        raise NotAllowed(f"The game is over: {_name(state, state.loser)} lost.")
    if state.phase != phase:
        raise NotAllowed(f"You cannot {doing} now: {_waiting_for(state)}")
    assert state.to_act is not None
    if seat is not None:
        seat = _int(seat, "seat")
        if not 0 <= seat < state.seats:
            raise BadRequest(f"There is no seat {seat} at this table.")
        if seat != state.to_act:
            raise NotAllowed(f"It is {_name(state, state.to_act)}'s turn, not {_name(state, seat)}'s.")
    return state.to_act


def _waiting_for(state: GameState) -> str:
    who = _name(state, state.to_act)
    if state.phase == PHASE_CLAIM:
        return f"{who} must pass a claim."
    if state.phase == PHASE_DECIDE:
        return f"{who} must believe the claim or call Bluff."
    if state.phase == PHASE_CONFIRM:
        return "the table must confirm the dice of the Bluff."
    return "the game is over."


# --- commands ---------------------------------------------------------------------------

def decide_start(game_id: str, players: Any, path_length: Any = 7, starter: Any = None, ages: Any = None, rematch_of: str | None = None) -> Event:
    """Start a game (R1-R3): 2-10 named players in seating order.

    The starter is ``starter`` if given, else the youngest by ``ages`` (the first
    in seating order among equals), else seat 0. ``rematch_of`` names the game
    this one follows at the same table (the evening's tally follows that chain).
    """
    if not isinstance(players, list) or not all(isinstance(p, str) for p in players):
        raise BadRequest("Give the players as a list of names in seating order.")
    if not MIN_PLAYERS <= len(players) <= MAX_PLAYERS:
        raise RuleRefused(f"Elephants Bluff is for {MIN_PLAYERS} to {MAX_PLAYERS} players, not {len(players)}.")
    names = player_names(players)  # NFKC, nothing invisible, no two alike (names.py)
    path_length = _int(path_length, "path length")
    if not MIN_PATH <= path_length <= MAX_PATH:
        raise RuleRefused(f"The path must be {MIN_PATH} to {MAX_PATH} squares long.")
    if starter is not None:
        starter = _int(starter, "starter")
        if not 0 <= starter < len(names):
            raise RuleRefused(f"The starter must be one of the seats 0 to {len(names) - 1}.")
    elif ages is not None:
        if not isinstance(ages, list) or len(ages) != len(names):
            raise BadRequest("Give one age for each player, in seating order.")
        ages = [_int(a, "age") for a in ages]
        if any(not 1 <= a <= 130 for a in ages):
            raise RuleRefused("Ages must be between 1 and 130.")
        starter = ages.index(min(ages))  # R3: the youngest starts
    else:
        starter = 0
    event: Event = {"type": "game_started", "id": game_id, "players": names, "path_length": path_length, "starter": starter}
    if rematch_of is not None:
        event["rematch_of"] = rematch_of
    return event


def decide_claim(state: GameState, amount: Any, seat: Any = None) -> Event:
    """R4, R7: a claim from 3 to 18, at least one more than the claim received."""
    amount = _int(amount, "claim")
    seat = _check_turn(state, seat, PHASE_CLAIM, "make a claim")
    low = state.min_claim
    assert low is not None  # phase claim never follows an 18
    if amount > MAX_CLAIM:
        raise RuleRefused("A claim can be at most 18: three dice show 18 elephants at most.")
    if amount < low:
        if state.claim is None:
            raise RuleRefused(f"A claim must be at least {MIN_CLAIM}: three dice show 3 elephants at least.")
        raise RuleRefused(f"You received {state.claim[0]}: your claim must be at least {low}.")
    return {"type": "claimed", "seat": seat, "amount": amount}


def decide_believe(state: GameState, peeked: Any = False, seat: Any = None) -> Event:
    """R6-R8: believe the claim received (the believer may peek, then must re-roll)."""
    if not isinstance(peeked, bool):
        raise BadRequest("'peeked' must be true or false.")
    seat = _check_turn(state, seat, PHASE_DECIDE, "believe")
    return {"type": "believed", "seat": seat, "peeked": peeked}


def decide_bluff(state: GameState, seat: Any = None) -> int:
    """R9: check that a Bluff may be called now; returns the caller's seat.

    The event itself (``bluff_event``) needs the dice, which the shell reads only
    after this check passes, so an illegal Bluff never moves the camera (R13).
    """
    return _check_turn(state, seat, PHASE_DECIDE, "call Bluff")


def bluff_event(caller: int, challenge_id: str, reading: dict[str, Any] | None, problem: str | None, has_images: bool,
                problem_codes: list[dict[str, Any]] | None = None, photo_sha256: dict[str, str] | None = None) -> Event:
    """The event of a Bluff whose reading (or lack of one) is known; ``problem_codes``: each part of ``problem`` by
    its code and params, for a page in the player's language (a log written before them has none); ``photo_sha256``:
    each saved photo's fingerprint by kind, so a photo changed or damaged since is never shown or learned from as
    this Bluff's (R15)."""
    event: Event = {"type": "bluff_called", "seat": caller, "challenge": challenge_id, "reading": reading, "problem": problem, "images": has_images,
                    "problem_codes": problem_codes or []}
    if photo_sha256:
        event["photo_sha256"] = dict(photo_sha256)
    return event


def decide_confirm(state: GameState, dice: Any, *, at: str | None = None, session: str | None = None) -> Event:
    """R14: the table types the top faces when the reading was uncertain (``at`` and the
    PIN-holder's ``session`` are kept, so the saved Bluff says who confirmed them and when)."""
    dice = _dice(dice)
    if state.phase == PHASE_OVER:
        raise NotAllowed(f"The game is over: {_name(state, state.loser)} lost.")
    if state.phase != PHASE_CONFIRM:
        raise NotAllowed(f"There are no dice to confirm now: {_waiting_for(state)}")
    event: Event = {"type": "confirmed", "challenge": state.last_challenge, "dice": dice}
    if at is not None:
        event["at"] = at
    if session is not None:
        event["session"] = str(session)[:40]
    return event


def may_read_again(state: GameState) -> None:
    """R14: the dice may be read again only while the table is asked to confirm them; ``NotAllowed`` otherwise."""
    if state.phase == PHASE_OVER:
        raise NotAllowed(f"The game is over: {_name(state, state.loser)} lost.")
    if state.phase != PHASE_CONFIRM:
        raise NotAllowed("Confirm is for checking the dice after an unclear reading; there is nothing to confirm now.")


def decide_read_again(state: GameState, reading: dict[str, Any] | None, has_images: bool, *, at: str | None = None,
                      photo_sha256: dict[str, str] | None = None) -> Event:
    """R14: a second look at the dice after an uncertain reading (the table's Confirm button, pressed once the dice
    lie flat). It decides the Bluff as a first reading would, only when sure of all three dice; an unsure second look
    is refused and the table types the dice. The second look's photo and reading become the Bluff's (R15: replayed
    from what decided it); the first look is kept beside them (``Challenge.first_look``)."""
    may_read_again(state)
    if reading is None or reading.get("status") != "ok" or len(reading.get("dice", [])) != 3:
        raise NotAllowed("The camera still cannot read all three dice clearly: lay them flat and press Confirm again, or type them on the tablet.")
    event: Event = {"type": "dice_read_again", "challenge": state.last_challenge, "reading": reading, "images": bool(has_images)}
    if at is not None:
        event["at"] = at
    if photo_sha256:
        event["photo_sha256"] = dict(photo_sha256)
    return event


def decide_correction(state: GameState, challenge_id: str, dice: Any, by: Any, at: str, *, session: str | None = None, after_game_over: Any = False) -> Event:
    """R15: re-decide one Bluff with corrected top faces; keeps who, when, old and new.

    ``by`` must name a player of this game (as entered, any case) or be
    ``"table"``: a free-text name would put anyone's name in the log. ``session``
    is the PIN-holder's session that sent it (kept with the correction). After
    the game is over (R12) a correction could reopen it or change its loser, so
    it is refused unless ``after_game_over`` is true: the page asks first.
    """
    dice = _dice(dice)
    if not isinstance(by, str) or not by.strip() or len(by) > 60:
        raise BadRequest("Say who makes the correction (a name of up to 60 characters).")
    if not isinstance(after_game_over, bool):
        raise BadRequest("'after_game_over' must be true or false.")
    who = by.strip()
    if who.casefold() != TABLE:  # no player is called so (names.player_names)
        named = [p for p in state.players if p.casefold() == who.casefold()]
        if not named:
            raise RuleRefused(f"'{who[:30]}' is not playing in this game: name one of its players, or the table.")
        who = named[0]
    else:
        who = TABLE
    challenge = state.challenges.get(challenge_id)
    if challenge is None:
        raise NotFound("There is no such Bluff in this game.")
    if not challenge.decided:
        raise NotAllowed("This Bluff's dice have not been confirmed yet: confirm them first.", code="not_confirmed")
    if state.phase == PHASE_CONFIRM:
        raise NotAllowed("Confirm the dice of the current Bluff before correcting another one.", code="confirm_first")
    if dice == challenge.dice:
        raise RuleRefused("Those are already the dice of this Bluff: nothing to correct.")
    if state.phase == PHASE_OVER and not after_game_over:
        raise NotAllowed(f"The game is over ({_name(state, state.loser)} lost): a correction may reopen it or change the loser. Confirm that the table wants this first.", code="ask_first")
    event: Event = {"type": "corrected", "challenge": challenge_id, "dice": dice, "old_dice": list(challenge.dice or []), "by": who, "at": at}
    if session is not None:
        event["session"] = str(session)[:40]
    if state.phase == PHASE_OVER:
        event["after_game_over"] = True
    return event


# --- folding events into state -----------------------------------------------------------

def fold(events: Iterable[Event]) -> GameState:
    """The state of a game is the fold of its whole log, from its first event."""
    state: GameState | None = None
    for event in events:
        state = _apply(state, event)
    if state is None:
        raise ValueError("a game's log starts with game_started")
    return state


def apply(state: GameState, event: Event) -> GameState:
    """A new state: ``state`` with one more event; ``state`` itself is not changed."""
    return _apply(_copy_for(state, event), event)


def _copy_for(state: GameState, event: Event) -> GameState:
    """A copy of ``state`` that ``event`` can change without changing ``state``, sharing the rest.

    Copying the whole state for every action would cost the game's whole history
    each time. ``_apply`` only appends to the history and the moves, replaces a
    move or the last correction rather than changing it, adds a challenge, and
    changes the one challenge the event names: those containers and that
    challenge are copied, everything else is shared.
    """
    new = copy.copy(state)
    new.players = list(state.players)
    new.history = list(state.history)
    new.moves = list(state.moves)
    new.challenges = dict(state.challenges)
    named = event.get("challenge")
    if named in state.challenges:
        new.challenges[named] = copy.deepcopy(state.challenges[named])
    return new


def _apply(state: GameState | None, event: Event) -> GameState:
    kind = event["type"]
    if kind == "game_started":
        if state is not None:
            raise ValueError("game_started must be the first event")
        state = GameState(id=event["id"], players=list(event["players"]), path_length=event["path_length"], starter=event["starter"], to_act=event["starter"], rematch_of=event.get("rematch_of"))
    elif state is None:
        raise ValueError("a game's log starts with game_started")
    elif kind == "claimed":
        state.history.append({"round": state.round, "type": "claim", "seat": event["seat"], "amount": event["amount"]})
        state.claim = (event["amount"], event["seat"])
        state.phase, state.to_act = PHASE_DECIDE, state.left_of(event["seat"])
    elif kind == "believed":
        _apply_believe(state, event)
    elif kind == "bluff_called":
        _apply_bluff(state, event)
    elif kind == "confirmed":
        challenge = state.challenges[event["challenge"]]
        challenge.confirmed = {"at": event.get("at"), "session": event.get("session"), "read": [d.get("top") for d in (challenge.reading or {}).get("dice", [])]}
        _decide(state, challenge, list(event["dice"]), "table")
    elif kind == "dice_read_again":
        challenge = state.challenges[event["challenge"]]
        challenge.first_look = {"reading": challenge.reading, "problem": challenge.problem, "problem_codes": list(challenge.problem_codes),
                                "has_images": challenge.has_images, "read_again_at": event.get("at")}
        challenge.reading, challenge.problem, challenge.problem_codes = event["reading"], None, []
        challenge.has_images = bool(event["images"])
        challenge.photo_sha256 = dict(event.get("photo_sha256") or {})
        _decide(state, challenge, [d["top"] for d in event["reading"]["dice"]], "camera")
    elif kind == "corrected":
        _apply_correction(state, event)
    else:
        raise ValueError(f"unknown event type {kind!r}")
    state.events += 1
    return state


def _apply_believe(state: GameState, event: Event) -> None:
    seat = event["seat"]
    state.peeked = event["peeked"]
    assert state.claim is not None
    # The history holds what the table said and did, never a die (R13).
    state.history.append({"round": state.round, "type": "believe", "seat": seat, "amount": state.claim[0], "peeked": bool(event["peeked"])})
    if state.claim[0] == MAX_CLAIM:
        # R8: believing 18 costs the believer one step; they start the next round (R11).
        _move(state, Move(seat, 1, "R8"))
    else:
        # R7: the believer now passes a higher claim to the left.
        state.phase, state.to_act = PHASE_CLAIM, seat


def _apply_bluff(state: GameState, event: Event) -> None:
    assert state.claim is not None
    amount, claimer = state.claim
    challenge = Challenge(
        id=event["challenge"],
        round=state.round,
        claim=amount,
        claimer=claimer,
        caller=event["seat"],
        reading=event["reading"],
        problem=event["problem"],
        problem_codes=list(event.get("problem_codes") or []),
        has_images=event["images"],
        photo_sha256=dict(event.get("photo_sha256") or {}),
    )
    state.challenges[challenge.id] = challenge
    state.last_challenge = challenge.id
    state.history.append({"round": state.round, "type": "bluff", "seat": event["seat"], "amount": amount, "challenge": challenge.id})
    reading = event["reading"]
    if reading is not None and reading.get("status") == "ok" and len(reading.get("dice", [])) == 3:
        _decide(state, challenge, [d["top"] for d in reading["dice"]], "camera")
    else:
        # R14: no guessing; the table confirms the dice before anyone moves.
        state.phase, state.to_act = PHASE_CONFIRM, None


def _decide(state: GameState, challenge: Challenge, dice: list[int], source: str) -> None:
    challenge.dice, challenge.source = dice, source
    verdict = bluff_verdict(challenge.claim, sum(dice))
    challenge.mover = challenge.claimer if verdict.mover == "claimer" else challenge.caller
    challenge.steps, challenge.rule = verdict.steps, verdict.rule
    _move(state, Move(challenge.mover, verdict.steps, verdict.rule, challenge.id))


def _move(state: GameState, move: Move) -> None:
    """A step is taken; the game ends on the red square (R12), else the mover starts (R11)."""
    state.moves.append(move)
    state.claim, state.peeked = None, False
    if state.first_to_finish() is not None:
        state.loser = state.first_to_finish()
        state.phase, state.to_act = PHASE_OVER, None
    else:
        state.round += 1
        state.phase, state.to_act, state.starter = PHASE_CLAIM, move.seat, move.seat


def _resume(state: GameState) -> None:
    """Play goes on after a correction took back the game's end (R15). A round a correction cut short goes on as it
    was, its claim and whose turn; one not begun yet, and a round after a game that ended in play, is started by
    whoever moved last (R11), which the correction may have changed."""
    cut_short, state.interrupted = state.interrupted, None
    if cut_short is not None and cut_short["claim"] is not None:
        state.round, state.phase, state.to_act = cut_short["round"], cut_short["phase"], cut_short["to_act"]
        state.starter, state.claim, state.peeked = cut_short["starter"], cut_short["claim"], cut_short["peeked"]
        return
    state.round = cut_short["round"] if cut_short is not None else state.round + 1
    last_mover = state.moves[-1].seat
    state.phase, state.to_act, state.starter, state.claim, state.peeked = PHASE_CLAIM, last_mover, last_mover, None, False


def _apply_correction(state: GameState, event: Event) -> None:
    """R15: the corrected Bluff's move is re-decided; positions follow from all moves.

    Rounds played since stay as they were played. Only when nothing has happened
    since that Bluff (no claim yet in the round it started) does its new mover
    start that round; if the correction puts an elephant on the red square the
    game ends, and if it takes back the move that ended the game, play resumes:
    the round a correction cut short goes on where it was (its claim, whose
    turn), and after a game that ended in play whoever moved last starts (R11).
    """
    challenge = state.challenges[event["challenge"]]
    record = {"by": event["by"], "at": event["at"], "old": list(event["old_dice"]), "new": list(event["dice"])}
    if "session" in event:
        record["session"] = event["session"]
    if event.get("after_game_over"):
        record["after_game_over"] = True
    challenge.corrections.append(record)
    challenge.dice, challenge.source = list(event["dice"]), "correction"
    verdict = bluff_verdict(challenge.claim, sum(challenge.dice))
    challenge.mover = challenge.claimer if verdict.mover == "claimer" else challenge.caller
    challenge.steps, challenge.rule = verdict.steps, verdict.rule
    index = next(i for i, m in enumerate(state.moves) if m.challenge == challenge.id)
    state.moves[index] = Move(challenge.mover, challenge.steps, challenge.rule, challenge.id)
    is_last_move = index == len(state.moves) - 1
    was_over = state.phase == PHASE_OVER
    state.loser = state.first_to_finish()
    if state.loser is not None:
        if not was_over:  # the round in play is cut short: kept, should a later correction take this one back
            state.interrupted = {"round": state.round, "phase": state.phase, "to_act": state.to_act,
                                 "starter": state.starter, "claim": state.claim, "peeked": state.peeked}
        state.phase, state.to_act, state.claim = PHASE_OVER, None, None
    elif was_over:
        _resume(state)
    elif is_last_move and state.phase == PHASE_CLAIM and state.claim is None:
        state.to_act = state.starter = challenge.mover
    state.last_correction = {"challenge": challenge.id, "by": event["by"], "at": event["at"], "after_game_over": bool(event.get("after_game_over")), "reopened": was_over and state.phase != PHASE_OVER, "event": state.events + 1}
