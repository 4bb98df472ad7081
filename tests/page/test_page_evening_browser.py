"""Issue 28 in a real Chromium against a real ``serve --simulate``: the reveal everyone can
check from their chair, the uncertain reading that asks for the TOP faces, buttons that
cannot send twice, a correction after game over, play without the camera, the simulated
dice from the page, rematch and the evening's tally, and phones (390×844, 360 wide), in
English, German and Polish.

Screenshots go to ``test-artifacts/screenshots``; with ``EB_SCREENSHOTS=docs`` they are also
written to ``docs/screenshots/`` (the README's pictures).
"""

from __future__ import annotations

import os
import re
import shutil
from typing import Any

import pytest
from playwright.sync_api import expect

from pagehelpers import PHONE, ROOT, SCREENSHOTS, TABLET, Server, no_sideways_scroll, no_toast, past_the_verdict, settle_bluff, to_setup, unlock

pytestmark = pytest.mark.browser


def keep(page: Any, name: str) -> None:
    """A screenshot of what the player sees now (the viewport, not scrolled)."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    path = SCREENSHOTS / f"{name}.png"
    page.screenshot(path=str(path), animations="disabled")
    if os.environ.get("EB_SCREENSHOTS") == "docs":
        shutil.copy(path, ROOT / "docs" / "screenshots" / f"{name}.png")


def in_view(page: Any, selector: str) -> None:
    """The element is wholly inside the viewport: nothing to scroll to, nothing cut off."""
    expect(page.locator(selector)).to_be_visible()  # drawn first: on a busy machine the box is read before the page renders it
    box = page.locator(selector).bounding_box()
    size = page.viewport_size
    assert box is not None, selector
    assert box["x"] >= 0 and box["y"] >= 0 and box["x"] + box["width"] <= size["width"] + 0.5 and box["y"] + box["height"] <= size["height"] + 0.5, (selector, box, size)


def font_px(page: Any, selector: str) -> float:
    return float(page.locator(selector).first.evaluate("(el) => parseFloat(getComputedStyle(el).fontSize)"))



def open_table(new_context: Any, server: Server, viewport: dict[str, int], locale: str = "en-GB") -> Any:
    page = new_context(locale=locale, viewport=viewport)
    page.goto(server.url + "/")
    expect(page.locator("body")).not_to_have_attribute("data-control", "unknown")
    return page


@pytest.mark.parametrize("viewport,locale,names", [
    (TABLET, "en-GB", ["Ann", "Ben", "Cy"]),
    (PHONE, "de-DE", ["Maximiliane-Theresa", "Bartholomäus", "Cy"]),
    (PHONE, "pl-PL", ["Małgorzata Brzęczyszczykiewicz", "Zbigniew", "Ola"]),
], ids=["tablet-en", "phone-de", "phone-pl"])
def test_the_reveal_shows_the_top_faces_large_and_the_next_step_always_in_view(server: Server, new_context: Any, viewport: dict[str, int], locale: str, names: list[str]) -> None:
    game = server.new_game(names, starter=0)
    assert server.api("POST", f"/api/games/{game['id']}/claim", {"amount": 10}).status_code == 200
    challenge = settle_bluff(server, game["id"], [6, 5, 4])  # 15 >= 10: the caller moves (R9)
    page = open_table(new_context, server, viewport, locale)
    expect(page.locator("#verdict")).to_be_visible()
    dice = page.locator("#verdict-dice .die")
    expect(dice).to_have_count(3)
    shown = challenge["dice"] or [6, 5, 4]
    assert dice.evaluate_all("(els) => els.map((e) => Number(e.dataset.value))") == shown  # the TOP faces, as counted
    assert dice.first.bounding_box()["width"] >= 80  # large enough to read from across the table
    expect(dice.first.locator(".pip")).to_have_count(shown[0])
    expect(page.locator("#verdict-total")).to_have_text("15")  # counted up to the real total
    expect(page.locator("#verdict-claim")).to_have_text("10")
    expect(page.locator("#verdict-move")).to_contain_text(names[1])
    expect(page.locator("#verdict-move")).not_to_contain_text("(R")  # no rule codes on the players' screens
    # Long titles and names wrap: the verdict line and the next step are never cut off.
    for part in ("#verdict-title", "#verdict-move", "#verdict-next"):
        assert page.locator(part).evaluate("(el) => el.scrollWidth <= el.clientWidth + 1"), part
    in_view(page, "#verdict-close")
    no_sideways_scroll(page)
    for part in ("#verdict-move", "#verdict-held", "#verdict-next", "#verdict-title"):
        assert font_px(page, part) >= 20, part
    tag = {"en-GB": "tablet", "de-DE": "phone-de", "pl-PL": "phone-pl"}[locale]
    keep(page, f"verdict-{tag}")
    # A dismissed verdict stays dismissed after a reload on this device.
    page.click("#verdict-close")
    expect(page.locator("#verdict")).to_be_hidden()
    page.reload()
    expect(page.locator("#turn-name")).to_contain_text(names[1])
    expect(page.locator("#verdict")).to_be_hidden()
    for part in ("#turn-name", "#prompt", ".path-note", "#claim-box .label"):
        assert font_px(page, part) >= 20, part
    if locale == "pl-PL":
        # CLDR plural rules: "co najmniej 3 słonie" (few), not "3 słoni".
        expect(page.locator("#prompt")).to_contain_text("co najmniej 3 słonie")
    if locale == "de-DE":
        expect(page.locator("#prompt")).to_contain_text("mindestens 3 Elefanten")
    keep(page, f"score-{tag}")


def test_the_uncertain_reading_asks_for_the_top_faces_one_card_per_die(server: Server, new_context: Any) -> None:
    """R14: two dice under the camera; the page asks what is on TOP of each die, the reader's answer chosen
    only for the dice it read sure, every picker in view on a phone; after confirming, the saved Bluff says so."""
    game = server.new_game(["Dee", "Eve"], starter=0)
    assert server.api("POST", f"/api/games/{game['id']}/claim", {"amount": 9}).status_code == 200
    server.set_dice([6, 4])  # a die missing from the frame
    body = server.api("POST", f"/api/games/{game['id']}/bluff").json()
    if body["phase"] != "confirm":
        pytest.skip("two dice under the camera did not make the reading uncertain here")
    for viewport, tag in ((TABLET, "tablet"), (PHONE, "phone")):
        page = open_table(new_context, server, viewport)
        unlock(page)
        expect(page.locator("#act-confirm")).to_be_visible()
        expect(page.locator("#confirm-top")).to_contain_text("TOP")
        cards = page.locator(".confirm-card")
        expect(cards).to_have_count(3)
        guesses = _sure_guesses(body["challenge"]["reading"])
        for i, top in enumerate(guesses):
            if top is None:  # no guess where it read nothing, or doubted what it read
                expect(cards.nth(i).locator('.pick[aria-pressed="true"]')).to_have_count(0)
            else:  # the reader's own sure answer, chosen already
                expect(cards.nth(i).locator(f'.pick[data-value="{top}"]')).to_have_attribute("aria-pressed", "true")
        if None in guesses:  # a die to tap still
            expect(page.locator("#confirm-button")).to_be_disabled()
        else:
            expect(page.locator("#confirm-button")).to_be_enabled()
        for i in range(3):
            for v in (1, 6):
                in_view(page, f'#confirm-pickers .pick[data-die="{i}"][data-value="{v}"]')
        in_view(page, "#confirm-button")
        no_sideways_scroll(page)
        keep(page, f"uncertain-{tag}")
    for die, value in enumerate([6, 4, 2]):
        page.click(f'#confirm-pickers .pick[data-die="{die}"][data-value="{value}"]')
    expect(page.locator("#confirm-total")).to_have_text("Total: 12")
    page.click("#confirm-button")
    expect(page.locator("#verdict-total")).to_have_text("12")
    expect(page.locator("#verdict-agreed")).to_have_text(re.compile(r"^Confirmed by the table at .+\.$"))
    saved = server.api("GET", f"/api/challenges/{body['challenge']['id']}").json()
    assert saved["dice"] == [6, 4, 2] and saved["confirmed"]["at"] and saved["confirmed"]["session"].startswith("s-")
    page.goto(server.url + f"/bluffs/{saved['id']}")
    expect(page.locator("#bluff-source")).to_contain_text("Counted: 6 + 4 + 2.")
    expect(page.locator("#bluff-source")).to_contain_text("Confirmed by the table at")


def _sure_guesses(reading: dict[str, Any]) -> list[int | None]:
    """The top face the confirmation cards should choose already for each of the three dice: the
    reader's, where it boxed one to three dice and read this one at or above its ``sure_at``."""
    dice = reading["dice"] if 1 <= len(reading["dice"]) <= 3 else []
    guesses: list[int | None] = [d["top"] if d["confidence"] >= reading["sure_at"] else None for d in dice]
    return guesses + [None] * (3 - len(guesses))


