"""A camera set-up made for another picture than the camera now gives (a camera switched to another resolution after
``calibrate``, a tray region typed by hand outside the picture): every reading is made without the set-up and goes to
the table with the reason ``calibration`` (RULES.md R14), and the set-up page and ``check`` say what to set again.
A real instance folder, the real reader, the simulated table's camera at 640×480 and the set-up routes."""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
import pytest

from companion.app.checks import full_findings
from companion.app.services import build_services, calibration_problem
from companion.app.settings import Settings
from companion.app.web import close_app, create_app
from companion.core.reading import OK, UNCERTAIN
from companion.core.settings import CONFIG_NAME, write_config
from vision.reader import load_reader
from vision.simtable import render_table
from tests.teach.tray_views import camera_sees, empty_tray

PIN = "4321"
H = {"X-Table-Pin": PIN}
#: what ``calibrate`` stores for the simulated table's 1280×960 picture
CALIBRATED = {"camera.empty_tray": "empty-tray.png", "camera.tray_region": [80, 60, 1120, 840], "reader.die_side_px": 64}


def _instance(tmp_path: Path, **more: object) -> Path:
    """An instance calibrated on the simulated table's 1280×960 empty tray, with ``more`` settings."""
    instance = tmp_path / "instance"
    instance.mkdir(parents=True)
    write_config(instance, {"table.pin": PIN, **CALIBRATED, **more})
    cv2.imwrite(str(instance / "empty-tray.png"), empty_tray())
    return instance


def _reader(instance: Path):
    return load_reader(Settings.load(instance / CONFIG_NAME))


def _three_dice(width: int = 1280, height: int = 960, seed: int = 11) -> np.ndarray:
    frame, _ = render_table([2, 5, 3], np.random.default_rng(seed), width=width, height=height)
    return frame


@pytest.fixture
def smaller_camera(tmp_path):
    """The table after its camera was switched to 640×480, the calibration kept from 1280×960."""
    instance = _instance(tmp_path, **{"camera.width": 640, "camera.height": 480})
    settings = Settings.load(instance / CONFIG_NAME)
    services = build_services(instance, settings, simulate=True)
    app = create_app(instance, simulate=True, settings=settings, test_config={"TESTING": True}, services=services)
    yield app.test_client(), services, instance
    close_app(app)


def test_a_frame_of_another_size_than_the_empty_tray_is_read_without_the_set_up_and_never_ok(tmp_path):
    reader = _reader(_instance(tmp_path, **{"camera.tray_region": []}))
    assert reader.empty_tray is not None and reader.empty_tray.shape == (960, 1280)
    reading = reader.read(_three_dice(640, 480))
    assert reading.status == UNCERTAIN
    assert {"code": "calibration", "frame": [640, 480], "empty_tray": [1280, 960]} in reading.reasons
    assert "the empty tray's photo is 1280x960" in reading.reason and "set up the camera again" in reading.reason
    assert len(reading.dice) == 3  # read as a table without a set-up reads: the dice are offered to confirm
    same_size = reader.read(_three_dice())
    assert not [r for r in same_size.reasons if r["code"] == "calibration"], same_size.reasons


def test_a_tray_region_outside_the_picture_is_not_cut_to_what_overlaps(tmp_path):
    """A region typed by hand past the picture's edge (the set-up page refuses one; config.toml does not)."""
    reader = _reader(_instance(tmp_path, **{"camera.tray_region": [700, 500, 800, 600], "camera.empty_tray": ""}))
    reading = reader.read(_three_dice())
    assert reading.status == UNCERTAIN
    assert {"code": "calibration", "frame": [1280, 960], "region": [700, 500, 800, 600]} in reading.reasons
    assert "the tray's region (700, 500, 800 by 600) does not lie inside it" in reading.reason
    inside = _reader(_instance(tmp_path / "inside", **{"camera.tray_region": [0, 0, 1280, 960], "camera.empty_tray": ""}))
    assert not [r for r in inside.read(_three_dice()).reasons if r["code"] == "calibration"]


