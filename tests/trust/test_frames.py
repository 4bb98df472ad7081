"""A Bluff's photo: named only once its log entry is written, swept after a kill, pruned by count and age (issue 27)."""

from __future__ import annotations

import os
import time

from companion.app.archive import PENDING
from companion.app.web import close_app

from .conftest import PIN_HEADERS, build_app
from .test_image_routes import FramingSource


def _bluff(client, gid):  # noqa: ANN001, ANN202
    state = client.get(f"/api/games/{gid}").get_json()
    if state["phase"] == "confirm":
        client.post(f"/api/games/{gid}/confirm", json={"dice": [1, 2, 3]}, headers=PIN_HEADERS)
        state = client.get(f"/api/games/{gid}").get_json()
    if state["phase"] == "claim":
        assert client.post(f"/api/games/{gid}/claim", json={"amount": state["min_claim"]}, headers=PIN_HEADERS).status_code == 200
    return client.post(f"/api/games/{gid}/bluff", json={}, headers=PIN_HEADERS)


def _app(tmp_path, **overrides):  # noqa: ANN001, ANN003, ANN202
    return build_app(tmp_path / "instance", FramingSource(), **overrides)


def _game(tmp_path):  # noqa: ANN001, ANN202
    """The app, its client and referee, and a game of Ann and Ben to call Bluffs in."""
    app = _app(tmp_path)
    client = app.test_client()
    gid = client.post("/api/games", json={"players": ["Ann", "Ben"], "path_length": 30}, headers=PIN_HEADERS).get_json()["id"]
    return app, client, app.extensions["elephants_bluff"].referee, gid


def test_the_photo_gets_its_name_only_after_the_log_entry_that_names_it(tmp_path):
    app = _app(tmp_path)
    try:
        client = app.test_client()
        referee = app.extensions["elephants_bluff"].referee
        gid = client.post("/api/games", json={"players": ["Ann", "Ben"], "path_length": 30}, headers=PIN_HEADERS).get_json()["id"]
        seen = {}

        heard = {}
        append = referee.store.append

        def at_commit(game_id, seq, event, **kwargs):  # noqa: ANN001, ANN202 - the log's own write, then a look at the photo
            append(game_id, seq, event, **kwargs)
            if event.get("type") == "bluff_called":
                cid = event["challenge"]
                photo = referee.archive.path(cid, "frame")
                seen[cid] = (photo.exists(), photo.with_name(photo.name + PENDING).exists(), [e["type"] for e in referee.store.events(gid)][-1] == "bluff_called")

        def at_announce(state):  # noqa: ANN001, ANN202 - a page that hears of the Bluff must find its photo
            if state.get("last_challenge"):
                heard[state["last_challenge"]] = referee.archive.path(state["last_challenge"], "frame").exists()

        referee.store.append = at_commit
        referee.add_listener(at_announce)
        response = _bluff(client, gid)
        cid = response.get_json()["challenge"]["id"]
        assert seen[cid] == (False, True, True), "the photo had its name before the log named it"
        assert heard[cid] is True, "a page heard of the Bluff before its photo had its name"
        assert referee.archive.path(cid, "frame").exists() and not list(referee.frames_dir.glob("*" + PENDING))
        with client.get(f"/api/challenges/{cid}/image") as image:
            assert image.status_code == 200
    finally:
        close_app(app)


def test_a_bluff_that_cannot_be_logged_leaves_no_photo(tmp_path):
    app = _app(tmp_path)
    try:
        client = app.test_client()
        referee = app.extensions["elephants_bluff"].referee
        gid = client.post("/api/games", json={"players": ["Ann", "Ben"], "path_length": 30}, headers=PIN_HEADERS).get_json()["id"]
        client.post(f"/api/games/{gid}/claim", json={"amount": 9}, headers=PIN_HEADERS)
        store = referee.store
        store._db.execute(f"PRAGMA max_page_count={store._db.execute('PRAGMA page_count').fetchone()[0]}")  # SQLite's own "disk is full"
        refused = None
        for _ in range(40):
            response = client.post(f"/api/games/{gid}/bluff", json={}, headers=PIN_HEADERS)
            if response.status_code == 507:
                refused = response
                break
            _bluff(client, gid)  # fill the last pages with Bluffs that are logged
        assert refused is not None and "disk is full" in refused.get_json()["message"]
        named = {c["id"] for c in referee.challenges(gid)}
        on_disk = {p.name.split(".jpg")[0].removesuffix("-annotated") for p in referee.frames_dir.iterdir()}
        assert on_disk <= named, f"photos of Bluffs the log does not hold: {on_disk - named}"
    finally:
        close_app(app)


