"""``elephants-bluff bench``: the project's figures as one JSON report.

Each area adds a function to ``BENCHES``; ``--full`` runs the long forms
(``make bench``), the default runs the short ones.
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import time
from typing import Any, Callable

BENCHES: dict[str, Callable[[bool], dict[str, Any]]] = {}


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("bench", help="print the project's figures as JSON")
    p.add_argument("--full", action="store_true", help="the long forms (make bench)")
    p.add_argument("--only", action="append", default=[], help="run only this bench (repeatable)")
    p.add_argument("--output", help="also write the report to this file")
    p.set_defaults(func=run)


def _load_benches() -> None:
    """Import the modules that register benches (kept lazy: they pull in heavy deps)."""
    import importlib

    for name in ("vision.bench", "companion.load_bench", "firmware.bench"):
        try:
            importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name != name:
                raise


def run(args: argparse.Namespace) -> int:
    _load_benches()
    report: dict[str, Any] = {
        "machine": {"python": platform.python_version(), "platform": platform.platform(), "processor": platform.machine(), "cpus": __import__("os").cpu_count()},
        "taken_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }
    for name, bench in BENCHES.items():
        if args.only and name not in args.only:
            continue
        print(f"bench: {name} ...", file=sys.stderr)
        report[name] = bench(args.full)
    text = json.dumps(report, indent=2)
    print(text)
    if args.output:
        with open(args.output, "w", encoding="utf-8") as f:
            f.write(text + "\n")
    return 0
