"""install-pi.sh run whole, as an owner's first install and update, with the system played in a sandbox.

The script runs in its own mount namespace (``unshare -m``): ``/etc`` and ``/var``
are overlays whose writes land in the test's folder, and ``/opt`` is an empty
folder of the test's, so the unit, the remembered options, the users it makes
(real ``useradd``), the venvs and the instance folders never touch this machine.
(``/root`` is an overlay too, opened to the service user there only: the project's
python may live under it). apt, dpkg, systemctl and the venv are fakes first on PATH: the fake ``python3 -m
venv`` makes a venv whose ``pip install`` only records the folder it was asked to
build and the files in it (the real install runs in `make pi-rehearsal`); its
python is the project's own. Needs root and overlay mounts, as CI has.
"""

from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "deploy" / "install-pi.sh"
BOOKWORM = 'PRETTY_NAME="Debian GNU/Linux 12 (bookworm)"\nNAME="Debian GNU/Linux"\nVERSION_ID="12"\nID=debian\n'
PROJECT_PYTHON = Path(sys.executable)


def _sandbox_works() -> bool:
    if os.geteuid() != 0 or shutil.which("unshare") is None:
        return False
    probe = subprocess.run(["unshare", "-m", "--propagation", "private", "true"], capture_output=True)
    return probe.returncode == 0


pytestmark = pytest.mark.skipif(not _sandbox_works(), reason="needs root and mount namespaces (unshare -m), as CI has")

FAKE_PYTHON3 = """#!/bin/bash
# python3 -m venv DIR: a fake venv (pip records, python is the project's); anything else: the real python3.
if [ "${1:-}" = -m ] && [ "${2:-}" = venv ]; then
  for last; do :; done
  mkdir -p "$last/bin"
  cp @FAKES@/venv-python "$last/bin/python"
  cp @FAKES@/venv-pip "$last/bin/pip"
  cp @FAKES@/venv-elephants-bluff "$last/bin/elephants-bluff"
  exit 0
fi
exec /usr/bin/python3 "$@"
"""
VENV_PYTHON = """#!/bin/bash
# the import check of picamera2, cv2 and the rest passes; everything else runs in the project's python
case "${1:-} ${2:-}" in
  "-c import importlib"*) ;;
  "-c import "*) exit 0 ;;
esac
exec @PYTHON@ "$@"
"""
VENV_PIP = """#!/bin/bash
# pip install ... DIR[pi]: records DIR and the files in it, as pip would build them into the wheel
[ "${1:-}" = install ] || exit 0
for last; do :; done
src="${last%\\[pi\\]}"
echo "$src" >@RECORD@/pip-src
(cd "$src" && find . -type f | sort) >@RECORD@/pip-files
"""


COMPANION = """#!/usr/bin/python3
# The restarted companion's stand-in: answers /api/health on the port as told (PORT MODE), for 20 s.
import http.server, json, sys, threading
port, mode = sys.argv[1].split()
status, body = (200, {"status": "ok", "version": "0.1.0"}) if mode == "ok" else (503, {"status": "safe_mode", "headline": "A setting in the settings file is wrong", "todo": "Fix it in that file, then restart the companion."})

class Health(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):
        pass

server = http.server.HTTPServer(("127.0.0.1", int(port)), Health)
threading.Timer(20, server.shutdown).start()
server.serve_forever()
"""


