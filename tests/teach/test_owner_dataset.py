"""The table's own dataset: every Bluff the table confirms or corrects adds its dice, labelled with the face the camera saw.

Real parts throughout: the simulated table's renderer and the real reader behind
the Flask test client, the real referee and SQLite log, real files.
"""

from __future__ import annotations

import csv
from pathlib import Path

import cv2
import numpy as np
import pytest

from companion.app.cli import main
from companion.app.settings import Settings
from companion.app.teach.dataset import OwnerDataset, split_of
from companion.app.web import close_app, create_app
from companion.core.settings import write_config
from vision.adapt import CropReader
from vision.classifier import FaceClassifier
from vision.evaluate import evaluate

PIN = "4321"
H = {"X-Table-Pin": PIN}


def _app(instance: Path, **overrides):
    # reader.min_confidence above 1 - margin: no die is ever sure, so every Bluff goes to the table (R14)
    settings = Settings.defaults().with_overrides(table__pin=PIN, reader__min_confidence=0.999, **overrides)
    return create_app(instance, simulate=True, settings=settings, test_config={"TESTING": True})


def _tops_in_reading_order(challenge, placed, opposite=lambda v: 7 - v):
    """The true top face of each die the reading boxed, in the reading's order (the page numbers its pickers so)."""
    out = []
    for d in challenge["reading"]["dice"]:
        x, y, w, h = d["box"]
        near = min(placed, key=lambda p: (p.cx - x - w / 2) ** 2 + (p.cy - y - h / 2) ** 2)
        out.append(opposite(near.seen))
    return out


def _rows(instance: Path):
    with open(instance / "owner-dataset" / "crops.csv", newline="") as f:
        return list(csv.DictReader(f))


@pytest.fixture
def table(tmp_path):
    app = _app(tmp_path / "instance")
    app.extensions["elephants_bluff"].dice_source.frame_source.rng = np.random.default_rng(12)  # the same frames every run: the reader is not under test
    yield app.test_client(), app.extensions["elephants_bluff"], tmp_path / "instance"
    close_app(app)


def _placed(services):
    return services.dice_source.frame_source.last_dice


def test_confirmed_then_corrected_bluff_keeps_its_crops_labelled_with_the_face_the_camera_saw(table):
    client, services, instance = table
    game = client.post("/api/games", json={"players": ["Ann", "Ben"]}, headers=H).json
    client.post(f"/api/games/{game['id']}/claim", json={"amount": 5}, headers=H)
    client.post("/api/sim/dice", json={"values": [2, 4, 6]}, headers=H)
    challenge = client.post(f"/api/games/{game['id']}/bluff", headers=H).json["challenge"]
    assert client.get(f"/api/games/{game['id']}").json["phase"] == "confirm"
    assert len(challenge["reading"]["dice"]) == 3
    tops = _tops_in_reading_order(challenge, _placed(services))
    assert sorted(tops) == [2, 4, 6]
    assert client.post(f"/api/games/{game['id']}/confirm", json={"dice": tops}, headers=H).status_code == 200
    services.owner_dataset.wait_idle()

    rows = _rows(instance)
    assert [int(r["value"]) for r in rows] == [7 - t for t in tops]  # the face SEEN from below
    assert {r["split"] for r in rows} == {split_of(challenge["id"])} and {r["challenge"] for r in rows} == {challenge["id"]}
    clf = FaceClassifier()
    for r in rows:
        crop = cv2.imread(str(instance / "owner-dataset" / r["file"]))
        assert crop.shape == (40, 40, 3)
        assert clf.classify(crop[None])[0][0] == int(r["value"])  # the crop shows that die

    fixed = [tops[0], tops[1], 1 if tops[2] != 1 else 2]
    assert client.post(f"/api/challenges/{challenge['id']}/correct", json={"dice": fixed}, headers=H).status_code == 200
    services.owner_dataset.wait_idle()
    rows = _rows(instance)
    assert [int(r["value"]) for r in rows] == [7 - t for t in fixed]  # replaced, not added
    assert len(list((instance / "owner-dataset" / "crops").iterdir())) == 3


