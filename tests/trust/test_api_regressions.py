"""5xx found by the fuzzing, each kept as a named regression test."""

from __future__ import annotations

from .conftest import PIN_HEADERS, start_game


def test_a_json_body_nested_too_deeply_is_a_clear_400_not_a_server_error(client):
    game = start_game(client)
    for body in (b"[" * 30000 + b"]" * 30000, b"{\"a\":" * 10000 + b"1" + b"}" * 10000):  # within the 64 KB limit
        response = client.post(f"/api/games/{game['id']}/claim", data=body, headers={**PIN_HEADERS, "Content-Type": "application/json"})
        assert response.status_code == 400
        assert response.get_json() == {"error": "bad_request", "message": "The request body is nested too deeply to be a request of this API."}
    assert client.get(f"/api/games/{game['id']}").get_json() == game
