"""The whole API as OpenAPI 3.0 (``GET /api/openapi.json``), written by hand.

Kept beside the routes so a new route and its description change together;
a test checks every route of the app appears here.
"""

from __future__ import annotations

from typing import Any

from companion import __version__

_ERROR = {"type": "object", "required": ["error", "message"], "properties": {"error": {"type": "string"}, "message": {"type": "string"}}}
_INT = {"type": "integer"}
#: a move's optional "events": the number of events of the game the screen showed; another is refused (409 moved_on)
_SEEN = {"type": "integer", "minimum": 1, "nullable": True, "description": "the number of events of the game state the screen acted on: a move on a game that has moved on since is refused (409 moved_on)"}
_NULL_INT = {"type": "integer", "nullable": True}
_DICE = {"type": "array", "items": {"type": "integer", "minimum": 1, "maximum": 6}, "minItems": 3, "maxItems": 3}

_STATE = {
    "type": "object",
    "required": ["id", "players", "path_length", "round", "phase", "to_act", "claim", "min_claim", "last_challenge", "loser"],
    "properties": {
        "id": {"type": "string"},
        "players": {"type": "array", "items": {"type": "object", "properties": {"seat": _INT, "name": {"type": "string"}, "position": _INT}}},
        "path_length": _INT,
        "round": _INT,
        "phase": {"type": "string", "enum": ["claim", "decide", "confirm", "over"]},
        "to_act": _NULL_INT,
        "starter": _INT,
        "claim": {"type": "object", "nullable": True, "properties": {"amount": _INT, "by": _INT}},
        "min_claim": {**_NULL_INT, "description": "what the next claim must reach; null when the claim is 18 (R8)"},
        "eighteen": {"type": "boolean"},
        "peeked": {"type": "boolean"},
        "last_challenge": {"type": "string", "nullable": True},
        "last_move": {"type": "object", "nullable": True},
        "loser": _NULL_INT,
        "events": _INT,
        "history": {"type": "array", "description": "this round's and the last round's claims, believes (with peeks) and Bluffs; never a die (R13)",
                    "items": {"type": "object", "properties": {"round": _INT, "type": {"type": "string", "enum": ["claim", "believe", "bluff"]}, "seat": _INT, "amount": _INT, "peeked": {"type": "boolean"}, "challenge": {"type": "string"}}}},
        "rematch_of": {"type": "string", "nullable": True, "description": "the finished game this one is a rematch of"},
        "last_correction": {"type": "object", "nullable": True, "description": "the latest correction (R15): challenge, by, at, after_game_over, reopened"},
    },
}
_DIE = {"type": "object", "properties": {"seen": _INT, "top": _INT, "confidence": {"type": "number"}, "box": {"type": "array", "items": _INT}}}
_CHALLENGE = {
    "type": "object",
    "properties": {
        "id": {"type": "string"},
        "game": {"type": "string"},
        "round": _INT,
        "claim": _INT,
        "claimer": _INT,
        "caller": _INT,
        "reading": {"type": "object", "nullable": True, "properties": {
            "status": {"type": "string"}, "reason": {"type": "string", "nullable": True}, "dice": {"type": "array", "items": _DIE}, "total": _INT,
            "model": {"type": "string"},
            "reasons": {"type": "array", "description": "why it is uncertain, as codes the page translates (companion.core.reading.REASON_CODES)",
                        "items": {"type": "object", "properties": {"code": {"type": "string"}}, "required": ["code"]}},
            "sure_at": {"type": "number", "nullable": True, "description": "the confidence from which a die counted as read for sure"}}},
        "problem": {"type": "string", "nullable": True},
        "problem_codes": {"type": "array", "description": "each part of problem as its code and params, which the pages word (Dice.problemText)", "items": {"type": "object", "properties": {"code": {"type": "string"}}, "required": ["code"]}},
        "status": {"type": "string", "enum": ["decided", "awaiting_confirm"]},
        "dice": {"type": "array", "items": _INT, "nullable": True},
        "source": {"type": "string", "nullable": True, "enum": ["camera", "table", "correction", None], "description": "where the dice came from: the camera's sure reading, the table's confirmation (R14) or a correction (R15)"},
        "has_images": {"type": "boolean", "description": "the Bluff's photo was saved (image_url, annotated_url)"},
        "total": _NULL_INT,
        "verdict": {"type": "object", "nullable": True},
        "image_url": {"type": "string", "nullable": True},
        "annotated_url": {"type": "string", "nullable": True},
        "corrections": {"type": "array", "items": {"type": "object"}},
        "confirmed": {"type": "object", "nullable": True, "description": "when the table typed the dice (R14): at, session, and the top faces the reader had guessed"},
        "first_look": {"type": "object", "nullable": True, "description": "where the table's Confirm button had the dice read again and that second look decided the Bluff (R14): the first look's reading, problem, problem_codes, has_images and read_again_at; the Bluff's reading and photo are the second look's"},
    },
}


