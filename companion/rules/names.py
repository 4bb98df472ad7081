"""Players' names: one way to write each, nothing hidden, no two that look alike (R1).

A name is shown on every screen and used to say whose turn it is, so a
name must read as what it is. A name is normalised with NFKC (full-width
"Ａｎｎ" is "Ann"); invisible and control characters are refused (a
zero-width space makes "Ann" and "An\u200bn" two players who look the
same); a word may not mix look-alike alphabets ("Аnn" with a Cyrillic А);
and no two players' names may look alike once the letters that look the
same in Latin, Cyrillic and Greek are read as one ("Ann" and "Аnn"). Any
emoji is welcome, joined ones too (a family 👩‍👩‍👧 is held together
by zero-width joiners, allowed between two emoji only).

>>> player_names(["Ａｎｎ", "Ben", "👩\u200d👩\u200d👧"])
['Ann', 'Ben', '👩\u200d👩\u200d👧']
>>> player_names(["Ann", "\u0410nn"])
Traceback (most recent call last):
...
companion.core.errors.RuleRefused: The name 'Аnn' mixes letters of different alphabets (Cyrillic and Latin) that look alike: write it in one alphabet.
"""

from __future__ import annotations

import unicodedata
from typing import Any

from companion.core.errors import BadRequest, RuleRefused

MAX_NAME = 30
#: who confirms or corrects a Bluff when no player is named (R14, R15): no player may be called so
TABLE = "table"

ZWJ = "\u200d"
#: letters shaped like nothing: accepted as "letters" by Unicode, invisible on a screen
_BLANK_LETTERS = {"\u115f", "\u1160", "\u3164", "\uffa0", "\u2800", "\u180e", "\u034f"}
#: the alphabets whose letters are mistaken for each other
_LOOKALIKE_SCRIPTS = ("LATIN", "CYRILLIC", "GREEK", "ARMENIAN", "CHEROKEE", "COPTIC")
#: letters of other alphabets (and digits) read as the Latin letter they look like
_SKELETON = str.maketrans(
    {
        # Cyrillic
        "а": "a", "в": "b", "е": "e", "ё": "e", "з": "3", "к": "k", "м": "m", "н": "h", "о": "o", "р": "p",
        "с": "c", "т": "t", "у": "y", "х": "x", "ѕ": "s", "і": "i", "ї": "i", "ј": "j", "һ": "h", "ԁ": "d",
        "ԛ": "q", "ԝ": "w", "ү": "y", "ӏ": "l", "ь": "b", "п": "n", "г": "r",
        # Greek
        "α": "a", "β": "b", "γ": "y", "ε": "e", "η": "n", "ι": "i", "κ": "k", "μ": "u", "ν": "v", "ο": "o",
        "ρ": "p", "τ": "t", "υ": "u", "χ": "x", "ω": "w", "ϲ": "c", "ϳ": "j", "ζ": "z",
        # Armenian
        "օ": "o", "ս": "u", "ց": "g", "հ": "h", "ո": "n",
        # digits and Latin shapes that pass for letters
        "0": "o", "1": "l", "5": "s", "ı": "i", "ɡ": "g", "ℓ": "l",
    }
)


def _is_emoji(ch: str) -> bool:
    return unicodedata.category(ch) in ("So", "Sk") or 0x1F000 <= ord(ch) <= 0x1FAFF


def _check_characters(name: str) -> None:
    previous = ""
    for i, ch in enumerate(name):
        category = unicodedata.category(ch)
        following = name[i + 1] if i + 1 < len(name) else ""
        if ch == ZWJ:
            if not (_is_emoji(previous) or previous in ("\ufe0f",)) or not _is_emoji(following):
                raise RuleRefused(f"The name {name!r} holds an invisible character (a joiner outside an emoji): type it again without it.")
        elif "\ufe00" <= ch <= "\ufe0f" or 0xE0100 <= ord(ch) <= 0xE01EF:
            if not _is_emoji(previous) and not previous.isdigit() and previous not in "#*":
                raise RuleRefused(f"The name {name!r} holds an invisible character: type it again without it.")
        elif 0xE0020 <= ord(ch) <= 0xE007F:  # the tags of a flag like 🏴󠁧󠁢󠁳󠁣󠁴󠁿
            if "\U0001f3f4" not in name[:i]:
                raise RuleRefused(f"The name {name!r} holds an invisible character: type it again without it.")
        elif category in ("Cc", "Zl", "Zp"):
            raise RuleRefused("A name cannot contain control characters or line breaks.")
        elif category in ("Cf", "Cn", "Co", "Cs") or ch in _BLANK_LETTERS:
            raise RuleRefused(f"The name {name!r} holds an invisible or unknown character (such as a zero-width space): type it again without it.")
        elif category == "Zs" and ch != " ":
            raise RuleRefused(f"The name {name!r} holds an unusual space: use an ordinary space.")
        previous = ch
    if not any(unicodedata.category(ch)[0] in "LNS" for ch in name):
        raise RuleRefused("Every player needs a name with a letter, a digit or an emoji in it.")


def _scripts(word: str) -> set[str]:
    found = set()
    for ch in word:
        if unicodedata.category(ch).startswith("L"):
            script = unicodedata.name(ch, "").split(" ", 1)[0]
            if script in _LOOKALIKE_SCRIPTS:
                found.add(script)
    return found


def skeleton(name: str) -> str:
    """What a name looks like: case, accents and look-alike letters of other alphabets folded away.

    >>> skeleton("Ann") == skeleton("\u0410nn") == skeleton("ANN") == skeleton("Ánn")
    True
    """
    text = "".join(c for c in unicodedata.normalize("NFKD", name) if not unicodedata.combining(c))
    text = text.replace("I", "l").casefold().translate(_SKELETON)
    return text.replace("rn", "m").replace("vv", "w").replace(" ", "")


def player_names(players: Any) -> list[str]:
    """The players' names as they will be kept, or a ``RuleRefused`` that says which name and why."""
    if not isinstance(players, list) or not all(isinstance(p, str) for p in players):
        raise BadRequest("Give the players as a list of names in seating order.")
    names = [" ".join(unicodedata.normalize("NFKC", p).split(" ")).strip() for p in players]
    for name in names:
        if not name:
            raise RuleRefused("Every player needs a name.")
        if len(name) > MAX_NAME:
            raise RuleRefused(f"A name can be at most {MAX_NAME} characters: '{name[:12]}…' is too long.")
        _check_characters(name)
        for word in name.split():
            scripts = _scripts(word)
            if len(scripts) > 1:
                both = " and ".join(sorted(s.capitalize() for s in scripts))
                raise RuleRefused(f"The name {name!r} mixes letters of different alphabets ({both}) that look alike: write it in one alphabet.")
        if name.casefold() == TABLE:
            raise RuleRefused(f"{name!r} is the name the companion keeps for the table itself (who confirms and corrects a Bluff): give this player another name.")
    if len({n.casefold() for n in names}) != len(names):
        raise RuleRefused("Two players have the same name: give each player a different one.")
    seen: dict[str, str] = {}
    for name in names:
        shape = skeleton(name)
        if shape in seen:
            raise RuleRefused(f"The names {seen[shape]!r} and {name!r} look alike on the screen: give one of them another name.")
        seen[shape] = name
    return names
