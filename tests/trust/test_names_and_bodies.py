"""Names that read as what they are, and bodies that mean one thing (issue 27)."""

from __future__ import annotations

import pytest

from .conftest import PIN_HEADERS, start_game


def _start(client, players):  # noqa: ANN001, ANN202
    return client.post("/api/games", json={"players": players}, headers=PIN_HEADERS)


def test_names_are_normalised_so_full_width_letters_are_the_same_name(client):
    game = start_game(client, players=("Ａｎｎ", "Ben"))
    assert [p["name"] for p in game["players"]] == ["Ann", "Ben"]
    assert _start(client, ["Ann", "Ａｎｎ"]).status_code == 422
    spaced = start_game(client, players=("Ann\u00a0Lee", "Ben\u2003Ray"))  # a no-break and an em space are spaces
    assert [p["name"] for p in spaced["players"]] == ["Ann Lee", "Ben Ray"]


@pytest.mark.parametrize(
    "name",
    ["An\u200bn", "\u200bAnn", "Ann\u2060", "A\u00adnn", "Ann\u202e", "\u3164", "Ann\ufeff", "An\u200dn", "Ann\u2028Lee"],
    ids=["zero-width space", "leading zero-width space", "word joiner", "soft hyphen", "right-to-left override", "hangul filler", "byte order mark", "joiner between letters", "line separator"],
)
def test_invisible_characters_in_a_name_are_refused_in_words(client, name):
    response = _start(client, [name, "Ben"])
    assert response.status_code == 422, response.get_json()
    message = response.get_json()["message"]
    assert "invisible" in message or "space" in message or "line" in message
    assert client.get("/api/games/current").status_code == 404, "a refused game was started"


def test_a_name_mixing_cyrillic_and_latin_letters_is_refused(client):
    response = _start(client, ["\u0410nn", "Ben"])  # a Cyrillic А, then Latin nn
    assert response.status_code == 422
    assert "alphabets" in response.get_json()["message"] and "Cyrillic" in response.get_json()["message"]


def test_a_name_that_looks_like_another_players_is_refused(client):
    for pair in (["Ann", "\u0410\u043f\u043f"], ["Bob", "B0b"], ["Emma", "Ernma"], ["Ali", "Alı"]):
        response = _start(client, pair)
        assert response.status_code == 422, pair
        assert "look alike" in response.get_json()["message"], response.get_json()


def test_names_in_one_other_alphabet_and_any_emoji_are_welcome(client):
    family = "👩\u200d👩\u200d👧"
    game = start_game(client, players=("Анна", "Ἀλέξης", "山田", family, "👍🏽", "🏳️\u200d🌈", "Zoë"))
    assert [p["name"] for p in game["players"]] == ["Анна", "Ἀλέξης", "山田", family, "👍🏽", "🏳️\u200d🌈", "Zoë"]


def test_a_json_body_with_a_key_twice_is_refused(client):
    game = start_game(client)
    response = client.post(f"/api/games/{game['id']}/claim", data=b'{"amount": 3, "amount": 18}', headers={**PIN_HEADERS, "Content-Type": "application/json"})
    assert response.status_code == 400 and "'amount' twice" in response.get_json()["message"]
    nested = client.post("/api/games", data=b'{"players": ["Ann", "Ben"], "ages": [{"a": 1, "a": 2}, 3]}', headers={**PIN_HEADERS, "Content-Type": "application/json"})
    assert nested.status_code == 400
    assert client.get(f"/api/games/{game['id']}").get_json() == game


@pytest.mark.parametrize("content_type", ["text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x", "application/jsonp", None])
def test_a_body_not_sent_as_json_is_refused_with_415(client, content_type):
    game = start_game(client)
    headers = {**PIN_HEADERS, **({"Content-Type": content_type} if content_type else {})}
    response = client.post(f"/api/games/{game['id']}/claim", data=b'{"amount": 9}', headers=headers)
    assert response.status_code == 415
    assert response.get_json()["error"] == "unsupported_media_type" and "as JSON" in response.get_json()["message"]
    assert client.get(f"/api/games/{game['id']}").get_json() == game


def test_json_with_a_charset_and_an_empty_body_for_a_button_are_accepted(client):
    game = start_game(client)
    claimed = client.post(f"/api/games/{game['id']}/claim", data=b'{"amount": 9}', headers={**PIN_HEADERS, "Content-Type": "application/json; charset=UTF-8"})
    assert claimed.status_code == 200
    bluff = client.post(f"/api/games/{game['id']}/bluff", headers=PIN_HEADERS)  # the page sends no body for a button
    assert bluff.status_code == 200
