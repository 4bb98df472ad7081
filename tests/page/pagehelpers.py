"""Helpers shared by the page's browser tests (the fixtures are in conftest.py)."""

from __future__ import annotations

import socket
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import requests
from playwright.sync_api import expect

PIN = "482913"
ROOT = Path(__file__).resolve().parents[2]
SCREENSHOTS = ROOT / "test-artifacts" / "screenshots"
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run"]
VIEWPORT = {"width": 1280, "height": 800}  # a landscape tablet

# The screens the page is checked on (docs/PAGE.md), in CSS px: one object each, so a test may ask ``viewport is PHONE``.
TABLET = VIEWPORT
TABLET_UNDER_BARS = {"width": 1280, "height": 720}  # a 1280×800 tablet under its browser's bars
TABLET_1024 = {"width": 1024, "height": 768}
SHORT_TABLET = {"width": 1024, "height": 552}  # a 7-inch 1024×600 tablet under its browser's bars
SHORTEST_TABLET = {"width": 1024, "height": 472}  # the same under the system's navigation bar too
PORTRAIT = {"width": 768, "height": 1024}  # a tablet held upright
PHONE = {"width": 390, "height": 844}
SHORT_PHONE = {"width": 360, "height": 740}
SHORTER_PHONE = {"width": 360, "height": 640}  # a 360×640 phone, or a 360×740 one under its browser's bars
ZOOMED = {"width": 320, "height": 568}  # a 640 px phone at 200 % zoom
SIDEWAYS_PHONE = {"width": 844, "height": 390}  # a 390×844 phone held sideways
SHORT_SIDEWAYS_PHONE = {"width": 740, "height": 360}  # a 360×740 one
SHORTER_SIDEWAYS_PHONE = {"width": 640, "height": 360}  # a 360×640 one
SIDEWAYS_UNDER_BARS = {"width": 844, "height": 330}  # a 390×844 phone held sideways, under its browser's bar
SHORT_SIDEWAYS_UNDER_BARS = {"width": 740, "height": 300}  # a 360×740 one
SIDEWAYS = (SIDEWAYS_PHONE, SHORT_SIDEWAYS_PHONE, SHORTER_SIDEWAYS_PHONE, SIDEWAYS_UNDER_BARS, SHORT_SIDEWAYS_UNDER_BARS)
SIDEWAYS_IDS = ["sideways-phone", "short-sideways-phone", "shorter-sideways-phone", "sideways-phone-under-bars", "short-sideways-phone-under-bars"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class Server:
    url: str
    instance: Path

    def api(self, method: str, path: str, body: Any = None, pin: str | None = PIN) -> requests.Response:
        headers = {"X-Table-Pin": pin} if pin else {}
        with requests.Session() as s:
            return s.request(method, self.url + path, json=body, headers=headers, timeout=10)

    def set_dice(self, values: list[int]) -> None:
        response = self.api("POST", "/api/sim/dice", {"values": values})
        assert response.status_code == 200, response.text

    def new_game(self, players: list[str], **extra: Any) -> dict[str, Any]:
        response = self.api("POST", "/api/games", {"players": players, **extra})
        assert response.status_code == 201, response.text
        return response.json()


def settle_bluff(server: Server, game_id: str, dice: list[int]) -> dict[str, Any]:
    """A Bluff called through the API on ``dice``; an unsure reading (R14) is confirmed with the same dice. Its challenge."""
    server.set_dice(dice)
    body = server.api("POST", f"/api/games/{game_id}/bluff").json()
    if body["phase"] == "confirm":
        assert server.api("POST", f"/api/games/{game_id}/confirm", {"dice": dice}).status_code == 200
    return body["challenge"]


def to_setup(page: Any) -> None:
    """From whatever the table of the shared server shows (a verdict, dice to check, a game left by an earlier test),
    to the set-up. The table's state is waited for first: while the page still loads, the set-up is hidden too, and
    the "New game" looked for then never comes when there is no game."""
    past_the_verdict(page)
    if page.locator("#setup").is_hidden():
        page.click("#confirm-new-game" if page.locator("#act-confirm").is_visible() else "#new-game")
        page.click("#new-ok")
    expect(page.locator("#setup")).to_be_visible()


def settled(page: Any) -> None:
    """Wait until the page has done all a tap led to: its request answered and, after a refusal, the table asked for
    again and what follows said (``body[data-busy]`` gone, common.js). A check that nothing more happens after a tap
    (nothing sent, no toast) is then exact, with no wait for a time that a slow machine could outlast."""
    expect(page.locator("body")).not_to_have_attribute("data-busy", "yes")


def past_the_verdict(page: Any) -> None:
    """The board with the last move's verdict closed, where the page shows one. Asked once the page has drawn the
    table (``settled``): looked at as the page still loads, a verdict drawn a moment later stayed over the board and
    took the test's next tap."""
    settled(page)
    if page.locator("#verdict").is_visible():
        page.click("#verdict-close")
        expect(page.locator("#verdict")).to_be_hidden()


def asked(page: Any, held: list[Any], n: int = 1) -> None:
    """Wait until the page has asked ``n`` requests that a test's ``page.route`` holds in ``held`` (the route sees
    them while Playwright waits)."""
    for _ in range(300):
        if len(held) >= n:
            return
        page.wait_for_timeout(50)
    raise AssertionError(f"the page asked {len(held)} of the {n} held requests")


def no_toast(page: Any) -> None:
    """Nothing was said in a toast once the page has settled (``settled``). Asked once, not waited for: a toast hides
    itself after 6 s, which an ``expect(...).to_be_hidden()`` would wait out and pass."""
    settled(page)
    toast = page.locator("#toast")
    assert toast.is_hidden(), f"the page said: {toast.text_content()}"


def no_sideways_scroll(page: Any) -> None:
    width = page.evaluate("() => document.documentElement.scrollWidth")
    assert width <= page.viewport_size["width"], f"{page.url} is {width} px wide on a {page.viewport_size['width']} px screen"


def above_the_footer(page: Any, footer: str, parts: tuple[str, ...], what: Any = None) -> None:
    """Each of ``parts`` lies wholly between the screen's top and the top of ``footer`` (an overlay's foot): in view
    without a scroll, not under the buttons. ``what`` names the case in a failure (a locale)."""
    foot = page.locator(footer).bounding_box()
    for part in parts:
        box = page.locator(part).bounding_box()
        assert box["y"] >= 0 and box["y"] + box["height"] <= foot["y"] + 0.5, (what, part, box, foot)


def shot(page: Any, name: str, full_page: bool = False) -> None:
    """A screenshot kept as a test artifact (``test-artifacts/screenshots``, gitignored)."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.evaluate("() => window.scrollTo(0, 0)")
    page.screenshot(path=str(SCREENSHOTS / f"{name}.png"), full_page=full_page, animations="disabled")


def unlock(page: Any, pin: str = PIN, opener: str = "#pin-open") -> None:
    """Enter the table PIN in the page's PIN dialog (opened by the top bar's button, or ``opener``)."""
    page.click(opener)
    page.fill("#pin-input", pin)
    page.click("#pin-submit")
    if pin == PIN:
        # Done only once the dialog has closed: closing gives the focus back to where it was opened from, so a test
        # that put the focus somewhere before then had it taken away (a flaky keyboard test on CI)
        expect(page.locator("#pin-dialog")).to_be_hidden()
        expect(page.locator("body")).to_have_attribute("data-control", "yes")
