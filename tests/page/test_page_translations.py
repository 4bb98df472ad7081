"""The nine languages as gettext catalogs (Babel, CLDR plural rules): every catalog has
exactly the template's messages, each translated, with English's {placeholders}; each
language's plural forms are the ones its rules need; and the compiled catalogs that
ship are the catalogs' own."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from babel.messages.mofile import read_mo
from babel.messages.pofile import read_po

from companion.app.web import i18n

POT = i18n.DIRECTORY / "messages.pot"
ROOT = Path(__file__).resolve().parents[2]


def _ids(catalog) -> set:
    return {m.id for m in catalog if m.id}


def _texts(message) -> list[str]:
    return list(message.string) if isinstance(message.string, (tuple, list)) else [message.string]


ENGLISH = {m.id: m for m in i18n.read_catalog("en") if m.id}
OTHERS = [code for code in i18n.LANGUAGES if code != "en"]


def test_the_nine_languages_of_the_rulebook_each_have_a_catalog() -> None:
    assert list(i18n.LANGUAGES) == ["en", "fr", "nl", "de", "it", "es", "pl", "ro", "da"]
    found = {p.parent.parent.name for p in i18n.DIRECTORY.glob("*/LC_MESSAGES/messages.po")}
    assert found == set(i18n.LANGUAGES)
    assert not list(i18n.DIRECTORY.glob("*.json")), "the hand-written JSON dictionaries are gone"


def test_the_template_holds_every_key_the_code_uses(tmp_path: Path) -> None:
    """``pybabel extract`` (as ``make translations`` runs it) finds exactly the template's messages:
    no text is used that the catalogs lack, and none is kept that nothing uses."""
    out = tmp_path / "messages.pot"
    subprocess.run([str(Path(sys.executable).parent / "pybabel"), "extract", "-F", "companion/app/web/babel.cfg", "-k", "t", "-k", "tn:1,2", "-k", "N_",
                    "--no-default-keywords", "-o", str(out), "companion/app/web"], cwd=ROOT, check=True, capture_output=True)
    with open(out, "rb") as f:
        extracted = _ids(read_po(f))
    with open(POT, "rb") as f:
        shipped = _ids(read_po(f))
    assert extracted == shipped, (sorted(map(str, extracted - shipped)), sorted(map(str, shipped - extracted)))


@pytest.mark.parametrize("lang", list(i18n.LANGUAGES))
def test_every_catalog_has_every_message_of_the_template_translated(lang: str) -> None:
    with open(POT, "rb") as f:
        template = _ids(read_po(f))
    catalog = i18n.read_catalog(lang)
    assert _ids(catalog) == template
    for message in catalog:
        if message.id:
            assert all(text.strip() for text in _texts(message)), f"{lang}:{message.id} is not translated"
            assert not message.fuzzy, f"{lang}:{message.id} is fuzzy"


@pytest.mark.parametrize("lang", list(i18n.LANGUAGES))
def test_texts_keep_the_placeholders_of_english(lang: str) -> None:
    for message in i18n.read_catalog(lang):
        if not message.id:
            continue
        want = set(i18n.PLACEHOLDER.findall(" ".join(_texts(ENGLISH[message.id]))))
        for index, text in enumerate(_texts(message)):
            got = set(i18n.PLACEHOLDER.findall(text))
            # A singular may say the number in words ("o dată"); no form may add a placeholder.
            allowed_missing = {"n"} if isinstance(message.id, tuple) and index == 0 else set()
            assert want - allowed_missing <= got <= want, f"{lang}:{message.id}[{index}] has {sorted(got)}, English has {sorted(want)}"


@pytest.mark.parametrize("lang", OTHERS)
def test_the_texts_are_translated_not_copied_from_english(lang: str) -> None:
    same_everywhere = {"app_title", "pin_label", "bluff", "round", "confirm_total", "live_on", "path_start", "bluffs_verdict", "game_live_label", "die_top", "nav_table", "ok", "nav_bluffs", "rematch"}
    copied = sorted(str(m.id) for m in i18n.read_catalog(lang) if m.id and m.id not in same_everywhere and _texts(m) == _texts(ENGLISH[m.id]))
    assert len(copied) <= 3, f"{lang} repeats English for {copied}"
    assert not [k for k in copied if k.startswith("rules_")]


# Each language's plural forms, from the CLDR rules its catalog header carries: (n, form index, a word of that form).
PLURALS = {
    "en": [(1, 0, "elephant"), (3, 1, "elephants"), (0, 1, "elephants")],
    "fr": [(0, 0, "éléphant"), (1, 0, "éléphant"), (2, 1, "éléphants")],
    "nl": [(1, 0, "olifant"), (5, 1, "olifanten")],
    "de": [(1, 0, "Elefant"), (5, 1, "Elefanten")],
    "it": [(1, 0, "elefante"), (5, 1, "elefanti")],
    "es": [(1, 0, "elefante"), (5, 1, "elefantes")],
    "pl": [(1, 0, "słoń"), (3, 1, "słonie"), (4, 1, "słonie"), (5, 2, "słoni"), (12, 2, "słoni"), (18, 2, "słoni"), (22, 1, "słonie"), (25, 2, "słoni")],
    "ro": [(1, 0, "elefant"), (3, 1, "elefanți"), (19, 1, "elefanți"), (20, 2, "de elefanți"), (101, 1, "elefanți"), (0, 1, "elefanți")],
    "da": [(1, 0, "elefant"), (5, 1, "elefanter")],
}


@pytest.mark.parametrize("lang", list(i18n.LANGUAGES))
def test_each_language_takes_the_plural_form_its_rules_give(lang: str) -> None:
    """"co najmniej 3 słonie" but "5 słoni"; "19 elefanți" but "20 de elefanți"."""
    forms = {"en": 2, "fr": 2, "nl": 2, "de": 2, "it": 2, "es": 2, "pl": 3, "ro": 3, "da": 2}[lang]
    assert i18n.read_catalog(lang).num_plurals == forms
    for n, index, word in PLURALS[lang]:
        assert i18n.plural_index(lang, n) == index, (lang, n)
        assert i18n.translate_plural(lang, "die_shows", "die_shows_plural", n) == f"{n} {word}"


def test_the_page_gets_each_plural_form_and_the_index_of_every_number() -> None:
    pl = i18n.strings("pl")
    assert pl["die_shows"] == ["{n} słoń", "{n} słonie", "{n} słoni"]
    table = pl["__plural_index__"]
    assert [table[n] for n in (1, 2, 5, 12, 22, 112, 122)] == [0, 1, 2, 2, 1, 2, 1]
    assert all(table[n] == i18n.plural_index("pl", n) for n in range(len(table)))
    assert isinstance(i18n.strings("de")["whose_turn"], str)


@pytest.mark.parametrize("lang", list(i18n.LANGUAGES))
def test_the_compiled_catalogs_that_ship_match_their_sources(lang: str) -> None:
    po = i18n.read_catalog(lang)
    with open(i18n.DIRECTORY / lang / "LC_MESSAGES" / "messages.mo", "rb") as f:
        mo = read_mo(f)
    key = lambda m: tuple(m.id) if isinstance(m.id, (list, tuple)) else m.id  # noqa: E731
    assert {key(m): _texts(m) for m in mo if m.id} == {key(m): _texts(m) for m in po if m.id}


@pytest.fixture
def stale_de(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """A copy of the catalogs whose German ``.po`` was edited after its ``.mo`` was compiled; the ``.mo``'s path."""
    import os
    import shutil

    copy = tmp_path / "translations"
    shutil.copytree(i18n.DIRECTORY, copy)
    po = copy / "de" / "LC_MESSAGES" / "messages.po"
    po.write_text(po.read_text(encoding="utf-8").replace('msgstr "Regeln"', 'msgstr "Spielregeln"'), encoding="utf-8")
    mo = copy / "de" / "LC_MESSAGES" / "messages.mo"
    os.utime(mo, (1, 1))
    monkeypatch.setattr(i18n, "DIRECTORY", copy)
    i18n.catalog.cache_clear()
    i18n.strings.cache_clear()
    yield mo
    monkeypatch.undo()
    i18n.catalog.cache_clear()
    i18n.strings.cache_clear()


