"""The calibrated empty tray's photo missing or damaged: the companion still reads, ``/api/health`` and ``check`` say
the reader goes without it and what to do, and calibrating the empty tray again clears it (a real instance folder,
the real reader, the set-up route)."""

from __future__ import annotations

from pathlib import Path

import pytest

from companion.app.checks import full_findings
from companion.app.services import build_services
from companion.app.settings import Settings
from companion.app.web import close_app, create_app
from companion.core.settings import CONFIG_NAME, write_config
from tests.teach.tray_views import camera_sees, empty_tray

PIN = "4321"
H = {"X-Table-Pin": PIN}


def _instance(tmp_path: Path, photo: str) -> Path:
    """An instance whose settings name ``empty-tray.png``: ``photo`` "damaged" (a file that is no picture), or "missing"."""
    instance = tmp_path / "instance"
    instance.mkdir()
    write_config(instance, {"table.pin": PIN, "camera.empty_tray": "empty-tray.png", "camera.tray_region": [80, 60, 1120, 840]})
    if photo == "damaged":
        (instance / "empty-tray.png").write_bytes(b"\x89PNG cut off by a power cut")
    return instance


@pytest.fixture(params=["damaged", "missing"])
def table(request, tmp_path):
    instance = _instance(tmp_path, request.param)
    settings = Settings.load(instance / CONFIG_NAME)
    services = build_services(instance, settings, simulate=True)
    app = create_app(instance, simulate=True, settings=settings, test_config={"TESTING": True}, services=services)
    yield app.test_client(), services, request.param
    close_app(app)


def test_health_and_check_say_the_reader_goes_without_the_empty_tray_and_how_to_mend_it(table):
    client, services, photo = table
    health = client.get("/api/health").get_json()
    said = [p for p in health["problems"] if "empty tray's photo (empty-tray.png)" in p]
    assert health["status"] == "degraded" and len(said) == 1
    assert ("cannot be read" if photo == "damaged" else "is missing") in said[0] and "calibrate the camera on the empty tray again" in said[0]
    findings = [f for f in full_findings(services) if f.part == "reader"]
    assert [f.sentence for f in findings] == said
    assert [(d["code"], d["params"]["reader_part"]) for d in health["problem_details"]] == [("reader", "empty_tray")]


def test_the_companion_still_reads_a_bluff_without_it(table):
    client, services, _ = table
    gid = client.post("/api/games", json={"players": ["Ann", "Ben"]}, headers=H).get_json()["id"]
    client.post("/api/sim/dice", json={"values": [6, 5, 4]}, headers=H)
    assert client.post(f"/api/games/{gid}/claim", json={"amount": 9}, headers=H).status_code == 200
    bluff = client.post(f"/api/games/{gid}/bluff", json={}, headers=H)
    reading = bluff.get_json()["challenge"]["reading"]
    assert bluff.status_code == 200 and reading is not None  # the camera read the tray, not the table by hand
    if reading["status"] == "ok":
        assert sorted(d["top"] for d in reading["dice"]) == [4, 5, 6]


def test_calibrating_the_empty_tray_again_clears_the_problem(table, tmp_path):
    client, services, _ = table
    camera_sees(services, tmp_path, empty_tray())  # the camera now looks at an empty tray
    kept = client.post("/api/setup/empty-tray", headers=H)
    assert kept.status_code == 200, kept.get_json()
    health = client.get("/api/health").get_json()
    assert not [p for p in health["problems"] if "empty tray" in p], health["problems"]
    assert services.dice_source.reader.empty_tray is not None and services.dice_source.reader.empty_tray_problem is None
