"""The camera set-up (the tray's region, the empty tray, the lens, a die's size) and the guided face capture behind the PIN: the simulated table's renderer, the real reader, real files."""

from __future__ import annotations

import csv
import importlib.util
import re
import sys
from pathlib import Path

import cv2
import numpy as np
import pytest

from companion.app.settings import Settings
from companion.app.web import close_app, create_app
from companion.core.settings import CONFIG_NAME
from tests.teach.tray_views import camera_sees, empty_tray, pi_camera_module
from vision.pipeline.lens import bend_frame
from vision.simtable import render_chessboard
from vision.sources.picamera2 import Picamera2Source

PIN = "4321"
H = {"X-Table-Pin": PIN}
#: The wide lens of tests/vision/test_lens.py: flat dice near the edge read as leaning when it is not known.
WIDE = 0.2


@pytest.fixture
def table(tmp_path):
    app = create_app(tmp_path / "instance", simulate=True, settings=Settings.defaults().with_overrides(table__pin=PIN), test_config={"TESTING": True})
    services = app.extensions["elephants_bluff"]
    yield app.test_client(), services, tmp_path / "instance"
    close_app(app)


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
    assert not [p for p in instance.iterdir() if p.name.startswith("empty-tray")]

    camera_sees(services, tmp_path, empty_tray())
    none = client.post("/api/setup/face", json={"top": 2}, headers=H)
    assert none.status_code == 422 and none.json["error"] == "no_die" and "put a die with 2 on top" in none.json["message"]
    assert _rows(instance) == []
    kept = client.post("/api/setup/empty-tray", headers=H)
    assert kept.status_code == 200 and "camera.empty_tray" in kept.json["stored"]
    config = Settings.load(instance / CONFIG_NAME)
    assert re.fullmatch(r"empty-tray-[0-9a-f]{12}\.png", config["camera.empty_tray"]) and len(config["camera.tray_region"]) == 4
    assert (instance / config["camera.empty_tray"]).is_file()
    assert services.dice_source.reader.tray_region == config["camera.tray_region"]  # the running reader uses it now


def test_the_tray_region_and_the_die_size_are_stored(table):
    client, services, instance = table
    tapped = client.post("/api/setup/region", json={"region": [0, 0, 8, 8]}, headers=H)
    assert tapped.status_code == 422 and tapped.json["error"] == "region_small" and "16×16" in tapped.json["message"]
    before = Settings.load(instance / CONFIG_NAME).get("camera.tray_region")
    outside = client.post("/api/setup/region", json={"region": [0, 0, 5000, 100]}, headers=H)  # drawn on a bigger picture
    assert outside.status_code == 422 and outside.json["error"] == "region_outside" and outside.json["params"] == {"frame": "1280×960"}
    assert Settings.load(instance / CONFIG_NAME).get("camera.tray_region") == before  # nothing stored
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


# The lens step: a printed chessboard on the tray, seen through the wide lens, gives the bend the reader straightens
# its outlines by (camera.lens_distortion, what calibrate --lens stores).


def _config(instance):
    path = instance / CONFIG_NAME
    return path.read_text() if path.is_file() else ""


def test_the_chessboard_seen_through_the_wide_lens_stores_its_bend_and_the_reader_takes_it_at_once(table, tmp_path):
    client, services, instance = table
    camera_sees(services, tmp_path, bend_frame(render_chessboard(turn_deg=4.0), WIDE))
    measured = client.post("/api/setup/lens", headers=H)
    assert measured.status_code == 200, measured.json
    k = measured.json["lens_distortion"]
    assert k == pytest.approx(WIDE, abs=0.005) and measured.json["lens_distortion_k2"] == 0.0  # k alone fits this lens
    assert measured.json["measure_die_again"] is False  # no die was measured through the old bend
    assert Settings.load(instance / CONFIG_NAME)["camera.lens_distortion"] == k
    assert services.dice_source.reader.lens_distortion == k  # the running reader straightens with it now
    assert client.get("/api/setup/check", headers=H).json["lens_distortion"] == k


def test_a_die_measured_before_the_lens_is_asked_for_again(table, tmp_path):
    client, services, instance = table
    services.dice_source.frame_source.rng = np.random.default_rng(12)
    client.post("/api/sim/dice", json={"values": [6]}, headers=H)
    assert client.post("/api/setup/die-size", headers=H).status_code == 200
    camera_sees(services, tmp_path, bend_frame(render_chessboard(), WIDE))
    measured = client.post("/api/setup/lens", headers=H)
    assert measured.status_code == 200 and measured.json["measure_die_again"] is True
    assert Settings.load(instance / CONFIG_NAME)["reader.die_side_px"] > 0  # kept until measured again
    # forgetting a lens never measured, or a bend forgotten twice, changes nothing: no die to measure again
    assert client.delete("/api/setup/lens", headers=H).json["measure_die_again"] is True  # the bend it had is gone
    assert client.delete("/api/setup/lens", headers=H).json["measure_die_again"] is False


