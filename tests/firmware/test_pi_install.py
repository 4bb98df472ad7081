"""The Pi install: the script passes shellcheck, the unit passes systemd-analyze verify."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "deploy" / "install-pi.sh"
UNIT = ROOT / "deploy" / "elephants-bluff.service"


@pytest.mark.skipif(shutil.which("shellcheck") is None, reason="shellcheck is not installed (make system-deps installs it)")
def test_the_install_script_passes_shellcheck():
    out = subprocess.run(["shellcheck", "-x", "--severity=style", str(SCRIPT)], capture_output=True, text=True)
    assert out.returncode == 0, out.stdout + out.stderr


@pytest.mark.parametrize(
    "args,why",
    [
        (["--port", "eighty"], "--port must be a number, not 'eighty'"),
        (["--user", "root"], "must not run as root"),
        (["--user", "Bad User"], "--user must be lower-case letters"),
        (["--instance", "/var/lib/my games"], "must not contain spaces"),
        (["--frobnicate"], "unknown option: --frobnicate"),
    ],
)
def test_the_install_script_refuses_bad_options_before_touching_the_system(args, why):
    out = subprocess.run(["bash", str(SCRIPT), *args], capture_output=True, text=True)
    assert out.returncode == 1 and why in out.stderr


def _installed_unit(tmp_path: Path) -> Path:
    """The unit as the installer writes it, with the prefix moved to a folder that holds the real command."""
    prefix = tmp_path / "prefix"
    (prefix / "venv" / "bin").mkdir(parents=True)
    command = Path(sys.executable).parent / "elephants-bluff"
    if not command.exists():
        pytest.skip("the elephants-bluff command is not installed in this environment")
    (prefix / "venv" / "bin" / "elephants-bluff").symlink_to(command)
    unit = tmp_path / "elephants-bluff.service"
    unit.write_text(UNIT.read_text(encoding="utf-8").replace("/opt/elephants-bluff", str(prefix)), encoding="utf-8")
    return unit


def _verify(unit: Path) -> subprocess.CompletedProcess:
    return subprocess.run(["systemd-analyze", "verify", str(unit)], capture_output=True, text=True)


@pytest.mark.skipif(shutil.which("systemd-analyze") is None, reason="systemd-analyze is not available on this machine")
def test_the_unit_passes_systemd_analyze_verify(tmp_path: Path):
    out = _verify(_installed_unit(tmp_path))
    assert out.returncode == 0, out.stdout + out.stderr
    assert out.stderr.strip() == ""


@pytest.mark.skipif(shutil.which("systemd-analyze") is None, reason="systemd-analyze is not available on this machine")
def test_systemd_analyze_catches_a_broken_unit_here(tmp_path: Path):
    unit = _installed_unit(tmp_path)
    unit.write_text(unit.read_text(encoding="utf-8").replace("Type=exec", "Type=sometimes"), encoding="utf-8")
    out = _verify(unit)
    assert "Failed to parse service type" in out.stderr  # so the empty stderr above is a real check here


def test_the_unit_runs_the_companion_as_the_issue_asks():
    text = UNIT.read_text(encoding="utf-8")
    lines = {line.split("=", 1)[0]: line.split("=", 1)[1] for line in text.splitlines() if "=" in line and not line.startswith("#")}
    assert lines["Type"] == "exec" and lines["Restart"] == "on-failure"
    assert lines["User"] != "root" and set(lines["SupplementaryGroups"].split()) == {"gpio", "video"}
    assert "GPIOZERO_PIN_FACTORY=lgpio" in text
    assert lines["ExecStart"].endswith("elephants-bluff serve --host 0.0.0.0 --port 8000 --instance /var/lib/elephants-bluff")


def _python_blocks() -> list[str]:
    """The Python programs the install script feeds to the venv's python (its ``<<'PY'`` blocks)."""
    text = SCRIPT.read_text(encoding="utf-8")
    # each block starts on the line after its ``<<'PY'`` and ends at a line that is just ``PY``
    return [part.split("\n", 1)[1].split("\nPY\n", 1)[0] for part in text.split("<<'PY'")[1:]]


def test_the_settings_the_installer_writes_load_and_pass_the_pin_check(tmp_path: Path):
    write, check = _python_blocks()
    env = {"EB_INSTANCE": str(tmp_path), "EB_HOST": "elephants-bluff", "PATH": "/usr/bin:/bin"}
    out = subprocess.run([sys.executable, "-"], input=write, capture_output=True, text=True, env=env)
    assert out.returncode == 0, out.stderr
    from companion.app.settings import Settings

    settings = Settings.load(tmp_path / "config.toml", environ={})
    assert settings["camera.backend"] == "picamera2" and settings["gpio.pin_factory"] == "lgpio"
    assert len(settings["table.pin"]) == 6 and "elephants-bluff.local" in settings["server.trusted_hosts"]
    ok = subprocess.run([sys.executable, "-", str(tmp_path / "config.toml")], input=check, capture_output=True, text=True)
    assert ok.returncode == 0, ok.stderr


def test_the_installers_pin_check_stops_on_a_double_used_pin(tmp_path: Path):
    _, check = _python_blocks()
    config = tmp_path / "config.toml"
    config.write_text("[gpio]\nbuzzer = 18\n", encoding="utf-8")
    out = subprocess.run([sys.executable, "-", str(config)], input=check, capture_output=True, text=True)
    assert out.returncode == 1 and "gpio.buzzer: uses BCM pin 18, which gpio.tray_light already uses" in out.stderr
