"""Settings: one TOML file, ``config.toml``, in the instance folder, and the registry of what it may hold.

Every setting is declared once, with its default and a docstring (``Setting``),
by the package that owns it, which hands its list to ``register_settings`` when
it is imported: the app's in ``companion/app/settings.py``, the camera and
reader's in ``vision/settings.py``, the table's pins in ``firmware/settings.py``.
The core never imports them, so it stays the bottom layer. A bad setting
refuses to start with the file, the key and why (``SettingsError``); a setting
may name an environment variable that overrides the file.
"""

from __future__ import annotations

import os
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable

from companion.core.errors import ElephantsBluffError, SettingsError
from companion.core.files import atomic_write

CONFIG_NAME = "config.toml"
#: a file written by ``write_config`` begins with HEADER and ends with END_MARK: without it, it was cut short
HEADER = "# Elephants Bluff companion settings, written whole: the last line says '# end of settings'."
END_MARK = "# end of settings"


@dataclass(frozen=True)
class Setting:
    """One documented setting: ``key`` is ``section.name`` as in the TOML file."""

    key: str
    default: Any
    doc: str
    check: Callable[[Any], str | None] | None = None  # returns why the value is wrong
    secret: bool = False  # never repeat the value in an error (it may be shown on a page)
    env: str | None = None  # an environment variable that overrides the file

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


_REGISTRY: dict[str, Setting] = {}


def register_settings(settings: Iterable[Setting]) -> None:
    """Declare a package's settings; called once by each package when it is imported.

    Registering the same key twice with another default is a programming error.
    """
    for setting in settings:
        known = _REGISTRY.get(setting.key)
        if known is not None and known != setting:
            raise ValueError(f"setting {setting.key} is declared twice")
        _REGISTRY[setting.key] = setting


def all_settings() -> list[Setting]:
    """Every registered setting, in the order the packages declared them."""
    return list(_REGISTRY.values())


class Settings:
    """The settings in force: defaults, overlaid by the file, then the environment.

    >>> register_settings([Setting("demo.size", 7, "A doctest's setting.")])
    >>> Settings.defaults()["demo.size"]
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
    def load(cls, path: Path, environ: dict[str, str] | None = None, sections: Iterable[str] | None = None) -> "Settings":
        """Read ``path`` (absent: all defaults). Raises ``SettingsError`` naming the key.

        ``sections``: read only these ``[sections]`` and pass over the others unchecked, for a tool of a lower layer
        (the wiring check reads ``[gpio]`` and ``[capture]``) that runs without the packages declaring the rest: a
        whole ``config.toml`` holds keys it never registered."""
        only = None if sections is None else set(sections)
        environ = os.environ if environ is None else environ
        declared = {s.key: s for s in all_settings()}
        values = {k: s.default for k, s in declared.items()}
        if path.is_dir():
            raise SettingsError(str(path), None, "is a folder, not a settings file: move it away, then start with --init to write a fresh one")
        if path.parent.exists() and not path.parent.is_dir():
            raise SettingsError(str(path.parent), None, "is a file, not the instance folder: name a folder (or a new one, to start with --init)")
        if path.is_symlink() and not path.exists():
            raise SettingsError(str(path), None, f"is a link to {os.readlink(path)}, which is not there: restore that file, or remove the link and start with --init")
        if path.exists():
            try:
                text = path.read_text(encoding="utf-8-sig")  # an editor's byte-order mark is not TOML's, nor a mistake
                data = tomllib.loads(text)
            except UnicodeDecodeError:
                raise SettingsError(str(path), None, "is not a text file (it should be UTF-8 TOML)") from None
            except tomllib.TOMLDecodeError as exc:
                raise SettingsError(str(path), None, f"is not valid TOML ({exc})") from None
            except OSError as exc:
                raise SettingsError(str(path), None, f"cannot be read ({exc.strerror or exc})") from None
            if text.startswith(HEADER) and END_MARK not in (line.strip() for line in text.splitlines()):
                raise SettingsError(str(path), None, f"is cut short (its last line, '{END_MARK}', is missing): it was being written when the power went; restore it, or delete it and start with --init")
            for section, table in data.items():
                if only is not None and section not in only:
                    continue
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
        for setting in declared.values():
            if setting.env is None or setting.env not in environ:
                continue
            raw = environ[setting.env]
            why = setting.validate(raw) or (None if raw else "must not be empty")
            if why:
                raise SettingsError(setting.env, None, why)
            values[setting.key] = raw
        return cls(values, path)


def render_config(settings: Iterable[Setting], values: dict[str, Any]) -> str:
    """A config file with every setting, its value and its documentation as comments."""
    lines = [HEADER, "# Every setting is listed with its doc; delete a line to go back to its default.", ""]
    section = None
    for s in settings:
        if s.section != section:
            section = s.section
            lines += ["", f"[{section}]"]
        lines.append(f"# {s.doc} Default: {_toml(s.default)}")
        lines.append(f"{s.name} = {_toml(values.get(s.key, s.default))}")
    lines += ["", END_MARK]
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


def write_config(instance: Path, values: dict[str, Any]) -> Path:
    """Write every registered setting with ``values`` over the defaults, with its docs, all at once."""
    instance.mkdir(parents=True, exist_ok=True)
    path = instance / CONFIG_NAME
    atomic_write(path, render_config(all_settings(), values), mode=0o600)
    return path


def require_instance(instance: Path) -> None:
    """Refuse (``ElephantsBluffError``, which the command line says) a command that looks at or changes a table's
    instance (``doctor``, ``check``, ``sessions``, ``calibrate``, ``teach``, ``model``, ``dataset``) where ``instance``
    is not one: run from the wrong folder, without ``--instance``, it said "ok", "Ready" or "no device was ever let in"
    about a folder that is not the table's (``doctor`` made an empty one), and ``teach`` or ``calibrate`` stored what
    they made in a new folder the table never reads."""
    if instance.is_dir() and any((instance / name).is_file() for name in (CONFIG_NAME, "game-log.sqlite3", "auth.sqlite3")):
        return
    where = "does not exist" if not instance.exists() else "holds no settings, game log or sessions"
    raise ElephantsBluffError(f"There is no companion's instance at {instance.resolve()} (it {where}): name the table's with "
                              "--instance (on the Pi: --instance /var/lib/elephants-bluff, as the service user).")
