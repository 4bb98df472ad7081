"""The teaching routes: the face model in use, one tap back to the previous one, and teaching from the table's own dice.

``GET /api/model`` (the active and previous model ids and the table's dataset,
no dice of any round in it); ``POST /api/model/rollback`` and ``POST
/api/model/teach`` need the table PIN. Both switch the running reader at once,
so ``/api/health``, the next reading and the next saved Bluff carry the new id.
"""

from __future__ import annotations

import threading
from typing import Any

from flask import Blueprint, current_app, jsonify

from companion.core.errors import NotAllowed
from companion.app.web.security import require_pin

bp = Blueprint("teach_api", __name__, url_prefix="/api")

_teaching = threading.Lock()


def _services() -> Any:
    return current_app.extensions["elephants_bluff"]


def _model_status(s: Any) -> dict[str, Any]:
    from companion.app.teach.dataset import OwnerDataset
    from vision.registry import ModelRegistry

    status = ModelRegistry.for_settings(s.instance, s.settings).status()
    status["reading_with"] = s.model_id
    status["dataset"] = OwnerDataset(s.instance, max_crops=s.settings.get("teach.max_crops", 3000)).summary()
    status["collecting"] = bool(s.settings.get("teach.collect", True))
    return status


@bp.get("/model")
def model_status():  # noqa: ANN201
    return jsonify(_model_status(_services()))


@bp.post("/model/rollback")
@require_pin
def model_rollback():  # noqa: ANN201
    from companion.app.teach.service import rollback, switch_reader

    s = _services()
    rollback(s.instance, s.settings)
    switch_reader(s)
    return jsonify(_model_status(s))


@bp.post("/model/teach")
@require_pin
def model_teach():  # noqa: ANN201
    from companion.app.teach.service import owner_examples, switch_reader, teach

    s = _services()
    if not _teaching.acquire(blocking=False):
        raise NotAllowed("The dice are being taught already: wait for that to finish.", code="teaching")
    try:
        result = teach(s.instance, s.settings, owner_examples(s.instance, s.settings))
        if result["adopted"]:
            switch_reader(s)
        result["model"] = _model_status(s)
        return jsonify(result)
    finally:
        _teaching.release()