def test_the_classic_reader_says_the_same_of_a_region_outside_the_picture(tmp_path):
    reader = _reader(_instance(tmp_path, **{"reader.detector": "classic", "camera.tray_region": [0, 0, 1280, 961], "camera.empty_tray": ""}))
    reading = reader.read(_three_dice())
    assert reading.status == UNCERTAIN and {"code": "calibration", "frame": [1280, 960], "region": [0, 0, 1280, 961]} in reading.reasons
    assert calibration_problem(reader, (961, 1280)) is None  # the picture it was set for


def test_a_bluff_read_through_a_set_up_for_another_picture_goes_to_the_table_with_why(smaller_camera):
    client, services, _ = smaller_camera
    gid = client.post("/api/games", json={"players": ["Ann", "Ben"]}, headers=H).get_json()["id"]
    client.post("/api/sim/dice", json={"values": [6, 5, 4]}, headers=H)
    assert client.post(f"/api/games/{gid}/claim", json={"amount": 9}, headers=H).status_code == 200
    bluff = client.post(f"/api/games/{gid}/bluff", json={}, headers=H).get_json()
    reading = bluff["challenge"]["reading"]
    assert reading["status"] == UNCERTAIN and bluff["phase"] == "confirm", bluff
    assert [r for r in reading["reasons"] if r["code"] == "calibration"] == [
        {"code": "calibration", "frame": [640, 480], "region": [80, 60, 1120, 840]}]
    health = client.get("/api/health").get_json()  # from now on, before the next Bluff too
    said = [p for p in health["problems"] if "not the one its set-up was made for" in p]
    assert health["status"] == "degraded" and len(said) == 1 and "640×480" in said[0]
    assert [(d["code"], d["params"]["frame"]) for d in health["problem_details"]] == [("calibration", "640×480")]
    checked = [f.to_dict() for f in full_findings(services) if f.code == "calibration"]
    assert checked == health["problem_details"]  # check says it as health does, its params too
    assert client.get("/api/table").get_json()["camera_works"] is True  # the camera still reads: no typing the dice


def test_check_and_the_set_up_page_say_the_set_up_does_not_fit_and_setting_it_again_clears_it(smaller_camera, tmp_path):
    client, services, _ = smaller_camera
    said = [f.sentence for f in full_findings(services) if f.code == "calibration"]
    assert len(said) == 1 and "640×480" in said[0] and "set the tray's region and the empty tray again" in said[0]
    hints = [h for h in client.get("/api/setup/check", headers=H).get_json()["hints"] if h["code"] == "calibration"]
    assert len(hints) == 1 and hints[0]["frame"] == [640, 480] and hints[0]["message"] == said[0]
    # the player keeps the empty tray as the camera sees it now: the region kept for 1280×960 is found again on it
    camera_sees(services, tmp_path, cv2.resize(empty_tray(), (640, 480), interpolation=cv2.INTER_AREA))
    kept = client.post("/api/setup/empty-tray", headers=H)
    assert kept.status_code == 200, kept.get_json()
    assert "camera.tray_region" in kept.get_json()["stored"]
    x, y, w, h = services.settings.get("camera.tray_region")
    assert x >= 0 and y >= 0 and x + w <= 640 and y + h <= 480
    assert not [h for h in client.get("/api/setup/check", headers=H).get_json()["hints"] if h["code"] == "calibration"]
    assert not [f for f in full_findings(services) if f.code == "calibration"]
    assert services.dice_source.reader.empty_tray.shape == (480, 640)
    assert not [p for p in client.get("/api/health").get_json()["problems"] if "set-up was made for" in p]


