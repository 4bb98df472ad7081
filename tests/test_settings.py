"""Settings: one documented TOML file; a bad setting names the file, the key and why."""

from __future__ import annotations

import subprocess
import sys

import pytest

from companion.core.errors import SettingsError
from companion.app.settings import Settings, all_settings, init_config, render_config
from tests.conftest import ROOT


def test_every_setting_has_a_default_and_a_doc():
    for s in all_settings():
        assert s.doc.strip() and "." in s.key
        assert s.validate(s.default) is None or s.key == "table.pin"


def test_a_missing_file_means_all_defaults(tmp_path):
    s = Settings.load(tmp_path / "config.toml", environ={})
    assert s["game.path_length"] == 7 and s["table.pin"] == ""


def test_init_writes_every_setting_with_its_doc_and_a_random_pin(tmp_path):
    path, created = init_config(tmp_path)
    text = path.read_text()
    assert created and all(s.name in text for s in all_settings())
    pin = Settings.load(path, environ={})["table.pin"]
    assert len(pin) == 6 and pin.isdigit()
    assert init_config(tmp_path) == (path, False) and Settings.load(path, environ={})["table.pin"] == pin


def test_the_pin_environment_variable_overrides_the_file(tmp_path):
    (tmp_path / "config.toml").write_text('[table]\npin = "1111"\n')
    assert Settings.load(tmp_path / "config.toml", environ={"ELEPHANTS_BLUFF_PIN": "2222"})["table.pin"] == "2222"


@pytest.mark.parametrize(
    "text,key,why",
    [
        ("[game]\npath_length = 1\n", "game.path_length", "between 2 and 30"),
        ('[game]\npath_length = "seven"\n', "game.path_length", "whole number"),
        ("[game]\npath_lenght = 7\n", "game.path_lenght", "not a known setting"),
        ("[camera]\nbackend = 'usb'\n", "camera.backend", "must be one of"),
        ('[table]\npin = "1 2"\n', "table.pin", "4 to 32"),
        ("game = 3\n", "game", "[section]"),
        ("[game\npath_length = 7\n", None, "not valid TOML"),
    ],
)
def test_a_bad_setting_names_the_file_the_key_and_why(tmp_path, text, key, why):
    path = tmp_path / "config.toml"
    path.write_text(text)
    with pytest.raises(SettingsError) as err:
        Settings.load(path, environ={})
    assert err.value.key == key and why in err.value.why and str(path) in err.value.message


def test_a_config_that_is_not_text_is_refused(tmp_path):
    path = tmp_path / "config.toml"
    path.write_bytes(b"\xff\xfe\x00garbage")
    with pytest.raises(SettingsError, match="UTF-8"):
        Settings.load(path, environ={})


def test_rendered_config_reads_back_to_the_same_values(tmp_path):
    values = {"table.pin": "98765", "game.path_length": 9}
    path = tmp_path / "config.toml"
    path.write_text(render_config(all_settings(), values))
    s = Settings.load(path, environ={})
    assert s["table.pin"] == "98765" and s["game.path_length"] == 9


def test_serve_on_a_bad_setting_says_where_and_only_serves_the_safe_mode_page(tmp_path):
    # Issue 6: a bad config no longer leaves a dead tablet; serve says what is wrong
    # on stderr and serves a safe-mode page and 503 API naming the file and the key.
    from bench.live_server import LiveServer

    (tmp_path / "config.toml").write_text("[game]\npath_length = 99\n")
    server = LiveServer(tmp_path, pin="4321", simulate=False)
    with server:
        health = server.get("/api/health")
        refused = server.post("/api/games", json={"players": ["Ann", "Ben"]})
    assert health.status_code == 503 and health.json()["setting"] == "game.path_length"
    assert refused.status_code == 503
    assert server.proc.returncode == 0  # stopped by SIGTERM, as systemd stops it: a clean exit, not a failed unit
    assert "config.toml: game.path_length: must be between 2 and 30" in server.log_text()


def test_serve_without_any_pin_says_how_to_set_one(tmp_path):
    result = subprocess.run([sys.executable, "-m", "companion.app.cli", "serve", "--instance", str(tmp_path), "--port", "0"], capture_output=True, text=True, cwd=ROOT, timeout=60, env={"PATH": "/usr/bin:/bin"})
    assert result.returncode == 2 and "No table PIN is set" in result.stderr


def test_a_config_saved_with_a_byte_order_mark_reads_as_without_it(tmp_path):
    """Windows' Notepad saves UTF-8 with a byte-order mark; the crops lists and labels already read it."""
    path = tmp_path / "config.toml"
    path.write_bytes(b"\xef\xbb\xbf" + b'[reader]\nexpected_dice = 2\n')
    assert Settings.load(path)["reader.expected_dice"] == 2


def test_a_config_that_links_to_nothing_is_refused_not_read_as_defaults(tmp_path):
    (tmp_path / "config.toml").symlink_to(tmp_path / "gone.toml")
    with pytest.raises(SettingsError, match="is a link to .*gone.toml, which is not there"):
        Settings.load(tmp_path / "config.toml")


def test_an_instance_that_is_a_file_is_refused_not_read_as_defaults(tmp_path):
    (tmp_path / "instance").write_text("not a folder")
    with pytest.raises(SettingsError, match="is a file, not the instance folder"):
        Settings.load(tmp_path / "instance" / "config.toml")
    done = subprocess.run([sys.executable, "-m", "companion.app.cli", "read", "--instance", str(tmp_path / "instance"), str(tmp_path / "x.png")],
                          cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 2 and "is a file, not the instance folder" in done.stderr and "Traceback" not in done.stderr


def test_serve_on_an_instance_that_is_a_file_says_so_and_writes_nothing(tmp_path):
    (tmp_path / "instance").write_text("not a folder")
    done = subprocess.run([sys.executable, "-m", "companion.app.cli", "serve", "--init", "--instance", str(tmp_path / "instance"), "--port", "0"],
                          cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and "is a file, not the instance folder" in done.stderr and "Traceback" not in done.stderr
    assert (tmp_path / "instance").read_text() == "not a folder"
