"""The simulated table: lifting the lid (its private peek check looks at the tray) keeps the dice set by ``/api/sim/dice`` (issue 27)."""

from __future__ import annotations

from companion.app.settings import Settings
from companion.app.web import close_app, create_app

from .conftest import PIN, PIN_HEADERS


def test_a_lid_press_does_not_use_up_the_dice_set_for_the_next_bluff(tmp_path):
    settings = Settings.defaults().with_overrides(table__pin=PIN, gpio__lid_switch=5)  # the suggested pin: a lid switch fitted
    app = create_app(tmp_path / "instance", simulate=True, settings=settings, test_config={"TESTING": True})  # the real simulated camera and reader
    try:
        client = app.test_client()
        game = client.post("/api/games", json={"players": ["Ann", "Ben"]}, headers=PIN_HEADERS).get_json()
        assert client.post(f"/api/games/{game['id']}/claim", json={"amount": 9}, headers=PIN_HEADERS).status_code == 200
        assert client.post("/api/sim/dice", json={"values": [6, 5, 4]}, headers=PIN_HEADERS).status_code == 200
        lid = client.post("/api/sim/press", json={"button": "lid"}, headers=PIN_HEADERS)
        assert lid.status_code == 200 and lid.get_json()["result"] == "done", lid.get_json()
        source = app.extensions["elephants_bluff"].dice_source.frame_source
        bluff = client.post(f"/api/games/{game['id']}/bluff", headers=PIN_HEADERS).get_json()
        assert source.last_tops == [6, 5, 4], "the lid's look used up the dice set for the Bluff"
        reading = bluff["challenge"]["reading"]
        if reading["status"] == "ok":
            assert sorted(d["top"] for d in reading["dice"]) == [4, 5, 6]
        # After the Bluff the table rolls anew: the set dice are not shown twice by design.
        client.post(f"/api/games/{game['id']}/confirm", json={"dice": [6, 5, 4]}, headers=PIN_HEADERS)
    finally:
        close_app(app)
