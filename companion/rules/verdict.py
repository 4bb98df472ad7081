"""Who moves after a Bluff, and by how much (RULES.md R9, R10)."""

from __future__ import annotations

from typing import NamedTuple

MAX_CLAIM = 18


class Verdict(NamedTuple):
    """``mover`` is "claimer" or "caller"; ``rule`` is the rule that decided it."""

    mover: str
    steps: int
    rule: str


def bluff_verdict(claim: int, total: int) -> Verdict:
    """Decide a Bluff on ``claim`` given ``total``, the sum of the three top faces.

    >>> bluff_verdict(11, 10)
    Verdict(mover='claimer', steps=1, rule='R9')
    >>> bluff_verdict(18, 18)
    Verdict(mover='caller', steps=2, rule='R10')
    """
    if claim == MAX_CLAIM:
        # R10: a Bluff on 18 costs two steps, to whoever was wrong.
        return Verdict("caller", 2, "R10") if total == MAX_CLAIM else Verdict("claimer", 2, "R10")
    # R9: "at least C" is true when S >= C; then the caller was wrong.
    return Verdict("claimer", 1, "R9") if total < claim else Verdict("caller", 1, "R9")