class Pi:
    """One sandboxed system that keeps its state (unit, options, users, venvs, instances) across runs."""

    def __init__(self, base: Path) -> None:
        self.base = base
        self.record = base / "record"
        self.fakes = base / "fakes"
        self.bin = base / "bin"
        self.opt = base / "opt"
        # /root too: the project's python may live there (pyenv), and the service user runs it to write the settings
        self.layers = {name: (base / f"{name}-upper", base / f"{name}-work") for name in ("etc", "var", "root")}
        for folder in (self.record, self.fakes, self.bin, self.opt, *(p for pair in self.layers.values() for p in pair)):
            folder.mkdir(parents=True)
        self.os_release = base / "os-release"
        self.os_release.write_text(BOOKWORM, encoding="utf-8")
        subs = {"@FAKES@": str(self.fakes), "@PYTHON@": str(PROJECT_PYTHON), "@RECORD@": str(self.record)}

        def fake(path: Path, text: str) -> None:
            for key, value in subs.items():
                text = text.replace(key, value)
            path.write_text(text, encoding="utf-8")
            path.chmod(0o755)

        fake(self.bin / "python3", FAKE_PYTHON3)
        fake(self.bin / "dpkg", '#!/bin/sh\n[ "$1" = --print-architecture ] && { echo arm64; exit 0; }\nexit 3\n')
        fake(self.bin / "apt-get", "#!/bin/sh\nexit 0\n")
        fake(self.bin / "apt-cache", "#!/bin/sh\nexit 0\n")
        # the Pi's name: hostnamectl set-hostname NAME keeps it, hostname says it (first: tablepi)
        (self.record / "hostname").write_text("tablepi\n", encoding="utf-8")
        fake(self.bin / "hostnamectl", f'#!/bin/sh\n[ "$1" = set-hostname ] && echo "$2" >{self.record}/hostname\nexit 0\n')
        fake(self.bin / "hostname", f"#!/bin/sh\ncat {self.record}/hostname\n")
        # systemctl restart starts the companion's stand-in where a test says how it answers (record/answer); not
        # holding the script's install lock (fd 9), as systemd's own start never does
        fake(self.bin / "systemctl", f'#!/bin/sh\necho "$*" >>{self.record}/systemctl\n'
                                     f'if [ "$1" = restart ] && [ -f {self.record}/answer ]; then\n'
                                     f'  nohup /usr/bin/python3 {self.fakes}/companion.py "$(cat {self.record}/answer)" >/dev/null 2>&1 9>&- &\n'
                                     'fi\nexit 0\n')
        fake(self.fakes / "companion.py", COMPANION)
        fake(self.fakes / "venv-python", VENV_PYTHON)
        fake(self.fakes / "venv-pip", VENV_PIP)
        fake(self.fakes / "venv-elephants-bluff", "#!/bin/sh\necho 0.1.0\n")

    def install(self, *args: str, checkout: Path = ROOT, systemd: bool = False) -> subprocess.CompletedProcess:
        mounts = [f"mount -t overlay overlay -o lowerdir=/{name},upperdir={upper},workdir={work} /{name}" for name, (upper, work) in self.layers.items()]
        runner = " && ".join([*mounts, "chmod 0755 /root", f"mount --bind {self.opt} /opt", 'exec bash "$0" "$@"'])
        env = {"PATH": f"{self.bin}:/usr/sbin:/usr/bin:/sbin:/bin", "INSTALL_PI_OS_RELEASE": str(self.os_release), "LANG": "C.UTF-8", "HOME": str(self.base),
               # a running systemd played (a folder that is there, or not), and a short wait for the companion's answer
               "INSTALL_PI_SYSTEMD_DIR": str(self.base if systemd else self.base / "no-systemd"), "INSTALL_PI_WAIT_S": "4",
               "INSTALL_PI_LOCK": str(self.base / "install.lock")}
        return subprocess.run(["unshare", "-m", "--propagation", "private", "bash", "-c", runner, str(checkout / "deploy" / "install-pi.sh"), *args],
                              capture_output=True, text=True, env=env, timeout=300, stdin=subprocess.DEVNULL)

    def etc(self, path: str) -> Path:
        """A file the script wrote under /etc, as it lies in the overlay's upper layer."""
        return self.layers["etc"][0] / path

    def var(self, path: str) -> Path:
        return self.layers["var"][0] / path

    def unit(self) -> str:
        return self.etc("systemd/system/elephants-bluff.service").read_text(encoding="utf-8")

    def built_files(self) -> list[str]:
        return (self.record / "pip-files").read_text(encoding="utf-8").split()


@pytest.fixture
def pi(tmp_path):
    return Pi(tmp_path)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def done(out: subprocess.CompletedProcess) -> str:
    assert out.returncode == 0 and "Done." in out.stdout, out.stdout + out.stderr
    return out.stdout


