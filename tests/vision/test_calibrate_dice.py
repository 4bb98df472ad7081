"""``calibrate --dice``: the dice lying apart on the tray give a die's size, stored for the reader."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from companion.app.cli import main
from companion.app.settings import Settings
from vision.reader import load_reader
from vision.simtable import render_table

SIDE = 64.0



def _dice_apart(faces=(2, 4, 6), seed=3) -> tuple[np.ndarray, list]:
    return render_table(list(faces), np.random.default_rng(seed), view="below", die_side=SIDE, touching=0.0, glare=0)


@pytest.mark.parametrize("seed", [3, 5])  # seed 4 lays a die against the cup's rim, which calibrate asks the players not to do
def test_three_dice_apart_give_the_die_size_and_it_is_stored_for_the_reader(tmp_path, capsys, seed, camera_on):
    frame, placed = _dice_apart(seed=seed)
    camera_on(frame)
    assert main(["calibrate", "--dice", "--instance", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    settings = Settings.load(tmp_path / "config.toml")
    side = settings["reader.die_side_px"]
    assert abs(side - SIDE) <= 0.1 * SIDE, out
    assert f"reader.die_side_px = {side}" in out
    assert settings["camera.backend"] == "files"  # the other settings are kept
    assert load_reader(settings).die_side_px == side
    assert "does not look like the others" not in out  # the game's dice are one set


def test_a_dry_run_measures_but_stores_nothing(tmp_path, capsys, camera_on):
    frame, _ = _dice_apart()
    camera_on(frame)
    before = (tmp_path / "config.toml").read_text()
    assert main(["calibrate", "--dice", "--dry-run", "--instance", str(tmp_path)]) == 0
    assert "would store reader.die_side_px" in capsys.readouterr().out
    assert (tmp_path / "config.toml").read_text() == before


@pytest.mark.parametrize("faces", [(), (3, 5)], ids=["empty tray", "two dice"])
def test_too_few_dice_say_to_lay_them_all_out_and_store_nothing(tmp_path, capsys, faces, camera_on):
    frame, _ = _dice_apart(faces)
    camera_on(frame)
    before = (tmp_path / "config.toml").read_text()
    assert main(["calibrate", "--dice", "--instance", str(tmp_path)]) == 1
    out = capsys.readouterr().out
    assert f"Found {len(faces)} dice, not 3" in out and "Nothing stored" in out
    assert (tmp_path / "config.toml").read_text() == before


def test_a_die_cut_off_by_the_picture_edge_is_not_measured(tmp_path, capsys, camera_on):
    frame, placed = _dice_apart()
    die = min(placed, key=lambda d: d.cx)
    camera_on(np.ascontiguousarray(frame[:, int(die.cx):]))  # the picture's edge runs through the leftmost die
    assert main(["calibrate", "--dice", "--instance", str(tmp_path)]) == 1
    out = capsys.readouterr().out
    assert "cut off by the edge" in out or "Found 2 dice" in out
    assert Settings.load(tmp_path / "config.toml")["reader.die_side_px"] == 0


def test_a_black_frame_says_the_camera_shows_nothing(tmp_path, capsys, camera_on):
    camera_on(np.zeros((480, 640, 3), np.uint8))
    assert main(["calibrate", "--dice", "--instance", str(tmp_path)]) == 1
    assert "shows nothing" in capsys.readouterr().out


def test_without_a_camera_it_says_so(tmp_path, capsys):
    (tmp_path / "config.toml").write_text('[camera]\nbackend = "files"\nfiles_dir = "/no/such/folder"\n')
    assert main(["calibrate", "--dice", "--instance", str(tmp_path)]) == 1
    assert "does not exist" in capsys.readouterr().out


def test_dice_that_do_not_look_the_same_size_are_not_measured(tmp_path, capsys, camera_on):
    """One blob a fifth bigger than the others (a die on its edge, two dice touching): no size is trusted."""
    from vision.simtable import DieStyle, PlacedDie, finish, paste_die

    rng = np.random.default_rng(2)
    frame = np.full((480, 640, 3), 200.0, np.float32)
    red = DieStyle((40, 40, 190), (245, 245, 245), "pip", 1.0)
    for die in (PlacedDie(2, 150, 150, 64, 10), PlacedDie(4, 450, 160, 64, 30), PlacedDie(5, 300, 340, 78, 20)):
        paste_die(frame, die, red, rng, mirrored=False, shadow=True)
    camera_on(finish(frame, rng, blur=0.6, noise=2.0, jpeg_quality=90))
    assert main(["calibrate", "--dice", "--instance", str(tmp_path)]) == 1
    out = capsys.readouterr().out
    assert "do not look the same size" in out, out
    assert Settings.load(tmp_path / "config.toml")["reader.die_side_px"] == 0


def test_the_stored_size_reads_the_same_table_with_every_other_setting_kept(tmp_path, camera_on):
    frame, placed = _dice_apart(faces=(1, 3, 5), seed=6)
    camera_on(frame)
    assert main(["calibrate", "--dice", "--instance", str(tmp_path)]) == 0
    reader = load_reader(Settings.load(tmp_path / "config.toml"))
    sized = reader.with_die_side(0).with_die_side(reader.die_side_px)
    assert (sized.camera_view, sized.opposite, sized.min_confidence, sized.expected_dice) == \
        (reader.camera_view, reader.opposite, reader.min_confidence, reader.expected_dice)
    later, _ = _dice_apart(faces=(1, 5, 3), seed=6)  # the next roll on the same table: seen from below, so 6, 2, 4 on top
    reading = reader.read(later)
    assert reading.status == "ok", reading.reason
    assert sorted(reading.tops()) == [2, 4, 6]


#: rune55's val photos of real dice in a cup (two, four and two dice, 140-275 px): read ok knowing no size
REAL_PHOTOS = ("00050_jpg.rf.001cd93d0fe7823890ae29a05f7d0763", "00053_jpg.rf.5c51d5483f7180b13fb01cea808033b6",
               "00054_jpg.rf.80eb45e30c1bafeb761f3bf3aa4931e2")


@pytest.mark.parametrize("name", REAL_PHOTOS)
def test_real_dice_are_measured_by_their_outline_not_by_their_marks(staged_reader, rune55_photo, name):
    """The classic finder boxes the marks of real dice of other looks (16-27 px on these photos); the dice's own
    outlines are their size (the labelled boxes also hold the side faces a slanted photo shows)."""
    from vision.calibrate import measure_die_side

    frame, labels = rune55_photo(name)
    side, problems, _ = measure_die_side(frame, staged_reader.with_view("above").with_expected(len(labels)))
    assert side is not None, problems
    assert 0.6 <= side / float(np.median([max(w, h) for *_, w, h in labels])) <= 1.1


@pytest.mark.parametrize("seed", [1, 2])
def test_after_the_empty_tray_is_calibrated_the_dice_are_measured_against_it(tmp_path, capsys, seed, camera_on):
    """``calibrate`` on the empty tray keeps its photo; ``calibrate --dice`` then cuts each die's outline as what
    differs from it (the room, the tray and the glare are the same), the way tray mode judges a die's outline."""
    from vision.simtable import render_calibrated_table

    frame, placed, empty = render_calibrated_table([2, 4, 6], np.random.default_rng(seed), view="below", touching=0.0, glare=0)
    camera_on(empty)
    assert main(["calibrate", "--instance", str(tmp_path)]) == 0
    settings = Settings.load(tmp_path / "config.toml")
    assert settings["camera.empty_tray"] and load_reader(settings).empty_tray is not None
    cv2.imwrite(str(tmp_path / "tray.png"), frame)  # the same camera, now with the dice on the tray
    assert main(["calibrate", "--dice", "--instance", str(tmp_path)]) == 0, capsys.readouterr().out
    side = Settings.load(tmp_path / "config.toml")["reader.die_side_px"]
    assert abs(side / placed[0].side - 1) <= 0.08


