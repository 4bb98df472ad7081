"""``read``, ``classify`` and ``calibrate`` as a person runs them: one line per file, clear errors, exit status."""

from __future__ import annotations

import json

import cv2
import numpy as np
import pytest

from companion.app.cli import main
from companion.core.settings import write_config
from vision.simtable import render_table


@pytest.fixture(scope="module")
def frame_file(tmp_path_factory):
    folder = tmp_path_factory.mktemp("frames")
    frame, placed = render_table([6, 4, 1], np.random.default_rng(5), view="above", touching=0.0, glare=0)
    path = folder / "three dice.png"
    cv2.imwrite(str(path), frame)
    return path, frame, placed


def _lines(capsys):
    return [json.loads(line) for line in capsys.readouterr().out.splitlines()]


def test_read_json_prints_one_object_per_image_with_the_path_as_given(frame_file, capsys, tmp_path, monkeypatch):
    path, _, _ = frame_file
    monkeypatch.chdir(path.parent)
    rc = main(["read", "--json", "--as-seen", "--instance", str(tmp_path), "./three dice.png", str(path)])
    out = _lines(capsys)
    assert rc == 0
    assert [o["file"] for o in out] == ["./three dice.png", str(path)]
    for o in out:
        assert o["status"] == "ok" and sorted(d["top"] for d in o["dice"]) == [1, 4, 6] and o["total"] == 11
        assert set(o["dice"][0]) == {"seen", "top", "confidence", "box"} and len(o["dice"][0]["box"]) == 4


def test_read_json_gives_the_reasons_as_codes_beside_the_english_reason(frame_file, capsys, tmp_path):
    """``reasons`` (docs/API-EXTENSIONS.md): the codes the page says in the players' language, with their numbers,
    so a reading can be checked from outside without parsing English; empty when the reading is ok."""
    path, frame, _ = frame_file
    dark = tmp_path / "dark.png"
    cv2.imwrite(str(dark), np.zeros_like(frame))
    rc = main(["read", "--json", "--as-seen", "--instance", str(tmp_path), str(path), str(dark)])
    ok, unsure = _lines(capsys)
    assert rc == 0
    assert ok["status"] == "ok" and ok["reasons"] == []
    assert unsure["status"] == "uncertain" and [c["code"] for c in unsure["reasons"]] == ["dark"] and "dark" in unsure["reason"]


def test_a_phones_50_megapixel_jpeg_is_read_and_its_boxes_given_in_its_own_pixels(frame_file, capsys, tmp_path):
    """Over the 40-megapixel limit, a JPEG is decoded at half its size (``jpeg_reduction``), not refused."""
    _, frame, placed = frame_file
    k = 6.4  # 1280×960 -> 8192×6144, 50.3 megapixels
    path = tmp_path / "IMG_0001.JPG"
    cv2.imwrite(str(path), cv2.resize(frame, None, fx=k, fy=k, interpolation=cv2.INTER_LINEAR), [cv2.IMWRITE_JPEG_QUALITY, 90])
    assert main(["read", "--json", "--as-seen", "--instance", str(tmp_path), str(path)]) == 0
    (o,) = _lines(capsys)
    assert o["status"] == "ok" and sorted(d["seen"] for d in o["dice"]) == [1, 4, 6]
    for d in placed:  # each die's box, in the photo's own pixels, around where the die lies in it
        x, y, w, h = next(b["box"] for b in o["dice"] if b["seen"] == d.seen)
        assert abs(x + w / 2 - k * d.cx) < 0.2 * k * d.side and abs(y + h / 2 - k * d.cy) < 0.2 * k * d.side
        assert 0.6 * k * d.side < w < 1.6 * k * d.side


def test_read_from_below_reports_the_opposite_top_faces(frame_file, capsys, tmp_path):
    path, _, _ = frame_file
    assert main(["read", "--json", "--instance", str(tmp_path), str(path)]) == 0
    (o,) = _lines(capsys)
    assert sorted(d["seen"] for d in o["dice"]) == [1, 4, 6] and sorted(d["top"] for d in o["dice"]) == [1, 3, 6]


def test_read_reports_each_bad_file_and_exits_non_zero(frame_file, capsys, tmp_path):
    path, _, _ = frame_file
    (tmp_path / "notes.jpg").write_text("hello")
    rc = main(["read", "--json", "--as-seen", "--instance", str(tmp_path), str(tmp_path / "missing.png"), str(tmp_path / "notes.jpg"), str(path)])
    out = _lines(capsys)
    assert rc == 1
    assert out[0]["status"] == "error" and "no such file" in out[0]["error"]
    assert out[1]["status"] == "error" and "not an image" in out[1]["error"]
    assert out[2]["status"] == "ok"


def test_read_plain_text_output_says_the_faces_and_total(frame_file, capsys, tmp_path):
    path, _, _ = frame_file
    assert main(["read", "--as-seen", "--instance", str(tmp_path), str(path)]) == 0
    line = capsys.readouterr().out.strip()
    assert line.startswith(f"{path}: ok: ") and line.endswith("= 11")


