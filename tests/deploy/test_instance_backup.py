"""deploy/instance.sh: backup and restore of the instance folder, one command each, never a mix of versions.

Runs on temporary folders (``--instance``, and ``--prefix`` holding a fake venv
whose python tells the installed version); no service is touched (none runs
here). Needs root for the ownership a restore sets, as CI runs.
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
import subprocess
import tarfile
from contextlib import closing
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "deploy" / "instance.sh"
pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="a restore sets the service user's ownership: needs root (CI runs as root)")


@pytest.fixture
def table(tmp_path):
    instance = tmp_path / "lib" / "elephants-bluff"
    (instance / "frames").mkdir(parents=True)
    (instance / "config.toml").write_text('[table]\npin = "123456"\n', encoding="utf-8")
    with closing(sqlite3.connect(instance / "game-log.sqlite3")) as log:  # a game log as SQLite finds it: whole
        log.execute("CREATE TABLE events (game TEXT, seq INTEGER, body TEXT)")
        log.executemany("INSERT INTO events VALUES (?, ?, ?)", [("g-1", n, os.urandom(64).hex()) for n in range(40)])
        log.commit()
    (instance / "frames" / "c-1.jpg").write_bytes(os.urandom(2048))
    prefix = tmp_path / "opt"
    python = prefix / "venv" / "bin" / "python"
    python.parent.mkdir(parents=True)

    def installed(version: str) -> None:
        python.write_text(f"#!/bin/sh\necho {version}\n", encoding="utf-8")
        python.chmod(0o755)

    installed("1.2.3")

    # systemd's own command, played: the service is running, and each call is written down
    fake = tmp_path / "fake-bin"
    fake.mkdir()
    (fake / "systemctl").write_text(f'#!/bin/sh\necho "$*" >>{tmp_path / "systemctl.log"}\n'
                                    '[ "$1" = is-active ] && { echo active; exit 0; }\nexit 0\n', encoding="utf-8")
    (fake / "systemctl").chmod(0o755)

    def run(*args: str, at: Path = instance) -> subprocess.CompletedProcess:
        """The script with ``args`` on the instance folder ``at`` (the table's, unless a test gives another)."""
        return subprocess.run(["bash", str(SCRIPT), *args, "--instance", str(at), "--prefix", str(prefix), "--user", "nobody"],
                              capture_output=True, text=True, cwd=tmp_path, stdin=subprocess.DEVNULL, env={"PATH": f"{fake}:/usr/sbin:/usr/bin:/sbin:/bin"})

    return instance, installed, run


def hashes(folder: Path) -> dict[str, str]:
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.rglob("*")) if p.is_file()}


def one_sentence(out: subprocess.CompletedProcess) -> str:
    lines = [line for line in out.stderr.splitlines() if line.strip()]
    assert out.returncode == 1 and len(lines) == 1 and lines[0].startswith("instance: "), out.stdout + out.stderr
    return lines[0]


def test_a_backup_restored_gives_back_every_file_byte_for_byte(table, tmp_path):
    instance, _, run = table
    before = hashes(instance)
    out = run("backup", "b.tar.gz")
    assert out.returncode == 0 and "Backed up" in out.stdout and "(version 1.2.3)" in out.stdout, out.stderr
    (instance / "frames" / "c-1.jpg").unlink()
    (instance / "config.toml").write_text('[table]\npin = "999999"\n', encoding="utf-8")
    out = run("restore", "b.tar.gz")
    assert out.returncode == 0 and "Restored" in out.stdout, out.stderr
    assert hashes(instance) == before
    assert instance.stat().st_uid == int(subprocess.run(["id", "-u", "nobody"], capture_output=True, text=True).stdout)
    kept = [p for p in instance.parent.iterdir() if p.name.startswith("elephants-bluff.before-restore-")]
    assert len(kept) == 1 and (kept[0] / "config.toml").read_text(encoding="utf-8") == '[table]\npin = "999999"\n'


