"""install-pi.sh refuses what it cannot install on, in one sentence, before it changes anything.

Other systems are played with a fake os-release (``INSTALL_PI_OS_RELEASE``) and
a fake ``dpkg`` first on PATH; nothing here installs anything (the real install
runs in `make pi-rehearsal`, in an arm64 root). The refusals past the root check
need root, as CI runs; elsewhere they are skipped.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import socket
import stat
import subprocess
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "deploy" / "install-pi.sh"
def install_lock(tmp_path: Path) -> Path:
    """The install lock of the test whose folder is ``tmp_path`` (``INSTALL_PI_LOCK``): tests run side by side never
    take each other's install for one running on the Pi."""
    return tmp_path / "install.lock"
BOOKWORM = 'PRETTY_NAME="Debian GNU/Linux 12 (bookworm)"\nNAME="Debian GNU/Linux"\nVERSION_ID="12"\nID=debian\n'
BULLSEYE = 'PRETTY_NAME="Raspbian GNU/Linux 11 (bullseye)"\nNAME="Raspbian GNU/Linux"\nVERSION_ID="11"\nID=raspbian\n'
as_root = pytest.mark.skipif(os.geteuid() != 0, reason="these refusals come after the root check (CI runs as root)")


@pytest.fixture
def fake(tmp_path):
    """A fake os-release and a fake dpkg that names the architecture; returns run(args, os_release=, arch=)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()

    def run(*args: str, os_release: str = BOOKWORM, arch: str = "arm64", prefix: Path | None = None, script: Path = SCRIPT):
        release = tmp_path / "os-release"
        release.write_text(os_release, encoding="utf-8")
        dpkg = bin_dir / "dpkg"
        dpkg.write_text(f'#!/bin/sh\n[ "$1" = --print-architecture ] && {{ echo {arch}; exit 0; }}\nexit 3\n', encoding="utf-8")
        dpkg.chmod(0o755)
        env = {"PATH": f"{bin_dir}:/usr/sbin:/usr/bin:/sbin:/bin", "INSTALL_PI_OS_RELEASE": str(release), "LANG": "C.UTF-8",
               "INSTALL_PI_LOCK": str(install_lock(tmp_path))}
        argv = ["bash", str(script), *args]
        if prefix is not None:
            argv += ["--prefix", str(prefix), "--instance", str(prefix / "instance")]
        return subprocess.run(argv, capture_output=True, text=True, env=env, timeout=120, stdin=subprocess.DEVNULL)

    return run


def one_sentence(out: subprocess.CompletedProcess) -> str:
    lines = [line for line in out.stderr.splitlines() if line.strip()]
    assert out.returncode == 1, out.stdout + out.stderr
    assert len(lines) == 1 and lines[0].startswith("install-pi: "), lines
    return lines[0]


def test_bullseye_is_refused_with_what_to_do(fake):
    said = one_sentence(fake(os_release=BULLSEYE))
    assert "Bookworm (12) or later is needed, and this is Raspbian GNU/Linux 11 (bullseye)" in said and "Raspberry Pi Imager" in said


def test_a_version_that_is_no_number_counts_as_too_old(fake):
    said = one_sentence(fake(os_release=BOOKWORM.replace('VERSION_ID="12"', 'VERSION_ID="n/a"')))
    assert "Bookworm (12) or later is needed" in said


def test_another_system_is_named(fake):
    said = one_sentence(fake(os_release='PRETTY_NAME="Ubuntu 24.04 LTS"\nID=ubuntu\nVERSION_ID="24.04"\n'))
    assert "for Raspberry Pi OS (Debian), not Ubuntu 24.04 LTS" in said


def test_a_missing_os_release_is_said(fake, tmp_path):
    out = subprocess.run(["bash", str(SCRIPT)], capture_output=True, text=True, env={"PATH": "/usr/bin:/bin", "INSTALL_PI_OS_RELEASE": str(tmp_path / "none")})
    assert "cannot tell which system this is" in one_sentence(out)


@pytest.mark.parametrize("arch", ["armhf", "armel", "i386"])
def test_a_32_bit_system_is_refused_even_on_a_64_bit_kernel(fake, arch):
    said = one_sentence(fake(arch=arch))
    assert f"this is a 32-bit system ({arch})" in said and "Raspberry Pi OS (64-bit)" in said


@pytest.mark.parametrize("port", ["0", "70000"])
def test_a_port_out_of_range_is_refused(fake, port):
    assert f"--port must be between 1 and 65535, not {port}" in one_sentence(fake("--port", port))


@pytest.mark.parametrize(("option", "place"), [("--instance", "/home/pi/bluff"), ("--prefix", "/root/eb"), ("--instance", "/run/user/1000/eb")])
def test_a_folder_the_service_may_not_enter_is_refused_before_anything_is_done(fake, option, place):
    """The unit has ProtectHome=yes: installed under /home the service could never start, and the script said Done."""
    said = one_sentence(fake(option, place))
    assert f"the companion cannot be kept in {place}: the service may not enter home folders" in said


@pytest.mark.parametrize("name", ["table pi", "-pi", "pi-", "pi_1", "ü-pi", "x" * 64])
def test_a_hostname_the_network_cannot_announce_is_refused_before_anything_is_done(fake, name):
    """hostnamectl would have changed it into another name, and the address said at the end was not the Pi's."""
    said = one_sentence(fake("--hostname", name))
    assert said.startswith("install-pi: --hostname must be ") and ("letters, digits and hyphens" in said or "63 characters" in said), said


