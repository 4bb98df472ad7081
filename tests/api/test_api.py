"""Every route of shared/API.md and every error it names, through the Flask test client."""

from __future__ import annotations

import pytest

from tests.conftest import PIN, PIN_HEADERS
from companion.app.web import close_app


def start(client, players=("Ann", "Ben", "Cy"), **extra):
    r = client.post("/api/games", json={"players": list(players), **extra}, headers=PIN_HEADERS)
    assert r.status_code == 201, r.json
    return r.json


def post(client, path, body=None, headers=PIN_HEADERS):
    return client.post(path, json=body, headers=headers)


def events_in_log(services, game_id):
    return len(services.referee.store.events(game_id))


# --- health, openapi, session ---------------------------------------------------------

def test_health_names_version_camera_gpio_and_model(client):
    body = client.get("/api/health").json
    assert body["status"] == "ok" and set(body) >= {"version", "camera", "gpio", "model"}


def test_openapi_describes_every_api_route(app, client):
    spec = client.get("/api/openapi.json").json
    assert spec["openapi"].startswith("3.")
    documented = {p.replace("{", "<").replace("}", ">") for p in spec["paths"]}
    routes = {r.rule for r in app.url_map.iter_rules() if r.rule.startswith("/api/")}
    assert routes <= documented, routes - documented


def test_openapi_names_every_field_a_game_and_a_bluff_carry(client):
    schemas = client.get("/api/openapi.json").json["components"]["schemas"]
    game = start(client, ("Ann", "Ben"))
    post(client, f"/api/games/{game['id']}/claim", {"amount": 9})
    bluff = post(client, f"/api/games/{game['id']}/bluff", {}).get_json()
    state, challenge = bluff["state"], bluff["challenge"]
    assert set(state) <= set(schemas["GameState"]["properties"]), set(state) - set(schemas["GameState"]["properties"])
    assert set(challenge) <= set(schemas["Challenge"]["properties"]), set(challenge) - set(schemas["Challenge"]["properties"])
    assert challenge["source"] in schemas["Challenge"]["properties"]["source"]["enum"]


def test_session_with_the_pin_lets_this_device_act_without_the_header(client):
    assert client.get("/api/session").json["control"] is False
    assert client.post("/api/session", json={"pin": PIN}).status_code == 200
    assert client.get("/api/session").json["control"] is True
    assert client.post("/api/games", json={"players": ["Ann", "Ben"]}).status_code == 201
    cookie = client.get_cookie("eb_session")
    assert cookie.http_only and cookie.same_site == "Strict"
    client.delete("/api/session")
    assert client.post("/api/games", json={"players": ["Ann", "Ben"]}).status_code == 401


@pytest.mark.parametrize("body,status", [({"pin": "0000"}, 401), ({"pin": ""}, 400), ({}, 400), ({"pin": 4321}, 400)])
def test_session_with_a_wrong_or_missing_pin_is_refused(client, body, status):
    r = client.post("/api/session", json=body)
    assert r.status_code == status and r.json["message"]
    assert client.get("/api/session").json["control"] is False


def test_repeated_wrong_pins_lock_the_client_out(client):
    for _ in range(5):
        assert client.post("/api/session", json={"pin": "9999"}).status_code == 401
    r = client.post("/api/session", json={"pin": PIN})
    assert r.status_code == 429 and "wait" in r.json["message"]


# --- games ------------------------------------------------------------------------------

def test_start_a_game_returns_201_and_its_state(client):
    state = start(client, path_length=5, starter=2)
    assert state["phase"] == "claim" and state["to_act"] == 2 and state["path_length"] == 5
    assert state["claim"] is None and state["min_claim"] == 3 and state["loser"] is None
    assert [p["name"] for p in state["players"]] == ["Ann", "Ben", "Cy"]


def test_start_with_ages_lets_the_youngest_start(client):
    assert start(client, ages=[30, 30, 8])["to_act"] == 2


