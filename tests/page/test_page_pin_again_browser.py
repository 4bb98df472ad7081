"""A tablet whose session was ended (on /sessions, or ``elephants-bluff sessions revoke``): its tap is not lost.

Found by an audit of an evening with several devices: a tap on Believe after the session ended opened the PIN dialog
and was dropped, so the player who typed the PIN had to know to tap again, and the table waited without knowing why.
Now the tap is sent again once the PIN lets the device in; a move the game moved on from meanwhile is refused in words
(it carries the state it was made on), and a dialog closed without the PIN sends nothing.
"""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import expect

from pagehelpers import PIN, Server, asked, past_the_verdict, settle_bluff, settled, unlock

pytestmark = pytest.mark.browser

REFUSED = "Failed to load resource: the server responded with a status of 401"


def _deciding(server: Server, new_context: Any) -> tuple[dict[str, Any], Any]:
    """Ann has claimed 9 and Ben decides, on a tablet let in by the PIN whose session then ends."""
    game = server.new_game(["Ann", "Ben", "Cy"], starter=0)
    page = new_context()
    page.goto(server.url + "/")
    unlock(page)
    assert server.api("POST", f"/api/games/{game['id']}/claim", {"amount": 9}).status_code == 200
    expect(page.locator("#believe")).to_be_visible()
    assert server.api("DELETE", "/api/sessions").status_code == 200  # "End every session" on another device
    return game, page


def _events(server: Server, game: dict[str, Any]) -> int:
    return server.api("GET", f"/api/games/{game['id']}").json()["events"]


def _tap_asks_for_the_pin(server: Server, game: dict[str, Any], page: Any, button: str) -> int:
    """``button`` tapped on the tablet whose session ended: the PIN dialog opens and nothing is played. The game's events."""
    before = _events(server, game)
    page.click(button)
    expect(page.locator("#pin-dialog")).to_be_visible()
    assert _events(server, game) == before  # nothing was played without the PIN
    return before


def test_a_pin_typed_before_the_page_heard_whether_it_was_let_in_keeps_the_controls(server: Server, new_context: Any) -> None:
    """The page asks, as it starts, whether this device is let in. Its answer, "no" as asked before the PIN, came
    after a PIN typed quickly on a busy companion and hid the controls again (seen on CI: the PIN dialog closed, the
    page said it was not let in)."""
    page = new_context()
    held: list[Any] = []
    page.route("**/api/session", lambda route: held.append(route) if route.request.method == "GET" else route.continue_())
    page.goto(server.url + "/")
    asked(page, held)
    unlock(page)  # the PIN lets it in while the first question is still on its way
    for route in held:  # the answer as it was when asked, before the PIN (Chromium would send the new cookie now)
        route.fulfill(json={"control": False, "session": None, "wrong_pins_last_hour": 0})
    page.unroute("**/api/session")
    settled(page)
    expect(page.locator("body")).to_have_attribute("data-control", "yes")
    expect(page.locator("#pin-lock")).to_be_visible()


def test_a_tap_refused_for_the_pin_is_sent_again_once_the_pin_lets_the_tablet_in(server: Server, new_context: Any, console: Any) -> None:
    console.allow(REFUSED)
    game, page = _deciding(server, new_context)
    before = _tap_asks_for_the_pin(server, game, page, "#believe")
    page.fill("#pin-input", PIN)
    page.click("#pin-submit")
    expect(page.locator("#act-claim")).to_be_visible()  # Ben believed: Ben claims next, with no second tap
    state = server.api("GET", f"/api/games/{game['id']}").json()
    assert state["events"] == before + 1 and state["phase"] == "claim" and state["to_act"] == 1
    expect(page.locator("body")).to_have_attribute("data-control", "yes")


def test_a_pin_dialog_closed_without_the_pin_sends_nothing(server: Server, new_context: Any, console: Any) -> None:
    console.allow(REFUSED)
    game, page = _deciding(server, new_context)
    before = _tap_asks_for_the_pin(server, game, page, "#bluff")
    page.click("#pin-cancel")
    expect(page.locator("#pin-dialog")).to_be_hidden()
    expect(page.locator("#pin-open")).to_be_visible()  # the top bar offers the PIN again; the controls hide
    expect(page.locator("#believe")).to_be_hidden()
    settled(page)  # the tap given up
    assert _events(server, game) == before
    # let in later from the top bar, the old tap stays unsent: only a new tap plays
    unlock(page)
    expect(page.locator("#believe")).to_be_visible()
    assert _events(server, game) == before


def test_a_tap_the_game_moved_on_from_while_the_pin_was_typed_is_refused_in_words(server: Server, new_context: Any, console: Any) -> None:
    console.allow(REFUSED)
    console.allow("Failed to load resource: the server responded with a status of 409")
    game, page = _deciding(server, new_context)
    page.click("#believe")
    expect(page.locator("#pin-dialog")).to_be_visible()
    assert server.api("POST", f"/api/games/{game['id']}/believe", {}).status_code == 200  # Ben believed on another tablet
    after = _events(server, game)
    page.fill("#pin-input", PIN)
    page.click("#pin-submit")
    expect(page.locator("#toast")).to_contain_text("The game moved on before this tap reached it")
    assert _events(server, game) == after  # the old tap did not believe a second time
    expect(page.locator("#act-claim")).to_be_visible()  # and the screen shows the table as it is


