"""Sessions: a random token, stored hashed, that ends at logout, when revoked, at its hour and when the PIN changes (issue 27)."""

from __future__ import annotations

import hashlib
import sqlite3
import subprocess
import sys
import time

from companion.app.auth import AUTH_NAME, LAST_SEEN_STEP_S, AuthStore
from companion.app.web import close_app
from companion.app.web.security import COOKIE

from .conftest import PIN, build_app

GAME = {"players": ["Ann", "Ben"]}


def _login(app, address="192.0.2.10"):  # noqa: ANN001, ANN202
    client = app.test_client()
    client.environ_base["REMOTE_ADDR"] = address
    response = client.post("/api/session", json={"pin": PIN}, headers={"User-Agent": "Table tablet"})
    assert response.status_code == 200
    return client, response


def test_the_cookie_is_a_random_token_stored_only_hashed_and_nothing_like_the_pin(app, tmp_path):
    first, response = _login(app)
    second, _ = _login(app)
    token = first.get_cookie(COOKIE).value
    assert token != second.get_cookie(COOKIE).value and len(token) >= 40
    assert PIN not in token and hashlib.sha256(("eb-pin:" + PIN).encode()).hexdigest()[:32] not in token
    parts = [p.strip().lower() for p in response.headers["Set-Cookie"].split(";")]
    assert "httponly" in parts and "samesite=strict" in parts and "secure" not in parts
    assert any(p.startswith("max-age=") and int(p.split("=")[1]) == 12 * 3600 for p in parts)
    db = sqlite3.connect(tmp_path / "instance" / AUTH_NAME)
    try:
        stored = [r[0] for r in db.execute("SELECT token_sha256 FROM sessions")]
    finally:
        db.close()
    assert hashlib.sha256(token.encode()).hexdigest() in stored and token not in stored


def test_logout_ends_the_session_on_the_server_so_a_copied_cookie_is_worthless(app):
    client, _ = _login(app)
    thief = app.test_client()
    thief.set_cookie(COOKIE, client.get_cookie(COOKIE).value)
    assert thief.post("/api/games", json=GAME).status_code == 201
    client.delete("/api/session")
    assert client.get_cookie(COOKIE) is None
    refused = thief.post("/api/games", json=GAME)
    assert refused.status_code == 401 and "PIN" in refused.get_json()["message"]


def test_logging_in_again_ends_the_devices_old_session_so_a_cookie_seen_before_is_worthless(app):
    client, _ = _login(app)
    thief = app.test_client()
    thief.set_cookie(COOKIE, client.get_cookie(COOKIE).value)
    assert client.post("/api/session", json={"pin": PIN}).status_code == 200  # the PIN typed again on the same device
    assert thief.post("/api/games", json=GAME).status_code == 401
    assert client.post("/api/games", json=GAME).status_code == 201
    assert len(client.get("/api/sessions").get_json()["sessions"]) == 1


def test_sessions_are_listed_and_one_is_revoked_from_the_page(app):
    tablet, _ = _login(app, "192.0.2.10")
    phone, _ = _login(app, "192.0.2.11")
    listed = tablet.get("/api/sessions").get_json()["sessions"]
    assert len(listed) == 2 and {s["address"] for s in listed} == {"192.0.2.10", "192.0.2.11"}
    assert [s["this_device"] for s in listed].count(True) == 1 and listed[0]["device"] == "Table tablet"
    phones = next(s["id"] for s in listed if s["address"] == "192.0.2.11")
    assert tablet.delete(f"/api/sessions/{phones}").status_code == 200
    assert phone.post("/api/games", json=GAME).status_code == 401
    assert tablet.post("/api/games", json=GAME).status_code == 201
    assert tablet.delete(f"/api/sessions/{phones}").status_code == 404
    assert app.test_client().get("/api/sessions").status_code == 401  # a spectator sees no one's sessions


def test_a_session_ends_after_its_hours(app):
    clock_at = [1_000_000.0]
    app.extensions["eb_auth"].clock = lambda: clock_at[0]
    client, _ = _login(app)
    clock_at[0] += 11.9 * 3600
    assert client.post("/api/games", json=GAME).status_code == 201
    clock_at[0] += 0.2 * 3600
    assert client.post("/api/games", json=GAME).status_code == 401


