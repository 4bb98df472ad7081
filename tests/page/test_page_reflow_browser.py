"""The page reflows for every player, in a real Chromium against a real ``serve --simulate`` (audit 69, §5-7 and §9):
a phone at 200 % zoom (320 CSS px wide), the browser's own default text size, words that are long in some of the
nine languages (a 390×844 phone, a 1024×768 tablet), less motion, and a live badge that is not a colour alone.

Each check measures the page as the player sees it: the page never wider than the screen, a button wholly inside
it, a word no wider than its box.
"""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import expect

from pagehelpers import (PHONE, SHORT_PHONE, SHORT_SIDEWAYS_UNDER_BARS, SHORT_TABLET, SHORTER_PHONE, SHORTER_SIDEWAYS_PHONE, SHORTEST_TABLET,
                         SIDEWAYS, SIDEWAYS_IDS, SIDEWAYS_PHONE, TABLET, TABLET_1024, TABLET_UNDER_BARS, ZOOMED, Server, above_the_footer,
                         no_sideways_scroll, past_the_verdict, settle_bluff, unlock)

pytestmark = pytest.mark.browser

NINE = ["en", "fr", "nl", "de", "it", "es", "pl", "ro", "da"]
NAMES = ["Magdalena", "Christophe", "Bo"]  # the audit's players


def whole(page: Any, selector: str) -> None:
    """Every shown element of ``selector`` lies wholly inside the screen's width and its words inside its box."""
    found = page.locator(selector).evaluate_all("""(els) => els.filter((e) => e.getClientRects().length).map((e) => {
        const r = e.getBoundingClientRect();
        return { what: (e.id ? '#' + e.id : e.className) + ' "' + e.textContent.trim().slice(0, 40) + '"',
                 left: r.left, right: r.right, overflow: e.scrollWidth - e.clientWidth };
    })""")
    assert found, f"nothing shown for {selector} on {page.url}"
    width = page.viewport_size["width"]
    for f in found:
        assert f["left"] >= -0.5 and f["right"] <= width + 0.5, f"{f['what']} spans x={f['left']:.0f}..{f['right']:.0f} of {width} ({page.url})"
        assert f["overflow"] <= 1, f"{f['what']} is {f['overflow']} px wider than its box ({page.url})"


def text_whole(page: Any, selector: str) -> None:
    """The text of each shown element of ``selector`` is drawn whole inside its box: not ellipsised, not cut."""
    found = page.locator(selector).evaluate_all("""(els) => els.filter((e) => e.getClientRects().length).map((e) => {
        const range = document.createRange(); range.selectNodeContents(e);
        const t = range.getBoundingClientRect(), r = e.getBoundingClientRect();
        return { text: e.textContent, text_right: t.right, box_right: r.right, scroll: e.scrollWidth, client: e.clientWidth };
    })""")
    assert found, f"nothing shown for {selector} on {page.url}"
    for f in found:
        assert f["scroll"] <= f["client"] and f["text_right"] <= f["box_right"] + 0.5, f



def words_unbroken(page: Any, selector: str, lang: str) -> None:
    """No word of a shown element of ``selector`` is wider than the element: none is broken across two lines
    ("MINDESTEN" over "S")."""
    found = page.locator(selector).evaluate_all("""(els) => els.filter((e) => e.getClientRects().length).map((e) => {
        const probe = document.createElement('span');
        probe.style.whiteSpace = 'nowrap';
        e.appendChild(probe);
        const widest = Math.max(...e.textContent.split(/\\s+/).filter(Boolean).map((w) => { probe.textContent = w; return probe.getBoundingClientRect().width; }));
        e.removeChild(probe);
        const style = getComputedStyle(e);
        return { text: e.textContent, widest, room: e.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight) };
    })""")
    assert found, f"nothing shown for {selector}"
    for f in found:
        assert f["widest"] <= f["room"] + 0.5, (lang, f)


