"""``elephants-bluff serve``: the companion behind waitress, a production WSGI server.

Never Flask's development server, never debug mode. One waitress thread per
live viewer is needed by the SSE stream, so the thread count is a setting.
"""

from __future__ import annotations

import logging
import os
import sys
from pathlib import Path

from companion.errors import ElephantsBluffError, SettingsError, StoreError
from companion.settings import CONFIG_NAME, PIN_ENV, Settings, init_config


def _limit_malloc_arenas(arenas: int = 2) -> None:
    """Few glibc malloc arenas: every thread that touched a camera frame kept its own.

    Each Bluff's capture runs on short-lived threads and handles several MB of
    frame; glibc gives threads their own arenas (up to 8 per core) and keeps
    their freed memory. Under the load bench the server held 330-430 MiB with
    the default and 165 MiB with 2 arenas, with the same latency. No-op off glibc.
    """
    try:
        import ctypes

        libc = ctypes.CDLL("libc.so.6")
        libc.mallopt(-8, arenas)  # M_ARENA_MAX
    except (OSError, AttributeError):
        pass


def serve(instance: Path, *, host: str, port: int, simulate: bool, init: bool) -> int:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    if "MALLOC_ARENA_MAX" not in os.environ:
        _limit_malloc_arenas()
    instance = instance.resolve()
    if init:
        path, created = init_config(instance)
        if created:
            print(f"Wrote the settings with a new random table PIN: {path}")
    try:
        settings = Settings.load(instance / CONFIG_NAME)
    except SettingsError as exc:
        return _serve_safe_mode(exc, None, host=host, port=port)
    if not settings["table.pin"]:
        print(f"No table PIN is set: set table.pin in {instance / CONFIG_NAME}, or {PIN_ENV}, or start with --init.", file=sys.stderr)
        return 2

    from waitress import create_server

    from companion.web import create_app

    try:
        app = create_app(instance, simulate=simulate, settings=settings)
    except (SettingsError, StoreError) as exc:
        where = str(instance / settings["storage.database"]) if isinstance(exc, StoreError) else None
        return _serve_safe_mode(exc, where, host=host, port=port)
    app.debug = False
    threads = max(2, int(os.environ.get("ELEPHANTS_BLUFF_THREADS", "96")))
    # Each live viewer holds a thread: keep some for the table's actions.
    app.config["EB_MAX_VIEWERS"] = threads - max(1, min(16, threads // 4))
    # The lookahead keeps waitress reading a streaming client's socket, so a viewer
    # who left is noticed (waitress.client_disconnected) and its thread freed.
    server = create_server(app, host=host, port=port, threads=threads, channel_timeout=60, channel_request_lookahead=1, ident="elephants-bluff")
    shown_host = "127.0.0.1" if host in ("0.0.0.0", "") else host
    mode = "the simulated table" if simulate else "the real table"
    print(f"Elephants Bluff companion on {mode}: http://{shown_host}:{server.effective_port}/", flush=True)
    print(f"Table PIN: {settings['table.pin']}", flush=True)
    try:
        server.run()
    except KeyboardInterrupt:
        pass
    finally:
        app.extensions["elephants_bluff"].close()
    return 0


def _serve_safe_mode(problem: ElephantsBluffError, file: str | None, *, host: str, port: int) -> int:
    """The companion cannot start: serve a page that says why and where (``web/safe_mode.py``)."""
    from waitress import create_server

    from companion.web.safe_mode import create_safe_app

    print(f"elephants-bluff: {problem.message}", file=sys.stderr, flush=True)
    app = create_safe_app(problem, file)
    app.debug = False
    server = create_server(app, host=host, port=port, threads=4, channel_timeout=60, ident="elephants-bluff")
    shown_host = "127.0.0.1" if host in ("0.0.0.0", "") else host
    print(f"Elephants Bluff companion in SAFE MODE (nothing can be played until this is fixed): http://{shown_host}:{server.effective_port}/", flush=True)
    try:
        server.run()
    except KeyboardInterrupt:
        pass
    return 2
