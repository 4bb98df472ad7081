"""`make pi-rehearsal`: the Pi appliance rehearsed end to end in an arm64 Debian root.

On a fresh copy of the cached Debian Bookworm arm64 root (``deploy/pi/root.sh``),
under qemu-user, as deploy/README.md tells an owner:

1. the install script's refusals, each one sentence with nothing installed: a
   Bullseye system (a fake os-release), a 32-bit system, the service as root, no
   sudo, a port another program holds, no network, and a second install while
   one runs;
2. ``deploy/install-pi.sh --no-start --skip-pi-only-packages`` for real (the
   Raspberry Pi archive's packages are the only ones skipped; Debian's are
   installed), timed, with no package built from source;
3. ``systemd-analyze verify`` on the installed unit;
4. the unit's ``ExecStart`` started as its user with its environment (the camera
   set to the files backend with a saved frame, as the Pi has no camera here),
   then from outside over 127.0.0.1: ``/api/health``, the page and its assets, a
   whole game through the HTTP API whose first Bluff the real reader reads;
5. the update: a second install keeps the PIN, the settings, the finished game
   and the saved frames byte-identical and the service comes back with the PIN;
   a pip failure and a downgrade leave the running version alone and say so.

Prints ``pi-rehearsal: N of M steps passed`` last, exits 1 on any failure, and
writes the steps and times to ``docs/pi-rehearsal-latest.json``.

    sudo python3 deploy/pi/rehearsal.py [--keep] [--output FILE]
"""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import os
import re
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
import zipfile
from pathlib import Path
from typing import Any, Callable

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import (CACHE, LOCKED_VERSIONS, PI5_PAGE_SIZE, REPO, TESTED_VERSIONS, Chroot, PiError, ensure_root, free_port,  # noqa: E402
                    ids_in, aarch64_download_argv, libraries_misfit_for_pages, pinned_versions, utc_now, write_result)

OUTPUT = REPO / "docs" / "pi-rehearsal-latest.json"
WORK = Path(os.environ.get("PI_REHEARSAL_WORK", "/var/tmp/elephants-bluff-rehearsal"))
PIP_CACHE = CACHE / "pip-cache-aarch64"
CHECKOUT = "/home/pi/elephants-bluff"
PREFIX, INSTANCE = "/opt/elephants-bluff", "/var/lib/elephants-bluff"
UNIT = "/etc/systemd/system/elephants-bluff.service"
LOCK = "/run/lock/elephants-bluff-install.lock"
FRAME = REPO / "tests" / "conformance" / "frames" / "render-00-plain.jpg"
FRAME_DIR = "/srv/rehearsal-camera"
#: Raspberry Pi OS's python3-picamera2 brings Debian's numpy 1.24 and the archive's simplejpeg 1.8 built for it; the
#: archive is not reachable here, so simplejpeg's last release built for numpy 1 (its wheel says numpy<2) stands in,
#: its metadata given the archive's version (pip counts the system's packages as installed: one that meets the
#: project's requirement is kept unless the install says otherwise).
PI_OS_SIMPLEJPEG, PI_OS_SIMPLEJPEG_VERSION = "simplejpeg==1.7.3", "1.8.2"
SYSTEM_SITE = "/usr/lib/python3/dist-packages"


def lock_held(path: Path) -> bool:
    """Whether some process holds a lock on ``path``, without touching the lock."""
    try:
        inode = path.stat().st_ino
    except FileNotFoundError:
        return False
    with open("/proc/locks", encoding="utf-8") as locks:
        return any(len(f) > 5 and f[5].rsplit(":", 1)[-1] == str(inode) for f in (line.split() for line in locks))


class StepFailed(Exception):
    pass


def _canonical(name: str) -> str:
    """A distribution's name as pip compares it (PEP 503): ``Flask_Babel`` and ``flask-babel`` are one."""
    return re.sub(r"[-_.]+", "-", name).lower()


def check(condition: bool, why: str) -> None:
    if not condition:
        raise StepFailed(why)