def open_with_control(new_context: Any, server: Server, viewport: dict[str, int], path: str = "/", locale: str = "de-DE") -> Any:
    page = new_context(locale=locale, viewport=viewport)
    page.goto(server.url + path)
    unlock(page)
    expect(page.locator("body")).to_have_attribute("data-control", "yes")
    return page


def test_at_200_percent_zoom_on_a_phone_bluff_and_the_pass_dialogs_back_button_are_whole(server: Server, new_context: Any) -> None:
    """The audit's German phone at 320 CSS px: the page scrolled sideways, Bluff! ended at x=379, the claim grid was
    12 px too wide, "Nächste Ansage mindestens" stuck out and the pass dialog's Zurück began at x=-53."""
    game = server.new_game(NAMES, starter=0)
    page = open_with_control(new_context, server, ZOOMED)
    expect(page.locator("#act-claim")).to_be_visible()
    no_sideways_scroll(page)
    whole(page, ".claim-option")
    whole(page, ".claim-box > div")
    whole(page, ".claim-box .label")

    page.click('.claim-option[data-amount="9"]')
    expect(page.locator("#pass-dialog")).to_be_visible()
    no_sideways_scroll(page)
    whole(page, "#pass-back")
    whole(page, "#pass-ok")

    page.click("#pass-ok")
    expect(page.locator("#act-decide")).to_be_visible()
    no_sideways_scroll(page)
    whole(page, "#believe")
    whole(page, "#bluff")
    whole(page, "#peek-toggle")

    server.set_dice([1, 2, 3])
    page.click("#bluff")
    expect(page.locator("#verdict:visible, #act-confirm:visible").first).to_be_visible()
    if page.locator("#act-confirm").is_visible():  # the reader was unsure: the table taps the dice
        no_sideways_scroll(page)
        for die, value in enumerate([1, 2, 3]):
            page.click(f'#confirm-pickers .pick[data-die="{die}"][data-value="{value}"]')
        page.click("#confirm-button")
    expect(page.locator("#verdict")).to_be_visible()
    no_sideways_scroll(page)
    whole(page, "#verdict-close")
    whole(page, "#verdict-replay")
    assert server.api("GET", f"/api/games/{game['id']}").json()["phase"] == "claim"


@pytest.mark.parametrize("viewport", [PHONE, SHORT_PHONE, SHORTER_PHONE, ZOOMED, TABLET_1024, TABLET, TABLET_UNDER_BARS, SHORT_TABLET,
                                      SHORTEST_TABLET, *SIDEWAYS],
                         ids=["phone", "short-phone", "shorter-phone", "zoomed-phone", "tablet", "wide-tablet", "wide-tablet-under-bars", "short-tablet",
                              "shortest-tablet", *SIDEWAYS_IDS])
def test_the_claim_and_the_decision_fit_the_screen_in_every_language(server: Server, new_context: Any, viewport: dict[str, int]) -> None:
    """Italian "PROSSIMA ALMENO" made the claim box 3 px too wide on a 390 px phone; German "glauben oder Bluff?", the
    note that tells the deciding player what to do, was ellipsised on the 1024 px tablet (222 > 217 px). On a 360×740
    phone the claims 11 to 18 and the Bluff button lay under the screen's edge in every language (the 200 % zoom's
    layout, claims four to a row and each box and button on a row of its own, reached 360 px phones), and on a 360×640
    one the claims from 12 in most languages (French and German to y=725). Tablets scrolled their panel for the last
    claims: the 1024×768 one in seven languages (French to y=867, its top bar on two rows), the 1280×800 one in French
    and Spanish (and in more under its browser's bars, 1280×720), a 7-inch 1024×600 one in all nine, and the page 18 px
    more, under a screen reader's line; a 390×844 phone in French (to y=877), where German "MINDESTENS" also broke over
    two lines. On every screen but the 200 % zoom, every claim and both decisions are in view without scrolling, and a
    tablet's page never scrolls; no word of the claim's labels is broken."""
    server.new_game(NAMES, starter=0)
    page = open_with_control(new_context, server, viewport)
    for lang in NINE:
        page.goto(server.url + f"/?lang={lang}")
        expect(page.locator("#act-claim")).to_be_visible()
        no_sideways_scroll(page)
        whole(page, ".claim-box > div")
        whole(page, ".claim-box .label")
        words_unbroken(page, ".claim-box .label", lang)
        whole(page, ".claim-option")
        text_whole(page, ".path-row.is-turn .path-note")
        if viewport is not ZOOMED:
            _wholly_in_view(page, ".claim-option", lang)
        if viewport in SIDEWAYS:
            _wholly_in_view(page, "#turn, #claim-box, #prompt", lang)  # beside the claims: whose turn, the claim, what to do
    game = server.api("GET", "/api/games/current").json()
    assert server.api("POST", f"/api/games/{game['id']}/claim", {"amount": 9}).status_code == 200
    for lang in NINE:
        page.goto(server.url + f"/?lang={lang}")
        expect(page.locator("#act-decide")).to_be_visible()
        no_sideways_scroll(page)
        whole(page, "#believe")
        whole(page, "#bluff")
        text_whole(page, ".path-row.is-turn .path-note")  # "glauben oder Bluff?"
        if viewport is not ZOOMED:
            _wholly_in_view(page, "#believe, #bluff", lang)
        if viewport in SIDEWAYS:
            _wholly_in_view(page, "#turn, #claim-box, #prompt, #peek-toggle", lang)