def test_after_a_kill_the_start_publishes_named_photos_and_deletes_unlogged_pending_ones(tmp_path):
    app = _app(tmp_path)
    client = app.test_client()
    referee = app.extensions["elephants_bluff"].referee
    gid = client.post("/api/games", json={"players": ["Ann", "Ben"], "path_length": 30}, headers=PIN_HEADERS).get_json()["id"]
    cid = _bluff(client, gid).get_json()["challenge"]["id"]
    frames = referee.frames_dir
    close_app(app)
    # As a kill leaves it: this Bluff logged but its photo still pending; a photo staged for a Bluff never logged.
    photo = frames / f"{cid}.jpg"
    os.replace(photo, frames / f"{cid}.jpg{PENDING}")
    (frames / f"c-{gid[2:]}-9.jpg{PENDING}").write_bytes(b"never logged")
    (frames / f"c-{gid[2:]}-10.jpg{PENDING}.part").write_bytes(b"cut short")  # killed mid-write
    (frames / "notes.txt").write_text("a person's own file")
    again = _app(tmp_path)
    try:
        assert sorted(p.name for p in frames.iterdir()) == sorted([f"{cid}.jpg", f"{cid}-annotated.jpg", "notes.txt"])
        with again.test_client().get(f"/api/challenges/{cid}/image") as image:
            assert image.status_code == 200
    finally:
        close_app(again)


def test_photos_are_pruned_by_count_and_by_age_and_the_bluff_stays(tmp_path):
    app = _app(tmp_path, storage__frames_keep=3)
    client = app.test_client()
    referee = app.extensions["elephants_bluff"].referee
    gid = client.post("/api/games", json={"players": ["Ann", "Ben"], "path_length": 30}, headers=PIN_HEADERS).get_json()["id"]
    cids = []
    for _ in range(5):
        cids.append(_bluff(client, gid).get_json()["challenge"]["id"])
        time.sleep(0.01)  # distinct modification times
    kept = sorted({p.name.split(".jpg")[0].removesuffix("-annotated") for p in referee.frames_dir.iterdir()})
    assert kept == sorted(cids[-3:])
    old = client.get(f"/api/challenges/{cids[0]}/image")
    assert old.status_code == 404 and old.get_json()["message"]
    assert client.get(f"/api/challenges/{cids[0]}").status_code == 200  # the Bluff itself stays
    # Older than storage.frames_days: gone at the next start.
    month_ago = time.time() - 30 * 86400
    for p in referee.frames_dir.glob(f"{cids[2]}*"):
        os.utime(p, (month_ago, month_ago))
    close_app(app)
    again = _app(tmp_path, storage__frames_keep=3, storage__frames_days=7)
    try:
        left = sorted({p.name.split(".jpg")[0].removesuffix("-annotated") for p in referee.frames_dir.iterdir()})
        assert left == sorted(cids[3:])
    finally:
        close_app(again)


def test_photos_of_another_log_are_set_aside_at_start_not_deleted(tmp_path):
    """Safe mode advises moving a damaged log away to start a fresh one: the fresh log's first start deleted every
    photo of the old one's Bluffs (36 in the audit), the evidence of its disputed rolls (R15). They are set aside."""
    from companion.app.archive import NOT_IN_LOG

    app = _app(tmp_path)
    client = app.test_client()
    referee = app.extensions["elephants_bluff"].referee
    gid = client.post("/api/games", json={"players": ["Ann", "Ben"], "path_length": 30}, headers=PIN_HEADERS).get_json()["id"]
    cid = _bluff(client, gid).get_json()["challenge"]["id"]
    frames, log = referee.frames_dir, referee.store.path
    photo = (frames / f"{cid}.jpg").read_bytes()
    close_app(app)
    aside = tmp_path / "old-log"
    aside.mkdir()
    for part in log.parent.glob(log.name + "*"):
        os.replace(part, aside / part.name)  # moved away, as safe mode says
    again = _app(tmp_path)
    try:
        assert not (frames / f"{cid}.jpg").exists()
        assert (frames / NOT_IN_LOG / f"{cid}.jpg").read_bytes() == photo
        assert (frames / NOT_IN_LOG / f"{cid}-annotated.jpg").exists()
    finally:
        close_app(again)