def test_the_devices_page_offers_the_pin_again_once_every_session_has_ended(server: Server, new_context: Any, console: Any) -> None:
    console.allow(REFUSED)
    page = new_context()
    page.goto(server.url + "/sessions")
    unlock(page)
    expect(page.locator("#sessions-end-all")).to_be_visible()  # let in from the top bar: the list shows without a reload
    page.click("#sessions-end-all")
    expect(page.locator("#sessions-locked")).to_be_visible()
    expect(page.locator("#pin-open")).to_be_visible()  # not "Lock this device" on a device no longer let in
    expect(page.locator("#pin-lock")).to_be_hidden()
    expect(page.locator("body")).to_have_attribute("data-control", "no")


def test_after_the_pin_a_keyboard_player_lands_on_the_next_thing_to_do_not_on_lock(server: Server, new_context: Any, console: Any) -> None:
    """The dialog closing gave the focus to "Lock this device", which the player's next Enter pressed mid-game."""
    console.allow(REFUSED)
    game, page = _deciding(server, new_context)
    page.focus("#believe")
    page.keyboard.press("Enter")
    expect(page.locator("#pin-input")).to_be_focused()
    page.keyboard.type(PIN)
    page.keyboard.press("Enter")
    expect(page.locator("#act-claim")).to_be_visible()  # Believe played, sent again after the PIN
    expect(page.locator("#claim-grid button").first).to_be_focused()
    expect(page.locator("#pin-lock")).not_to_be_focused()


def test_a_rematch_tapped_before_the_pin_is_not_sent_again_after_it(server: Server, new_context: Any, console: Any) -> None:
    """A rematch sent late could end a game another tablet started while the PIN was typed (a review found it): only
    a move, which says the state it was made on, is sent again; the player taps Rematch again."""
    console.allow(REFUSED)
    game = server.new_game(["Pia", "Quin"], starter=0, path_length=2)
    assert server.api("POST", f"/api/games/{game['id']}/claim", {"amount": 18}).status_code == 200
    settle_bluff(server, game["id"], [1, 1, 1])  # Pia reaches the red square
    page = new_context()
    page.goto(server.url + f"/?game={game['id']}")
    unlock(page)
    past_the_verdict(page)
    expect(page.locator("#over")).to_be_visible()
    assert server.api("DELETE", "/api/sessions").status_code == 200
    page.click("#over-rematch")
    page.fill("#pin-input", PIN)
    page.click("#pin-submit")
    expect(page.locator("#pin-dialog")).to_be_hidden()
    expect(page.locator("#over-rematch")).to_be_enabled()
    settled(page)  # the tap given up
    assert [g["id"] for g in server.api("GET", f"/api/games/{game['id']}/evening").json()["games"]] == [game["id"]]  # no rematch
    page.click("#over-rematch")  # tapped again, once let in: the rematch
    expect(page.locator("#over")).to_be_hidden()
    assert server.api("GET", "/api/games/current").json()["rematch_of"] == game["id"]


def test_the_set_ups_no_camera_choice_survives_the_pin_asked_at_start(own_server: Any, new_context: Any, console: Any) -> None:
    """Start with "no camera" ticked on a tablet whose session ended: the PIN asked for the camera setting, and a Cancel
    or the PIN then started the game with the camera on, the box cleared (a review found it)."""
    console.allow(REFUSED)
    server = own_server.start()
    page = new_context()
    page.goto(server.url + "/")
    unlock(page)
    rows = page.locator("#seat-list .seat")
    for i, (name, age) in enumerate([("Ann", "9"), ("Ben", "7")]):
        rows.nth(i).locator(".seat-name").fill(name)
        rows.nth(i).locator(".seat-age").fill(age)
    rows.nth(2).locator(".seat-remove").click()
    page.check("#setup-no-camera")
    assert server.api("DELETE", "/api/sessions").status_code == 200
    page.click("#start-game")
    page.fill("#pin-input", PIN)
    page.click("#pin-submit")
    expect(page.locator("#pin-dialog")).to_be_hidden()
    expect(page.locator("#setup-no-camera")).to_be_checked()  # the choice kept; no game started behind the dialog
    assert server.api("GET", "/api/table").json()["camera"] == "auto"
    page.click("#start-game")
    expect(page.locator("#turn-name")).to_have_text("Ben's turn")
    assert server.api("GET", "/api/table").json()["camera"] == "off"


def test_on_a_full_card_the_pin_dialog_says_the_pin_cannot_be_checked_and_lets_the_device_in_once_there_is_room(whole_card_server: Any, new_context: Any, console: Any) -> None:
    """No PIN is checked while a wrong one cannot be counted (docs/SECURITY.md). The dialog said the full card's
    words for a move ("this could not be saved"), which tells a player typing a PIN nothing they did."""
    console.allow("Failed to load resource: the server responded with a status of 507")
    server, card = whole_card_server
    page = new_context()
    page.goto(server.url + "/")
    card.fill(leave=0)
    unlock(page, pin="000000")  # wrong, and it cannot be counted
    error = page.locator("#pin-error")
    expect(error).to_have_text("The SD card is full, so the PIN cannot be checked (a wrong one could not be counted). "
                               "Free some room on it (old saved photos can go), then type the PIN again.")
    page.fill("#pin-input", PIN)
    with page.expect_response(lambda r: r.url.endswith("/api/session") and r.request.method == "POST") as answer:
        page.click("#pin-submit")  # right, and refused in the same words: no PIN is checked
    assert answer.value.status == 507
    expect(error).to_contain_text("the PIN cannot be checked")
    expect(page.locator("body")).to_have_attribute("data-control", "no")
    card.empty()
    page.click("#pin-submit")
    expect(page.locator("#pin-dialog")).to_be_hidden()
    expect(page.locator("body")).to_have_attribute("data-control", "yes")