@pytest.mark.parametrize("viewport", SIDEWAYS, ids=SIDEWAYS_IDS)
def test_on_a_phone_held_sideways_the_pass_and_pin_dialogs_show_their_words_and_buttons(server: Server, new_context: Any, viewport: dict[str, int]) -> None:
    """The dialog that hands the cup on (its claim, to whom, Back and the go-ahead) and the PIN's (its field, Cancel and
    the go-ahead) in view on a phone held sideways, in each of the nine languages: a tap on a claim must not leave its
    confirmation under the screen's edge."""
    server.new_game(NAMES, starter=0)
    page = open_with_control(new_context, server, viewport)
    for lang in NINE:
        page.goto(server.url + f"/?lang={lang}")
        page.click('.claim-option[data-amount="9"]')
        expect(page.locator("#pass-dialog")).to_be_visible()
        no_sideways_scroll(page)
        _wholly_in_view(page, "#pass-dialog h2, #pass-amount, #pass-back, #pass-ok", lang)
        size = page.locator("#pass-amount").evaluate("(e) => parseFloat(getComputedStyle(e).fontSize)")
        assert size >= 36, (lang, f"the claim handed on is {size} px: the number the table reads from across it")
        page.click("#pass-back")
        expect(page.locator("#pass-dialog")).to_be_hidden()
        page.click("#pin-lock")  # the PIN dialog, on a device that was locked
        page.click("#pin-open")
        expect(page.locator("#pin-dialog")).to_be_visible()
        _wholly_in_view(page, "#pin-dialog h2, #pin-input, #pin-cancel, #pin-submit", lang)
        page.click("#pin-cancel")
        expect(page.locator("#pin-dialog")).to_be_hidden()
        unlock(page)


def _wholly_in_view(page: Any, selector: str, lang: str) -> None:
    """Every element of ``selector`` lies inside the screen, top to bottom: no scroll finds it. On a tablet (the board
    beside the panel, each scrolling on its own) the page itself does not scroll either."""
    if page.viewport_size["width"] > 900:
        height = page.evaluate("() => document.documentElement.scrollHeight")
        assert height <= page.viewport_size["height"], (lang, f"the page is {height} px tall on a {page.viewport_size['height']} px screen")
    for box in page.locator(selector).evaluate_all("(els) => els.map((e) => { const r = e.getBoundingClientRect(); return { top: r.top, bottom: r.bottom, text: e.textContent }; })"):
        assert box["top"] >= 0 and box["bottom"] <= page.viewport_size["height"], (lang, selector, box)


