"""Writes ``deploy/locked-versions.txt``: every distribution the project installs, at one version each.

``make lock`` runs it. It installs the project with its ``test`` and ``pi`` extras into a fresh
virtual environment (``build/lock-venv``), the reading stack held at ``deploy/pi/tested-versions.txt``
(what ``make pi-check`` read equal on arm64), and writes what pip chose. ``make venv`` (so CI) and
``deploy/install-pi.sh`` install with the list as pip constraints: a new release of Flask, pytest or
any library beneath them reaches neither the tests nor the Pi until someone runs ``make lock``,
then ``make test`` and ``make pi-rehearsal`` on it (docs/PI.md, "Every other dependency, locked").

Before it writes, it checks that a Pi can install what it locked: the runtime's and the ``pi`` extra's
requirements, resolved within the new pins for a Pi's Python 3.11 on aarch64, must all come as wheels
(``install-pi.sh`` builds nothing on the Pi), and every compiled library in them must load with a Pi 5's
16 KB pages; either failing stops it, the old list kept.

Only the standard library: it runs with the machine's own python3, before any venv exists.
"""

from __future__ import annotations

import subprocess
import sys
import time
import tomllib
import zipfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent / "pi"))
from common import PI5_PAGE_SIZE, aarch64_download_argv, library_page_misfits  # noqa: E402  (standard library only)

REPO = Path(__file__).resolve().parents[1]
TESTED_VERSIONS = REPO / "deploy" / "pi" / "tested-versions.txt"
LOCKED_VERSIONS = REPO / "deploy" / "locked-versions.txt"
LOCK_VENV = REPO / "build" / "lock-venv"
#: where the check's aarch64 wheels are downloaded (pip's cache keeps them between runs)
PI_WHEELS = REPO / "build" / "lock-aarch64-wheels"
#: The extras whose dependencies are locked: the tests' tools and the Pi's camera helper (training's PyTorch is not).
EXTRAS = "test,pi"


def header(commit: str, at: str) -> str:
    return (
        "# Every distribution the project installs (its runtime, the `test` and `pi` extras, pip), one version each,\n"
        "# the reading stack at deploy/pi/tested-versions.txt. Written by `make lock` (deploy/lock_versions.py) on\n"
        f"# commit {commit}, {at}. `make venv` (so CI) and deploy/install-pi.sh install with it as pip constraints.\n"
        "# To move: edit pyproject.toml's ranges (or the tested versions), run make lock, make test and make pi-rehearsal.\n"
    )


def locked_text(freeze: str, commit: str, at: str) -> str:
    """The file's text from ``pip freeze``'s output: the pins sorted by name, pip's own lines and notes left out.

    >>> print(locked_text("Flask==3.1.3\\nnumpy==2.4.6\\n# a note\\n", "abc1234", "2026-12-02T12:00:00Z").splitlines()[-2:])
    ['Flask==3.1.3', 'numpy==2.4.6']
    """
    pins = sorted((line.strip() for line in freeze.splitlines() if "==" in line and not line.startswith("#")), key=str.lower)
    return header(commit, at) + "".join(pin + "\n" for pin in pins)


def pi_requirements(pyproject: Path = REPO / "pyproject.toml") -> list[str]:
    """What ``install-pi.sh`` installs besides the project itself: its runtime requirements and the ``pi`` extra."""
    project = tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]
    return [*project["dependencies"], *project["optional-dependencies"]["pi"]]


def check_the_pi_can_install(locked: Path) -> int:
    """Resolves the Pi's requirements within ``locked`` as aarch64 wheels only; exits with pip's words if it cannot.
    Returns how many wheels the Pi would install."""
    subprocess.run(["rm", "-rf", str(PI_WHEELS)], check=True)
    argv = [*aarch64_download_argv(PI_WHEELS), "-c", str(TESTED_VERSIONS), "-c", str(locked), *pi_requirements()]
    out = subprocess.run(argv, capture_output=True, text=True)
    if out.returncode != 0:
        said = "\n".join(line for line in out.stderr.splitlines() if line.strip() and not line.startswith("WARNING:"))
        sys.exit("lock: a Raspberry Pi could not install these versions (no aarch64 wheel for one of them, or they "
                 f"conflict); deploy/locked-versions.txt was left as it was. pip said:\n{said[-1500:]}")
    wheels = sorted(PI_WHEELS.glob("*.whl"))
    misfit = wheels_misfit_for_pages(wheels)
    if misfit:
        sys.exit("lock: these libraries would not load on a Raspberry Pi 5 (16 KB pages), so the versions were not locked "
                 "and deploy/locked-versions.txt was left as it was: " + "; ".join(f"{n} ({why[0]})" for n, why in misfit.items()))
    return len(wheels)


def wheels_misfit_for_pages(wheels: list[Path], page_size: int = PI5_PAGE_SIZE) -> dict[str, list[str]]:
    """The compiled libraries in ``wheels`` the loader would refuse with ``page_size``-byte pages, by wheel and file."""
    misfit: dict[str, list[str]] = {}
    for wheel in wheels:
        with zipfile.ZipFile(wheel) as z:
            for name in z.namelist():
                if ".so" not in name.rsplit("/", 1)[-1]:
                    continue
                with z.open(name) as f:
                    why = library_page_misfits(f, page_size)
                if why:
                    misfit[f"{wheel.name}: {name}"] = why
    return misfit


def run(argv: list[str]) -> str:
    out = subprocess.run(argv, capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"lock: {' '.join(argv[:4])} ... failed:\n{out.stderr.strip()[-1500:]}")
    return out.stdout


def main() -> None:
    subprocess.run(["rm", "-rf", str(LOCK_VENV)], check=True)
    run([sys.executable, "-m", "venv", str(LOCK_VENV)])
    python = str(LOCK_VENV / "bin" / "python")
    # setuptools too: the venv seeds an old one, which would otherwise be locked (colorzero names it).
    run([python, "-m", "pip", "install", "--quiet", "--upgrade", "pip", "setuptools"])
    run([python, "-m", "pip", "install", "--quiet", f"{REPO}[{EXTRAS}]", "--constraint", str(TESTED_VERSIONS)])
    freeze = run([python, "-m", "pip", "freeze", "--all", "--exclude", "elephants-bluff"])
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True, text=True).stdout.strip() or "unknown"
    text = locked_text(freeze, commit, time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()))
    tmp = LOCKED_VERSIONS.with_suffix(".tmp")
    tmp.write_text(text, encoding="utf-8")
    try:
        wheels = check_the_pi_can_install(tmp)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    tmp.replace(LOCKED_VERSIONS)
    print(f"lock: {text.count('==')} distributions written to {LOCKED_VERSIONS.relative_to(REPO)}; "
          f"a Pi installs {wheels} of them, each an aarch64 or pure-Python wheel")


if __name__ == "__main__":
    main()