def exec_start(unit: str) -> str:
    return re.search(r"^ExecStart=(.*)$", unit, re.M).group(1)


# --- finding 1: only the project's current files ship -----------------------------------------

def checkout_with_leftovers(folder: Path, *, git: bool) -> Path:
    """A checkout of the project's install files and one model, with what setuptools left from an earlier build: a
    ``build/lib`` holding a model the project has since deleted (shipped as package data beside the current one, it was
    the one the reader chose while models were picked by name; ``models/shipped.json`` names the one now) and an
    egg-info naming it."""
    for name in ("pyproject.toml", "deploy/install-pi.sh", "deploy/ask_health.py", "deploy/elephants-bluff.service", "deploy/pi/tested-versions.txt", "deploy/locked-versions.txt"):
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, folder / name)
    (folder / "models").mkdir()
    (folder / "models" / "dice-detector-4d3d2c1a8e08.onnx").write_bytes(b"the model this version ships")
    if git:
        env = {"PATH": "/usr/bin:/bin", "HOME": str(folder), "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t"}
        for argv in (["init", "-q"], ["add", "."], ["commit", "-q", "-m", "the project"]):
            subprocess.run(["git", "-C", str(folder), *argv], check=True, env=env, capture_output=True)
        (folder / "models" / "untracked-note.md").write_text("an owner's own file, not the project's", encoding="utf-8")
    (folder / "build" / "lib" / "models").mkdir(parents=True)
    (folder / "build" / "lib" / "models" / "dice-detector-b3a63387b30e.onnx").write_bytes(b"the withdrawn model")
    (folder / "elephants_bluff.egg-info").mkdir()
    (folder / "elephants_bluff.egg-info" / "SOURCES.txt").write_text("models/dice-detector-b3a63387b30e.onnx\n", encoding="utf-8")
    return folder


@pytest.mark.parametrize(("git", "owner"), [(True, None), (True, "nobody"), (False, None)], ids=["git-checkout", "git-checkout-of-the-owner", "unpacked-archive"])
def test_the_companion_is_built_from_a_clean_copy_so_a_withdrawn_model_never_ships_again(pi, tmp_path, git, owner):
    checkout = checkout_with_leftovers(tmp_path / "elephants-bluff", git=git)
    if owner:  # the owner's clone, run with sudo: git refuses a repository of another user unless told it is safe
        subprocess.run(["chown", "-R", owner, str(checkout)], check=True)
    done(pi.install("--no-start", "--port", str(free_port()), checkout=checkout))
    built_from = Path((pi.record / "pip-src").read_text(encoding="utf-8").strip())
    files = pi.built_files()
    assert built_from != checkout, "pip built in the owner's checkout, where setuptools keeps build/"
    assert "./models/dice-detector-4d3d2c1a8e08.onnx" in files and "./pyproject.toml" in files, files
    assert not [f for f in files if f.startswith("./build/") or ".egg-info" in f], files
    if git:
        assert "./models/untracked-note.md" not in files, "an untracked file went into the wheel"
    assert not built_from.exists(), "the copy built from was left behind"
    assert (checkout / "build" / "lib" / "models" / "dice-detector-b3a63387b30e.onnx").exists(), "the owner's checkout was changed"


# --- finding 2: an update keeps the install's options ------------------------------------------