def test_a_photo_changed_or_damaged_since_it_was_saved_is_never_shown_or_learned_from_as_the_bluffs(tmp_path):
    """The log kept no fingerprint of a Bluff's photo: one cut short was served (and taught the owner's dataset three
    flat grey 'dice' labelled with the agreed faces), and another Bluff's photo put in its place was served as this
    Bluff's evidence."""
    app = _app(tmp_path)
    client = app.test_client()
    referee = app.extensions["elephants_bluff"].referee
    try:
        gid = client.post("/api/games", json={"players": ["Ann", "Ben"], "path_length": 30}, headers=PIN_HEADERS).get_json()["id"]
        first, second = (_bluff(client, gid).get_json()["challenge"]["id"] for _ in range(2))
        frames = referee.frames_dir
        import cv2
        import numpy as np

        with client.get(f"/api/challenges/{first}/image") as shown:
            assert shown.status_code == 200
        other = cv2.imencode(".jpg", np.full((48, 64, 3), 200, np.uint8))[1].tobytes()
        (frames / f"{first}.jpg").write_bytes(other)  # another photo, whole and valid, put in its place
        photo = (frames / f"{second}-annotated.jpg").read_bytes()
        (frames / f"{second}-annotated.jpg").write_bytes(photo[: len(photo) // 2])  # cut short
        for cid, kind in ((first, "image"), (second, "annotated")):
            answer = client.get(f"/api/challenges/{cid}/{kind}")
            assert answer.status_code == 404 and answer.get_json()["error"] == "photo_changed", answer.get_json()
            assert "changed or damaged since it was saved" in answer.get_json()["message"]
        with client.get(f"/api/challenges/{second}/image") as whole:
            assert whole.status_code == 200  # its own frame is as saved
        assert referee.challenge(first)["has_images"] is True  # the Bluff itself, its reading and verdict, stay
    finally:
        close_app(app)


def test_a_photo_is_sent_as_the_bytes_checked_and_a_tablet_that_has_it_is_told_it_is_unchanged(tmp_path):
    """The route checked the photo's fingerprint on one read and sent a second: a photo swapped in between went out
    unchecked. The bytes checked are sent, named by their fingerprint, so a tablet asking again gets a 304."""
    import hashlib

    app, client, referee, gid = _game(tmp_path)
    try:
        cid = _bluff(client, gid).get_json()["challenge"]["id"]
        saved = (referee.frames_dir / f"{cid}.jpg").read_bytes()
        with client.get(f"/api/challenges/{cid}/image") as shown:
            assert shown.status_code == 200 and shown.data == saved and shown.mimetype == "image/jpeg"
            etag = shown.headers["ETag"]
        assert etag.strip('"') == hashlib.sha256(saved).hexdigest()
        with client.get(f"/api/challenges/{cid}/image", headers={"If-None-Match": etag}) as again:
            assert again.status_code == 304 and again.data == b""
        assert referee.frame_photo(cid, "frame") == (saved, hashlib.sha256(saved).hexdigest())
    finally:
        close_app(app)


def test_a_photo_missing_or_a_folder_in_its_place_is_said_missing_and_the_bluff_stays(tmp_path):
    app, client, referee, gid = _game(tmp_path)
    try:
        first, second = (_bluff(client, gid).get_json()["challenge"]["id"] for _ in range(2))
        (referee.frames_dir / f"{first}.jpg").unlink()
        (referee.frames_dir / f"{second}.jpg").unlink()
        (referee.frames_dir / f"{second}.jpg").mkdir()
        for cid in (first, second):
            answer = client.get(f"/api/challenges/{cid}/image")
            assert answer.status_code == 404 and answer.get_json()["message"] == "This Bluff's photo is missing from the frames folder."
            assert referee.challenge(cid)["has_images"] is True
    finally:
        close_app(app)