def test_current_game_is_404_before_any_game_then_the_newest(client):
    r = client.get("/api/games/current")
    assert r.status_code == 404 and r.json["error"] == "not_found"
    state = start(client)
    assert client.get("/api/games/current").json["id"] == state["id"]
    assert client.get(f"/api/games/{state['id']}").json == state
    listing = client.get("/api/games").json
    assert listing["current"] == state["id"] and listing["games"][0]["id"] == state["id"]


def test_a_game_left_for_a_new_one_is_no_longer_in_progress_and_never_comes_back(client):
    left = start(client)
    post(client, f"/api/games/{left['id']}/claim", {"amount": 9})  # left mid-round: "New game" on the page
    newer = start(client, ("Ann", "Ben"), path_length=2)
    assert client.get("/api/games/current").json["id"] == newer["id"]
    for _ in range(4):  # Ben calls every claim of 18 on dice that hold it, or Ann's, until one reaches red
        state = client.get(f"/api/games/{newer['id']}").json
        if state["phase"] == "over":
            break
        client.post("/api/sim/dice", json={"values": [1, 1, 1]}, headers=PIN_HEADERS)
        post(client, f"/api/games/{newer['id']}/claim", {"amount": 18})
        post(client, f"/api/games/{newer['id']}/bluff", {})
    assert client.get(f"/api/games/{newer['id']}").json["phase"] == "over"
    # the game left unfinished does not come back as the game on the table, and the camera set-up is open again
    assert client.get("/api/games/current").status_code == 404
    assert client.get("/api/games").json["current"] is None
    assert client.get("/api/setup/check", headers=PIN_HEADERS).status_code != 409
    assert client.get(f"/api/games/{left['id']}").json["phase"] == "decide"  # still saved as it was left


@pytest.mark.parametrize("game_id", ["g-000000000000", "nope", "c-123", "..%2f..%2fetc"])
def test_unknown_games_are_404(client, game_id):
    r = client.get(f"/api/games/{game_id}")
    assert r.status_code == 404 and r.json["message"]
    assert post(client, f"/api/games/{game_id}/claim", {"amount": 5}).status_code == 404


@pytest.mark.parametrize(
    "body,status,words",
    [
        ({"players": ["Ann"]}, 422, "2 to 10"),
        ({"players": [f"P{i}" for i in range(11)]}, 422, "2 to 10"),
        ({"players": ["Ann", ""]}, 422, "needs a name"),
        ({"players": ["Ann", "x" * 200]}, 422, "at most 30"),
        ({"players": "Ann, Ben"}, 400, "list of names"),
        ({"players": ["Ann", "Ben"], "path_length": "7"}, 400, "whole number"),
        ({"players": ["Ann", "Ben"], "starter": 5}, 422, "seats 0 to 1"),
        ({}, 400, "Give the players"),
        ({"players": ["Ann", "Ben"], "colour": "red"}, 400, "Unknown field"),
    ],
)
def test_bad_new_games_are_refused_and_nothing_is_logged(client, services, body, status, words):
    r = post(client, "/api/games", body)
    assert r.status_code == status and words in r.json["message"]
    assert services.referee.game_ids() == []


def test_malformed_json_and_non_objects_are_400(client, services):
    for data in ("{", "[1, 2]", '"text"', "null"):
        r = client.post("/api/games", data=data, headers={**PIN_HEADERS, "Content-Type": "application/json"})
        assert r.status_code == 400 and r.json["error"] == "bad_request", data
    assert services.referee.game_ids() == []


# --- the PIN ------------------------------------------------------------------------------

CONTROL_ROUTES = ["/api/games", "/api/games/{g}/claim", "/api/games/{g}/believe", "/api/games/{g}/bluff", "/api/games/{g}/confirm", "/api/challenges/c-x-1/correct", "/api/sim/dice", "/api/sim/press"]


@pytest.mark.parametrize("route", CONTROL_ROUTES)
@pytest.mark.parametrize("headers", [{}, {"X-Table-Pin": "0000"}, {"X-Table-Pin": ""}])
def test_every_control_route_needs_the_pin_and_changes_nothing_without_it(client, services, route, headers):
    game = start(client)
    r = client.post(route.format(g=game["id"]), json={"amount": 5}, headers=headers)
    assert r.status_code == 401 and r.json["error"] == "unauthorized"
    assert events_in_log(services, game["id"]) == 1


