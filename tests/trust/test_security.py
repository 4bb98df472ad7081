"""The table PIN and the web protections, through the real app and the real server.

A spectator's phone may watch but never act: control routes need the PIN
(compared in constant time, locked out per client after repeated failures),
the session cookie cannot be read by scripts nor sent by another site, other
sites' pages cannot drive the table, unknown host names are refused (DNS
rebinding), every answer carries the security headers, and ``serve`` never
runs in debug mode.
"""

from __future__ import annotations

import hmac
import http.client
import shutil
import sqlite3
from pathlib import Path

import pytest

from companion.app.web import close_app, security

MAX_FAILURES = 5  # security.PER_ADDRESS: 5 a minute

from .conftest import PIN, PIN_HEADERS, build_app, start_game

EXPECTED_HEADERS = {
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "no-referrer",
}


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


# --- the PIN --------------------------------------------------------------------------------

def test_pins_are_compared_with_a_constant_time_compare(client, monkeypatch):
    calls = []
    real = hmac.compare_digest

    def spy(a, b):  # noqa: ANN001, ANN202
        calls.append((a, b))
        return real(a, b)

    monkeypatch.setattr(security.hmac, "compare_digest", spy)
    assert client.post("/api/games", json={"players": ["Ann", "Ben"]}, headers={"X-Table-Pin": "0000"}).status_code == 401
    assert client.post("/api/session", json={"pin": "1111"}).status_code == 401
    assert client.post("/api/games", json={"players": ["Ann", "Ben"]}, headers=PIN_HEADERS).status_code == 201
    assert [a for a, _ in calls] == [b"0000", b"1111", PIN.encode()]
    assert all(b == PIN.encode() for _, b in calls)


def test_control_routes_refuse_a_missing_or_wrong_pin_and_change_nothing(client):
    game = start_game(client)
    gid = game["id"]
    for headers in ({}, {"X-Table-Pin": ""}, {"X-Table-Pin": PIN + " "}, {"X-Table-Pin": PIN.lower() + "0"}):
        response = client.post(f"/api/games/{gid}/claim", json={"amount": 9}, headers=headers)
        assert response.status_code == 401
        assert response.get_json()["error"] == "unauthorized" and "PIN" in response.get_json()["message"]
    assert client.get(f"/api/games/{gid}").get_json() == game


def _clock(app) -> FakeClock:  # noqa: ANN001
    clock = FakeClock()
    app.extensions["eb_limiter"].storage.clock = clock
    app.extensions["eb_auth"].clock = clock
    return clock


def test_wrong_pins_lock_out_that_client_only_and_the_lock_expires(app):
    clock = _clock(app)
    phone = app.test_client()
    phone.environ_base["REMOTE_ADDR"] = "192.0.2.7"
    tablet = app.test_client()
    tablet.environ_base["REMOTE_ADDR"] = "192.0.2.8"
    body = {"players": ["Ann", "Ben"]}
    for _ in range(MAX_FAILURES):
        assert phone.post("/api/games", json=body, headers={"X-Table-Pin": "0000"}).status_code == 401
    # Locked: even the right PIN is refused from that client, by the header or the session route.
    locked = phone.post("/api/games", json=body, headers=PIN_HEADERS)
    assert locked.status_code == 429 and "wait" in locked.get_json()["message"] and "this device" in locked.get_json()["message"]
    assert phone.post("/api/session", json={"pin": PIN}).status_code == 429
    # Another device at the table is not locked out.
    assert tablet.post("/api/games", json=body, headers=PIN_HEADERS).status_code == 201
    clock.now += 61
    assert phone.post("/api/games", json=body, headers=PIN_HEADERS).status_code == 201


def test_a_locked_out_device_that_sends_the_pin_header_with_every_request_still_views_the_table(app):
    _clock(app)
    kiosk = app.test_client()
    kiosk.environ_base["REMOTE_ADDR"] = "192.0.2.9"
    for _ in range(MAX_FAILURES):
        assert kiosk.post("/api/games", json={"players": ["Ann", "Ben"]}, headers={"X-Table-Pin": "0000"}).status_code == 401
    assert kiosk.post("/api/games", json={"players": ["Ann", "Ben"]}, headers=PIN_HEADERS).status_code == 429
    # viewing needs no PIN (API.md, Conventions): a header the route never reads neither spends nor meets the budget
    for path in ("/api/health", "/api/games", "/api/table", "/"):
        assert kiosk.get(path, headers={"X-Table-Pin": "0000"}).status_code == 200, path
    assert kiosk.get("/api/check", headers=PIN_HEADERS).status_code == 429  # a control route that reads it is held back
    assert kiosk.post("/api/games", json={"players": ["Ann", "Ben"]}, headers=PIN_HEADERS).status_code == 429


