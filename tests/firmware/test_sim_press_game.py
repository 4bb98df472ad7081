"""A whole game where every Believe and Bluff comes through ``POST /api/sim/press``.

The app is built exactly as ``serve --simulate`` builds it: the table's mock
pins, the debounce, the worker, the referee, and for every Bluff the simulated
camera's rendered frame read by the real reader. A reading the reader is unsure
of goes to ``confirm`` (R14) and is typed in, as the table would.
"""

from __future__ import annotations

import pytest

from companion.app.settings import Settings
from companion.app.web import close_app, create_app

PIN = {"X-Table-Pin": "4321"}


@pytest.fixture
def client(tmp_path):
    settings = Settings.defaults().with_overrides(table__pin="4321")
    app = create_app(tmp_path / "instance", simulate=True, settings=settings, test_config={"TESTING": True})
    services = app.extensions["elephants_bluff"]
    assert services.table is not None and services.gpio_name == "mock"
    yield app.test_client()
    close_app(app)


def test_a_whole_game_is_played_with_the_tables_buttons(client):
    def post(url, body):
        r = client.post(url, json=body, headers=PIN)
        assert r.status_code < 300, r.json
        return r.json

    def state():
        return client.get("/api/games/current").json

    def bluff_on(values):
        """Set the dice, press Bluff on the tray; confirm by hand if the reader was unsure."""
        post("/api/sim/dice", {"values": values})
        post("/api/sim/press", {"button": "bluff"})
        s = client.get(f"/api/games/{gid}").json
        challenge = client.get(f"/api/challenges/{s['last_challenge']}").json
        assert challenge["has_images"]  # the rendered frame was saved
        if s["phase"] == "confirm":
            post(f"/api/games/{gid}/confirm", {"dice": values})
        else:
            assert sorted(challenge["dice"]) == sorted(values), challenge["reading"]  # never silently wrong

    game = post("/api/games", {"players": ["Ann", "Ben"], "path_length": 2})
    gid = game["id"]

    post(f"/api/games/{gid}/claim", {"amount": 9})  # Ann claims 9
    bluff_on([6, 5, 4])  # Ben: Bluff! 15 >= 9, Ben moves (R9)
    assert (state()["round"], state()["players"][1]["position"]) == (2, 1)

    post(f"/api/games/{gid}/claim", {"amount": 10})  # Ben starts (R11) and claims 10
    post("/api/sim/press", {"button": "believe"})  # Ann believes
    assert (state()["phase"], state()["to_act"]) == ("claim", 0)
    post(f"/api/games/{gid}/claim", {"amount": 11})
    bluff_on([1, 1, 1])  # Ben: Bluff! 3 < 11, Ann moves
    assert [p["position"] for p in state()["players"]] == [1, 1]

    post(f"/api/games/{gid}/claim", {"amount": 12})  # Ann starts and claims 12
    bluff_on([6, 6, 6])  # Ben: 18 >= 12, Ben reaches the red square
    final = client.get(f"/api/games/{gid}").json
    assert final["phase"] == "over" and final["loser"] == 1
    assert final["last_challenge"].endswith("-3")  # three Bluffs, all pressed on the table


def test_a_press_the_phase_does_not_allow_changes_nothing(client):
    gid = client.post("/api/games", json={"players": ["Ann", "Ben"]}, headers=PIN).json["id"]
    before = client.get(f"/api/games/{gid}").json
    client.post("/api/sim/press", json={"button": "bluff"}, headers=PIN)
    assert client.get(f"/api/games/{gid}").json == before


def test_an_unknown_button_is_a_400_in_words(client):
    r = client.post("/api/sim/press", json={"button": "launch"}, headers=PIN)
    assert r.status_code == 400 and "no button called 'launch'" in r.json["message"]
