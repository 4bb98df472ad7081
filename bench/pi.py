"""``bench --only pi``: the last ``make pi-check`` and ``make pi-rehearsal`` results, as recorded.

Both run for many minutes under qemu, so ``make bench`` does not run them: it
reports what they last wrote (``docs/pi-check-latest.json``, the Pi 5's
``docs/pi-check-pi5-latest.json``, ``docs/pi-rehearsal-latest.json``), with the commit and the time each took.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from bench.report import BENCHES

DOCS = Path(__file__).resolve().parents[1] / "docs"


def _recorded(name: str, keys: tuple[str, ...]) -> dict[str, Any] | str:
    path = DOCS / name
    if not path.is_file():
        return f"not run yet: {path.name} is missing"
    data = json.loads(path.read_text(encoding="utf-8"))
    return {k: data.get(k) for k in keys}


def _check(name: str) -> dict[str, Any] | str:
    check = _recorded(name, ("when", "commit", "cpu", "frames", "equal", "status_equal", "times_s"))
    if isinstance(check, dict) and isinstance(check.get("frames"), int) and isinstance(check.get("equal"), int):
        check["differ"] = check["frames"] - check["equal"]  # the goal: none, however many frames the set holds
    return check


def bench_pi(full: bool) -> dict[str, Any]:
    return {
        "pi_check": _check("pi-check-latest.json"),  # played as a Pi 4
        "pi_check_pi5": _check("pi-check-pi5-latest.json"),  # make pi-check PI_CPU=cortex-a76
        "pi_rehearsal": _recorded("pi-rehearsal-latest.json", ("when", "commit", "passed", "steps_total", "total_s", "install_s", "update_install_s")),
    }


BENCHES["pi"] = bench_pi