def test_an_update_with_no_options_keeps_the_user_folders_and_port_of_the_install(pi):
    port, other_port = free_port(), free_port()
    first = done(pi.install("--no-start", "--user", "bob", "--prefix", "/opt/eb", "--instance", "/var/lib/eb", "--port", str(port)))
    assert "Reusing" not in first
    pin = re.search(r'^pin = "(\d+)"$', pi.var("lib/eb/config.toml").read_text(encoding="utf-8"), re.M).group(1)

    update = done(pi.install("--no-start"))  # git pull && sudo deploy/install-pi.sh, as the README says
    unit = pi.unit()
    assert exec_start(unit) == f"/opt/eb/venv/bin/elephants-bluff serve --host 0.0.0.0 --port {port} --instance /var/lib/eb"
    assert re.search(r"^User=bob$", unit, re.M) and re.search(r"^WorkingDirectory=/var/lib/eb$", unit, re.M)
    said = next(line for line in update.splitlines() if "Reusing the options" in line)
    for option in ("--user bob", "--prefix /opt/eb", "--instance /var/lib/eb", f"--port {port}"):
        assert option in said, said
    assert "/etc/elephants-bluff/install.conf" in said
    assert not pi.var("lib/elephants-bluff").exists(), "a second instance with a new PIN was made"
    assert not (pi.opt / "elephants-bluff").exists(), "a second tree was built under /opt/elephants-bluff"
    assert not re.search(r"^elephants:", pi.etc("passwd").read_text(encoding="utf-8"), re.M), "the user elephants was made"
    assert f"Table PIN: {pin}" in update and f":{port}" in update

    moved = done(pi.install("--no-start", "--port", str(other_port)))  # an option given again wins, and is remembered
    assert exec_start(pi.unit()) == f"/opt/eb/venv/bin/elephants-bluff serve --host 0.0.0.0 --port {other_port} --instance /var/lib/eb"
    assert f"--port {port}" not in moved and "--instance /var/lib/eb" in moved
    assert f"port={other_port}\n" in pi.etc("elephants-bluff/install.conf").read_text(encoding="utf-8")


def test_an_update_that_renames_the_pi_names_it_on_etc_hosts_and_to_avahi_and_keeps_the_settings(pi):
    """`hostnamectl` alone left Raspberry Pi OS's `127.0.1.1 raspberrypi` line, so every later sudo said "unable to
    resolve host", and avahi went on announcing the old .local name until a reboot. (The page answers to the Pi's own
    name as it is when the companion starts, which the install's restart makes the new one.)"""
    port = free_port()
    done(pi.install("--no-start", "--instance", "/var/lib/eb", "--port", str(port)))
    config = pi.var("lib/eb/config.toml")
    before = config.read_bytes()
    pi.etc("hosts").write_text("127.0.0.1\tlocalhost\n::1\t\tlocalhost ip6-localhost\n127.0.1.1\traspberrypi\n", encoding="utf-8")  # as the Pi's image has it
    renamed = done(pi.install("--no-start", "--hostname", "kitchen", systemd=True))
    assert "Naming this Pi kitchen (reachable as kitchen.local)" in renamed and f"http://kitchen.local:{port}" in renamed
    # not restarted, the running companion answers to kitchen.local only once it is: said, with the command
    assert "Not restarted (--no-start): the companion running now keeps its version and the Pi's name until: sudo systemctl restart elephants-bluff" in renamed
    hosts = pi.etc("hosts").read_text(encoding="utf-8").splitlines()
    assert hosts == ["127.0.0.1\tlocalhost", "::1\t\tlocalhost ip6-localhost", "127.0.1.1\tkitchen"], hosts
    assert "try-restart avahi-daemon.service" in (pi.record / "systemctl").read_text(encoding="utf-8").splitlines()
    assert config.read_bytes() == before, "an update changed the owner's settings"


def test_an_install_from_before_the_options_file_keeps_what_its_unit_says(pi):
    """Owners who installed with options before the script remembered them: the unit it wrote then names them."""
    port = free_port()
    first = done(pi.install("--no-start", "--user", "bob", "--prefix", "/opt/eb", "--instance", "/var/lib/eb", "--port", str(port)))
    assert first
    pi.etc("elephants-bluff/install.conf").unlink()
    update = done(pi.install("--no-start"))
    assert exec_start(pi.unit()) == f"/opt/eb/venv/bin/elephants-bluff serve --host 0.0.0.0 --port {port} --instance /var/lib/eb"
    assert re.search(r"^User=bob$", pi.unit(), re.M)
    assert "Reusing the options of the install before (/etc/systemd/system/elephants-bluff.service)" in update
    assert not pi.var("lib/elephants-bluff").exists()


# --- finding 4: an update over the companion in safe mode -------------------------------------

