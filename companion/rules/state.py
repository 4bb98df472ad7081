"""The state of one game, as folded from its event log (never stored itself)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

PHASE_CLAIM = "claim"  # to_act must pass a claim (R4, R7)
PHASE_DECIDE = "decide"  # to_act received a claim: Believe or Bluff (R5)
PHASE_CONFIRM = "confirm"  # a Bluff's reading was uncertain: the table types the dice (R14)
PHASE_OVER = "over"  # an elephant reached the red square (R12)


@dataclass
class Move:
    """One elephant move: ``steps`` squares forward for ``seat``, decided by ``rule``.

    ``challenge`` names the Bluff that caused it (None for believing an 18, R8).
    A correction (R15) rewrites ``seat``/``steps`` of its challenge's move and the
    positions are recomputed from all moves.
    """

    seat: int
    steps: int
    rule: str
    challenge: str | None = None


#: what a Bluff's id is followed by in the name of the photo of a second look that decided it (``Challenge.photo``)
SECOND_LOOK = "-look2"


@dataclass
class Challenge:
    """One Bluff: what was claimed, what was read, and what the referee decided."""

    id: str
    round: int
    claim: int
    claimer: int
    caller: int
    reading: dict[str, Any] | None  # the reader's Reading.to_json(), None if the camera gave none
    problem: str | None  # why there was no usable reading, in words
    has_images: bool
    dice: list[int] | None = None  # the top faces the verdict uses (reading, confirmation or correction)
    source: str | None = None  # "camera", "table" (confirmed by hand) or "correction"
    mover: int | None = None
    steps: int | None = None
    rule: str | None = None
    corrections: list[dict[str, Any]] = field(default_factory=list)
    confirmed: dict[str, Any] | None = None  # when the table typed the dice (R14): at, session, what was read
    problem_codes: list[dict[str, Any]] = field(default_factory=list)  # each part of ``problem``: its code and params
    #: the uncertain first look (its reading, problem, whether its photo was saved, when the dice were read again)
    #: where a second look decided the Bluff (R14, the table's Confirm button); None where the first look is the Bluff's
    first_look: dict[str, Any] | None = None
    #: the saved photos' SHA-256 by kind ("frame", "annotated"), as logged with them; empty in a log from before
    photo_sha256: dict[str, str] = field(default_factory=dict)

    @property
    def photo(self) -> str:
        """The name the Bluff's saved photo goes by: its id, or for a second look that decided it, ``<id>-look2``."""
        return self.id if self.first_look is None else self.id + SECOND_LOOK

    @property
    def decided(self) -> bool:
        return self.dice is not None

    @property
    def total(self) -> int | None:
        return sum(self.dice) if self.dice is not None else None


@dataclass
class GameState:
    """Everything the referee knows about a game; ``positions`` derive from ``moves``."""

    id: str
    players: list[str]
    path_length: int
    starter: int  # who started the current round
    round: int = 1
    phase: str = PHASE_CLAIM
    to_act: int | None = None
    claim: tuple[int, int] | None = None  # (amount, by seat)
    peeked: bool = False  # the last believer said they peeked (R6)
    last_challenge: str | None = None
    loser: int | None = None
    moves: list[Move] = field(default_factory=list)
    challenges: dict[str, Challenge] = field(default_factory=dict)
    events: int = 0
    #: what the table said and did, in order: claims, believes (and peeks), Bluffs; never a die (R13)
    history: list[dict[str, Any]] = field(default_factory=list)
    rematch_of: str | None = None  # the game this one follows at the same table
    last_correction: dict[str, Any] | None = None  # the latest correction (R15), announced to every viewer
    #: the round in play when a correction ended the game (R15): where play goes on if a later correction takes it back
    interrupted: dict[str, Any] | None = None

    @property
    def seats(self) -> int:
        return len(self.players)

    def left_of(self, seat: int) -> int:
        """R1: the player to the left is the next seat, wrapping around."""
        return (seat + 1) % self.seats

    @property
    def min_claim(self) -> int | None:
        """What the next claim must reach: 3 at a round's start, else one more (R4, R7).

        None when the claim on the table is 18, which cannot be raised (R8).
        """
        if self.claim is None:
            return 3
        return self.claim[0] + 1 if self.claim[0] < 18 else None

    def positions(self) -> list[int]:
        """Each elephant's square: the moves in order, none past the red square (R12)."""
        return _replay(self.moves, self.seats, self.path_length)[0]

    def first_to_finish(self) -> int | None:
        return _replay(self.moves, self.seats, self.path_length)[1]


def _replay(moves: list[Move], seats: int, path_length: int) -> tuple[list[int], int | None]:
    positions = [0] * seats
    loser = None
    for m in moves:
        positions[m.seat] = min(path_length, positions[m.seat] + m.steps)
        if loser is None and positions[m.seat] >= path_length:
            loser = m.seat
    return positions, loser
