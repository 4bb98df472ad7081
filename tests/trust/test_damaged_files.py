"""Damaged files: a log cut to nothing beside its WAL, a zeroed page, a full disk, broken settings (issue 27)."""

from __future__ import annotations

import hashlib
import os
import sqlite3

import pytest

from companion.app.auth import AuthStore
from companion.app.doctor import doctor
from companion.app.settings import CONFIG_NAME, Settings, all_settings, render_config
from companion.app.store import GameStore
from companion.app.web.safe_mode import create_safe_app
from companion.core.errors import InstanceFileError, InsufficientStorage, SettingsError, StoreError

from .conftest import PIN, PIN_HEADERS, start_game
from .test_corrupt_store import real_log


def _digest(path) -> str:  # noqa: ANN001
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _log_with_history_in_its_wal(path, games: int = 4):  # noqa: ANN001, ANN201
    """A log whose games are only in the -wal (never checkpointed), then the main file cut to 0 bytes."""
    store = GameStore(path)
    store._db.execute("PRAGMA wal_autocheckpoint=0")
    for n in range(games):
        store.create_game(f"g-{n:012x}", {"type": "game_started", "id": f"g-{n:012x}", "players": ["Ann", "Ben"], "path_length": 7, "starter": 0}, at="2026-11-25T10:00:00Z", phase="claim")
    wal = path.with_name(path.name + "-wal")
    kept = wal.read_bytes()
    main = path.read_bytes()
    store._db.close()  # closing checkpoints; put the files back as the power cut left them
    path.write_bytes(b"")
    wal.write_bytes(kept)
    path.with_name(path.name + "-shm").unlink(missing_ok=True)
    return main


def test_an_empty_log_beside_a_wal_with_history_is_refused_not_started_afresh(tmp_path):
    path = tmp_path / "game-log.sqlite3"
    _log_with_history_in_its_wal(path)
    wal = path.with_name(path.name + "-wal")
    before = _digest(wal)
    with pytest.raises(StoreError) as caught:
        GameStore(path)
    message = caught.value.message
    assert "empty" in message and "game-log.sqlite3-wal" in message and "doctor --repair" in message
    assert path.stat().st_size == 0 and _digest(wal) == before, "the refused files were changed"


def test_doctor_repair_copies_the_files_aside_and_recovers_the_games_of_the_wal(tmp_path):
    instance = tmp_path / "instance"
    instance.mkdir()
    (instance / CONFIG_NAME).write_text(render_config(all_settings(), {"table.pin": PIN}))
    path = instance / "game-log.sqlite3"
    _log_with_history_in_its_wal(path, games=4)
    lines: list[str] = []
    assert doctor(instance, say=lines.append) == 1
    assert any("PROBLEM" in line and "doctor --repair" in line for line in lines)
    lines.clear()
    assert doctor(instance, repair=True, say=lines.append) == 0
    aside = next(instance.glob("damaged-*"))
    assert (aside / "game-log.sqlite3-wal").exists() and (aside / "game-log.sqlite3").stat().st_size == 0
    store = GameStore(path)
    try:
        recovered = store.game_ids()
    finally:
        store.close()
    assert lines[-1] == "repaired game-log.sqlite3: 4 game(s) recovered"
    assert recovered == [f"g-{n:012x}" for n in range(4)], "the history in the WAL was lost"
    assert doctor(instance, say=lines.append) == 0


def _zero_last_page(path) -> None:  # noqa: ANN001
    """The log's last page zeroed, as a cut write leaves it (SQLite's own check passes it)."""
    data = bytearray(path.read_bytes())
    data[-4096:] = bytes(4096)
    path.write_bytes(bytes(data))


def _damaged_instance(folder):  # noqa: ANN001, ANN201
    """An instance whose log of 30 games has its last page zeroed."""
    instance = folder / "instance"
    instance.mkdir()
    (instance / CONFIG_NAME).write_text(render_config(all_settings(), {"table.pin": PIN}))
    path = real_log(instance / "game-log.sqlite3", games=30)
    _zero_last_page(path)
    return instance, path


def test_a_zeroed_last_page_is_refused_at_start_and_doctor_recovers_the_other_games(tmp_path):
    instance, path = _damaged_instance(tmp_path)
    before = _digest(path)
    with pytest.raises(StoreError) as caught:
        GameStore(path)
    assert "damaged" in caught.value.message and _digest(path) == before
    lines: list[str] = []
    assert doctor(instance, repair=True, say=lines.append) == 0
    store = GameStore(path)
    try:
        assert 0 < len(store.game_ids()) <= 30
        assert all(store.events(g) for g in store.game_ids())
    finally:
        store.close()