def test_a_bluffs_photo_damaged_before_the_table_agreed_its_dice_teaches_nothing(table):
    """A photo cut short between the Bluff and the table's confirmation put three flat grey crops into the
    dataset, labelled with the agreed faces: the photo is checked against the fingerprint logged with it."""
    client, services, instance = table
    game = client.post("/api/games", json={"players": ["Ann", "Ben"]}, headers=H).json
    client.post(f"/api/games/{game['id']}/claim", json={"amount": 5}, headers=H)
    client.post("/api/sim/dice", json={"values": [2, 4, 6]}, headers=H)
    challenge = client.post(f"/api/games/{game['id']}/bluff", headers=H).json["challenge"]
    photo = services.referee.archive.path(challenge["id"], "frame")
    photo.write_bytes(photo.read_bytes()[: photo.stat().st_size // 3])  # the card lost its end
    tops = _tops_in_reading_order(challenge, _placed(services))
    assert client.post(f"/api/games/{game['id']}/confirm", json={"dice": tops}, headers=H).status_code == 200
    services.owner_dataset.wait_idle()
    assert not (instance / "owner-dataset" / "crops.csv").exists() or _rows(instance) == []


def test_nothing_is_kept_when_the_table_turns_collecting_off(tmp_path):
    app = _app(tmp_path / "instance", teach__collect=False)
    client, services = app.test_client(), app.extensions["elephants_bluff"]
    try:
        game = client.post("/api/games", json={"players": ["Ann", "Ben"]}, headers=H).json
        client.post(f"/api/games/{game['id']}/claim", json={"amount": 5}, headers=H)
        client.post(f"/api/games/{game['id']}/bluff", headers=H)
        assert client.post(f"/api/games/{game['id']}/confirm", json={"dice": [1, 2, 3]}, headers=H).status_code == 200
        services.owner_dataset.wait_idle()
        assert not (tmp_path / "instance" / "owner-dataset").exists()
    finally:
        close_app(app)


def _frame():
    rng = np.random.default_rng(3)
    return rng.integers(0, 255, (120, 200, 3), dtype=np.uint8)


def test_the_size_cap_drops_the_oldest_bluffs_first_files_included(tmp_path):
    ds = OwnerDataset(tmp_path, max_crops=30)
    boxes = [[10, 10, 30, 30], [60, 10, 30, 30], [110, 10, 30, 30]]
    for n in range(12):
        ds.add(f"c-g-{n}", _frame(), boxes, [1, 2, 3], "table:0:1,2,3", "m")
    rows = ds.rows()
    assert len(rows) == 30
    assert rows[0].challenge == "c-g-2" and rows[-1].challenge == "c-g-11"
    assert sorted(p.name for p in (tmp_path / "owner-dataset" / "crops").iterdir()) == sorted(Path(r.file).name for r in rows)


def test_a_bluff_kept_on_a_full_card_leaves_the_list_and_its_files_as_they_were(small_card):
    """A card that fills while a Bluff's crops are written: the list is not changed, and the crops already written
    for it go too (no file the list does not name stays behind, where nothing would ever remove it). On a real small
    tmpfs."""
    ds = OwnerDataset(small_card.path)
    boxes = [[10, 10, 30, 30], [60, 10, 30, 30], [110, 10, 30, 30]]
    assert ds.add("c-g-1", _frame(), boxes, [1, 2, 3], "table:0:1,2,3", "m") == 3
    crops = small_card.path / "owner-dataset" / "crops"
    before = {p.name: p.read_bytes() for p in crops.iterdir()}
    listed = ds.csv_path.read_bytes()
    one = max(len(b) for b in before.values())
    small_card.fill((one // 4096 + 1) * 4096 + 1024)  # room for one crop, not three
    big = np.random.default_rng(4).integers(0, 255, (120, 200, 3), dtype=np.uint8)
    with pytest.raises(OSError):
        ds.add("c-g-2", big, boxes, [4, 5, 6], "table:0:4,5,6", "m")
    assert {p.name: p.read_bytes() for p in crops.iterdir()} == before
    assert ds.csv_path.read_bytes() == listed and [r.challenge for r in ds.rows()] == ["c-g-1"] * 3
    small_card.empty()
    assert ds.add("c-g-2", big, boxes, [4, 5, 6], "table:0:4,5,6", "m") == 3  # room made: kept whole
    assert len(list(crops.iterdir())) == 6


def test_a_damaged_dataset_is_skipped_with_a_warning_never_a_crash(tmp_path):
    ds = OwnerDataset(tmp_path)
    ds.add("c-g-1", _frame(), [[10, 10, 30, 30]], [6], "v", "m")
    path = tmp_path / "owner-dataset" / "crops.csv"
    path.write_text(path.read_text() + "crops/../../etc/passwd,3,train\nnot,a,row\ncrops/gone.png,4,train,c-g-9,v,t,m\n")
    assert [r.file for r in ds.rows()] == [ds.rows()[0].file, "crops/gone.png"]
    assert len(ds.warnings) == 2
    assert [v for _, v, _ in ds.examples()] == [1]  # the missing crop is skipped
    assert any("gone.png" in w for w in ds.warnings)
    path.write_bytes(b"\xff\xfe\x00garbage")
    assert ds.rows() == [] and ds.warnings
    assert ds.add("c-g-2", _frame(), [[10, 10, 30, 30]], [5], "v", "m") == 1  # started again, whole
    assert [r.value for r in ds.rows()] == [2]


def test_a_crop_the_tables_dataset_lists_twice_is_kept_once_and_one_listed_two_ways_not_at_all(tmp_path):
    """A crops.csv edited by hand: a row copied is one crop, and a crop listed with another face or split is neither
    learned from nor held back (its face cannot be told; held back too, it would judge a model on what it learned)."""
    ds = OwnerDataset(tmp_path)
    ds.add("c-g-1", _frame(), [[10, 10, 30, 30], [60, 10, 30, 30]], [6, 5], "v", "m")
    first, second = (r.file for r in ds.rows())
    path = tmp_path / "owner-dataset" / "crops.csv"
    lines = path.read_text().splitlines()
    split = ds.rows()[0].split
    other = "val" if split == "train" else "train"
    path.write_text("\n".join(lines + [lines[1], lines[2].replace(f",{split},", f",{other},")]) + "\n")
    assert [r.file for r in ds.rows()] == [first]
    assert ds.warnings == [f"crops.csv line 4 lists {first} again (as line 2 does); it is kept once",
                           f"crops.csv lines 3 and 5 list {second} as a 2 ({split}) and a 2 ({other}); both are skipped"]
    assert [v for _, v, _ in ds.examples()] == [1]


def test_export_writes_the_shared_datasets_layout_that_evaluate_reads(tmp_path, capsys):
    instance = tmp_path / "instance"
    write_config(instance, {})  # a table's instance: its settings beside its dataset
    ds = OwnerDataset(instance)
    rng = np.random.default_rng(0)
    from vision.simtable import render_table

    frame, placed = render_table([1, 5, 3], rng, width=480, height=360, touching=0.0)
    boxes = [[int(p.cx - p.side / 2), int(p.cy - p.side / 2), int(p.side), int(p.side)] for p in placed]
    ds.add("c-g-1", frame, boxes, [7 - p.seen for p in placed], "v", "m")
    out = tmp_path / "export"
    assert main(["dataset", "export", "--instance", str(instance), str(out)]) == 0
    assert "Wrote 3 crops" in capsys.readouterr().out
    lines = (out / "crops.csv").read_text().splitlines()
    assert lines[0] == "file,value,split" and len(lines) == 4
    assert all(line.split(",")[0].startswith("crops/") and line.split(",")[0].endswith(".jpg") for line in lines[1:])
    report = evaluate(out, CropReader(FaceClassifier()))
    assert report["dice"] == 3 and report["right"] == 3  # labels are the faces visible in the crops

    assert main(["dataset", "export", "--instance", str(instance), str(out)]) == 2
    assert "already exists" in capsys.readouterr().err
    write_config(tmp_path / "empty", {})
    assert main(["dataset", "export", "--instance", str(tmp_path / "empty"), str(tmp_path / "e2")]) == 2
    assert "empty" in capsys.readouterr().err
    assert main(["dataset", "status", "--instance", str(tmp_path / "typo")]) == 2  # not a table's instance: said so
    assert "There is no companion's instance" in capsys.readouterr().err and not (tmp_path / "typo").exists()
