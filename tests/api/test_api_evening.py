"""Issue 28's routes through the Flask test client: corrections after game over and
who made them (R12, R15), the rematch and the evening's tally, playing without the
camera, and the round's history (R13)."""

from __future__ import annotations

from tests.api.test_api import post, start
from tests.conftest import PIN
from companion.app.web import close_app


def lose(client, services, game_id, path_length=2):
    """Ann claims 18 and Ben calls Bluff on 1+1+1 until Ann's elephant is on the red square (R10, R12)."""
    for _ in range(path_length):
        state = client.get(f"/api/games/{game_id}").json
        if state["phase"] == "over":
            break
        seat = state["to_act"]
        post(client, f"/api/games/{game_id}/claim", {"amount": 18, "seat": seat})
        services.sim_table.set_next_values([1, 1, 1])
        body = post(client, f"/api/games/{game_id}/bluff").json
    return body


def test_r12_r15_a_correction_after_game_over_is_refused_until_confirmed_then_reopens(client, services):
    g = start(client, players=("Ann", "Ben"), path_length=3, starter=0)["id"]
    body = lose(client, services, g)  # Ann +2, then +2 onto the red square
    assert body["state"]["phase"] == "over" and body["state"]["loser"] == 0
    cid = body["challenge"]["id"]
    r = post(client, f"/api/challenges/{cid}/correct", {"dice": [6, 6, 6], "by": "Ben"})
    assert r.status_code == 409 and "game is over" in r.json["message"]
    assert client.get(f"/api/games/{g}").json["phase"] == "over"
    r = post(client, f"/api/challenges/{cid}/correct", {"dice": [6, 6, 6], "by": "Ben", "after_game_over": True})
    assert r.status_code == 200
    state = r.json["state"]
    assert state["last_correction"]["reopened"] is True and state["last_correction"]["by"] == "Ben"
    assert state["phase"] == "claim" and state["loser"] is None
    assert [p["position"] for p in state["players"]] == [2, 2]


def test_r15_a_finished_game_the_table_has_played_on_from_is_never_reopened_but_may_change_its_loser(client, services):
    short = start(client, players=("Ann", "Ben"), path_length=2, starter=0)["id"]
    one_bluff = lose(client, services, short)["challenge"]["id"]  # Ann claims 18 on 1+1+1: +2, onto the red square
    g = start(client, players=("Ann", "Ben"), path_length=3, starter=0)["id"]
    last = lose(client, services, g)["challenge"]["id"]  # Ann +2, then +2 onto the red square
    rematch = post(client, f"/api/games/{g}/rematch").json
    before = client.get(f"/api/games/{g}").json
    # 6+6+6 makes the last Bluff Ben's step of 2: Ann 2, Ben 2, nobody on red: the game would go on beside the rematch
    reopening = post(client, f"/api/challenges/{last}/correct", {"dice": [6, 6, 6], "after_game_over": True})
    assert reopening.status_code == 409 and reopening.json["error"] == "game_followed", reopening.json
    assert "started another game" in reopening.json["message"]
    assert client.get(f"/api/games/{g}").json == before  # nothing changed, nothing logged
    assert client.get("/api/games/current").json["id"] == rematch["id"]
    # the shorter game's one Bluff corrected to 6+6+6: Ben on red instead of Ann; it stays over, so it may change
    changed = post(client, f"/api/challenges/{one_bluff}/correct", {"dice": [6, 6, 6], "after_game_over": True})
    assert changed.status_code == 200 and changed.json["state"]["phase"] == "over" and changed.json["state"]["loser"] == 1
    assert client.get("/api/games/current").json["id"] == rematch["id"]


def test_r15_a_correction_names_a_player_of_the_game_and_keeps_the_pin_holders_session(client, services):
    g = start(client)["id"]
    post(client, f"/api/games/{g}/claim", {"amount": 9})
    services.sim_table.set_next_values([1, 1, 1])
    cid = post(client, f"/api/games/{g}/bluff").json["challenge"]["id"]
    assert post(client, f"/api/challenges/{cid}/correct", {"dice": [6, 6, 6], "by": "Mallory"}).status_code == 422
    assert client.post("/api/session", json={"pin": PIN}).status_code == 200
    r = client.post(f"/api/challenges/{cid}/correct", json={"dice": [6, 6, 6], "by": "cy"})
    assert r.status_code == 200
    record = r.json["challenge"]["corrections"][0]
    assert record["by"] == "Cy" and record["session"].startswith("s-")  # the session's id, as GET /api/sessions lists it
    again = client.post(f"/api/challenges/{cid}/correct", json={"dice": [5, 5, 5]}).json["challenge"]["corrections"][1]
    assert again["by"] == "table" and again["session"] == record["session"]  # the same device, the same session
    header = post(client, f"/api/challenges/{cid}/correct", {"dice": [4, 4, 4]}).json["challenge"]["corrections"][2]
    assert header["session"] == "pin-header"


