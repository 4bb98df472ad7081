"""``elephants-bluff serve``: the companion behind waitress, a production WSGI server.

Never Flask's development server, never debug mode. One waitress thread per
live viewer is needed by the SSE stream, so the thread count is a setting.
"""

from __future__ import annotations

import errno
import logging
import os
import socket
import signal
import sys
from pathlib import Path

from companion.core.errors import ElephantsBluffError, InstanceFileError, SettingsError, StoreError
from companion.app.allocator import limit_malloc_arenas
from companion.app.settings import CONFIG_NAME, PIN_ENV, Settings, init_config


def stop_cleanly_on_sigterm() -> None:
    """systemd (and ``kill``) stop the service with SIGTERM: close the camera,
    the pins and the log as Ctrl-C does, instead of dying mid-way."""

    def _raise(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, _raise)


#: What the API needs, and no more: its largest body is a game's set-up (Flask
#: refuses over 64 KiB too); the headers hold a cookie and a PIN. The body
#: buffer stays in memory up to twice that (``inbuf_overflow``), so no request
#: is ever spooled to a temporary file.
REQUEST_SIZES = {"max_request_body_size": 64 * 1024, "max_request_header_size": 16 * 1024, "inbuf_overflow": 128 * 1024}


def connection_limits(settings: Settings):  # noqa: ANN201 - ConnectionLimits, imported late with waitress
    """The ``server.*`` connection settings; the reserved share must leave room for guests."""
    from companion.app.connections import ConnectionLimits

    total, reserved = settings["server.max_connections"], settings["server.reserved_connections"]
    if reserved > total - 10:
        raise SettingsError(str(settings.path or CONFIG_NAME), "server.reserved_connections", f"must leave at least 10 of server.max_connections ({total}) to viewers, not {reserved}")
    return ConnectionLimits(total=total, reserved=reserved, per_address=settings["server.connections_per_address"], header_timeout=float(settings["server.header_timeout_s"]), body_timeout=float(settings["server.body_timeout_s"]))


def port_problem(exc: OSError, host: str, port: int) -> str:
    """One sentence for a port the companion cannot listen on, and how to choose another."""
    if exc.errno == errno.EADDRINUSE:
        return f"port {port} is already in use on {host or 'this computer'} (another companion, or another program): stop it, or start on another port with --port {port + 1} (make run PORT={port + 1})."
    if exc.errno == errno.EACCES:
        return f"port {port} needs administrator rights on {host or 'this computer'}: use a port above 1023, like --port 8000 (make run PORT=8000)."
    if exc.errno == errno.EADDRNOTAVAIL:
        return f"{host} is not an address of this computer: use --host 0.0.0.0 (every network) or 127.0.0.1 (this computer only)."
    return f"cannot listen on {host}:{port} ({exc.strerror or exc}): choose another with --host and --port."


def lan_addresses() -> list[str]:
    """This computer's address on the local network (the one its default route uses), if it has one.

    Connecting a UDP socket sends nothing; it only picks the outgoing interface.
    """
    found = []
    for probe in ("192.0.2.1", "10.255.255.255"):
        try:
            with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
                s.connect((probe, 9))
                address = s.getsockname()[0]
        except OSError:
            continue
        if address and not address.startswith("127.") and address != "0.0.0.0" and address not in found:
            found.append(address)
    return found


def print_ready(mode: str, host: str, port: int, new_pin: tuple[str, Path] | None) -> None:
    """The last lines of a start: where to open the page (this computer, a tablet on the same
    network) and, on the first start only, the table PIN."""
    local = host in ("127.0.0.1", "localhost", "::1")
    shown_host = "127.0.0.1" if host in ("0.0.0.0", "", "::") else host
    lines = [f"Elephants Bluff companion on {mode}: http://{shown_host}:{port}/"]
    if host in ("0.0.0.0", "", "::"):
        lines += [f"  From a tablet or phone on the same network: http://{address}:{port}/" for address in lan_addresses()]
    elif local:
        lines.append("  Only this computer can open it: start with --host 0.0.0.0 (make run HOST=0.0.0.0) to open it from a tablet on the same network.")
    if new_pin is not None:
        lines += [f"  The table PIN is shown this once; it is kept in {new_pin[1]}.", f"Table PIN: {new_pin[0]}"]
    print("\n".join(lines), flush=True)


def serve(instance: Path, *, host: str, port: int, simulate: bool, init: bool) -> int:
    limit_malloc_arenas()
    stop_cleanly_on_sigterm()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    instance = instance.resolve()
    if instance.exists() and not instance.is_dir():
        print(f"{instance} is a file, not the instance folder: name a folder (a new one is made with --init).", file=sys.stderr)
        return 2
    new_pin = None
    if init:
        path, created = init_config(instance)
        if created and os.environ.get(PIN_ENV):
            # the file's random PIN is not the one in force: printing it showed a PIN the table then refused
            print(f"Wrote the settings: {path}. The table PIN is the one set in {PIN_ENV}, which overrides the file's.", flush=True)
        elif created:
            # The only time the PIN is printed (last, under the address): a service's log is kept and may be read by others.
            print(f"Wrote the settings with a new random table PIN: {path}", flush=True)
            new_pin = (Settings.load(path, environ={})["table.pin"], path)
    config = instance / CONFIG_NAME
    if not config.exists() and not os.environ.get(PIN_ENV):
        # A first start at a terminal, not damage: say how, and stop (2; RestartPreventExitStatus=2 in the unit).
        print(f"No table PIN is set: start once with --init to write {config} with a new PIN, or set {PIN_ENV}.", file=sys.stderr)
        return 2
    held = hold_instance(instance)
    if isinstance(held, str):
        print(held, file=sys.stderr, flush=True)
        return 2
    try:
        return _serve_held(instance, config, host=host, port=port, simulate=simulate, new_pin=new_pin)
    finally:
        if held is not None:
            held.close()  # the lock goes with it


