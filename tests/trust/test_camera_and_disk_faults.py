"""The camera or the frames disk fails mid-game: the Bluff still ends, health says why, the log stays whole.

The faults enter where a real camera's would, through the dice source seam
(``companion/core/capture.py``): a source that raises, one that reports no reading, one
that never answers. The frames folder fails for real: a folder that cannot be
created (its parent is a regular file) and a disk that is full (the frame's
temporary file is the kernel's ``/dev/full``, which answers every write with
ENOSPC).
"""

from __future__ import annotations

import threading

import pytest

from companion.core.capture import Capture, ValuesDiceSource
from companion.rules import fold
from companion.rules.views import public_state
from companion.app.web import close_app

from .conftest import PIN_HEADERS, build_app
from .test_image_routes import FramingSource


class FlakySource(ValuesDiceSource):
    """Fails in a chosen way for the next capture, then works again."""

    name = "flaky"

    def __init__(self) -> None:
        super().__init__()
        self.mode: str | None = None
        self.release = threading.Event()

    def capture(self):  # noqa: ANN201
        mode, self.mode = self.mode, None
        if mode == "raise":
            raise OSError(19, "No such device: the camera was unplugged")
        if mode == "none":
            return Capture(None, problem="The camera is not connected: type the dice in.")
        if mode == "hang":
            self.release.wait(60)  # a driver stuck in a capture; bounded so no thread outlives the test run
        return super().capture()


def _to_bluff(client, gid):  # noqa: ANN001, ANN202
    state = client.get(f"/api/games/{gid}").get_json()
    if state["phase"] == "claim":
        assert client.post(f"/api/games/{gid}/claim", json={"amount": state["min_claim"]}, headers=PIN_HEADERS).status_code == 200
    return client.post(f"/api/games/{gid}/bluff", json={}, headers=PIN_HEADERS)


def _log_is_whole(app, gid) -> None:  # noqa: ANN001
    referee = app.extensions["elephants_bluff"].referee
    assert public_state(fold(referee.store.events(gid))) == referee.game_state(gid)


@pytest.fixture
def flaky(tmp_path):
    source = FlakySource()
    app = build_app(tmp_path / "instance", source)
    app.extensions["elephants_bluff"].referee.capture_timeout_s = 0.3
    yield app, app.test_client(), source
    source.release.set()
    close_app(app)


@pytest.mark.parametrize("mode,words,codes", [
    ("raise", "The camera failed", [{"code": "camera_failed", "detail": "OSError"}]),
    ("none", "not connected", []),  # a source's own sentence, with no code: the pages show it as it is
    ("hang", "did not answer within 0.3 s", [{"code": "camera_timeout", "seconds": "0.3"}]),
])
def test_a_camera_fault_sends_the_bluff_to_confirm_and_health_says_why(flaky, mode, words, codes):
    app, client, source = flaky
    gid = client.post("/api/games", json={"players": ["Ann", "Ben", "Cy"]}, headers=PIN_HEADERS).get_json()["id"]
    source.mode = mode
    response = _to_bluff(client, gid)
    assert response.status_code == 200
    body = response.get_json()
    assert body["phase"] == "confirm" and body["to_act"] is None
    assert words in body["challenge"]["problem"] and body["challenge"]["reading"] is None
    assert body["challenge"]["problem_codes"] == codes
    health = client.get("/api/health").get_json()
    assert health["status"] == "degraded" and any(words in p for p in health["problems"])
    assert [d["code"] for d in health["problem_details"]] == ["no_reading"] and words in health["problem_details"][0]["params"]["detail"]
    assert health["problem_details"][0]["params"]["codes"] == codes  # the page words the capture's problem from them
    # The table types the dice; the game goes on and the log is the fold of every step.
    confirmed = client.post(f"/api/games/{gid}/confirm", json={"dice": [2, 3, 4]}, headers=PIN_HEADERS)
    assert confirmed.status_code == 200 and confirmed.get_json()["phase"] == "claim"
    _log_is_whole(app, gid)
    if mode == "hang":
        # Still stuck: the next Bluff does not wait again, and does not pile up captures.
        second = _to_bluff(client, gid).get_json()
        assert "still stuck" in second["challenge"]["problem"]
        assert second["challenge"]["problem_codes"] == [{"code": "camera_stuck"}]
        client.post(f"/api/games/{gid}/confirm", json={"dice": [1, 1, 1]}, headers=PIN_HEADERS)
        source.release.set()
        pending = app.extensions["elephants_bluff"].referee.dice_capture.pending  # the stuck capture, now released
        if pending is not None:
            pending.result(timeout=10)
    # The camera is back: the next Bluff is read, and health is ok again.
    source.set_next_values([6, 6, 6])
    back = _to_bluff(client, gid).get_json()
    assert back["challenge"]["dice"] == [6, 6, 6] and back["challenge"]["source"] == "camera"
    assert client.get("/api/health").get_json()["status"] == "ok"
    _log_is_whole(app, gid)