def test_a_full_disk_refuses_a_new_game_with_507_in_words_and_changes_nothing(client, services):
    game = start_game(client)
    store = services.referee.store
    pages = store._db.execute("PRAGMA page_count").fetchone()[0]
    store._db.execute(f"PRAGMA max_page_count={pages}")  # SQLite's own "database or disk is full"
    games = []
    for _ in range(30):  # until the last page is used up
        response = client.post("/api/games", json={"players": ["Ann", "Ben"]}, headers=PIN_HEADERS)
        if response.status_code != 201:
            break
        games.append(response.get_json()["id"])
    assert response.status_code == 507, response.get_json()
    assert response.get_json()["error"] == "disk_full" and "disk is full" in response.get_json()["message"]
    assert len(store.game_ids()) == 1 + len(games)
    on_the_table = games[-1] if games else game["id"]  # the newest game: the earlier ones were left for it
    claim = client.post(f"/api/games/{on_the_table}/claim", json={"amount": 9}, headers=PIN_HEADERS)
    assert claim.status_code in (200, 507), claim.get_json()
    with pytest.raises(InsufficientStorage):
        for n in range(200):
            store.create_game(f"g-full{n:07x}", {"type": "game_started"}, at="2026-11-25T10:00:00Z", phase="claim")


@pytest.mark.parametrize(
    "damage,words",
    [
        ("a folder", "is a folder"),
        ("cut at a line", "cut short"),
        ("unreadable bytes", "not a text file"),
    ],
)
def test_broken_settings_files_are_refused_with_one_clear_sentence(tmp_path, damage, words):
    config = tmp_path / CONFIG_NAME
    whole = render_config(all_settings(), {"table.pin": PIN})
    if damage == "a folder":
        config.mkdir()
    elif damage == "cut at a line":
        config.write_text(whole[: whole.index("[server]")])
    else:
        config.write_bytes(b"\xff\xfe\x00garbage")
    with pytest.raises(SettingsError) as caught:
        Settings.load(config, environ={})
    assert words in caught.value.message and "\n" not in caught.value.message


def test_a_whole_settings_file_and_an_old_one_without_the_end_line_still_load(tmp_path):
    config = tmp_path / CONFIG_NAME
    whole = render_config(all_settings(), {"table.pin": PIN})
    config.write_text(whole)
    assert Settings.load(config, environ={})["table.pin"] == PIN
    old = whole.replace(whole.splitlines()[0] + "\n", "# Elephants Bluff companion settings. Every setting is listed with its doc;\n").replace("# end of settings\n", "")
    config.write_text(old)
    assert Settings.load(config, environ={})["table.pin"] == PIN


def test_the_sessions_file_damaged_is_named_by_doctor_and_never_touches_the_games(tmp_path):
    instance = tmp_path / "instance"
    instance.mkdir()
    (instance / CONFIG_NAME).write_text(render_config(all_settings(), {"table.pin": PIN}))
    real_log(instance / "game-log.sqlite3", games=2)
    (instance / "auth.sqlite3").write_bytes(b"SQLite format 3\x00" + bytes(200))
    lines: list[str] = []
    assert doctor(instance, say=lines.append) == 1
    assert any("auth.sqlite3" in line and "no game is lost" in line and "doctor --repair" in line for line in lines)
    damaged = (instance / "auth.sqlite3").read_bytes()
    log = _digest(instance / "game-log.sqlite3")
    with pytest.raises(InstanceFileError) as refused:  # what serve's safe mode says
        AuthStore(instance / "auth.sqlite3")
    assert "is damaged" in refused.value.why and "doctor --repair" in refused.value.todo
    # --repair moves it aside (it holds no game): the next start makes a fresh one
    lines.clear()
    assert doctor(instance, repair=True, say=lines.append) == 0, lines
    aside = next(instance.glob("damaged-*"))
    assert (aside / "auth.sqlite3").read_bytes() == damaged and not (instance / "auth.sqlite3").exists()
    assert any(line.startswith("moved    auth.sqlite3 to damaged-") and "no game is lost" in line for line in lines)
    assert _digest(instance / "game-log.sqlite3") == log
    AuthStore(instance / "auth.sqlite3").close()
    assert doctor(instance, say=lines.append) == 0


def test_a_sessions_file_on_a_full_card_is_said_as_a_full_card_and_never_moved(small_card, tmp_path):
    """As the game log: SQLite's "disk I/O error" on a full card read as a damaged file, to be moved away."""
    instance = small_card.path / "instance"
    instance.mkdir()
    elsewhere = tmp_path / "log-elsewhere"  # the game log kept on another disk (storage.database), so it opens
    elsewhere.mkdir()
    (instance / CONFIG_NAME).write_text(render_config(all_settings(), {"table.pin": PIN, "storage.database": str(elsewhere / "game-log.sqlite3")}))
    real_log(elsewhere / "game-log.sqlite3", games=2)
    AuthStore(instance / "auth.sqlite3").close()
    before = _family(instance)
    small_card.fill()
    with pytest.raises(InstanceFileError) as refused:
        AuthStore(instance / "auth.sqlite3")
    assert "the card it is on is full (0.0 MB free)" in refused.value.why and "damaged" not in refused.value.why
    assert "Do not move the file away" in refused.value.todo
    said: list[str] = []
    assert doctor(instance, repair=True, say=said.append) == 1
    assert any("auth.sqlite3: cannot be opened: the card is full" in line for line in said), said
    assert _family(instance) == before and not list(instance.glob("damaged-*"))


