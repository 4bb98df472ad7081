"""An instance on a card that turned read-only (a failing SD card remounts so), on a real read-only tmpfs mount.

The start crashed with a traceback from the sessions file (systemd restarted it every 3 s; the tablet could not
connect and was told nothing); a game log alone read-only started without a word and refused every move with a 500;
mid-evening, health spoke only of the photos. Needs root and mount (skipped where the machine forbids them).
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from companion.app.auth import AuthStore
from companion.app.store import GameStore
from companion.core.errors import InstanceFileError, StoreError
from companion.app.web import close_app

from .conftest import PIN_HEADERS, build_app, start_game


@pytest.fixture
def card(tmp_path: Path):
    """A small ext4 card image mounted as a folder: ``card.read_only()`` makes the file system fail, as a worn card
    does, and the kernel remounts it read-only under the open files (ext4's ``errors=remount-ro``)."""
    image, mount = tmp_path / "card.img", tmp_path / "card"
    mount.mkdir()
    with image.open("wb") as handle:
        handle.truncate(64 * 1024 * 1024)
    made = subprocess.run(["mkfs.ext4", "-q", "-F", str(image)], capture_output=True)
    if made.returncode != 0 or subprocess.run(["mount", "-o", "loop,errors=remount-ro", str(image), str(mount)], capture_output=True).returncode != 0:
        pytest.skip("this machine does not let the tests mount a card image (needs root, mkfs.ext4 and a loop device)")
    device = subprocess.run(["findmnt", "-no", "SOURCE", str(mount)], capture_output=True, text=True).stdout.strip()
    trigger = Path("/sys/fs/ext4") / Path(device).name / "trigger_fs_error"

    class Card:
        path = mount

        @staticmethod
        def read_only() -> None:
            if not trigger.exists():
                pytest.skip("this kernel cannot be asked to fail a file system (no ext4 trigger_fs_error)")
            trigger.write_text("card worn out")
            with pytest.raises(OSError, match="Read-only file system"):
                (mount / "a-new-file").write_text("refused")

    yield Card
    subprocess.run(["umount", "-l", str(mount)], capture_output=True)


def _played_instance(card) -> Path:
    instance = card.path / "instance"
    app = build_app(instance)
    try:
        start_game(app.test_client())
    finally:
        close_app(app)
    return instance


def test_a_read_only_card_is_refused_in_words_at_start_and_nothing_is_changed(card):
    instance = _played_instance(card)
    before = (instance / "game-log.sqlite3").read_bytes()
    card.read_only()
    with pytest.raises(StoreError) as refused:
        GameStore(instance / "game-log.sqlite3")
    assert "cannot be written: the card or disk it is on has turned read-only" in refused.value.message
    assert "make it writable" in refused.value.todo and "Move the file away" not in refused.value.todo
    with pytest.raises(InstanceFileError, match="read-only"):
        AuthStore(instance / "auth.sqlite3")
    assert (instance / "game-log.sqlite3").read_bytes() == before


def test_serve_on_a_read_only_card_starts_in_safe_mode_naming_it(card):
    from bench.live_server import LiveServer

    instance = _played_instance(card)
    card.read_only()
    beside = card.path.parent / "server"  # the server's own log is kept off the card
    beside.mkdir()
    (beside / "instance").symlink_to(instance)
    server = LiveServer(beside / "instance", pin="482913")
    try:
        server.start()
        health = server.get("/api/health")
        assert health.status_code == 503, health.text
        body = health.json()
        assert body["status"] == "safe_mode" and "read-only" in body["why"], body
    finally:
        server.stop()


def test_health_says_when_the_game_log_turned_read_only_mid_evening(card):
    app = build_app(card.path / "instance")
    try:
        client = app.test_client()
        start_game(client)
        assert client.get("/api/health").get_json()["status"] == "ok"
        card.read_only()
        health = client.get("/api/health").get_json()
        found = [p for p in health["problem_details"] if p["code"] == "log_unwritable"]
        assert health["status"] == "degraded" and found and "no move can be saved" in found[0]["sentence"], health
        moved = client.post("/api/games", json={"players": ["Ann", "Ben"]}, headers=PIN_HEADERS)
        assert moved.status_code >= 500 and "nothing was changed" in moved.get_json()["message"].lower()
    finally:
        close_app(app)


def test_a_set_up_shot_on_a_card_turned_read_only_is_refused_in_words(card):
    """"Show each face" writes the die's crop beside the game log: on a card turned read-only mid-evening it was the
    framework's "internal error"; it now says the card turned read-only, and what to do."""
    import numpy as np

    from companion.app.settings import Settings
    from companion.app.web import create_app

    app = create_app(card.path / "instance", simulate=True, settings=Settings.defaults().with_overrides(table__pin=PIN_HEADERS["X-Table-Pin"]))
    try:
        client = app.test_client()
        app.extensions["elephants_bluff"].dice_source.frame_source.rng = np.random.default_rng(11)  # one die, read as one
        client.post("/api/sim/dice", json={"values": [4]}, headers=PIN_HEADERS)
        card.read_only()
        shot = client.post("/api/setup/face", json={"top": 4}, headers=PIN_HEADERS)
        assert shot.status_code == 500 and shot.get_json()["error"] == "file_error", shot.get_data(as_text=True)
        assert shot.get_json()["message"].startswith("The companion's card has turned read-only (a card that fails does)")
    finally:
        close_app(app)


def test_a_new_instance_on_a_card_turned_read_only_is_said_so_not_as_a_damaged_log(card):
    """A card that failed before the companion's first start: the game log and the sessions file could not be made,
    and SQLite's "unable to open database file" was said as a damaged log; doctor sent the owner to `--repair`,
    which copies the log aside on a card that takes no writes."""
    from companion.app.doctor import doctor

    instance = card.path / "instance"
    instance.mkdir()
    (instance / "config.toml").write_text("[table]\npin = \"482913\"\n")
    card.read_only()
    with pytest.raises(StoreError) as refused:
        GameStore(instance / "game-log.sqlite3")
    assert refused.value.code == "unwritable" and "cannot be made: the card or disk it is on has turned read-only" in refused.value.message
    assert "damaged" not in refused.value.message and "use another card" in refused.value.todo
    with pytest.raises(InstanceFileError, match="cannot be made: the card or disk it is on has turned read-only"):
        AuthStore(instance / "auth.sqlite3")
    said: list[str] = []
    assert doctor(instance, say=said.append) == 1
    assert any("cannot be made" in line for line in said) and not any("--repair" in line for line in said), said
    assert sorted(p.name for p in instance.iterdir()) == ["config.toml"]  # nothing made, nothing left half-made