def _serve_held(instance: Path, config: Path, *, host: str, port: int, simulate: bool, new_pin: tuple[str, Path] | None) -> int:
    """``serve`` once the instance is this process's: its settings, its app, and the server until it stops."""
    try:
        settings = Settings.load(config)
        if not settings["table.pin"]:
            empty = config.is_file() and not config.read_text(encoding="utf-8", errors="replace").strip()
            why = "is empty (the file was cut short?)" if empty else "is not set"
            raise SettingsError(str(config), "table.pin", f"{why}: set table.pin in the file, or {PIN_ENV}, or delete the file and start with --init")
    except SettingsError as exc:
        return _serve_safe_mode(exc, None, host=host, port=port, instance=instance)

    from companion.app.connections import create_guarded_server
    from companion.app.web import close_app, create_app

    try:
        limits = connection_limits(settings)
        app = create_app(instance, simulate=simulate, settings=settings)
    except (SettingsError, StoreError, InstanceFileError) as exc:
        where = str(instance / settings["storage.database"]) if isinstance(exc, StoreError) else None
        return _serve_safe_mode(exc, where, host=host, port=port, instance=instance)
    app.debug = False
    threads = max(2, int(os.environ.get("ELEPHANTS_BLUFF_THREADS", "96")))
    # Each live viewer holds a thread: keep some for the table's actions.
    app.config["EB_MAX_VIEWERS"] = threads - max(1, min(16, threads // 4))
    # The lookahead keeps waitress reading a streaming client's socket, so a viewer
    # who left is noticed (waitress.client_disconnected) and its thread freed.
    try:
        server = create_guarded_server(
            app,
            limits=limits,
            host=host,
            port=port,
            threads=threads,
            channel_timeout=60,
            channel_request_lookahead=1,
            ident="elephants-bluff",
            **REQUEST_SIZES,
        )
    except OSError as exc:
        close_app(app)
        print(f"elephants-bluff: {port_problem(exc, host, port)}", file=sys.stderr, flush=True)
        if new_pin is not None:  # the settings were written: the next start, on a free port, no longer shows the PIN
            print(f"The table PIN, kept in {new_pin[1]}, is shown this once: Table PIN: {new_pin[0]}", flush=True)
        return 1
    mode = "the simulated table" if simulate else "the real table"
    print_ready(mode, host, server.effective_port, new_pin)
    try:
        server.run()
    except KeyboardInterrupt:
        pass
    finally:
        close_app(app)
    return 0


#: the file in the instance folder that a running companion holds locked (``hold_instance``)
LOCK_NAME = ".companion.lock"


def hold_instance(instance: Path):  # noqa: ANN201 - the open lock file, or why not
    """Lock the instance for this process: the open lock file, held until the process ends, or a sentence saying
    another companion runs on it. Two on one log each kept their own idea of the games: the second showed a game that
    had moved on and answered every action "someone else acted, retry" for good, and its start tidied the first's
    photos folder under it. An instance that cannot hold the file (a read-only card) starts without it: its own
    checks say what is wrong."""
    import fcntl

    try:
        instance.mkdir(parents=True, exist_ok=True)
        handle = open(instance / LOCK_NAME, "a+", encoding="utf-8")  # noqa: SIM115 - held open for the process's life
    except OSError:
        return None
    try:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        handle.seek(0)
        who = handle.read().strip()
        handle.close()
        return (f"Another companion is already running on {instance}{f' (process {who})' if who.isdigit() else ''}: "
                "stop it first (sudo systemctl stop elephants-bluff, or Ctrl+C where it runs), or start this one with another --instance.")
    except OSError:
        return handle
    try:
        handle.seek(0)
        handle.truncate()
        handle.write(str(os.getpid()))
        handle.flush()
    except OSError:
        pass
    return handle


def _serve_safe_mode(problem: ElephantsBluffError, file: str | None, *, host: str, port: int, instance: Path | None = None) -> int:
    """The companion cannot start: serve a page that says why and where (``web/safe_mode.py``).

    The log (stderr) names the file in full; the page and ``/api/health``,
    which anyone on the network may read, name it within the instance folder.
    """
    from waitress import create_server

    from companion.app.web.safe_mode import create_safe_app

    print(f"elephants-bluff: {problem.message}", file=sys.stderr, flush=True)
    app = create_safe_app(problem, file, instance=instance)
    app.debug = False
    try:
        server = create_server(app, host=host, port=port, threads=4, channel_timeout=60, ident="elephants-bluff", **REQUEST_SIZES)
    except OSError as exc:
        print(f"elephants-bluff: {port_problem(exc, host, port)}", file=sys.stderr, flush=True)
        return 1
    shown_host = "127.0.0.1" if host in ("0.0.0.0", "") else host
    print(f"Elephants Bluff companion in SAFE MODE (nothing can be played until this is fixed): http://{shown_host}:{server.effective_port}/", flush=True)
    try:
        server.run()
    except KeyboardInterrupt:
        pass
    # Stopped on purpose (SIGTERM from systemctl stop, a reboot, instance.sh; or Ctrl+C): a clean
    # exit, as the normal server's. With 2 every stop left the unit "failed (Result: exit-code)".
    return 0
