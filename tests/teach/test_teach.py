"""Teaching on the device: fit a head with numpy, measure before adopting, the registry, rollback, the id everywhere.

Real parts: onnxruntime, the shipped model, the renderer, the Flask test
client, real files. The owner's dice are pink dice printed with numbers
instead of marks (``numeral_die``), a look no shipped classifier learned, so
the test holds whatever classifier is shipped: 8 crops of each face to learn
from, 12 held back.
"""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path

import cv2
import numpy as np
import pytest

from companion.app.cli import main
from companion.app.settings import CONFIG_NAME, Settings
from companion.app.web import close_app, create_app
from companion.core.files import atomic_write
from companion.core.settings import write_config
from models.training.other_looks import number_die
from vision.classifier import shipped_model_id, shipped_model_path
from vision.reader import load_reader
from vision.registry import ModelRegistry
from vision.simtable import render_table

PIN = "4321"
H = {"X-Table-Pin": PIN}


def numeral_die(value: int, rng: np.random.Generator, size: int = 64) -> np.ndarray:
    """A crop of a pink die printed with its number instead of marks, at any angle: a look the shipped classifier never
    learned (it reads most of them as a one: ``models.training.other_looks``)."""
    body = tuple(int(c) for c in np.clip(np.array([200, 120, 240]) + rng.normal(0, 8, 3), 0, 255))
    return number_die(value, rng, size, body, (60, 20, 90), cv2.FONT_HERSHEY_SIMPLEX)


def _owner_folder(out: Path, per_face: int, held_back_per_face: int) -> Path:
    """The owner's numeral dice as crops with a crops.csv: ``per_face`` of each face to learn from, the rest held back."""
    (out / "crops").mkdir(parents=True)
    rng = np.random.default_rng(1)
    lines = ["file,value,split"]
    for value in range(1, 7):
        for i in range(per_face + held_back_per_face):
            name = f"crops/{value}-{i}.png"
            cv2.imwrite(str(out / name), numeral_die(value, rng))
            lines.append(f"{name},{value},{'train' if i < per_face else 'val'}")
    (out / "crops.csv").write_text("\n".join(lines) + "\n")
    return out


@pytest.fixture(scope="module")
def taught(tmp_path_factory):
    """One teaching run: (instance folder with the adopted model, the teach command's JSON result)."""
    root = tmp_path_factory.mktemp("teach")
    owner = _owner_folder(root / "owner", 8, 12)
    instance = root / "instance"
    instance.mkdir()
    write_config(instance, {"teach.rendered_dice": 90})  # fewer rendered dice than on a table: a faster test
    out = root / "out.json"
    import contextlib
    import io

    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        assert main(["teach", str(owner), "--instance", str(instance), "--json"]) == 0
    out.write_text(buf.getvalue())
    return instance, json.loads(buf.getvalue())


def _copy(instance: Path, tmp_path: Path) -> Path:
    dst = tmp_path / "instance"
    shutil.copytree(instance, dst)
    return dst


def test_teaching_is_measured_before_and_after_and_adopted_only_when_better(taught):
    instance, result = taught
    before, after = result["before"], result["after"]
    assert result["before_model"] == shipped_model_id()
    assert result["adopted"] is True and result["candidate"].startswith(shipped_model_id() + "-t")
    assert after["owner"]["right"] > before["owner"]["right"]
    assert after["owner"]["silently_wrong"] <= before["owner"]["silently_wrong"]
    assert after["rendered"]["right"] >= before["rendered"]["right"] and after["rendered"]["silently_wrong"] <= before["rendered"]["silently_wrong"]
    assert result["examples"] == {"train": 48, "held_back": 72}
    status = ModelRegistry(instance).status()
    assert status["active"] == result["candidate"] and status["previous"] == shipped_model_id() and status["can_roll_back"]