def test_guessing_from_many_addresses_spends_one_budget_for_all_and_the_wait_grows(app):
    clock = _clock(app)
    let_in = app.test_client()
    let_in.environ_base["REMOTE_ADDR"] = "192.0.2.200"
    assert let_in.post("/api/session", json={"pin": PIN}).status_code == 200
    waits = []
    address = iter(range(1, 250))
    for _round in range(4):
        refused = None
        for _ in range(40):
            guesser = app.test_client()
            guesser.environ_base["REMOTE_ADDR"] = f"198.51.100.{next(address)}"  # a new address for every 2 guesses
            for _ in range(2):
                answer = guesser.post("/api/session", json={"pin": "0000"})
                if answer.status_code == 429:
                    refused = answer
                    break
            if refused is not None:
                break
        assert refused is not None, "rotating addresses escaped the budget"
        assert "at this table" in refused.get_json()["message"]
        waits.append(refused.get_json()["retry_after_s"])
        if not _round:
            assert let_in.get("/api/session").get_json()["wrong_pins_last_hour"] == 10  # shown on the page
        # Even the right PIN is not taken now, from a new address...
        newcomer = app.test_client()
        newcomer.environ_base["REMOTE_ADDR"] = "203.0.113.9"
        assert newcomer.post("/api/session", json={"pin": PIN}).status_code == 429
        # ...but the device already let in keeps playing.
        assert let_in.post("/api/games", json={"players": ["Ann", "Ben"]}).status_code == 201
        clock.now += waits[-1] + 1
    assert waits[0] < waits[1] < waits[2] < waits[3], waits


def test_the_guessing_budget_is_kept_across_a_restart(tmp_path):
    first = build_app(tmp_path / "instance")
    guesser = first.test_client()
    for _ in range(MAX_FAILURES):
        assert guesser.post("/api/session", json={"pin": "0000"}).status_code == 401
    close_app(first)
    second = build_app(tmp_path / "instance")
    try:
        again = second.test_client()
        assert again.post("/api/session", json={"pin": PIN}).status_code == 429
        assert again.get("/api/session").get_json()["wrong_pins_last_hour"] == MAX_FAILURES
    finally:
        close_app(second)


def test_on_a_full_card_no_pin_is_checked_since_a_wrong_one_cannot_be_counted_and_the_check_comes_back_with_room(small_card):
    """A wrong PIN that could not be written down was SQLite's error (500) and spent nothing of the budget, while the
    right PIN by header was let in: a guesser had an answer for every guess and no limit."""

    app = build_app(small_card.path / "instance")
    try:
        guesser, table = app.test_client(), app.test_client()
        small_card.fill(leave=0)
        said = [guesser.post("/api/session", json={"pin": "0000"}),  # wrong, and cannot be written down
                table.get("/api/sessions", headers=PIN_HEADERS),  # right, by header
                table.post("/api/session", json={"pin": PIN}),  # right, for a session
                guesser.get("/api/sessions", headers={"X-Table-Pin": "0000"})]
        assert [r.status_code for r in said] == [507] * 4
        assert {r.get_json()["message"] for r in said} == {security.CANNOT_COUNT}  # the same words, right or wrong
        assert "disk is full" in security.CANNOT_COUNT and said[0].get_json()["error"] == "disk_full"
        small_card.empty()
        assert table.get("/api/sessions", headers=PIN_HEADERS).status_code == 200  # room again: checked again
        assert guesser.post("/api/session", json={"pin": "0000"}).status_code == 401
        assert guesser.get("/api/session").get_json()["wrong_pins_last_hour"] == 1  # counted, and only that one
    finally:
        close_app(app)


def _budget_entries(instance: Path) -> int:
    """The guessing budget's entries in ``auth.sqlite3`` (one per window of each limit a wrong PIN spends)."""
    with sqlite3.connect(instance / "auth.sqlite3") as db:
        return db.execute("SELECT COUNT(*) FROM limit_hits").fetchone()[0]


