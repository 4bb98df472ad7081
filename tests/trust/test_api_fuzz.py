"""Schema-driven fuzzing of the HTTP API (schemathesis) and hostile raw bodies: never a 5xx, and every answer's status
one that ``/api/openapi.json`` names for that operation.

Schemathesis reads ``/api/openapi.json`` from the real app and sends generated
requests (valid and invalid) to every operation, with the table PIN, so the
control routes' bodies are exercised past the PIN check; about half the game
and challenge ids are real ones. ``/api/events`` is left out (a stream that
never ends); the R13 and load tests cover it.
"""

from __future__ import annotations

import json

import pytest
import schemathesis
from schemathesis import GenerationMode
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from .conftest import PIN, PIN_HEADERS
from companion.app.web.openapi import openapi_spec

# Schemathesis' own pytest plugin (parametrize/from_fixture) does not run under
# pytest 9 yet, so its Python API gives the strategies and hypothesis runs them.
OPERATIONS = [(path, method.upper()) for path, ops in openapi_spec()["paths"].items() for method in ops if path != "/api/events"]


def _seed_game(app):  # noqa: ANN001, ANN202
    client = app.test_client()
    gid = client.post("/api/games", json={"players": ["Ann", "Ben", "Cy"]}, headers=PIN_HEADERS).get_json()["id"]
    client.post(f"/api/games/{gid}/claim", json={"amount": 8}, headers=PIN_HEADERS)
    cid = client.post(f"/api/games/{gid}/bluff", json={}, headers=PIN_HEADERS).get_json()["challenge"]["id"]
    client.post(f"/api/games/{gid}/claim", json={"amount": 5}, headers=PIN_HEADERS)
    return {"game_id": gid, "challenge_id": cid}


@pytest.mark.parametrize("path,method", OPERATIONS, ids=[f"{m} {p}" for p, m in OPERATIONS])
def test_generated_requests_never_get_a_server_error(app, path, method):
    real = _seed_game(app)
    operation = schemathesis.openapi.from_wsgi("/api/openapi.json", app)[path][method]
    strategy = st.one_of(operation.as_strategy(GenerationMode.POSITIVE), operation.as_strategy(GenerationMode.NEGATIVE))
    declared = set(openapi_spec()["paths"][path][method.lower()]["responses"])  # every answer is one the spec names

    @settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True, database=None)
    @given(case=strategy, use_real_ids=st.booleans())
    def fuzz(case, use_real_ids):  # noqa: ANN001
        for name in list(case.path_parameters or {}):
            if use_real_ids and name in real:
                case.path_parameters[name] = real[name]
        response = case.call(headers={"X-Table-Pin": PIN})
        assert response.status_code < 500, f"{case.method} {case.formatted_path} {case.body!r:.200} -> {response.status_code}: {response.text[:300]}"
        assert str(response.status_code) in declared, f"{case.method} {case.formatted_path} {case.body!r:.200} -> {response.status_code}, not in /api/openapi.json's {sorted(declared)}: {response.text[:300]}"
        if response.status_code >= 400 and response.headers.get("Content-Type", "").startswith("application/json"):
            body = response.json()
            assert set(body) >= {"error", "message"} and body["message"], body

    fuzz()


POST_ROUTES = ["/api/games", "/api/games/{gid}/claim", "/api/games/{gid}/believe", "/api/games/{gid}/bluff", "/api/games/{gid}/confirm", "/api/challenges/{cid}/correct", "/api/session", "/api/sim/dice", "/api/sim/press"]

hostile_bodies = st.one_of(
    st.binary(max_size=200),
    st.builds(lambda n: b"[" * n + b"]" * n, st.integers(min_value=1, max_value=30000)),
    st.builds(lambda n: b'{"a":' * n + b"1" + b"}" * n, st.integers(min_value=1, max_value=20000)),
    st.builds(lambda n: ('{"amount": ' + "9" * n + "}").encode(), st.integers(min_value=1, max_value=6000)),
    st.sampled_from([b'{"amount": NaN}', b'{"amount": Infinity}', b'{"amount": -1e400}', b'{"dice": [1e308, 2, 3]}', b'{"players": ["\\ud800", "B"]}', b"\xff\xfe{}", b'{"players": "AnnBen"}', b"null", b'"x"', b"{" * 3]),
    st.dictionaries(st.sampled_from(["players", "amount", "dice", "seat", "peeked", "pin", "values", "button", "by", "path_length", "starter", "ages"]), st.recursive(st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8), lambda c: st.lists(c, max_size=4) | st.dictionaries(st.text(max_size=4), c, max_size=3), max_leaves=8)).map(lambda d: json.dumps(d).encode()),
)


@settings(max_examples=120, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True, database=None)
@given(route=st.sampled_from(POST_ROUTES), body=hostile_bodies, content_type=st.sampled_from(["application/json", "text/plain", "application/x-www-form-urlencoded"]))
def test_hostile_raw_bodies_get_a_clear_4xx_and_change_nothing(app, route, body, content_type):
    client = app.test_client()
    referee = app.extensions["elephants_bluff"].referee
    gid = referee.current_game_id()
    if gid is None:
        gid = client.post("/api/games", json={"players": ["Ann", "Ben"]}, headers=PIN_HEADERS).get_json()["id"]
    before = {g: referee.game_state(g) for g in referee.game_ids()}
    path = route.format(gid=gid, cid=f"c-{gid[2:]}-1")
    response = client.post(path, data=body, headers={**PIN_HEADERS, "Content-Type": content_type})
    assert response.status_code < 500, (path, body[:80], response.status_code, response.get_data()[:200])
    if response.status_code >= 400:
        payload = response.get_json()
        assert payload["message"] and payload["error"]
        assert {g: referee.game_state(g) for g in referee.game_ids()} == before, "a refused request changed a game"
