"""A wide lens under the tray: ``calibrate --lens`` measures its bend from a chessboard, and the reader judges each
die's outline straightened, so flat dice near the tray's edge are not taken for leaning ones (RULES.md R14 stays:
a die leaning on the cup is still doubted)."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from companion.app.cli import main
from companion.app.settings import Settings
from companion.core.protocols import Proposal
from companion.core.settings import SettingsError
from vision.calibrate import measure_die_side, measure_lens
from vision.pipeline import lens as lens_module
from vision.pipeline.lens import Lens, bend_frame
from vision.pipeline.shape import footprint
from vision.reader import load_reader
from vision.simtable import render_calibrated_table, render_chessboard

#: A wide lens: a frame's corner shown about a sixth nearer the centre than without bend (the tray frames of the
#: reading-log's measure lose three in five rolls to "leaning" at this bend when the lens is not known).
WIDE = 0.2



@pytest.mark.parametrize("bend, turn", [(0.0, 0.0), (0.1, 0.0), (0.25, 0.0), (WIDE, 15.0)])
def test_a_chessboard_on_the_tray_gives_the_bend_of_the_lens_that_sees_it(bend, turn):
    measured, problems = measure_lens(bend_frame(render_chessboard(turn_deg=turn), bend))
    assert problems == []
    assert measured[0] == pytest.approx(bend, abs=0.005) and measured[1] == 0.0  # one coefficient fits: the second stays 0


def _jpeg(frame: np.ndarray, quality: int) -> np.ndarray:
    ok, data = cv2.imencode(".jpg", frame, [cv2.IMWRITE_JPEG_QUALITY, quality])
    return cv2.imdecode(data, cv2.IMREAD_COLOR)


@pytest.mark.parametrize("change", ["out of focus", "noisy", "a coarse JPEG", "lit from one side", "dim", "a small frame"])
def test_the_bend_is_measured_the_same_on_a_poor_photo_of_the_board(change):
    bent = bend_frame(render_chessboard(turn_deg=8.0), WIDE)
    photo = {"out of focus": lambda: cv2.GaussianBlur(bent, (0, 0), 2.0),
             "noisy": lambda: np.clip(bent + np.random.default_rng(1).normal(0, 10, bent.shape), 0, 255).astype(np.uint8),
             "a coarse JPEG": lambda: _jpeg(bent, 50),
             "lit from one side": lambda: (bent * np.linspace(0.35, 1.0, bent.shape[1])[None, :, None]).astype(np.uint8),
             "dim": lambda: (bent * 0.3).astype(np.uint8),
             "a small frame": lambda: cv2.resize(bent, (640, 480), interpolation=cv2.INTER_AREA)}[change]()
    measured, problems = measure_lens(photo)
    assert problems == [] and measured[0] == pytest.approx(WIDE, abs=0.005)
    assert measured[1] == 0.0  # the photo's noise is no second coefficient


def test_a_board_running_off_the_picture_is_asked_for_with_every_square_inside():
    k, problems = measure_lens(bend_frame(render_chessboard(fill=1.1), WIDE))
    assert k is None and problems[0].code == "no_board" and "every square inside it" in problems[0].message


@pytest.mark.parametrize("frame", [np.zeros((1, 1, 3), np.uint8), np.full((960, 1280), 128, np.uint8), np.zeros((960, 1280, 3), np.uint8)],
                         ids=["one pixel", "grey, one channel", "all black"])
def test_a_picture_that_cannot_hold_a_board_is_refused_as_no_board(frame):
    measured, problems = measure_lens(frame)
    assert measured is None and [p.code for p in problems] == ["no_board"]


def test_a_chessboard_seen_mirrored_from_below_gives_the_same_bend():
    board = render_chessboard(turn_deg=10.0)[:, ::-1].copy()
    measured, _ = measure_lens(bend_frame(board, WIDE))
    assert measured == pytest.approx((WIDE, 0.0), abs=0.005)


def test_calibrate_lens_stores_the_bend_and_the_reader_takes_it(tmp_path, capsys, camera_on):
    camera_on(bend_frame(render_chessboard(), WIDE))
    assert main(["calibrate", "--lens", "--instance", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    settings = Settings.load(tmp_path / "config.toml")
    assert settings["camera.lens_distortion"] == pytest.approx(WIDE, abs=0.005) and settings["camera.lens_distortion_k2"] == 0.0
    assert f"camera.lens_distortion = {settings['camera.lens_distortion']}, camera.lens_distortion_k2 = 0.0" in out
    assert "calibrate --dice again" in out
    assert settings["camera.backend"] == "files"  # the other settings are kept
    assert load_reader(settings).lens_distortion == settings["camera.lens_distortion"]


def test_calibrate_lens_dry_run_says_the_bend_and_stores_nothing(tmp_path, capsys, camera_on):
    camera_on(bend_frame(render_chessboard(), WIDE))
    before = (tmp_path / "config.toml").read_text()
    assert main(["calibrate", "--lens", "--dry-run", "--instance", str(tmp_path)]) == 0
    assert "dry run: the lens bends the picture by 0.2" in capsys.readouterr().out
    assert (tmp_path / "config.toml").read_text() == before


@pytest.mark.parametrize("frame, words", [
    (np.full((960, 1280, 3), 140, np.uint8), "No chessboard of 10 × 7 squares found"),
    (bend_frame(render_chessboard(fill=0.3), WIDE), "covers too little of the picture"),
])
def test_calibrate_lens_without_a_usable_chessboard_says_what_to_do_and_stores_nothing(tmp_path, capsys, frame, words, camera_on):
    camera_on(frame)
    before = (tmp_path / "config.toml").read_text()
    assert main(["calibrate", "--lens", "--instance", str(tmp_path)]) == 1
    out = capsys.readouterr().out
    assert words in out and "Nothing stored" in out
    assert (tmp_path / "config.toml").read_text() == before


def test_a_board_that_is_not_flat_is_refused_not_measured():
    k, problems = measure_lens(render_chessboard(curl=0.25))  # its right half lifted towards the camera
    assert k is None and problems[0].code == "board_not_flat" and "do not lie on a flat grid" in problems[0].message


def test_calibrate_lens_and_dice_at_once_are_refused_in_words(tmp_path, capsys, camera_on):
    camera_on(render_chessboard())
    assert main(["calibrate", "--lens", "--dice", "--instance", str(tmp_path)]) == 2
    assert "run calibrate --lens first, then calibrate --dice" in capsys.readouterr().err


@pytest.mark.parametrize("key", ["lens_distortion", "lens_distortion_k2"])
@pytest.mark.parametrize("value", [1.5, -0.1, "wide"])
def test_a_lens_bend_out_of_range_is_refused_naming_the_setting(tmp_path, value, key):
    shown = f'"{value}"' if isinstance(value, str) else value
    (tmp_path / "config.toml").write_text(f"[camera]\n{key} = {shown}\n")
    with pytest.raises(SettingsError, match=f"camera.{key}"):
        Settings.load(tmp_path / "config.toml")


def _die_near_the_edge(side_face: int = 0) -> tuple[np.ndarray, Proposal, Lens]:
    """A flat die (or one showing a side face ``side_face`` px wide on its side away from the centre) near the frame's
    right edge, seen through the wide lens: the bent grey frame, the die's square where the detector would put it,
    the lens."""
    grey = np.full((960, 1280), 60, np.uint8)
    grey[448:512, 1120:1184] = 220  # 64 px, at about 0.65 of the half-diagonal from the centre
    if side_face:
        grey[448:512, 1184:1184 + side_face] = 160
    bent = bend_frame(grey, WIDE)
    lens = Lens.of_frame(WIDE, 1280, 960)
    (cx, cy), = lens.bent(np.array([[1151.5, 479.5]]))
    return bent, Proposal(float(cx), float(cy), 52.0, 0.0, 0.9), lens


def test_a_flat_die_squeezed_by_the_lens_is_leaning_to_its_outline_unless_the_lens_is_known():
    grey, die, lens = _die_near_the_edge()
    assert footprint(grey, die).leaning  # what the reader saw before it knew the lens
    straight = footprint(grey, die, lens=lens)
    assert not straight.leaning and straight.aspect < 1.03


def test_a_die_showing_its_side_face_is_still_leaning_through_the_known_lens():
    grey, die, lens = _die_near_the_edge(side_face=14)
    assert footprint(grey, die, lens=lens).leaning


#: A lens whose bend grows faster towards the edge than ``k`` alone draws it (nearer a fisheye's): ``k`` 0.1, ``k2`` 0.2.
FISHEYE_LIKE = (0.1, 0.2)


def _bent_by(frame: np.ndarray, straight_at) -> np.ndarray:
    """``frame`` through a lens that shows at ``r`` (a share of the half-diagonal) what lies at ``straight_at(r)``
    without bend: any lens, not only the two coefficients the reader models."""
    h, w = frame.shape[:2]
    radius, cx, cy = np.hypot(w, h) / 2, (w - 1) / 2, (h - 1) / 2
    xs, ys = np.meshgrid(np.arange(w, dtype=np.float64), np.arange(h, dtype=np.float64))
    r = np.maximum(np.hypot(xs - cx, ys - cy) / radius, 1e-9)
    grow = straight_at(r) / r
    return cv2.remap(frame, (cx + (xs - cx) * grow).astype(np.float32), (cy + (ys - cy) * grow).astype(np.float32), cv2.INTER_LINEAR)


def _squeeze_left(straight_at, k: float, k2: float, r: float = 0.85) -> float:
    """How much longer along the line to the centre than across a flat die at ``r`` still looks, straightened by the
    measured ``k``, ``k2``, where the lens is ``straight_at``: 1 is square."""
    def squeeze(f):
        return (f(r + 1e-4) - f(r - 1e-4)) / 2e-4 / (f(r) / r)
    return squeeze(straight_at) / squeeze(lambda x: x * (1 + k * x * x + k2 * x ** 4))


@pytest.mark.parametrize("lens, k2_at_least", [
    ("k 0.15, k2 0.1", 0.08), ("k 0.1, k2 0.2", 0.18),
    ("a tangent's, 0.8", 0.03),  # no polynomial: straight at tan(0.8 r) / 0.8, as a fisheye-like lens of 90 degrees across
])
def test_a_lens_bending_faster_towards_the_edge_is_measured_with_its_second_coefficient(lens, k2_at_least, monkeypatch):
    """A chessboard covers the middle of the picture, where ``k`` alone nearly fits such a lens; dice lie out to 0.85
    of the half-diagonal, where it leaves them squeezed by 7 % or more (a leaning die's outline). Both coefficients
    measured, a die there looks square within 3 %."""
    straight_at = {"k 0.15, k2 0.1": lambda r: r * (1 + 0.15 * r * r + 0.1 * r ** 4),
                   "k 0.1, k2 0.2": lambda r: r * (1 + 0.1 * r * r + 0.2 * r ** 4),
                   "a tangent's, 0.8": lambda r: np.tan(0.8 * r) / 0.8}[lens]
    board = _bent_by(render_chessboard(turn_deg=6.0), straight_at)
    measured, problems = measure_lens(board)
    assert problems == [] and measured[1] >= k2_at_least
    assert abs(_squeeze_left(straight_at, *measured) - 1) < 0.03
    monkeypatch.setattr(lens_module, "SECOND_TERM_GAIN", -1.0)  # the measure of k alone, as it was before k2
    k_alone, problems = measure_lens(board)
    assert problems == [] and k_alone[1] == 0.0 and _squeeze_left(straight_at, *k_alone) > 1.06


def test_a_flat_die_near_a_corner_of_a_fisheye_like_lens_is_square_with_both_coefficients():
    grey = np.full((960, 1280), 60, np.uint8)
    grey[788:852, 1148:1212] = 220  # 64 px, at about 0.8 of the half-diagonal from the centre
    bent = bend_frame(grey, *FISHEYE_LIKE)
    both = Lens.of_frame(FISHEYE_LIKE[0], 1280, 960, k2=FISHEYE_LIKE[1])
    (cx, cy), = both.bent(np.array([[1179.5, 819.5]]))
    die = Proposal(float(cx), float(cy), 44.0, 0.0, 0.9)
    k_alone = Lens.of_frame(0.18, 1280, 960)  # what calibrate --lens measured on such a board before it fitted k2
    assert footprint(bent, die, lens=k_alone).leaning
    straight = footprint(bent, die, lens=both)
    assert not straight.leaning and straight.aspect < 1.03


def test_calibrate_lens_stores_both_coefficients_where_the_board_shows_the_second(tmp_path, capsys, camera_on):
    camera_on(bend_frame(render_chessboard(), *FISHEYE_LIKE))
    assert main(["calibrate", "--lens", "--instance", str(tmp_path)]) == 0
    settings = Settings.load(tmp_path / "config.toml")
    assert (settings["camera.lens_distortion"], settings["camera.lens_distortion_k2"]) == pytest.approx(FISHEYE_LIKE, abs=0.01)
    assert f"and {settings['camera.lens_distortion_k2']}·r⁴" in capsys.readouterr().out
    reader = load_reader(settings)
    assert (reader.lens_distortion, reader.lens_distortion_k2) == (settings["camera.lens_distortion"], settings["camera.lens_distortion_k2"])


def _bent_tables(frames: int, seed: int, leaning: float = 0.0, bend: tuple[float, float] = (WIDE, 0.0)):
    """Rendered tables from below, seen through the wide lens (``bend``): each bent frame and empty tray, its dice,
    and the die side ``calibrate --dice`` stores for the table through that lens (measured on the frame where its dice
    lie apart; else the side they show at the frame's centre, what it measures with them apart)."""
    reader = load_reader(Settings.defaults()).with_lens(*bend)
    rng = np.random.default_rng(seed)
    for _ in range(frames):
        seen = [int(v) for v in rng.integers(1, 7, 3)]
        frame, placed, empty = render_calibrated_table(seen, rng, view="below", leaning=leaning)
        bent, bent_empty = bend_frame(frame, *bend), bend_frame(empty, *bend)
        side, _, _ = measure_die_side(bent, reader.with_empty_tray(bent_empty)) if not leaning else (None, [], [])
        yield seen, bent, bent_empty, side or placed[0].side


@pytest.mark.parametrize("bend, seed", [((WIDE, 0.0), 64), (FISHEYE_LIKE, 65)], ids=["a wide lens", "a fisheye-like lens, both coefficients"])
def test_rolls_seen_through_a_known_wide_lens_are_read_in_tray_mode_where_unknown_they_go_to_the_table(bend, seed):
    reader = load_reader(Settings.defaults())
    known = reader.with_lens(*bend)
    ok = {"known": 0, "unknown": 0}
    for seen, frame, empty, side in _bent_tables(10, seed=seed, bend=bend):
        for name, r in (("known", known), ("unknown", reader)):
            reading = r.with_die_side(side).with_empty_tray(empty).read(frame)
            if reading.status == "ok":
                ok[name] += 1
                assert sorted(d.seen for d in reading.dice) == sorted(seen)  # never ok and wrong
    assert ok["known"] >= 9 and ok["unknown"] <= 6, ok


def test_a_die_leaning_on_the_cup_is_doubted_through_a_known_wide_lens():
    known = load_reader(Settings.defaults()).with_lens(WIDE)
    for seen, frame, empty, side in _bent_tables(6, seed=20_064, leaning=30.0):
        assert known.with_die_side(side).with_empty_tray(empty).read(frame).status == "uncertain"
        assert known.read(frame).status == "uncertain"


def test_the_reading_bench_reads_the_table_through_the_wide_lens_both_ways(staged_reader):
    from bench.reading import through_a_wide_lens

    out = through_a_wide_lens(staged_reader, 6, 3)
    assert out["bend_measured"] == pytest.approx(out["bend"], abs=0.005)  # calibrate --lens's measure of the bench's lens
    assert out["bend"] == [0.2, 0.0]
    unknown, measured = out["lens_unknown"], out["lens_measured"]
    assert unknown["frames"] == measured["frames"] == 6
    assert measured["ok_and_right"] > unknown["ok_and_right"] and out["ok_but_wrong"] == 0
    assert out["leaning"] == {"frames": 3, "trusted": 0, "uncertain_share": 1.0}
