"""Settings: one TOML file, ``config.toml``, in the instance folder.

Every setting is declared once, with its default and a docstring (``Setting``),
by the part of the project that owns it: the referee's here, the camera and
reader's in ``vision/settings.py``, the table's pins in ``firmware/settings.py``.
A bad setting refuses to start with the file, the key and why
(``SettingsError``); the environment variable ``ELEPHANTS_BLUFF_PIN`` overrides
the table PIN.
"""

from __future__ import annotations

import os
import secrets
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable

from companion.errors import SettingsError

CONFIG_NAME = "config.toml"
PIN_ENV = "ELEPHANTS_BLUFF_PIN"


@dataclass(frozen=True)
class Setting:
    """One documented setting: ``key`` is ``section.name`` as in the TOML file."""

    key: str
    default: Any
    doc: str
    check: Callable[[Any], str | None] | None = None  # returns why the value is wrong
    secret: bool = False  # never repeat the value in an error (it may be shown on a page)

    @property
    def section(self) -> str:
        return self.key.split(".", 1)[0]

    @property
    def name(self) -> str:
        return self.key.split(".", 1)[1]

    def validate(self, value: Any) -> str | None:
        expected = type(self.default)
        if expected is float and isinstance(value, int) and not isinstance(value, bool):
            value = float(value)
        if self.default is not None and not isinstance(value, expected) or isinstance(value, bool) and expected is not bool:
            return f"must be {_type_words(expected)}" if self.secret else f"must be {_type_words(expected)}, not {value!r}"
        return self.check(value) if self.check else None


def _type_words(t: type) -> str:
    return {int: "a whole number", float: "a number", str: "text in quotes", bool: "true or false", list: "a list", dict: "a table"}.get(t, t.__name__)


def int_between(low: int, high: int) -> Callable[[Any], str | None]:
    return lambda v: None if low <= v <= high else f"must be between {low} and {high}, not {v}"


def one_of(*choices: str) -> Callable[[Any], str | None]:
    return lambda v: None if v in choices else f"must be one of {', '.join(choices)}, not {v!r}"


def _pin_check(v: str) -> str | None:
    if v and not (4 <= len(v) <= 32 and v.isascii() and v.isprintable() and " " not in v):
        return "must be 4 to 32 letters or digits, without spaces"
    return None


CORE_SETTINGS: list[Setting] = [
    Setting("table.pin", "", "The table PIN that every control action needs. Empty: `serve --init` writes a random one. ELEPHANTS_BLUFF_PIN overrides it.", _pin_check, secret=True),
    Setting("game.path_length", 7, "Squares on each elephant path; the last is the red square (RULES.md R2).", int_between(2, 30)),
    Setting("storage.frames_dir", "frames", "Where saved Bluff frames go, relative to the instance folder.", lambda v: None if v.strip() else "must name a folder"),
    Setting("storage.database", "game-log.sqlite3", "The game log's SQLite file, relative to the instance folder.", lambda v: None if v.strip() else "must name a file"),
    Setting("server.trusted_hosts", ["127.0.0.1", "localhost", "elephants-bluff.local"], "Host names the page may be reached by; '*' allows any (a tablet reaching the Pi by its LAN address needs it listed)."),
]


def all_settings() -> list[Setting]:
    """Every declared setting of the project, in file order."""
    from firmware.settings import SETTINGS as FIRMWARE
    from vision.settings import SETTINGS as VISION

    return CORE_SETTINGS + VISION + FIRMWARE


class Settings:
    """The settings in force: defaults, overlaid by the file, then the environment.

    >>> s = Settings.defaults()
    >>> s["game.path_length"]
    7
    """

    def __init__(self, values: dict[str, Any], path: Path | None = None) -> None:
        self._values = values
        self.path = path

    @classmethod
    def defaults(cls) -> "Settings":
        return cls({s.key: s.default for s in all_settings()})

    def __getitem__(self, key: str) -> Any:
        return self._values[key]

    def get(self, key: str, default: Any = None) -> Any:
        return self._values.get(key, default)

    def with_overrides(self, **overrides: Any) -> "Settings":
        """A copy with ``section__name=value`` overrides (tests, command-line flags)."""
        values = dict(self._values)
        for k, v in overrides.items():
            values[k.replace("__", ".", 1)] = v
        return Settings(values, self.path)

    def as_dict(self) -> dict[str, Any]:
        return dict(self._values)

    @classmethod
    def load(cls, path: Path, environ: dict[str, str] | None = None) -> "Settings":
        """Read ``path`` (absent: all defaults). Raises ``SettingsError`` naming the key."""
        environ = os.environ if environ is None else environ
        declared = {s.key: s for s in all_settings()}
        values = {k: s.default for k, s in declared.items()}
        if path.exists():
            try:
                data = tomllib.loads(path.read_text(encoding="utf-8"))
            except UnicodeDecodeError:
                raise SettingsError(str(path), None, "is not a text file (it should be UTF-8 TOML)") from None
            except tomllib.TOMLDecodeError as exc:
                raise SettingsError(str(path), None, f"is not valid TOML ({exc})") from None
            for section, table in data.items():
                if not isinstance(table, dict):
                    raise SettingsError(str(path), section, "must be a [section] of settings")
                for name, value in table.items():
                    key = f"{section}.{name}"
                    if key not in declared:
                        raise SettingsError(str(path), key, "is not a known setting (see the comments in a fresh config.toml)")
                    why = declared[key].validate(value)
                    if why:
                        raise SettingsError(str(path), key, why)
                    values[key] = float(value) if isinstance(declared[key].default, float) else value
        pin = environ.get(PIN_ENV)
        if pin is not None:
            why = _pin_check(pin) or (None if pin else "must not be empty")
            if why:
                raise SettingsError(PIN_ENV, None, why)
            values["table.pin"] = pin
        return cls(values, path)


def render_config(settings: Iterable[Setting], values: dict[str, Any]) -> str:
    """A config file with every setting, its value and its documentation as comments."""
    lines = ["# Elephants Bluff companion settings. Every setting is listed with its doc;", "# delete a line to go back to its default.", ""]
    section = None
    for s in settings:
        if s.section != section:
            section = s.section
            lines += ["", f"[{section}]"]
        lines.append(f"# {s.doc} Default: {_toml(s.default)}")
        lines.append(f"{s.name} = {_toml(values.get(s.key, s.default))}")
    return "\n".join(lines).lstrip() + "\n"


def _toml(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return repr(v)
    if isinstance(v, str):
        return '"' + v.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(v, list):
        return "[" + ", ".join(_toml(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{ " + ", ".join(f"{k} = {_toml(x)}" for k, x in v.items()) + " }"
    raise TypeError(v)


def init_config(instance: Path) -> tuple[Path, bool]:
    """Create ``config.toml`` with a random PIN on first start. Returns (path, created)."""
    instance.mkdir(parents=True, exist_ok=True)
    path = instance / CONFIG_NAME
    if path.exists():
        return path, False
    values = {"table.pin": f"{secrets.randbelow(10**6):06d}"}
    tmp = path.with_suffix(".tmp")
    tmp.write_text(render_config(all_settings(), values), encoding="utf-8")
    os.replace(tmp, path)
    return path, True