def test_a_whole_game_log_is_backed_up_without_a_word_and_a_damaged_one_is_backed_up_and_said(table, tmp_path):
    """A damaged game log went into the backup unchecked: the owner kept, as their good copy, a log the companion
    would refuse."""
    instance, _, run = table
    out = run("backup", "whole.tar.gz")
    assert out.returncode == 0 and out.stderr == "", out.stderr
    log = instance / "game-log.sqlite3"
    page = bytearray(log.read_bytes())
    page[4096:4096 + 512] = os.urandom(512)  # the table's page written over: the file is still SQLite's
    log.write_bytes(bytes(page))
    (instance / "auth.sqlite3").write_bytes(os.urandom(2048))  # and the device list no database at all
    before = hashes(instance)
    out = run("backup", "damaged.tar.gz")
    assert out.returncode == 0 and "Backed up" in out.stdout, out.stderr
    said = out.stderr.strip()
    assert said.startswith("instance: warning: SQLite finds damage in auth.sqlite3 (file is not a database); game-log.sqlite3 ("), said
    assert said.endswith("it is backed up as it was: keep an older backup too, and see deploy/README.md (Backup and restore)") and "\n" not in said
    with tarfile.open(tmp_path / "damaged.tar.gz") as tar:
        assert tar.extractfile("./game-log.sqlite3").read() == bytes(page)
    assert hashes(instance) == before, "the check touched the table's folder"
    assert not list(tmp_path.glob("damaged.tar.gz.*"))
    calls = (tmp_path / "systemctl.log").read_text(encoding="utf-8").splitlines()
    assert [c for c in calls if c.split()[0] in ("stop", "start")] == ["stop elephants-bluff.service", "start elephants-bluff.service"] * 2, calls


def test_a_game_log_the_settings_keep_in_a_subfolder_under_another_name_is_checked_too(table, tmp_path):
    """Only the ``*.sqlite3`` files at the top of the folder were checked: a game log kept at ``data/games.db`` went
    into the backup damaged without a word."""
    instance, _, run = table
    (instance / "data").mkdir()
    (instance / "game-log.sqlite3").rename(instance / "data" / "games.db")
    (instance / "config.toml").write_text('[table]\npin = "123456"\n[storage]\ndatabase = "data/games.db"\n', encoding="utf-8")
    out = run("backup", "whole.tar.gz")
    assert out.returncode == 0 and out.stderr == "", out.stderr
    log = instance / "data" / "games.db"
    page = bytearray(log.read_bytes())
    page[4096:4096 + 512] = os.urandom(512)
    log.write_bytes(bytes(page))
    before = hashes(instance)
    out = run("backup", "damaged.tar.gz")
    assert out.returncode == 0 and "Backed up" in out.stdout, out.stderr
    said = out.stderr.strip()
    assert said.startswith("instance: warning: SQLite finds damage in data/games.db ("), said
    assert "\n" not in said and hashes(instance) == before
    with tarfile.open(tmp_path / "damaged.tar.gz") as tar:
        assert tar.extractfile("./data/games.db").read() == bytes(page)


def test_a_game_log_or_photos_the_settings_keep_outside_the_folder_are_said_to_be_left_out(table, tmp_path):
    """Set to an absolute place (a USB stick), the game log was silently not in a backup that said "Backed up"."""
    instance, _, run = table
    stick = tmp_path / "stick"
    stick.mkdir()
    (instance / "config.toml").write_text(f'[table]\npin = "123456"\n[storage]\ndatabase = "{stick / "log.sqlite3"}"\nframes_dir = "../photos"\n', encoding="utf-8")
    out = run("backup", "b.tar.gz")
    assert out.returncode == 0 and "Backed up" in out.stdout, out.stderr
    assert out.stderr.strip() == (f"instance: warning: not in this backup, as the settings keep them outside {instance}: "
                                  f"storage.database = {stick / 'log.sqlite3'}; storage.frames_dir = {instance.parent / 'photos'}; copy them yourself")


def test_a_backup_from_another_version_is_refused_and_nothing_changes(table):
    instance, installed, run = table
    assert run("backup", "b.tar.gz").returncode == 0
    installed("1.3.0")
    (instance / "config.toml").write_text('[table]\npin = "999999"\n', encoding="utf-8")
    now = hashes(instance)
    said = one_sentence(run("restore", "b.tar.gz"))
    assert "this backup comes from version 1.2.3 and the installed companion is 1.3.0, so nothing was restored" in said
    assert hashes(instance) == now and not [p for p in instance.parent.iterdir() if ".before-restore-" in p.name or p.name.startswith(".restore.")]


