"""The JSON API of ``shared/API.md``: health, session, games, challenges and their images."""

from __future__ import annotations

import io
from dataclasses import is_dataclass, replace
from typing import Any

from flask import Blueprint, current_app, jsonify, request, send_file

from companion import __version__
from companion.app.checks import full_findings, quick_findings
from companion.app.services import current_problems
from companion.core.errors import BadRequest, NotFound
from companion.app.web.bodies import parse_json_object
from companion.app.web.openapi import openapi_spec
from companion.app.web.security import close_session, current_session, open_session, require_pin

bp = Blueprint("api", __name__, url_prefix="/api")


def services() -> Any:
    return current_app.extensions["elephants_bluff"]


def json_body(*allowed: str) -> dict[str, Any]:
    """The request's JSON object (``bodies.py``): malformed JSON, a key twice, another type or an unknown field is a 400, a body not sent as JSON a 415."""
    data = parse_json_object(request.get_data(cache=True), request.content_type)
    unknown = sorted(set(data) - set(allowed))
    if unknown:
        raise BadRequest(f"Unknown field {unknown[0]!r}: this request takes {', '.join(allowed) or 'no fields'}.")
    return data


def _with_urls(challenge: dict[str, Any]) -> dict[str, Any]:
    cid = challenge["id"]
    # a second look's photo (``first_look``) has its own address: a page cached the first one's for an hour
    look = "?look=2" if challenge.get("first_look") else ""
    challenge["image_url"] = f"/api/challenges/{cid}/image{look}" if challenge["has_images"] else None
    challenge["annotated_url"] = f"/api/challenges/{cid}/annotated{look}" if challenge["has_images"] else None
    return challenge


@bp.get("/health")
def health():  # noqa: ANN201
    s = services()
    inside = str(s.instance).rstrip("/") + "/"  # anyone may read health: name files within the instance folder only
    camera_status = s.dice_source.health()
    problems = [_within_instance(p, inside) for p in current_problems(s, camera_status)]
    return jsonify(
        {
            "status": "ok" if not problems else "degraded",
            "version": __version__,
            "camera": s.dice_source.name,
            "camera_status": _within_instance(camera_status, inside),
            "gpio": s.gpio_name,
            "model": s.model_id,
            "simulate": s.simulate,
            "problems": [p.sentence for p in problems],
            "problem_details": [p.to_dict() for p in problems],
            "viewers": s.referee.viewer_count,
            "checks": [f.to_dict() for f in quick_findings(s)],
        }
    )


def _within_instance(said: Any, inside: str) -> Any:
    """``said`` (a sentence, a problem and its params, or what they hold) naming files within the instance folder only."""
    if isinstance(said, str):
        return said.replace(inside, "")
    if isinstance(said, dict):
        return {k: _within_instance(v, inside) for k, v in said.items()}
    if isinstance(said, (list, tuple)):
        return [_within_instance(v, inside) for v in said]
    if is_dataclass(said):
        return replace(said, problem=_within_instance(said.problem, inside), params=_within_instance(said.params, inside))
    return said


@bp.get("/check")
@require_pin
def check():  # noqa: ANN201
    """Every check before a game, the camera too: what is wrong, each with what to do (words only, never a frame)."""
    findings = full_findings(services())
    return jsonify({"ready": not findings, "findings": [f.to_dict() for f in findings]})


@bp.get("/openapi.json")
def openapi():  # noqa: ANN201
    return jsonify(openapi_spec())


@bp.get("/session")
def session_status():  # noqa: ANN201
    """Whether this device is let in, and how many wrong PINs were tried in the last hour (shown to the table)."""
    mine = current_session()
    return jsonify({"control": mine is not None, "session": mine["id"] if mine else None, "wrong_pins_last_hour": current_app.extensions["eb_auth"].wrong_pins_since(3600)})


@bp.post("/session")
def session_open():  # noqa: ANN201
    body = json_body("pin")
    return jsonify(open_session(body.get("pin")))


@bp.delete("/session")
def session_close():  # noqa: ANN201
    close_session()
    return jsonify({"control": False})


@bp.get("/sessions")
@require_pin
def sessions_list():  # noqa: ANN201
    """Every device let in by the PIN, newest first (docs/SECURITY.md)."""
    mine = current_session()
    listed = current_app.extensions["eb_auth"].sessions()
    return jsonify({"sessions": [{**s, "this_device": bool(mine and s["id"] == mine["id"])} for s in listed]})


@bp.delete("/sessions/<session_id>")
@require_pin
def session_revoke(session_id: str):  # noqa: ANN201
    if not current_app.extensions["eb_auth"].revoke(session_id):
        raise NotFound("There is no such session (it may have ended already).")
    return jsonify({"revoked": session_id})


@bp.delete("/sessions")
@require_pin
def sessions_revoke_all():  # noqa: ANN201
    """Every device must type the PIN again (this one too)."""
    return jsonify({"revoked": current_app.extensions["eb_auth"].revoke_all()})


