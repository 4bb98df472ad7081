"""R13: nothing shows a die of the current round before its Bluff.

Two guards, both checked:

1. The referee never *has* the dice early: the dice source (the camera seam)
   is not called by any claim, believe, page, API read or stream before the
   Bluff, and is called exactly once by it.
2. Nothing *says* them: with the simulated table holding distinctive dice for
   the round, every GET route of the app (taken from its url_map, so a new
   route is walked without editing this test), the live stream and the error
   answers of refused actions are searched for those dice — as a 3-number list
   in any order, as a reading's die objects, or as the three numbers in a row
   in any text. A positive control shows the same search does find them once
   the Bluff has revealed them.
"""

from __future__ import annotations

import itertools
import json
import re
import time
from pathlib import Path
from typing import Any
from urllib.parse import quote, unquote

import pytest

from companion.core.capture import ValuesDiceSource
from bench.live_server import ViewerPool
from companion.app.web.events import _event, _note
from companion.app.web import close_app

from .conftest import PIN_HEADERS, build_app

EARLIER_DICE = [1, 1, 2]  # the previous round's Bluff: public by then
SECRET = [6, 3, 5]  # this round's dice, on the simulated table before its Bluff


class SpyDiceSource(ValuesDiceSource):
    """The values source that counts every capture (a camera read)."""

    name = "spy"

    def __init__(self) -> None:
        super().__init__()
        self.captures = 0

    def capture(self):  # noqa: ANN201
        self.captures += 1
        return super().capture()


def _triple_patterns(dice: list[int]) -> list[re.Pattern]:
    return [re.compile(r"(?<!\d)" + r"\D{1,12}".join(map(str, p)) + r"(?!\d)") for p in set(itertools.permutations(dice))]


def find_dice(payload: Any, dice: list[int]) -> list[str]:
    """Where ``payload`` (JSON, or text) shows ``dice``: as a list, as die readings, or in a row in text."""
    hits: list[str] = []
    target = sorted(dice)

    def walk(node: Any, where: str) -> None:
        if isinstance(node, dict):
            tops = node.get("dice")
            if isinstance(tops, list) and len(tops) == 3 and all(isinstance(d, dict) and "top" in d for d in tops):
                if sorted(d["top"] for d in tops) == target:
                    hits.append(f"{where}.dice (a reading)")
            for k, v in node.items():
                walk(v, f"{where}.{k}")
        elif isinstance(node, list):
            if len(node) == 3 and all(isinstance(v, int) and not isinstance(v, bool) for v in node) and sorted(node) == target:
                hits.append(f"{where} = {node}")
            for i, v in enumerate(node):
                walk(v, f"{where}[{i}]")

    if isinstance(payload, (dict, list)):
        walk(payload, "$")
        text = json.dumps(payload)
    else:
        text = payload
    # Game and challenge ids are random hex tokens (g-6cca5…): their digits are no dice,
    # and left in they make the search match by chance.
    text = re.sub(r"\b[gc]-[0-9a-f]{12}(?:-\d+)?", "<id>", text)
    for pattern in _triple_patterns(dice):
        m = pattern.search(text)
        if m:
            hits.append(f"text {m.group(0)!r}")
    return hits


def _body(response) -> Any:  # noqa: ANN001
    if response.mimetype == "application/json":
        return response.get_json()
    if response.mimetype.startswith("text/") and response.mimetype != "text/event-stream":
        return response.get_data(as_text=True)
    return response.get_data()  # images: bytes, checked by their existence only


def _fill(rule, values: dict[str, list[str]]) -> list[str]:  # noqa: ANN001
    names = sorted(rule.arguments)
    missing = [n for n in names if n not in values]
    assert not missing, f"route {rule.rule} takes {missing}: teach this walker what to put there"
    urls = []
    for combo in itertools.product(*(values[n] for n in names)):
        url = rule.rule
        for name, value in zip(names, combo):
            url = re.sub(rf"<(?:[^:<>]+:)?{name}>", quote(value, safe=""), url)
        urls.append(url)
    return urls