def test_a_doubted_die_is_left_for_the_table_to_tap_and_a_sure_one_is_chosen(server: Server, new_context: Any) -> None:
    """R14: a reading of three boxes, one of them read at 0.18 (a glare spot the detector boxed, as the
    simulated table sometimes draws): its card chooses nothing and says the camera is not sure, so
    "These are the dice" stays off until the table taps that die; the two sure dice are chosen."""
    page = open_table(new_context, server, TABLET)
    reading = {"status": "uncertain", "sure_at": 0.9, "reasons": [], "dice": [
        {"seen": 6, "top": 1, "confidence": 0.18, "box": [72, 267, 112, 112]},
        {"seen": 1, "top": 6, "confidence": 0.997, "box": [758, 112, 66, 66]},
        {"seen": 3, "top": 4, "confidence": 0.999, "box": [940, 325, 59, 59]}]}
    assert _sure_guesses(reading) == [None, 6, 4]
    page.evaluate("""(reading) => {
        const holder = document.createElement("div"); holder.id = "cards-under-test";
        const total = document.createElement("p"); total.id = "total-under-test";
        const state = document.createElement("p"); state.id = "state-under-test";
        document.body.append(holder, total, state);
        Dice.confirmCards(holder, { reading }, null, total, (dice, complete) => {
            state.textContent = JSON.stringify(dice) + (complete ? " complete" : " incomplete"); });
    }""", reading)
    cards = page.locator("#cards-under-test .confirm-card")
    expect(cards).to_have_count(3)
    expect(page.locator("#state-under-test")).to_have_text("[null,6,4] incomplete")
    expect(cards.nth(0).locator('.pick[aria-pressed="true"]')).to_have_count(0)
    expect(cards.nth(0).locator(".card-guess")).to_have_text("The camera is not sure of this one (perhaps 6 below, 1 on top): look at it.")
    expect(cards.nth(1).locator('.pick[data-value="6"]')).to_have_attribute("aria-pressed", "true")
    expect(cards.nth(1).locator(".card-guess")).to_have_text("The camera saw 1 below, so it thinks 6 is on top.")
    expect(cards.nth(2).locator('.pick[data-value="4"]')).to_have_attribute("aria-pressed", "true")
    page.locator('#cards-under-test .pick[data-die="0"][data-value="2"]').dispatch_event("click")  # the cards sit under the page's own screens
    expect(page.locator("#state-under-test")).to_have_text("[2,6,4] complete")
    expect(page.locator("#total-under-test")).to_have_text("Total: 12")