def test_a_session_ended_by_its_hours_leaves_no_address_or_browser_in_the_file_once_another_device_logs_in(app, tmp_path):
    """A guest's phone that never came back: its row (address, browser) stayed in auth.sqlite3 for good, as only the
    devices list and the phone's own next request deleted it."""
    clock_at = [1_000_000.0]
    app.extensions["eb_auth"].clock = lambda: clock_at[0]
    _login(app, "192.0.2.77")  # the guest, gone home
    clock_at[0] += 11 * 3600
    _login(app, "192.0.2.10")  # the table's tablet, later that evening
    clock_at[0] += 2 * 3600  # the guest's 12 hours are over; the tablet's are not
    _login(app, "192.0.2.11")
    db = sqlite3.connect(tmp_path / "instance" / AUTH_NAME)
    try:
        kept = sorted(r[0] for r in db.execute("SELECT address FROM sessions"))
    finally:
        db.close()
    assert kept == ["192.0.2.10", "192.0.2.11"]


def test_a_start_forgets_the_ended_sessions_the_week_old_wrong_pins_and_the_spent_guessing_budget(tmp_path):
    """Nothing else ever looked at a guest's row again if no one logged in or tried a PIN after it."""
    import time

    from limits import parse
    from limits.strategies import MovingWindowRateLimiter

    from companion.app.auth import AuthStore, SQLiteLimitsStorage
    from companion.app.web.security import pin_tag

    first = build_app(tmp_path / "instance")  # the instance's key, so the rows below are under the PIN in force
    tag = pin_tag(PIN, first.config["SECRET_KEY"])
    close_app(first)
    path = tmp_path / "instance" / AUTH_NAME
    now = time.time()
    for days_ago, address in ((8, "192.0.2.8"), (1, "192.0.2.1")):
        then = now - days_ago * 86400
        store = AuthStore(path, clock=lambda then=then: then)
        store.open_session(tag, hours=36, address=address, agent="Guest phone")
        store.wrong_pin(address)
        store.close()
        budget = SQLiteLimitsStorage(f"eb-sqlite://{path}", clock=lambda then=then: then)
        assert MovingWindowRateLimiter(budget).hit(parse("5/minute"), address)
        budget.close()
    close_app(build_app(tmp_path / "instance"))
    db = sqlite3.connect(path)
    try:
        left = {table: db.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0] for table in ("sessions", "wrong_pins", "limit_hits")}
        kept = [r[0] for r in db.execute("SELECT address FROM wrong_pins UNION ALL SELECT address FROM sessions")]
    finally:
        db.close()
    assert left == {"sessions": 1, "wrong_pins": 1, "limit_hits": 0}  # yesterday's 36 hours are not over; its wrong PIN stays the week
    assert kept == ["192.0.2.1", "192.0.2.1"]