def test_an_update_is_allowed_while_the_companion_is_in_safe_mode(pi, tmp_path):
    """Safe mode answers /api/health with 503: the port's holder is still our companion, and an update is one way out."""
    from bench.live_server import LiveServer

    instance = tmp_path / "safe-instance"
    instance.mkdir()
    (instance / "config.toml").write_text("[game]\npath_length = 99\n", encoding="utf-8")
    with LiveServer(instance, pin="4321", simulate=False) as server:
        assert server.get("/api/health").status_code == 503
        out = pi.install("--no-start", "--prefix", "/opt/eb", "--instance", "/var/lib/eb", "--port", str(server.port))
    assert "used by another program" not in out.stderr
    assert f"The companion on port {server.port} is in safe mode" in done(out)


def test_a_503_from_another_program_is_still_another_program(pi):
    import http.server
    import threading

    class Busy(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 - the stdlib's name
            body = b'{"status": "down", "version": "2.0"}'
            self.send_response(503)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    with http.server.ThreadingHTTPServer(("127.0.0.1", 0), Busy) as other:
        threading.Thread(target=other.serve_forever, daemon=True).start()
        try:
            out = pi.install("--no-start", "--prefix", "/opt/eb", "--instance", "/var/lib/eb", "--port", str(other.server_address[1]))
        finally:
            other.shutdown()
    assert out.returncode == 1 and "is already used by another program" in out.stderr
    assert not (pi.opt / "eb").exists()


# --- finding 5: the unit does not restart a start that needs a person -------------------------

def test_the_unit_does_not_restart_exit_status_2():
    """serve exits 2 where a restart cannot help (no PIN at a first start, another companion on the instance, the
    instance a file): under Restart=on-failure without this it started again every 3 s, forever."""
    unit = (ROOT / "deploy" / "elephants-bluff.service").read_text(encoding="utf-8")
    service = unit.split("[Service]", 1)[1].split("\n[", 1)[0]
    assert re.search(r"^Restart=on-failure$", service, re.M)
    assert re.search(r"^RestartPreventExitStatus=2$", service, re.M), service


def test_the_installed_unit_keeps_restart_prevent_exit_status(pi):
    done(pi.install("--no-start", "--prefix", "/opt/eb", "--instance", "/var/lib/eb", "--port", str(free_port())))
    assert re.search(r"^RestartPreventExitStatus=2$", pi.unit(), re.M)


# --- the update says Done. only once the companion answers (appliance audit, finding 10) ----------

@pytest.mark.parametrize("answer", ["ok", "safe_mode", None], ids=["answers", "safe-mode", "silent"])
def test_done_is_said_only_once_the_restarted_companion_answers(pi, answer):
    """An update whose new version crashed at start, or came up in safe mode, printed "Done." all the same."""
    port = free_port()
    assert pi.install("--prefix", "/opt/eb", "--instance", "/var/lib/eb", "--port", str(port), "--no-start").returncode == 0
    if answer is not None:
        (pi.record / "answer").write_text(f"{port} {answer}", encoding="utf-8")
    out = pi.install(systemd=True)  # the update, with the options remembered; systemd running restarts the service
    assert "restart elephants-bluff.service" in (pi.record / "systemctl").read_text(encoding="utf-8")
    if answer == "ok":
        assert "The companion 0.1.0 answers" in done(out)
        return
    assert out.returncode == 1 and "Done." not in out.stdout, out.stdout + out.stderr
    said = out.stderr.strip().splitlines()[-1]
    if answer == "safe_mode":
        assert "started in safe mode: A setting in the settings file is wrong Fix it in that file" in said
    else:
        assert f"did not answer on port {port} within 4 s; see why with: journalctl -u elephants-bluff -n 50" in said
    assert re.search(r"to go back to the version before: sudo ln -sfn /opt/eb/venvs/\S+ /opt/eb/venv && sudo systemctl restart elephants-bluff", said), said


def test_an_update_in_the_same_second_as_the_install_builds_a_new_folder_and_keeps_the_one_before(pi):
    """The venv folders were named by the second: an update run within the second of the install (the fake pip takes
    under one) built into the folder the companion runs from and, taking it for the new one, named no version to go
    back to. The clock here says the same second to every run."""
    (pi.bin / "date").write_text("#!/bin/sh\necho 20261207-153000\n", encoding="utf-8")
    (pi.bin / "date").chmod(0o755)
    done(pi.install("--prefix", "/opt/eb", "--instance", "/var/lib/eb", "--port", str(free_port()), "--no-start"))
    first = os.readlink(pi.opt / "eb" / "venv")
    out = pi.install(systemd=True)  # nothing answers on the port: the script says how to go back
    second = os.readlink(pi.opt / "eb" / "venv")
    assert second != first, "the update built into the folder the companion ran from"
    venvs = pi.opt / "eb" / "venvs"
    assert (venvs / Path(second).name / "bin" / "python").exists()
    assert (venvs / Path(first).name / "bin" / "python").exists(), "the version before was dropped"
    assert f"to go back to the version before: sudo ln -sfn {first} /opt/eb/venv" in out.stderr, out.stdout + out.stderr


def test_an_update_after_going_back_by_hand_keeps_the_version_it_goes_back_from_to(pi):
    """The version before is the one running, whatever its age: after an owner went back by hand (the link set to the
    older folder, as the failed update said), the next update kept the two newest folders, deleted the running one, and
    its own rollback hint named a folder that was gone."""
    port = str(free_port())
    done(pi.install("--prefix", "/opt/eb", "--instance", "/var/lib/eb", "--port", port, "--no-start"))
    first = os.readlink(pi.opt / "eb" / "venv")
    done(pi.install("--no-start"))
    second = os.readlink(pi.opt / "eb" / "venv")
    assert second != first
    (pi.opt / "eb" / "venv").unlink()  # sudo ln -sfn <first> /opt/eb/venv: back to the first version
    (pi.opt / "eb" / "venv").symlink_to(first)
    out = pi.install(systemd=True)  # nothing answers: the script says how to go back
    third = os.readlink(pi.opt / "eb" / "venv")
    venvs = pi.opt / "eb" / "venvs"
    assert third not in (first, second)
    assert (venvs / Path(first).name / "bin" / "python").exists(), "the version running before the update was deleted"
    assert f"to go back to the version before: sudo ln -sfn {first} /opt/eb/venv" in out.stderr, out.stdout + out.stderr
    assert sorted(p.name for p in venvs.iterdir()) == sorted([Path(first).name, Path(third).name]), "an older folder was kept"


def test_an_install_from_before_the_venvs_folder_is_kept_as_the_version_before(pi):
    """An install whose /opt/eb/venv is a folder, not a link (made before the venvs/ folder), is moved into venvs/
    and kept as the version to go back to."""
    legacy = pi.opt / "eb" / "venv" / "bin"
    legacy.mkdir(parents=True)
    shutil.copy2(pi.fakes / "venv-python", legacy / "python")
    shutil.copy2(pi.fakes / "venv-elephants-bluff", legacy / "elephants-bluff")
    out = pi.install("--prefix", "/opt/eb", "--instance", "/var/lib/eb", "--port", str(free_port()), systemd=True)
    assert out.returncode == 1, out.stdout + out.stderr  # nothing answers: the script says how to go back
    before = re.search(r"sudo ln -sfn (/opt/eb/venvs/previous-\S+) /opt/eb/venv", out.stderr)
    assert before, out.stderr
    venvs = pi.opt / "eb" / "venvs"
    assert (venvs / Path(before.group(1)).name / "bin" / "elephants-bluff").exists()
    assert (pi.opt / "eb" / "venv").is_symlink() and os.readlink(pi.opt / "eb" / "venv") != before.group(1)
    assert len(list(venvs.iterdir())) == 2


def test_a_first_install_that_does_not_answer_names_no_version_to_go_back_to(pi):
    """There is none: the hint named the link itself (``readlink -f`` of a missing path prints it)."""
    out = pi.install("--prefix", "/opt/eb", "--instance", "/var/lib/eb", "--port", str(free_port()), systemd=True)
    said = out.stderr.strip().splitlines()[-1]
    assert out.returncode == 1 and "did not answer on port" in said, out.stdout + out.stderr
    assert "go back" not in said, said
