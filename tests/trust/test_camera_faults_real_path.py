"""The camera fails mid-game on the real capture path (capture loop, real reader, rendered frames).

The frame source is the simulated table's own camera, which can be unplugged
(its grab raises the HardwareError a Picamera2 or webcam source raises), hang
(its grab never returns), or give a broken frame. Each time: the Bluff still
ends, in ``confirm`` with the reason; ``/api/health`` says what is wrong; the
log is the fold of every step; and once the camera is back the next Bluff is
read by it again.
"""

from __future__ import annotations

import threading

import numpy as np
import pytest

from companion.core.errors import HardwareError
from companion.rules import fold
from companion.rules.views import public_state
from companion.app.settings import Settings
from firmware.capture import CaptureLoop
from vision.reader import load_reader
from vision.sources.simulated import SimulatedTableSource
from companion.app.web import close_app

from .conftest import PIN_HEADERS, build_app


class FlakyCamera(SimulatedTableSource):
    """The simulated table's camera, with a cable that can be pulled."""

    def __init__(self) -> None:
        super().__init__(rng=np.random.default_rng(7))
        self.fault: str | None = None
        self.release = threading.Event()

    def grab(self):  # noqa: ANN201
        if self.fault == "unplugged":
            raise HardwareError("The camera is not connected (its cable was pulled).")
        if self.fault == "hang":
            self.release.wait(30)  # a driver stuck in a grab; bounded so no thread outlives the run
            raise HardwareError("The camera stopped answering.")
        if self.fault == "broken frame":
            return np.zeros((1, 1), np.uint8)
        return super().grab()

    def health(self) -> str:
        return "The camera is not connected (its cable was pulled)." if self.fault == "unplugged" else "ok"


@pytest.fixture
def table(tmp_path):
    camera = FlakyCamera()
    loop = CaptureLoop(camera, load_reader(Settings.defaults()), grab_timeout_s=0.5, wait_for_still=False)
    app = build_app(tmp_path / "instance", loop)
    yield app, app.test_client(), camera
    camera.release.set()
    close_app(app)


def _bluff(client, gid):  # noqa: ANN001, ANN202
    state = client.get(f"/api/games/{gid}").get_json()
    if state["phase"] == "confirm":
        client.post(f"/api/games/{gid}/confirm", json={"dice": [3, 3, 3]}, headers=PIN_HEADERS)
        state = client.get(f"/api/games/{gid}").get_json()
    client.post(f"/api/games/{gid}/claim", json={"amount": state["min_claim"]}, headers=PIN_HEADERS)
    response = client.post(f"/api/games/{gid}/bluff", json={}, headers=PIN_HEADERS)
    assert response.status_code == 200
    return response.get_json()


@pytest.mark.parametrize("fault,words", [("unplugged", "not connected"), ("hang", "answer"), ("broken frame", "cannot use")])
def test_the_camera_failing_mid_game_sends_the_bluff_to_confirm_and_health_says_why(table, fault, words):
    app, client, camera = table
    gid = client.post("/api/games", json={"players": ["Ann", "Ben", "Cy"], "path_length": 9}, headers=PIN_HEADERS).get_json()["id"]
    camera.set_next_values([6, 5, 4])
    before = _bluff(client, gid)["challenge"]
    assert before["reading"] is not None and before["has_images"] is True  # the camera worked
    camera.fault = fault
    body = _bluff(client, gid)
    assert body["phase"] == "confirm" and body["challenge"]["reading"] is None
    assert words in body["challenge"]["problem"] and "tablet" in body["challenge"]["problem"]
    health = client.get("/api/health").get_json()
    assert health["status"] == "degraded" and any(words in p for p in health["problems"]), health
    assert client.post(f"/api/games/{gid}/confirm", json={"dice": [2, 2, 2]}, headers=PIN_HEADERS).get_json()["phase"] == "claim"
    referee = app.extensions["elephants_bluff"].referee
    assert public_state(fold(referee.store.events(gid))) == referee.game_state(gid)
    # The camera is back: the next Bluff is read by it again.
    camera.fault = None
    camera.release.set()
    for thread in threading.enumerate():
        if thread is not threading.current_thread() and thread.daemon and "grab" in thread.name.lower():
            thread.join(10)
    camera.set_next_values([1, 2, 3])
    after = _bluff(client, gid)
    if "has not answered" in (after["challenge"]["problem"] or ""):  # the loop notices the hung grab ended
        client.post(f"/api/games/{gid}/confirm", json={"dice": [1, 2, 3]}, headers=PIN_HEADERS)
        camera.set_next_values([1, 2, 3])
        after = _bluff(client, gid)
    assert after["challenge"]["reading"] is not None and after["challenge"]["has_images"] is True
    assert client.get("/api/health").get_json()["status"] == "ok"