@bp.post("/games")
@require_pin
def new_game():  # noqa: ANN201
    body = json_body("players", "path_length", "starter", "ages")
    if "players" not in body:
        raise BadRequest("Give the players, in seating order: {\"players\": [\"Ann\", \"Ben\"]}.")
    state = services().referee.new_game(body["players"], body.get("path_length"), body.get("starter"), body.get("ages"))
    return jsonify(state), 201


@bp.get("/games")
def list_games():  # noqa: ANN201
    referee = services().referee
    return jsonify({"games": [referee.game_state(g) for g in reversed(referee.game_ids()[-50:])], "current": referee.current_game_id()})


@bp.get("/games/current")
def current_game():  # noqa: ANN201
    referee = services().referee
    game_id = referee.current_game_id()
    if game_id is None:
        raise NotFound("No game is in progress: start one.")
    return jsonify(referee.game_state(game_id))


@bp.get("/games/<game_id>")
def game(game_id: str):  # noqa: ANN201
    return jsonify(services().referee.game_state(game_id))


@bp.post("/games/<game_id>/claim")
@require_pin
def claim(game_id: str):  # noqa: ANN201
    body = json_body("amount", "seat", "events")
    if "amount" not in body:
        raise BadRequest("Say how many elephants you claim: {\"amount\": 12}.")
    return jsonify(services().referee.claim(game_id, body["amount"], body.get("seat"), seen=body.get("events")))


@bp.post("/games/<game_id>/believe")
@require_pin
def believe(game_id: str):  # noqa: ANN201
    body = json_body("peeked", "seat", "events")
    return jsonify(services().referee.believe(game_id, body.get("peeked", False), body.get("seat"), seen=body.get("events")))


@bp.post("/games/<game_id>/bluff")
@require_pin
def bluff(game_id: str):  # noqa: ANN201
    body = json_body("seat", "events")
    state, challenge = services().referee.bluff(game_id, body.get("seat"), seen=body.get("events"))
    return jsonify({**state, "state": state, "challenge": _with_urls(challenge)})


@bp.post("/games/<game_id>/confirm")
@require_pin
def confirm(game_id: str):  # noqa: ANN201
    body = json_body("dice", "events")
    if "dice" not in body:
        raise BadRequest("Give the three top faces: {\"dice\": [6, 2, 5]}.")
    return jsonify(services().referee.confirm(game_id, body["dice"], session=_session_tag(), seen=body.get("events")))


@bp.get("/games/<game_id>/challenges")
def game_challenges(game_id: str):  # noqa: ANN201
    return jsonify({"challenges": [_with_urls(c) for c in services().referee.challenges(game_id)]})


@bp.get("/challenges/<challenge_id>")
def challenge(challenge_id: str):  # noqa: ANN201
    return jsonify(_with_urls(services().referee.challenge(challenge_id)))


@bp.get("/challenges/<challenge_id>/image")
def challenge_image(challenge_id: str):  # noqa: ANN201
    return _frame(challenge_id, "image")


@bp.get("/challenges/<challenge_id>/annotated")
def challenge_annotated(challenge_id: str):  # noqa: ANN201
    return _frame(challenge_id, "annotated")


def _frame(challenge_id: str, kind: str):  # noqa: ANN202
    photo = services().referee.frame_photo(challenge_id, kind)  # the bytes checked against the log are the bytes sent
    return send_file(io.BytesIO(photo.data), mimetype="image/jpeg", max_age=3600, etag=photo.sha256)


@bp.post("/challenges/<challenge_id>/correct")
@require_pin
def correct(challenge_id: str):  # noqa: ANN201
    body = json_body("dice", "by", "after_game_over")
    if "dice" not in body:
        raise BadRequest("Give the corrected three top faces: {\"dice\": [6, 2, 5]}.")
    state, challenge = services().referee.correct(
        challenge_id, body["dice"], body.get("by", "table"), session=_session_tag(), after_game_over=body.get("after_game_over", False)
    )
    return jsonify({"state": state, "challenge": _with_urls(challenge)})


def _session_tag() -> str:
    """Which PIN-holder sent this: the device's session id (listed and revocable), or the PIN header."""
    if request.headers.get("X-Table-Pin") is not None:
        return "pin-header"
    mine = current_session()
    return mine["id"] if mine else "unknown"


@bp.post("/games/<game_id>/rematch")
@require_pin
def rematch(game_id: str):  # noqa: ANN201
    """The same players and path again after a finished game; the loser starts (docs/API-EXTENSIONS.md)."""
    json_body()
    return jsonify(services().referee.rematch(game_id)), 201


@bp.get("/games/<game_id>/evening")
def evening(game_id: str):  # noqa: ANN201
    """The evening this game belongs to (its chain of rematches) and who lost how often."""
    return jsonify(services().referee.evening(game_id))


@bp.get("/table")
def table_settings():  # noqa: ANN201
    """How this table gets the dice: {"camera": "auto" | "off", "camera_works", "dice_typed"}."""
    return jsonify({**services().referee.table_view(), "simulate": services().simulate})


@bp.post("/table")
@require_pin
def set_table():  # noqa: ANN201
    """``{"camera": "off"}``: the table types the dice at each Bluff; ``"auto"``: the camera reads them when it works."""
    body = json_body("camera")
    return jsonify({**services().referee.set_camera_mode(body.get("camera")), "simulate": services().simulate})