def test_a_log_a_newer_version_wrote_is_not_called_damaged_and_never_repaired_into_the_old_format(tmp_path):
    """It was "damaged or not an Elephants Bluff game log", and ``doctor --repair`` rewrote it in this version's
    format (dropping what the newer one keeps) and said all was well."""
    instance = tmp_path / "instance"
    instance.mkdir()
    (instance / CONFIG_NAME).write_text(render_config(all_settings(), {"table.pin": PIN}))
    log = instance / "game-log.sqlite3"
    real_log(log, games=2)
    db = sqlite3.connect(log)
    db.execute("PRAGMA user_version = 2")  # a newer companion's format
    db.execute("ALTER TABLE games ADD COLUMN venue TEXT")
    db.commit()
    db.close()
    before = hashlib.sha256(log.read_bytes()).hexdigest()
    with pytest.raises(StoreError) as refused:
        GameStore(log)
    assert refused.value.code == "newer_log" and "written by a newer version of the companion" in refused.value.message
    assert "damaged" not in refused.value.message and "Update the companion" in refused.value.todo
    said: list[str] = []
    assert doctor(instance, repair=True, say=said.append) == 1
    assert any("Update the companion" in line for line in said) and not list(instance.glob("damaged-*"))
    assert hashlib.sha256(log.read_bytes()).hexdigest() == before


@pytest.mark.skipif(os.geteuid() != 0, reason="only root can run doctor as sudo does and give files to another user")
def test_doctor_repair_run_with_sudo_leaves_the_log_to_the_service_user(tmp_path):
    """Run with sudo, the natural way on a Pi, the repaired log was root's: the service, running as its own user,
    could not write it and started in safe mode again."""
    instance = tmp_path / "instance"
    instance.mkdir()
    (instance / CONFIG_NAME).write_text(render_config(all_settings(), {"table.pin": PIN}))
    path = instance / "game-log.sqlite3"
    _log_with_history_in_its_wal(path, games=2)
    service = 65534  # nobody: the service user of this test
    for part in instance.glob("game-log.sqlite3*"):
        os.chown(part, service, service)
    assert doctor(instance, repair=True, say=lambda line: None) == 0
    assert (path.stat().st_uid, path.stat().st_gid) == (service, service)
    aside = next(instance.glob("damaged-*"))
    assert aside.stat().st_uid == service and all(p.stat().st_uid == service for p in aside.iterdir())




def _family(instance) -> dict[str, str]:  # noqa: ANN001
    return {p.name: _digest(p) for p in instance.iterdir() if p.is_file()}


@pytest.mark.parametrize("room", ["none-for-the-copy", "none-for-the-recovered-log"])
def test_doctor_repair_on_a_full_card_changes_nothing_and_says_the_card_is_full(small_card, room):
    """A full card is a common cause of a damaged log. The repair copied aside and then deleted the damaged log
    before writing the recovered one: on a full card it stopped with a traceback halfway, the log gone. Now the
    damaged log stays exactly as it was until the whole recovered log is written, and doctor says why it stopped."""
    instance, path = _damaged_instance(small_card.path)
    assert doctor(instance, say=lambda line: None) == 1  # the owner's first look: refused, as serve refuses it
    before = _family(instance)
    size = path.stat().st_size
    small_card.fill(size - 8192 if room == "none-for-the-copy" else size + 8192)  # room to open it (and find the damage)
    said: list[str] = []
    assert doctor(instance, repair=True, say=said.append) == 1
    assert _family(instance) == before, "the damaged log was changed"
    problem = [line for line in said if line.startswith("PROBLEM  ")][-1]
    assert "the card is full (" in problem and "MB free" in problem and "Nothing was changed" in problem, said
    assert "free some room on the card" in problem and "then run it again" in problem
    asides = list(instance.glob("damaged-*"))
    if room == "none-for-the-copy":
        assert asides == [] and "could not be copied aside" in problem  # no part copy left to take for a whole one
    else:
        assert len(asides) == 1 and _digest(asides[0] / path.name) == before[path.name]
        assert f"its copy in {asides[0].name}/" in problem
    assert not list(instance.glob("*.repairing*"))
    small_card.empty()  # room made: the same command now repairs it
    said.clear()
    assert doctor(instance, repair=True, say=said.append) == 0, said
    assert said[-1].startswith("repaired game-log.sqlite3: ") and not list(instance.glob("*.repairing*"))