def test_the_active_model_id_is_in_health_every_reading_and_every_saved_bluff(taught, tmp_path):
    instance, result = taught
    instance = _copy(instance, tmp_path)
    settings = Settings.defaults().with_overrides(table__pin=PIN)
    settings.path = instance / CONFIG_NAME
    reader = load_reader(settings)
    frame, _ = render_table([6, 2, 3], np.random.default_rng(1))
    assert reader.model_id == result["candidate"] and reader.read(frame).model_id == result["candidate"]

    app = create_app(instance, simulate=True, settings=settings, test_config={"TESTING": True})
    client = app.test_client()
    try:
        assert client.get("/api/health").json["model"] == result["candidate"]
        game = client.post("/api/games", json={"players": ["Ann", "Ben"]}, headers=H).json
        client.post(f"/api/games/{game['id']}/claim", json={"amount": 5}, headers=H)
        challenge = client.post(f"/api/games/{game['id']}/bluff", headers=H).json["challenge"]
        assert client.get(f"/api/challenges/{challenge['id']}").json["reading"]["model"] == result["candidate"]

        # one tap back: PIN needed, the reader switches at once, health and the next Bluff follow
        assert client.post("/api/model/rollback").status_code == 401
        back = client.post("/api/model/rollback", headers=H)
        assert back.status_code == 200 and back.json["active"] == shipped_model_id() and back.json["reading_with"] == shipped_model_id()
        assert client.get("/api/health").json["model"] == shipped_model_id()
        assert client.get("/api/model").json["previous"] == result["candidate"]
        assert client.post("/api/model/rollback", headers=H).json["active"] == result["candidate"]  # and forth again
    finally:
        close_app(app)


def test_cli_status_and_rollback(taught, tmp_path, capsys):
    instance, result = taught
    instance = _copy(instance, tmp_path)
    assert main(["model", "status", "--instance", str(instance), "--json"]) == 0
    status = json.loads(capsys.readouterr().out)
    assert status["active"] == result["candidate"] and status["taught"] is True
    assert main(["model", "rollback", "--instance", str(instance)]) == 0
    said = capsys.readouterr().out
    assert "Back to " + shipped_model_id() in said
    assert "already running on this instance switches to it within a few seconds" in said
    assert main(["model", "status", "--instance", str(instance)]) == 0
    assert f"active: {shipped_model_id()} (shipped)" in capsys.readouterr().out


def _running_on_a_copy(taught, tmp_path: Path):  # noqa: ANN001, ANN202 - a copy of the taught instance, the app `serve` builds on it
    instance, result = taught
    instance = _copy(instance, tmp_path)
    settings = Settings.defaults().with_overrides(table__pin=PIN)
    settings.path = instance / CONFIG_NAME
    app = create_app(instance, simulate=True, settings=settings, test_config={"TESTING": True})
    return instance, result, app, app.extensions["elephants_bluff"]


def _model_reading(client, wanted: str) -> str:  # noqa: ANN001 - health's model, once it is ``wanted`` (or 30 s passed)
    deadline = time.monotonic() + 30
    while (model := client.get("/api/health").json["model"]) != wanted and time.monotonic() < deadline:
        time.sleep(0.2)
    return model


def test_a_rollback_or_teaching_from_a_terminal_switches_the_running_reader_without_a_restart(taught, tmp_path, capsys):
    """The terminal's `model rollback` and `teach` changed the instance's models while the running companion went on
    reading with the model it had started with, until someone restarted it."""
    instance, result, app, services = _running_on_a_copy(taught, tmp_path)
    try:
        client = app.test_client()
        assert client.get("/api/health").json["model"] == result["candidate"]
        assert main(["model", "rollback", "--instance", str(instance)]) == 0  # a terminal beside the running companion
        assert _model_reading(client, shipped_model_id()) == shipped_model_id()
        assert services.dice_source.reader.model_id == shipped_model_id() == services.dice_source.reader.classifier.model_id
        assert main(["model", "rollback", "--instance", str(instance)]) == 0  # and forth again
        assert _model_reading(client, result["candidate"]) == result["candidate"]
        assert client.get("/api/health").json["status"] == "ok"
    finally:
        close_app(app)
    assert not services.model_follower._thread.is_alive(), "the follower outlived the companion"
    capsys.readouterr()


def test_the_pages_own_switch_is_not_done_twice_and_a_damaged_model_is_followed_to_the_shipped_one(taught, tmp_path):
    instance, result, app, services = _running_on_a_copy(taught, tmp_path)
    follower = services.model_follower
    try:
        client = app.test_client()
        assert client.post("/api/model/rollback", headers=H).status_code == 200
        reader = services.dice_source.reader.classifier
        assert follower.look() is False and services.dice_source.reader.classifier is reader  # the page switched it already
        registry = ModelRegistry(instance)
        registry.rollback()
        (instance / "models" / f"{result['candidate']}.npz").write_bytes(b"not a head")  # taught back to a damaged model
        assert follower.look() is False, "the shipped model reads on: nothing to switch to"
        health = client.get("/api/health").json
        assert health["model"] == shipped_model_id() and any("cannot" in p or "damaged" in p for p in health["problems"]), health
    finally:
        close_app(app)