def test_control_routes_refuse_cross_site_requests(client, services):
    game = start(client)
    for headers in ({"Origin": "http://evil.example"}, {"Sec-Fetch-Site": "cross-site"}, {"Origin": "null"}):
        r = post(client, f"/api/games/{game['id']}/claim", {"amount": 5}, headers={**PIN_HEADERS, **headers})
        assert r.status_code == 403, headers
    assert events_in_log(services, game["id"]) == 1
    same = post(client, f"/api/games/{game['id']}/claim", {"amount": 5}, headers={**PIN_HEADERS, "Origin": "http://localhost"})
    assert same.status_code == 200


def test_unknown_host_names_are_refused_but_ip_addresses_work(client):
    assert client.get("/api/health", headers={"Host": "evil.example"}).status_code == 403
    assert client.get("/api/health", headers={"Host": "192.168.1.20:8000"}).status_code == 200


def test_responses_carry_security_headers(client):
    h = client.get("/api/health").headers
    assert h["X-Content-Type-Options"] == "nosniff" and h["X-Frame-Options"] == "DENY"
    assert "default-src 'self'" in h["Content-Security-Policy"]


# --- playing ------------------------------------------------------------------------------

def test_claim_believe_claim_bluff_through_the_api(client, services):
    g = start(client)["id"]
    assert post(client, f"/api/games/{g}/claim", {"amount": 8}).json["phase"] == "decide"
    state = post(client, f"/api/games/{g}/believe", {"peeked": True}).json
    assert state["phase"] == "claim" and state["to_act"] == 1 and state["peeked"] and state["min_claim"] == 9
    assert post(client, f"/api/games/{g}/claim", {"amount": 11, "seat": 1}).json["to_act"] == 2
    services.sim_table.set_next_values([1, 2, 3])
    r = post(client, f"/api/games/{g}/bluff")
    body = r.json
    assert r.status_code == 200 and body["phase"] == "claim" and body["to_act"] == 1
    c = body["challenge"]
    assert (c["claim"], c["claimer"], c["caller"], c["total"], c["dice"]) == (11, 1, 2, 6, [1, 2, 3])
    assert c["verdict"]["mover"] == 1 and c["verdict"]["steps"] == 1 and c["verdict"]["rule"] == "R9"
    assert client.get(f"/api/challenges/{c['id']}").json["total"] == 6
    assert [x["id"] for x in client.get(f"/api/games/{g}/challenges").json["challenges"]] == [c["id"]]


@pytest.mark.parametrize(
    "path,body,status,words",
    [
        ("claim", {"amount": 2}, 422, "at least 3"),
        ("claim", {"amount": 19}, 422, "at most 18"),
        ("claim", {"amount": "ten"}, 400, "whole number"),
        ("claim", {}, 400, "how many elephants"),
        ("claim", {"amount": 5, "seat": 1}, 409, "Ann's turn"),
        ("believe", {}, 409, "must pass a claim"),
        ("bluff", {}, 409, "must pass a claim"),
        ("confirm", {"dice": [1, 2, 3]}, 409, "no dice to confirm"),
        ("confirm", {}, 400, "three top faces"),
    ],
)
def test_refused_actions_get_their_status_and_leave_the_log_untouched(client, services, path, body, status, words):
    g = start(client)["id"]
    r = post(client, f"/api/games/{g}/{path}", body)
    assert r.status_code == status and words in r.json["message"], r.json
    assert events_in_log(services, g) == 1


def test_decide_phase_errors(client, services):
    g = start(client)["id"]
    post(client, f"/api/games/{g}/claim", {"amount": 9})
    assert post(client, f"/api/games/{g}/claim", {"amount": 10}).status_code == 409
    assert post(client, f"/api/games/{g}/believe", {"peeked": "yes"}).status_code == 400
    assert post(client, f"/api/games/{g}/believe", {"seat": 2}).status_code == 409
    assert post(client, f"/api/games/{g}/bluff", {"seat": 0}).status_code == 409
    assert events_in_log(services, g) == 2


