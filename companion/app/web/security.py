"""The table PIN, sessions, the guessing budget, the Host check, cross-site refusal and security headers.

Viewing needs nothing; every control route needs the table PIN, as the
``X-Table-Pin`` header or a session: ``POST /api/session`` checks the PIN
once and sets the ``eb_session`` cookie to a random token (HttpOnly,
SameSite=Strict, Secure over HTTPS or with ``server.secure_cookie``), kept
server-side (``companion/app/auth.py``) for ``server.session_hours``, ended
by ``DELETE /api/session``, by revoking it (the page, ``elephants-bluff
sessions revoke``) and by a change of PIN. PINs are compared in constant time.

Wrong PINs are budgeted by Flask-Limiter (moving windows, kept in the
instance's ``auth.sqlite3`` so a restart forgets nothing): per address
(``PER_ADDRESS``) and for all addresses together (``EVERY_ADDRESS``, whose
windows grow from a minute to a day, so that the wait after each budget
spent grows too). Rotating addresses therefore buys no more guesses. A
device already let in keeps playing while new PINs are refused.
"""

from __future__ import annotations

import functools
import hashlib
import hmac
import ipaddress
from typing import Any, Callable

from flask import Flask, Response, after_this_request, current_app, g, jsonify, request
from flask_limiter import ApplicationLimit, Limiter, RateLimitExceeded
from limits import parse_many

from companion.app.auth import AUTH_NAME, AuthStore, SQLiteLimitsStorage
from companion.core.errors import BadRequest, Forbidden, InsufficientStorage, Unauthorized

COOKIE = "eb_session"
#: wrong PINs from one address: 5 a minute, 20 an hour
PER_ADDRESS = "20/hour;5/minute"
#: wrong PINs from every address together: each budget spent leaves a few more guesses and a longer wait (1 min, 10 min, 1 h, 1 day)
EVERY_ADDRESS = "30/day;20/hour;15/10 minutes;10/minute"  # longest first: a refusal names the longest wait

__all__ = ["COOKIE", "EVERY_ADDRESS", "PER_ADDRESS", "SQLiteLimitsStorage", "close_session", "has_control", "install_security", "open_session", "require_pin"]


def _table_pin() -> str:
    return current_app.extensions["elephants_bluff"].settings["table.pin"]


def _auth() -> AuthStore:
    return current_app.extensions["eb_auth"]


def pin_tag(pin: str, key: bytes) -> str:
    """What a session keeps of the PIN it was opened under: an HMAC with the instance's secret key (never sent)."""
    return hmac.new(key, ("eb-pin:" + pin).encode(), hashlib.sha256).hexdigest()


def _current_tag() -> str:
    return pin_tag(_table_pin(), current_app.config["SECRET_KEY"])


def pin_matches(given: Any) -> bool:
    pin = _table_pin()
    return isinstance(given, str) and bool(pin) and hmac.compare_digest(given.encode(), pin.encode())


def _client() -> str:
    return request.remote_addr or "?"


#: said to every PIN while wrong ones cannot be written down: the same words whether the PIN is right or wrong
CANNOT_COUNT = ("The companion's disk is full, so it cannot count wrong PINs, and no PIN is checked until there is room. "
                "Free some room on the card (old Bluff photos can go), then type the PIN again. A device already let in keeps playing.")


def check_pins() -> None:
    """Before any PIN is compared: while a wrong one cannot be written down (a full card), none is checked. Checked
    and uncounted, every guess would go free, and "wrong" against "let in" would tell a guesser when to stop."""
    if not _auth().can_count():
        raise InsufficientStorage(CANNOT_COUNT)


def _wrong_pin() -> Exception:
    """Counted by the limits (``_counts_as_wrong_pin``) and written down for the page's count; where it cannot be
    written down, the full card's refusal, and no PIN is checked until there is room (``check_pins``)."""
    if not _auth().wrong_pin(_client()):
        return InsufficientStorage(CANNOT_COUNT)
    g.eb_wrong_pin = True
    return Unauthorized("That is not the table PIN.")


def _secure_cookie() -> bool:
    return request.is_secure or bool(current_app.extensions["elephants_bluff"].settings.get("server.secure_cookie"))


def open_session(given: Any) -> dict[str, Any]:
    """``POST /api/session``: check the PIN once and let this device in (a new session).

    Another site's page may not try PINs here: it would spend the table's
    guessing budget and lock the table out.
    """
    refuse_cross_site()
    if not isinstance(given, str) or not given:
        raise BadRequest("Type the table PIN.")
    check_pins()
    if not pin_matches(given):
        raise _wrong_pin()
    settings = current_app.extensions["elephants_bluff"].settings
    hours = settings.get("server.session_hours", 12)
    old = request.cookies.get(COOKIE)
    try:
        # the new session first, then the old one ended: a card with room for one write only leaves the device let in
        token, sid = _auth().open_session(_current_tag(), hours=hours, address=_client(), agent=request.headers.get("User-Agent", "")[:120])
        if old:
            _auth().revoke_token(old)  # a new token at each login: a cookie seen before it is worth nothing
    except InsufficientStorage:
        raise InsufficientStorage(CANNOT_COUNT) from None  # a wrong PIN's words: on a full card no answer tells them apart
    secure = _secure_cookie()

    @after_this_request
    def _set(response: Response) -> Response:
        response.set_cookie(COOKIE, token, max_age=int(hours * 3600), path="/", httponly=True, samesite="Strict", secure=secure)
        return response

    g.eb_session = {"id": sid}
    trust_this_connection()
    return {"control": True, "session": sid}


