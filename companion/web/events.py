"""``GET /api/events``: Server-Sent Events, one ``state`` event per change.

Each viewer gets its own bounded queue (``Referee.subscribe``); a keep-alive
comment every 5 s lets a dropped connection be noticed and freed (waitress
notices a gone client only when a write fails, the second one after it left).

Every stream holds one of waitress' threads for as long as it is open, so the
number of viewers is capped (``EB_MAX_VIEWERS``, set by ``serve`` below its
thread count): past it a new viewer gets a 503 and the table's own actions
always find a free thread. Without the cap, enough open pages (or one script
opening many streams) froze every action of the game.
"""

from __future__ import annotations

import json
import queue
from typing import Any, Iterator

from flask import Blueprint, Response, current_app, jsonify, request

bp = Blueprint("events", __name__)

KEEPALIVE_S = 5.0
#: the default cap on live viewers (serve sets it from its thread count)
MAX_VIEWERS = 80


def _event(state: dict[str, Any]) -> str:
    return f"event: state\nid: {state['id']}:{state['events']}\ndata: {json.dumps(state, separators=(',', ':'))}\n\n"


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

    def stream() -> Iterator[str]:
        try:
            yield "retry: 2000\n\n"
            if first is not None:
                yield _event(first)
            while True:
                try:
                    state = q.get(timeout=KEEPALIVE_S)
                except queue.Empty:
                    yield ": keep-alive\n\n"
                    continue
                yield _event(state)
        finally:
            referee.unsubscribe(q)

    return Response(stream(), mimetype="text/event-stream", headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})