@pytest.mark.parametrize("locale, lang", [("en-GB", "en"), ("pl-PL", "pl")])
def test_dice_found_on_a_second_look_are_said_with_the_languages_plural(server: Server, new_context: Any, locale: str, lang: str) -> None:
    """Tray mode's reason ``second_look`` {n}: the dice the look at the calibrated size missed, said with the
    language's plural for one, two and five dice (Polish has three forms), beside the reading's other reasons."""
    from companion.app.web import i18n

    page = open_table(new_context, server, TABLET, locale)
    for n in (1, 2, 5):
        reading = {"status": "uncertain", "sure_at": 0.95, "dice": [],
                   "reasons": [{"code": "low_confidence", "n": 1, "lowest": 0.41}, {"code": "second_look", "n": n}]}
        said = page.evaluate("(reading) => Dice.reasonText(reading)", reading)
        lowest = page.evaluate("(lang) => new Intl.NumberFormat(lang, { style: 'percent' }).format(0.41)", lang)  # the language's own way
        first = i18n.translate_plural(lang, "reason_low_confidence", "reason_low_confidence_plural", 1, n=1, lowest=lowest)
        second = i18n.translate_plural(lang, "reason_second_look", "reason_second_look_plural", n, n=n)
        assert said == f"{first} {second}" and str(n) in second and "{" not in said


