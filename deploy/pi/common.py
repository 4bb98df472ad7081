"""What `make pi-rehearsal` and `make pi-check` share: the cached arm64 root, fresh
copies of it, and running a command inside one under qemu-user.

Only the standard library: these run with the machine's own python3, outside the
project's virtual environment, and drive the companion only through its command
line, its HTTP API and its wheel (never by importing it).
"""

from __future__ import annotations

import json
import os
import shutil
import struct
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

REPO = Path(__file__).resolve().parents[2]
CACHE = Path(os.environ.get("PI_CACHE", "/var/cache/elephants-bluff"))
ROOT_SCRIPT = REPO / "deploy" / "pi" / "root.sh"
#: qemu-user's default CPU lacks features onnxruntime's arm64 kernels probe; a Pi 4 is a Cortex-A72.
QEMU_ENV = {"QEMU_CPU": "cortex-a72"}
CHROOT_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
#: The libraries a reading's numbers come from, and where the versions `make pi-check` last read equal on arm64 are
#: kept (written by pi_check.py, installed by install-pi.sh and `make venv` as pip constraints).
READING_STACK = ("numpy", "onnxruntime", "opencv-python-headless")
TESTED_VERSIONS = REPO / "deploy" / "pi" / "tested-versions.txt"
#: Every distribution the project installs (its runtime, the tests' tools, the Pi's extra), one version each, the
#: reading stack at the tested versions: written by `make lock` (deploy/lock_versions.py), installed as pip
#: constraints by `make venv` and install-pi.sh, so CI, this machine and the Pi install the same set.
LOCKED_VERSIONS = REPO / "deploy" / "locked-versions.txt"
#: the aarch64 wheels pip may take (the Pi's glibc 2.36 takes all of these)
AARCH64_PLATFORMS = ["manylinux2014_aarch64", "manylinux_2_17_aarch64", "manylinux_2_27_aarch64", "manylinux_2_28_aarch64",
                     "manylinux_2_31_aarch64", "manylinux_2_34_aarch64", "manylinux_2_35_aarch64", "manylinux_2_36_aarch64"]


def aarch64_download_argv(dest: Path, *, with_dependencies: bool = True) -> list[str]:
    """``pip download``'s command for the wheels a Pi's Python 3.11 on aarch64 installs, into ``dest``; the
    requirements (and any ``-c`` constraints) follow it. Wheels only: nothing is built for another machine here."""
    argv = [sys.executable, "-m", "pip", "download", "--quiet", "--only-binary=:all:", "--python-version", "3.11",
            "--implementation", "cp", "--abi", "cp311", "--abi", "abi3", "--abi", "none", "-d", str(dest)]
    if not with_dependencies:
        argv.append("--no-deps")
    for platform in AARCH64_PLATFORMS:
        argv += ["--platform", platform]
    return argv


#: A Raspberry Pi 5 runs Raspberry Pi OS's kernel with 16 KB pages; a Pi 4's has 4 KB.
PI5_PAGE_SIZE = 16384


def elf_page_misfits(header: bytes, page_size: int = PI5_PAGE_SIZE) -> list[str] | None:
    """Why the dynamic loader would refuse this 64-bit little-endian ELF on a kernel with ``page_size``-byte pages
    (an empty list: it loads), or None for what is not such an ELF. ``header`` holds the file from its start to the
    end of its program headers. glibc's loader refuses a loadable segment whose alignment, or whose address less its
    offset, is not a whole number of pages ("ELF load command ... not page-aligned"): a library built for 4 KB pages
    only does not load on a Pi 5."""
    if header[:6] != b"\x7fELF\x02\x01":
        return None
    phoff, = struct.unpack_from("<Q", header, 0x20)
    phentsize, phnum = struct.unpack_from("<HH", header, 0x36)
    misfits = []
    for i in range(phnum):
        p_type, _, p_offset, p_vaddr, _, _, _, p_align = struct.unpack_from("<IIQQQQQQ", header, phoff + i * phentsize)
        if p_type != 1:  # PT_LOAD
            continue
        if p_align % page_size:
            misfits.append(f"segment {i} aligned to {p_align} bytes")
        elif (p_vaddr - p_offset) % page_size:
            misfits.append(f"segment {i} at address {p_vaddr:#x}, offset {p_offset:#x}")
    return misfits


