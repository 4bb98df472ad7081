"""The Flask application factory (flaskr's ``create_app``) and its blueprints."""

from __future__ import annotations

import errno
import secrets
import socket
from pathlib import Path
from typing import Any

from flask import Flask, jsonify, request
from werkzeug.exceptions import HTTPException

from companion import __version__
from companion.app.settings import CONFIG_NAME, Settings
from companion.core.errors import ElephantsBluffError, InstanceFileError, InsufficientStorage
from companion.core.files import atomic_write


def create_app(instance_path: str | Path | None = None, *, simulate: bool = False, settings: Settings | None = None, test_config: dict[str, Any] | None = None, services: Any = None, dice_source: Any = None) -> Flask:
    """Build the companion's app on an instance folder (settings, game log, frames).

    >>> import tempfile
    >>> app = create_app(tempfile.mkdtemp(), simulate=True, test_config={"TESTING": True})
    >>> app.test_client().get("/api/health").json["status"]
    'ok'
    >>> close_app(app)  # what it opened, closed
    """
    instance = Path(instance_path or "instance").resolve()
    instance.mkdir(parents=True, exist_ok=True)
    app = Flask(__name__, instance_path=str(instance), instance_relative_config=True)
    if settings is None:
        settings = Settings.load(instance / CONFIG_NAME)
    app.config.update(
        SECRET_KEY=_secret_key(instance),
        SESSION_COOKIE_HTTPONLY=True,
        SESSION_COOKIE_SAMESITE="Strict",
        SESSION_COOKIE_NAME="eb_flask",  # unused: the PIN's session is companion/app/auth.py's eb_session
        MAX_CONTENT_LENGTH=64 * 1024,
        EB_TRUSTED_HOSTS=_trusted_hosts(settings["server.trusted_hosts"]),
        VERSION=__version__,
    )
    app.json.sort_keys = False  # keep the documented field order
    if test_config:
        app.config.update(test_config)
    if services is None:
        from companion.app.services import build_services

        services = build_services(instance, settings, simulate=simulate, dice_source=dice_source)
    app.extensions["elephants_bluff"] = services
    if services.model_follower is None:
        from companion.app.teach.follow import follow_models

        services.model_follower = follow_models(services)  # a terminal's teach or rollback reaches the running reader

    from companion.app.web import api, events, pages, sim
    from companion.app.web.security import install_security

    install_security(app, instance)
    app.register_blueprint(api.bp)
    app.register_blueprint(events.bp)
    app.register_blueprint(sim.bp)
    app.register_blueprint(pages.bp)
    from companion.app.web import setup_api, teach_api

    app.register_blueprint(teach_api.bp)
    app.register_blueprint(setup_api.bp)

    @app.errorhandler(ElephantsBluffError)
    def _our_error(exc: ElephantsBluffError):  # noqa: ANN202
        response = jsonify(exc.to_json())
        response.status_code = exc.status
        return response

    @app.errorhandler(OSError)
    def _file_error(exc: OSError):  # noqa: ANN202
        """A write the card refused, said in words: a full card is the 507 the game log's own refusals are (the
        set-up's shots and the empty tray's photo met it as the framework's "internal error"); any other file error
        is a 500 naming it. The game log's writes say this themselves; this is for the files beside it."""
        if isinstance(exc, ElephantsBluffError):
            return _our_error(exc)
        if exc.errno == errno.ENOSPC:
            return _our_error(InsufficientStorage("The companion's disk is full, so this could not be saved. Free some space (old Bluff photos can go) and try again."))
        app.logger.exception("a file could not be read or written")
        if exc.errno == errno.EROFS:  # a failing card is remounted read-only by the kernel
            words = "The companion's card has turned read-only (a card that fails does), so this could not be saved: copy the instance folder off it and use another card."
        else:
            words = f"The companion could not read or write one of its files ({exc.strerror or exc}). Try again; if it happens again, run `elephants-bluff doctor`."
        response = jsonify({"error": "file_error", "message": words})
        response.status_code = 500
        return response

    @app.errorhandler(HTTPException)
    def _http_error(exc: HTTPException):  # noqa: ANN202
        if not request.path.startswith("/api/"):
            return exc
        words = {404: "There is nothing at this address.", 405: "This address does not take that kind of request.", 413: "The request is too large.", 400: "The request could not be understood."}
        response = jsonify({"error": (exc.name or "error").lower().replace(" ", "_"), "message": words.get(exc.code or 0, exc.description or "The request failed.")})
        response.status_code = exc.code or 500
        return response

    return app


def close_app(app: Flask) -> None:
    """Close what ``create_app`` opened: the table, the camera and the game log, then the devices' sessions and the
    wrong-PIN budget (both in ``auth.sqlite3``). Closed, not left to the interpreter's exit, so each SQLite file is
    whole on its own when the service is stopped (no ``-wal`` or ``-shm`` beside it for a backup to miss)."""
    try:
        app.extensions["elephants_bluff"].close()
    finally:
        for part in (app.extensions.get("eb_auth"), getattr(app.extensions.get("eb_limiter"), "storage", None)):
            if part is not None:
                part.close()


def _secret_key(instance: Path) -> bytes:
    """A random key kept in the instance folder, so sessions survive a restart."""
    path = instance / "secret_key"
    if path.is_dir():  # safe mode says so, naming the file (server.serve)
        raise InstanceFileError(str(path), "is a folder, not the key that keeps the devices' sessions",
                                "Move it away and restart the companion: a new key is made, and every device types the PIN again.")
    if not path.exists():
        atomic_write(path, secrets.token_bytes(32), mode=0o600)
    return path.read_bytes()


def _trusted_hosts(configured: list[str]) -> list[str] | None:
    """The configured names plus this machine's own name, so a tablet can use either."""
    if "*" in configured:
        return None
    hosts = set(configured) | {"localhost", "127.0.0.1", "[::1]"}
    name = socket.gethostname()
    hosts |= {name, f"{name}.local"}
    try:
        hosts |= {info[4][0] for info in socket.getaddrinfo(name, None)}
    except OSError:
        pass
    return sorted(hosts)
