"""The camera's light and focus hints as codes: made beside calibrate's sentences, used by the set-up page as they are.

Real parts: the renderer's empty tray and frames drawn with OpenCV, ``vision.calibrate``'s measures, the
Flask test client on the simulated table with the files camera.
"""

from __future__ import annotations

import re

import cv2
import numpy as np
import pytest

from companion.app.settings import Settings
from companion.app.web import close_app, create_app
from tests.teach.tray_views import camera_sees, empty_tray
from companion.app.cli import main
from vision.calibrate import BLUR, BRIGHT, DARK, GLARE, NOT_EMPTY, PROBLEM_CODES, check_frame_quality, dice_left_on, frame_problems
from vision.reader import load_reader
from vision.simtable import render_calibrated_table, render_table

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


@pytest.fixture(scope="module")
def reader():
    """The reader the table reads with (the shipped models, no set-up kept)."""
    return load_reader(Settings.defaults())


@pytest.mark.parametrize("code", PROBLEM_CODES)
def test_each_problem_of_the_tray_comes_with_its_code_and_calibrates_english_sentence(code, reader):
    problems, _ = frame_problems(FRAMES[code](), reader)
    found = [p for p in problems if p.code == code]
    assert len(found) == 1 and found[0].message.startswith(WORDS[code])
    assert all(p.code in PROBLEM_CODES for p in problems)


def test_calibrate_still_prints_the_same_sentences():
    frame = FRAMES[DARK]()
    sentences, measures = check_frame_quality(frame)
    problems, again = frame_problems(frame)
    assert sentences == [p.message for p in problems] and measures == again
    assert sentences[0] == f"The image is too dark (mean brightness {measures['mean']:.0f} of 255): add light under the tray or raise the exposure."


def test_a_good_sharp_empty_tray_has_no_problem_at_all(reader):
    """Not even a die: the cup's rim and the tray's marks, which a finder alone takes for dice, are no dice to the reader."""
    assert frame_problems(empty_tray(), reader)[0] == []


def _tray_taken_for_a_die() -> np.ndarray:
    """An empty tray whose whole disc the reader, looking for one die, takes for a die seen close up (unsure of it)."""
    return render_calibrated_table([2, 4, 6], np.random.default_rng(1), view="below", touching=0.0, glare=0)[2]


#: What the camera shows: the empty tray, three dice and one die left behind on it (``render_table``'s tray).
TRAYS = {"empty": (empty_tray, 0), "empty, its disc taken for a die": (_tray_taken_for_a_die, 0),
         "three dice": (lambda: render_table([1, 2, 3], np.random.default_rng(4))[0], 3),
         "one die left": (lambda: render_table([5], np.random.default_rng(6))[0], 1)}


def test_the_tray_s_disc_the_reader_takes_for_a_close_up_die_is_no_die_left_on_it(reader):
    frame = _tray_taken_for_a_die()
    (disc,) = reader.with_expected(1).read(frame).dice  # what the next test's refusal would have been about
    assert disc.box[2] > 0.25 * min(frame.shape[:2]) and disc.confidence < 0.5
    assert dice_left_on(frame, reader) == []


@pytest.mark.parametrize("tray", TRAYS)
def test_calibrate_and_the_set_up_page_agree_whether_the_tray_is_empty(table, tmp_path, capsys, tray):
    """``calibrate`` on the Pi's terminal keeps the empty tray exactly when the set-up page does, and refuses one with
    dice on it in the same words. (It asked the classic finder alone, which took the rendered tray's rim for eight
    dice: an owner following the build guide could not calibrate an empty tray the page kept.)"""
    draw, dice = TRAYS[tray]
    frame = draw()
    client, services, folder = table
    camera_sees(services, folder, frame)
    page = client.post("/api/setup/empty-tray", headers=H)

    instance = tmp_path / "terminal"
    instance.mkdir()
    cv2.imwrite(str(tmp_path / "seen.png"), frame)
    (instance / "config.toml").write_text(f'[camera]\nbackend = "files"\nfiles_dir = "{tmp_path / "seen.png"}"\n\n[gpio]\npin_factory = "mock"\n')
    terminal = main(["calibrate", "--instance", str(instance)])
    said = capsys.readouterr().out
    kept = Settings.load(instance / "config.toml")["camera.empty_tray"]
    if dice == 0:
        assert page.status_code == 200 and terminal == 0, said
        assert kept and (instance / kept).is_file()
    else:
        words = page.json["message"]
        assert page.status_code == 422 and page.json["error"] == NOT_EMPTY and page.json["params"]["n"] == dice
        assert words.startswith(f"The tray is not empty: the reader sees {dice} {'die' if dice == 1 else 'dice'} on it (at ")
        assert words.endswith(" px across and down the picture); take every die off, then try again.")
        assert terminal == 1 and f"fix: {words}" in said and "Nothing stored" in said
        if tray == "one die left":  # where it lies, so it can be found (a crumb, a reflection, a die)
            placed = render_table([5], np.random.default_rng(6))[1][0]
            x, y = map(int, re.search(r"\(at (\d+), (\d+) px", words).groups())
            assert abs(x - placed.cx) <= placed.side / 2 and abs(y - placed.cy) <= placed.side / 2
        assert kept == "" and not [p for p in instance.iterdir() if p.name.startswith("empty-tray")]


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
