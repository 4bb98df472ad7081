"""The reader's subcommands: ``read``, ``classify``, ``calibrate``.

Placeholder until the dice reader lands (issue: the dice reader); each says so
and exits 2 rather than pretending to read.
"""

from __future__ import annotations

import argparse
import sys


def register(sub: argparse._SubParsersAction) -> None:
    for name, helptext in (("read", "read every die in each image"), ("classify", "classify one die crop per image"), ("calibrate", "check and lock the real camera")):
        p = sub.add_parser(name, help=helptext)
        p.add_argument("files", nargs="*")
        p.add_argument("--json", action="store_true")
        p.set_defaults(func=_not_built)


def _not_built(args: argparse.Namespace) -> int:
    print(f"elephants-bluff {args.command}: the dice reader is not built yet", file=sys.stderr)
    return 2
