"""Several devices at one table, in a real Chromium against a real ``serve --simulate``: a screen left behind (its
live stream cut, as a tablet's Wi-Fi drops) never acts on a game that has moved on, and catches up when the
stream comes back.

Found by an audit of an evening with two tablets and two phones: a Bluff tapped on a screen showing Ben deciding on
Ann's 9 was logged as Cy's Bluff on Ben's 15; a device that missed a new game's start stayed on the old game for
good, its badge saying "Live".
"""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import expect

from pagehelpers import Server, settle_bluff, settled, to_setup, unlock

pytestmark = pytest.mark.browser


def _tablet_without_its_stream(server: Server, new_context: Any) -> tuple[Any, dict[str, bool]]:
    """A tablet let in with the PIN whose live stream is cut until ``cut["on"]`` is set False."""
    page = new_context()
    cut = {"on": True}
    page.route("**/api/events*", lambda route: route.abort() if cut["on"] else route.continue_())
    page.goto(server.url + "/")
    unlock(page)
    return page, cut


def test_a_tap_on_a_screen_the_game_has_moved_on_from_is_refused_and_the_screen_catches_up(server: Server, new_context: Any, console: Any) -> None:
    console.allow("status of 409")  # the refusal itself
    console.allow("net::ERR_FAILED")  # the cut stream
    game = server.new_game(["Ann", "Ben", "Cy"], starter=0)
    assert server.api("POST", f"/api/games/{game['id']}/claim", {"amount": 9}).status_code == 200
    page, _ = _tablet_without_its_stream(server, new_context)
    expect(page.locator("#act-decide")).to_be_visible()  # Ben decides on Ann's 9, as this screen last heard
    # Another tablet plays on: Ben believes and claims 15 to Cy.
    assert server.api("POST", f"/api/games/{game['id']}/believe", {}).status_code == 200
    assert server.api("POST", f"/api/games/{game['id']}/claim", {"amount": 15}).status_code == 200
    before = server.api("GET", f"/api/games/{game['id']}").json()
    page.click("#bluff")  # meant as Ben's Bluff on Ann's 9
    expect(page.locator("#toast")).to_contain_text("The game moved on before this tap reached it")
    after = server.api("GET", f"/api/games/{game['id']}").json()
    assert after["events"] == before["events"] and after["phase"] == "decide"  # nobody's Bluff was logged
    expect(page.locator("#prompt")).to_contain_text("Cy")  # the screen shows the table as it is: Cy decides on 15
    expect(page.locator("#claim-amount")).to_have_text("15")


def test_a_tablet_whose_stream_comes_back_finds_the_new_game_it_missed(server: Server, new_context: Any, console: Any) -> None:
    console.allow("net::ERR_FAILED")  # the cut stream
    old = server.new_game(["Ann", "Ben"], starter=0)
    page, cut = _tablet_without_its_stream(server, new_context)
    expect(page.locator("#act-claim")).to_be_visible()
    new = server.new_game(["Dee", "Eve", "Fay"], starter=0)  # started on another tablet while this one was away
    assert new["id"] != old["id"]
    cut["on"] = False  # the Wi-Fi is back: the stream reopens
    expect(page.locator("#paths .path-row")).to_have_count(3, timeout=15000)
    expect(page.locator("#paths")).to_contain_text("Dee")


def test_a_correction_on_a_replay_drawn_before_the_game_ended_elsewhere_asks_the_table_first(server: Server, new_context: Any) -> None:
    """The game ended on another tablet after this replay was drawn: the correction was refused with "not possible
    right now" and the question a finished game needs (it may reopen it, R12, R15) was never asked."""
    game = server.new_game(["Ann", "Ben"], starter=0, path_length=2)
    assert server.api("POST", f"/api/games/{game['id']}/claim", {"amount": 9}).status_code == 200
    first = settle_bluff(server, game["id"], [6, 6, 6])  # 18 >= 9: Ben moves 1
    page = new_context()
    page.goto(server.url + f"/bluffs/{first['id']}")
    unlock(page)
    expect(page.locator("#correct-pickers .pick")).to_have_count(18)
    state = server.api("GET", f"/api/games/{game['id']}").json()  # another tablet plays the game to its end
    assert server.api("POST", f"/api/games/{game['id']}/claim", {"amount": 18, "events": state["events"]}).status_code == 200
    settle_bluff(server, game["id"], [1, 1, 1])  # 3 < 18: the claimer moves 2, onto the red square
    assert server.api("GET", f"/api/games/{game['id']}").json()["phase"] == "over"
    page.click("#correct-pickers .pick[data-die='0'][data-value='2']")
    page.click("#correct-submit")
    expect(page.locator("#over-dialog")).to_be_visible()