def test_a_registry_damaged_beside_the_running_companion_is_followed_to_the_shipped_model_and_said(taught, tmp_path):
    instance, result, app, services = _running_on_a_copy(taught, tmp_path)
    try:
        assert services.model_id == result["candidate"]
        (instance / "models" / "registry.json").write_text("{ cut sh", encoding="utf-8")
        services.model_follower.look()  # switched now, unless the follower's own thread looked a moment before
        health = app.test_client().get("/api/health").json
        assert health["model"] == shipped_model_id() and any("damaged" in p for p in health["problems"]), health
        assert services.model_follower.look() is False, "an unchanged file is looked at again"
    finally:
        close_app(app)


def test_a_power_cut_during_adoption_leaves_the_previous_model_active_and_whole(taught, tmp_path):
    instance, result = taught
    instance = _copy(instance, tmp_path)
    registry = ModelRegistry(instance)
    before = (instance / "models" / "registry.json").read_bytes()
    (instance / "models" / "registry.json.part").mkdir()  # the registry's write cannot finish
    head = (instance / "models" / f"{result['candidate']}.npz").read_bytes()
    with pytest.raises(OSError):
        registry.adopt(head, "dice-faces-000000000000-tdeadbeef", {})
    assert (instance / "models" / "registry.json").read_bytes() == before
    loaded = registry.load()
    assert loaded.problem is None and loaded.classifier.model_id == result["candidate"]


def test_a_taught_model_that_fails_to_load_gives_the_shipped_model_and_health_says_why(taught, tmp_path):
    instance, result = taught
    instance = _copy(instance, tmp_path)
    (instance / "models" / f"{result['candidate']}.npz").write_bytes(b"not a head")
    settings = Settings.defaults().with_overrides(table__pin=PIN)
    settings.path = instance / CONFIG_NAME
    app = create_app(instance, simulate=True, settings=settings, test_config={"TESTING": True})
    try:
        health = app.test_client().get("/api/health").json
        assert health["model"] == shipped_model_id() and health["status"] == "degraded"
        assert any(result["candidate"] in p and "shipped model reads" in p for p in health["problems"])
        # the page says the shipped model reads, not that every reading goes to the table (a model it cannot load)
        assert [(d["code"], d["params"]["reader_part"]) for d in health["problem_details"]] == [("reader", "taught_model")]
        # rolled back to the shipped model: the running reader switches and health no longer says it
        assert app.test_client().post("/api/model/rollback", headers=H).status_code == 200
        health = app.test_client().get("/api/health").json
        assert health["status"] == "ok" and health["problem_details"] == [], health
    finally:
        close_app(app)


def test_a_model_taught_for_another_shipped_classifier_is_not_used(taught, tmp_path):
    onnx = pytest.importorskip("onnx")
    instance, result = taught
    instance = _copy(instance, tmp_path)
    model = onnx.load(str(shipped_model_path()))
    model.producer_name = "retrained"  # same graph, another file: another model id, as after an update
    other = tmp_path / "dice-faces-other.onnx"
    other.write_bytes(model.SerializeToString())
    loaded = ModelRegistry(instance, other).load()
    assert loaded.classifier.model_id != result["candidate"] and "teach the dice again" in loaded.problem


def test_a_damaged_registry_reads_with_the_shipped_model_and_refuses_rollback_in_words(tmp_path, capsys):
    write_config(tmp_path, {})  # a table's instance
    (tmp_path / "models").mkdir()
    atomic_write(tmp_path / "models" / "registry.json", "{not json")
    loaded = ModelRegistry(tmp_path).load()
    assert loaded.classifier.model_id == shipped_model_id() and "damaged" in loaded.problem
    assert main(["model", "rollback", "--instance", str(tmp_path)]) == 2
    assert "damaged" in capsys.readouterr().err
    write_config(tmp_path / "fresh", {})
    assert main(["model", "rollback", "--instance", str(tmp_path / "fresh")]) == 2
    assert "no previous model" in capsys.readouterr().err
    assert main(["model", "rollback", "--instance", str(tmp_path / "typo")]) == 2  # not a table's: not "no model"
    assert "There is no companion's instance" in capsys.readouterr().err
    # rolled back to a model an update has since replaced: the shipped one reads, and says so
    atomic_write(tmp_path / "models" / "registry.json", json.dumps({"active": "dice-faces-000000000000", "previous": None, "models": {}}))
    loaded = ModelRegistry(tmp_path).load()
    assert loaded.classifier.model_id == shipped_model_id() and "no longer shipped" in loaded.problem


