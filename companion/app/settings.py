"""The app's own settings (the table PIN, the game, storage, the server), and the whole set in force.

Importing this module registers the app's settings and, by importing their
packages, the reader's and the table's, so ``Settings.load`` here knows every
key a ``config.toml`` may hold. The types and the registry live in
``companion.core.settings``; they are re-exported for the app's convenience.
"""

from __future__ import annotations

import secrets
from pathlib import Path
from typing import Any

import companion.app.teach  # noqa: F401 - registers the settings of teaching the table's dice
import firmware.settings  # noqa: F401 - registers the table's settings
import vision.settings  # noqa: F401 - registers the camera's and reader's settings
from companion.core.settings import (
    CONFIG_NAME,
    Setting,
    Settings,
    all_settings,
    int_between,
    one_of,
    register_settings,
    render_config,
    write_config,
)

__all__ = ["APP_SETTINGS", "CONFIG_NAME", "PIN_ENV", "Setting", "Settings", "all_settings", "init_config", "int_between", "one_of", "render_config"]

PIN_ENV = "ELEPHANTS_BLUFF_PIN"


def _pin_check(v: Any) -> str | None:
    if v and not (4 <= len(v) <= 32 and v.isascii() and v.isprintable() and " " not in v):
        return "must be 4 to 32 letters or digits, without spaces"
    return None


APP_SETTINGS: list[Setting] = [
    Setting("table.pin", "", "The table PIN that every control action needs. Empty: `serve --init` writes a random one. ELEPHANTS_BLUFF_PIN overrides it.", _pin_check, secret=True, env=PIN_ENV),
    Setting("game.path_length", 7, "Squares on each elephant path; the last is the red square (RULES.md R2).", int_between(2, 30)),
    Setting("storage.frames_dir", "frames", "Where saved Bluff frames go, relative to the instance folder.", lambda v: None if v.strip() else "must name a folder"),
    Setting("storage.frames_keep", 1000, "How many Bluffs keep their photos; the oldest photos go first (the Bluff itself stays in the log).", int_between(1, 1_000_000)),
    Setting("storage.frames_days", 365, "Days a Bluff's photo is kept; 0 keeps photos whatever their age (storage.frames_keep still applies).", int_between(0, 100_000)),
    Setting("storage.database", "game-log.sqlite3", "The game log's SQLite file, relative to the instance folder.", lambda v: None if v.strip() else "must name a file"),
    Setting("server.max_connections", 200, "Open connections the companion keeps at most (waitress's own limit is set above it). See docs/SECURITY.md.", int_between(20, 5000)),
    Setting("server.reserved_connections", 40, "Of server.max_connections, how many only clients that showed the table PIN may use.", int_between(0, 1000)),
    Setting("server.connections_per_address", 24, "Open connections one address may hold before it shows the table PIN.", int_between(2, 1000)),
    Setting("server.header_timeout_s", 10, "Seconds a client has to send a request's headers, from its first byte.", int_between(1, 300)),
    Setting("server.body_timeout_s", 20, "Seconds a client has, after the headers, to send a request's body.", int_between(1, 600)),
    Setting("server.session_hours", 12, "Hours a device stays let in after typing the table PIN (the page's session).", int_between(1, 24 * 30)),
    Setting("server.secure_cookie", False, "Send the session cookie only over HTTPS (set it when a proxy serves the page over HTTPS; a request that arrives as HTTPS always gets it).", None),
    Setting("server.trusted_hosts", ["127.0.0.1", "localhost", "elephants-bluff.local"], "Host names the page may be reached by; '*' allows any. An IP address (a tablet reaching the Pi by its LAN address) always works: only names are checked, against DNS rebinding."),
]

register_settings(APP_SETTINGS)


def init_config(instance: Path) -> tuple[Path, bool]:
    """Create ``config.toml`` with a random PIN on first start. Returns (path, created).

    >>> import tempfile
    >>> path, created = init_config(Path(tempfile.mkdtemp()))
    >>> created, len(Settings.load(path, environ={})["table.pin"])
    (True, 6)
    """
    path = instance / CONFIG_NAME
    if path.exists():
        return path, False
    return write_config(instance, {"table.pin": f"{secrets.randbelow(10**6):06d}"}), True
