"""`make pi-check`: the same verdict on the Pi as here, frame by frame.

Reads the fixed conformance set (``tests/conformance/frames``) with
``elephants-bluff read --json`` twice, in one process each, from the same
wheel of the committed tree (``git archive HEAD``) and the same versions of
every dependency as the project's ``.venv``: here, in a venv of its own, and
inside the cached Debian Bookworm arm64 root under qemu-user (aarch64 wheels,
nothing compiled). It compares each frame's status and dice
values and prints ``pi-check: N of M frames equal`` last; any difference exits 1. The reasons' codes
(``reasons``) are compared too and counted beside it (a reading never ok either way, told another reason on the
Pi, is a difference to look at but not a verdict the table would see otherwise).

    sudo python3 deploy/pi/pi_check.py [--cpu cortex-a72|cortex-a76] [--frames DIR] [--groups DIR ...] [--output FILE]

qemu-user plays a Raspberry Pi 4's CPU (Cortex-A72) by default, or a Pi 5's (``--cpu cortex-a76``, result in
``docs/pi-check-pi5-latest.json``): the libraries choose their kernels by the CPU's features.

It does not care which reader runs: it sees only the command's JSON lines. When every frame is equal it writes
the reading stack's versions it read with (numpy, onnxruntime, opencv-python-headless) to
``deploy/pi/tested-versions.txt``, the constraints ``install-pi.sh`` installs the Pi with and ``make venv``
installs this machine with, so the Pi decides with the versions that were checked.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import (CACHE, READING_STACK, REPO, TESTED_VERSIONS, Chroot, PiError, aarch64_download_argv, ensure_root,  # noqa: E402
                    host_runtime_versions, utc_now, write_result)

FRAMES = REPO / "tests" / "conformance" / "frames"
#: groups of frames each read with its own settings (``read --instance``): a calibrated tray (its config.toml and
#: empty-tray photo), and real dice close up with one die expected
TRAY = REPO / "tests" / "conformance" / "tray"
CLOSEUP = REPO / "tests" / "conformance" / "closeup"
#: ... and real photos small in a phone's 12-megapixel frame with five dice expected (the reader's finest look)
BIGFRAME = REPO / "tests" / "conformance" / "bigframe"
#: ... and real photos told a die size the look at it misses (the size check's measure on both machines)
CALIBRATED = REPO / "tests" / "conformance" / "calibrated"
#: ... and a calibrated tray seen through a wide lens (each die's outline straightened: float maths on both machines)
LENS = REPO / "tests" / "conformance" / "lens"
GROUPS = (TRAY, CLOSEUP, BIGFRAME, CALIBRATED, LENS)
OUTPUT = REPO / "docs" / "pi-check-latest.json"
#: The Pis the companion runs on (hardware/BOM.md), by the CPU qemu-user plays for each: onnxruntime, OpenCV and
#: numpy pick their kernels by the CPU's features (a Pi 5's Cortex-A76 has dot products and half floats a Pi 4's
#: Cortex-A72 lacks), so the same verdict is checked on each. The first is the default, and its run keeps the versions.
PI_CPUS = {"cortex-a72": "Raspberry Pi 4", "cortex-a76": "Raspberry Pi 5"}
DEFAULT_CPU = "cortex-a72"
#: where each CPU's result goes when --output is not given
OUTPUTS = {"cortex-a72": OUTPUT, "cortex-a76": REPO / "docs" / "pi-check-pi5-latest.json"}
HOST_VENV = REPO / ".venv"
HOST_CHECK_VENV = CACHE / "pi-check-host-venv"
CHECK_ROOT = CACHE / "pi-check-bookworm-arm64"
WHEELS = CACHE / "wheels-aarch64"
IMAGE_SUFFIXES = {".jpg", ".jpeg", ".png"}


def tested_versions_text(versions: dict[str, str], commit: str, when: str) -> str:
    """The constraints file of the reading stack at ``versions``, saying which check read them equal.

    >>> print(tested_versions_text({"numpy": "2.4.6", "onnxruntime": "1.32.0", "opencv-python-headless": "5.0.0.93", "flask": "3.1.3"},
    ...                            "abc1234", "2026-12-02T10:00:00Z").splitlines()[-3:])
    ['numpy==2.4.6', 'onnxruntime==1.32.0', 'opencv-python-headless==5.0.0.93']
    """
    head = ("# The reading stack at the versions `make pi-check` read every conformance frame equal with, here and\n"
            f"# on arm64 (commit {commit}, {when}). Written by deploy/pi/pi_check.py; install-pi.sh installs the Pi\n"
            "# with these constraints and `make venv` this machine, so the Pi decides with what was checked.\n"
            "# To move to newer versions: upgrade them in .venv, run make pi-check, then make lock, make test and make bench.\n")
    return head + "".join(f"{name}=={versions[name]}\n" for name in READING_STACK)


# --- comparing two readings of the same set (pure: tested without emulation) ------------

def parse_read_lines(text: str) -> dict[str, dict]:
    """``read --json`` output (one object per line) keyed by the ``file`` field.

    >>> parse_read_lines('{"file": "a.jpg", "status": "ok", "dice": [], "total": 0}\\n')["a.jpg"]["status"]
    'ok'
    """
    readings: dict[str, dict] = {}
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError:
            raise ValueError(f"line {number} of the reader's output is not JSON: {line[:80]!r}") from None
        if not isinstance(obj, dict) or "file" not in obj:
            raise ValueError(f"line {number} of the reader's output has no 'file' field: {line[:80]!r}")
        readings[str(obj["file"])] = obj
    return readings


def verdict(reading: dict | None) -> dict:
    """What must agree between machines: the status, and the dice's values (seen and top), in any order; and the
    reasons' codes, in any order, counted apart."""
    if reading is None:
        return {"status": "missing", "seen": [], "top": [], "reasons": []}
    dice = reading.get("dice") or []
    return {
        "status": reading.get("status"),
        "seen": sorted(d.get("seen") for d in dice if isinstance(d, dict) and d.get("seen") is not None),
        "top": sorted(d.get("top") for d in dice if isinstance(d, dict) and d.get("top") is not None),
        "reasons": sorted(r.get("code") for r in reading.get("reasons") or () if isinstance(r, dict) and r.get("code")),
    }