#: one example of every reason code the reader gives (companion.core.reading.REASON_CODES), with its numbers
REASON_EXAMPLES = {"count": {"found": 2, "expected": 3}, "low_confidence": {"n": 2, "lowest": 0.41},
                   "size": {"seen_px": 96, "calibrated_px": 64}, "second_look": {"n": 2}, "calibration": {"frame": [640, 480], "region": [80, 60, 1120, 840]}}


@pytest.mark.parametrize("locale, lang", [("de-DE", "de"), ("pl-PL", "pl")])
def test_every_reason_the_reader_gives_is_said_in_the_tables_language(server: Server, new_context: Any, locale: str, lang: str) -> None:
    """Each reason code a reading carries is said from the page's own catalog, never the reader's English ``reason``
    (the page falls back to it for a code it does not know: a German table must not read English at a Bluff)."""
    from companion.app.web import i18n
    from companion.core.reading import REASON_CODES

    page = open_table(new_context, server, TABLET, locale)
    plural = {"count": "found", "low_confidence": "n", "second_look": "n"}
    for code in REASON_CODES:
        params = REASON_EXAMPLES.get(code, {})
        reading = {"status": "uncertain", "sure_at": 0.95, "dice": [], "reason": "in English", "reasons": [{"code": code, **params}]}
        said = page.evaluate("(reading) => Dice.reasonText(reading)", reading)
        lowest = page.evaluate("(lang) => new Intl.NumberFormat(lang, { style: 'percent' }).format(0.41)", lang)  # "41 %" in German
        shown = {**params, "lowest": lowest} if code == "low_confidence" else {**params, "frame": "640×480"} if code == "calibration" else params
        if code in plural:
            want = i18n.translate_plural(lang, f"reason_{code}", f"reason_{code}_plural", params[plural[code]], **shown)
        else:
            want = i18n.translate(lang, f"reason_{code}", **shown)
        assert said == want and "{" not in said, (code, said)


def test_a_double_tap_on_bluff_calls_one_bluff_and_no_error(server: Server, new_context: Any) -> None:
    game = server.new_game(["Gil", "Hu"], starter=0)
    assert server.api("POST", f"/api/games/{game['id']}/claim", {"amount": 9}).status_code == 200
    page = open_table(new_context, server, TABLET)
    unlock(page)
    expect(page.locator("#bluff")).to_be_enabled()
    server.set_dice([3, 3, 3])
    # Two taps before the first answer: the second finds the button disabled while the request is in flight.
    disabled = page.evaluate("""() => { const b = document.getElementById('bluff'); b.click(); const busy = b.disabled; b.click(); return busy; }""")
    assert disabled is True
    expect(page.locator("#verdict:visible, #act-confirm:visible").first).to_be_visible()
    no_toast(page)
    assert len(server.api("GET", f"/api/games/{game['id']}/challenges").json()["challenges"]) == 1
    expect(page.locator("#bluff")).to_be_enabled()  # enabled again once the answer is in


