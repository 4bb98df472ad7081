"""One error hierarchy for the whole project.

Every error raised on purpose carries a ``message`` written for a player at the
table (it is shown on the page as it is) and a machine ``code``. Each class also
inherits the matching built-in exception, as gpiozero does, so callers may catch
either. The web layer maps ``status`` to the HTTP status of ``shared/API.md``.
"""

from __future__ import annotations


class ElephantsBluffError(Exception):
    """Base of every error this project raises on purpose."""

    status = 400
    code = "bad_request"

    def __init__(self, message: str, *, code: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        if code is not None:
            self.code = code

    def to_json(self) -> dict[str, str]:
        return {"error": self.code, "message": self.message}


class BadRequest(ElephantsBluffError, ValueError):
    """A malformed request: not JSON, a missing field, a wrong type (HTTP 400)."""

    status = 400
    code = "bad_request"


class Unauthorized(ElephantsBluffError, PermissionError):
    """A control action without the right table PIN (HTTP 401)."""

    status = 401
    code = "unauthorized"


class Forbidden(ElephantsBluffError, PermissionError):
    """A request refused whatever the PIN: cross-site, locked out (HTTP 403)."""

    status = 403
    code = "forbidden"


class NotFound(ElephantsBluffError, LookupError):
    """An unknown game, challenge or route (HTTP 404)."""

    status = 404
    code = "not_found"


class NotAllowed(ElephantsBluffError):
    """An action the current phase or seat does not allow (HTTP 409)."""

    status = 409
    code = "not_allowed"


class RuleRefused(ElephantsBluffError, ValueError):
    """A well-formed value that the rules refuse, e.g. a claim too low (HTTP 422)."""

    status = 422
    code = "rule_refused"


class TooManyAttempts(ElephantsBluffError):
    """Too many wrong PINs from one client (HTTP 429)."""

    status = 429
    code = "too_many_attempts"


class SettingsError(ElephantsBluffError, ValueError):
    """A setting that cannot be used: names the file, the key and why."""

    status = 500
    code = "bad_setting"

    def __init__(self, path: str, key: str | None, why: str) -> None:
        where = f"{path}: {key}" if key else path
        super().__init__(f"{where}: {why}")
        self.path = path
        self.key = key
        self.why = why


class HardwareError(ElephantsBluffError, RuntimeError):
    """A camera or GPIO device that is missing or failed (HTTP 503)."""

    status = 503
    code = "hardware"


class InstanceFileError(ElephantsBluffError, RuntimeError):
    """A file of the instance folder other than the settings and the game log (the sessions, their key) that cannot be
    used: names the file, why, and what to do; ``serve`` then starts in safe mode and says so."""

    status = 500
    code = "bad_file"

    def __init__(self, path: str, why: str, todo: str) -> None:
        super().__init__(f"{path}: {why}")
        self.path = path
        self.why = why
        self.todo = todo


class StoreError(ElephantsBluffError, RuntimeError):
    """The game log cannot be opened or written (a corrupt or foreign database); ``todo``: what to do where it is
    not a damaged file's (move it away, restore a backup, ``doctor --repair``)."""

    status = 500
    code = "store"

    def __init__(self, message: str, *, code: str | None = None, todo: str | None = None) -> None:
        super().__init__(message, code=code)
        self.todo = todo


class UnsupportedMediaType(ElephantsBluffError):
    """A request body that is not JSON (HTTP 415)."""

    status = 415
    code = "unsupported_media_type"


class InsufficientStorage(ElephantsBluffError, OSError):
    """The disk is full: nothing new can be written (HTTP 507)."""

    status = 507
    code = "disk_full"