def compare(frames: list[str], here: dict[str, dict], pi: dict[str, dict]) -> list[dict]:
    """One row per frame: equal or not, both verdicts, and the difference in words.

    >>> compare(["a"], {"a": {"file": "a", "status": "ok", "dice": [{"seen": 1, "top": 6}]}},
    ...         {"a": {"file": "a", "status": "uncertain", "dice": [{"seen": 1, "top": 6}]}})[0]["why"]
    'status ok here, uncertain on the Pi'
    """
    rows = []
    for name in frames:
        a, b = verdict(here.get(name)), verdict(pi.get(name))
        why = []
        if a["status"] != b["status"]:
            why.append(f"status {a['status']} here, {b['status']} on the Pi")
        if a["top"] != b["top"]:
            why.append(f"top faces {a['top']} here, {b['top']} on the Pi")
        elif a["seen"] != b["seen"]:
            why.append(f"seen faces {a['seen']} here, {b['seen']} on the Pi")
        rows.append({"file": name, "equal": not why, "reasons_equal": a["reasons"] == b["reasons"], "here": a, "pi": b,
                     "why": "; ".join(why)})
    return rows


def summary_line(rows: list[dict]) -> str:
    return f"pi-check: {sum(r['equal'] for r in rows)} of {len(rows)} frames equal"


# --- running the reader --------------------------------------------------------------------

def conformance_frames(folder: Path) -> list[str]:
    names = sorted(p.name for p in folder.iterdir() if p.suffix.lower() in IMAGE_SUFFIXES)
    if len(names) < 30:
        raise PiError(f"the conformance set {folder} has {len(names)} frames; it needs at least 30")
    return names


def install_here(wheel: Path, constraints: Path) -> Path:
    """A venv here with the same wheel and versions as the root gets (so both sides run the committed code)."""
    venv = HOST_CHECK_VENV
    if not (venv / "bin" / "python").exists():
        subprocess.run([str(HOST_VENV / "bin" / "python"), "-m", "venv", str(venv)], check=True)
    pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", "--only-binary=:all:", "-c", str(constraints)]
    for extra in ([], ["--no-deps", "--force-reinstall"]):
        out = subprocess.run([*pip, *extra, str(wheel)], capture_output=True, text=True)
        if out.returncode != 0:
            raise PiError(f"pip could not install the project's wheel here: {out.stderr.strip()[-600:]}")
    return venv / "bin" / "elephants-bluff"