def test_a_wrong_pin_written_down_that_the_budget_cannot_count_stops_the_pin_check_in_words_not_an_internal_error(small_card):
    """On a card with room for a wrong PIN's note but not for all of the guessing budget's entries, the budget's count
    after the answer met SQLite's error: the guesser's answer became a 500. Now the answer stands (401) and, as for a
    wrong PIN that could not be written down, no PIN is checked until there is room. Each room left from 0 to 23 kB is
    tried on a real small tmpfs, a fresh instance each time; the test fails unless one of them is that case."""

    met = []
    for kb in range(24):
        instance = small_card.path / f"instance-{kb}"
        app = build_app(instance)
        try:
            guesser, table = app.test_client(), app.test_client()
            assert guesser.post("/api/session", json={"pin": "0000"}).status_code == 401
            spent = _budget_entries(instance)  # what one wrong PIN spends
            small_card.fill(leave=kb * 1024)
            answer = guesser.post("/api/session", json={"pin": "0001"})
            assert answer.status_code in (401, 507), answer.get_data(as_text=True)
            if answer.status_code == 401 and _budget_entries(instance) < 2 * spent:  # written down, not wholly counted
                met.append(kb)
                for said in (table.post("/api/session", json={"pin": PIN}), guesser.post("/api/session", json={"pin": "0002"})):
                    assert said.status_code == 507 and said.get_json()["message"] == security.CANNOT_COUNT
            small_card.empty()
            before = _budget_entries(instance)
            assert guesser.post("/api/session", json={"pin": "0003"}).status_code == 401  # room again: checked and counted
            assert _budget_entries(instance) == before + spent
        finally:
            close_app(app)
            if (small_card.path / "filler").exists():  # a failed check above left the card full
                small_card.empty()
            shutil.rmtree(instance)
    assert met, "no room left was the case of a note written down and the budget not counted"


def test_session_cookie_is_httponly_samesite_strict_and_gives_control(client):
    assert client.post("/api/session", json={"pin": "0000"}).headers.get("Set-Cookie") is None
    response = client.post("/api/session", json={"pin": PIN})
    assert response.status_code == 200
    cookie = response.headers["Set-Cookie"]
    parts = [p.strip().lower() for p in cookie.split(";")]
    assert parts[0].startswith("eb_session=")
    assert "httponly" in parts and "samesite=strict" in parts and "path=/" in parts
    assert client.get("/api/session").get_json()["control"] is True
    assert client.post("/api/games", json={"players": ["Ann", "Ben"]}).status_code == 201
    client.delete("/api/session")
    assert client.get("/api/session").get_json()["control"] is False
    assert client.post("/api/games", json={"players": ["Ann", "Ben"]}).status_code == 401


def test_a_session_from_another_pin_gives_no_control(tmp_path):
    first = build_app(tmp_path / "instance")
    client = first.test_client()
    client.post("/api/session", json={"pin": PIN})
    close_app(first)
    # The table PIN changes; the old cookie (same secret key) must stop working.
    second = build_app(tmp_path / "instance", table__pin="7777")
    other = second.test_client()
    other.set_cookie(client.get_cookie("eb_session").key, client.get_cookie("eb_session").value)
    try:
        assert other.get("/api/session").get_json()["control"] is False
        assert other.post("/api/games", json={"players": ["Ann", "Ben"]}).status_code == 401
    finally:
        close_app(second)


# --- other sites, host names, headers -------------------------------------------------------------

@pytest.mark.parametrize(
    "headers",
    [
        {"Origin": "http://evil.example"},
        {"Origin": "http://localhost:9999"},
        {"Origin": "null"},
        {"Sec-Fetch-Site": "cross-site"},
    ],
)
def test_control_routes_refuse_requests_from_other_sites_even_with_the_pin(client, headers):
    game = start_game(client)
    response = client.post(f"/api/games/{game['id']}/claim", json={"amount": 9}, headers={**PIN_HEADERS, **headers})
    assert response.status_code == 403
    assert "another web site" in response.get_json()["message"]
    assert client.get(f"/api/games/{game['id']}").get_json() == game


def test_control_routes_accept_the_pages_own_origin(client):
    game = start_game(client)
    response = client.post(f"/api/games/{game['id']}/claim", json={"amount": 9}, headers={**PIN_HEADERS, "Origin": "http://localhost", "Sec-Fetch-Site": "same-origin"})
    assert response.status_code == 200


def test_the_pin_session_refuses_other_sites_so_they_cannot_lock_the_tablet_out(client):
    for _ in range(MAX_FAILURES + 1):
        response = client.post("/api/session", json={"pin": "0000"}, headers={"Origin": "http://evil.example"})
        assert response.status_code == 403
    assert client.post("/api/session", json={"pin": PIN}).status_code == 200


@pytest.mark.parametrize("host,allowed", [("evil.example", False), ("evil.example:8000", False), ("localhost:8000", True), ("127.0.0.1:8000", True), ("192.168.1.20:8000", True), ("[::1]:8000", True), ("elephants-bluff.local", True)])
def test_only_trusted_host_names_or_ip_addresses_are_served(client, host, allowed):
    for path in ("/", "/api/health", "/api/games"):
        response = client.get(path, headers={"Host": host})
        assert (response.status_code != 403) == allowed, (host, path, response.status_code)


