"""The table PIN, the Host check, cross-site refusal and security headers.

Viewing needs nothing; every control route needs the table PIN, as the
``X-Table-Pin`` header or the session cookie that ``POST /api/session`` sets
(HttpOnly, SameSite=Strict). Wrong PINs are counted per client and lock it out
for a while. PINs are compared in constant time.
"""

from __future__ import annotations

import functools
import hashlib
import hmac
import ipaddress
import threading
import time
from typing import Any, Callable

from flask import Flask, current_app, request, session

from companion.core.errors import BadRequest, Forbidden, TooManyAttempts, Unauthorized

MAX_FAILURES = 5
LOCKOUT_S = 60.0


class PinGuard:
    """Counts wrong PINs per client; after ``MAX_FAILURES`` the client waits ``LOCKOUT_S``."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._failures: dict[str, list[float]] = {}
        self._lock = threading.Lock()

    def check_locked(self, client: str) -> None:
        with self._lock:
            recent = [t for t in self._failures.get(client, []) if self._clock() - t < LOCKOUT_S]
            self._failures[client] = recent
            if len(recent) >= MAX_FAILURES:
                wait = int(LOCKOUT_S - (self._clock() - recent[-MAX_FAILURES])) + 1
                raise TooManyAttempts(f"Too many wrong PINs from this device: wait {wait} seconds and try again.")

    def failed(self, client: str) -> None:
        with self._lock:
            self._failures.setdefault(client, []).append(self._clock())
            if len(self._failures) > 10_000:  # bounded memory under a flood of clients
                self._failures.pop(next(iter(self._failures)))

    def succeeded(self, client: str) -> None:
        with self._lock:
            self._failures.pop(client, None)


def _table_pin() -> str:
    return current_app.extensions["elephants_bluff"].settings["table.pin"]


def _pin_tag(pin: str) -> str:
    """What the session remembers: a digest, so a changed PIN ends old sessions."""
    return hashlib.sha256(("eb-pin:" + pin).encode()).hexdigest()[:32]


def pin_matches(given: Any) -> bool:
    pin = _table_pin()
    return isinstance(given, str) and bool(pin) and hmac.compare_digest(given.encode(), pin.encode())


def open_session(given: Any) -> None:
    """``POST /api/session``: check the PIN once and remember this device.

    Another site's page may not try PINs here: it would count failures against
    the tablet's own address and lock the table out.
    """
    refuse_cross_site()
    guard: PinGuard = current_app.extensions["eb_pin_guard"]
    client = request.remote_addr or "?"
    guard.check_locked(client)
    if not isinstance(given, str) or not given:
        raise BadRequest("Type the table PIN.")
    if not pin_matches(given):
        guard.failed(client)
        raise Unauthorized("That is not the table PIN.")
    guard.succeeded(client)
    session.clear()
    session["pin"] = _pin_tag(_table_pin())
    session.permanent = True


def has_control() -> bool:
    return session.get("pin") == _pin_tag(_table_pin()) and bool(_table_pin())


def require_pin(view: Callable) -> Callable:
    """A control route: the table PIN (header or session), from this site only."""

    @functools.wraps(view)
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        refuse_cross_site()
        guard: PinGuard = current_app.extensions["eb_pin_guard"]
        client = request.remote_addr or "?"
        given = request.headers.get("X-Table-Pin")
        if given is not None:
            guard.check_locked(client)
            if not pin_matches(given):
                guard.failed(client)
                raise Unauthorized("That is not the table PIN.")
            guard.succeeded(client)
        elif not has_control():
            raise Unauthorized("Only the table can do this: enter the table PIN first.")
        trust_this_connection()
        return view(*args, **kwargs)

    return wrapped


def trust_this_connection() -> None:
    """This request showed the PIN or a session: its connection joins the table's reserved share (``connections.py``)."""
    mark = request.environ.get("eb.trust_connection")
    if mark is not None:
        mark()


def refuse_cross_site() -> None:
    """Control requests from another site's page are refused (CSRF)."""
    if request.headers.get("Sec-Fetch-Site") == "cross-site":
        raise Forbidden("This request came from another web site and was refused.")
    origin = request.headers.get("Origin")
    if origin and origin != "null":
        host = origin.split("://", 1)[-1]
        if host != request.host:
            raise Forbidden("This request came from another web site and was refused.")
    elif origin == "null":
        raise Forbidden("This request came from another web site and was refused.")


def _host_allowed(host: str, trusted: list[str] | None) -> bool:
    """Names must be listed (DNS rebinding); an IP address literal cannot be rebound."""
    if trusted is None:
        return True
    name = host.rsplit(":", 1)[0] if not host.endswith("]") else host
    name = name.strip("[]").lower()
    try:
        ipaddress.ip_address(name)
        return True
    except ValueError:
        return name in {h.strip("[]").lower() for h in trusted}


def install_security(app: Flask) -> None:
    app.extensions["eb_pin_guard"] = PinGuard()

    @app.before_request
    def _check_host():  # noqa: ANN202
        if not _host_allowed(request.host, app.config.get("EB_TRUSTED_HOSTS")):
            raise Forbidden("This companion is not reached by that name: add it to server.trusted_hosts.")

    @app.after_request
    def _headers(response):  # noqa: ANN001, ANN202
        h = response.headers
        h.setdefault("X-Content-Type-Options", "nosniff")
        h.setdefault("X-Frame-Options", "DENY")
        h.setdefault("Referrer-Policy", "no-referrer")
        h.setdefault("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'")
        h.setdefault("Permissions-Policy", "camera=(), microphone=(), geolocation=()")
        if request.path.startswith("/api/") and "Cache-Control" not in h:
            h["Cache-Control"] = "no-store"
        return response