def test_an_uncertain_reading_goes_to_confirm_then_the_table_decides(client, services):
    g = start(client)["id"]
    post(client, f"/api/games/{g}/claim", {"amount": 9})
    services.dice_source.uncertain_next = True
    body = post(client, f"/api/games/{g}/bluff").json
    assert body["phase"] == "confirm" and body["challenge"]["status"] == "awaiting_confirm"
    assert post(client, f"/api/games/{g}/confirm", {"dice": [1, 2, 9]}).status_code == 422
    assert post(client, f"/api/games/{g}/confirm", {"dice": [1, 2]}).status_code == 400
    state = post(client, f"/api/games/{g}/confirm", {"dice": [6, 2, 1]}).json
    assert state["phase"] == "claim" and state["players"][1]["position"] == 1


def test_a_correction_re_decides_and_is_shown_with_its_audit_trail(client, services):
    g = start(client)["id"]
    post(client, f"/api/games/{g}/claim", {"amount": 9})
    services.sim_table.set_next_values([1, 1, 1])
    cid = post(client, f"/api/games/{g}/bluff").json["challenge"]["id"]
    r = post(client, f"/api/challenges/{cid}/correct", {"dice": [6, 6, 6], "by": "Cy"})
    assert r.status_code == 200
    assert [p["position"] for p in r.json["state"]["players"]] == [0, 1, 0]
    corr = client.get(f"/api/challenges/{cid}").json["corrections"]
    assert corr[0]["by"] == "Cy" and corr[0]["old"] == [1, 1, 1] and corr[0]["new"] == [6, 6, 6] and corr[0]["at"]
    assert post(client, f"/api/challenges/{cid}/correct", {"dice": [6, 6, 6]}).status_code == 422
    assert post(client, "/api/challenges/c-nope-1/correct", {"dice": [6, 6, 6]}).status_code == 404
    assert post(client, f"/api/challenges/{cid}/correct", {"dice": "666"}).status_code == 400


@pytest.mark.parametrize("cid", ["c-nope-1", "nope", "c-..-1", "..", "c-%2e%2e-1"])
def test_unknown_challenges_and_their_images_are_404(client, cid):
    assert client.get(f"/api/challenges/{cid}").status_code == 404
    assert client.get(f"/api/challenges/{cid}/image").status_code == 404
    assert client.get(f"/api/challenges/{cid}/annotated").status_code == 404


def test_a_challenge_without_a_photo_has_no_image(client, services):
    g = start(client)["id"]
    post(client, f"/api/games/{g}/claim", {"amount": 9})
    cid = post(client, f"/api/games/{g}/bluff").json["challenge"]["id"]
    if client.get(f"/api/challenges/{cid}").json["has_images"]:
        pytest.skip("this dice source saves photos; covered by the photo test")
    r = client.get(f"/api/challenges/{cid}/image")
    assert r.status_code == 404 and "no saved photo" in r.json["message"]


def test_a_whole_game_can_be_played_to_a_loser_through_the_api(client, services):
    g = start(client, players=["Ann", "Ben"], path_length=3)["id"]
    while True:
        state = client.get(f"/api/games/{g}").json
        if state["phase"] == "over":
            break
        post(client, f"/api/games/{g}/claim", {"amount": 15})
        services.sim_table.set_next_values([1, 1, 1])
        post(client, f"/api/games/{g}/bluff")
    assert state["loser"] is not None and state["players"][state["loser"]]["position"] == 3
    assert client.get("/api/games/current").status_code == 404


# --- simulation ---------------------------------------------------------------------------

@pytest.mark.parametrize("body,status", [({"values": [1, 2, 7]}, 422), ({"values": []}, 422), ({"values": [1] * 7}, 422), ({"values": "123"}, 400), ({"values": [1, True, 3]}, 400), ({}, 400)])
def test_sim_dice_refuses_impossible_dice(client, body, status):
    assert post(client, "/api/sim/dice", body).status_code == status


