"""The page's nine languages: JSON files under ``translations/``, one per language.

English is the reference: every other file has exactly its keys, and each text
keeps the same ``{placeholders}`` (a test checks both). The language of a page
is, in order: ``?lang=``, the ``eb_lang`` cookie the language switch sets, the
browser's ``Accept-Language``, then English.
"""

from __future__ import annotations

import functools
import json
import re
from importlib import resources
from typing import Any

from flask import Request

#: code -> the language's own name, in the rulebook's order
LANGUAGES: dict[str, str] = {
    "en": "English",
    "fr": "Français",
    "nl": "Nederlands",
    "de": "Deutsch",
    "it": "Italiano",
    "es": "Español",
    "pl": "Polski",
    "ro": "Română",
    "da": "Dansk",
}
DEFAULT = "en"
COOKIE = "eb_lang"
PLACEHOLDER = re.compile(r"\{([a-z_]+)\}")


@functools.cache
def strings(lang: str) -> dict[str, str]:
    """All texts of one language (read once; the files ship as package data)."""
    if lang not in LANGUAGES:
        raise KeyError(lang)
    text = resources.files("companion.app.web").joinpath("translations", f"{lang}.json").read_text(encoding="utf-8")
    data: dict[str, Any] = json.loads(text)
    return {k: v for k, v in data.items() if not k.startswith("_")}


def pick_language(request: Request) -> str:
    """The language this request is served in (see the module's docstring)."""
    asked = request.args.get("lang")
    if asked in LANGUAGES:
        return asked
    remembered = request.cookies.get(COOKIE)
    if remembered in LANGUAGES:
        return remembered
    best = request.accept_languages.best_match(list(LANGUAGES))
    if best:
        return best
    # "fr-BE" matches "fr" in best_match already; this catches "de_DE"-style values.
    for value, _quality in request.accept_languages:
        base = value.replace("_", "-").split("-")[0].lower()
        if base in LANGUAGES:
            return base
    return DEFAULT


def translate(lang: str, key: str, **params: Any) -> str:
    """One text with its ``{placeholders}`` filled; a missing key shows as the key."""
    text = strings(lang).get(key)
    if text is None:
        text = strings(DEFAULT).get(key, key)
    return PLACEHOLDER.sub(lambda m: str(params.get(m.group(1), m.group(0))), text)