def test_a_correction_after_game_over_asks_first_names_a_player_and_every_screen_hears_of_it(server: Server, new_context: Any) -> None:
    game = server.new_game(["Ida", "Jon", "Kai"], starter=0, path_length=2)
    assert server.api("POST", f"/api/games/{game['id']}/claim", {"amount": 18}).status_code == 200
    challenge = settle_bluff(server, game["id"], [1, 1, 1])  # 3 < 18: Ida moves 2, onto the red square (R10, R12)
    assert server.api("GET", f"/api/games/{game['id']}").json()["phase"] == "over"
    watcher = new_context(viewport=PHONE)
    watcher.goto(server.url + f"/?game={game['id']}")  # a finished game is no longer "in progress": named
    expect(watcher.locator("#verdict-next")).to_have_text("Ida loses!")
    page = new_context(viewport=TABLET)
    page.goto(server.url + f"/bluffs/{challenge['id']}")
    unlock(page)
    expect(page.locator("#correct-by option")).to_have_text(["the table", "Ida", "Jon", "Kai"])  # no free-text name
    page.select_option("#correct-by", "Kai")
    for die, value in enumerate([6, 6, 5]):  # 17 < 18: still Ida... so 6 6 6: Jon (the caller) moves 2 instead
        page.click(f'#correct-pickers .pick[data-die="{die}"][data-value="6"]')
    page.click("#correct-submit")
    expect(page.locator("#over-dialog")).to_be_visible()
    expect(page.locator("#over-dialog-text")).to_contain_text("Ida has lost this game")
    keep(page, "correct-after-game-over")
    assert server.api("GET", f"/api/games/{game['id']}").json()["loser"] == 0  # nothing sent before the table agrees
    page.click("#over-dialog-ok")
    expect(page.locator("#history li")).to_have_count(1)
    expect(page.locator("#history li")).to_contain_text("Kai changed the dice from 1 + 1 + 1 to 6 + 6 + 6")
    state = server.api("GET", f"/api/games/{game['id']}").json()
    assert state["last_correction"]["by"] == "Kai" and state["last_correction"]["after_game_over"] is True
    # The watcher's screen says who corrected a Bluff, and that the game was over.
    expect(watcher.locator("#prompt-correction")).to_contain_text("Kai corrected a Bluff")
    expect(watcher.locator("#prompt-correction")).to_contain_text("already over")
    # corrected again by the table itself: the sentence it opens starts with a capital, in English as in German
    again = server.api("POST", f"/api/challenges/{challenge['id']}/correct", {"dice": [1, 1, 2], "after_game_over": True})
    assert again.status_code == 200, again.text
    expect(watcher.locator("#prompt-correction")).to_contain_text("The table corrected a Bluff")
    german = new_context(locale="de-DE")
    german.goto(server.url + f"/?game={game['id']}")
    expect(german.locator("#prompt-correction")).to_contain_text("Der Tisch hat einen Bluff korrigiert")


def test_phones_of_360_px_never_scroll_sideways_and_thirty_squares_fit(server: Server, new_context: Any) -> None:
    names = ["Alexandrina", "Bo", "Christophorus", "Di", "Emmanuelle", "Fe", "Gwendolyn", "Ho", "Ignatius", "Jo"]
    game = server.new_game(names, starter=0, path_length=30)
    assert server.api("POST", f"/api/games/{game['id']}/claim", {"amount": 9}).status_code == 200
    challenge = settle_bluff(server, game["id"], [1, 2, 3])
    page = new_context(viewport={"width": 360, "height": 740})
    page.goto(server.url + "/")
    past_the_verdict(page)
    rows = page.locator(".path-row")
    expect(rows).to_have_count(10)
    for seat in (0, 9):
        last = page.locator(f'.path-row[data-seat="{seat}"] .cell-last').bounding_box()
        assert last["x"] + last["width"] <= 360, last  # the red square is on screen
    expect(page.locator(".path-row .name").first).to_have_attribute("title", "Alexandrina")  # a cut name in full on a long press
    no_sideways_scroll(page)
    keep(page, "score-phone-ten-players")
    # Scrolled down to the last path, the turn banner is still in sight.
    page.locator('.path-row[data-seat="9"]').scroll_into_view_if_needed()
    page.evaluate("() => window.scrollTo(0, document.body.scrollHeight)")
    in_view(page, "#turn")
    for path in ("/rules", f"/bluffs?game={game['id']}", f"/bluffs/{challenge['id']}"):
        page.goto(server.url + path)
        expect(page.locator("body")).not_to_have_attribute("data-control", "unknown")
        page.wait_for_load_state("networkidle") if path.startswith("/bluffs") else None
        no_sideways_scroll(page)
        top = page.locator(".topbar").bounding_box()
        assert top["height"] <= 110, top  # the header leaves the screen to the game
    keep(page, "bluff-phone")
    page.goto(server.url + f"/bluffs?game={game['id']}")
    expect(page.locator("#bluff-rows tr")).to_have_count(1)
    no_sideways_scroll(page)
    keep(page, "bluffs-phone")