def library_page_misfits(f: BinaryIO, page_size: int = PI5_PAGE_SIZE) -> list[str] | None:
    """``elf_page_misfits`` for an open library (a file, or a member of a wheel), reading no more of it than its
    program headers."""
    start = f.read(64)
    if len(start) < 64 or start[:6] != b"\x7fELF\x02\x01":
        return None  # not a 64-bit little-endian ELF (a linker script, a text file named .so)
    phoff, = struct.unpack_from("<Q", start, 0x20)
    phentsize, phnum = struct.unpack_from("<HH", start, 0x36)
    try:
        return elf_page_misfits(start + f.read(max(0, phoff + phentsize * phnum - len(start))), page_size)
    except struct.error:
        return ["its program headers are cut short"]


def libraries_misfit_for_pages(folder: Path, page_size: int = PI5_PAGE_SIZE) -> tuple[int, dict[str, list[str]]]:
    """The compiled libraries (``*.so*``) under ``folder``: how many, and those the loader would refuse on a
    kernel with ``page_size``-byte pages, with why."""
    count, misfit = 0, {}
    for path in sorted(folder.rglob("*.so*")):
        if not path.is_file() or path.is_symlink():
            continue
        with path.open("rb") as f:
            why = library_page_misfits(f, page_size)
        if why is None:
            continue
        count += 1
        if why:
            misfit[str(path.relative_to(folder))] = why
    return count, misfit


class PiError(Exception):
    """A step of the rehearsal or the check cannot go on; the message says why in words."""


def ensure_root() -> Path:
    """Builds the cached arm64 root once (``deploy/pi/root.sh``) and returns its folder."""
    out = subprocess.run(["bash", str(ROOT_SCRIPT), "--cache", str(CACHE)], capture_output=True, text=True)
    for line in out.stdout.splitlines()[:-1]:
        print(line, flush=True)
    if out.returncode != 0:
        raise PiError(out.stderr.strip() or "deploy/pi/root.sh failed")
    return Path(out.stdout.strip().splitlines()[-1])


def _mounted(path: Path) -> bool:
    target = str(path.resolve())
    with open("/proc/self/mounts", encoding="utf-8") as mounts:
        return any(line.split()[1] == target for line in mounts)