def close_session() -> None:
    """``DELETE /api/session``: this device's session ends here and on the server."""
    token = request.cookies.get(COOKIE)
    if token:
        found = _auth().session_for(token, _current_tag())
        if found is not None:
            _auth().revoke(found["id"])

    @after_this_request
    def _clear(response: Response) -> Response:
        response.delete_cookie(COOKIE, path="/", httponly=True, samesite="Strict", secure=_secure_cookie())
        return response


def current_session() -> dict[str, Any] | None:
    """This request's live session (cached for the request), or None."""
    if "eb_session" not in g:
        token = request.cookies.get(COOKIE)
        g.eb_session = _auth().session_for(token, _current_tag()) if token and _table_pin() else None
    return g.eb_session


def has_control() -> bool:
    return current_session() is not None


def require_pin(view: Callable) -> Callable:
    """A control route: the table PIN (header or session), from this site only."""

    @functools.wraps(view)
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        refuse_cross_site()
        given = request.headers.get("X-Table-Pin")
        if given is not None:
            check_pins()
            if not pin_matches(given):
                raise _wrong_pin()
        elif not has_control():
            raise Unauthorized("Only the table can do this: enter the table PIN first.")
        trust_this_connection()
        return view(*args, **kwargs)

    wrapped.eb_checks_pin = True  # type: ignore[attr-defined]  # the guessing budget counts only these (_tries_a_pin)
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


def _tries_a_pin() -> bool:
    """Whether this request is one the wrong-PIN budget holds back: ``POST /api/session``, and a control route given the
    ``X-Table-Pin`` header. A viewing route never reads the header, so a script or kiosk that sends it with every
    request keeps viewing while the budget is spent."""
    if request.method == "POST" and request.path == "/api/session":
        return True
    view = current_app.view_functions.get(request.endpoint) if request.endpoint else None
    return request.headers.get("X-Table-Pin") is not None and getattr(view, "eb_checks_pin", False)


def _counts_as_wrong_pin(response: Response) -> bool:
    return bool(g.get("eb_wrong_pin"))


def _breach(limits: str, words: str) -> Callable[[Any], Response]:
    """The 429 of a spent budget, with the longest wait among its windows (all are checked at once)."""

    def answer(breached: Any) -> Response:
        strategy = breached.limiter
        now = strategy.storage.clock()
        waits = [strategy.get_window_stats(item, *breached.request_args).reset_time - now for item in parse_many(limits) if not strategy.test(item, *breached.request_args)]
        wait = max(1, int(max(waits, default=breached.reset_at - now)) + 1)
        shown = f"{wait} seconds" if wait < 120 else f"{(wait + 59) // 60} minutes"
        response = jsonify({"error": "too_many_attempts", "message": words.format(wait=shown), "retry_after_s": wait})
        response.status_code = 429
        response.headers["Retry-After"] = str(wait)
        return response

    return answer


def install_limits(app: Flask, auth: AuthStore) -> Limiter:
    """The guessing budget: Flask-Limiter's application limits, counting wrong PINs only, kept in ``auth``'s file. A
    wrong PIN the budget cannot count (no room left after its note) stops the PIN check as an unwritten one does."""
    limiter = Limiter(
        key_func=_client,
        strategy="moving-window",
        storage_uri=f"eb-sqlite://{auth.path}",  # SQLiteLimitsStorage: kept across restarts
        storage_options={"cannot_count": auth.could_not_count},
        application_limits=[
            ApplicationLimit(PER_ADDRESS, key_function=_client, exempt_when=lambda: not _tries_a_pin(), deduct_when=_counts_as_wrong_pin, scope="wrong-pins-per-address",
                             on_breach=_breach(PER_ADDRESS, "Too many wrong PINs from this device: wait {wait} and try again.")),
            ApplicationLimit(EVERY_ADDRESS, key_function=lambda: "every-address", exempt_when=lambda: not _tries_a_pin(), deduct_when=_counts_as_wrong_pin, scope="wrong-pins-in-all",
                             on_breach=_breach(EVERY_ADDRESS, "Too many wrong PINs were tried at this table: no PIN is taken for {wait}. A device already let in keeps playing.")),
        ],
    )
    limiter.init_app(app)
    return limiter


def install_security(app: Flask, instance: Any = None) -> None:
    if instance is not None:
        auth = AuthStore(instance / AUTH_NAME)
        app.extensions["eb_auth"] = auth
        app.extensions["eb_limiter"] = install_limits(app, auth)
        auth.end_sessions_of_other_pins(pin_tag(app.extensions["elephants_bluff"].settings["table.pin"], app.config["SECRET_KEY"]))
        auth.forget_the_ended()

        @app.errorhandler(RateLimitExceeded)
        def _too_many(exc: RateLimitExceeded):  # noqa: ANN202
            return exc.get_response()

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