def test_set_up_fits_a_phone_and_the_table_can_play_without_the_camera(server: Server, new_context: Any) -> None:
    page = new_context(viewport=PHONE)
    page.goto(server.url + "/")
    unlock(page)
    to_setup(page)
    rows = page.locator("#seat-list .seat")
    for i, (name, age) in enumerate([("Lena-Sophie Wittgenstein", "9"), ("Mo", "7")]):
        rows.nth(i).locator(".seat-name").fill(name)
        rows.nth(i).locator(".seat-age").fill(age)
    rows.nth(2).locator(".seat-remove").click()
    page.fill("#path-length", "2")
    no_sideways_scroll(page)
    page.check("#setup-no-camera")
    keep(page, "setup-phone")
    try:
        page.click("#start-game")
        expect(page.locator("#turn-name")).to_have_text("Mo's turn")
        assert server.api("GET", "/api/table").json()["camera"] == "off"
        # The round's history: what was claimed and believed, never a die (R13).
        page.click('#claim-grid button[data-amount="9"]')
        page.click("#pass-ok")
        expect(page.locator("#claims-history li")).to_have_text(["Mo claimed 9"])
        expect(page.locator("#sim-dice")).to_be_hidden()  # nothing to simulate: the table types the dice
        page.click("#bluff")
        expect(page.locator("#confirm-title")).to_have_text("Type the dice")
        expect(page.locator("#confirm-reason")).to_have_text("The table plays without the camera: tap the three top faces.")
        expect(page.locator(".confirm-card .crop:not(.crop-none)")).to_have_count(0)  # no photo to cut dice from
        expect(page.locator('.confirm-card .pick[aria-pressed="true"]')).to_have_count(0)
        keep(page, "typed-dice-phone")
        for die, value in enumerate([1, 2, 3]):
            page.click(f'#confirm-pickers .pick[data-die="{die}"][data-value="{value}"]')
        page.click("#confirm-button")
        expect(page.locator("#verdict-move")).to_have_text("Mo moves 1 step")  # 6 < 9 (R9)
        page.click("#verdict-close")
        game = server.api("GET", "/api/games/current").json()
        assert server.api("POST", f"/api/games/{game['id']}/claim", {"amount": 9}).status_code == 200
        page.click("#bluff")
        for die in range(3):
            page.click(f'#confirm-pickers .pick[data-die="{die}"][data-value="1"]')
        page.click("#confirm-button")
        expect(page.locator("#verdict-close")).to_have_text("See the result")
        page.click("#verdict-close")
        expect(page.locator("#over")).to_be_visible()
        expect(page.locator("#tally li")).to_have_count(2)
        expect(page.locator("#tally li").first).to_contain_text("Mo")
        expect(page.locator("#tally li").first).to_contain_text("lost 1 time")
        keep(page, "game-over-tally-phone")
        # Rematch: the same players, the loser starts; the evening's tally follows the games.
        page.click("#over-rematch")
        expect(page.locator("#turn-name")).to_have_text("Mo's turn")
        expect(page.locator(".path-row .name")).to_have_text(["Lena-Sophie Wittgenstein", "Mo"])
        rematch = server.api("GET", "/api/games/current").json()
        assert rematch["rematch_of"] == game["id"]
    finally:
        assert server.api("POST", "/api/table", {"camera": "auto"}).status_code == 200


def test_the_simulated_dice_are_set_from_the_page(server: Server, new_context: Any) -> None:
    game = server.new_game(["Nia", "Oli"], starter=0)
    assert server.api("POST", f"/api/games/{game['id']}/claim", {"amount": 5}).status_code == 200
    page = open_table(new_context, server, TABLET, "de-DE")
    unlock(page)
    expect(page.locator("#sim-dice")).to_be_visible()
    page.click("#sim-dice summary")
    for die, value in enumerate([2, 3, 4]):
        page.click(f'#sim-pickers .pick[data-die="{die}"][data-value="{value}"]')
    page.click("#sim-set")
    expect(page.locator("#sim-done")).to_have_text("Im simulierten Becher: 2 + 3 + 4.")
    page.click("#bluff")
    expect(page.locator("#verdict:visible, #act-confirm:visible").first).to_be_visible()
    if page.locator("#act-confirm").is_visible():  # the reader was unsure of the rendered dice (R14)
        for die, value in enumerate([2, 3, 4]):
            page.click(f'#confirm-pickers .pick[data-die="{die}"][data-value="{value}"]')
        page.click("#confirm-button")
    expect(page.locator("#verdict-total")).to_have_text("9")
    expect(page.locator("#verdict-held")).to_have_text("Die Ansage stimmte: 9 Elefanten bei einer Ansage von 5.")
    keep(page, "verdict-tablet-de")


