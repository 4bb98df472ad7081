"""The table's page on a Pi whose card has filled mid-evening (a real tmpfs under the game log, or the whole instance)."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import expect

from pagehelpers import settled, unlock

pytestmark = pytest.mark.browser


@pytest.fixture(params=["card_server", "whole_card_server"], ids=["the-game-log", "the-whole-instance"])
def full_card_server(request: Any) -> Any:
    """The server with the game log alone on the small card, or its whole instance (set up before the page, so the
    page is closed before the server stops)."""
    return request.getfixturevalue(request.param)


def test_a_claim_on_a_full_card_says_the_card_is_full_and_goes_through_once_there_is_room(full_card_server: Any, new_context: Any, console: Any) -> None:
    """The claim was refused with "Something went wrong. Try again.", and trying again failed the same way: the
    table was not told that room was wanted. The page now says so in the player's language; the board stays as it
    was, and once room is made the same tap passes the claim. With the whole instance on the card, as on a Pi, the
    device's own session note (the time it was last seen) met the full card first, as an internal error; that note is
    due once a minute, so tests/trust/test_sessions.py moves the sessions' clock on to hold it at every tap."""
    console.allow("status of 507")  # the refusal itself
    server, card = full_card_server
    game = server.new_game(["Ida", "Jo"], starter=0)
    page = new_context()
    page.goto(server.url + "/")
    unlock(page)
    expect(page.locator("#turn-name")).to_have_text("Ida's turn")
    card.fill()
    page.click('#claim-grid button[data-amount="9"]')
    page.click("#pass-ok")
    expect(page.locator("#toast")).to_have_text("The SD card is full, so this could not be saved. Free some room on it (old saved photos can go), then try again.")
    settled(page)
    expect(page.locator("#turn-name")).to_have_text("Ida's turn")
    assert server.api("GET", f"/api/games/{game['id']}").json()["phase"] == "claim"  # nothing was saved
    card.empty()
    page.click('#claim-grid button[data-amount="9"]')
    page.click("#pass-ok")
    expect(page.locator("#turn-name")).to_have_text("Jo's turn")
    assert server.api("GET", f"/api/games/{game['id']}").json()["claim"]["amount"] == 9
