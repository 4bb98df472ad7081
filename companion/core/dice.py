"""The dice themselves: which faces exist, and which face is opposite which.

The camera under the tray sees a die's bottom face; the game counts its top
face, the opposite one (RULES.md R1). Every place that checks a face value or
turns a seen face into a counted one uses this module, so the whole project
agrees on both.
"""

from __future__ import annotations

from typing import Any, Sequence

#: the faces of a die, 1 to 6 elephants
FACES = (1, 2, 3, 4, 5, 6)

#: the face opposite each face 1..6 on a standard die (opposite faces add up to 7)
STANDARD_OPPOSITE = (6, 5, 4, 3, 2, 1)


def is_face(value: Any) -> bool:
    """A whole number from 1 to 6 (``True`` and ``False`` are not faces).

    >>> [is_face(v) for v in (1, 6, 0, 7, 2.0, True)]
    [True, True, False, False, False, False]
    """
    return isinstance(value, int) and not isinstance(value, bool) and value in FACES


def opposite_map_problem(opposite: Sequence[Any]) -> str | None:
    """Why a list of opposite faces is not a die, in words for a settings error; None when it is one.

    >>> opposite_map_problem([6, 5, 4, 3, 2, 1]) is None
    True
    >>> opposite_map_problem([2, 1, 4, 3, 6, 5]) is None
    True
    >>> opposite_map_problem([1, 2, 3, 4, 5, 6])
    'cannot make a face its own opposite'
    """
    if len(opposite) != 6 or sorted(opposite) != list(FACES) or not all(is_face(v) for v in opposite):
        return "must list the faces 1 to 6 once each, e.g. [6, 5, 4, 3, 2, 1]"
    if any(opposite[opposite[i] - 1] != i + 1 for i in range(6)):
        return "must pair faces both ways (if 1 is opposite 6, 6 is opposite 1)"
    if any(opposite[i] == i + 1 for i in range(6)):
        return "cannot make a face its own opposite"
    return None


def opposite_face(face: int, opposite: Sequence[int] = STANDARD_OPPOSITE) -> int:
    """The face on the other side of the die: the top face when ``face`` is seen from below.

    >>> opposite_face(1), opposite_face(6), opposite_face(1, [2, 1, 4, 3, 6, 5])
    (6, 1, 2)
    """
    return opposite[face - 1]