def test_a_frames_folder_that_cannot_be_created_loses_only_the_photo(tmp_path):
    instance = tmp_path / "instance"
    instance.mkdir()
    (instance / "blocker").write_text("a file where the frames folder should go")
    app = build_app(instance, FramingSource(), storage__frames_dir="blocker/frames")
    client = app.test_client()
    try:
        gid = client.post("/api/games", json={"players": ["Ann", "Ben"]}, headers=PIN_HEADERS).get_json()["id"]
        app.extensions["elephants_bluff"].dice_source.set_next_values([5, 5, 5])
        body = _to_bluff(client, gid).get_json()
        challenge = body["challenge"]
        assert challenge["status"] == "decided" and challenge["dice"] == [5, 5, 5]  # the verdict did not need the photo
        assert challenge["has_images"] is False and challenge["image_url"] is None
        assert "photo could not be saved" in challenge["problem"]
        assert [c["code"] for c in challenge["problem_codes"]] == ["photo_unsaved"] and challenge["problem_codes"][0]["detail"]
        health = client.get("/api/health").get_json()
        assert health["status"] == "degraded" and any("cannot be saved" in p and "blocker" in p for p in health["problems"])
        assert not any(str(instance) in p for p in health["problems"]), "health showed an absolute path"
        unsaved = [d for d in health["problem_details"] if d["code"] == "photos_unsaved"]  # the page's words: code and detail
        assert len(unsaved) == 1 and unsaved[0]["part"] == "photos" and unsaved[0]["params"]["detail"].startswith("blocker/frames: ")
        assert str(instance) not in str(health["problem_details"]), "health's details showed an absolute path"
        missing = client.get(f"/api/challenges/{challenge['id']}/image")
        assert missing.status_code == 404 and "no saved photo" in missing.get_json()["message"]
        assert client.post(f"/api/games/{gid}/claim", json={"amount": 4}, headers=PIN_HEADERS).status_code == 200
        _log_is_whole(app, gid)
    finally:
        close_app(app)


def test_a_full_disk_for_frames_loses_only_the_photo_and_leaves_no_partial_file(tmp_path):
    instance = tmp_path / "instance"
    app = build_app(instance, FramingSource())
    client = app.test_client()
    try:
        gid = client.post("/api/games", json={"players": ["Ann", "Ben"]}, headers=PIN_HEADERS).get_json()["id"]
        frames = instance / "frames"
        frames.mkdir()
        # The frame's temporary file is /dev/full: every write to it fails with ENOSPC.
        (frames / f"c-{gid[2:]}-1.jpg.pending.part").symlink_to("/dev/full")  # staged first (archive.py)
        body = _to_bluff(client, gid).get_json()
        challenge = body["challenge"]
        assert challenge["status"] == "decided" and challenge["has_images"] is False
        assert "No space left on device" in challenge["problem"]
        assert list(frames.iterdir()) == [], "a partial photo was left behind"
        assert any("No space left" in p for p in client.get("/api/health").get_json()["problems"])
        _log_is_whole(app, gid)
        # Space again: the next Bluff's photo is saved and served, and health clears.
        nxt = _to_bluff(client, gid).get_json()["challenge"]
        photo = client.get(nxt["image_url"])
        assert nxt["has_images"] is True and photo.status_code == 200 and photo.data[:2] == b"\xff\xd8"
        photo.close()
        assert client.get("/api/health").get_json()["status"] == "ok"
    finally:
        close_app(app)


def test_every_capture_problem_code_has_words_on_the_pages_in_the_nine_languages():
    """Each code a Bluff's capture can give (the camera, the dice not still, the reader, the disk, the camera switched
    off) is worded by the pages (``common.js``'s PROBLEM_TEXTS), in all nine catalogs; one they had no words for would
    be shown in the server's English."""
    import re
    from pathlib import Path

    from companion.app.web import i18n

    root = Path(__file__).resolve().parents[2]
    made = set()
    for source in ("companion/app/dice_capture.py", "firmware/capture.py", "companion/app/archive.py", "companion/app/referee.py"):
        made |= set(re.findall(r'\{"code": "([a-z_]+)"', (root / source).read_text()))
    assert {"camera_timeout", "camera_stuck", "camera_failed", "dice_not_still", "reader_failed", "photo_unsaved", "played_without_camera"} <= made
    script = (root / "companion" / "app" / "web" / "static" / "js" / "common.js").read_text()
    words = script[script.index("const PROBLEM_TEXTS = {"):script.index("function captureProblemText")]
    assert set(re.findall(r"^\s+([a-z_]+): \(", words, re.M)) == made
    keys = set(re.findall(r't\("(problem_[a-z_]+)"', words))
    assert len(keys) == len(made)
    for lang in ("en", "fr", "nl", "de", "it", "es", "pl", "ro", "da"):
        for key in keys:
            said = i18n.translate(lang, key, seconds="3", detail="x")
            assert said != key and "{" not in said, (lang, key, said)
