"""Dates and percentages on the Bluff pages as each language writes them (audit 69 §8), in a real Chromium against a
real ``serve --simulate``: a correction's date that no table can misread, and one way to write a percentage per page."""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any

import pytest
from playwright.sync_api import expect

from pagehelpers import Server

pytestmark = pytest.mark.browser


def _corrected_bluff(server: Server) -> dict[str, Any]:
    game = server.new_game(["Ann", "Ben", "Cy"], starter=0)
    assert server.api("POST", f"/api/games/{game['id']}/claim", {"amount": 9}).status_code == 200
    server.set_dice([3, 3, 3])
    body = server.api("POST", f"/api/games/{game['id']}/bluff").json()
    if body["phase"] == "confirm":
        assert server.api("POST", f"/api/games/{game['id']}/confirm", {"dice": [3, 3, 3]}).status_code == 200
    response = server.api("POST", f"/api/challenges/{body['challenge']['id']}/correct", {"dice": [3, 3, 4]})
    assert response.status_code == 200, response.text
    return body["challenge"]


@pytest.mark.parametrize("locale", ["en-US", "en-GB"])
def test_the_correction_history_spells_out_the_month(server: Server, new_context: Any, locale: str) -> None:
    """``toLocaleString("en")`` wrote 6 December as "12/6/2026", which a table in Europe reads as 12 June."""
    challenge = _corrected_bluff(server)
    page = new_context(locale=locale)
    page.goto(server.url + f"/bluffs/{challenge['id']}")
    row = page.locator("#history li")
    expect(row).to_have_count(1)
    expect(row).to_contain_text("changed the dice from 3 + 3 + 3 to 3 + 3 + 4")
    text = row.text_content()
    assert not re.search(r"\d{1,2}/\d{1,2}/\d{2,4}", text), text
    months = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"]
    assert months[datetime.now().month - 1] in text or months[datetime.now().month - 2] in text, text  # a correction made a moment ago


@pytest.mark.parametrize(("locale", "lang"), [("en-GB", "en"), ("fr-FR", "fr"), ("de-DE", "de"), ("nl-NL", "nl")])
def test_a_percentage_is_written_one_way_per_language_on_the_replay(server: Server, new_context: Any, locale: str, lang: str) -> None:
    """The reason line wrote "at 62 %" and the dice's confidence "sure at 62%" on the same English page; each language
    now writes every percentage as its own number format does ("62%" in English, "62 %" in French and German)."""
    challenge = _corrected_bluff(server)
    page = new_context(locale=locale)
    page.goto(server.url + f"/bluffs/{challenge['id']}")
    expect(page.locator("#bluff-crops .confidence").first).to_be_visible()
    own = page.evaluate("(lang) => new Intl.NumberFormat(lang, { style: 'percent' }).format(0.62)", lang)
    assert own == "62%" if lang in ("en", "nl") else re.fullmatch(r"62\s%", own), own  # French and German: a (no-break) space
    shape = re.compile(re.escape(own).replace("62", r"\d{1,3}"))
    for text in page.locator("#bluff-crops .confidence").all_text_contents():
        found = re.findall(r"\d{1,3}\s*%", text)
        assert len(found) == 1 and shape.fullmatch(found[0]), (text, own)
    reason = page.evaluate("() => Dice.reasonText({ status: 'unsure', reasons: [{ code: 'low_confidence', n: 1, lowest: 0.62 }] })")
    assert own in reason, reason
    assert re.findall(r"\d{1,3}\s*%", reason) == [own], reason
