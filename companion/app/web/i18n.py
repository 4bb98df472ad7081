"""The page's nine languages: gettext catalogs read through Babel and Flask-Babel.

``translations/<lang>/LC_MESSAGES/messages.po`` holds one language, with the
plural rules of the CLDR (the ``Plural-Forms`` header Babel writes for that
locale: Polish has three forms, "3 słonie" and "5 słoni"; Romanian three,
"19 elefanți" and "20 de elefanți"). The message ids are symbolic keys
(``whose_turn``, ``die_shows``), the same in the templates (``t("key")``), in
the page's scripts (``EB.t("key")``, ``EB.tn("key", "key_plural", n)``) and in
``translations/messages.pot``, which ``make translations`` extracts with
``pybabel extract`` (``babel.cfg``), merges with ``pybabel update`` and compiles
with ``pybabel compile``. The compiled ``.mo`` files ship with the package; a
``.po`` newer than its ``.mo`` is compiled again when the app starts.

Texts keep ``{placeholders}`` (filled here and by the page), never gettext's
``%(name)s``. The language of a page is, in order: ``?lang=``, the ``eb_lang``
cookie the language switch sets, the browser's ``Accept-Language``, then
English (``pick_language``, which is also Flask-Babel's locale selector).

What the server says in words (a reading's reasons, the check before a game's
findings, ``/api/health``'s problems, why a Bluff had no reading) is English in
the API, each with a code and the names and numbers in it; the page words it in
its language from the code (``dice.js``'s reason texts, ``common.js``'s
``findingText`` and ``captureProblemText``) and shows the English only for a
code it has no words for. Tests hold every code the server makes to words in
all nine catalogs.
"""

from __future__ import annotations

import functools
import io
import os
import re
from pathlib import Path
from typing import Any

from babel.messages.catalog import Catalog
from babel.messages.mofile import write_mo
from babel.messages.pofile import read_po
from babel.support import Translations
from flask import Flask, Request, has_request_context, request

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
DIRECTORY = Path(__file__).resolve().parent / "translations"
DOMAIN = "messages"
#: how many numbers the page's plural table covers; past it the last two digits decide
#: (every rule of the nine languages looks at n, n % 10 and n % 100 only)
PLURAL_TABLE = 200


def N_(key: str) -> str:
    """Marks a key that the code picks at run time, so ``pybabel extract`` keeps it."""
    return key


#: keys chosen at run time (by code, reason or rule), listed so extraction finds them
DYNAMIC_KEYS = [
    N_("reason_count"), N_("reason_cut_off"), N_("reason_leaning"), N_("reason_low_confidence"), N_("reason_dark"), N_("reason_blank"), N_("reason_size"), N_("reason_marks"), N_("reason_second_look"), N_("reason_second_opinion"), N_("reason_unlike"), N_("reason_calibration"),
    N_("live_on"), N_("live_reconnecting"), N_("moves_one"), N_("moves_two"), N_("reading_ok"), N_("reading_unsure"),
    N_("setup_err_ages"), N_("setup_err_count"), N_("setup_err_names"), N_("cam_board_note"), N_("setup_err_table_name"), N_("setup_err_path"), N_("bluffs_none"), N_("bluffs_none_disputed"),
    N_("confirm_title"), N_("confirm_title_typed"), N_("correct_done"), N_("correct_done_reopened"), N_("hist_believe"), N_("hist_believe_peeked"),
    N_("sound"), N_("sound_on"), N_("verdict_continue"), N_("verdict_see_result"),
    N_("rules_h_goal"), N_("rules_goal"), N_("rules_h_setup"), N_("rules_r1"), N_("rules_r2"), N_("rules_r3"),
    N_("rules_h_round"), N_("rules_r4"), N_("rules_r5"), N_("rules_h_believe"), N_("rules_r6"), N_("rules_r7"), N_("rules_r8"),
    N_("rules_h_bluff"), N_("rules_r9"), N_("rules_r10"), N_("rules_h_after"), N_("rules_r11"), N_("rules_r12"),
    N_("rules_h_referee"), N_("rules_r13"), N_("rules_r14"), N_("rules_r15"),
]


def _paths(lang: str) -> tuple[Path, Path]:
    folder = DIRECTORY / lang / "LC_MESSAGES"
    return folder / f"{DOMAIN}.po", folder / f"{DOMAIN}.mo"


def read_catalog(lang: str) -> Catalog:
    """One language's ``.po`` as Babel reads it (for the tests and the compiler)."""
    po, _ = _paths(lang)
    with open(po, "rb") as f:
        return read_po(f, locale=lang, domain=DOMAIN)