def test_after_a_reload_the_last_games_end_with_rematch_and_the_tally_is_a_link_away(server: Server, new_context: Any) -> None:
    """A finished game is no longer in progress, so a reload (or another tablet) opens on the set-up; the line about the
    last game leads to its end, where Rematch and tonight's tally are, as they were before the reload."""
    game = server.new_game(["Pia", "Quin"], starter=0, path_length=2)
    assert server.api("POST", f"/api/games/{game['id']}/claim", {"amount": 18}).status_code == 200
    settle_bluff(server, game["id"], [1, 1, 1])  # 3 < 18: Pia moves 2, onto the red square (R10, R12)
    page = new_context(viewport=TABLET, locale="pl-PL")
    page.goto(server.url + "/")
    unlock(page)
    expect(page.locator("#setup")).to_be_visible()
    expect(page.locator("#setup-last")).to_contain_text("Pia")
    page.click("#setup-last-open")
    expect(page.locator("#verdict-next")).to_contain_text("Pia")  # the last Bluff's verdict, then the game's end
    page.click("#verdict-close")
    expect(page.locator("#over")).to_be_visible()
    expect(page.locator("#tally li").first).to_contain_text("Pia")
    page.click("#over-rematch")
    expect(page.locator(".path-row .name")).to_have_text(["Pia", "Quin"])
    assert server.api("GET", "/api/games/current").json()["rematch_of"] == game["id"]


def test_a_correction_that_would_reopen_a_game_the_table_played_on_from_is_refused_in_words(server: Server, new_context: Any, console: Any) -> None:
    """The table lost, played the rematch; then a Bluff of the lost game is corrected so that nobody would be on the
    red square: that game cannot go on beside the rematch, and the page says why in the player's language."""
    from companion.app.web import i18n

    console.allow("status of 409")  # the refusal this test causes

    game = server.new_game(["Rui", "Sol"], starter=0, path_length=3)
    for _ in range(2):  # Rui claims 18 on 1+1+1 twice: +2, +2 onto the red square (R10, R12)
        assert server.api("POST", f"/api/games/{game['id']}/claim", {"amount": 18}).status_code == 200
        last = settle_bluff(server, game["id"], [1, 1, 1])
    assert server.api("POST", f"/api/games/{game['id']}/rematch").status_code == 201
    page = new_context(viewport=TABLET, locale="it-IT")
    page.goto(server.url + f"/bluffs/{last['id']}")
    unlock(page)
    for die in range(3):
        page.click(f'#correct-pickers .pick[data-die="{die}"][data-value="6"]')
    page.click("#correct-submit")
    page.click("#over-dialog-ok")
    expect(page.locator("#toast")).to_have_text(i18n.translate("it", "err_game_followed"))
    assert server.api("GET", f"/api/games/{game['id']}").json()["loser"] == 0


def test_a_second_tablets_rematch_tap_shows_the_rematch_and_says_nothing(server: Server, new_context: Any, console: Any) -> None:
    """Two tablets tap Rematch together: one makes it, the other is refused (``rematched``). That one said "That is not
    possible right now" over a rematch already made; it shows the rematch, no words needed."""
    console.allow("status of 409")  # the refusal this test causes, as Chromium logs any refused request
    game = server.new_game(["Pia", "Quin"], starter=0, path_length=2)
    assert server.api("POST", f"/api/games/{game['id']}/claim", {"amount": 18}).status_code == 200
    settle_bluff(server, game["id"], [1, 1, 1])  # 3 < 18: Pia moves 2, onto the red square (R10, R12)
    page = new_context(viewport=TABLET)
    # this tablet does not hear the other's rematch before its own tap lands: its live stream says nothing
    page.route(re.compile(r".*/api/events(\?.*)?$"), lambda route: route.fulfill(body="retry: 600000\n\n", content_type="text/event-stream"))
    page.goto(server.url + "/")
    unlock(page)
    page.click("#setup-last-open")
    page.click("#verdict-close")
    expect(page.locator("#over")).to_be_visible()
    rematch = server.api("POST", f"/api/games/{game['id']}/rematch")  # the other tablet's tap, first
    assert rematch.status_code == 201
    page.click("#over-rematch")
    expect(page.locator(".path-row .name")).to_have_text(["Pia", "Quin"])
    expect(page.locator("#over")).to_be_hidden()
    assert page.evaluate("() => new URL(location.href).pathname") == "/"
    no_toast(page)
    assert server.api("GET", "/api/games/current").json()["id"] == rematch.json()["id"]  # one rematch, not two
