"""Request bodies: JSON objects only, sent as JSON, each key once.

Flask's ``get_json(force=True)`` parsed any body as JSON whatever its
``Content-Type`` (a form post from another page, a text upload), and
Python's ``json`` keeps the last of two equal keys, so ``{"amount": 3,
"amount": 18}`` meant 18 to the server and 3 to a proxy or a log that read
the first. Both are refused here, each with a sentence a player understands.

>>> parse_json_object(b'{"amount": 12}', "application/json; charset=utf-8")
{'amount': 12}
>>> parse_json_object(b'{"amount": 3, "amount": 18}', "application/json")
Traceback (most recent call last):
...
companion.core.errors.BadRequest: The request gives the field 'amount' twice: give each field once.
"""

from __future__ import annotations

import json
from typing import Any

from companion.core.errors import BadRequest, UnsupportedMediaType


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    seen: dict[str, Any] = {}
    for key, value in pairs:
        if key in seen:
            raise BadRequest(f"The request gives the field {key!r} twice: give each field once.")
        seen[key] = value
    return seen


def _no_constant(name: str) -> Any:
    raise BadRequest(f"The request body holds {name}, which is not a number in JSON.")


def parse_json_object(body: bytes, content_type: str | None) -> dict[str, Any]:
    """The body as a JSON object; an empty body is ``{}`` (a button press needs no body)."""
    if not body:
        return {}
    media = (content_type or "").split(";", 1)[0].strip().lower()
    if media != "application/json":
        shown = media or "no type at all"
        raise UnsupportedMediaType(f"This request must be sent as JSON (Content-Type: application/json), not as {shown}.")
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError:
        raise BadRequest("The request body is not UTF-8 text.") from None
    try:
        data = json.loads(text, object_pairs_hook=_no_duplicates, parse_constant=_no_constant)
    except RecursionError:  # "[[[[…]]]]" nested deeper than Python's stack: not a ValueError
        raise BadRequest("The request body is nested too deeply to be a request of this API.") from None
    except ValueError as exc:
        if isinstance(exc, BadRequest):
            raise
        raise BadRequest("The request body is not valid JSON.") from None
    if not isinstance(data, dict):
        raise BadRequest("The request body must be a JSON object, like {\"amount\": 12}.")
    return data
