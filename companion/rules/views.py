"""The public JSON views of a game and of a Bluff (``shared/API.md``).

These are everything a page or viewer may see. They hold no die of a round
before its Bluff (RULES.md R13): the state never knows those dice.
"""

from __future__ import annotations

from typing import Any

from companion.rules.state import PHASE_DECIDE, Challenge, GameState


def public_state(state: GameState) -> dict[str, Any]:
    positions = state.positions()
    last_move = state.moves[-1] if state.moves else None
    return {
        "id": state.id,
        "players": [{"seat": i, "name": n, "position": positions[i]} for i, n in enumerate(state.players)],
        "path_length": state.path_length,
        "round": state.round,
        "phase": state.phase,
        "to_act": state.to_act,
        "starter": state.starter,
        "claim": {"amount": state.claim[0], "by": state.claim[1]} if state.claim else None,
        "min_claim": state.min_claim,
        "eighteen": state.phase == PHASE_DECIDE and state.claim is not None and state.claim[0] == 18,
        "peeked": state.peeked,
        "last_challenge": state.last_challenge,
        "last_move": {"seat": last_move.seat, "steps": last_move.steps, "rule": last_move.rule, "challenge": last_move.challenge} if last_move else None,
        "loser": state.loser,
        "events": state.events,
        # This round's and the last round's claims, believes, peeks and Bluffs (never a die, R13).
        "history": [h for h in state.history if h["round"] >= state.round - 1],
        "rematch_of": state.rematch_of,
        "last_correction": state.last_correction,
    }


def challenge_view(state: GameState, challenge: Challenge) -> dict[str, Any]:
    return {
        "id": challenge.id,
        "game": state.id,
        "round": challenge.round,
        "claim": challenge.claim,
        "claimer": challenge.claimer,
        "caller": challenge.caller,
        "reading": challenge.reading,
        "problem": challenge.problem,
        "problem_codes": list(challenge.problem_codes),
        "status": "decided" if challenge.decided else "awaiting_confirm",
        "dice": challenge.dice,
        "source": challenge.source,
        "total": challenge.total,
        "verdict": (
            {"mover": challenge.mover, "steps": challenge.steps, "rule": challenge.rule, "claim_held": challenge.total is not None and challenge.total >= challenge.claim}
            if challenge.decided
            else None
        ),
        "has_images": challenge.has_images,
        "corrections": list(challenge.corrections),
        "confirmed": challenge.confirmed,
        "first_look": challenge.first_look,
    }
