"""The camera set-up page (``/setup``) and its routes (``/api/setup/...``): every one needs the table PIN.

The page and its routes show the tray, so each is refused while a game is in
progress (R13) and none is public: without the PIN the page asks for it and
shows no picture. See ``companion/app/teach/setup.py``.
"""

from __future__ import annotations

from flask import Blueprint, Response, jsonify, request

from companion.app.web.api import json_body, services
from companion.app.web.security import has_control, require_pin

bp = Blueprint("setup", __name__)


@bp.get("/setup")
def setup_page():  # noqa: ANN201
    from companion.app.web.pages import _render

    return _render("setup.html", "setup", control=has_control())


@bp.get("/api/setup/preview")
@require_pin
def preview():  # noqa: ANN201
    from companion.app.teach.setup import preview_jpeg

    response = Response(preview_jpeg(services()), mimetype="image/jpeg")
    response.headers["Cache-Control"] = "no-store"
    return response


@bp.get("/api/setup/check")
@require_pin
def check():  # noqa: ANN201
    from companion.app.teach.setup import check as check_now

    return jsonify(check_now(services()))


@bp.post("/api/setup/region")
@require_pin
def region():  # noqa: ANN201
    from companion.app.teach.setup import set_region

    return jsonify(set_region(services(), json_body("region").get("region")))


@bp.post("/api/setup/empty-tray")
@require_pin
def empty_tray():  # noqa: ANN201
    from companion.app.teach.setup import store_empty_tray

    json_body()
    return jsonify(store_empty_tray(services()))


@bp.post("/api/setup/die-size")
@require_pin
def die_size():  # noqa: ANN201
    from companion.app.teach.setup import measure_die

    json_body()
    return jsonify(measure_die(services()))


@bp.post("/api/setup/lens")
@require_pin
def lens():  # noqa: ANN201
    from companion.app.teach.setup import measure_lens

    json_body()
    return jsonify(measure_lens(services()))


@bp.delete("/api/setup/lens")
@require_pin
def lens_forget():  # noqa: ANN201
    from companion.app.teach.setup import forget_lens

    return jsonify(forget_lens(services()))


@bp.get("/setup/chessboard.svg")
def chessboard():  # noqa: ANN201
    """The board to print for the lens step: a pattern, nothing of the table, so no PIN."""
    from companion.app.web import i18n
    from vision.calibrate import BOARD_SQUARE_MM, printable_board

    note = i18n.translate(i18n.pick_language(request), "cam_board_note", mm=BOARD_SQUARE_MM)  # ?lang= or the browser's
    response = Response(printable_board(note=note), mimetype="image/svg+xml")
    response.headers["Content-Disposition"] = 'inline; filename="elephants-bluff-lens-chessboard.svg"'
    return response


@bp.post("/api/setup/face")
@require_pin
def face():  # noqa: ANN201
    from companion.app.teach.setup import capture_face

    return jsonify(capture_face(services(), json_body("top").get("top")))