def _play_to_a_round_with_secret_dice(client, spy):  # noqa: ANN001, ANN202
    """Round 1 ends in a Bluff on EARLIER_DICE; round 2 is under way with SECRET on the table."""
    game = client.post("/api/games", json={"players": ["Ann", "Ben", "Cy"]}, headers=PIN_HEADERS).get_json()
    gid = game["id"]
    assert client.post(f"/api/games/{gid}/claim", json={"amount": 9}, headers=PIN_HEADERS).status_code == 200
    assert client.post("/api/sim/dice", json={"values": EARLIER_DICE}, headers=PIN_HEADERS).status_code == 200
    first = client.post(f"/api/games/{gid}/bluff", json={}, headers=PIN_HEADERS).get_json()
    assert first["challenge"]["dice"] == EARLIER_DICE and spy.captures == 1
    # Round 2: the starter's dice are rolled; the simulated table holds them.
    assert client.post("/api/sim/dice", json={"values": SECRET}, headers=PIN_HEADERS).status_code == 200
    state = client.get(f"/api/games/{gid}").get_json()
    claimer = state["to_act"]
    assert client.post(f"/api/games/{gid}/claim", json={"amount": 10}, headers=PIN_HEADERS).status_code == 200
    # The receiver lifts the lid (the table's lid switch, R6's private peek check).
    lid = client.post("/api/sim/press", json={"button": "lid"}, headers=PIN_HEADERS)
    assert lid.status_code < 500
    assert client.post(f"/api/games/{gid}/believe", json={"peeked": True}, headers=PIN_HEADERS).status_code == 200
    assert client.post(f"/api/games/{gid}/claim", json={"amount": 13}, headers=PIN_HEADERS).status_code == 200
    return gid, first["challenge"]["id"], claimer, lid


def test_no_route_stream_page_or_error_shows_the_dice_before_the_bluff(tmp_path):
    spy = SpyDiceSource()
    app = build_app(tmp_path / "instance", spy)
    client = app.test_client()
    referee = app.extensions["elephants_bluff"].referee
    stream = referee.subscribe()  # what /api/events sends, before its HTTP framing
    try:
        gid, earlier_cid, _, lid = _play_to_a_round_with_secret_dice(client, spy)
        next_cid = f"c-{gid[2:]}-2"
        static = Path(app.static_folder)
        values = {
            "game_id": [gid, "g-000000000000", "../../config.toml"],
            "challenge_id": [earlier_cid, next_cid, "c-x", "..%2f..%2fconfig.toml"],
            "filename": ["../config.toml", "..%2fsecret_key"] + [str(f.relative_to(static)) for f in sorted(static.rglob("*")) if f.is_file()],
        }
        seen: dict[str, Any] = {"POST /api/sim/press lid": lid.get_json()}
        walked_rules = set()
        for rule in app.url_map.iter_rules():
            if "GET" not in rule.methods or rule.rule == "/api/events":
                continue
            walked_rules.add(rule.rule)
            for url in _fill(rule, values):
                for query in ("", f"?game={gid}", "?lang=fr"):
                    response = client.get(url + query)
                    try:
                        assert response.status_code < 500, (url, response.status_code)
                        if rule.endpoint == "static":
                            # A static file cannot carry a round's dice if it is the shipped file, byte for byte.
                            name = unquote(url.split("/static/", 1)[1])
                            if response.status_code == 200:
                                assert response.get_data() == (static / name).read_bytes(), url
                            else:
                                assert ".." in name, f"a shipped file was not served: {url}"
                            continue
                        seen[url + query] = _body(response)
                    finally:
                        response.close()
        # Every documented GET route was walked.
        spec = client.get("/api/openapi.json").get_json()
        documented = {re.sub(r"\{(\w+)\}", r"<\1>", p) for p, ops in spec["paths"].items() if "get" in ops}
        flask_rules = {re.sub(r"<(?:[^:<>]+:)?(\w+)>", r"<\1>", r) for r in walked_rules} | {"/api/events"}
        assert documented <= flask_rules, documented - flask_rules
        # Refused actions: their messages must not hint at the dice either.
        for path, body in [
            (f"/api/games/{gid}/confirm", {"dice": SECRET}),
            (f"/api/games/{gid}/claim", {"amount": 2}),
            (f"/api/challenges/{next_cid}/correct", {"dice": [2, 2, 2]}),
            (f"/api/games/{gid}/believe", {"seat": 0}),
        ]:
            response = client.post(path, json=body, headers=PIN_HEADERS)
            assert 400 <= response.status_code < 500
            seen[f"POST {path}"] = response.get_json()["message"]
        # The stream: every state announced during the round, as /api/events frames it.
        frames = []
        while not stream.empty():
            kind, payload = stream.get_nowait()
            frames.append(_event(payload) if kind == "state" else _note(kind, payload))
        assert frames, "the round announced its states"
        seen["/api/events"] = "".join(frames)

        assert spy.captures == 1, "the camera was read during the round, before any Bluff (R13)"
        leaks = {url: hits for url, body in seen.items() if not isinstance(body, bytes) and (hits := find_dice(body, SECRET))}
        assert leaks == {}, f"the round's dice were shown before its Bluff: {leaks}"

        # Positive control: after the Bluff the same search finds them where they belong.
        bluff = client.post(f"/api/games/{gid}/bluff", json={}, headers=PIN_HEADERS)
        assert spy.captures == 2
        assert find_dice(bluff.get_json(), SECRET)
        assert find_dice(client.get(f"/api/challenges/{next_cid}").get_json(), SECRET)
        assert find_dice(client.get(f"/api/games/{gid}/challenges").get_json(), SECRET)
        assert find_dice("dice 5, 6 and 3", SECRET) and not find_dice("6 elephants, 35 and 5", SECRET)
    finally:
        referee.unsubscribe(stream)
        close_app(app)