def test_teaching_with_too_few_examples_of_a_face_is_refused_naming_the_faces(tmp_path, capsys):
    (tmp_path / "few" / "crops").mkdir(parents=True)
    rng = np.random.default_rng(2)
    lines = ["file,value,split"]
    import cv2

    for i in range(30):
        value = [1, 2, 3, 4][i % 4]  # no 5 and no 6 seen
        name = f"crops/{i}.png"
        cv2.imwrite(str(tmp_path / "few" / name), rng.integers(0, 255, (40, 40, 3), dtype=np.uint8))
        lines.append(f"{name},{value},train")
    (tmp_path / "few" / "crops.csv").write_text("\n".join(lines) + "\n")
    write_config(tmp_path / "instance", {})
    assert main(["teach", str(tmp_path / "few"), "--instance", str(tmp_path / "instance")]) == 2
    err = capsys.readouterr().err
    assert "Too few examples" in err and "1, 2 on top (the camera sees 6, 5)" in err
    assert not (tmp_path / "instance" / "models").exists()  # nothing changed
    assert main(["teach", "--instance", str(tmp_path / "instance")]) == 2
    assert "either a folder" in capsys.readouterr().err


def test_a_refused_teaching_names_what_it_skipped_on_the_way(tmp_path, capsys):
    """A crops.csv whose value column holds no faces (a spreadsheet's other column) and a crop that is not a picture:
    too few examples remain, and the refusal says why, not only how few."""
    folder = tmp_path / "spreadsheet"
    (folder / "crops").mkdir(parents=True)
    rng = np.random.default_rng(3)
    lines = ["file,value,split"]
    for i in range(8):
        name = f"crops/{i}.png"
        cv2.imwrite(str(folder / name), rng.integers(0, 255, (40, 40, 3), dtype=np.uint8))
        lines.append(f"{name},{40 + i},train")  # a pixel size where the face belongs
    (folder / "crops" / "notes.png").write_text("not a picture")
    lines.append("crops/notes.png,3,train")
    (folder / "crops.csv").write_text("\n".join(lines) + "\n")
    write_config(tmp_path / "instance", {})
    assert main(["teach", str(folder), "--instance", str(tmp_path / "instance")]) == 2
    err = capsys.readouterr().err
    assert "Too few examples" in err and "Skipped on the way: crops.csv line 2: '40' is not a face from 1 to 6" in err
    assert "and 6 more" in err  # lines 5 to 9 and the picture that is not one, counted
    assert not (tmp_path / "instance" / "models").exists()  # nothing changed


def test_a_folder_of_labelled_photos_gives_crops_of_each_die_and_never_its_test_split(tmp_path):
    from vision.classifier import FaceClassifier
    from companion.app.teach.service import folder_examples

    root = tmp_path / "photos"
    (root / "images").mkdir(parents=True)
    (root / "labels").mkdir()
    rng = np.random.default_rng(7)
    splits: dict[str, list[str]] = {"train": [], "val": [], "test": []}
    for i, split in enumerate(["train", "train", "val", "test"]):
        frame, placed = render_table([2, 5, 6], rng, width=480, height=360, view="above", touching=0.0)
        name = f"p{i}"
        cv2.imwrite(str(root / "images" / f"{name}.jpg"), frame)
        lines = [f"{d.seen - 1} {d.cx / 480:.5f} {d.cy / 360:.5f} {d.side / 480:.5f} {d.side / 360:.5f}" for d in placed]
        (root / "labels" / f"{name}.txt").write_text("\n".join(lines + ["not a label"]) + "\n")
        splits[split].append(name)
    (root / "split.json").write_text(json.dumps(splits))
    examples = folder_examples(root)
    assert len(examples.train) == 6 and len(examples.held_back) == 3  # the test photo is never read
    assert sorted(v for _, v in examples.train) == [2, 2, 5, 5, 6, 6]
    values, _ = FaceClassifier().classify(np.array([c for c, _ in examples.train + examples.held_back]))
    assert list(values) == [v for _, v in examples.train + examples.held_back]  # each crop shows its die
    assert sum("not a YOLO label" in w for w in examples.warnings) == 3  # the test photo's labels are not even read


@pytest.mark.parametrize("split_json, words", [
    ('["p0", "p1"]', "is not a JSON object of split names"),
    ('{"val": "p0"}', "the split 'val' must be a list of photo names"),
    ('{"val": ["p0",', "is not valid JSON"),
])
def test_a_broken_split_json_is_refused_in_the_words_evaluate_uses(tmp_path, split_json, words):
    """``teach`` reads a folder's split.json as ``evaluate`` does (``vision.images.read_splits``): a file that is not
    splits of photo names stops it, naming the file, before anything is taught."""
    from companion.app.teach.service import folder_examples
    from vision.adapt import TeachError

    root = tmp_path / "photos"
    (root / "images").mkdir(parents=True)
    (root / "labels").mkdir()
    frame, placed = render_table([2, 5, 6], np.random.default_rng(3), width=480, height=360, view="above", touching=0.0)
    cv2.imwrite(str(root / "images" / "p0.jpg"), frame)
    (root / "labels" / "p0.txt").write_text("".join(f"{d.seen - 1} {d.cx / 480:.5f} {d.cy / 360:.5f} {d.side / 480:.5f} {d.side / 360:.5f}\n" for d in placed))
    (root / "split.json").write_text(split_json)
    with pytest.raises(TeachError, match=words) as refused:
        folder_examples(root)
    assert str(root / "split.json") in str(refused.value)