def _errors(*codes: int) -> dict[str, Any]:
    return {str(c): {"description": "error", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}} for c in codes}


def _op(summary: str, ok: dict[str, Any] | None, *errors: int, body: dict[str, Any] | None = None, control: bool = False, status: str = "200",
        content: str = "application/json", no_fields: bool = False) -> dict[str, Any]:
    """One operation; ``no_fields``: it takes no body, but a body sent is read as JSON and refused in words (400, 413,
    415) as any other's."""
    op: dict[str, Any] = {"summary": summary, "responses": {status: {"description": "ok", "content": {content: {"schema": ok or {"type": "object"}}}}, **_errors(*errors)}}
    if body is not None:
        op["requestBody"] = {"required": True, "content": {"application/json": {"schema": body}}}
    if control:
        op["security"] = [{"tablePin": []}, {"session": []}]
        op["responses"].update(_errors(401, 403, 429))
    if body is not None or no_fields:
        op["responses"].update(_errors(400, 413, 415))  # not JSON or unknown fields; too large (docs/SECURITY.md); not sent as JSON
    return op


def _obj(required: list[str], **props: Any) -> dict[str, Any]:
    return {"type": "object", "required": required, "properties": props, "additionalProperties": False}


def _path_param(name: str) -> dict[str, Any]:
    return {"name": name, "in": "path", "required": True, "schema": {"type": "string"}}