def test_refused_bluffs_and_reads_never_move_the_camera(tmp_path):
    spy = SpyDiceSource()
    app = build_app(tmp_path / "instance", spy)
    client = app.test_client()
    try:
        gid = client.post("/api/games", json={"players": ["Ann", "Ben"]}, headers=PIN_HEADERS).get_json()["id"]
        # A Bluff before any claim, by the wrong seat, without the PIN: all refused, no capture.
        assert client.post(f"/api/games/{gid}/bluff", json={}, headers=PIN_HEADERS).status_code == 409
        client.post(f"/api/games/{gid}/claim", json={"amount": 5}, headers=PIN_HEADERS)
        assert client.post(f"/api/games/{gid}/bluff", json={"seat": 0}, headers=PIN_HEADERS).status_code == 409
        assert client.post(f"/api/games/{gid}/bluff", json={}).status_code == 401
        assert client.post(f"/api/games/{gid}/bluff", json={"extra": 1}, headers=PIN_HEADERS).status_code == 400
        assert client.get("/api/health").status_code == 200
        assert spy.captures == 0
        assert client.post(f"/api/games/{gid}/bluff", json={}, headers=PIN_HEADERS).status_code == 200
        assert spy.captures == 1
    finally:
        close_app(app)


@pytest.mark.slow
def test_the_real_servers_stream_and_reads_hold_no_dice_before_the_bluff(live_server):
    """The same search over HTTP against ``serve --simulate``, with a real SSE viewer."""
    s = live_server
    gid = s.post("/api/games", json={"players": ["Ann", "Ben", "Cy"]}).json()["id"]
    s.post(f"/api/games/{gid}/claim", json={"amount": 9})
    s.post("/api/sim/dice", json={"values": EARLIER_DICE})
    first = s.post(f"/api/games/{gid}/bluff", json={}).json()["challenge"]
    if first["dice"] is None:  # an uncertain reading: the table confirms it
        s.post(f"/api/games/{gid}/confirm", json={"dice": EARLIER_DICE})
    with ViewerPool(s.port, 2, keep_text=1_000_000) as viewers, ViewerPool(s.port, 1, path=f"/api/events?game={gid}", keep_text=1_000_000) as game_viewer:
        assert s.post("/api/sim/dice", json={"values": SECRET}).status_code == 200
        before = s.get(f"/api/games/{gid}").json()["events"]
        answers = []
        for path, body in [(f"/api/games/{gid}/claim", {"amount": 10}), ("/api/sim/press", {"button": "lid"}), (f"/api/games/{gid}/believe", {"peeked": True}), (f"/api/games/{gid}/claim", {"amount": 12})]:
            answer = s.post(path, json=body)
            assert answer.status_code == 200 or (path == "/api/sim/press" and answer.status_code < 500), answer.text
            answers.append(answer.json())
        want = f"{gid}:{before + 3}"  # the lid lift is not a game event
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and not all(want in r for r in viewers.received + game_viewer.received):
            time.sleep(0.02)
        assert all(want in r for r in viewers.received + game_viewer.received), "every viewer got the round's states"
        pages = {p: s.get(p) for p in ("/", "/api/health", "/api/games", "/api/games/current", f"/api/games/{gid}", f"/api/games/{gid}/challenges", f"/api/challenges/c-{gid[2:]}-2", f"/api/challenges/c-{gid[2:]}-2/image")}
        texts: dict[str, Any] = {p: (r.json() if r.headers.get("Content-Type", "").startswith("application/json") else r.text) for p, r in pages.items() if not r.headers.get("Content-Type", "").startswith("image/")}
        texts.update({f"viewer {i}": bytes(t).decode() for i, t in enumerate(viewers.text + game_viewer.text)})
        texts.update({f"answer {i}": a for i, a in enumerate(answers)})
        assert pages[f"/api/challenges/c-{gid[2:]}-2"].status_code == 404
        assert pages[f"/api/challenges/c-{gid[2:]}-2/image"].status_code == 404
        leaks = {p: hits for p, t in texts.items() if (hits := find_dice(t, SECRET))}
        assert leaks == {}, leaks
    assert viewers.errors == [] and game_viewer.errors == []