def read_here(command: Path, frames: Path, names: list[str], instance: Path | None = None) -> tuple[dict[str, dict], float]:
    start = time.monotonic()
    settings = ["--instance", str(instance.resolve())] if instance is not None else []
    out = subprocess.run([str(command), "read", "--json", *settings, *names], cwd=frames, capture_output=True, text=True)
    if not out.stdout.strip():
        raise PiError(f"the reader here printed nothing (exit {out.returncode}): {out.stderr.strip()[-400:]}")
    return parse_read_lines(out.stdout), time.monotonic() - start


def instance_group(folder: Path) -> tuple[Path, list[str], Path] | None:
    """A group read with its own settings: (frames folder, frame names, instance folder), or None where the folder
    has no ``config.toml`` or no frames."""
    if not (folder / "config.toml").is_file() or not (folder / "frames").is_dir():
        return None
    names = sorted(p.name for p in (folder / "frames").iterdir() if p.suffix.lower() in IMAGE_SUFFIXES)
    return (folder / "frames", names, folder) if names else None


def build_wheel(dest: Path) -> Path:
    """The project's wheel from the committed tree (``git archive HEAD``), whatever is being edited here."""
    source = dest / "src"
    source.mkdir()
    archive = subprocess.run(["git", "archive", "--format=tar", "HEAD"], cwd=REPO, capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(source)], input=archive, check=True)
    out = subprocess.run([str(HOST_VENV / "bin" / "python"), "-m", "pip", "wheel", "--quiet", "--no-deps", "-w", str(dest), str(source)],
                         capture_output=True, text=True)
    wheels = sorted(dest.glob("elephants_bluff-*.whl"))
    if out.returncode != 0 or not wheels:
        raise PiError(f"the project's wheel could not be built: {out.stderr.strip()[-400:]}")
    return wheels[-1]


def download_wheels(wheel: Path, constraints: Path) -> None:
    """The aarch64 wheels of the project's dependencies, at this machine's versions (downloaded once, cached)."""
    WHEELS.mkdir(parents=True, exist_ok=True)
    # pip download keeps a file already in the folder under the same name: an older build of the
    # project's wheel there would stand in for this one (and its dependencies). The cache holds none.
    for stale in WHEELS.glob("elephants_bluff-*.whl"):
        stale.unlink()
    out = subprocess.run([*aarch64_download_argv(WHEELS), "-c", str(constraints), str(wheel)], capture_output=True, text=True)
    for copy in WHEELS.glob("elephants_bluff-*.whl"):
        copy.unlink()
    if out.returncode != 0:
        raise PiError("pip could not download aarch64 wheels of this machine's versions: " + out.stderr.strip()[-600:])


def prepare_check_root(base: Path) -> Chroot:
    """A persistent copy of the cached root (made again when the root is rebuilt)."""
    base_stamp = (base.parent / (base.name + ".stamp")).read_text(encoding="utf-8")
    stamp = CHECK_ROOT / "base-stamp"
    chroot = Chroot(base, CHECK_ROOT)
    if not (stamp.exists() and stamp.read_text(encoding="utf-8") == base_stamp and chroot.root.is_dir()):
        print("pi-check: copying the arm64 root for the check (once per root)", flush=True)
        chroot.destroy()
        CHECK_ROOT.mkdir(parents=True)
        subprocess.run(["cp", "-a", "--reflink=auto", str(base), str(chroot.root)], check=True)
        stamp.write_text(base_stamp, encoding="utf-8")
    return chroot