def test_a_file_that_is_no_backup_is_refused(table, tmp_path):
    instance, _, run = table
    stray = tmp_path / "photos.tar.gz"
    with tarfile.open(stray, "w:gz") as tar:
        tar.add(instance / "config.toml", arcname="config.toml")
    assert "is not a backup made by 'deploy/instance.sh backup'" in one_sentence(run("restore", str(stray)))


def test_backing_up_an_empty_folder_says_so(table, tmp_path):
    instance, _, run = table
    (instance / "config.toml").unlink()
    assert "there is nothing to back up" in one_sentence(run("backup"))


def test_a_backup_never_overwrites_a_file(table, tmp_path):
    _, _, run = table
    (tmp_path / "b.tar.gz").write_text("mine", encoding="utf-8")
    assert "b.tar.gz already exists" in one_sentence(run("backup", "b.tar.gz"))
    assert (tmp_path / "b.tar.gz").read_text(encoding="utf-8") == "mine"


def _service_calls(tmp_path: Path) -> list[str]:
    log = tmp_path / "systemctl.log"
    return [line.split()[0] for line in log.read_text(encoding="utf-8").splitlines()] if log.exists() else []


def test_a_restore_ends_every_devices_session(table, tmp_path):
    """A device let in before the backup, ended since (a guest's phone): the restore gave it control again (audit)."""
    from companion.app.auth import AuthStore

    instance, _, run = table
    store = AuthStore(instance / "auth.sqlite3")
    store.open_session("tag", hours=12, address="192.0.2.7", agent="a guest's phone")
    store.close()
    assert run("backup", "b.tar.gz").returncode == 0
    out = run("restore", "b.tar.gz")
    assert out.returncode == 0 and "every device types the table PIN again" in out.stdout, out.stderr
    store = AuthStore(instance / "auth.sqlite3")
    try:
        assert store.sessions() == []
    finally:
        store.close()
    assert _service_calls(tmp_path) == ["is-active", "stop", "start", "is-active", "stop", "start"]  # stopped and started, each


def test_a_backup_whose_device_list_is_damaged_is_refused_and_nothing_changes(table, tmp_path):
    instance, _, run = table
    (instance / "auth.sqlite3").write_bytes(b"not a database" * 100)
    assert run("backup", "b.tar.gz").returncode == 0
    (instance / "config.toml").write_text('[table]\npin = "999999"\n', encoding="utf-8")
    now = hashes(instance)
    assert "the backup's list of devices (auth.sqlite3) could not be read (damaged?); nothing was restored" in one_sentence(run("restore", "b.tar.gz"))
    assert hashes(instance) == now and not [p for p in instance.parent.iterdir() if ".before-restore-" in p.name or p.name.startswith(".restore.")]


@pytest.mark.parametrize("where", ["a folder not there", "a read-only folder"])
def test_a_backup_to_a_place_it_cannot_write_never_stops_the_table(table, tmp_path, where):
    """A typo in the destination stopped and restarted the table, mid-game, for nothing (audit)."""
    _, _, run = table
    if where == "a folder not there":
        target, words = tmp_path / "nowhere" / "b.tar.gz", "does not exist; nothing was backed up and the table was not stopped"
    else:
        (tmp_path / "ro").mkdir()
        target, words = tmp_path / "ro" / "b.tar.gz", "cannot be written there (a read-only or full folder?); nothing was backed up"
        if subprocess.run(["mount", "-t", "tmpfs", "-o", "ro,size=1m", "tmpfs", str(tmp_path / "ro")], capture_output=True).returncode != 0:
            pytest.skip("this machine does not let the tests mount a read-only folder (root writes anywhere else)")
    try:
        assert words in one_sentence(run("backup", str(target)))
    finally:
        if where == "a read-only folder":
            subprocess.run(["umount", str(tmp_path / "ro")], check=True)
    assert _service_calls(tmp_path) == []