def test_a_set_up_that_fits_reads_as_before(tmp_path):
    """The control: the same calibration on the picture it was made for reads ok, as tray mode does."""
    reader = _reader(_instance(tmp_path))
    reading = reader.read(_three_dice())
    assert reading.status == OK and sorted(d.seen for d in reading.dice) == [2, 3, 5], reading.reason
    assert calibration_problem(reader, (960, 1280)) is None and calibration_problem(reader, None) is None


def test_a_tray_region_narrower_than_the_die_is_said_by_health_check_and_the_set_up_page_until_drawn_again(tmp_path):
    """A region typed by hand (40×40) under a measured die of 64 pixels: no die is ever found in it. The reading says
    it found none (not "lights off": the rest of the picture shows the table), and health, ``check`` and the set-up
    page say why and what to do; drawing the region round the tray clears all three."""
    instance = _instance(tmp_path, **{"camera.tray_region": [600, 400, 40, 40], "camera.empty_tray": ""})
    reading = _reader(instance).read(_three_dice())
    assert reading.status == UNCERTAIN and [r["code"] for r in reading.reasons] == ["count"], reading.reason
    settings = Settings.load(instance / CONFIG_NAME)
    services = build_services(instance, settings, simulate=True)
    app = create_app(instance, simulate=True, settings=settings, test_config={"TESTING": True}, services=services)
    try:
        client = app.test_client()
        health = client.get("/api/health").get_json()
        said = [p for p in health["problems"] if "narrower than one die" in p]
        assert health["status"] == "degraded" and said == [
            "The tray's region (40×40 pixels) is narrower than one die (64 pixels), so no die is ever found in it: draw "
            "it round the whole tray (the set-up page, or elephants-bluff calibrate)."]
        assert [f.sentence for f in full_findings(services) if f.part == "reader"] == said
        assert [(d["code"], d["params"]["reader_part"]) for d in health["problem_details"]] == [("reader", "region")]
        hints = client.get("/api/setup/check", headers=H).get_json()["hints"]
        assert [h for h in hints if h["code"] == "region_small"] == [{"code": "region_small", "message": said[0]}]
        assert client.post("/api/setup/region", json={"region": [80, 60, 1120, 840]}, headers=H).status_code == 200
        assert not [p for p in client.get("/api/health").get_json()["problems"] if "narrower than one die" in p]
        assert not [f for f in full_findings(services) if "narrower than one die" in f.sentence]
        assert not [h for h in client.get("/api/setup/check", headers=H).get_json()["hints"] if h["code"] == "region_small"]
    finally:
        close_app(app)


def test_keeping_the_empty_tray_again_replaces_a_region_kept_for_a_smaller_picture(tmp_path):
    """Kept at 640×480, the camera back at 1280×960: the region [0, 0, 640, 480] lies inside the larger picture, a
    quarter of it, so it was kept, and a die in the rest of the tray was never found."""
    instance = _instance(tmp_path, **{"camera.tray_region": [0, 0, 640, 480]})
    cv2.imwrite(str(instance / "empty-tray.png"), cv2.resize(empty_tray(), (640, 480), interpolation=cv2.INTER_AREA))
    settings = Settings.load(instance / CONFIG_NAME)
    services = build_services(instance, settings, simulate=True)
    app = create_app(instance, simulate=True, settings=settings, test_config={"TESTING": True}, services=services)
    try:
        client = app.test_client()
        camera_sees(services, tmp_path, empty_tray())  # 1280×960
        kept = client.post("/api/setup/empty-tray", headers=H)
        assert kept.status_code == 200, kept.get_json()
        assert "camera.tray_region" in kept.get_json()["stored"]
        x, y, w, h = services.settings.get("camera.tray_region")
        assert w > 640 and h > 480 and x + w <= 1280 and y + h <= 960, (x, y, w, h)
        again = client.post("/api/setup/empty-tray", headers=H).get_json()  # kept for this picture: a region drawn by
        assert "camera.tray_region" not in again["stored"]                    # hand is never replaced by a second keep
    finally:
        close_app(app)
