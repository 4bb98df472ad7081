"""``/api/health``'s ``problem_details``: each problem with a code, its part and the names in it, so the table's page
can say it in the player's language (``common.js``'s FINDINGS); ``problems`` keeps the same sentences in English."""

from __future__ import annotations

import importlib.util

import pytest

from companion.app.services import build_services
from companion.app.settings import Settings
from companion.app.web import close_app, create_app
from tests.trust.conftest import PIN


@pytest.mark.skipif(importlib.util.find_spec("picamera2") is not None or importlib.util.find_spec("lgpio") is not None,
                    reason="picamera2 or lgpio is installed: the camera or the buttons would start")
def test_a_pi_camera_and_buttons_that_fail_at_start_are_each_said_once_with_their_code(tmp_path):
    """Off a Pi, the Pi's camera and pin factory cannot start: the companion serves on, and health names each once
    (the camera's own health repeats its start-up's message; it is not said twice)."""
    instance = tmp_path / "instance"
    settings = Settings.defaults().with_overrides(table__pin=PIN, camera__backend="picamera2", gpio__pin_factory="lgpio")
    services = build_services(instance, settings, simulate=False)
    app = create_app(instance, simulate=False, settings=settings, test_config={"TESTING": True}, services=services)
    try:
        health = app.test_client().get("/api/health").get_json()
        details = health["problem_details"]
        assert [(d["code"], d["part"]) for d in details] == [("camera_library", "camera"), ("no_buttons", "buttons")], details
        assert "picamera2" in details[0]["params"]["detail"] and "lgpio" in details[1]["params"]["detail"]
        assert health["problems"] == [d["sentence"] for d in details] == [d["params"]["detail"] for d in details]
        assert health["status"] == "degraded" and health["gpio"] == "none"
    finally:
        close_app(app)


def test_a_ready_table_has_no_problem_details(tmp_path):
    settings = Settings.defaults().with_overrides(table__pin=PIN)
    services = build_services(tmp_path / "instance", settings, simulate=True)
    app = create_app(tmp_path / "instance", simulate=True, settings=settings, test_config={"TESTING": True}, services=services)
    try:
        health = app.test_client().get("/api/health").get_json()
        assert health["status"] == "ok" and health["problems"] == [] and health["problem_details"] == []
    finally:
        close_app(app)