def test_with_ten_players_the_deciding_players_note_is_whole_and_keeps_to_its_row(server: Server, new_context: Any) -> None:
    """Ten rows share the tablet's height: the note of the player to act, whole now, still ends above the next row."""
    game = server.new_game(["Aleksandra", "Bartholomew", "Małgorzata", "Krzysztof", "Zbigniew", "Maximiliane", "Christophorus",
                            "Gwendolyn", "Emmanuelle", "Ignatius"], starter=0)
    assert server.api("POST", f"/api/games/{game['id']}/claim", {"amount": 9}).status_code == 200
    page = open_with_control(new_context, server, TABLET)
    for lang in ("de", "es", "fr"):
        page.goto(server.url + f"/?lang={lang}")
        expect(page.locator("#act-decide")).to_be_visible()
        text_whole(page, ".path-row.is-turn .path-note")
        rows = page.locator(".path-row").evaluate_all("(els) => els.map((e) => { const r = e.getBoundingClientRect();"
                                                       " const n = e.querySelector('.path-note').getBoundingClientRect(); return [r.top, r.bottom, n.bottom, e.classList.contains('is-turn')]; })")
        turn = next(i for i, r in enumerate(rows) if r[3])
        assert rows[turn][2] <= rows[turn][1] + 0.5, rows[turn]  # the note inside its own row
        assert rows[turn][1] <= rows[turn + 1][0] + 0.5, (rows[turn], rows[turn + 1])


@pytest.mark.parametrize("locale", ["fr-FR", "es-ES"])
def test_the_game_over_buttons_wrap_on_a_phone(server: Server, new_context: Any, locale: str) -> None:
    """Bluffs / Revanche / Nouvelle partie were one row 17 px (fr) or 3 px (es) wider than a 390 px phone."""
    game = server.new_game(NAMES, starter=0, path_length=2)
    assert server.api("POST", f"/api/games/{game['id']}/claim", {"amount": 18}).status_code == 200
    settle_bluff(server, game["id"], [1, 1, 1])  # 3 < 18: Magdalena moves 2, onto the red square
    assert server.api("GET", f"/api/games/{game['id']}").json()["phase"] == "over"
    for viewport in (PHONE, ZOOMED):
        page = open_with_control(new_context, server, viewport, f"/?game={game['id']}", locale)
        past_the_verdict(page)
        expect(page.locator("#over")).to_be_visible()
        no_sideways_scroll(page)
        for button in ("#over-bluffs", "#over-rematch", "#over-new"):
            whole(page, button)


def test_the_evenings_tally_shows_each_name_whole_on_a_phone(server: Server, new_context: Any) -> None:
    """The Polish phone's tally cut "Christophe" to "Christo…": a name the table cannot read. It wraps instead."""
    game = server.new_game(NAMES, starter=0, path_length=2)
    assert server.api("POST", f"/api/games/{game['id']}/claim", {"amount": 18}).status_code == 200
    settle_bluff(server, game["id"], [1, 1, 1])
    for viewport in (PHONE, ZOOMED):
        page = open_with_control(new_context, server, viewport, f"/?game={game['id']}", "pl-PL")
        past_the_verdict(page)
        expect(page.locator("#tally li")).to_have_count(3)
        no_sideways_scroll(page)
        text_whole(page, "#tally .name")
        expect(page.locator("#tally .name")).to_have_text(NAMES)


