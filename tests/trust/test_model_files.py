"""A missing, corrupt or mismatched model file: the companion still starts, says why, and every Bluff goes to the table (R14)."""

from __future__ import annotations

from pathlib import Path

import pytest

from companion.app.services import build_services
from companion.app.settings import Settings
from companion.app.web import close_app, create_app
from tests.trust.conftest import PIN, PIN_HEADERS
from vision.classifier import shipped_model_path
from vision.detector_learned import default_model_path


def _damaged(shipped: Path, tmp_path: Path) -> Path:
    """A copy of a shipped model with one byte of its weights changed, as a card fault leaves it: it still loads."""
    data = bytearray(shipped.read_bytes())
    data[len(data) // 2] ^= 0x40
    path = tmp_path / "card" / shipped.name
    path.parent.mkdir()
    path.write_bytes(bytes(data))
    return path


def _bad_file(tmp_path: Path, kind: str) -> Path:
    if kind == "damaged":
        return _damaged(shipped_model_path(), tmp_path)
    if kind == "damaged detector":
        return _damaged(default_model_path(), tmp_path)
    path = tmp_path / f"{kind}.onnx"
    if kind == "corrupt":
        path.write_bytes(b"\x08\x01this is not an onnx graph" * 10)
    elif kind == "mismatched":
        path.write_bytes(shipped_model_path().read_bytes())  # the face classifier handed over as a detector
    elif kind == "a detector":
        path.write_bytes(default_model_path().read_bytes())  # the detector handed over as the face classifier
    return path  # "missing": never written


@pytest.mark.parametrize(
    ("setting", "kind", "words"),
    [
        ("reader__detector_model", "missing", "is missing"),
        ("reader__detector_model", "corrupt", "cannot be loaded"),
        ("reader__detector_model", "mismatched", "cannot be loaded"),
        ("reader__model", "corrupt", "cannot be loaded"),
        ("reader__model", "a detector", "it does not read 40×40 colour pictures of a die"),
        ("reader__model", "damaged", "does not hash to the id in its name"),
        ("reader__detector_model", "damaged detector", "does not hash to the id in its name"),
    ],
    ids=["detector missing", "detector corrupt", "classifier given as detector", "classifier corrupt", "detector given as classifier",
         "classifier damaged", "detector damaged"],
)
def test_a_bad_model_file_leaves_the_companion_up_and_every_bluff_to_the_table(tmp_path, setting, kind, words):
    settings = Settings.defaults().with_overrides(table__pin=PIN, reader__detector="learned", **{setting: str(_bad_file(tmp_path, kind))})
    instance = tmp_path / "instance"
    services = build_services(instance, settings, simulate=True)
    app = create_app(instance, simulate=True, settings=settings, test_config={"TESTING": True}, services=services)
    try:
        client = app.test_client()
        health = client.get("/api/health").get_json()
        assert any(words in p for p in health["problems"]), health
        assert [(d["code"], d["params"]["reader_part"]) for d in health["problem_details"]] == [("reader", "model")]
        gid = client.post("/api/games", json={"players": ["Ann", "Ben"]}, headers=PIN_HEADERS).get_json()["id"]
        assert client.post(f"/api/games/{gid}/claim", json={"amount": 9}, headers=PIN_HEADERS).status_code == 200
        body = client.post(f"/api/games/{gid}/bluff", json={}, headers=PIN_HEADERS).get_json()
        assert body["state"]["phase"] == "confirm" and words in str(body["challenge"])
    finally:
        close_app(app)


@pytest.mark.parametrize(("module", "file", "words"), [
    ("leaning_cue", "leaning-cue.npz", "judged by its outline only"),
    ("number_cue", "number-cue.npz", "numbers or signs are not doubted"),
])
def test_without_a_cue_file_the_companion_is_up_and_health_says_what_the_reader_does_without_it(tmp_path, monkeypatch, module, file, words):
    import importlib

    monkeypatch.setattr(importlib.import_module(f"vision.{module}"), "shipped_cue_path", lambda: tmp_path / file)  # never written
    settings = Settings.defaults().with_overrides(table__pin=PIN)
    instance = tmp_path / "instance"
    services = build_services(instance, settings, simulate=True)
    app = create_app(instance, simulate=True, settings=settings, test_config={"TESTING": True}, services=services)
    try:
        health = app.test_client().get("/api/health").get_json()
        assert any(words in p and "missing" in p for p in health["problems"]), health
    finally:
        close_app(app)


@pytest.mark.parametrize(("setting", "words"), [
    ("reader__leaning_cue", "judged by its outline only"),
    ("reader__number_cue", "numbers or signs are not doubted"),
])
@pytest.mark.parametrize("kind", ["missing", "corrupt", "shipped"])
def test_a_cue_file_named_in_the_config_is_used_or_health_says_why_not(tmp_path, setting, words, kind):
    """``[reader] number_cue`` / ``leaning_cue`` name the cues fit on a ``[reader] model`` of one's own: a missing or
    damaged one leaves the companion up and says so; a good one is used."""
    from vision import leaning_cue, number_cue

    shipped = (leaning_cue if "leaning" in setting else number_cue).shipped_cue_path()
    path = tmp_path / "my-cue.npz"
    if kind == "corrupt":
        path.write_bytes(b"not a cue at all" * 8)
    elif kind == "shipped":
        path.write_bytes(shipped.read_bytes())
    problems = _health_problems(tmp_path, Settings.defaults().with_overrides(table__pin=PIN, **{setting: str(path)}))
    said = [p for p in problems if words in p]
    if kind == "shipped":
        assert not said, problems
    else:
        assert len(said) == 1 and "my-cue.npz" in said[0] and ("missing" if kind == "missing" else "cannot be read") in said[0], problems


@pytest.mark.parametrize("kind", ["missing", "corrupt", "a detector", "shipped"])
def test_a_second_opinion_named_in_the_config_is_used_or_health_says_why_not(tmp_path, kind):
    """``[reader] second_opinion``: a missing or damaged model leaves the companion up and says what goes unchecked;
    the shipped file named there is used, and says nothing."""
    from vision.second_opinion import shipped_path

    path = tmp_path / "my-second-opinion.onnx"
    if kind == "corrupt":
        path.write_bytes(b"\x08\x01this is not an onnx graph" * 10)
    elif kind == "a detector":
        path.write_bytes(default_model_path().read_bytes())
    elif kind == "shipped":
        path.write_bytes(shipped_path().read_bytes())
    problems = _health_problems(tmp_path, Settings.defaults().with_overrides(table__pin=PIN, reader__second_opinion=str(path)))
    said = [p for p in problems if "not checked again" in p]
    if kind == "shipped":
        assert not said, problems
    else:
        assert len(said) == 1 and "my-second-opinion.onnx" in said[0] and ("missing" if kind == "missing" else "cannot be loaded") in said[0], problems


def _health_problems(tmp_path: Path, settings: Settings) -> list[str]:
    """The problems ``/api/health`` lists for a companion started with ``settings`` (simulated camera)."""
    instance = tmp_path / "instance"
    services = build_services(instance, settings, simulate=True)
    app = create_app(instance, simulate=True, settings=settings, test_config={"TESTING": True}, services=services)
    try:
        return app.test_client().get("/api/health").get_json()["problems"]
    finally:
        close_app(app)