def test_a_card_too_full_to_forget_the_ended_still_starts_and_the_next_start_with_room_forgets_them(small_card, tmp_path):
    """Tidying is never worth a start: with the sessions file's card nearly full (the game log elsewhere), the
    deletions' own writes found no room and the start stopped on SQLite's "database or disk is full". That of a
    changed PIN's sessions too: they stay refused, whether deleted or not."""
    import time

    from companion.app.auth import AuthStore

    instance, log = small_card.path / "instance", str(tmp_path / "game-log.sqlite3")
    close_app(build_app(instance, storage__database=log))
    then = time.time() - 8 * 86400
    old = AuthStore(instance / AUTH_NAME, clock=lambda: then)
    for i in range(20_000):  # more than the guessing budget ever lets in: enough rows that deleting them needs room
        old.wrong_pin(f"192.0.2.{i % 250}")
    tablet = old.open_session("a PIN changed since", hours=36, address="192.0.2.10", agent="Table tablet")[0]
    old.close()
    db = sqlite3.connect(instance / AUTH_NAME)  # and as many sessions under the PIN before
    with db:
        db.executemany("INSERT INTO sessions VALUES (?, ?, 'a PIN changed since', ?, ?, ?, '192.0.2.9', 'Guest phone')",
                       [(f"s-{i:08x}", f"{i:064x}", then, then + 36 * 3600, then) for i in range(20_000)])
    db.close()

    def rows() -> tuple[int, int]:
        db = sqlite3.connect(instance / AUTH_NAME)
        try:
            return db.execute("SELECT COUNT(*) FROM wrong_pins").fetchone()[0], db.execute("SELECT COUNT(*) FROM sessions").fetchone()[0]
        finally:
            db.close()

    small_card.fill(leave=64 * 1024)
    app = build_app(instance, storage__database=log)
    try:
        stale = app.test_client()
        stale.set_cookie(COOKIE, tablet)
        assert stale.post("/api/games", json=GAME).status_code == 401  # a session of the PIN before is ended all the same
        client, _ = _login(app)  # it started, and a device is let in
        assert client.post("/api/games", json=GAME).status_code == 201
    finally:
        close_app(app)
    assert rows() == (20_000, 20_001)  # left as they were, whole: the stale tablet's row went as it was refused, the login's came
    small_card.empty()
    close_app(build_app(instance, storage__database=log))
    assert rows() == (0, 1)  # the login's session lives on


def test_a_change_of_pin_ends_every_session(tmp_path):
    first = build_app(tmp_path / "instance")
    client, _ = _login(first)
    cookie = client.get_cookie(COOKIE).value
    close_app(first)
    same = build_app(tmp_path / "instance")  # a restart with the same PIN keeps the device let in
    try:
        keeps = same.test_client()
        keeps.set_cookie(COOKIE, cookie)
        assert keeps.get("/api/session").get_json()["control"] is True
    finally:
        close_app(same)
    changed = build_app(tmp_path / "instance", table__pin="7777")
    try:
        other = changed.test_client()
        other.set_cookie(COOKIE, cookie)
        assert other.get("/api/session").get_json()["control"] is False
        assert changed.extensions["eb_auth"].sessions() == []
    finally:
        close_app(changed)


def test_the_cookie_is_secure_over_https_or_when_set(tmp_path):
    app = build_app(tmp_path / "instance")
    try:
        over_https = app.test_client().post("/api/session", json={"pin": PIN}, base_url="https://localhost")
        assert "secure" in [p.strip().lower() for p in over_https.headers["Set-Cookie"].split(";")]
    finally:
        close_app(app)
    behind_proxy = build_app(tmp_path / "other", server__secure_cookie=True)
    try:
        response = behind_proxy.test_client().post("/api/session", json={"pin": PIN})
        assert "secure" in [p.strip().lower() for p in response.headers["Set-Cookie"].split(";")]
    finally:
        close_app(behind_proxy)


def test_the_sessions_command_lists_and_revokes(app, tmp_path):
    client, _ = _login(app)
    instance = str(tmp_path / "instance")
    run = lambda *a: subprocess.run([sys.executable, "-m", "companion.app.cli", "sessions", *a, "--instance", instance], capture_output=True, text=True, timeout=60)  # noqa: E731
    listed = run("list")
    assert listed.returncode == 0 and "1 device(s) let in." in listed.stdout and "192.0.2.10" in listed.stdout
    sid = listed.stdout.split()[0]
    missing = run("revoke", "s-nothing")
    assert missing.returncode == 2 and "no session s-nothing" in missing.stderr
    assert run("revoke", sid).returncode == 0
    assert client.post("/api/games", json=GAME).status_code == 401
    assert "0 device(s)" in run("list").stdout


def test_the_sessions_page_is_served_with_its_script_and_the_wrong_pin_count_comes_from_the_api(app):
    client = app.test_client()
    client.post("/api/session", json={"pin": "0000"})
    page = client.get("/sessions")
    assert page.status_code == 200 and 'id="sessions-body"' in page.get_data(as_text=True)
    assert "js/sessions.js" in page.get_data(as_text=True)
    script = client.get("/static/js/sessions.js")
    assert script.status_code == 200 and b"/api/sessions" in script.data and b"wrong_pins_last_hour" in script.data
    script.close()
    assert client.get("/api/session").get_json()["wrong_pins_last_hour"] == 1