def test_classify_reads_one_die_crops_at_any_size_and_rotation(frame_file, capsys, tmp_path):
    path, frame, placed = frame_file
    files = []
    for i, (d, share, turn) in enumerate(zip(placed, (0.55, 0.8, 0.95), (0, 30, 60))):
        span = d.side / share
        m = cv2.getRotationMatrix2D((d.cx, d.cy), turn, 1.0)
        m[:, 2] += (span / 2 - d.cx, span / 2 - d.cy)
        crop = cv2.warpAffine(frame, m, (int(span), int(span)), borderMode=cv2.BORDER_REPLICATE)
        f = tmp_path / f"crop{i}.png"
        cv2.imwrite(str(f), crop)
        files.append(str(f))
    assert main(["classify", "--json", "--instance", str(tmp_path), *files]) == 0
    out = _lines(capsys)
    assert [o["file"] for o in out] == files
    assert [o["value"] for o in out] == [d.seen for d in placed]
    assert all(0 <= o["confidence"] <= 1 for o in out)
    assert all(o["sure"] == (o["confidence"] >= 0.97) for o in out)  # the settings' 0.95 and decide's margin


def test_classify_says_whether_a_face_is_sure_or_needs_a_person(capsys, tmp_path):
    noise = tmp_path / "noise.png"
    cv2.imwrite(str(noise), np.random.default_rng(2).integers(0, 256, (80, 80, 3), dtype=np.uint8))
    assert main(["classify", "--instance", str(tmp_path), str(noise)]) == 0
    assert capsys.readouterr().out.strip().endswith("not sure: a person should look)")
    assert main(["classify", "--json", "--instance", str(tmp_path), str(noise)]) == 0
    assert _lines(capsys)[0]["sure"] is False


def test_classify_reports_bad_files(capsys, tmp_path):
    (tmp_path / "empty.png").write_bytes(b"")
    assert main(["classify", "--json", "--instance", str(tmp_path), str(tmp_path / "empty.png")]) == 1
    (o,) = _lines(capsys)
    assert o["file"] == str(tmp_path / "empty.png") and "empty" in o["error"]
    assert (o["value"], o["confidence"], o["sure"]) == (None, None, False)  # every key a script reads; never sure


def test_calibrate_on_an_empty_tray_stores_the_tray_region_and_its_photo(tmp_path, capsys):
    frame, _ = render_table([], np.random.default_rng(3), view="above", glare=0)
    img = tmp_path / "tray-photo.png"
    cv2.imwrite(str(img), frame)
    (tmp_path / "config.toml").write_text(f'[camera]\nbackend = "files"\nfiles_dir = "{img}"\n')
    assert main(["calibrate", "--instance", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "stored in" in out and "camera.tray_region" in out
    from companion.app.settings import Settings

    s = Settings.load(tmp_path / "config.toml")
    assert s["camera.tray_region"] and s["camera.backend"] == "files"
    stored = cv2.imread(str(tmp_path / s["camera.empty_tray"]), cv2.IMREAD_GRAYSCALE)
    assert stored is not None and np.array_equal(stored, cv2.cvtColor(frame, cv2.COLOR_BGR2GRAY))


def test_calibrate_with_dice_on_the_tray_says_what_to_fix(tmp_path, capsys):
    config = write_config(tmp_path, {})  # the simulated camera, as a fresh table's settings have it
    kept = config.read_text()
    assert main(["calibrate", "--instance", str(tmp_path)]) == 1  # the simulated table always has dice
    assert "not empty" in capsys.readouterr().out
    assert config.read_text() == kept and sorted(p.name for p in tmp_path.iterdir()) == ["config.toml"]


def test_calibrate_in_a_folder_that_is_not_a_table_s_instance_is_refused_and_makes_nothing(tmp_path, capsys):
    """A mistyped --instance: calibrate measured with the default (simulated) camera and would have stored what it
    measured in a new folder the table never reads."""
    assert main(["calibrate", "--instance", str(tmp_path / "typo")]) == 2
    assert "There is no companion's instance" in capsys.readouterr().err and not (tmp_path / "typo").exists()


def test_calibrate_without_a_camera_says_so(tmp_path, capsys):
    (tmp_path / "config.toml").write_text('[camera]\nbackend = "files"\nfiles_dir = "/no/such/folder"\n')
    assert main(["calibrate", "--instance", str(tmp_path)]) == 1
    assert "does not exist" in capsys.readouterr().out


def test_read_says_on_stderr_why_a_tray_region_narrower_than_the_die_finds_no_dice(frame_file, tmp_path):
    """A region typed by hand under a measured die: the reading says it found none, and stderr says why and what to
    do (stdout stays one line a file, so --json is still one object a line)."""
    import subprocess
    import sys
    from pathlib import Path

    path, _, _ = frame_file
    (tmp_path / "config.toml").write_text("[camera]\ntray_region = [600, 400, 40, 40]\n[reader]\ndie_side_px = 64\n")
    done = subprocess.run([sys.executable, "-m", "companion.app.cli", "read", "--json", "--instance", str(tmp_path), str(path)],
                          cwd=Path(__file__).resolve().parents[2], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    (o,) = [json.loads(line) for line in done.stdout.splitlines()]
    assert o["status"] == "uncertain" and [r["code"] for r in o["reasons"]] == ["count"] and o["dice"] == []
    assert "The tray's region (40×40 pixels) is narrower than one die (64 pixels)" in done.stderr
