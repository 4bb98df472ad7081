"""The camera set-up and the guided face capture behind the PIN: the simulated table's renderer, the real reader, real files."""

from __future__ import annotations

import csv
from pathlib import Path

import cv2
import numpy as np
import pytest

from companion.app.settings import Settings
from companion.app.web import create_app
from companion.core.settings import CONFIG_NAME
from tests.teach.tray_views import camera_sees, empty_tray

PIN = "4321"
H = {"X-Table-Pin": PIN}


@pytest.fixture
def table(tmp_path):
    app = create_app(tmp_path / "instance", simulate=True, settings=Settings.defaults().with_overrides(table__pin=PIN), test_config={"TESTING": True})
    services = app.extensions["elephants_bluff"]
    yield app.test_client(), services, tmp_path / "instance"
    services.close()


def _rows(instance: Path):
    path = instance / "owner-dataset" / "crops.csv"
    if not path.is_file():
        return []
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def test_the_set_up_needs_the_pin_and_is_refused_during_a_game(table):
    client, services, _ = table
    assert client.get("/api/setup/preview").status_code == 401
    assert client.post("/api/setup/face", json={"top": 4}).status_code == 401
    page = client.get("/setup")
    assert page.status_code == 200 and b"/api/setup/preview" not in page.data  # no picture without the PIN
    shot = client.get("/api/setup/preview", headers=H)
    assert shot.status_code == 200 and shot.mimetype == "image/jpeg" and cv2.imdecode(np.frombuffer(shot.data, np.uint8), cv2.IMREAD_COLOR).shape[1] <= 640
    client.post("/api/games", json={"players": ["Ann", "Ben"]}, headers=H)
    for method, url in (("GET", "/api/setup/preview"), ("GET", "/api/setup/check"), ("POST", "/api/setup/face")):
        response = client.open(url, method=method, json={"top": 4} if method == "POST" else None, headers=H)
        assert response.status_code == 409 and response.json["error"] == "game_in_progress"


def test_show_each_face_keeps_one_die_labelled_as_the_camera_saw_it_and_refuses_two(table):
    client, services, instance = table
    services.dice_source.frame_source.rng = np.random.default_rng(11)  # a fixed rendering: one die, read as one
    services.dice_source.frame_source.render_options["touching"] = 0.0  # two dice lie apart (touching ones read as one leaning die)
    client.post("/api/sim/dice", json={"values": [4]}, headers=H)
    shot = client.post("/api/setup/face", json={"top": 4}, headers=H)
    assert shot.status_code == 200, shot.json
    assert shot.json["seen"] == 3 and shot.json["read_top"] == 4 and shot.json["agrees"] is True
    assert shot.json["shots_per_top"]["4"] == 1
    assert [int(r["value"]) for r in _rows(instance)] == [3]  # the face the camera saw: 7 - 4

    client.post("/api/sim/dice", json={"values": [4, 2]}, headers=H)
    two = client.post("/api/setup/face", json={"top": 4}, headers=H)
    assert two.status_code == 422 and two.json["error"] == "too_many" and "leave only a die with 4 on top" in two.json["message"]
    assert len(_rows(instance)) == 1  # nothing saved
    bad = client.post("/api/setup/face", json={"top": 7}, headers=H)
    assert bad.status_code == 400 and "1 to 6" in bad.json["message"]


def test_no_die_is_refused_the_empty_tray_is_kept_and_the_reader_switches_to_it(table, tmp_path):
    client, services, instance = table
    client.post("/api/sim/dice", json={"values": [5, 1, 2]}, headers=H)
    busy = client.post("/api/setup/empty-tray", headers=H)
    assert busy.status_code == 422 and busy.json["error"] == "not_empty"
    assert not (instance / "empty-tray.png").exists()

    camera_sees(services, tmp_path, empty_tray())
    none = client.post("/api/setup/face", json={"top": 2}, headers=H)
    assert none.status_code == 422 and none.json["error"] == "no_die" and "put a die with 2 on top" in none.json["message"]
    assert _rows(instance) == []
    kept = client.post("/api/setup/empty-tray", headers=H)
    assert kept.status_code == 200 and "camera.empty_tray" in kept.json["stored"]
    assert (instance / "empty-tray.png").is_file()
    config = Settings.load(instance / CONFIG_NAME)
    assert config["camera.empty_tray"] == "empty-tray.png" and len(config["camera.tray_region"]) == 4
    assert services.dice_source.reader.tray_region == config["camera.tray_region"]  # the running reader uses it now