def test_a_split_json_saved_with_a_byte_order_mark_is_read(tmp_path):
    """Windows tools write UTF-8 with a byte-order mark; the split names are read all the same."""
    from companion.app.teach.service import folder_examples

    root = tmp_path / "photos"
    (root / "images").mkdir(parents=True)
    (root / "labels").mkdir()
    rng = np.random.default_rng(5)
    for name in ("p0", "p1"):
        frame, placed = render_table([1, 4, 6], rng, width=480, height=360, view="above", touching=0.0)
        cv2.imwrite(str(root / "images" / f"{name}.jpg"), frame)
        (root / "labels" / f"{name}.txt").write_text("".join(f"{d.seen - 1} {d.cx / 480:.5f} {d.cy / 360:.5f} {d.side / 480:.5f} {d.side / 360:.5f}\n" for d in placed))
    (root / "split.json").write_text(json.dumps({"train": ["p0"], "val": ["p1.jpg"]}), encoding="utf-8-sig")
    examples = folder_examples(root)
    assert len(examples.train) == 3 and len(examples.held_back) == 3 and not examples.warnings


def test_a_set_with_a_folder_per_split_is_taught_its_train_folder_and_holds_back_its_val_never_its_test(tmp_path):
    """images/train/, images/val/, images/test/ beside labels/train/... (no split.json): the folders are the splits."""
    from companion.app.teach.service import folder_examples

    root = tmp_path / "photos"
    rng = np.random.default_rng(9)
    for i, split in enumerate(["train", "train", "val", "test"]):
        (root / "images" / split).mkdir(parents=True, exist_ok=True)
        (root / "labels" / split).mkdir(parents=True, exist_ok=True)
        frame, placed = render_table([2, 5, 6], rng, width=480, height=360, view="above", touching=0.0)
        cv2.imwrite(str(root / "images" / split / f"p{i}.jpg"), frame)
        (root / "labels" / split / f"p{i}.txt").write_text("".join(f"{d.seen - 1} {d.cx / 480:.5f} {d.cy / 360:.5f} {d.side / 480:.5f} {d.side / 360:.5f}\n" for d in placed))
    examples = folder_examples(root)
    assert len(examples.train) == 6 and len(examples.held_back) == 3 and not examples.warnings


def test_an_exported_set_is_taught_its_train_folder_holds_back_valid_and_reads_the_faces_its_classes_name(tmp_path):
    """train/images/, valid/images/, test/images/ each beside its labels/ (as Roboflow exports a set), the classes
    named in data.yaml in the export's sorted order: ``valid`` is held back, ``test`` never read, and each crop
    carries the face its class names, not class + 1."""
    from vision.adapt import TeachError
    from vision.classifier import FaceClassifier
    from companion.app.teach.service import folder_examples

    root = tmp_path / "export"
    names = ["five", "four", "one", "six", "three", "two"]  # sorted: class 0 is a five
    rng = np.random.default_rng(13)
    for i, split in enumerate(["train", "train", "valid", "test"]):
        (root / split / "images").mkdir(parents=True, exist_ok=True)
        (root / split / "labels").mkdir(parents=True, exist_ok=True)
        frame, placed = render_table([2, 5, 6], rng, width=480, height=360, view="above", touching=0.0)
        cv2.imwrite(str(root / split / "images" / f"p{i}.jpg"), frame)
        (root / split / "labels" / f"p{i}.txt").write_text("".join(
            f"{names.index(['one', 'two', 'three', 'four', 'five', 'six'][d.seen - 1])} {d.cx / 480:.5f} {d.cy / 360:.5f} "
            f"{d.side / 480:.5f} {d.side / 360:.5f}\n" for d in placed))
    (root / "data.yaml").write_text(f"train: ../train/images\nval: ../valid/images\nnc: 6\nnames: {names}\n")
    examples = folder_examples(root)
    assert len(examples.train) == 6 and len(examples.held_back) == 3 and not examples.warnings
    assert sorted(v for _, v in examples.train) == [2, 2, 5, 5, 6, 6]
    values, _ = FaceClassifier().classify(np.array([c for c, _ in examples.train + examples.held_back]))
    assert list(values) == [v for _, v in examples.train + examples.held_back]  # each crop shows its die
    (root / "data.yaml").write_text("names: ['dice']\n")
    with pytest.raises(TeachError, match=r"data.yaml: its class names \('dice'\) do not name the faces"):
        folder_examples(root)


