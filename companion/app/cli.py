"""The one command, ``elephants-bluff``, and its subcommands.

Each part of the project registers its own subcommands: the referee ``serve``
here, the dice reader ``read``, ``classify`` and ``calibrate`` in
``vision/commands.py``, and ``bench`` in ``bench/report.py``.
"""

from __future__ import annotations

import argparse
import errno
import os
import subprocess
import sys
from pathlib import Path

from companion import __version__
from companion.core.errors import ElephantsBluffError


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

    sessions = sub.add_parser("sessions", help="list the devices let in by the table PIN, or end their sessions")
    sessions.add_argument("action", choices=["list", "revoke"])
    sessions.add_argument("session_id", nargs="?", help="the session to end (from `sessions list`)")
    sessions.add_argument("--all", action="store_true", help="with revoke: end every session")
    sessions.add_argument("--instance", type=Path, default=Path("instance"))
    sessions.set_defaults(func=_sessions)

    doctor = sub.add_parser("doctor", help="check the settings, the game log and the sessions; --repair copies a damaged log aside and recovers what it can")
    doctor.add_argument("--instance", type=Path, default=Path("instance"))
    doctor.add_argument("--repair", action="store_true")
    doctor.set_defaults(func=_doctor)

    import companion.app.settings  # noqa: F401 - registers every setting an instance's config.toml may hold, for each command that reads one
    from companion.app import checks
    from firmware.lit_tray import LitTraySource
    from vision import commands as vision_commands

    vision_commands.register(sub, light_tray=LitTraySource)
    checks.register(sub)
    from companion.app.teach import commands as teach_commands

    teach_commands.register(sub)
    bench = sub.add_parser("bench", help="print the project's figures as JSON (a source checkout with the test extra: make bench)", add_help=False)
    bench.add_argument("bench_args", nargs=argparse.REMAINDER)
    bench.set_defaults(func=_bench)
    return parser


def _bench(args: argparse.Namespace) -> int:
    return _run_bench(args.bench_args)


def _run_bench(bench_args: list[str]) -> int:
    """Run ``python -m bench`` of the source checkout this package was installed from, if there is one.

    The benches are test tools, above the product, so the CLI starts them as a
    program instead of importing them.
    """
    checkout = Path(__file__).resolve().parents[2]
    if not (checkout / "bench" / "report.py").is_file():
        raise ElephantsBluffError("The benches are not part of the installed companion: run `make bench` in a source checkout.")
    return subprocess.call([sys.executable, "-m", "bench", *bench_args], cwd=checkout)


def _doctor(args: argparse.Namespace) -> int:
    from companion.app.doctor import doctor
    from companion.core.settings import require_instance

    require_instance(args.instance)
    return doctor(args.instance.resolve(), repair=args.repair)


def _sessions(args: argparse.Namespace) -> int:
    """``elephants-bluff sessions list | revoke ID | revoke --all``, on the instance's ``auth.sqlite3``."""
    from companion.app.auth import AUTH_NAME, AuthStore
    from companion.core.settings import require_instance

    require_instance(args.instance)
    path = args.instance / AUTH_NAME
    if not path.is_file():
        print(f"No device has been let in yet ({path} does not exist).")
        return 0
    store = AuthStore(path)
    try:
        if args.action == "list":
            listed = store.sessions()
            for s in listed:
                print(f"{s['id']}  let in {s['created_at']}  last seen {s['last_seen']}  ends {s['expires_at']}  {s['address']}  {s['device'][:60]}")
            print(f"{len(listed)} device(s) let in.")
            return 0
        if args.all:
            print(f"Ended {store.revoke_all()} session(s): every device types the PIN again.")
            return 0
        if not args.session_id:
            raise ElephantsBluffError("Name the session to end (see `elephants-bluff sessions list`), or give --all.")
        if not store.revoke(args.session_id):
            raise ElephantsBluffError(f"There is no session {args.session_id} (it may have ended already).")
        print(f"Ended session {args.session_id}.")
        return 0
    finally:
        store.close()


def _serve(args: argparse.Namespace) -> int:
    from companion.app.server import serve

    return serve(args.instance, host=args.host, port=args.port, simulate=args.simulate, init=args.init)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    try:
        if argv[:1] == ["bench"]:  # its options are the bench's own (python -m bench --help)
            return _run_bench(argv[1:])
        args = build_parser().parse_args(argv)
        status = int(args.func(args) or 0)
        sys.stdout.flush()  # a reader that left (``| head``) is met here, inside the try, not at exit
        return status
    except BrokenPipeError:
        # the output went to a pipe closed early: stop quietly as a program killed by SIGPIPE would, and keep
        # Python's flush at exit from printing a traceback into the terminal
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141
    except ElephantsBluffError as exc:
        print(f"elephants-bluff: {exc.message}", file=sys.stderr)
        return 2
    except OSError as exc:  # a file a command wrote or read that the card refused: words, not a traceback
        print(f"elephants-bluff: {file_error_words(exc)}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


def file_error_words(exc: OSError) -> str:
    """A file error a command met, said for the owner at the terminal: a full card and a card turned read-only with
    what to do, anything else with the system's words and the file. A command's writes are whole or not made
    (``core.files.atomic_write``), so what it was storing was not stored."""
    name = f" (writing {exc.filename})" if exc.filename else ""
    if exc.errno == errno.ENOSPC:
        return (f"the disk is full{name}, so nothing more was stored. Free some room (old Bluff photos in the instance's "
                "frames folder can go), then run the command again.")
    if exc.errno == errno.EROFS:
        return (f"the card has turned read-only{name}, as a card that fails does, so nothing more was stored: copy the "
                "instance folder off it and use another card.")
    return f"a file could not be read or written: {exc.strerror or exc}" + (f" ({exc.filename})." if exc.filename else ".")


if __name__ == "__main__":
    sys.exit(main())
