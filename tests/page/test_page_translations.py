"""The nine languages: every file has exactly English's keys, the same
{placeholders}, and real text (not an empty string)."""

from __future__ import annotations

import json
from importlib import resources

import pytest

from companion.app.web import i18n


def _raw(lang: str) -> dict[str, str]:
    return json.loads(resources.files("companion.app.web").joinpath("translations", f"{lang}.json").read_text(encoding="utf-8"))


ENGLISH = _raw("en")
OTHERS = [code for code in i18n.LANGUAGES if code != "en"]


def test_the_nine_languages_of_the_rulebook_each_have_a_file() -> None:
    assert list(i18n.LANGUAGES) == ["en", "fr", "nl", "de", "it", "es", "pl", "ro", "da"]
    files = {p.name for p in resources.files("companion.app.web").joinpath("translations").iterdir() if p.name.endswith(".json")}
    assert files == {f"{code}.json" for code in i18n.LANGUAGES}


@pytest.mark.parametrize("lang", OTHERS)
def test_every_language_has_every_key_of_english_and_no_other(lang: str) -> None:
    texts = _raw(lang)
    missing = sorted(set(ENGLISH) - set(texts))
    extra = sorted(set(texts) - set(ENGLISH))
    assert not missing, f"{lang}.json lacks {missing}"
    assert not extra, f"{lang}.json has keys English does not: {extra}"


@pytest.mark.parametrize("lang", list(i18n.LANGUAGES))
def test_texts_are_non_empty_and_keep_the_placeholders_of_english(lang: str) -> None:
    for key, text in _raw(lang).items():
        assert isinstance(text, str) and text.strip(), f"{lang}:{key} is empty"
        want = set(i18n.PLACEHOLDER.findall(ENGLISH[key]))
        got = set(i18n.PLACEHOLDER.findall(text))
        assert got == want, f"{lang}:{key} has placeholders {sorted(got)}, English has {sorted(want)}"


@pytest.mark.parametrize("lang", OTHERS)
def test_the_texts_are_translated_not_copied_from_english(lang: str) -> None:
    texts = _raw(lang)
    # Names, numbers and a few words every language writes the same way.
    same_everywhere = {"app_title", "pin_label", "bluff", "round", "confirm_total", "live_on", "path_start", "bluffs_photo", "bluffs_verdict", "game_live_label", "die_top", "nav_table"}
    copied = sorted(k for k, v in texts.items() if k not in same_everywhere and not k.startswith("_") and v == ENGLISH[k])
    assert len(copied) <= 3, f"{lang}.json repeats English for {copied}"
    # The rules page must be this language's own: none of its paragraphs may be English.
    assert not [k for k in copied if k.startswith("rules_")]


def test_translate_fills_placeholders_and_falls_back_to_english() -> None:
    assert i18n.translate("fr", "round", n=3) == "Manche 3"
    assert i18n.translate("de", "moves_two", name="Ann") == "Ann zieht 2 Felder vor"
    assert i18n.translate("da", "no_such_key") == "no_such_key"


def test_every_reason_the_reader_gives_has_a_text_with_its_numbers() -> None:
    """The page says why a reading was unsure from ``reason_<code>`` (companion.core.reading.REASON_CODES)."""
    from companion.core.reading import REASON_CODES

    params = {"count": {"found", "expected"}, "low_confidence": {"n", "lowest"}}
    for code in REASON_CODES:
        text = ENGLISH.get(f"reason_{code}")
        assert text, f"en.json has no reason_{code}"
        assert set(i18n.PLACEHOLDER.findall(text)) == params.get(code, set()), code
