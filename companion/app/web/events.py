"""``GET /api/events``: Server-Sent Events, one ``state`` event per change.

The table's lid check adds ``warning`` events (a seat and a rule, never a value).

Each viewer gets its own bounded queue (``Referee.subscribe``). A viewer that
leaves is freed within a second: ``serve`` runs waitress with a request
lookahead, so it keeps reading the socket and ``waitress.client_disconnected``
says when the client has gone (without it, only the third failed write after
the client left showed it: 45 s with the old 15 s keep-alive). A keep-alive
comment every 15 s of quiet keeps proxies and tablets from dropping the stream.

Every stream holds one of waitress' threads for as long as it is open, so the
number of viewers is capped (``EB_MAX_VIEWERS``, set by ``serve`` below its
thread count): past it a new viewer gets a 503 and the table's own actions
always find a free thread. Without the cap, enough open pages (or one script
opening many streams) froze every action of the game.
"""

from __future__ import annotations

import json
import queue
import time
from typing import Any, Iterator

from flask import Blueprint, Response, current_app, jsonify, request

from companion.app.web.security import has_control, trust_this_connection

bp = Blueprint("events", __name__)

KEEPALIVE_S = 15.0
POLL_S = 1.0  # how often a quiet stream checks that its viewer is still there
#: the default cap on live viewers (serve sets it from its thread count)
MAX_VIEWERS = 80


def _event(state: dict[str, Any]) -> str:
    return f"event: state\nid: {state['id']}:{state['events']}\ndata: {json.dumps(state, separators=(',', ':'))}\n\n"


def _note(kind: str, payload: Any) -> str:
    """A side note, e.g. ``warning`` from the table's lid check (never a die value, R13)."""
    return f"event: {kind}\ndata: {json.dumps(payload, separators=(',', ':'))}\n\n"


@bp.get("/api/events")
def events() -> Response:
    referee = current_app.extensions["elephants_bluff"].referee
    game_id = request.args.get("game") or referee.current_game_id()
    first = None
    if game_id:
        try:
            first = referee.game_state(game_id)
        except Exception:  # an unknown ?game= just starts an empty stream
            first = None
    q = referee.subscribe(limit=current_app.config.get("EB_MAX_VIEWERS", MAX_VIEWERS))
    if q is None:
        response = jsonify({"error": "too_many_viewers", "message": "Too many screens are watching this table right now: close one and try again."})
        response.status_code = 503
        response.headers["Retry-After"] = "10"
        return response

    if has_control():
        trust_this_connection()  # the table's own page: never closed to make room for guests
    # waitress (with channel_request_lookahead) tells when the client has gone.
    gone = request.environ.get("waitress.client_disconnected") or (lambda: False)

    def stream() -> Iterator[str]:
        try:
            yield "retry: 2000\n\n"
            if first is not None:
                yield _event(first)
            quiet_since = time.monotonic()
            while True:
                try:
                    kind, payload = q.get(timeout=POLL_S)
                except queue.Empty:
                    if gone():
                        return
                    if time.monotonic() - quiet_since >= KEEPALIVE_S:
                        quiet_since = time.monotonic()
                        yield ": keep-alive\n\n"
                    continue
                quiet_since = time.monotonic()
                yield _event(payload) if kind == "state" else _note(kind, payload)
        finally:
            referee.unsubscribe(q)

    return Response(stream(), mimetype="text/event-stream", headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})
