"""Simulation-only routes (``serve --simulate``): 404 on a real table."""

from __future__ import annotations

from flask import Blueprint, abort, current_app, jsonify

from companion.app.web.api import json_body
from companion.app.web.security import require_pin
from companion.core.dice import is_face
from companion.core.errors import BadRequest, NotAllowed, RuleRefused

bp = Blueprint("sim", __name__, url_prefix="/api/sim")


@bp.before_request
def _only_in_simulation():  # noqa: ANN202
    if not current_app.extensions["elephants_bluff"].simulate:
        abort(404)


@bp.post("/dice")
@require_pin
def set_dice():  # noqa: ANN201
    """The top faces the simulated table shows at the next capture (1-6 dice, to test R14)."""
    body = json_body("values")
    values = body.get("values")
    if not isinstance(values, list) or not all(isinstance(v, int) and not isinstance(v, bool) for v in values):
        raise BadRequest("Give the dice as a list of numbers, like {\"values\": [6, 2, 5]}.")
    if not 1 <= len(values) <= 6:
        raise RuleRefused("The simulated table holds 1 to 6 dice.")
    if not all(is_face(v) for v in values):
        raise RuleRefused("Each die shows 1 to 6 elephants.")
    current_app.extensions["elephants_bluff"].sim_table.set_next_values(values)
    return jsonify({"values": values})


@bp.post("/press")
@require_pin
def press():  # noqa: ANN201
    """Press a table button by driving its gpiozero mock pin, so the real button code runs."""
    body = json_body("button")
    button = body.get("button")
    if not isinstance(button, str):
        raise BadRequest("Name the button to press, like {\"button\": \"bluff\"}.")
    table = current_app.extensions["elephants_bluff"].table
    if table is None:
        raise NotAllowed("This table has no buttons (gpio.pin_factory is none).")
    return jsonify({"pressed": button, **table.press(button)})