def test_photos_labelled_with_turned_boxes_are_taught_a_crop_of_each_die(tmp_path):
    """An OBB or segment label (``class x1 y1 x2 y2 ...``) is the box around its corners, as ``evaluate`` reads it."""
    from vision.classifier import FaceClassifier
    from companion.app.teach.service import folder_examples

    root = tmp_path / "photos"
    (root / "images").mkdir(parents=True)
    (root / "labels").mkdir()
    rng = np.random.default_rng(11)
    for i in range(2):
        frame, placed = render_table([1, 4, 6], rng, width=480, height=360, view="above", touching=0.0)
        cv2.imwrite(str(root / "images" / f"p{i}.jpg"), frame)
        (root / "labels" / f"p{i}.txt").write_text("".join(
            f"{d.seen - 1} " + " ".join(f"{x / 480:.5f} {y / 360:.5f}" for x, y in d.corners()) + "\n" for d in placed))
    examples = folder_examples(root)
    crops = examples.train + examples.held_back
    assert len(crops) == 6 and not examples.warnings
    values, _ = FaceClassifier().classify(np.array([c for c, _ in crops]))
    assert list(values) == [v for _, v in crops]  # each crop shows its die


def test_crops_sorted_into_a_folder_per_face_are_taught_and_their_val_folder_held_back(tmp_path):
    from companion.app.teach.service import folder_examples

    rng = np.random.default_rng(10)
    for i, (split, seen) in enumerate([("train", 2), ("train", 5), ("train", 5), ("val", 6), ("test", 1)]):
        frame, (die,) = render_table([seen], rng, width=200, height=200, view="above", die_side=90, glare=0)
        x, y, w, h = die.box()
        path = tmp_path / split / str(seen) / f"c{i}.jpg"
        path.parent.mkdir(parents=True, exist_ok=True)
        cv2.imwrite(str(path), frame[y:y + h, x:x + w])
    examples = folder_examples(tmp_path)
    assert sorted(v for _, v in examples.train) == [2, 5, 5] and [v for _, v in examples.held_back] == [6]
    assert not examples.warnings  # the test folder is never read