def test_sim_routes_are_404_on_a_real_table(tmp_path, settings):
    from companion.app.web import create_app

    app = create_app(tmp_path / "real", simulate=False, settings=settings, test_config={"TESTING": True})
    try:
        c = app.test_client()
        assert c.post("/api/sim/dice", json={"values": [1, 2, 3]}, headers=PIN_HEADERS).status_code == 404
        assert c.post("/api/sim/press", json={"button": "bluff"}, headers=PIN_HEADERS).status_code == 404
    finally:
        close_app(app)


def test_unknown_api_addresses_and_methods_answer_in_json(client):
    r = client.get("/api/nothing-here")
    assert r.status_code == 404 and r.json["error"] == "not_found"
    r = client.put("/api/games")
    assert r.status_code == 405 and r.json["message"]


@pytest.mark.parametrize("move, body", [("claim", {"amount": 12}), ("believe", {}), ("bluff", {})])
def test_a_move_from_a_screen_out_of_date_is_refused_and_changes_nothing(client, services, move, body):
    """A tablet back from a network gap showed Ben deciding on Ann's 9 while Cy decided on Ben's 15: its Bluff was
    logged as Cy's. The page says which state it acted on (``events``); a move on another is refused."""
    game = start(client)
    shown = client.get(f"/api/games/{game['id']}").get_json()
    assert post(client, f"/api/games/{game['id']}/claim", {"amount": 9}).status_code == 200  # another tablet moved
    before = events_in_log(services, game["id"])
    late = post(client, f"/api/games/{game['id']}/{move}", {**body, "events": shown["events"]})
    assert late.status_code == 409 and late.get_json()["error"] == "moved_on", late.get_json()
    assert "moved on since this screen showed it" in late.get_json()["message"]
    assert events_in_log(services, game["id"]) == before
    now = client.get(f"/api/games/{game['id']}").get_json()
    fresh = {"claim": ("believe", {}), "believe": ("believe", {}), "bluff": ("believe", {})}[move]
    assert post(client, f"/api/games/{game['id']}/{fresh[0]}", {**fresh[1], "events": now["events"]}).status_code == 200


def test_the_dice_typed_for_one_bluff_are_never_taken_for_the_next(client, services):
    """Faces typed for Bluff 1 on a tablet cut off from the table were applied to Bluff 2."""
    services.referee.set_camera_mode("off")  # every Bluff's dice are typed
    game = start(client)
    post(client, f"/api/games/{game['id']}/claim", {"amount": 9})
    first = post(client, f"/api/games/{game['id']}/bluff").get_json()["state"]
    assert post(client, f"/api/games/{game['id']}/confirm", {"dice": [6, 6, 6], "events": first["events"]}).status_code == 200
    after = client.get(f"/api/games/{game['id']}").get_json()
    post(client, f"/api/games/{game['id']}/claim", {"amount": 9})
    post(client, f"/api/games/{game['id']}/bluff")
    late = post(client, f"/api/games/{game['id']}/confirm", {"dice": [1, 1, 1], "events": first["events"]})  # the old screen
    assert late.status_code == 409 and late.get_json()["error"] == "moved_on"
    assert client.get(f"/api/games/{game['id']}").get_json()["phase"] == "confirm" and after["phase"] == "claim"


@pytest.mark.parametrize("events", [0, -1, "3", 2.5, True, None])
def test_events_that_are_no_count_of_events_are_refused_in_words(client, events):
    game = start(client)
    answer = post(client, f"/api/games/{game['id']}/claim", {"amount": 9, "events": events})
    if events is None:
        assert answer.status_code == 200  # null: the screen did not say
    else:
        assert answer.status_code == 400 and "'events' is the number of events" in answer.get_json()["message"]


def test_a_game_left_for_a_newer_one_takes_no_move(client, services):
    """A tablet that missed the new game's start played on in the old one, which nobody else saw."""
    old = start(client)
    new = start(client, players=("Dee", "Eve"))
    before = events_in_log(services, old["id"])
    answer = post(client, f"/api/games/{old['id']}/claim", {"amount": 9})
    assert answer.status_code == 409 and answer.get_json()["error"] == "game_left"
    assert events_in_log(services, old["id"]) == before
    assert post(client, f"/api/games/{new['id']}/claim", {"amount": 9}).status_code == 200