@pytest.mark.parametrize("shown, code, words", [
    ("the empty tray", "no_board", "No chessboard of 10 × 7 squares found"),
    ("a small board", "board_small", "covers too little of the picture"),
    ("a curled board", "board_not_flat", "do not lie on a flat grid"),
    ("a board running off the picture", "no_board", "every square inside it"),
])
def test_a_picture_without_a_usable_chessboard_is_refused_in_words_and_nothing_is_stored(table, tmp_path, shown, code, words):
    client, services, instance = table
    frame = {"the empty tray": lambda: empty_tray(), "a small board": lambda: bend_frame(render_chessboard(fill=0.3), WIDE),
             "a curled board": lambda: render_chessboard(curl=0.25), "a board running off the picture": lambda: bend_frame(render_chessboard(fill=1.1), WIDE)}[shown]()
    camera_sees(services, tmp_path, bend_frame(render_chessboard(), 0.1))  # a bend measured before
    assert client.post("/api/setup/lens", headers=H).status_code == 200
    before, reader = _config(instance), services.dice_source.reader
    camera_sees(services, tmp_path, frame)
    refused = client.post("/api/setup/lens", headers=H)
    assert refused.status_code == 422 and refused.json["error"] == code and words in refused.json["message"]
    assert "calibrate" not in refused.json["message"]  # the page's player is told to try again, not to run a command
    assert _config(instance) == before and services.dice_source.reader is reader  # the bend measured before stays


def test_forgetting_the_lens_reads_the_picture_as_it_is(table, tmp_path):
    client, services, instance = table
    camera_sees(services, tmp_path, bend_frame(render_chessboard(), 0.1, 0.2))  # a lens nearer a fisheye's: both coefficients
    both = client.post("/api/setup/lens", headers=H).json
    assert (both["lens_distortion"], both["lens_distortion_k2"]) == pytest.approx((0.1, 0.2), abs=0.01)
    assert services.dice_source.reader.lens_distortion_k2 == both["lens_distortion_k2"]
    assert client.get("/api/setup/check", headers=H).json["lens_distortion_k2"] == both["lens_distortion_k2"]
    camera_sees(services, tmp_path, bend_frame(render_chessboard(), WIDE))
    assert client.post("/api/setup/lens", headers=H).status_code == 200
    forgot = client.delete("/api/setup/lens", headers=H)
    assert forgot.status_code == 200 and forgot.json == {"lens_distortion": 0.0, "lens_distortion_k2": 0.0, "measure_die_again": False}
    assert Settings.load(instance / CONFIG_NAME)["camera.lens_distortion"] == 0.0
    assert services.dice_source.reader.lens_distortion == 0.0 and services.dice_source.reader.lens_distortion_k2 == 0.0


def test_the_lens_step_needs_the_pin_and_is_refused_during_a_game(table, tmp_path):
    client, services, instance = table
    camera_sees(services, tmp_path, bend_frame(render_chessboard(), WIDE))
    assert client.post("/api/setup/lens").status_code == 401
    assert client.delete("/api/setup/lens").status_code == 401
    assert client.post("/api/setup/lens", json={"bend": 0.3}, headers=H).status_code == 400  # it measures; nothing is typed in
    client.post("/api/games", json={"players": ["Ann", "Ben"]}, headers=H)
    for method in ("POST", "DELETE"):
        refused = client.open("/api/setup/lens", method=method, headers=H)
        assert refused.status_code == 409 and refused.json["error"] == "game_in_progress"
    assert Settings.load(instance / CONFIG_NAME)["camera.lens_distortion"] == 0.0


def test_the_chessboard_to_print_is_served_without_the_pin_as_a_page_of_a4(table):
    client, _, _ = table
    board = client.get("/setup/chessboard.svg")
    assert board.status_code == 200 and board.mimetype == "image/svg+xml"
    svg = board.get_data(as_text=True)
    assert 'width="297mm" height="210mm"' in svg and svg.count('<rect x=') == 35 + 1  # the 35 black squares and the cut line
    assert "Print at actual size" in svg
    # in the language of the set-up page that links it (?lang=), or of the browser
    assert "Stampa a grandezza reale" in client.get("/setup/chessboard.svg?lang=it").get_data(as_text=True)
    assert "Udskriv i faktisk størrelse" in client.get("/setup/chessboard.svg", headers={"Accept-Language": "da-DK"}).get_data(as_text=True)