@dataclass
class Chroot:
    """A fresh, writable copy of the cached root (an overlay where the kernel allows it)."""

    base: Path
    work: Path
    root: Path = field(init=False)
    overlay: bool = field(init=False, default=False)
    _mounts: list[Path] = field(init=False, default_factory=list)

    def __post_init__(self) -> None:
        self.root = self.work / "root"

    def create(self) -> "Chroot":
        self.destroy()
        self.work.mkdir(parents=True, exist_ok=True)
        upper, lower_work = self.work / "upper", self.work / "ovl-work"
        for d in (self.root, upper, lower_work):
            d.mkdir(parents=True, exist_ok=True)
        opts = f"lowerdir={self.base},upperdir={upper},workdir={lower_work}"
        if subprocess.run(["mount", "-t", "overlay", "overlay", "-o", opts, str(self.root)], capture_output=True).returncode == 0:
            self.overlay = True
            self._mounts.append(self.root)
        else:
            self.root.rmdir()
            subprocess.run(["cp", "-a", "--reflink=auto", str(self.base), str(self.root)], check=True)
        return self

    def mount(self, name: str, how: list[str]) -> None:
        """Mounts /proc, /dev or /sys inside (``how``: the mount arguments before the target)."""
        target = self.root / name.lstrip("/")
        target.mkdir(parents=True, exist_ok=True)
        if not _mounted(target):
            subprocess.run(["mount", *how, str(target)], check=True)
            self._mounts.append(target)

    def unmount(self, name: str) -> None:
        target = self.root / name.lstrip("/")
        if target in self._mounts:
            subprocess.run(["umount", "-l", str(target)], check=False)
            self._mounts.remove(target)

    def with_system_mounts(self) -> None:
        """/dev and /proc for apt, useradd and the install script."""
        self.mount("/dev", ["--bind", "/dev"])
        self.mount("/proc", ["-t", "proc", "proc"])

    def without_proc(self) -> None:
        """onnxruntime under qemu-user crashes reading the host's /proc and /sys: the reader runs without them."""
        self.unmount("/proc")
        self.unmount("/sys")

    def run(self, argv: list[str], *, env: dict[str, str] | None = None, userspec: str | None = None, groups: str | None = None,
            timeout: float | None = None, input: str | None = None, cwd: str = "/") -> subprocess.CompletedProcess:
        return subprocess.run(self.command(argv, env=env, userspec=userspec, groups=groups, cwd=cwd),
                              capture_output=True, text=True, timeout=timeout, input=input)

    def command(self, argv: list[str], *, env: dict[str, str] | None = None, userspec: str | None = None,
                groups: str | None = None, cwd: str = "/") -> list[str]:
        """The host command that runs ``argv`` inside, with a clean environment plus ``env`` (and qemu's CPU)."""
        chroot = ["chroot"]
        if userspec:
            chroot.append(f"--userspec={userspec}")
        if groups:
            chroot.append(f"--groups={groups}")
        environ = {"PATH": CHROOT_PATH, "LANG": "C.UTF-8", "HOME": "/root", **QEMU_ENV, **(env or {})}
        inner = ["env", "-i", *(f"{k}={v}" for k, v in environ.items())]
        if cwd != "/":
            inner += ["sh", "-c", 'cd "$0" && exec "$@"', cwd]
        return [*chroot, str(self.root), *inner, *argv]

    def path(self, inside: str) -> Path:
        return self.root / inside.lstrip("/")

    def destroy(self) -> None:
        for target in reversed(list(self._mounts)):
            subprocess.run(["umount", "-l", str(target)], check=False)
        self._mounts.clear()
        if self.work.exists():
            # anything still mounted under the copy (an earlier run that was killed) goes first
            with open("/proc/self/mounts", encoding="utf-8") as mounts:
                stale = [line.split()[1] for line in mounts if line.split()[1].startswith(str(self.work.resolve()) + "/")]
            for target in sorted(stale, key=len, reverse=True):
                subprocess.run(["umount", "-l", target], check=False)
            shutil.rmtree(self.work, ignore_errors=False)


def ids_in(root: Path, user: str) -> tuple[int, int, list[int]]:
    """The uid, gid and supplementary group ids of ``user`` from the root's own /etc files."""
    uid = gid = None
    for line in (root / "etc/passwd").read_text(encoding="utf-8").splitlines():
        parts = line.split(":")
        if parts[0] == user:
            uid, gid = int(parts[2]), int(parts[3])
    if uid is None or gid is None:
        raise PiError(f"there is no user {user!r} in the arm64 root")
    groups = []
    for line in (root / "etc/group").read_text(encoding="utf-8").splitlines():
        parts = line.split(":")
        if user in parts[3].split(","):
            groups.append(int(parts[2]))
    return uid, gid, groups


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def write_result(path: Path, result: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(result, indent=2, sort_keys=False) + "\n", encoding="utf-8")
    os.replace(tmp, path)


def pinned_versions(text: str) -> dict[str, str]:
    r"""The ``name==version`` lines of a constraints file, comments left out.

    >>> pinned_versions("# numpy==1 in a comment\nnumpy==2.4.6\n\nonnxruntime==1.32.0\n")
    {'numpy': '2.4.6', 'onnxruntime': '1.32.0'}
    """
    return dict(line.strip().split("==", 1) for line in text.splitlines() if "==" in line and not line.lstrip().startswith("#"))


def utc_now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def host_runtime_versions(venv_python: Path) -> dict[str, str]:
    """Every installed distribution of the project's environment here, name -> version."""
    code = "import importlib.metadata as m, json; print(json.dumps({d.metadata['Name'].lower(): d.version for d in m.distributions()}))"
    out = subprocess.run([str(venv_python), "-c", code], capture_output=True, text=True, check=True)
    return json.loads(out.stdout)