class Rehearsal:
    def __init__(self, output: Path, keep: bool) -> None:
        self.output, self.keep = output, keep
        self.steps: list[dict] = []
        self.facts: dict[str, Any] = {}
        self.chroot: Chroot | None = None
        self.service: subprocess.Popen | None = None
        self.port = free_port()
        self.pin = ""
        self.game_id = ""

    # --- bookkeeping ----------------------------------------------------------------------
    def step(self, name: str, fn: Callable[[], str | None], needs: list[str] = ()) -> bool:
        missing = [n for n in needs if not any(s["name"] == n and s["passed"] for s in self.steps)]
        start = time.monotonic()
        if missing:
            passed, detail = False, f"not run: it needs '{missing[0]}', which did not pass"
        else:
            try:
                detail = fn() or ""
                passed = True
            except (StepFailed, PiError, subprocess.SubprocessError, OSError, ValueError, KeyError) as exc:
                passed, detail = False, f"{type(exc).__name__}: {exc}" if not isinstance(exc, StepFailed) else str(exc)
        seconds = round(time.monotonic() - start, 1)
        self.steps.append({"name": name, "passed": passed, "seconds": seconds, "detail": detail})
        print(f"{'ok  ' if passed else 'FAIL'} {name} ({seconds} s){': ' + detail if detail else ''}", flush=True)
        return passed

    # --- inside the root --------------------------------------------------------------------
    @property
    def c(self) -> Chroot:
        assert self.chroot is not None
        return self.chroot

    def install(self, *args: str, env: dict[str, str] | None = None, userspec: str | None = None,
                wrap: list[str] = (), timeout: float = 3600) -> subprocess.CompletedProcess:
        argv = ["bash", f"{CHECKOUT}/deploy/install-pi.sh", *args]
        env = {"HOME": "/root", "PIP_CERT": "/etc/ssl/certs/ca-certificates.crt", **(env or {})}
        command = [*wrap, *self.c.command(argv, env=env, userspec=userspec)]
        return subprocess.run(command, capture_output=True, text=True, timeout=timeout)

    def nothing_installed(self) -> None:
        leftovers = [p for p in (PREFIX, INSTANCE, UNIT) if self.c.path(p).exists()]
        if re.search(r"^elephants:", self.c.path("/etc/passwd").read_text(encoding="utf-8"), re.M):
            leftovers.append("the user elephants")
        check(not leftovers, f"a refused install left {', '.join(leftovers)} behind")

    def refusal(self, out: subprocess.CompletedProcess, words: str, prefix: str = "install-pi: ") -> str:
        lines = [line for line in out.stderr.splitlines() if line.strip()]
        check(out.returncode == 1, f"exit {out.returncode}, not 1; stderr: {out.stderr.strip()[-300:]}")
        check(len(lines) == 1 and lines[0].startswith(prefix), f"not one sentence: {lines}")
        check(words in lines[0], f"the sentence does not say {words!r}: {lines[0]}")
        return lines[0]

    def copy_checkout(self, dest: str, version: str | None = None, extra_dependency: str | None = None) -> None:
        """The committed project (``git archive HEAD``: what a clone holds, whatever is being edited here), optionally changed."""
        target = self.c.path(dest)
        shutil.rmtree(target, ignore_errors=True)
        target.mkdir(parents=True)
        archive = subprocess.run(["git", "archive", "--format=tar", "HEAD"], cwd=REPO, capture_output=True, check=True).stdout
        subprocess.run(["tar", "-x", "-C", str(target)], input=archive, check=True)
        pyproject = target / "pyproject.toml"
        text = pyproject.read_text(encoding="utf-8")
        if version:
            text = re.sub(r'(?m)^version = ".*"$', f'version = "{version}"', text, count=1)
        if extra_dependency:
            text = text.replace("dependencies = [\n", f'dependencies = [\n    "{extra_dependency}",\n', 1)
        pyproject.write_text(text, encoding="utf-8")

    def installed_version(self) -> str:
        out = self.c.run([f"{PREFIX}/venv/bin/python", "-c", "import importlib.metadata as m; print(m.version('elephants-bluff'))"], timeout=600)
        return out.stdout.strip()

    def instance_hashes(self) -> dict[str, str]:
        root = self.c.path(INSTANCE)
        return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(root.rglob("*")) if p.is_file()}

    # --- the service -------------------------------------------------------------------------
    def unit(self) -> dict[str, list[str]]:
        fields: dict[str, list[str]] = {}
        for line in self.c.path(UNIT).read_text(encoding="utf-8").splitlines():
            if "=" in line and not line.lstrip().startswith(("#", "[")):
                key, value = line.split("=", 1)
                fields.setdefault(key.strip(), []).append(value.strip())
        return fields

    def start_service(self) -> str:
        """The unit's ExecStart as its User/Group/SupplementaryGroups, in its WorkingDirectory, with its Environment."""
        unit = self.unit()
        user = unit["User"][0]
        uid, gid, _ = ids_in(self.c.root, user)
        wanted = " ".join(unit.get("SupplementaryGroups", [])).split()
        gids = {parts[0]: int(parts[2]) for parts in (line.split(":") for line in self.c.path("/etc/group").read_text(encoding="utf-8").splitlines())}
        check(all(g in gids for g in wanted), f"the root has no group {[g for g in wanted if g not in gids]}")
        groups = [gids[g] for g in wanted]
        env = dict(e.split("=", 1) for e in unit.get("Environment", []))
        exec_start = unit["ExecStart"][0].replace("--host 0.0.0.0", "--host 127.0.0.1")  # only loopback on this machine
        self.c.without_proc()  # onnxruntime under qemu-user crashes with the host's /proc mounted
        command = self.c.command(["sh", "-c", f"cd {unit['WorkingDirectory'][0]} && exec {exec_start}"],
                                 env={**env, "HOME": INSTANCE}, userspec=f"{uid}:{gid}", groups=",".join(map(str, groups)) or None)
        log = open(WORK / "service.log", "ab")
        self.service = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline:
            if self.service.poll() is not None:
                raise StepFailed(f"the service stopped at start (exit {self.service.returncode}); its log: {self.service_log()[-400:]}")
            try:
                status, body = self.http("GET", "/api/health")
                if status == 200:
                    break
            except OSError:
                pass
            time.sleep(2)
        else:
            raise StepFailed("the service did not answer /api/health within 300 s")
        owner = [line.split()[1] for line in Path(f"/proc/{self.service.pid}/status").read_text().splitlines() if line.startswith("Uid:")]
        check(owner and int(owner[0]) == uid and uid != 0, f"the service runs as uid {owner}, not {user} ({uid})")
        return f"{exec_start.split()[0]} as {user} (uid {uid}, groups {','.join(map(str, groups))}), env {sorted(env)}"

    def stop_service(self) -> None:
        if self.service and self.service.poll() is None:
            os.killpg(self.service.pid, signal.SIGTERM)
            try:
                self.service.wait(60)
            except subprocess.TimeoutExpired:
                os.killpg(self.service.pid, signal.SIGKILL)
                self.service.wait(10)
        self.service = None

    def service_log(self) -> str:
        path = WORK / "service.log"
        return path.read_text(encoding="utf-8", errors="replace") if path.exists() else ""

    def http(self, method: str, path: str, body: Any = None, pin: str | None = None, raw: bool = False) -> tuple[int, Any]:
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(f"http://127.0.0.1:{self.port}{path}", data=data, method=method)
        if data is not None:
            request.add_header("Content-Type", "application/json")
        if pin:
            request.add_header("X-Table-Pin", pin)
        try:
            with urllib.request.urlopen(request, timeout=300) as response:
                payload = response.read()
                status = response.status
        except urllib.error.HTTPError as exc:
            payload, status = exc.read(), exc.code
        if raw:
            return status, payload
        try:
            return status, json.loads(payload or b"null")
        except json.JSONDecodeError:
            return status, payload.decode(errors="replace")

    # --- the steps ----------------------------------------------------------------------------
    def prepare(self) -> str:
        base = ensure_root()
        self.chroot = Chroot(base, WORK / "copy").create()
        (WORK / "service.log").unlink(missing_ok=True)
        self.c.with_system_mounts()
        PIP_CACHE.mkdir(parents=True, exist_ok=True)
        self.c.mount("/root/.cache/pip", ["--bind", str(PIP_CACHE)])
        self.copy_checkout(CHECKOUT)
        # This machine reaches PyPI through its network's TLS proxy, whose CA only its own bundle holds:
        # the copy gets that bundle (a Pi on a home network needs nothing of the kind).
        host_bundle = Path("/etc/ssl/certs/ca-certificates.crt")
        if host_bundle.is_file():
            shutil.copy2(host_bundle, self.c.path("/etc/ssl/certs/ca-certificates.crt"))
        camera = self.c.path(FRAME_DIR)
        camera.mkdir(parents=True)
        shutil.copy2(FRAME, camera / FRAME.name)
        head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True, text=True).stdout.strip()
        self.facts["commit"] = head
        return f"a fresh {'overlay' if self.c.overlay else 'copy'} of {base}; commit {head} in {CHECKOUT}"

    def pi_os_camera_helpers(self) -> str:
        """What ``python3-picamera2`` puts in the system site on Raspberry Pi OS, beneath the venv's
        ``--system-site-packages``: Debian's numpy 1 and a simplejpeg built for it (unpacked from its wheel as
        apt unpacks the archive's package)."""
        apt = self.c.run(["sh", "-c", "apt-get update -qq && apt-get install -y -qq --no-install-recommends python3-numpy"],
                         env={"DEBIAN_FRONTEND": "noninteractive"}, timeout=1800)
        check(apt.returncode == 0, f"apt could not install python3-numpy: {(apt.stdout + apt.stderr).strip()[-400:]}")
        wheels = WORK / "pi-os-wheels"
        shutil.rmtree(wheels, ignore_errors=True)
        out = subprocess.run([*aarch64_download_argv(wheels, with_dependencies=False), PI_OS_SIMPLEJPEG], capture_output=True, text=True)
        check(out.returncode == 0, f"pip could not download {PI_OS_SIMPLEJPEG} for aarch64: {out.stderr.strip()[-400:]}")
        (wheel,) = wheels.glob("simplejpeg-*.whl")
        site = self.c.path(SYSTEM_SITE)
        with zipfile.ZipFile(wheel) as z:
            z.extractall(site)
        (info,) = site.glob("simplejpeg-*.dist-info")
        metadata = (info / "METADATA").read_text(encoding="utf-8")
        metadata = re.sub(r"(?m)^Version: .*$", f"Version: {PI_OS_SIMPLEJPEG_VERSION}", metadata, count=1)
        (info / "METADATA").write_text(re.sub(r"(?m)^Requires-Dist: numpy.*$", "Requires-Dist: numpy>=1.19.3", metadata), encoding="utf-8")
        info.rename(site / f"simplejpeg-{PI_OS_SIMPLEJPEG_VERSION}.dist-info")
        probe = "import importlib.metadata as m, numpy, simplejpeg; print(numpy.__version__, m.version('simplejpeg'), simplejpeg.__file__)"
        seen = self.c.run(["python3", "-c", probe], timeout=600)
        check(seen.returncode == 0, f"the system's python cannot import its own simplejpeg: {seen.stderr.strip()[-400:]}")
        return "the system python imports numpy {}, simplejpeg {} ({})".format(*seen.stdout.split())

    def camera_helper_for_the_venv(self) -> str:
        """The install's own simplejpeg (the ``pi`` extra) comes first on the venv's path and loads under its numpy 2;
        the system's, put first instead (what the venv imported before the extra), fails as on a Pi."""
        probe = "import numpy, simplejpeg; print(numpy.__version__, simplejpeg.__file__, len(simplejpeg.encode_jpeg(numpy.zeros((8, 8, 3), numpy.uint8), 85, 'BGR')))"
        python = f"{PREFIX}/venv/bin/python"
        out = self.c.run([python, "-c", probe], timeout=600)
        check(out.returncode == 0, f"the venv cannot load its camera helper: {out.stderr.strip()[-600:]}")
        numpy_version, mine, size = out.stdout.split()
        check(numpy_version.startswith("2.") and mine.startswith(PREFIX), f"the venv's numpy {numpy_version}, its simplejpeg {mine}: not the case this step is for")
        first = self.c.path("/tmp/system-simplejpeg-first")
        first.mkdir(exist_ok=True)
        (first / "simplejpeg").unlink(missing_ok=True)
        (first / "simplejpeg").symlink_to(f"{SYSTEM_SITE}/simplejpeg")
        system = self.c.run([python, "-c", probe], env={"PYTHONPATH": "/tmp/system-simplejpeg-first"}, timeout=600)
        failure = (system.stderr.strip().splitlines() or ["(nothing)"])[-1]
        check(system.returncode != 0 and "numpy.dtype size changed" in failure,
              f"the system's simplejpeg under the venv's numpy did not fail as on a Pi: {system.stdout.strip()} {failure}")
        return f"venv numpy {numpy_version}, its simplejpeg {mine} encodes ({size} bytes); the system's under it: {failure[:90]}"

    def refuse_bullseye(self) -> str:
        fake = self.c.path("/tmp/os-release-bullseye")
        fake.write_text('PRETTY_NAME="Debian GNU/Linux 11 (bullseye)"\nNAME="Debian GNU/Linux"\nVERSION_ID="11"\nID=debian\n', encoding="utf-8")
        out = self.install("--skip-pi-only-packages", env={"INSTALL_PI_OS_RELEASE": "/tmp/os-release-bullseye"})
        said = self.refusal(out, "Bookworm (12) or later is needed")
        self.nothing_installed()
        return said

    def refuse_32_bit(self) -> str:
        fake = self.c.path("/usr/local/bin/dpkg")
        fake.write_text('#!/bin/sh\n[ "$1" = --print-architecture ] && { echo armhf; exit 0; }\nexec /usr/bin/dpkg "$@"\n', encoding="utf-8")
        fake.chmod(0o755)
        try:
            out = self.install("--skip-pi-only-packages")
        finally:
            fake.unlink()
        said = self.refusal(out, "32-bit system (armhf)")
        self.nothing_installed()
        return said

    def refuse_root_user(self) -> str:
        said = self.refusal(self.install("--user", "root", "--skip-pi-only-packages"), "must not run as root")
        self.nothing_installed()
        return said

    def refuse_without_sudo(self) -> str:
        said = self.refusal(self.install("--skip-pi-only-packages", userspec="65534:65534"), "run me as root")
        self.nothing_installed()
        return said

    def refuse_port_in_use(self) -> str:
        with socket.socket() as other:
            other.bind(("127.0.0.1", self.port))
            other.listen()
            out = self.install("--port", str(self.port), "--skip-pi-only-packages")
        said = self.refusal(out, f"port {self.port} is already used by another program")
        self.nothing_installed()
        return said

    def refuse_without_network(self) -> str:
        if shutil.which("unshare") is None:
            raise StepFailed("unshare is missing on this machine, so the root cannot be cut off the network")
        out = self.install("--skip-pi-only-packages", wrap=["unshare", "--net"])
        said = self.refusal(out, "apt cannot reach the package servers")
        self.nothing_installed()
        return said

    def install_twice_at_once(self) -> str:
        """The real first install, with a second one started while it runs."""
        args = ["--no-start", "--skip-pi-only-packages", "--port", str(self.port)]
        first: dict[str, Any] = {}

        def run_first() -> None:
            t = time.monotonic()
            first["out"] = self.install(*args)
            first["seconds"] = time.monotonic() - t

        thread = threading.Thread(target=run_first)
        thread.start()
        lock = self.c.path(LOCK)
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and thread.is_alive():
            if lock_held(lock):  # looked up in /proc/locks: trying the lock here could take it from the first install
                break
            time.sleep(0.2)
        second = self.install(*args)
        thread.join()
        self.first_install = first
        return self.refusal(second, "another install of the companion is running")

    def first_install_worked(self) -> str:
        out, seconds = self.first_install["out"], self.first_install["seconds"]
        log = out.stdout + out.stderr
        (WORK / "install-1.log").write_text(log, encoding="utf-8")
        check(out.returncode == 0, f"the install failed (exit {out.returncode}): {log.strip()[-600:]}")
        check("skipped (only in the Raspberry Pi archive, and asked to skip): python3-picamera2 python3-libcamera python3-lgpio" in out.stderr,
              "the install did not name the Raspberry Pi packages it skipped")
        check("no package was built from source" in out.stdout, "the install did not confirm that nothing was built from source")
        check(self.c.path(f"{PREFIX}/venv").is_symlink() and self.c.path(UNIT).is_file(), "no venv link or no unit after the install")
        config = self.c.path(f"{INSTANCE}/config.toml").read_text(encoding="utf-8")
        self.pin = re.search(r'(?m)^pin = "(\d{6})"$', config).group(1)
        groups = self.c.path("/etc/group").read_text(encoding="utf-8")
        check(all(re.search(rf"(?m)^{g}:.*\belephants\b", groups) for g in ("gpio", "video")), "the user elephants is not in gpio and video")
        # Every distribution in the venv's own site (the system's, beneath it, are apt's): the reading stack at the
        # tested versions, the rest at the locked ones, none recorded twice.
        probe = ("import importlib.metadata as m, json, sysconfig; "
                 "print(json.dumps([[d.metadata['Name'], d.version] for d in m.distributions(path=[sysconfig.get_paths()['purelib']])]))")
        records = [(_canonical(n), v) for n, v in json.loads(self.c.run([f"{PREFIX}/venv/bin/python", "-c", probe], timeout=600).stdout)]
        twice = sorted({n for n, _ in records if sum(1 for m, _ in records if m == n) > 1})
        check(not twice, f"the venv holds two records of {', '.join(twice)} (one installed over another): {sorted(records)}")
        own = {n: v for n, v in records if n not in ("elephants-bluff", "pip")}
        tested = pinned_versions(TESTED_VERSIONS.read_text(encoding="utf-8"))
        got = {n: own.get(_canonical(n)) for n in tested}
        check(got == tested, f"the venv's reading stack {got} is not the tested versions {tested}")
        locked = {_canonical(n): v for n, v in pinned_versions(LOCKED_VERSIONS.read_text(encoding="utf-8")).items()}
        off = {n: (v, locked.get(n)) for n, v in own.items() if locked.get(n) != v}
        check(not off, f"the venv holds distributions not at their locked versions (installed, locked): {off}")
        self.facts["install_s"] = round(seconds, 1)
        return (f"{seconds:.0f} s (apt packages from the root's cache, pip's downloads from its cache when warm); PIN {self.pin}; "
                + ", ".join(f"{n} {v}" for n, v in got.items()) + f" as tested; all {len(own)} of the venv's distributions as locked")

    def libraries_load_on_a_pi_5(self) -> str:
        """A Raspberry Pi 5's kernel has 16 KB pages; the loader refuses a library built for 4 KB pages only, so one
        such wheel in the venv would stop the companion on a Pi 5 while a Pi 4 (and qemu here) runs it."""
        link = os.readlink(self.c.path(f"{PREFIX}/venv"))  # a link inside the root: read, not followed from here
        site = self.c.path(link if link.startswith("/") else f"{PREFIX}/{link}") / "lib" / "python3.11" / "site-packages"
        count, misfit = libraries_misfit_for_pages(site, PI5_PAGE_SIZE)
        check(count > 0, f"no compiled library found under {site}")
        check(not misfit, f"{len(misfit)} of the venv's {count} libraries would not load with 16 KB pages: "
              + "; ".join(f"{name} ({why[0]})" for name, why in list(misfit.items())[:5]))
        return f"all {count} compiled libraries in the venv load with 16 KB pages (and with 4 KB)"

    def verify_unit(self) -> str:
        out = subprocess.run(["systemd-analyze", "verify", f"--root={self.c.root}", UNIT], capture_output=True, text=True)
        noise = [line for line in out.stderr.splitlines() if line.strip()]
        check(out.returncode == 0 and not noise, f"systemd-analyze verify: {out.stderr.strip()[-500:]}")
        return "no complaint"

    def configure_camera(self) -> str:
        """The Pi here has no camera: the files backend serves a saved tray frame instead (the only setting changed)."""
        path = self.c.path(f"{INSTANCE}/config.toml")
        text = path.read_text(encoding="utf-8")
        text, n1 = re.subn(r'(?m)^backend = "picamera2"$', 'backend = "files"', text)
        text, n2 = re.subn(r'(?m)^files_dir = ""$', f'files_dir = "{FRAME_DIR}"', text)
        text, n3 = re.subn(r"(?m)^path_length = 7$", "path_length = 2", text)
        check(n1 == n2 == n3 == 1, "config.toml does not hold camera.backend, camera.files_dir and game.path_length as expected")
        path.write_text(text, encoding="utf-8")
        return f"camera.backend = files ({FRAME_DIR}/{FRAME.name}), game.path_length = 2"

    def health(self) -> str:
        status, body = self.http("GET", "/api/health")
        check(status == 200 and isinstance(body, dict) and body.get("status") in ("ok", "degraded"), f"/api/health: {status} {body}")
        check(body.get("camera") == "files", f"/api/health names camera {body.get('camera')!r}, not files")
        self.facts["health"] = body
        return json.dumps({k: body.get(k) for k in ("status", "version", "camera", "gpio", "model")})

    def page_assets(self) -> str:
        status, html = self.http("GET", "/", raw=True)
        check(status == 200, f"the page answered {status}")
        assets = sorted(set(re.findall(r'(?:src|href)="(/static/[^"?#]+)', html.decode())))
        check(assets, "the page names no /static/ asset")
        for asset in assets:
            status, body = self.http("GET", asset, raw=True)
            check(status == 200 and len(body) > 0, f"{asset} answered {status}")
        return f"/ and {len(assets)} assets: {', '.join(a.rsplit('/', 1)[1] for a in assets)}"

    def whole_game(self) -> str:
        truth = json.loads((REPO / "tests" / "conformance" / "frames.json").read_text(encoding="utf-8"))[FRAME.name]["seen"]
        top = sorted(7 - v for v in truth)
        status, game = self.http("POST", "/api/games", {"players": ["Ann", "Ben"], "path_length": 2, "starter": 0}, pin=self.pin)
        check(status == 201, f"starting a game: {status} {game}")
        self.game_id = game["id"]
        bluffs: list[str] = []
        for _ in range(20):
            if game["phase"] == "over":
                break
            gid = game["id"]
            if game["phase"] == "claim":
                status, game = self.http("POST", f"/api/games/{gid}/claim", {"amount": game["min_claim"]}, pin=self.pin)
            elif game["phase"] == "decide":
                status, body = self.http("POST", f"/api/games/{gid}/bluff", {}, pin=self.pin)
                check(status == 200, f"Bluff: {status} {body}")
                game = body.get("state", body)
                cid = (body.get("challenge") or {}).get("id") or game.get("last_challenge")
                status, challenge = self.http("GET", f"/api/challenges/{cid}")
                reading = challenge.get("reading") or {}
                dice = sorted(d.get("top") for d in reading.get("dice", []))
                if not bluffs:
                    check(reading.get("status") == "ok" and dice == top,
                          f"the first Bluff was read {reading.get('status')} {dice}, the frame shows {top}")
                    status, image = self.http("GET", f"/api/challenges/{cid}/image", raw=True)
                    check(status == 200 and image[:2] == b"\xff\xd8", "the saved Bluff frame is not served as a JPEG")
                bluffs.append(f"{cid}: {reading.get('status')} {dice} -> {challenge.get('verdict')}")
            elif game["phase"] == "confirm":
                status, game = self.http("POST", f"/api/games/{game['id']}/confirm", {"dice": top}, pin=self.pin)
            check(status in (200, 201), f"{game}")
        check(game["phase"] == "over" and game.get("loser") is not None, f"the game did not end: {game.get('phase')}")
        kept = [home for home in (INSTANCE, "/root") if self.c.path(f"{home}/.cache/Microsoft").exists()]
        check(not kept, f"onnxruntime kept its telemetry device id and queue in {', '.join(kept)}")
        return f"game {self.game_id} over, loser seat {game['loser']}, no onnxruntime telemetry kept; Bluffs: " + "; ".join(bluffs)

    def update_keeps_everything(self) -> str:
        self.stop_service()
        before, version_before = self.instance_hashes(), self.installed_version()
        check(any(k.startswith("frames") for k in before), f"no saved frame in the instance before the update: {sorted(before)}")
        new_version = version_before + ".post1"
        self.copy_checkout(CHECKOUT, version=new_version)
        self.c.with_system_mounts()
        t = time.monotonic()
        out = self.install("--no-start", "--skip-pi-only-packages", "--port", str(self.port))
        seconds = time.monotonic() - t
        (WORK / "install-2.log").write_text(out.stdout + out.stderr, encoding="utf-8")
        check(out.returncode == 0, f"the update failed (exit {out.returncode}): {(out.stdout + out.stderr).strip()[-600:]}")
        after = self.instance_hashes()
        changed = sorted(k for k in set(before) | set(after) if before.get(k) != after.get(k))
        check(not changed, f"the update changed {changed}")
        check(self.installed_version() == new_version, f"the update did not install {new_version}")
        self.facts["update_install_s"] = round(seconds, 1)
        self.start_service()
        status, _ = self.http("POST", "/api/session", {"pin": self.pin})
        check(status == 200, f"the PIN from before the update is refused ({status})")
        status, wrong = self.http("POST", "/api/session", {"pin": "000000" if self.pin != "000000" else "111111"})
        check(status == 401, f"a wrong PIN got {status}, so the PIN check proves nothing")
        status, game = self.http("GET", f"/api/games/{self.game_id}")
        check(status == 200 and game.get("phase") == "over", f"the finished game is gone after the update ({status})")
        return f"{len(after)} files byte-identical ({', '.join(sorted(after))}); {version_before} -> {new_version} in {seconds:.0f} s; same PIN"

    def failed_pip_keeps_running(self) -> str:
        version, link = self.installed_version(), os.readlink(self.c.path(f"{PREFIX}/venv"))
        self.copy_checkout(CHECKOUT, version=version + ".post2" if ".post" not in version else version + "1",
                          extra_dependency="elephants-bluff-no-such-package==1.0")
        out = self.install("--no-start", "--skip-pi-only-packages", "--port", str(self.port))
        self.c.without_proc()
        last = [line for line in out.stderr.splitlines() if line.startswith("install-pi: ")]
        check(out.returncode == 1 and last and "pip could not install" in last[-1] and "untouched and keeps running" in last[-1]
              and "run me again" in last[-1], f"exit {out.returncode}; said {last[-1:] or out.stderr.strip()[-300:]}")
        check(os.readlink(self.c.path(f"{PREFIX}/venv")) == link and self.installed_version() == version, "the failed install changed the venv")
        status, _ = self.http("GET", "/api/health")
        check(status == 200, "the running service stopped answering during the failed install")
        self.stop_service()
        self.start_service()
        return last[-1]

    def downgrade_refused(self) -> str:
        version, link = self.installed_version(), os.readlink(self.c.path(f"{PREFIX}/venv"))
        self.copy_checkout(CHECKOUT, version="0.0.1")
        out = self.install("--no-start", "--skip-pi-only-packages", "--port", str(self.port))
        self.c.without_proc()
        said = self.refusal(out, "older than the installed")
        check(os.readlink(self.c.path(f"{PREFIX}/venv")) == link and self.installed_version() == version, "the refused downgrade changed the venv")
        status, _ = self.http("GET", "/api/health")
        check(status == 200, "the service stopped answering after the refused downgrade")
        return said

    def backup_and_restore(self) -> str:
        """deploy/instance.sh: a backup, a changed and damaged instance, the restore gives every file back, but for the
        devices let in (``auth.sqlite3``), whose sessions a restore ends."""
        self.stop_service()
        before = self.instance_hashes()
        tool = f"{CHECKOUT}/deploy/instance.sh"
        out = self.c.run(["bash", tool, "backup", "/root/backup.tar.gz"], timeout=600)
        check(out.returncode == 0 and "Backed up" in out.stdout, f"backup: exit {out.returncode}: {out.stderr.strip()[-300:]}")
        # the game log and device list of a game played here are whole: the backup's SQLite check on the Pi says nothing
        check("instance: warning" not in out.stderr, f"backup warned of a whole instance: {out.stderr.strip()[-300:]}")
        config = self.c.path(f"{INSTANCE}/config.toml")
        config.write_text(config.read_text(encoding="utf-8").replace(f'pin = "{self.pin}"', 'pin = "000000"'), encoding="utf-8")
        next(self.c.path(f"{INSTANCE}/frames").glob("*.jpg")).unlink()
        out = self.c.run(["bash", tool, "restore", "/root/backup.tar.gz"], timeout=600)
        check(out.returncode == 0 and "Restored" in out.stdout, f"restore: exit {out.returncode}: {out.stderr.strip()[-300:]}")
        after = self.instance_hashes()
        changed = sorted(k for k in set(before) | set(after) if before.get(k) != after.get(k) and k != "auth.sqlite3")
        check(not changed and "auth.sqlite3" in after, f"the restore changed {changed or 'auth.sqlite3 away'}")
        with sqlite3.connect(self.c.path(f"{INSTANCE}/auth.sqlite3")) as auth:
            left = auth.execute("SELECT COUNT(*) FROM sessions").fetchone()[0]
        check(left == 0, f"the restore kept {left} sessions of the devices let in when the backup was made")
        self.start_service()
        status, _ = self.http("POST", "/api/session", {"pin": self.pin})
        check(status == 200, f"the restored PIN is refused ({status})")
        return f"{len(after) - 1} files back byte for byte, every session ended; {out.stdout.strip()}"

    def restore_of_another_version_refused(self) -> str:
        """A backup whose record names another version is refused, and the instance stays as it is."""
        import tarfile

        self.stop_service()
        src, forged = self.c.path("/root/backup.tar.gz"), self.c.path("/root/other-version.tar.gz")
        with tarfile.open(src, "r:gz") as old, tarfile.open(forged, "w:gz") as new:
            for member in old.getmembers():
                data = old.extractfile(member).read() if member.isfile() else None
                if member.name.lstrip("./") == "elephants-bluff-backup.txt":
                    data = re.sub(rb"(?m)^version=.*$", b"version=0.0.9", data)
                    member.size = len(data)
                new.addfile(member, io.BytesIO(data) if data is not None else None)
        before = self.instance_hashes()
        said = self.refusal(self.c.run(["bash", f"{CHECKOUT}/deploy/instance.sh", "restore", "/root/other-version.tar.gz"], timeout=600),
                            "this backup comes from version 0.0.9", prefix="instance: ")
        check(self.instance_hashes() == before, "the refused restore changed the instance")
        self.start_service()
        return said

    # --- the whole ------------------------------------------------------------------------------
    def run(self) -> int:
        started = time.monotonic()
        try:
            if os.geteuid() != 0:
                raise PiError("the rehearsal needs root (debootstrap, chroot, mounts): run me with sudo")
            s = self.step
            s("a fresh arm64 root with the checkout", self.prepare)
            root = ["a fresh arm64 root with the checkout"]
            s("Raspberry Pi OS's numpy 1 and simplejpeg in the system site", self.pi_os_camera_helpers, root)
            s("refuses Bullseye (fake os-release)", self.refuse_bullseye, root)
            s("refuses a 32-bit system (armhf userland)", self.refuse_32_bit, root)
            s("refuses to run the service as root", self.refuse_root_user, root)
            s("refuses to run without sudo", self.refuse_without_sudo, root)
            s("refuses a port another program holds", self.refuse_port_in_use, root)
            s("refuses to install without network", self.refuse_without_network, root)
            s("a second install while one runs is refused", self.install_twice_at_once, root)
            s("install-pi.sh --no-start --skip-pi-only-packages", self.first_install_worked, ["a second install while one runs is refused"])
            installed = ["install-pi.sh --no-start --skip-pi-only-packages"]
            s("the venv's own simplejpeg loads under its numpy 2, where the system's fails", self.camera_helper_for_the_venv,
              [*installed, "Raspberry Pi OS's numpy 1 and simplejpeg in the system site"])
            s("every compiled library in the venv loads on a Pi 5's 16 KB pages", self.libraries_load_on_a_pi_5, installed)
            s("systemd-analyze verify on the installed unit", self.verify_unit, installed)
            s("the saved frame as the camera", self.configure_camera, installed)
            s("ExecStart runs as the service user with the unit's environment", self.start_service, ["the saved frame as the camera"])
            up = ["ExecStart runs as the service user with the unit's environment"]
            s("/api/health answers", self.health, up)
            s("the page and its assets load", self.page_assets, up)
            s("a whole game over the HTTP API, the first Bluff read by the reader", self.whole_game, up)
            s("an update keeps PIN, settings, game log and frames", self.update_keeps_everything, ["a whole game over the HTTP API, the first Bluff read by the reader"])
            s("a pip failure leaves the running version and says what to do", self.failed_pip_keeps_running, ["an update keeps PIN, settings, game log and frames"])
            s("a downgrade is refused and the running version stays", self.downgrade_refused, ["an update keeps PIN, settings, game log and frames"])
            s("backup and restore give the instance back byte for byte", self.backup_and_restore, ["an update keeps PIN, settings, game log and frames"])
            s("a backup of another version is refused", self.restore_of_another_version_refused, ["backup and restore give the instance back byte for byte"])
        except PiError as exc:
            self.steps.append({"name": "start", "passed": False, "seconds": 0, "detail": str(exc)})
            print(f"pi-rehearsal: {exc}", file=sys.stderr)
        finally:
            self.stop_service()
            if self.chroot is not None and not self.keep:
                self.chroot.destroy()
        passed = sum(s["passed"] for s in self.steps)
        write_result(self.output, {
            "command": "make pi-rehearsal", "when": utc_now(), "root": "Debian bookworm arm64 under qemu-user (QEMU_CPU=cortex-a72)",
            "passed": passed, "steps_total": len(self.steps), "total_s": round(time.monotonic() - started, 1),
            "commit": self.facts.get("commit"), "install_s": self.facts.get("install_s"), "update_install_s": self.facts.get("update_install_s"),
            "health": self.facts.get("health"), "steps": self.steps,
        })
        print(f"pi-rehearsal: result in {os.path.relpath(self.output, REPO)}; {round(time.monotonic() - started)} s in all")
        print(f"pi-rehearsal: {passed} of {len(self.steps)} steps passed")
        return 0 if self.steps and passed == len(self.steps) else 1


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="deploy/pi/rehearsal.py", description="Rehearse the Pi install end to end in an arm64 root.")
    parser.add_argument("--output", type=Path, default=OUTPUT, help="the JSON result (default: docs/pi-rehearsal-latest.json)")
    parser.add_argument("--keep", action="store_true", help="keep the root's copy afterwards (in /var/tmp/elephants-bluff-rehearsal)")
    args = parser.parse_args(argv)
    return Rehearsal(args.output, args.keep).run()


if __name__ == "__main__":
    sys.exit(main())