def test_a_damaged_crop_or_photo_is_skipped_with_its_reason_and_the_rest_taught(tmp_path):
    """Read as ``evaluate`` reads them (``load_image``): one sentence each, naming the file."""
    from companion.app.teach.service import folder_examples

    rng = np.random.default_rng(12)
    crops = tmp_path / "crops"
    crops.mkdir()
    frame, (die,) = render_table([4], rng, width=200, height=200, view="above", die_side=90, glare=0)
    x, y, w, h = die.box()
    cv2.imwrite(str(crops / "good.png"), frame[y:y + h, x:x + w])
    (crops / "bad.png").write_bytes(b"not a picture")
    (crops / "crops.csv").write_text("file,value\ngood.png,4\nbad.png,4\n")
    examples = folder_examples(crops)
    assert [v for _, v in examples.train + examples.held_back] == [4]
    assert len(examples.warnings) == 1 and "bad.png" in examples.warnings[0] and "not an image" in examples.warnings[0]

    photos = tmp_path / "photos"
    (photos / "images").mkdir(parents=True)
    (photos / "labels").mkdir()
    frame, placed = render_table([2, 5], rng, width=480, height=360, view="above", touching=0.0)
    for name in ("p0", "p1"):
        cv2.imwrite(str(photos / "images" / f"{name}.jpg"), frame)
        (photos / "labels" / f"{name}.txt").write_text("".join(f"{d.seen - 1} {d.cx / 480:.5f} {d.cy / 360:.5f} {d.side / 480:.5f} {d.side / 360:.5f}\n" for d in placed))
    data = (photos / "images" / "p1.jpg").read_bytes()
    (photos / "images" / "p1.jpg").write_bytes(data[:len(data) // 2])  # cut off, as a copy that stopped half way
    examples = folder_examples(photos)
    assert len(examples.train) + len(examples.held_back) == 2
    assert len(examples.warnings) == 1 and "p1.jpg" in examples.warnings[0] and "truncated" in examples.warnings[0]


def test_a_cameras_capital_suffixes_and_a_spreadsheets_crops_csv_are_read_for_teaching(tmp_path):
    """IMG_0001.JPG is a photo, and a crops.csv saved with a byte-order mark, capitals and semicolons is a crops.csv."""
    from companion.app.teach.service import folder_examples

    rng = np.random.default_rng(8)
    photos = tmp_path / "photos"
    (photos / "images").mkdir(parents=True)
    (photos / "labels").mkdir()
    for i, suffix in enumerate([".JPG", ".PNG"]):
        frame, placed = render_table([3, 4], rng, width=480, height=360, view="above", touching=0.0)
        cv2.imwrite(str(photos / "images" / f"IMG_{i}{suffix}"), frame)
        (photos / "labels" / f"IMG_{i}.txt").write_text("".join(f"{d.seen - 1} {d.cx / 480:.5f} {d.cy / 360:.5f} {d.side / 480:.5f} {d.side / 360:.5f}\n" for d in placed))
    examples = folder_examples(photos)
    assert len(examples.train) + len(examples.held_back) == 4 and not examples.warnings

    crops = tmp_path / "crops"
    crops.mkdir()
    frame, (die,) = render_table([5], rng, width=200, height=200, view="above", die_side=90, glare=0)
    x, y, w, h = die.box()
    for i in range(5):
        cv2.imwrite(str(crops / f"c{i}.PNG"), frame[y:y + h, x:x + w])
    (crops / "crops.csv").write_bytes("\ufeffFile;Value\r\n".encode() + "".join(f"c{i}.PNG;5\r\n" for i in range(5)).encode())
    examples = folder_examples(crops)
    assert sorted(v for _, v in examples.train + examples.held_back) == [5] * 5 and not examples.warnings


# Teaching reads a folder as evaluate reads it, and is never judged on what it learned from (found by a CLI audit: a
# crops.csv listing each crop to learn from again as ``val`` judged the taught model on the crops it learned from and
# turned "not better" into "better"; labels in pixels cut crops from outside the photo; a class 9 was skipped unsaid).


def _crop_folder(root: Path, faces: list[int], rows: list[str], size: int = 64) -> Path:
    """Numeral dice ``c0.png`` ... (``size`` px) in ``root/crops``, listed by the crops.csv ``rows``."""
    (root / "crops").mkdir(parents=True)
    rng = np.random.default_rng(4)
    for i, face in enumerate(faces):
        cv2.imwrite(str(root / "crops" / f"c{i}.png"), numeral_die(face, rng, size))
    (root / "crops.csv").write_text("file,value,split\n" + "\n".join(rows) + "\n")
    return root


def test_a_crop_listed_to_learn_from_and_in_val_is_learned_from_and_never_held_back(tmp_path):
    from companion.app.teach.service import folder_examples

    rows = [f"crops/c{i}.png,{face},{split}" for i, (face, split) in enumerate([(1, "train"), (2, "train"), (3, "val"), (4, "val")])]
    leaked = rows + ["crops/c0.png,1,val", "crops/c1.png,2,val"]  # each crop to learn from listed again, held back
    examples = folder_examples(_crop_folder(tmp_path, [1, 2, 3, 4], leaked))
    assert sorted(v for _, v in examples.train) == [1, 2] and sorted(v for _, v in examples.held_back) == [3, 4]
    assert examples.warnings == [f"{tmp_path / 'crops.csv'} lists 2 crops in the split 'val' and in another (crops/c0.png on lines 2 and 6, "
                                 "crops/c1.png on lines 3 and 7): taught from and not held back, since a taught model is never judged on "
                                 "the dice it learned from"]


def test_a_crop_listed_again_is_taught_once_and_one_listed_as_two_faces_is_refused(tmp_path):
    from companion.app.teach.service import folder_examples
    from vision.adapt import TeachError

    rows = ["crops/c0.png,1,train", "crops/c1.png,2,val", "crops/c0.png,1,train"]
    examples = folder_examples(_crop_folder(tmp_path / "again", [1, 2], rows))
    assert [v for _, v in examples.train] == [1] and [v for _, v in examples.held_back] == [2]
    assert "lists 1 crop again in the same split (crops/c0.png on lines 2 and 4); each is taught once" in examples.warnings[0]
    rows = ["crops/c0.png,1,train", "crops/c1.png,2,val", "c0.png,6,train"]
    with pytest.raises(TeachError, match=r"crops.csv lists c0.png as two faces, a 1 on line 2 and a 6 on line 4"):
        folder_examples(_crop_folder(tmp_path / "two", [1, 2], rows))


def _photos(root: Path, splits: dict[str, list[str]], names: list[str], lines_of=None) -> Path:
    """Rendered photos of three dice, each ``NAME.jpg`` with its labels (``lines_of(placed)``: other label lines)."""
    (root / "images").mkdir(parents=True)
    (root / "labels").mkdir()
    rng = np.random.default_rng(6)
    for name in names:
        frame, placed = render_table([2, 5, 6], rng, width=480, height=360, view="above", touching=0.0)
        cv2.imwrite(str(root / "images" / f"{name}.jpg"), frame)
        lines = [f"{d.seen - 1} {d.cx / 480:.5f} {d.cy / 360:.5f} {d.side / 480:.5f} {d.side / 360:.5f}" for d in placed]
        (root / "labels" / f"{name}.txt").write_text("\n".join(lines_of(placed, lines) if lines_of else lines) + "\n")
    (root / "split.json").write_text(json.dumps(splits))
    return root


def test_a_photo_split_json_lists_to_learn_from_and_in_val_is_learned_from_and_never_held_back(tmp_path):
    from companion.app.teach.service import folder_examples

    root = _photos(tmp_path, {"train": ["p0", "p2"], "val": ["p1", "p0"]}, ["p0", "p1", "p2"])
    examples = folder_examples(root)
    assert len(examples.train) == 6 and len(examples.held_back) == 3  # p0 and p2 learned from; p1 alone held back
    assert examples.warnings == [f"{root / 'split.json'} lists 1 photo in the split 'val' and in another (p0): taught from and not "
                                 "held back, since a taught model is never judged on the dice it learned from"]


@pytest.mark.parametrize(("line", "words"), [
    ("8 0.5 0.5 0.1 0.1", r"p0.txt line 4: class 8 is not a face \(classes 0-5 are faces 1-6\)"),
    ("-1 0.5 0.5 0.1 0.1", r"p0.txt line 4: class -1 is not a face"),
    ("2 240 180 40 40", r"p0.txt line 4: its centre \(240, 180\) lies outside the photo: .*\(were these written in pixels\?\)"),
    ("2 0.5 0.5 0 0.1", r"p0.txt line 4: its width and height \(0 × 0.1\) must be more than 0"),
], ids=["class 8", "class -1", "in pixels", "no width"])
def test_a_label_evaluate_refuses_is_refused_for_teaching_naming_the_file_and_line(tmp_path, line, words):
    """A class that is no face was skipped without a word, a box in pixels cut a crop from outside the photo:
    teaching refuses both, in evaluate's words, before anything is fitted."""
    from companion.app.teach.service import folder_examples
    from vision.adapt import TeachError

    root = _photos(tmp_path, {"train": ["p0"], "val": ["p1"]}, ["p0", "p1"], lambda placed, lines: lines + [line])
    with pytest.raises(TeachError, match=words):
        folder_examples(root)


def test_a_label_line_repeated_is_taught_once_and_said(tmp_path):
    from companion.app.teach.service import folder_examples

    root = _photos(tmp_path, {"train": ["p0"], "val": ["p1"]}, ["p0", "p1"], lambda placed, lines: lines + [lines[0]])
    examples = folder_examples(root)
    assert len(examples.train) == 3 and len(examples.held_back) == 3
    assert [w.split("labels/")[1] for w in examples.warnings] == [f"p{i}.txt line 4 repeats line 1 (a 2 in the same box); the die is counted once." for i in (0, 1)]


def test_crops_under_16_pixels_are_not_taught_from_and_said_once_with_their_count(tmp_path):
    """Crops of 8-15 px, which evaluate reads enlarged, are too small to learn a die's look from: skipped, in one
    warning that counts them (it said each one, in another sentence than evaluate's); under 8 px each is unreadable."""
    from companion.app.teach.service import folder_examples

    rows = [f"crops/c{i}.png,{face},train" for i, face in enumerate([1, 2, 3])]
    root = _crop_folder(tmp_path, [1, 2, 3], rows, size=12)
    cv2.imwrite(str(root / "crops" / "big.png"), numeral_die(4, np.random.default_rng(1), 64))
    cv2.imwrite(str(root / "crops" / "tiny.png"), numeral_die(5, np.random.default_rng(1), 6))
    (root / "crops.csv").write_text((root / "crops.csv").read_text() + "crops/big.png,4,train\ncrops/tiny.png,5,train\n")
    examples = folder_examples(root)
    assert [v for _, v in examples.train + examples.held_back] == [4]
    assert len(examples.warnings) == 2 and "tiny.png is too small to show a die (6×6 pixels; at least 8 on each side)" in examples.warnings[0]
    assert examples.warnings[1].startswith("3 crops smaller than 16 pixels a side (the smallest 12×12, crops/c0.png) are not taught from")
