"""R13 in a real browser: no page shows the round's dice before its Bluff (issue 6's walk of the pages).

Chromium (Debian's, driven by Playwright) opens every page of the real
``serve --simulate`` as a spectator's phone (no PIN) and as the table's tablet
(PIN entered), while a round is played with distinctive dice waiting on the
simulated table. Every answer the browser fetched (pages, scripts, styles,
JSON) and the text the pages finally show are searched for those dice. The
same search on the Bluff's replay page after the Bluff finds them (positive
control).
"""

from __future__ import annotations

import json
import time

import pytest
from pagehelpers import PIN, ROOT, unlock

from bench.live_server import LiveServer
from trust.test_hidden_information import EARLIER_DICE, SECRET, find_dice

STATIC = ROOT / "companion" / "app" / "web" / "static"

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def _collect(page, bucket: dict[str, object]) -> None:  # noqa: ANN001
    def on_response(response) -> None:  # noqa: ANN001
        kind = response.headers.get("content-type", "")
        if "event-stream" in kind or kind.startswith("image/"):
            return
        try:
            body = response.body()
        except Exception:  # noqa: BLE001 - a response the page dropped mid-way has no body
            return
        text = body.decode("utf-8", "replace")
        if kind.startswith("application/json"):
            try:
                bucket[f"{response.request.method} {response.url}"] = json.loads(text)
                return
            except ValueError:
                pass
        bucket[f"{response.request.method} {response.url}"] = text

    page.on("response", on_response)


def test_no_page_shows_the_dice_before_the_bluff_in_a_real_browser(tmp_path, new_context, console):
    # The replay page of the Bluff not yet called asks for it and gets a 404: expected.
    console.allow("the server responded with a status of 404")
    with LiveServer(tmp_path / "live", pin=PIN) as s:
        gid = s.post("/api/games", json={"players": ["Ann", "Ben", "Cy"]}).json()["id"]
        s.post(f"/api/games/{gid}/claim", json={"amount": 9})
        s.post("/api/sim/dice", json={"values": EARLIER_DICE})
        first = s.post(f"/api/games/{gid}/bluff", json={}).json()["challenge"]
        if first["dice"] is None:
            s.post(f"/api/games/{gid}/confirm", json={"dice": EARLIER_DICE})
        s.post("/api/sim/dice", json={"values": SECRET})
        next_cid = f"c-{gid[2:]}-2"
        seen: dict[str, object] = {}
        phone = new_context(viewport={"width": 390, "height": 844})
        tablet = new_context()
        for page in (phone, tablet):
            _collect(page, seen)
            page.goto(s.url + "/")
            page.wait_for_load_state("networkidle")
        unlock(tablet)
        # The round is played while both pages watch the live stream.
        for path, body in [(f"/api/games/{gid}/claim", {"amount": 10}), (f"/api/games/{gid}/believe", {"peeked": True}), (f"/api/games/{gid}/claim", {"amount": 12})]:
            assert s.post(path, json=body).status_code == 200
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline and "12" not in phone.inner_text("body"):
            time.sleep(0.1)
        texts = {}
        for name, page in (("phone", phone), ("tablet", tablet)):
            for path in ("/", "/bluffs", f"/bluffs/{first['id']}", f"/bluffs/{next_cid}", "/rules"):
                if path != "/":
                    page.goto(s.url + path)
                    page.wait_for_load_state("networkidle")
                texts[f"{name} {path}"] = page.inner_text("body") + "\n" + page.content()
        seen.update(texts)
        # Static files cannot carry a round's dice if they are the shipped files,
        # byte for byte (dice.js holds pip layouts like "0, 2, 3, 5, 6, 8").
        static = {k: v for k, v in seen.items() if "/static/" in k}
        for key, body in static.items():
            shipped = STATIC / key.split("/static/", 1)[1].split("?", 1)[0]
            assert shipped.is_file(), key
            text = body if isinstance(body, str) else json.dumps(body)
            assert text == shipped.read_text(encoding="utf-8") or body == json.loads(shipped.read_text(encoding="utf-8")), f"{key} is not the shipped file"
        leaks = {where: hits for where, body in seen.items() if where not in static and (hits := find_dice(body, SECRET))}
        assert leaks == {}, leaks
        assert any("/static/" in k for k in seen) and any("/api/" in k for k in seen), "the browser fetched the page's scripts and the API"
        # Positive control: after the Bluff, its replay page shows the dice.
        called = s.post(f"/api/games/{gid}/bluff", json={}).json()["challenge"]
        if called["dice"] is None:  # the reader was unsure (R14): the table types the dice
            assert s.post(f"/api/games/{gid}/confirm", json={"dice": SECRET}).status_code == 200
        phone.goto(s.url + f"/bluffs/{next_cid}")
        phone.wait_for_load_state("networkidle")
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and not find_dice(phone.inner_text("body"), SECRET):
            time.sleep(0.1)
        assert find_dice(phone.inner_text("body"), SECRET)
        for page in (phone, tablet):  # before the server stops under their live streams
            page.close()
