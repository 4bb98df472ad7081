"""``elephants-bluff check``, ``GET /api/check`` and health's ``checks``: what is wrong before a game, in words."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.trust.conftest import PIN_HEADERS, build_app
from companion.app.web import close_app

ROOT = Path(__file__).resolve().parents[1]


def test_a_ready_simulated_table_has_no_finding_in_health(tmp_path):
    app = build_app(tmp_path / "instance")
    try:
        health = app.test_client().get("/api/health").get_json()
        assert health["checks"] == []
    finally:
        close_app(app)


def test_a_pressed_down_button_is_named_with_what_to_do(tmp_path):
    app = build_app(tmp_path / "instance")
    try:
        services = app.extensions["elephants_bluff"]
        services.table.devices.believe_button.pin.drive_low()  # held down (or shorted) before the game
        checks = app.test_client().get("/api/health").get_json()["checks"]
        assert [c["part"] for c in checks] and "believe" in json.dumps(checks).lower()
        assert all(c["problem"] and c["fix"] for c in checks)
    finally:
        close_app(app)


def test_the_full_check_needs_the_pin_and_answers_in_words(tmp_path):
    app = build_app(tmp_path / "instance", dice_source=None)
    try:
        client = app.test_client()
        assert client.get("/api/check").status_code == 401
        body = client.get("/api/check", headers=PIN_HEADERS).get_json()
        assert set(body) == {"ready", "findings"} and body["ready"] is (body["findings"] == [])
    finally:
        close_app(app)


def test_the_command_reports_a_missing_camera_in_one_line_and_exits_1(tmp_path):
    instance = tmp_path / "instance"
    instance.mkdir()
    (instance / "config.toml").write_text(f'[camera]\nbackend = "files"\nfiles_dir = "{tmp_path / "no-such-folder"}"\n')
    done = subprocess.run([sys.executable, "-m", "companion.app.cli", "check", "--instance", str(instance), "--json"], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 1, done.stderr
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["ready"] is False and any(f["part"] == "camera" for f in report["findings"])


def test_the_setup_page_offers_the_check_in_the_players_language(tmp_path):
    app = build_app(tmp_path / "instance")
    try:
        page = app.test_client().get("/setup", headers={"Accept-Language": "de"}).get_data(as_text=True)
        assert 'id="setup-check-run"' in page and "Tisch prüfen" in page and "Vor dem Spiel" in page
    finally:
        close_app(app)


@pytest.mark.skipif(importlib.util.find_spec("picamera2") is not None, reason="picamera2 is installed: a stand-in cannot take its place")
def test_the_command_says_a_wide_pi_camera_s_bend_is_not_measured_until_it_is(tmp_path):
    """``check`` on the Pi with the Camera Module 3 Wide (libcamera's model ``imx708_wide``, here a stand-in for
    picamera2, which needs the Pi's libcamera) and no ``camera.lens_distortion``: a finding of the camera says to
    measure the lens; with the bend stored, none."""
    from companion.core.settings import write_config
    from tests.teach.tray_views import pi_camera_stand_in
    from vision.pipeline.lens import bend_frame
    from vision.simtable import render_chessboard

    stand_in = pi_camera_stand_in(tmp_path, bend_frame(render_chessboard(), 0.2), "imx708_wide")
    instance = tmp_path / "instance"
    instance.mkdir()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(stand_in), str(ROOT)])}

    def lens_findings(**settings):
        write_config(instance, {"camera.backend": "picamera2", **settings})
        done = subprocess.run([sys.executable, "-m", "companion.app.cli", "check", "--instance", str(instance), "--json"], cwd=ROOT,
                              capture_output=True, text=True, env=env)
        report = json.loads(done.stdout.strip().splitlines()[-1])
        assert not [f for f in report["findings"] if f["code"] in ("no_camera", "camera_failed")], report
        return [f for f in report["findings"] if f["code"] == "lens"]

    said = lens_findings()
    assert [f["part"] for f in said] == ["camera"] and "imx708_wide" in said[0]["sentence"] and "calibrate --lens" in said[0]["sentence"]
    assert lens_findings(**{"camera.lens_distortion": 0.2}) == []


#: Findings only ``firmware.preflight.check_presses`` makes (someone presses each button at the Pi): never on the page.
ASKED_AT_THE_PI = {"button_silent", "button_wrong_pin"}


def test_every_finding_and_health_problem_a_page_can_show_has_words_in_the_players_languages():
    """The pages word each finding of ``GET /api/check`` and each of health's ``problem_details`` from its code and
    params (``common.js``'s FINDINGS); a code they had no words for would be shown in English. Every code
    ``firmware.preflight``, ``checks`` and ``services`` make, each reader part that is not a check, and every key
    those words use, in all nine catalogs."""
    import re

    from companion.app.services import READER_PARTS
    from companion.app.web import i18n

    made = set()
    for source in (ROOT / "firmware" / "preflight.py", ROOT / "companion" / "app" / "checks.py"):
        made |= set(re.findall(r'Finding\("([a-z_]+)"', source.read_text()))
    for source in (ROOT / "companion" / "app" / "services.py", ROOT / "companion" / "app" / "teach" / "service.py"):
        made |= set(re.findall(r'\bproblem\("([a-z_]+)", "', source.read_text()))
    assert {"no_buttons", "photos_unsaved", "no_reading", "camera_silent", "calibration", "reader"} <= made, made
    script = (ROOT / "companion" / "app" / "web" / "static" / "js" / "common.js").read_text()
    words = script[script.index("const FINDINGS = {"):script.index("const AWAY = {")]
    worded = set(re.findall(r"^\s+([a-z_]+): \(", words, re.M))
    assert made - ASKED_AT_THE_PI == worded, (made, worded)
    parts = script[script.index("const READER_PARTS = {"):script.index("const FINDINGS = {")]
    worded_parts = set(re.findall(r"^\s+([a-z_]+): \(", parts, re.M))
    assert worded_parts == {"model", "taught_model", "empty_tray", "region"}  # the rest are checks: check_reader_check
    assert worded_parts - {"model", "taught_model"} <= set(READER_PARTS)
    keys = set(re.findall(r't\("((?:check|cam|health)_[a-z_]+)"', script[script.index("const WHERE = {"):script.index("function findingText")]))
    assert len(keys) >= 28
    for lang in ("en", "fr", "nl", "de", "it", "es", "pl", "ro", "da"):
        for key in keys:
            assert i18n.translate(lang, key, where="", detail="", brightness=1, burnt_percent=1, pin="", button="", free_mb=1, total_gb="1",
                                  date="", frame="") != key, (lang, key)


def test_every_set_up_refusal_the_server_names_has_words_on_the_set_up_page():
    """``SetupRefused``'s codes written in ``teach/setup.py`` (the others come from ``calibrate``'s problems, whose
    codes the page lists too): each one the page words in the player's language (``setup.js``'s REFUSED), not
    "something was refused"."""
    import re

    source = (ROOT / "companion" / "app" / "teach" / "setup.py").read_text()
    codes = set()
    for start in (m.end() for m in re.finditer(r"raise SetupRefused\(", source)):
        call = source[start:source.find("\n\n", start)]  # the call and what follows it in its block
        code = re.search(r',\s*"([a-z_]+)"\s*[,)]', call)
        if code:
            codes.add(code.group(1))
    assert {"region_outside", "region_small", "no_die", "not_empty"} <= codes, codes
    script = (ROOT / "companion" / "app" / "web" / "static" / "js" / "setup.js").read_text()
    refused = script[script.index("const REFUSED = {"):script.index("};", script.index("const REFUSED = {"))]
    assert codes <= set(re.findall(r"^\s+([a-z_]+): \(", refused, re.M))


def test_the_command_names_buttons_that_could_not_start_and_is_not_ready(tmp_path):
    """lgpio that cannot start (here: no Pi; on a Pi, a service user outside the gpio group, or pins another program
    holds): start-up logged "no table buttons" and carried on, and ``check`` said "Ready" with status 0."""
    instance = tmp_path / "instance"
    instance.mkdir()
    (instance / "config.toml").write_text('[gpio]\npin_factory = "lgpio"\n[camera]\nbackend = "simulated"\n')
    env = {k: v for k, v in os.environ.items() if k != "GPIOZERO_PIN_FACTORY"}
    done = subprocess.run([sys.executable, "-m", "companion.app.cli", "check", "--instance", str(instance), "--json"], cwd=ROOT,
                          capture_output=True, text=True, env=env)
    report = json.loads(done.stdout.strip().splitlines()[-1])
    found = [f for f in report["findings"] if f["code"] == "no_buttons"]
    assert done.returncode == 1 and report["ready"] is False and found, report
    assert "lgpio" in found[0]["sentence"] and found[0]["part"] == "buttons"


def test_the_check_looks_at_the_tray_lit_as_a_bluff_does(tmp_path):
    """A camera that sees the closed box only by the LED ring: the check grabbed with the ring off, said "The tray is
    too dark ... check the MOSFET" while every Bluff read fine, and could never see the ring's own glare. It takes its
    frame lit and settled, as a Bluff does, and puts the ring out after."""
    import numpy as np

    from companion.app.checks import full_findings
    from companion.core.protocols import FrameSource
    from firmware.capture import CaptureLoop
    from vision.reader import load_reader
    from companion.app.settings import Settings

    class RingLitBox(FrameSource):
        name = "box"
        ring = None

        def grab(self):
            lit = self.ring is not None and self.ring.value > 0
            frame = np.full((240, 320, 3), 120 if lit else 6, np.uint8)
            if lit:
                frame[20:40, 250:290] = 255  # the ring's reflection in the acrylic, top right
            return frame

    camera = RingLitBox()
    loop = CaptureLoop(camera, load_reader(Settings.defaults()), frame_interval_s=0)
    app = build_app(tmp_path / "instance", dice_source=loop)
    services = app.extensions["elephants_bluff"]
    try:
        camera.ring = services.table.devices.tray_light
        ring_pin = services.table.devices.pin_factory.pin(services.table.devices.pins.tray_light)
        codes = {f.code: f for f in full_findings(services)}
        assert "tray_dark" not in codes, codes["tray_dark"].sentence
        assert "tray_glare" in codes and codes["tray_glare"].params == {"vertical": "top", "horizontal": "right"}
    finally:
        close_app(app)
    assert ring_pin.state == 0


def test_the_check_leaves_a_running_companions_pending_photo_alone(tmp_path):
    """``check`` built the whole service, and its start's sweep deleted a Bluff's photo a running companion had
    written, pending, before its log entry named it: that Bluff lost its photo."""
    instance = tmp_path / "instance"
    frames = instance / "frames"
    frames.mkdir(parents=True)
    (instance / "config.toml").write_text('[gpio]\npin_factory = "none"\n[camera]\nbackend = "simulated"\n')
    pending = frames / "c-0123456789ab-1.jpg.pending"  # a Bluff being saved right now, by the running companion
    pending.write_bytes(b"jpeg")
    done = subprocess.run([sys.executable, "-m", "companion.app.cli", "check", "--instance", str(instance), "--json"], cwd=ROOT,
                          capture_output=True, text=True)
    assert done.stdout.strip(), done.stderr
    assert pending.read_bytes() == b"jpeg"