def openapi_spec() -> dict[str, Any]:
    state = {"$ref": "#/components/schemas/GameState"}
    challenge = {"$ref": "#/components/schemas/Challenge"}
    game = [_path_param("game_id")]
    chal = [_path_param("challenge_id")]
    return {
        "openapi": "3.0.3",
        "info": {"title": "Elephants Bluff companion", "version": __version__, "description": "The referee of a real Elephants Bluff table. Control routes need the table PIN (X-Table-Pin header or the session cookie)."},
        "paths": {
            "/api/health": {"get": _op("Health of the companion, its camera, GPIO and model; `problems` and, each with its code and params, `problem_details`; `checks`: what is wrong with the buttons, lid, disk or clock", None)},
            "/api/check": {"get": _op("Every check before a game, the camera too: findings in words, each with what to do, its code and params (the numbers and names in its sentence, for a page in the player's language; docs/API-EXTENSIONS.md)", None, control=True)},
            "/api/openapi.json": {"get": _op("This document", None)},
            "/api/session": {
                "get": _op("Whether this device may act", None),
                "post": _op("Enter the table PIN once; sets the session cookie (refused from another site: 403)", None, 400, 401, 403, 429, body=_obj(["pin"], pin={"type": "string"})),
                "delete": _op("Forget this device's PIN: its session ends on the server too", None),
            },
            "/api/sessions": {
                "get": _op("Every device let in by the PIN: id, address, device, when it was let in, last seen, expires (docs/SECURITY.md)", None, control=True),
                "delete": _op("End every session: each device types the PIN again", None, control=True),
            },
            "/api/sessions/{session_id}": {"delete": {**_op("End one device's session", None, 404, control=True), "parameters": [_path_param("session_id")]}},
            "/api/games": {
                "get": _op("The latest games and the current one", None),
                "post": _op("Start a game", state, 400, 422, control=True, status="201", body=_obj(["players"], players={"type": "array", "items": {"type": "string"}}, path_length=_INT, starter=_INT, ages={"type": "array", "items": _INT})),
            },
            "/api/games/current": {"get": _op("The game in progress", state, 404)},
            "/api/games/{game_id}": {"get": {**_op("Any game's state", state, 404), "parameters": game}},
            "/api/games/{game_id}/claim": {"post": {**_op("Pass a claim (R4, R7)", state, 400, 404, 409, 422, control=True, body=_obj(["amount"], amount=_INT, seat=_INT, events=_SEEN)), "parameters": game}},
            "/api/games/{game_id}/believe": {"post": {**_op("Believe the claim (R6-R8)", state, 400, 404, 409, control=True, body=_obj([], peeked={"type": "boolean"}, seat=_INT, events=_SEEN)), "parameters": game}},
            "/api/games/{game_id}/bluff": {"post": {**_op("Call Bluff: the camera reads the dice (R9, R10)", None, 400, 404, 409, control=True, body=_obj([], seat=_INT, events=_SEEN)), "parameters": game}},
            "/api/games/{game_id}/confirm": {"post": {**_op("Confirm the dice of an uncertain reading (R14)", state, 400, 404, 409, 422, control=True, body=_obj(["dice"], dice=_DICE, events=_SEEN)), "parameters": game}},
            "/api/games/{game_id}/challenges": {"get": {**_op("Every Bluff of a game", None, 404), "parameters": game}},
            "/api/challenges/{challenge_id}": {"get": {**_op("A saved Bluff", challenge, 404), "parameters": chal}},
            "/api/challenges/{challenge_id}/image": {"get": {**_op("The saved frame", {"type": "string", "format": "binary"}, 404, content="image/jpeg"), "parameters": chal}},
            "/api/challenges/{challenge_id}/annotated": {"get": {**_op("The frame with boxes and values drawn", {"type": "string", "format": "binary"}, 404, content="image/jpeg"), "parameters": chal}},
            "/api/challenges/{challenge_id}/correct": {"post": {**_op("Correct a Bluff's dice; re-decides it (R15)", None, 400, 404, 409, 422, control=True, body=_obj(["dice"], dice=_DICE, by={"type": "string", "description": "a player of this game, or \"table\" (the default)"}, after_game_over={"type": "boolean", "description": "true to correct a finished game (it may reopen it)"})), "parameters": chal}},
            "/api/games/{game_id}/rematch": {"post": {**_op("The same players and path again after a finished game; the loser starts", state, 404, 409, control=True, status="201", no_fields=True), "parameters": game}},
            "/api/games/{game_id}/evening": {"get": {**_op("The evening's games (a chain of rematches) and each player's losses", None, 404), "parameters": game}},
            "/api/table": {
                "get": _op("How the dice are got at a Bluff: camera \"auto\" or \"off\" (typed at the table)", None),
                "post": _op("Play with or without the camera", None, 400, control=True, body=_obj(["camera"], camera={"type": "string", "enum": ["auto", "off"]})),
            },
            "/api/events": {"get": _op("Server-Sent Events: a `state` event with the public state on every change (503 when too many viewers already watch)", {"type": "string"}, 503, content="text/event-stream")},
            "/api/sim/dice": {"post": _op("Simulation: the top faces of the next capture", None, 400, 404, 422, control=True, body=_obj(["values"], values={"type": "array", "items": {"type": "integer", "minimum": 1, "maximum": 6}, "minItems": 1, "maxItems": 6}))},
            "/api/sim/press": {"post": _op("Simulation: press a table button through its mock pin", None, 400, 404, 409, control=True, body=_obj(["button"], button={"type": "string"}))},
            "/api/model": {"get": _op("The face model in use (active, previous, shipped ids) and the table's own dataset (docs/API-EXTENSIONS.md)", None)},
            "/api/model/rollback": {"post": _op("Go back to the previous face model (one tap); the reader switches at once (409: none to go back to)", None, 400, 409, control=True)},
            "/api/model/teach": {"post": _op("Teach the table's dice from its confirmed Bluffs: fitted, measured, adopted only when better", None, 400, 409, control=True)},
            "/api/setup/preview": {"get": _op("Camera set-up: the tray now, small (JPEG); refused during a game (R13)", {"type": "string", "format": "binary"}, 409, 503, control=True, content="image/jpeg")},
            "/api/setup/check": {"get": _op("Camera set-up: brightness, glare and focus hints, the region and die size in force", None, 409, 503, control=True)},
            "/api/setup/region": {"post": _op("Camera set-up: store the tray's region [x, y, w, h] ([] the whole picture); 422 when it lies outside the picture or is narrower than a die", None, 400, 409, 422, control=True, body=_obj(["region"], region={"type": "array", "items": _INT}))},
            "/api/setup/empty-tray": {"post": _op("Camera set-up: keep the empty tray's photo (refused with a die on it)", None, 409, 422, control=True, no_fields=True)},
            "/api/setup/die-size": {"post": _op("Camera set-up: measure one die's side (reader.die_side_px)", None, 409, 422, control=True, no_fields=True)},
            "/api/setup/lens": {
                "post": _op("Camera set-up: measure the wide lens's bend on a printed chessboard (camera.lens_distortion; the board: /setup/chessboard.svg)", None, 409, 422, 503, control=True, no_fields=True),
                "delete": _op("Camera set-up: forget the lens's bend (camera.lens_distortion = 0)", None, 409, 503, control=True),
            },
            "/api/setup/face": {"post": _op("Show each face: one die with `top` on top joins the table's dataset, labelled with the face the camera saw", None, 400, 409, 422, control=True, body=_obj(["top"], top=_INT))},
        },
        "components": {
            "schemas": {"Error": _ERROR, "GameState": _STATE, "Challenge": _CHALLENGE},
            "securitySchemes": {"tablePin": {"type": "apiKey", "in": "header", "name": "X-Table-Pin"}, "session": {"type": "apiKey", "in": "cookie", "name": "eb_session"}},
        },
    }