def test_a_rematch_seats_the_same_players_the_loser_starts_and_the_evening_is_tallied(client, services):
    first = start(client, players=("Ann", "Ben", "Cy"), path_length=2, starter=0)["id"]
    assert post(client, f"/api/games/{first}/rematch").status_code == 409  # still being played
    lose(client, services, first)
    r = post(client, f"/api/games/{first}/rematch")
    assert r.status_code == 201
    second = r.json
    assert [p["name"] for p in second["players"]] == ["Ann", "Ben", "Cy"] and second["path_length"] == 2
    assert second["to_act"] == 0 and second["rematch_of"] == first  # Ann lost, Ann starts
    assert client.get("/api/games/current").json["id"] == second["id"]
    again = post(client, f"/api/games/{first}/rematch")  # one rematch per game (a second tablet's tap)
    assert again.status_code == 409 and again.json["error"] == "rematched"
    assert post(client, f"/api/games/{first}/rematch", headers={}).status_code == 401
    evening = client.get(f"/api/games/{second['id']}/evening").json
    assert [g["id"] for g in evening["games"]] == [first, second["id"]]
    assert evening["tally"] == [{"name": "Ann", "lost": 1}, {"name": "Ben", "lost": 0}, {"name": "Cy", "lost": 0}]
    assert client.get(f"/api/games/{first}/evening").json == evening  # the same evening from either game


def test_without_the_camera_a_bluff_waits_for_the_table_to_type_the_dice(client, services):
    assert client.get("/api/table").json["camera"] == "auto"
    assert post(client, "/api/table", {"camera": "sometimes"}).status_code == 400
    assert post(client, "/api/table", {"camera": "off"}, headers={}).status_code == 401
    assert post(client, "/api/table", {"camera": "off"}).json["dice_typed"] is True
    g = start(client)["id"]
    post(client, f"/api/games/{g}/claim", {"amount": 9})
    services.sim_table.set_next_values([6, 6, 6])  # the camera would have read these
    body = post(client, f"/api/games/{g}/bluff").json
    assert body["phase"] == "confirm" and body["challenge"]["reading"] is None
    assert "without the camera" in body["challenge"]["problem"]
    assert body["challenge"]["problem_codes"] == [{"code": "played_without_camera"}]  # the pages word it from the code
    state = post(client, f"/api/games/{g}/confirm", {"dice": [1, 2, 3]}).json
    assert state["players"][0]["position"] == 1  # 6 < 9: the claimer moves (R9)
    post(client, "/api/table", {"camera": "auto"})
    post(client, f"/api/games/{g}/claim", {"amount": 9})
    services.sim_table.set_next_values([6, 6, 6])
    assert post(client, f"/api/games/{g}/bluff").json["phase"] == "claim"  # read by the camera again


def test_the_camera_setting_is_kept_across_a_restart(tmp_path, settings):
    from companion.core.capture import ValuesDiceSource
    from companion.app.web import create_app

    for expected in ("auto", "off"):
        app = create_app(tmp_path / "inst", simulate=True, settings=settings, test_config={"TESTING": True}, dice_source=ValuesDiceSource())
        try:
            client = app.test_client()
            assert client.get("/api/table").json["camera"] == expected
            post(client, "/api/table", {"camera": "off"})
        finally:
            close_app(app)


def test_r13_the_history_shows_claims_believes_and_peeks_and_no_die(client):
    g = start(client)["id"]
    post(client, f"/api/games/{g}/claim", {"amount": 9})
    state = post(client, f"/api/games/{g}/believe", {"peeked": True}).json
    assert [(h["type"], h["seat"], h["amount"]) for h in state["history"]] == [("claim", 0, 9), ("believe", 1, 9)]
    assert state["history"][1]["peeked"] is True
    assert "dice" not in str(state["history"]) and "top" not in str(state["history"])


def test_the_camera_setting_a_full_card_cannot_keep_is_refused_in_words_and_the_table_plays_on_as_it_was(small_card, settings):
    """It held until the next start, which forgot it unsaid: a table that chose to type the dice found the camera
    reading them again after a restart."""
    from companion.core.capture import ValuesDiceSource
    from companion.app.web import create_app

    app = create_app(small_card.path / "inst", simulate=True, settings=settings, test_config={"TESTING": True}, dice_source=ValuesDiceSource())
    try:
        client = app.test_client()
        small_card.fill(leave=0)
        refused = post(client, "/api/table", {"camera": "off"})
        assert refused.status_code == 507 and refused.json["error"] == "disk_full"
        assert "disk is full" in refused.json["message"]
        table = client.get("/api/table").json
        assert (table["camera"], table["dice_typed"]) == ("auto", False)  # the camera still reads the dice
        assert list((small_card.path / "inst").glob("table-camera.json*")) == []  # nothing half-written left
        small_card.empty()
        assert post(client, "/api/table", {"camera": "off"}).json["camera"] == "off"  # with room, the same tap keeps it
    finally:
        close_app(app)
    again = create_app(small_card.path / "inst", simulate=True, settings=settings, test_config={"TESTING": True}, dice_source=ValuesDiceSource())
    try:
        assert again.test_client().get("/api/table").json["camera"] == "off"
    finally:
        close_app(again)