def test_a_device_let_in_is_told_the_card_is_full_in_words_not_an_internal_error_on_every_tap(small_card):
    """The whole instance on one full card, as on a Pi: a device let in notes when it was last seen (once a minute),
    and that note's refusal was SQLite's error on every tap, the page's first look included, before the game log could
    say the card is full. The sessions' clock is moved on, so the note is due at each request here."""
    app = build_app(small_card.path / "instance")
    try:
        tablet, _ = _login(app)
        game = tablet.post("/api/games", json=GAME).get_json()
        small_card.fill(leave=0)
        auth, seen = app.extensions["eb_auth"], [time.time()]
        auth.clock = lambda: seen.append(seen[-1] + 2 * LAST_SEEN_STEP_S) or seen[-1]  # two minutes on at each look
        assert tablet.get("/api/session").get_json()["control"] is True  # still let in
        refused = tablet.post(f"/api/games/{game['id']}/claim", json={"amount": 7})
        assert refused.status_code == 507 and refused.get_json()["error"] == "disk_full"
        assert tablet.get(f"/api/games/{game['id']}").get_json()["claim"] is None  # nothing changed
        small_card.empty()
        assert tablet.post(f"/api/games/{game['id']}/claim", json={"amount": 7}).status_code == 200
    finally:
        close_app(app)


def test_on_a_full_card_letting_a_device_in_or_ending_one_is_refused_in_words_and_changes_nothing(small_card):
    """The right PIN from a new device, "End this session" on the devices page and "Lock this device" met SQLite's
    error: "Something went wrong" on the page, for a card that only wanted room."""
    from companion.app.web import security

    app = build_app(small_card.path / "instance")
    try:
        tablet, _ = _login(app, "192.0.2.10")
        phone, _ = _login(app, "192.0.2.11")
        phones = next(s["id"] for s in tablet.get("/api/sessions").get_json()["sessions"] if s["address"] == "192.0.2.11")
        small_card.fill(leave=0)
        newcomer = app.test_client().post("/api/session", json={"pin": PIN})
        assert newcomer.status_code == 507 and newcomer.get_json()["message"] == security.CANNOT_COUNT  # a wrong PIN's words
        for refused in (tablet.delete(f"/api/sessions/{phones}"), tablet.delete("/api/sessions"), phone.delete("/api/session")):
            assert refused.status_code == 507 and refused.get_json()["error"] == "disk_full"
            assert "disk is full" in refused.get_json()["message"]
        assert len(tablet.get("/api/sessions").get_json()["sessions"]) == 2  # nothing ended
        assert phone.get("/api/session").get_json()["control"] is True  # the phone was not locked half-way
        small_card.empty()
        assert tablet.delete(f"/api/sessions/{phones}").status_code == 200
        assert phone.get("/api/session").get_json()["control"] is False
    finally:
        close_app(app)


def test_a_device_s_requests_note_when_it_was_last_seen_at_most_once_a_minute(tmp_path):
    """Every request of a device let in wrote its last-seen time: each tap, and each look of the devices page every
    10 s, was a write to the SD card for a time the page shows to the minute. A clock set back is noted at once."""
    now = [1_000_000.0]
    store = AuthStore(tmp_path / AUTH_NAME, clock=lambda: now[0])
    try:
        token, _ = store.open_session("tag", hours=12, address="192.0.2.10", agent="tablet")
        seen = lambda: store.sessions()[0]["last_seen"]  # noqa: E731
        let_in = seen()
        for step in (10, 20, LAST_SEEN_STEP_S - 31):  # a minute's requests
            now[0] += step
            assert store.session_for(token, "tag") is not None and seen() == let_in
        now[0] += 1
        assert store.session_for(token, "tag") is not None and seen() != let_in  # a minute on: noted
        noted = seen()
        now[0] -= 3600  # the clock set back an hour (an offline Pi's, set right by hand later)
        store.session_for(token, "tag")
        assert seen() != noted
    finally:
        store.close()
