"""``GET /api/events``: Server-Sent Events, one ``state`` event per change.

Each viewer gets its own bounded queue (``Referee.subscribe``); a keep-alive
comment every 15 s lets a dropped connection be noticed and freed.
"""

from __future__ import annotations

import json
import queue
from typing import Any, Iterator

from flask import Blueprint, Response, current_app, request

bp = Blueprint("events", __name__)

KEEPALIVE_S = 15.0


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
    q = referee.subscribe()

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
