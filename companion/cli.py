"""The one command, ``elephants-bluff``, and its subcommands.

Each part of the project registers its own subcommands: the referee ``serve``
here, the dice reader ``read``, ``classify`` and ``calibrate`` in
``vision/commands.py``, and ``bench`` in ``companion/bench.py``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from companion import __version__
from companion.errors import ElephantsBluffError


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="elephants-bluff", description="Table companion for the dice game Elephants Bluff.")
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    serve = sub.add_parser("serve", help="serve the referee and its page")
    serve.add_argument("--simulate", action="store_true", help="run on the simulated table (rendered camera, gpiozero mock pins)")
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument("--port", type=int, default=8000)
    serve.add_argument("--instance", type=Path, default=Path("instance"), help="folder for config.toml, the game log and saved frames")
    serve.add_argument("--init", action="store_true", help="write config.toml with a random PIN if there is none, and print the PIN")
    serve.set_defaults(func=_serve)

    from companion import bench
    from vision import commands as vision_commands

    vision_commands.register(sub)
    bench.register(sub)
    return parser


def _serve(args: argparse.Namespace) -> int:
    from companion.server import serve

    return serve(args.instance, host=args.host, port=args.port, simulate=args.simulate, init=args.init)


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except ElephantsBluffError as exc:
        print(f"elephants-bluff: {exc.message}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