def read_on_pi(base: Path, frames: Path, names: list[str], wheel: Path, constraints: Path,
               groups: list[tuple[Path, list[str], Path]] = (), cpu: str = DEFAULT_CPU) -> tuple[dict[str, dict], dict, dict[str, str]]:
    """Installs the wheel in the check root's venv from aarch64 wheels only, then reads every frame in one process
    (and each group's frames, the calibrated tray's and the close-up dice's, in one more each, with its settings)."""
    times: dict[str, float] = {}
    t = time.monotonic()
    download_wheels(wheel, constraints)
    times["download_s"] = round(time.monotonic() - t, 1)
    chroot = prepare_check_root(base)
    inside = chroot.path("/srv/pi-check")
    shutil.rmtree(inside, ignore_errors=True)
    (inside / "frames").mkdir(parents=True)
    shutil.copytree(WHEELS, inside / "wheels")
    shutil.copy2(wheel, inside / "wheels" / wheel.name)
    shutil.copy2(constraints, inside / "constraints.txt")
    for name in names:
        shutil.copy2(frames / name, inside / "frames" / name)
    for _, _, instance in groups:
        shutil.copytree(instance, inside / "groups" / instance.name)
    venv = "/opt/pi-check/venv"
    pip = [f"{venv}/bin/pip", "install", "--no-index", "--find-links", "/srv/pi-check/wheels", "--only-binary=:all:",
           "--progress-bar", "off", "-c", "/srv/pi-check/constraints.txt"]
    chroot.mount("/dev", ["--bind", "/dev"])
    try:
        t = time.monotonic()
        if not chroot.path(f"{venv}/bin/python").exists():
            made = chroot.run(["python3", "-m", "venv", venv], timeout=900)
            if made.returncode != 0:
                raise PiError(f"python3 -m venv failed in the arm64 root: {made.stderr.strip()[-400:]}")
        for extra in ([], ["--no-deps", "--force-reinstall"]):  # the dependencies (once), then this checkout's wheel
            out = chroot.run([*pip, *extra, f"/srv/pi-check/wheels/{wheel.name}"], timeout=1800)
            if out.returncode != 0:
                raise PiError(f"pip could not install the project's wheel in the arm64 root: {(out.stdout + out.stderr).strip()[-600:]}")
            if "Building wheel" in out.stdout:
                raise PiError("pip built something from source in the arm64 root; every dependency must come as a wheel")
        times["install_s"] = round(time.monotonic() - t, 1)
        code = "import importlib.metadata as m, json; print(json.dumps({d.metadata['Name'].lower(): d.version for d in m.distributions()}))"
        versions = json.loads(chroot.run([f"{venv}/bin/python", "-c", code], timeout=600).stdout)
        chroot.without_proc()
        t = time.monotonic()
        as_the_pi = {"QEMU_CPU": cpu}  # the CPU qemu-user shows the libraries, whose kernels they choose by its features
        out = chroot.run([f"{venv}/bin/elephants-bluff", "read", "--json", *names], cwd="/srv/pi-check/frames", timeout=3600, env=as_the_pi)
        times["read_s"] = round(time.monotonic() - t, 1)
        if not out.stdout.strip():
            raise PiError(f"the reader in the arm64 root printed nothing (exit {out.returncode}): {out.stderr.strip()[-600:]}")
        readings = parse_read_lines(out.stdout)
        for _, group_names, instance in groups:
            t = time.monotonic()
            there = f"/srv/pi-check/groups/{instance.name}"
            out = chroot.run([f"{venv}/bin/elephants-bluff", "read", "--json", "--instance", there, *group_names], cwd=f"{there}/frames", timeout=3600,
                             env=as_the_pi)
            times[f"read_{instance.name}_s"] = round(time.monotonic() - t, 1)
            if not out.stdout.strip():
                raise PiError(f"the reader in the arm64 root printed nothing for {instance.name} (exit {out.returncode}): {out.stderr.strip()[-600:]}")
            readings.update(parse_read_lines(out.stdout))
        return readings, times, versions
    finally:
        chroot.unmount("/dev")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="deploy/pi/pi_check.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("--frames", type=Path, default=FRAMES, help="the conformance frames (default: tests/conformance/frames)")
    parser.add_argument("--groups", type=Path, nargs="*", default=list(GROUPS),
                        help="folders of frames each read with its own config.toml (default: tests/conformance/tray, closeup, bigframe and calibrated)")
    parser.add_argument("--cpu", choices=list(PI_CPUS), default=DEFAULT_CPU,
                        help="the CPU qemu plays: cortex-a72, a Raspberry Pi 4 (the default), or cortex-a76, a Raspberry Pi 5")
    parser.add_argument("--output", type=Path, help="where the JSON result goes (default: docs/pi-check-latest.json; "
                                                    "docs/pi-check-pi5-latest.json with --cpu cortex-a76)")
    args = parser.parse_args(argv)
    args.output = args.output or OUTPUTS[args.cpu]
    started = time.monotonic()
    how = "make pi-check" if args.cpu == DEFAULT_CPU else f"make pi-check PI_CPU={args.cpu}"
    result: dict = {"command": how, "when": utc_now(), "frames_dir": os.path.relpath(args.frames, REPO),
                    "cpu": f"{args.cpu} ({PI_CPUS[args.cpu]}, played by qemu-user)"}
    try:
        if os.geteuid() != 0:
            raise PiError("the arm64 root needs root (chroot and mounts): run me with sudo")
        names = conformance_frames(args.frames)
        if not (HOST_VENV / "bin" / "python").exists():
            raise PiError(f"{HOST_VENV} is missing: run 'make venv' first")
        versions_here = host_runtime_versions(HOST_VENV / "bin" / "python")
        base = ensure_root()
        result["commit"] = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True, text=True).stdout.strip()
        with tempfile.TemporaryDirectory(prefix="pi-check-") as tmp:
            wheel = build_wheel(Path(tmp))
            constraints = Path(tmp) / "constraints.txt"
            constraints.write_text("".join(f"{n}=={v}\n" for n, v in sorted(versions_here.items()) if n != "elephants-bluff"), encoding="utf-8")
            command = install_here(wheel, constraints)
            here, here_s = read_here(command, args.frames, names)
            groups = [g for g in (instance_group(folder) for folder in args.groups) if g is not None]
            for frames, group_names, instance in groups:
                here_group, group_s = read_here(command, frames, group_names, instance)
                here.update(here_group)
                here_s += group_s
            pi, times, versions_pi = read_on_pi(base, args.frames, names, wheel, constraints, groups, args.cpu)
        for _, group_names, _ in groups:
            names = names + group_names  # every group is compared frame by frame
        mismatch = [f"{k} {versions_here.get(k)} here, {versions_pi.get(k)} on the Pi" for k in READING_STACK if versions_here.get(k) != versions_pi.get(k)]
        if mismatch:
            raise PiError("the arm64 root does not have this machine's versions: " + "; ".join(mismatch))
        rows = compare(names, here, pi)
        result.update({
            "frames": len(rows), "equal": sum(r["equal"] for r in rows),
            "status_equal": sum(r["here"]["status"] == r["pi"]["status"] for r in rows),
            "reasons_equal": sum(r["reasons_equal"] for r in rows),
            "differ_while_ok_here": sum(not r["equal"] and r["here"]["status"] == "ok" for r in rows),
            "versions": {k: versions_here.get(k) for k in READING_STACK}, "python_here": sys.version.split()[0],
            "times_s": {"read_here": round(here_s, 1), **times, "total": round(time.monotonic() - started, 1)},
            "rows": rows,
        })
        for row in rows:
            if not row["equal"]:
                print(f"  differs: {row['file']}: {row['why']}")
            elif not row["reasons_equal"]:
                print(f"  reasons differ: {row['file']}: {row['here']['reasons']} here, {row['pi']['reasons']} on the Pi")
        write_result(args.output, result)
        if all(r["equal"] for r in rows) and args.frames == FRAMES and args.groups == list(GROUPS) and args.cpu == DEFAULT_CPU:  # the whole set
            TESTED_VERSIONS.write_text(tested_versions_text(versions_here, result["commit"], result["when"]), encoding="utf-8")
            print(f"pi-check: the reading stack's versions kept in {os.path.relpath(TESTED_VERSIONS, REPO)}")
        line = summary_line(rows)
        print(f"pi-check: {times['read_s']} s to read {len(rows)} frames in the arm64 root as a {PI_CPUS[args.cpu]} ({args.cpu}); the status agrees on {result['status_equal']}, the reasons on {result['reasons_equal']}; "
              f"result in {os.path.relpath(args.output, REPO)}")
        print(line)
        return 0 if all(r["equal"] for r in rows) else 1
    except (PiError, subprocess.SubprocessError, OSError) as exc:
        result.update({"error": str(exc), "times_s": {"total": round(time.monotonic() - started, 1)}})
        write_result(args.output, result)
        print(f"pi-check: {exc}", file=sys.stderr)
        print("pi-check: 0 of 0 frames equal (it could not finish)")
        return 1


if __name__ == "__main__":
    sys.exit(main())