def test_the_tray_region_and_the_die_size_are_stored(table):
    client, services, instance = table
    tapped = client.post("/api/setup/region", json={"region": [0, 0, 8, 8]}, headers=H)
    assert tapped.status_code == 422 and tapped.json["error"] == "region_small" and "16×16" in tapped.json["message"]
    assert client.post("/api/setup/region", json={"region": [0, 0, 5000, 100]}, headers=H).status_code == 400
    done = client.post("/api/setup/region", json={"region": [40, 30, 1200, 900]}, headers=H)
    assert done.status_code == 200 and done.json["region"] == [40, 30, 1200, 900]
    assert Settings.load(instance / CONFIG_NAME)["camera.tray_region"] == [40, 30, 1200, 900]

    services.dice_source.frame_source.rng = np.random.default_rng(12)
    client.post("/api/sim/dice", json={"values": [6]}, headers=H)
    size = client.post("/api/setup/die-size", headers=H)
    placed = services.dice_source.frame_source.last_dice[0]
    assert size.status_code == 200 and abs(size.json["die_side_px"] - placed.side) <= 0.2 * placed.side
    assert Settings.load(instance / CONFIG_NAME)["reader.die_side_px"] == size.json["die_side_px"]
    hints = client.get("/api/setup/check", headers=H).json
    assert hints["die_side_px"] == size.json["die_side_px"] and {"brightness", "sharpness", "hints"} <= set(hints)


def test_a_tray_region_smaller_than_the_measured_die_is_refused_and_nothing_is_stored(table):
    """No die fits in it, so every reading would find none: the page's tap, not a box drawn round the tray."""
    client, services, instance = table
    client.post("/api/setup/region", json={"region": [40, 30, 1200, 900]}, headers=H)
    services.dice_source.frame_source.rng = np.random.default_rng(12)
    client.post("/api/sim/dice", json={"values": [6]}, headers=H)
    side = client.post("/api/setup/die-size", headers=H).json["die_side_px"]
    small = client.post("/api/setup/region", json={"region": [300, 200, side + 40, side - 1]}, headers=H)
    assert small.status_code == 422 and small.json["error"] == "region_small"
    assert f"smaller than one die ({side} pixels)" in small.json["message"]
    assert Settings.load(instance / CONFIG_NAME)["camera.tray_region"] == [40, 30, 1200, 900]  # nothing stored
    assert services.dice_source.reader.tray_region == [40, 30, 1200, 900]
    fits = client.post("/api/setup/region", json={"region": [300, 200, side, side]}, headers=H)
    assert fits.status_code == 200 and fits.json["region"] == [300, 200, side, side]


def test_teaching_from_the_page_needs_the_pin_and_names_the_top_faces_it_lacks(table):
    client, services, instance = table
    assert client.post("/api/model/teach").status_code == 401
    services.dice_source.frame_source.rng = np.random.default_rng(11)
    client.post("/api/sim/dice", json={"values": [6]}, headers=H)
    assert client.post("/api/setup/face", json={"top": 6}, headers=H).status_code == 200
    refused = client.post("/api/model/teach", headers=H)
    assert refused.status_code == 400 and refused.json["error"] == "cannot_teach"
    assert "1, 2, 3, 4, 5, 6 on top" in refused.json["message"]  # one shot of 6 is not enough either
    assert not (instance / "models" / "registry.json").exists()
    status = client.get("/api/model").json
    assert status["active"] == status["shipped"] and status["dataset"]["crops"] == 1 and status["collecting"] is True
    assert client.post("/api/model/rollback", headers=H).status_code == 409  # nothing to go back to