def test_a_catalog_edited_after_compiling_is_compiled_again_at_start(stale_de: Path) -> None:
    assert i18n.compile_stale() == ["de"]
    assert i18n.translate("de", "nav_rules") == "Spielregeln"
    assert i18n.compile_stale() == []


def test_a_catalog_compiled_again_replaces_its_mo_whole_never_emptied_on_the_way(stale_de: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    old = stale_de.read_bytes()
    seen_while_compiling = []
    read_catalog = i18n.read_catalog

    def reading(lang: str):
        seen_while_compiling.append(stale_de.read_bytes())  # what a server starting beside this one would load now
        return read_catalog(lang)

    monkeypatch.setattr(i18n, "read_catalog", reading)
    assert i18n.compile_stale() == ["de"]
    assert seen_while_compiling == [old]
    with open(stale_de, "rb") as f:
        assert read_mo(f).get("nav_rules").string == "Spielregeln"
    assert sorted(p.name for p in stale_de.parent.iterdir()) == ["messages.mo", "messages.po"]  # nothing left beside it


def test_a_catalog_that_cannot_be_written_keeps_its_old_mo_and_leaves_nothing_beside_it(stale_de: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    old = stale_de.read_bytes()

    def disk_full(src, dst):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", disk_full)
    assert i18n.compile_stale() == []
    assert stale_de.read_bytes() == old
    assert sorted(p.name for p in stale_de.parent.iterdir()) == ["messages.mo", "messages.po"]


def test_translate_fills_placeholders_and_falls_back_to_the_key() -> None:
    assert i18n.translate("fr", "round", n=3) == "Manche 3"
    assert i18n.translate("de", "moves_two", name="Ann") == "Ann zieht 2 Felder vor"
    assert i18n.translate("da", "no_such_key") == "no_such_key"


def test_every_reason_the_reader_gives_has_a_text_with_its_numbers() -> None:
    """The page says why a reading was unsure from ``reason_<code>`` (companion.core.reading.REASON_CODES)."""
    from companion.core.reading import REASON_CODES

    params = {"count": {"found", "expected"}, "low_confidence": {"n", "lowest"}, "size": {"seen_px", "calibrated_px"}, "second_look": {"n"},
              "calibration": {"frame"}}
    for code in REASON_CODES:
        message = ENGLISH.get(f"reason_{code}") or ENGLISH.get((f"reason_{code}", f"reason_{code}_plural"))
        assert message, f"the catalog has no reason_{code}"
        assert set(i18n.PLACEHOLDER.findall(" ".join(_texts(message)))) == params.get(code, set()), code


def test_no_rule_code_is_shown_to_players_outside_the_rules_page() -> None:
    """Rule numbers stay in the rules page and the API; the players' screens speak plainly."""
    for lang in i18n.LANGUAGES:
        for message in i18n.read_catalog(lang):
            if message.id and not str(message.id).startswith("rules_"):
                assert not any(f"(R{n})" in text for text in _texts(message) for n in range(1, 16)), (lang, message.id)