@pytest.mark.skipif(importlib.util.find_spec("picamera2") is not None, reason="picamera2 is installed: a stand-in cannot take its place")
@pytest.mark.parametrize("model, said", [("imx708_wide", True), ("imx708_wide_noir", True), ("imx708", False), ("ov5647", False)])
def test_a_wide_pi_camera_whose_bend_is_not_measured_is_said_until_the_chessboard_measures_it(table, tmp_path, monkeypatch, model, said):
    """The Camera Module 3 Wide (libcamera's model ``imx708_wide``) bends the picture; until its bend is measured the
    set-up page's hints say so (code ``lens``), and after it they do not. A camera of an ordinary lens is never told."""
    client, services, instance = table
    monkeypatch.setitem(sys.modules, "picamera2", pi_camera_module(tmp_path, bend_frame(render_chessboard(), WIDE), model))
    services.dice_source.frame_source = Picamera2Source(1280, 960)
    hints = client.get("/api/setup/check", headers=H).json["hints"]
    assert [h["code"] for h in hints if h["code"] == "lens"] == (["lens"] if said else [])
    if said:
        assert model in hints[-1]["message"] and "calibrate --lens" in hints[-1]["message"]
    assert client.post("/api/setup/lens", headers=H).status_code == 200
    assert not [h for h in client.get("/api/setup/check", headers=H).json["hints"] if h["code"] == "lens"]


def test_a_shot_on_a_full_card_is_refused_in_words_and_keeps_nothing(small_card):
    """"Show each face" on a card that has filled: the framework's "internal error" (500) was all the page heard.
    It is the game log's own 507 ``disk_full``, in words, and the table's dataset is as it was. On a real small
    tmpfs."""
    instance = small_card.path / "instance"
    app = create_app(instance, simulate=True, settings=Settings.defaults().with_overrides(table__pin=PIN))
    services = app.extensions["elephants_bluff"]
    try:
        client = app.test_client()
        services.dice_source.frame_source.rng = np.random.default_rng(11)  # the fixed rendering of the test above
        client.post("/api/sim/dice", json={"values": [4]}, headers=H)
        small_card.fill()
        shot = client.post("/api/setup/face", json={"top": 4}, headers=H)
        assert shot.status_code == 507 and shot.json["error"] == "disk_full", shot.get_data(as_text=True)
        assert shot.json["message"] == "The companion's disk is full, so this could not be saved. Free some space (old Bluff photos can go) and try again."
        assert _rows(instance) == [] and not list((instance / "owner-dataset" / "crops").glob("*"))
        small_card.empty()
        again = client.post("/api/setup/face", json={"top": 4}, headers=H)
        assert again.status_code == 200 and len(_rows(instance)) == 1
    finally:
        close_app(app)


def test_a_new_empty_tray_on_a_card_with_room_for_its_photo_alone_keeps_the_old_photo_and_its_settings(small_card, tmp_path):
    """The empty tray taken again on a card that has room for the new photo but not for config.toml: the photo used to
    be written first, so the old region and exposure were left beside a photo they were not taken with. Now it is the
    game log's 507 ``disk_full`` in words, the old pair stays as it was, and nothing is left behind on the card. On a
    real small tmpfs."""
    instance = small_card.path / "instance"
    app = create_app(instance, simulate=True, settings=Settings.defaults().with_overrides(table__pin=PIN))
    services = app.extensions["elephants_bluff"]
    try:
        client = app.test_client()
        plain = np.full_like(empty_tray(), 120)  # a tray cloth with nothing on it: a photo of a few bytes
        camera_sees(services, tmp_path, plain)
        assert client.post("/api/setup/empty-tray", headers=H).status_code == 200
        name = Settings.load(instance / CONFIG_NAME)["camera.empty_tray"]
        photo, config = (instance / name).read_bytes(), (instance / CONFIG_NAME).read_bytes()
        kept = services.dice_source.reader.empty_tray.copy()

        camera_sees(services, tmp_path, empty_tray())  # the tray itself, set up again: a photo of many pages
        new_photo = cv2.imencode(".png", cv2.cvtColor(empty_tray(), cv2.COLOR_BGR2GRAY))[1].tobytes()
        assert len(photo) < 4096 < len(config)  # the old photo's room would not hold config.toml
        small_card.fill(leave=-(-len(new_photo) // 4096) * 4096)  # the new photo's own pages, no more
        refused = client.post("/api/setup/empty-tray", headers=H)
        assert refused.status_code == 507 and refused.json["error"] == "disk_full", refused.get_data(as_text=True)
        assert (instance / name).read_bytes() == photo and (instance / CONFIG_NAME).read_bytes() == config
        assert np.array_equal(services.dice_source.reader.empty_tray, kept)  # the running reader kept its pair too
        assert sorted(p.name for p in instance.iterdir() if "empty-tray" in p.name or p.suffix in (".part", ".new")) == [name]

        small_card.empty()
        again = client.post("/api/setup/empty-tray", headers=H)
        new_name = Settings.load(instance / CONFIG_NAME)["camera.empty_tray"]
        assert again.status_code == 200 and (instance / new_name).read_bytes() == new_photo
        assert sorted(p.name for p in instance.iterdir() if "empty-tray" in p.name or p.suffix in (".part", ".new")) == [new_name]
    finally:
        close_app(app)