def test_each_restore_keeps_its_own_copy_and_names_those_earlier_restores_kept(table, tmp_path):
    """Each restore keeps the whole folder it replaced, photos and all: on an SD card they piled up unseen, and two
    restores in one second failed on the first one's copy."""
    instance, _, run = table
    assert run("backup", "b.tar.gz").returncode == 0
    clock = tmp_path / "fake-bin" / "date"  # both restores in one second, whatever the machine's speed
    clock.write_text("#!/bin/sh\necho 20261207-120000\n", encoding="utf-8")
    clock.chmod(0o755)
    first = run("restore", "b.tar.gz")
    assert first.returncode == 0 and "earlier restores" not in first.stdout, first.stderr
    second = run("restore", "b.tar.gz")
    assert second.returncode == 0, second.stderr
    kept = sorted(p for p in instance.parent.iterdir() if p.name.startswith("elephants-bluff.before-restore-"))
    assert [p.name for p in kept] == ["elephants-bluff.before-restore-20261207-120000", "elephants-bluff.before-restore-20261207-120000-2"]
    named_now = second.stdout.split("is kept as ")[1].split(";")[0]
    earlier = next(str(p) for p in kept if str(p) != named_now)
    assert f"Folders kept by earlier restores, each a whole instance folder: {earlier} (" in second.stdout
    assert "delete those you no longer need (sudo rm -rf FOLDER)" in second.stdout


def _small_folder(tmp_path: Path, name: str, size: str) -> Path:
    folder = tmp_path / name
    folder.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(folder)], capture_output=True).returncode != 0:
        pytest.skip("this machine does not let the tests mount a small folder")
    return folder


def test_a_restore_onto_a_full_card_says_so_and_changes_nothing(table, tmp_path):
    """A card without room for the backup was told as a damaged backup; the table's folder stays as it was."""
    instance, _, run = table
    (instance / "frames" / "big.jpg").write_bytes(os.urandom(400_000))
    assert run("backup", "b.tar.gz").returncode == 0
    card = _small_folder(tmp_path, "card", "200k")
    try:
        small = card / "elephants-bluff"
        small.mkdir()
        (small / "config.toml").write_text('[table]\npin = "999999"\n', encoding="utf-8")
        older = card / "elephants-bluff.before-restore-20261201-100000"
        older.mkdir()
        (older / "config.toml").write_text('[table]\npin = "999999"\n', encoding="utf-8")
        before = hashes(small)
        said = one_sentence(run("restore", "b.tar.gz", at=small))
        assert f"there is no room left beside {small} to unpack the backup: it needs about 0.4 MB and 0." in said  # 200 kB
        assert f"(copies kept by earlier restores take room too: {older} (" in said
        assert "damaged" not in said and said.endswith("nothing was restored")
        assert hashes(small) == before and sorted(p.name for p in card.iterdir()) == ["elephants-bluff", older.name]
    finally:
        subprocess.run(["umount", str(card)], check=True)


def test_a_backup_into_a_full_folder_says_so_and_leaves_no_part_file(table, tmp_path):
    instance, _, run = table
    (instance / "frames" / "big.jpg").write_bytes(os.urandom(400_000))
    stick = _small_folder(tmp_path, "stick", "100k")
    try:
        said = one_sentence(run("backup", str(stick / "b.tar.gz")))
        assert f"the folder of {stick / 'b.tar.gz'} is full: the backup did not fit and nothing was backed up" in said
        assert list(stick.iterdir()) == []
    finally:
        subprocess.run(["umount", str(stick)], check=True)


def test_a_cut_off_backup_is_refused_in_one_sentence_and_nothing_changes(table, tmp_path):
    """A backup cut short (a copy to a stick pulled out too soon): tar's error lines, said in one sentence."""
    instance, _, run = table
    (instance / "frames" / "big.jpg").write_bytes(os.urandom(300_000))
    assert run("backup", "b.tar.gz").returncode == 0
    (tmp_path / "cut.tar.gz").write_bytes((tmp_path / "b.tar.gz").read_bytes()[:150_000])
    now = hashes(instance)
    said = one_sentence(run("restore", "cut.tar.gz"))
    assert "the backup cut.tar.gz could not be unpacked (damaged?): gzip: stdin: unexpected end of file; tar: " in said
    assert said.endswith("; nothing was restored")
    assert hashes(instance) == now and not [p for p in instance.parent.iterdir() if ".before-restore-" in p.name or p.name.startswith(".restore.")]