def test_a_wildcard_in_trusted_hosts_serves_any_name(tmp_path):
    app = build_app(tmp_path / "instance", server__trusted_hosts=["*"])
    try:
        assert app.test_client().get("/api/health", headers={"Host": "anything.example"}).status_code == 200
    finally:
        close_app(app)


def test_the_pis_own_name_as_it_is_at_start_is_served_with_no_setting(tmp_path, monkeypatch):
    """A Pi renamed with `install-pi.sh --hostname kitchen` (its settings name only the old names) answers to
    kitchen.local once the install restarts the companion: the name is the machine's own, read at start."""
    import socket

    monkeypatch.setattr(socket, "gethostname", lambda: "kitchen")
    app = build_app(tmp_path / "instance", server__trusted_hosts=["127.0.0.1", "localhost", "raspberrypi.local"])
    try:
        client = app.test_client()
        for host, allowed in (("kitchen.local:8000", True), ("KITCHEN.local", True), ("kitchen", True), ("parlour.local", False)):
            assert (client.get("/api/health", headers={"Host": host}).status_code != 403) == allowed, host
    finally:
        close_app(app)


def test_every_answer_carries_the_security_headers(client):
    game = start_game(client)
    answers = [
        client.get("/"),
        client.get("/api/health"),
        client.get("/api/nothing-here"),
        client.get(f"/api/games/{game['id']}"),
        client.post(f"/api/games/{game['id']}/claim", json={"amount": 1}, headers=PIN_HEADERS),
        client.post("/api/games", json={}),
        client.get("/api/health", headers={"Host": "evil.example"}),
    ]
    for response in answers:
        for name, value in EXPECTED_HEADERS.items():
            assert response.headers.get(name) == value, (response.request.path, name)
        csp = response.headers.get("Content-Security-Policy", "")
        assert "frame-ancestors 'none'" in csp and "default-src 'self'" in csp
        if response.request.path.startswith("/api/"):
            assert response.headers.get("Cache-Control") == "no-store"


# --- serve: never debug ------------------------------------------------------------------------

def test_serve_never_runs_in_debug_mode_even_when_flask_debug_is_set(tmp_path, monkeypatch):
    from companion.app import connections
    from companion.app import server as server_module

    seen = {}

    class Stop(Exception):
        pass

    def fake_create_server(app, **kw):  # noqa: ANN001, ANN202
        seen["app"], seen["kw"] = app, kw
        raise Stop

    monkeypatch.setenv("FLASK_DEBUG", "1")
    monkeypatch.setenv("ELEPHANTS_BLUFF_PIN", PIN)
    monkeypatch.setattr(connections, "create_guarded_server", fake_create_server)
    with pytest.raises(Stop):
        server_module.serve(tmp_path / "instance", host="127.0.0.1", port=0, simulate=True, init=False)
    app = seen["app"]
    try:
        assert app.debug is False and app.config["DEBUG"] is False
        assert not seen["kw"].get("expose_tracebacks")
    finally:
        close_app(app)


@pytest.mark.slow
def test_the_real_server_enforces_pin_lockout_hosts_origins_and_headers(tmp_path):
    from bench.live_server import LiveServer

    with LiveServer(tmp_path / "live", pin=PIN, env={"FLASK_DEBUG": "1"}) as s:
        conn = http.client.HTTPConnection("127.0.0.1", s.port, timeout=10)

        def ask(method, path, headers=None, body=b""):  # noqa: ANN001, ANN202
            conn.request(method, path, body=body, headers={"Content-Type": "application/json", **(headers or {})})
            response = conn.getresponse()
            return response.status, dict(response.getheaders()), response.read()

        try:
            game = b'{"players": ["Ann", "Ben"]}'
            status, headers, _ = ask("GET", "/api/health", {"Host": "evil.example"})
            assert status == 403
            status, headers, _ = ask("GET", "/api/health")
            assert status == 200 and all(headers.get(k) == v for k, v in EXPECTED_HEADERS.items())
            assert ask("POST", "/api/games", {"X-Table-Pin": PIN, "Origin": "http://evil.example"}, game)[0] == 403
            for _ in range(MAX_FAILURES):
                assert ask("POST", "/api/games", {"X-Table-Pin": "0000"}, game)[0] == 401
            assert ask("POST", "/api/games", {"X-Table-Pin": PIN}, game)[0] == 429
            assert ask("GET", "/console")[0] == 404  # no Werkzeug debugger, FLASK_DEBUG or not
        finally:
            conn.close()
        assert "debug" not in s.log_text().lower()