def test_two_repairs_in_the_same_second_keep_both_copies_aside(tmp_path, monkeypatch):
    """The copy aside is named for the second it was made in: a second repair within it found the name taken and
    stopped with a traceback (or, had it gone on, would have written over the first copy)."""
    import companion.app.doctor as doctor_module

    monkeypatch.setattr(doctor_module.time, "strftime", lambda fmt, *args: "20261207-120000")
    instance, path = _damaged_instance(tmp_path)
    first = _digest(path)
    assert doctor(instance, repair=True, say=lambda line: None) == 0
    _zero_last_page(path)  # damaged again at once
    second = _digest(path)
    said: list[str] = []
    assert doctor(instance, repair=True, say=said.append) == 0
    assert sorted(p.name for p in instance.glob("damaged-*")) == ["damaged-20261207-120000", "damaged-20261207-120000-2"]
    assert _digest(instance / "damaged-20261207-120000" / path.name) == first
    assert _digest(instance / "damaged-20261207-120000-2" / path.name) == second
    assert any("to damaged-20261207-120000-2/" in line for line in said)


def test_a_whole_log_on_a_full_card_is_refused_as_a_full_card_not_as_damage(small_card):
    """SQLite says only "disk I/O error" when the card has no room for the file it keeps beside the log. The log was
    called "damaged or not an Elephants Bluff game log", and the owner told to move it away for a fresh one; doctor
    offered to repair it. The log is whole: the card wants room, and the log is left exactly as it was."""
    instance = small_card.path / "instance"
    instance.mkdir()
    (instance / CONFIG_NAME).write_text(render_config(all_settings(), {"table.pin": PIN}))
    path = real_log(instance / "game-log.sqlite3", games=30)
    before = _family(instance)
    small_card.fill()
    with pytest.raises(StoreError) as caught:
        GameStore(path)
    assert caught.value.code == "no_room"
    assert "cannot be opened: the card it is on is full (0.0 MB free). It was left as it is." in caught.value.message
    assert "damaged" not in caught.value.message and "Free some room on the card" in caught.value.todo
    page = create_safe_app(caught.value, str(path)).test_client().get("/").get_data(as_text=True)
    assert "The card the game log is on is full" in page and "Do not move the log away or repair it" in page
    assert _family(instance) == before, "the refused log was changed, or files were left beside it"
    said: list[str] = []
    assert doctor(instance, repair=True, say=said.append) == 1
    assert any("Do not move the log away or repair it" in line for line in said), said
    assert _family(instance) == before and not list(instance.glob("damaged-*"))
    small_card.empty()
    store = GameStore(path)
    try:
        assert len(store.game_ids()) == 30
    finally:
        store.close()


def test_only_a_full_card_is_taken_for_one_not_a_folder_named_full(tmp_path):
    """The error's words are looked at: a path that says "full" is not a full card (an OSError names its file)."""
    from companion.core.files import full_card

    folder = tmp_path / "full-house"
    folder.mkdir()
    log = folder / "game-log.sqlite3"
    assert full_card(log, OSError(2, "No such file or directory", str(log))) is None
    assert full_card(log, sqlite3.DatabaseError("database disk image is malformed")) is None
    assert full_card(log, sqlite3.DatabaseError("disk I/O error")) is None  # with room: not the card
    assert full_card(log, sqlite3.OperationalError("database or disk is full")) is not None
    assert full_card(log, OSError(28, "No space left on device")) is not None


def test_a_move_the_log_cannot_write_for_a_disk_io_error_on_a_nearly_full_card_is_said_as_a_full_card(small_card):
    """SQLite can say "disk I/O error" rather than "disk is full" where a write finds no room (its shared-memory file
    cannot grow). The log's write refusal took only "full" for a full card, so such a move was "could not be written
    in the game log", not the 507 whose words say to free room. It follows the rule a file's opening follows
    (``full_card``): that error with almost no room left is the full card; with room it is not."""
    from companion.app.store import _write_error

    log = small_card.path / "game-log.sqlite3"
    io_error = sqlite3.OperationalError("disk I/O error")
    with_room = _write_error(io_error, "The action could not be written", log)
    assert isinstance(with_room, StoreError) and "disk I/O error" in str(with_room)
    small_card.fill(leave=0)
    said = _write_error(io_error, "The action could not be written", log)
    assert isinstance(said, InsufficientStorage) and "disk is full. Nothing was changed" in str(said)
    assert isinstance(_write_error(sqlite3.OperationalError("database or disk is full"), "The game could not be started", log), InsufficientStorage)