def test_a_folder_that_is_not_a_whole_path_is_refused(fake):
    assert "--prefix and --instance must be whole paths starting with /, not 'bluff'" in one_sentence(fake("--instance", "bluff"))


def test_without_sudo_it_says_to_use_sudo(fake):
    if os.geteuid() == 0:
        # play an owner without sudo: a copy of the script run as nobody
        folder = Path(tempfile.mkdtemp(prefix="install-pi-"))
        try:
            (folder / "deploy").mkdir()
            shutil.copy2(SCRIPT, folder / "deploy" / "install-pi.sh")
            for p in (folder, folder / "deploy"):
                p.chmod(0o755)
            (folder / "deploy" / "install-pi.sh").chmod(stat.S_IRWXU | stat.S_IRGRP | stat.S_IXGRP | stat.S_IROTH | stat.S_IXOTH)
            release = folder / "os-release"
            release.write_text(BOOKWORM, encoding="utf-8")
            release.chmod(0o644)
            dpkg = folder / "dpkg"
            dpkg.write_text("#!/bin/sh\necho arm64\n", encoding="utf-8")
            dpkg.chmod(0o755)
            out = subprocess.run(["runuser", "-u", "nobody", "--", "bash", str(folder / "deploy" / "install-pi.sh")], capture_output=True, text=True,
                                 env={"PATH": f"{folder}:/usr/sbin:/usr/bin:/sbin:/bin", "INSTALL_PI_OS_RELEASE": str(release)})
        finally:
            shutil.rmtree(folder)
    else:
        out = fake(arch="arm64")
    assert "run me as root: sudo" in one_sentence(out)


@as_root
def test_a_second_install_while_one_runs_is_refused(fake, tmp_path):
    with open(install_lock(tmp_path), "w") as held:
        fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)
        said = one_sentence(fake(prefix=tmp_path / "opt"))
    assert "another install of the companion is running right now" in said
    assert not (tmp_path / "opt").exists()


@as_root
def test_a_downgrade_is_refused_and_says_how_to_go_back_on_purpose(fake, tmp_path):
    prefix = tmp_path / "opt"
    python = prefix / "venv" / "bin" / "python"
    python.parent.mkdir(parents=True)
    python.write_text("#!/bin/sh\necho 99.0.0\n", encoding="utf-8")  # the installed version, as the venv's python tells it
    python.chmod(0o755)
    said = one_sentence(fake(prefix=prefix))
    assert "older than the installed 99.0.0, which stays installed" in said and "--allow-downgrade" in said
    assert sorted(p.name for p in prefix.iterdir()) == ["venv"]


@as_root
def test_a_port_another_program_holds_is_refused(fake, tmp_path):
    with socket.socket() as other:
        other.bind(("127.0.0.1", 0))
        other.listen()
        port = other.getsockname()[1]
        said = one_sentence(fake("--port", str(port), prefix=tmp_path / "opt"))
    assert f"port {port} is already used by another program on this Pi" in said and "--port N" in said
    assert not (tmp_path / "opt").exists()


def test_the_help_names_every_option_the_script_takes():
    out = subprocess.run(["bash", str(SCRIPT), "--help"], capture_output=True, text=True)
    text = SCRIPT.read_text(encoding="utf-8")
    taken = {part.split(")")[0].strip() for part in text.split("case \"$1\" in", 1)[1].split("esac", 1)[0].split("\n") if part.strip().startswith("--")}
    assert out.returncode == 0 and taken
    for option in taken:
        assert option in out.stdout, option


@pytest.mark.skipif(shutil.which("shellcheck") is None, reason="shellcheck is not installed (make system-deps installs it)")
@pytest.mark.parametrize("script", ["deploy/pi/root.sh", "deploy/instance.sh"])
def test_the_new_shell_scripts_pass_shellcheck(script):
    out = subprocess.run(["shellcheck", "-x", "--severity=style", str(ROOT / script)], capture_output=True, text=True)
    assert out.returncode == 0, out.stdout + out.stderr


@as_root
def test_a_checkout_without_the_tested_versions_is_refused(fake, tmp_path):
    """The Pi installs numpy, onnxruntime and OpenCV at the versions pi-check read equal on arm64; a checkout that
    lacks that list is refused before anything is installed, not installed with whatever PyPI has."""
    checkout = tmp_path / "checkout"
    (checkout / "deploy").mkdir(parents=True)
    for name in ("pyproject.toml", "deploy/install-pi.sh", "deploy/elephants-bluff.service"):
        shutil.copy2(ROOT / name, checkout / name)
    said = one_sentence(fake(prefix=tmp_path / "opt", script=checkout / "deploy" / "install-pi.sh"))
    assert "tested-versions.txt is missing" in said and "git pull" in said
    assert not (tmp_path / "opt").exists()


@as_root
def test_a_checkout_without_the_locked_versions_is_refused(fake, tmp_path):
    """Every other dependency is installed at the version CI tested; a checkout that lacks that list is refused
    before anything is installed."""
    checkout = tmp_path / "checkout"
    (checkout / "deploy" / "pi").mkdir(parents=True)
    for name in ("pyproject.toml", "deploy/install-pi.sh", "deploy/elephants-bluff.service", "deploy/pi/tested-versions.txt"):
        shutil.copy2(ROOT / name, checkout / name)
    said = one_sentence(fake(prefix=tmp_path / "opt", script=checkout / "deploy" / "install-pi.sh"))
    assert "locked-versions.txt is missing" in said and "git pull" in said
    assert not (tmp_path / "opt").exists()