@pytest.mark.parametrize("viewport", [TABLET_1024, PHONE, ZOOMED], ids=["tablet", "phone", "zoomed-phone"])
def test_the_die_pickers_label_never_runs_into_its_first_face(server: Server, new_context: Any, viewport: dict[str, int]) -> None:
    """"Steen 1", "Würfel 1", "Terning 1" were wider than their 2.8 rem (phone) or 4.2 rem (tablet) column and ran into
    the first face button, in the replay's correction form and in the simulation's dice panel."""
    game = server.new_game(NAMES, starter=0)
    assert server.api("POST", f"/api/games/{game['id']}/claim", {"amount": 9}).status_code == 200
    page = open_with_control(new_context, server, viewport)
    check = """(rows) => rows.filter((r) => r.getClientRects().length).map((r) => {
        const label = r.querySelector('.pick-label'), range = document.createRange();
        range.selectNodeContents(label);
        const text = range.getBoundingClientRect(), first = r.querySelector('.pick').getBoundingClientRect();
        const spill = [...r.querySelectorAll('.pick')].filter((b) => {
            const p = b.getBoundingClientRect(), d = b.querySelector('.die').getBoundingClientRect();
            return d.left < p.left - .5 || d.right > p.right + .5; }).length;
        // the label beside the faces ends before the first; a label on a row of its own ends above them
        return { label: label.textContent, clear: text.right <= first.left + .5 || text.bottom <= first.top + .5, spill };
    })"""
    for lang in ("nl", "de", "da"):
        page.goto(server.url + f"/?lang={lang}")
        expect(page.locator("#sim-dice")).to_be_visible()
        page.click("#sim-dice summary")
        rows = page.locator("#sim-pickers .pick-row").evaluate_all(check)
        assert len(rows) == 3 and all(r["clear"] and r["spill"] == 0 for r in rows), (lang, rows)
        no_sideways_scroll(page)
    challenge = settle_bluff(server, game["id"], [3, 3, 3])
    for lang in ("nl", "de", "da"):
        page.goto(server.url + f"/bluffs/{challenge['id']}?lang={lang}")
        expect(page.locator("#correct-pickers .pick")).to_have_count(18)
        rows = page.locator("#correct-pickers .pick-row").evaluate_all(check)
        assert len(rows) == 3 and all(r["clear"] and r["spill"] == 0 for r in rows), (lang, rows)
        no_sideways_scroll(page)


def test_the_polish_bluffs_list_on_a_tablet_shows_its_open_button_without_a_sideways_scroll(server: Server, new_context: Any) -> None:
    """"Otwórz" lay past the right edge of the 1024 px tablet's list, inside a box that scrolled sideways."""
    game = server.new_game(NAMES, starter=0)
    assert server.api("POST", f"/api/games/{game['id']}/claim", {"amount": 9}).status_code == 200
    settle_bluff(server, game["id"], [3, 3, 3])
    for viewport in (TABLET_1024, PHONE, ZOOMED):
        page = new_context(locale="pl-PL", viewport=viewport)
        page.goto(server.url + f"/bluffs?game={game['id']}")
        expect(page.locator("#bluff-rows tr")).to_have_count(1)
        no_sideways_scroll(page)
        scroll = page.locator(".table-scroll").evaluate("(e) => [e.scrollWidth, e.clientWidth, e.getBoundingClientRect().right]")
        assert scroll[0] <= scroll[1], f"the list scrolls sideways: {scroll[0]} > {scroll[1]}"
        open_button = page.locator("#bluff-rows a.btn").bounding_box()
        assert open_button["x"] + open_button["width"] <= min(scroll[2], viewport["width"]) + 0.5, (open_button, scroll)


def test_the_page_follows_the_browsers_default_text_size(server: Server, new_context: Any) -> None:
    """The root's 18 px ignored a player's "Very large" text (Chromium's default font size 24 or 32 px): it is
    112.5 % of that setting, 18 px at the usual 16 px, and every rem of the page grows with it."""
    page = new_context(viewport=TABLET_1024)
    page.goto(server.url + "/rules")
    assert page.evaluate("getComputedStyle(document.documentElement).fontSize") == "18px"
    large = new_context(viewport=TABLET_1024)
    cdp = large.context.new_cdp_session(large)
    cdp.send("Page.enable")
    cdp.send("Page.setFontSizes", {"fontSizes": {"standard": 32, "fixed": 26}})
    large.goto(server.url + "/rules")
    assert large.evaluate("getComputedStyle(document.documentElement).fontSize") == "36px"
    assert large.evaluate("getComputedStyle(document.querySelector('h1')).fontSize") == "72px"  # 2rem


