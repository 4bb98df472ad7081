"""Writes ``deploy/locked-versions.txt``: every distribution the project installs, at one version each.

``make lock`` runs it. It installs the project with its ``test`` and ``pi`` extras into a fresh
virtual environment (``build/lock-venv``), the reading stack held at ``deploy/pi/tested-versions.txt``
(what ``make pi-check`` read equal on arm64), and writes what pip chose. ``make venv`` (so CI) and
``deploy/install-pi.sh`` install with the list as pip constraints: a new release of Flask, pytest or
any library beneath them reaches neither the tests nor the Pi until someone runs ``make lock``,
then ``make test`` and ``make pi-rehearsal`` on it (docs/PI.md, "The versions the Pi reads with").

Only the standard library: it runs with the machine's own python3, before any venv exists.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
TESTED_VERSIONS = REPO / "deploy" / "pi" / "tested-versions.txt"
LOCKED_VERSIONS = REPO / "deploy" / "locked-versions.txt"
LOCK_VENV = REPO / "build" / "lock-venv"
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
    tmp.replace(LOCKED_VERSIONS)
    print(f"lock: {text.count('==')} distributions written to {LOCKED_VERSIONS.relative_to(REPO)}")


if __name__ == "__main__":
    main()
