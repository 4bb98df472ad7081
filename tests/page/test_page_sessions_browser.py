"""The devices page (/sessions): each device let in listed once, one ended with a tap, the wrong PINs counted."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest
import requests
from playwright.sync_api import expect

from pagehelpers import PIN, asked, no_toast, settled, unlock

pytestmark = pytest.mark.browser
START = dt.datetime(2026, 12, 7, 20, 0, tzinfo=dt.timezone.utc)


def test_the_devices_page_asks_once_lists_each_device_and_ends_another_with_one_tap(own_server: Any, new_context: Any, console: Any) -> None:
    """It asked for the list twice as it opened (the top bar's first check of the PIN told it to load again)."""
    console.allow("Failed to load resource: the server responded with a status of 4")  # the guest's wrong PIN, then its ended session
    server = own_server.start()
    guest = new_context()
    guest.goto(server.url + "/")
    unlock(guest, pin="000000")  # a wrong PIN first: counted for the last hour
    expect(guest.locator("#pin-error")).to_be_visible()
    guest.fill("#pin-input", PIN)
    guest.click("#pin-submit")
    expect(guest.locator("body")).to_have_attribute("data-control", "yes")

    owner = new_context()
    owner.goto(server.url + "/")
    unlock(owner)
    asked: list[str] = []
    owner.on("request", lambda r: asked.append(r.url.split("?")[0].removeprefix(server.url)) if "/api/session" in r.url else None)
    owner.clock.install(time=START)
    owner.clock.pause_at(START + dt.timedelta(seconds=1))  # its look every 10 s waits: the page's opening is counted alone
    owner.goto(server.url + "/sessions")
    rows = owner.locator("#sessions-body tr")
    expect(rows).to_have_count(2)
    owner.wait_for_load_state("networkidle")
    assert asked.count("/api/sessions") == 1 and asked.count("/api/session") <= 2, asked
    expect(owner.locator("#wrong-pins")).to_have_attribute("data-count", "1")
    this_device = owner.locator("#sessions-body tr", has_text="(this device)")
    expect(this_device).to_have_count(1)

    rows.filter(has_not_text="(this device)").locator(".end-session").click()
    expect(rows).to_have_count(1)
    expect(this_device).to_have_count(1)  # the owner's own session stays
    guest.reload()
    expect(guest.locator("#pin-open")).to_be_visible()  # the guest's phone types the PIN again


def test_the_devices_page_shows_a_device_let_in_or_ended_elsewhere_while_it_stays_open(own_server: Any, new_context: Any, console: Any) -> None:
    """An owner who opens the devices page to end a guest's phone should see that phone once it is let in, and its
    row go once another device ended it, without a reload. Ended itself elsewhere, the page asks for the PIN."""
    console.allow("Failed to load resource: the server responded with a status of 4")  # its own session, ended
    server = own_server.start()
    owner = new_context()
    owner.clock.install()  # the page's look every 10 s, run at once
    owner.goto(server.url + "/")
    unlock(owner)
    owner.goto(server.url + "/sessions")
    rows = owner.locator("#sessions-body tr")
    expect(rows).to_have_count(1)
    guest = requests.post(server.url + "/api/session", json={"pin": PIN}, timeout=10, headers={"User-Agent": "Guest phone"})
    assert guest.status_code == 200
    owner.clock.run_for(10_500)
    expect(rows.filter(has_text="Guest phone")).to_have_count(1)
    expect(rows).to_have_count(2)
    assert server.api("DELETE", f"/api/sessions/{guest.json()['session']}").status_code == 200  # ended on another tablet
    owner.clock.run_for(10_500)
    expect(rows).to_have_count(1)
    expect(rows.filter(has_text="(this device)")).to_have_count(1)
    assert server.api("DELETE", "/api/sessions").status_code == 200  # every session, this device's too
    owner.clock.run_for(10_500)
    expect(owner.locator("#sessions-locked")).to_be_visible()
    expect(owner.locator("#sessions-table")).to_be_hidden()
    expect(owner.locator("body")).to_have_attribute("data-control", "no")
    expect(owner.locator("#pin-open")).to_be_visible()
    no_toast(owner)


NOT_LET_IN = {"control": False, "session": None, "wrong_pins_last_hour": 0}


def test_an_answer_asked_before_the_pin_and_come_last_leaves_the_list_of_a_device_let_in(server: Any, new_context: Any) -> None:
    """The devices page asks the server whether this device is let in each time that changes, and draws what the
    answer says. Its question asked before the PIN, answered after the one asked after it, hid the list again."""
    page = new_context()
    held: list[Any] = []
    page.route("**/api/session", lambda route: held.append(route) if route.request.method == "GET" else route.continue_())
    page.goto(server.url + "/sessions")
    asked(page, held, 1)
    held[0].fulfill(json=NOT_LET_IN)  # the top bar's first question: not let in
    asked(page, held, 2)  # so the list asks too, and its answer is still on its way
    unlock(page)
    asked(page, held, 3)  # let in: the list asks again
    held[2].continue_()
    expect(page.locator("#sessions-table")).to_be_visible()
    held[1].fulfill(json=NOT_LET_IN)  # the question asked before the PIN, answered last
    page.unroute("**/api/session")
    settled(page)
    assert page.locator("#sessions-table").is_visible()
    expect(page.locator("body")).to_have_attribute("data-control", "yes")