def compile_stale() -> list[str]:
    """Compile each ``.po`` newer than its ``.mo`` (a checkout where a catalog was edited).

    A read-only install keeps the shipped ``.mo`` files. Returns the languages compiled. Each ``.mo`` is replaced
    whole (written beside it, then renamed over it): the server and a command started together both compile a
    fresh checkout's catalogs, and one reading a ``.mo`` the other had emptied to rewrite, or one stopped halfway,
    would leave a page that cannot load its language.
    """
    done = []
    for lang in LANGUAGES:
        po, mo = _paths(lang)
        if not po.is_file() or (mo.is_file() and mo.stat().st_mtime >= po.stat().st_mtime):
            continue
        if _replace_whole(mo, lang):
            done.append(lang)
    if done:
        catalog.cache_clear()
        strings.cache_clear()
    return done


def _replace_whole(mo: Path, lang: str) -> bool:
    """``lang``'s catalog compiled into ``mo`` at one rename, or False (and ``mo`` as it was) where it cannot be
    written (a read-only install)."""
    compiled = io.BytesIO()
    write_mo(compiled, read_catalog(lang))
    partial = mo.with_name(f"{mo.name}.{os.getpid()}.partial")
    try:
        partial.write_bytes(compiled.getvalue())
        os.replace(partial, mo)
    except OSError:
        partial.unlink(missing_ok=True)
        return False
    return True


@functools.cache
def catalog(lang: str) -> Translations:
    """One language's compiled catalog (``KeyError`` for a language the page does not speak)."""
    if lang not in LANGUAGES:
        raise KeyError(lang)
    translations = Translations.load(str(DIRECTORY), [lang], domain=DOMAIN)
    if not isinstance(translations, Translations):  # no .mo: compile the .po in memory
        buffer = io.BytesIO()
        write_mo(buffer, read_catalog(lang))
        buffer.seek(0)
        translations = Translations(buffer, domain=DOMAIN)
    return translations


@functools.cache
def message_ids() -> tuple[list[str], dict[str, str]]:
    """The English catalog's ids: the plain ones, and the plural ones with their plural id."""
    plain, plural = [], {}
    for message in read_catalog(DEFAULT):
        if not message.id:
            continue
        if isinstance(message.id, tuple):
            plural[message.id[0]] = message.id[1]
        else:
            plain.append(message.id)
    return plain, plural


def plural_index(lang: str, n: int) -> int:
    """Which of the catalog's plural forms ``n`` takes in ``lang`` (its CLDR rule)."""
    return int(catalog(lang).plural(n))


@functools.cache
def strings(lang: str) -> dict[str, Any]:
    """Every text of one language for the page's scripts: plain texts as strings, plural
    texts as the list of their forms, and ``__plural_index__``: the form for 0..199."""
    cat = catalog(lang)
    plain, plural = message_ids()
    out: dict[str, Any] = {key: cat.gettext(key) for key in plain}
    count = _plural_count(lang)
    examples = {}
    for n in range(PLURAL_TABLE):
        examples.setdefault(plural_index(lang, n), n)
    for key, key_plural in plural.items():
        out[key] = [cat.ngettext(key, key_plural, examples.get(i, 0)) for i in range(count)]
    out["__plural_index__"] = [plural_index(lang, n) for n in range(PLURAL_TABLE)]
    return out


def _plural_count(lang: str) -> int:
    return read_catalog(lang).num_plurals


def pick_language(req: Request | None = None) -> str:
    """The language this request is served in (see the module's docstring)."""
    req = req if req is not None else request
    asked = req.args.get("lang")
    if asked in LANGUAGES:
        return asked
    remembered = req.cookies.get(COOKIE)
    if remembered in LANGUAGES:
        return remembered
    best = req.accept_languages.best_match(list(LANGUAGES))
    if best:
        return best
    # "fr-BE" matches "fr" in best_match already; this catches "de_DE"-style values.
    for value, _quality in req.accept_languages:
        base = value.replace("_", "-").split("-")[0].lower()
        if base in LANGUAGES:
            return base
    return DEFAULT


def fill(text: str, params: dict[str, Any]) -> str:
    return PLACEHOLDER.sub(lambda m: str(params.get(m.group(1), m.group(0))), text)


def translate(lang: str, key: str, **params: Any) -> str:
    """One text with its ``{placeholders}`` filled; a missing key shows as the key."""
    return fill(catalog(lang).gettext(key), params)


def translate_plural(lang: str, key: str, key_plural: str, count: int, **params: Any) -> str:
    """A text that depends on ``count``, in the plural form ``lang`` gives it (``{n}`` is ``count``
    unless ``params`` name it)."""
    return fill(catalog(lang).ngettext(key, key_plural, count), {"n": count, **params})


def init_app(app: Flask) -> None:
    """Flask-Babel on the app, choosing the locale as the page does; stale catalogs compiled."""
    from flask_babel import Babel

    compile_stale()
    app.config.setdefault("BABEL_TRANSLATION_DIRECTORIES", str(DIRECTORY))
    app.config.setdefault("BABEL_DEFAULT_LOCALE", DEFAULT)
    Babel(app, locale_selector=lambda: pick_language() if has_request_context() else DEFAULT)
