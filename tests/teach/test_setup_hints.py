"""The camera's light and focus hints as codes: made beside calibrate's sentences, used by the set-up page as they are.

Real parts: the renderer's empty tray and frames drawn with OpenCV, ``vision.calibrate``'s measures, the
Flask test client on the simulated table with the files camera.
"""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from companion.app.settings import Settings
from companion.app.web import close_app, create_app
from tests.teach.tray_views import camera_sees, empty_tray
from vision.calibrate import BLUR, BRIGHT, DARK, GLARE, NOT_EMPTY, PROBLEM_CODES, check_frame_quality, frame_problems
from vision.simtable import render_table

PIN = "4321"
H = {"X-Table-Pin": PIN}


def _blurred_tray() -> np.ndarray:
    """A tray with clear shapes on it, out of focus: edges to judge focus by, none of them sharp."""
    frame = np.full((480, 640, 3), 110, np.uint8)
    cv2.rectangle(frame, (100, 100), (540, 380), (200, 200, 200), -1)
    cv2.rectangle(frame, (150, 150), (490, 330), (60, 60, 60), -1)
    return cv2.GaussianBlur(frame, (0, 0), 3)


def _glaring_tray() -> np.ndarray:
    frame = empty_tray()
    cv2.circle(frame, (300, 300), 25, (255, 255, 255), -1)  # a reflection of the light, burnt out
    return frame


FRAMES = {
    DARK: lambda: (empty_tray() * 0.25).astype(np.uint8),
    BRIGHT: lambda: cv2.convertScaleAbs(empty_tray(), alpha=1.0, beta=140),
    GLARE: _glaring_tray,
    BLUR: _blurred_tray,
    NOT_EMPTY: lambda: render_table([1, 2, 3], np.random.default_rng(4))[0],
}
#: the start of the English sentence ``calibrate`` prints for each code (unchanged by the codes)
WORDS = {DARK: "The image is too dark", BRIGHT: "The image is too bright", GLARE: "Glare: bright reflections",
         BLUR: "The image looks blurred", NOT_EMPTY: "The tray is not empty"}


@pytest.mark.parametrize("code", PROBLEM_CODES)
def test_each_problem_of_the_tray_comes_with_its_code_and_calibrates_english_sentence(code):
    problems, _ = frame_problems(FRAMES[code]())
    found = [p for p in problems if p.code == code]
    assert len(found) == 1 and found[0].message.startswith(WORDS[code])
    assert all(p.code in PROBLEM_CODES for p in problems)


def test_calibrate_still_prints_the_same_sentences():
    frame = FRAMES[DARK]()
    sentences, measures = check_frame_quality(frame)
    problems, again = frame_problems(frame)
    assert sentences == [p.message for p in problems] and measures == again
    assert sentences[0] == f"The image is too dark (mean brightness {measures['mean']:.0f} of 255): add light under the tray or raise the exposure."


def test_a_good_sharp_tray_has_no_light_or_focus_problem():
    assert {p.code for p in frame_problems(empty_tray())[0]} <= {NOT_EMPTY}  # the cup's rim may look like a die to the finder


@pytest.fixture
def table(tmp_path):
    app = create_app(tmp_path / "instance", simulate=True, settings=Settings.defaults().with_overrides(table__pin=PIN), test_config={"TESTING": True})
    services = app.extensions["elephants_bluff"]
    yield app.test_client(), services, tmp_path
    close_app(app)


@pytest.mark.parametrize("code", [DARK, BRIGHT, GLARE, BLUR])
def test_the_set_up_page_gets_each_hint_as_its_code(table, code):
    client, services, folder = table
    camera_sees(services, folder, FRAMES[code]())
    hints = client.get("/api/setup/check", headers=H).json["hints"]
    assert code in [h["code"] for h in hints]
    assert NOT_EMPTY not in [h["code"] for h in hints]  # whether dice lie there is the reader's say, not the finder's blobs
    assert next(h for h in hints if h["code"] == code)["message"].startswith(WORDS[code])


@pytest.mark.parametrize("code", [DARK, BRIGHT])
def test_an_empty_tray_too_dark_or_too_bright_is_refused_with_its_code(table, code):
    client, services, folder = table
    camera_sees(services, folder, FRAMES[code]())
    refused = client.post("/api/setup/empty-tray", headers=H)
    assert refused.status_code == 422 and refused.json["error"] == code and refused.json["message"].startswith(WORDS[code])
