"""Safe mode: what ``serve`` runs when the companion cannot start.

A broken or half-written ``config.toml`` or a damaged game log must not leave
the table with a dead tablet and a traceback on a screen nobody sees. Instead
the server starts this small app: its page says what is wrong and where (the
file, the setting, why, and what to do), ``/api/health`` answers 503 with the
same facts as JSON, and every other ``/api/`` route answers 503. Nothing can
be played and nothing is written: the broken file is left for a person to fix.

>>> from companion.core.errors import SettingsError
>>> app = create_safe_app(SettingsError("/srv/eb/config.toml", "game.path_length", "must be a whole number, not 'seven'"))
>>> r = app.test_client().get("/api/health")
>>> r.status_code, r.json["setting"]
(503, 'game.path_length')
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from flask import Flask, jsonify, render_template_string, request

from companion import __version__
from companion.core.errors import ElephantsBluffError, InstanceFileError, SettingsError, StoreError
from companion.app.settings import APP_SETTINGS, PIN_ENV

_PAGE = """<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Elephants Bluff: safe mode</title></head>
<body>
<h1>The companion is in safe mode</h1>
<p><strong>{{ headline }}</strong></p>
<dl>
{% if file %}<dt>File</dt><dd><code>{{ file }}</code></dd>{% endif %}
{% if setting %}<dt>Setting</dt><dd><code>{{ setting }}</code></dd>{% endif %}
<dt>What is wrong</dt><dd>{{ why }}</dd>
<dt>What to do</dt><dd>{{ todo }}</dd>
</dl>
<p>No game can be played until this is fixed. Nothing was changed.</p>
</body>
</html>
"""


def describe(problem: ElephantsBluffError, file: str | None = None) -> dict[str, Any]:
    """The facts shown by the page and ``/api/health``."""
    if isinstance(problem, SettingsError) and problem.path == PIN_ENV:
        return {
            "error": "bad_setting",
            "headline": f"The environment variable {PIN_ENV} is wrong",
            "file": None,
            "setting": PIN_ENV,
            "why": problem.why,
            "todo": f"Fix {PIN_ENV} where the companion is started (or unset it to use table.pin), then restart the companion.",
            "message": problem.message,
        }
    if isinstance(problem, SettingsError):
        return {
            "error": "bad_setting",
            "headline": "A setting in the settings file is wrong" if problem.key else "The settings file cannot be read",
            "file": problem.path,
            "setting": problem.key,
            "why": problem.why,
            "todo": "Fix it in that file (or delete the line to use its default), then restart the companion.",
            "message": problem.message,
        }
    if isinstance(problem, InstanceFileError):
        return {
            "error": "bad_file",
            "headline": "A file of the companion cannot be used",
            "file": problem.path,
            "setting": None,
            "why": problem.why,
            "todo": problem.todo,
            "message": problem.message,
        }
    if isinstance(problem, StoreError):
        return {
            "error": "bad_game_log",
            "headline": "The card the game log is on is full" if problem.code == "no_room" else "The game log cannot be used",
            "file": file,
            "setting": "storage.database",
            "why": problem.message,
            "todo": problem.todo or "Move the file away to start a fresh log, or put a backup in its place, or run `elephants-bluff doctor --repair` (it copies the file aside and recovers every game it can read), then restart the companion.",
            "message": problem.message,
        }
    return {"error": problem.code, "headline": "The companion cannot start", "file": None, "setting": None, "why": problem.message, "todo": "Fix it, then restart the companion.", "message": problem.message}


def _within(instance: Path | None, facts: dict[str, Any]) -> dict[str, Any]:
    """The facts with the instance folder's absolute path left out (they are shown to anyone on the network)."""
    if instance is None:
        return facts
    prefix = str(instance).rstrip("/") + "/"
    return {k: v.replace(prefix, "") if isinstance(v, str) else v for k, v in facts.items()}


def create_safe_app(problem: ElephantsBluffError, file: str | None = None, *, instance: Path | None = None) -> Flask:
    """A page and a 503 JSON API that say what stops the companion from starting (``file``: where, within ``instance``)."""
    from companion.app.web import _trusted_hosts
    from companion.app.web.security import install_security

    facts = _within(instance, describe(problem, file))
    app = Flask(__name__)
    app.config.update(EB_TRUSTED_HOSTS=_trusted_hosts(next(s.default for s in APP_SETTINGS if s.key == "server.trusted_hosts")), EB_SAFE_MODE=facts)
    install_security(app)
    body = {"status": "safe_mode", "version": __version__, **{k: facts[k] for k in ("error", "message", "file", "setting", "why", "todo")}}

    @app.errorhandler(ElephantsBluffError)
    def _our_error(exc: ElephantsBluffError):  # noqa: ANN202 - the Host check
        response = jsonify(exc.to_json())
        response.status_code = exc.status
        return response

    @app.route("/", defaults={"path": ""}, methods=["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"])
    @app.route("/<path:path>", methods=["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"])
    def _everything(path: str):  # noqa: ANN202
        if request.path.startswith("/api/"):
            response = jsonify(body)
        else:
            response = app.response_class(render_template_string(_PAGE, **facts), mimetype="text/html")
        response.status_code = 503
        response.headers["Retry-After"] = "30"
        return response

    return app