def test_less_motion_stops_the_elephants_slide_and_the_moved_rows_flash(server: Server, new_context: Any) -> None:
    """``prefers-reduced-motion`` stopped the count-up, not the 1.4 s elephant slide nor the "just moved" flash."""
    server.new_game(NAMES, starter=0)
    page = new_context(viewport=TABLET)
    page.goto(server.url + "/")
    expect(page.locator(".path-row .elephant")).to_have_count(3)
    motion = """() => { const row = document.querySelector('.path-row'); row.classList.add('just-moved');
        const e = getComputedStyle(row.querySelector('.elephant')), r = getComputedStyle(row);
        return [e.transitionDuration, r.animationName]; }"""
    assert page.evaluate(motion) == ["1.4s", "moved"]
    page.emulate_media(reduced_motion="reduce")
    duration, animation = page.evaluate(motion)
    assert duration in ("0s", "") and animation == "none", (duration, animation)


def test_on_a_phone_the_live_badge_says_its_state_by_a_sign_not_by_colour_alone(server: Server, new_context: Any) -> None:
    """The phone's badge was a red or a green dot with its words at font-size 0: a red-green pair for a colour-blind player."""
    server.new_game(NAMES, starter=0)
    page = new_context(viewport=PHONE)
    page.goto(server.url + "/")
    expect(page.locator("#live")).to_have_attribute("data-state", "on")
    sign = """() => { const b = document.getElementById('live'), s = getComputedStyle(b, '::before'), r = b.getBoundingClientRect();
        return { content: s.content, size: parseFloat(s.fontSize), width: r.width, height: r.height, radius: getComputedStyle(b).borderTopLeftRadius }; }"""
    on = page.evaluate(sign)
    page.evaluate("document.getElementById('live').dataset.state = 'off'")  # as while the stream reconnects
    off = page.evaluate(sign)
    for state in (on, off):
        assert state["content"] not in ("none", "normal", '""') and state["size"] >= 12, state
        assert state["width"] >= 18 and state["height"] >= 18, state
    assert "✓" in on["content"] and on["content"] != off["content"], (on, off)
    assert on["radius"] != off["radius"], "the two states differ in shape too"


@pytest.mark.parametrize("viewport", [SHORT_TABLET, SHORTEST_TABLET, SIDEWAYS_PHONE, SHORTER_SIDEWAYS_PHONE, SHORT_SIDEWAYS_UNDER_BARS],
                         ids=["short-tablet", "shortest-tablet", "sideways-phone", "shorter-sideways-phone", "short-sideways-phone-under-bars"])
@pytest.mark.parametrize("locale", ["fr-FR", "de-DE", "pl-PL"])
def test_on_a_short_screen_the_verdicts_count_and_who_moves_are_above_its_footer(server: Server, new_context: Any, locale: str, viewport: dict[str, int]) -> None:
    """On a 7-inch 1024×600 tablet (1024×552 under its browser's bars) the reveal showed its title and the dice, and the
    claim against the count, the verdict and who moves lay under its footer: the table scrolled to learn who lost. A
    phone held sideways showed the title and the dice alone (half of them, 640×360), and a 1024×472 tablet (the 7-inch
    one under its navigation bar too) the count but not who moves. The count and who moves sit beside the dice there."""
    game = server.new_game(["Maximiliane-Theresa", "Bartholomäus", "Cy"], starter=0)
    assert server.api("POST", f"/api/games/{game['id']}/claim", {"amount": 10}).status_code == 200
    settle_bluff(server, game["id"], [6, 5, 4])
    page = new_context(locale=locale, viewport=viewport)
    page.goto(server.url + "/")
    expect(page.locator("#verdict")).to_be_visible()
    expect(page.locator("#verdict-total")).to_have_text("15")  # counted up: the reveal is whole
    foot = page.locator("#verdict .overlay-foot").bounding_box()
    assert foot["y"] + foot["height"] <= viewport["height"] + 0.5, foot
    above_the_footer(page, "#verdict .overlay-foot", ("#verdict-title", "#verdict-dice", "#verdict-total", "#verdict-held", "#verdict-move"), locale)
    no_sideways_scroll(page)
    whole(page, "#verdict-close")
