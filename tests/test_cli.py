"""The `elephants-bluff` command: `serve --init` as `make run` uses it."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest
import requests

from companion.app.cli import build_parser
from tests.conftest import ROOT, free_port


def test_the_command_has_the_documented_subcommands():
    parser = build_parser()
    choices = parser._subparsers._group_actions[0].choices  # argparse keeps them here
    assert {"serve", "read", "classify", "calibrate", "bench"} <= set(choices)


def test_serve_init_creates_a_pin_prints_the_url_and_pin_and_serves(tmp_path):
    port = free_port()
    env = {k: v for k, v in os.environ.items() if k != "ELEPHANTS_BLUFF_PIN"}
    proc = subprocess.Popen([sys.executable, "-m", "companion.app.cli", "serve", "--simulate", "--init", "--instance", str(tmp_path / "inst"), "--port", str(port)], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=ROOT, env={**env, "PYTHONUNBUFFERED": "1"})
    try:
        lines = []
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not any(line.startswith("Table PIN:") for line in lines):
            lines.append(proc.stdout.readline())
        text = "".join(lines)
        assert f"http://127.0.0.1:{port}/" in text
        # The address, how a tablet gets in, and the PIN are the last lines, after everything else.
        assert lines[-1].startswith("Table PIN:") and lines[-4].startswith("Elephants Bluff companion on")
        assert "--host 0.0.0.0" in lines[-3] and "config.toml" in lines[-2]
        pin = next(line for line in lines if line.startswith("Table PIN:")).split(":", 1)[1].strip()
        assert len(pin) == 6 and pin.isdigit()
        assert f'pin = "{pin}"' in (tmp_path / "inst" / "config.toml").read_text()
        assert oct((tmp_path / "inst" / "config.toml").stat().st_mode & 0o777) == "0o600"
        r = requests.post(f"http://127.0.0.1:{port}/api/games", json={"players": ["Ann", "Ben"]}, headers={"X-Table-Pin": pin}, timeout=10)
        assert r.status_code == 201
        assert "<html" in requests.get(f"http://127.0.0.1:{port}/", timeout=10).text
    finally:
        proc.terminate()
        proc.wait(10)
        rest = proc.stdout.read()
        proc.stdout.close()
    # Started again on the same settings, it never prints the PIN: a service's log is kept.
    again = subprocess.Popen([sys.executable, "-m", "companion.app.cli", "serve", "--simulate", "--init", "--instance", str(tmp_path / "inst"), "--port", str(port)], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=ROOT, env={**env, "PYTHONUNBUFFERED": "1"})
    try:
        first = again.stdout.readline()
        assert first.startswith("Elephants Bluff companion on")
    finally:
        again.terminate()
        again.wait(10)
        output = first + again.stdout.read()
        again.stdout.close()
    assert pin not in output + rest


def test_serve_init_with_the_pin_in_the_environment_prints_no_pin_the_table_would_refuse(tmp_path):
    """ELEPHANTS_BLUFF_PIN overrides the file's PIN: ``--init`` printed the random one it wrote, which was refused."""
    port = free_port()
    env = {**os.environ, "ELEPHANTS_BLUFF_PIN": "482913", "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen([sys.executable, "-m", "companion.app.cli", "serve", "--simulate", "--init", "--instance", str(tmp_path / "inst"), "--port", str(port)],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=ROOT, env=env)
    try:
        lines = []
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not any(line.startswith("Elephants Bluff companion on") for line in lines):
            lines.append(proc.stdout.readline())
        text = "".join(lines)
        assert "The table PIN is the one set in ELEPHANTS_BLUFF_PIN" in text
        written = (tmp_path / "inst" / "config.toml").read_text()
        file_pin = written.split('\npin = "', 1)[1].split('"', 1)[0]
        assert file_pin not in text  # never the PIN the table refuses
        for pin, status in (("482913", 201), (file_pin, 401)):
            r = requests.post(f"http://127.0.0.1:{port}/api/games", json={"players": ["Ann", "Ben"]}, headers={"X-Table-Pin": pin}, timeout=10)
            assert r.status_code == status, pin
    finally:
        proc.terminate()
        proc.wait(10)
        proc.stdout.close()


def test_a_busy_port_is_said_in_one_sentence_with_how_to_choose_another(tmp_path):
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        env = {**os.environ, "ELEPHANTS_BLUFF_PIN": "482913"}
        done = subprocess.run([sys.executable, "-m", "companion.app.cli", "serve", "--simulate", "--instance", str(tmp_path / "inst"), "--port", str(port)],
                              capture_output=True, text=True, cwd=ROOT, env=env, timeout=120)
    assert done.returncode == 1
    assert "Traceback" not in done.stderr and "OSError" not in done.stderr
    said = [line for line in done.stderr.splitlines() if line.startswith("elephants-bluff:")]
    assert said == [f"elephants-bluff: port {port} is already in use on 127.0.0.1 (another companion, or another program): stop it, or start on another port with --port {port + 1} (make run PORT={port + 1})."]


def test_a_first_start_on_a_busy_port_still_shows_the_new_pin_once(tmp_path):
    """serve --init writes the settings, with a new PIN, before it finds the port taken; the start the message then
    suggests, on a free port, is no longer the first and shows no PIN: the table would never have seen it."""
    import socket

    from companion.app.settings import Settings

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        env = {k: v for k, v in os.environ.items() if k != "ELEPHANTS_BLUFF_PIN"}
        done = subprocess.run([sys.executable, "-m", "companion.app.cli", "serve", "--simulate", "--init", "--instance", str(tmp_path / "inst"), "--port", str(port)],
                              capture_output=True, text=True, cwd=ROOT, env=env, timeout=120)
    assert done.returncode == 1 and "is already in use" in done.stderr
    pin = Settings.load(tmp_path / "inst" / "config.toml", environ={})["table.pin"]
    assert f"Table PIN: {pin}" in done.stdout and done.stdout.count(pin) == 1


def test_listening_on_every_network_names_this_computers_lan_address(tmp_path):
    from companion.app.server import lan_addresses, print_ready

    import contextlib
    import io

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        print_ready("the simulated table", "0.0.0.0", 8000, ("123456", tmp_path / "config.toml"))
    lines = out.getvalue().splitlines()
    assert lines[0] == "Elephants Bluff companion on the simulated table: http://127.0.0.1:8000/"
    assert lines[1:-2] == [f"  From a tablet or phone on the same network: http://{a}:8000/" for a in lan_addresses()]
    assert lines[-1] == "Table PIN: 123456"


def test_output_into_a_pipe_closed_early_ends_quietly(tmp_path):
    """``elephants-bluff classify ... | head -1``: the reader of the pipe leaves after a line; the command stops
    without a traceback in the terminal."""
    missing = [str(tmp_path / f"no-such-photo-{i:04d}.jpg") for i in range(3000)]  # a line each, far past a pipe's buffer
    proc = subprocess.Popen([sys.executable, "-m", "companion.app.cli", "classify", "--json", *missing],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=ROOT)
    first = proc.stdout.readline()
    proc.stdout.close()
    with proc.stderr:
        stderr = proc.stderr.read().decode()
    assert proc.wait(timeout=120) == 141
    assert b"no-such-photo-0000" in first
    assert "Traceback" not in stderr and "BrokenPipeError" not in stderr, stderr


def test_the_reader_commands_read_the_instance_serve_wrote(tmp_path):
    """``serve --init`` writes every setting (the table PIN, the buttons' pins, teaching): ``read`` and ``classify``
    with that instance take its reader settings and accept the rest, as after ``make run`` in a checkout."""
    import cv2
    import numpy as np

    from companion.app.settings import init_config
    from vision.simtable import render_table

    init_config(tmp_path)
    frame, _ = render_table([2, 4, 6], np.random.default_rng(1), view="above")
    cv2.imwrite(str(tmp_path / "tray.png"), frame)
    for command in ("read", "classify"):
        done = subprocess.run([sys.executable, "-m", "companion.app.cli", command, "--instance", str(tmp_path), str(tmp_path / "tray.png")],
                              capture_output=True, text=True, cwd=ROOT, timeout=300)
        assert done.returncode == 0 and "is not a known setting" not in done.stderr, done.stderr
        assert "tray.png" in done.stdout


@pytest.mark.parametrize("command", [["doctor"], ["check"], ["sessions", "list"], ["sessions", "revoke", "--all"]])
def test_a_maintenance_command_without_the_tables_instance_says_so_and_makes_nothing(tmp_path, command):
    """Run from the wrong folder without --instance, ``doctor`` said ok (and made an empty instance), ``check`` said
    Ready and ``sessions revoke --all`` said no device was ever let in: an owner locking out a lost phone was misled."""
    missing = tmp_path / "instance"
    done = subprocess.run([sys.executable, "-m", "companion.app.cli", *command, "--instance", str(missing)], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 2, done.stdout + done.stderr
    assert f"There is no companion's instance at {missing}" in done.stderr and "--instance /var/lib/elephants-bluff" in done.stderr
    assert not missing.exists()


def test_a_command_on_a_full_or_read_only_card_says_so_in_words_and_stores_nothing(small_card, tmp_path, capsys):
    """`calibrate` on a full card printed a Python traceback ("OSError: [Errno 28] No space left on device"), and so
    did any command whose write the card refused. It says what is wrong and what to do, exits 2, and the empty tray's
    photo and its settings are both left unmade. On a real small tmpfs, full and then remounted read-only."""
    import cv2
    import numpy as np

    from companion.app.cli import main

    tray = tmp_path / "empty-tray-seen.png"  # the camera's picture, off the card: a plain tray with nothing on it
    cv2.imwrite(str(tray), np.full((480, 640, 3), 120, np.uint8) + np.random.default_rng(1).integers(0, 6, (480, 640, 3), dtype=np.uint8))
    instance = small_card.path / "instance"
    instance.mkdir()
    config = f'[camera]\nbackend = "files"\nfiles_dir = "{tray}"\n\n[gpio]\npin_factory = "mock"\n'
    (instance / "config.toml").write_text(config)

    small_card.fill()
    assert main(["calibrate", "--instance", str(instance)]) == 2
    said = capsys.readouterr().err
    assert said.startswith("elephants-bluff: the disk is full (writing ") and "Free some room" in said and "Traceback" not in said
    assert sorted(p.name for p in instance.iterdir()) == ["config.toml"] and (instance / "config.toml").read_text() == config

    small_card.empty()
    assert subprocess.run(["mount", "-o", "remount,ro", str(small_card.path)], capture_output=True).returncode == 0
    assert main(["calibrate", "--instance", str(instance)]) == 2
    said = capsys.readouterr().err
    assert said.startswith("elephants-bluff: the card has turned read-only (writing ") and "use another card" in said
    assert sorted(p.name for p in instance.iterdir()) == ["config.toml"]
