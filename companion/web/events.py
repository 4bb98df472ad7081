"""``GET /api/events``: Server-Sent Events, one ``state`` event per change.

The table's lid check adds ``warning`` events (a seat and a rule, never a value).

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
    q = referee.subscribe()

    def stream() -> Iterator[str]:
        try:
            yield "retry: 2000\n\n"
            if first is not None:
                yield _event(first)
            while True:
                try:
                    kind, payload = q.get(timeout=KEEPALIVE_S)
                except queue.Empty:
                    yield ": keep-alive\n\n"
                    continue
                yield _event(payload) if kind == "state" else _note(kind, payload)
        finally:
            referee.unsubscribe(q)

    return Response(stream(), mimetype="text/event-stream", headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})