def _mixed_dice_apart() -> tuple[np.ndarray, list]:
    """Two of the game's dice and a teal one of the same size, lying apart on the simulated tray, seen from below."""
    from vision.simtable import LOOKS, DieStyle

    rng = np.random.default_rng(7)
    styles = [DieStyle.game(rng), LOOKS["teal-small-elephants"].die(rng), DieStyle.game(rng)]
    return render_table([2, 5, 3], np.random.default_rng(63), view="below", die_side=SIDE, touching=0.0, glare=0, styles=styles)


def test_dice_of_two_sets_are_measured_with_a_note_naming_the_odd_die(tmp_path, capsys, camera_on):
    """Tray mode sends every roll whose dice are not one set to the table (``reader.dice_alike``); calibrating with
    such dice says so at once, with the way out, instead of leaving the table to learn it from the first roll."""
    frame, placed = _mixed_dice_apart()
    camera_on(frame)
    assert main(["calibrate", "--dice", "--instance", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    notes = [line for line in out.splitlines() if line.startswith("note:")]
    assert len(notes) == 1 and "does not look like the others" in notes[0] and 'reader.dice_alike = "off"' in notes[0], out
    x, y = (float(v) for v in notes[0].split("The die at ")[1].split(" px")[0].split(", "))
    teal = placed[1]
    assert abs(x - teal.cx) < teal.side / 2 and abs(y - teal.cy) < teal.side / 2
    assert abs(Settings.load(tmp_path / "config.toml")["reader.die_side_px"] - SIDE) <= 0.1 * SIDE  # the size is stored


def test_a_table_that_rolls_mixed_dice_gets_no_note_with_the_check_off(tmp_path, capsys, camera_on):
    frame, _ = _mixed_dice_apart()
    camera_on(frame)
    with open(tmp_path / "config.toml", "a") as config:
        config.write('[reader]\ndice_alike = "off"\n')
    assert main(["calibrate", "--dice", "--instance", str(tmp_path)]) == 0
    assert "does not look like the others" not in capsys.readouterr().out