@pytest.mark.parametrize("under_way", [True, False], ids=["a-claim-made", "no-move-yet"])
def test_a_set_up_opened_for_a_new_game_stays_when_the_stream_comes_back(server: Server, new_context: Any, console: Any, under_way: bool) -> None:
    """Catching up after the stream came back must not pull a table that chose "New game" back to the game it left
    (the set-up offers to resume it); a game started elsewhere since does. A game with no move yet has one event, as
    a game just started does: the stream's first state, sent again as it came back, pulled the set-up away."""
    console.allow("net::ERR_FAILED")  # the cut stream
    left = server.new_game(["Ann", "Ben"], starter=0)
    if under_way:
        assert server.api("POST", f"/api/games/{left['id']}/claim", {"amount": 9}).status_code == 200
    page, cut = _tablet_without_its_stream(server, new_context)
    expect(page.locator("#act-decide" if under_way else "#act-claim")).to_be_visible()
    page.click("#new-game")
    page.click("#new-ok")
    expect(page.locator("#setup")).to_be_visible()
    cut["on"] = False
    expect(page.locator("#live")).to_have_attribute("data-state", "on")  # the stream reopened (after 3 s)...
    settled(page)  # ...and the page asked for the table
    expect(page.locator("#setup")).to_be_visible()
    server.new_game(["Dee", "Eve", "Fay"], starter=0)  # another tablet starts a game: the set-up gives way
    expect(page.locator("#paths .path-row")).to_have_count(3, timeout=15000)


def test_resume_of_a_game_that_ended_unheard_says_so_and_the_set_up_shows_its_end(server: Server, new_context: Any, console: Any) -> None:
    """R12: the game the set-up offers to resume ended on another tablet while this one heard nothing (its stream
    cut). Resume said only "That game or Bluff does not exist" and stayed offered; it now says what happened, and the
    set-up shows the game's end in its place."""
    console.allow("net::ERR_FAILED")  # the cut stream
    console.allow("status of 404")  # Resume's answer: no game is in progress
    game = server.new_game(["Ida", "Jo"], starter=0, path_length=2)
    page, _ = _tablet_without_its_stream(server, new_context)
    to_setup(page)
    expect(page.locator("#setup-resume-text")).to_have_text("A game is in progress: Ida, Jo, round 1.")
    assert server.api("POST", f"/api/games/{game['id']}/claim", {"amount": 18}).status_code == 200
    settle_bluff(server, game["id"], [1, 1, 1])  # R10: 3 < 18, Ida moves 2 steps, onto the red square
    assert server.api("GET", f"/api/games/{game['id']}").json()["phase"] == "over"
    page.click("#resume-button")
    expect(page.locator("#toast")).to_have_text("That game is no longer in progress: it ended, or was left for a newer one.")
    expect(page.locator("#setup-resume")).to_be_hidden()
    expect(page.locator("#setup-last")).to_contain_text("Last game: Ida lost.")
    expect(page.locator("#setup")).to_be_visible()


def test_a_finished_game_a_correction_let_go_on_while_the_stream_was_cut_is_offered_not_forced(server: Server, new_context: Any, console: Any) -> None:
    """R15, R12: the set-up named the last game's loser; while this tablet heard nothing, another corrected that
    game's last Bluff and the game went on. When the stream came back, the page took it for a game started since and
    pulled the set-up away to it; it is offered to resume instead, and the names typed stay."""
    console.allow("net::ERR_FAILED")  # the cut stream
    game = server.new_game(["Ida", "Jo"], starter=0, path_length=3)
    assert server.api("POST", f"/api/games/{game['id']}/claim", {"amount": 9}).status_code == 200
    settle_bluff(server, game["id"], [1, 1, 1])  # R9: Ida moves 1 step
    assert server.api("POST", f"/api/games/{game['id']}/claim", {"amount": 18}).status_code == 200
    last = settle_bluff(server, game["id"], [1, 1, 1])  # R10: Ida moves 2 steps, onto the red square
    page, cut = _tablet_without_its_stream(server, new_context)
    expect(page.locator("#setup-last")).to_contain_text("Last game: Ida lost.")
    page.locator("#seat-list .seat-name").first.fill("Kit")
    fixed = server.api("POST", f"/api/challenges/{last['id']}/correct", {"dice": [6, 6, 6], "after_game_over": True})
    assert fixed.status_code == 200, fixed.text  # 18 was there: Jo moves 2 steps instead, and nobody has lost
    cut["on"] = False
    expect(page.locator("#live")).to_have_attribute("data-state", "on")
    expect(page.locator("#setup-resume-text")).to_have_text("A game is in progress: Ida, Jo, round 3.")
    settled(page)
    expect(page.locator("#setup")).to_be_visible()
    expect(page.locator("#seat-list .seat-name").first).to_have_value("Kit")

