"""Every word on the table's screen is readable: its contrast with what lies behind it is at least WCAG's 4.5:1
(3:1 for large text), measured in a real Chromium on the board, the verdict, the game's end and the other pages.

Found by an audit of the pages: the white 7 on the red last square was 4.23:1.
"""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import expect

from pagehelpers import TABLET, Server, settle_bluff, unlock

pytestmark = pytest.mark.browser

#: For each shown element holding words of its own: its text colour against the first opaque background behind it
#: (an element's own, or an ancestor's), with the font's size and weight. Colours are the computed rgb(a) values.
MEASURE = """() => {
  const parse = (c) => { const m = c.match(/rgba?\\(([^)]+)\\)/); if (!m) return null; const p = m[1].split(/[ ,\\/]+/).filter(Boolean).map(Number); return [p[0], p[1], p[2], p.length > 3 ? p[3] : 1]; };
  const lum = ([r, g, b]) => { const f = (c) => { c /= 255; return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4; }; return 0.2126 * f(r) + 0.7152 * f(g) + 0.0722 * f(b); };
  const behind = (e) => { for (let n = e; n; n = n.parentElement) { const s = getComputedStyle(n); if (s.backgroundImage !== 'none') return null; const c = parse(s.backgroundColor); if (c && c[3] >= 0.99) return c; } return [255, 255, 255, 1]; };
  const out = [];
  for (const e of document.querySelectorAll('body *')) {
    if (!e.getClientRects().length || e.closest('[hidden], [inert], .sr-only, svg, script, style, template, option')) continue;
    const own = [...e.childNodes].some((n) => n.nodeType === 3 && n.textContent.trim());
    if (!own) continue;
    const s = getComputedStyle(e);
    if (s.visibility === 'hidden' || Number(s.opacity) === 0) continue;
    const fg = parse(s.color), bg = behind(e);
    if (!fg || !bg) continue;
    const a = lum(fg) + 0.05, b = lum(bg) + 0.05;
    const size = parseFloat(s.fontSize), bold = Number(s.fontWeight) >= 700;
    out.push({ what: (e.id ? '#' + e.id : e.tagName.toLowerCase() + '.' + e.className) + ' "' + e.textContent.trim().slice(0, 30) + '"',
               ratio: Math.max(a, b) / Math.min(a, b), large: size >= 24 || (bold && size >= 18.66) });
  }
  return out;
}"""


def readable(page: Any, where: str) -> None:
    found = page.evaluate(MEASURE)
    assert found, f"no words measured on {where}"
    low = [f for f in found if f["ratio"] < (3.0 if f["large"] else 4.5)]
    assert not low, f"{where}: " + "; ".join(f"{f['what']} {f['ratio']:.2f}:1" for f in low)


def test_every_word_on_the_board_the_verdict_and_the_games_end_is_readable(server: Server, new_context: Any) -> None:
    game = server.new_game(["Ann", "Ben", "Cy"], starter=0, path_length=2)
    page = new_context(viewport=TABLET)
    page.goto(server.url + "/")
    unlock(page)
    expect(page.locator("#claim-grid button").first).to_be_visible()
    readable(page, "the board")
    assert server.api("POST", f"/api/games/{game['id']}/claim", {"amount": 18}).status_code == 200
    challenge = settle_bluff(server, game["id"], [1, 1, 1])  # 3 < 18: Ann moves 2, onto the red square (R10, R12)
    expect(page.locator("#verdict")).to_be_visible()
    expect(page.locator("#verdict-total")).to_have_text("3")  # the total counted up
    page.wait_for_function("() => document.getAnimations().every((a) => a.playState !== 'running')")  # the slide done
    readable(page, "the verdict")
    page.click("#verdict-close")
    expect(page.locator("#over")).to_be_visible()
    readable(page, "the game's end")
    for path, where in ((f"/bluffs?game={game['id']}", "the Bluffs"), (f"/bluffs/{challenge['id']}", "a Bluff's replay"), ("/rules", "the rules"),
                        ("/setup", "the camera set-up")):
        page.goto(server.url + path)
        page.wait_for_load_state("networkidle")
        readable(page, where)
