"""The renderer's other looks of dice (``vision.simtable.LOOKS``), and the game's dice drawn exactly as before them."""

from __future__ import annotations

import hashlib

import cv2
import numpy as np
import pytest

from vision.simtable import LOOKS, DieStyle, face_texture, render_table

#: sha256 (first 16 hex digits) of ``render_table([1, 4, 6], default_rng(seed), **kw)``, taken with the renderer as it
#: was before the looks were added (commit b1e1230): the game's dice must still come out pixel for pixel the same.
BEFORE_LOOKS = {
    ("below", 7): "9c5e0f49dea46968", ("below", 29): "a28b31f7bfc2e6ce",
    ("above", 7): "9fce90f1d11ec995", ("above", 29): "53b36edc79c12d04",
    ("no-jpeg", 7): "0746e0ed3181a3c1", ("no-jpeg", 29): "6c32be5a8a21d60e",
}


def _digest(frame: np.ndarray) -> str:
    return hashlib.sha256(frame.tobytes()).hexdigest()[:16]


@pytest.mark.parametrize("kind, seed", sorted(BEFORE_LOOKS))
def test_the_game_dice_render_pixel_for_pixel_as_before_the_looks(kind, seed):
    kw = {"view": "above"} if kind == "above" else {"jpeg_quality": 100} if kind == "no-jpeg" else {}
    frame, _ = render_table([1, 4, 6], np.random.default_rng(seed), **kw)
    assert _digest(frame) == BEFORE_LOOKS[(kind, seed)]
    same, _ = render_table([1, 4, 6], np.random.default_rng(seed), look=None, **kw)
    assert np.array_equal(frame, same)


def _marks(texture: np.ndarray, style: DieStyle) -> int:
    """How many separate marks a face shows: pixels nearer the mark's colour than the body's, in blobs of a few pixels."""
    near_mark = np.linalg.norm(texture - np.float32(style.mark), axis=2) < np.linalg.norm(texture - np.float32(style.face), axis=2)
    mask = near_mark.astype(np.uint8)
    mask[:12], mask[-12:], mask[:, :12], mask[:, -12:] = 0, 0, 0, 0  # the shaded rim of the die
    _, _, stats, _ = cv2.connectedComponentsWithStats(mask)
    return sum(1 for s in stats[1:] if s[cv2.CC_STAT_AREA] >= 8)


@pytest.mark.parametrize("name", sorted(LOOKS))
@pytest.mark.parametrize("mirrored", [False, True])
def test_each_look_shows_as_many_marks_as_its_face(name, mirrored):
    for value in range(1, 7):
        rng = np.random.default_rng(value)
        style = LOOKS[name].die(rng)
        assert _marks(face_texture(value, 128, style, rng, mirrored), style) == value, (name, value)


def test_the_pink_die_with_elephants_differs_from_the_games_die():
    pink = LOOKS["pink-elephants"]
    assert pink.style.marks == "head" and pink.style.face != DieStyle().face
    a = face_texture(4, 96, DieStyle(), np.random.default_rng(1))
    b = face_texture(4, 96, pink.style, np.random.default_rng(1))
    body = b[40:56, 4:16].reshape(-1, 3).mean(axis=0)  # between the marks, off the rim
    assert body[2] > body[1] + 80 and body[0] > body[1] + 30  # pink: much red, some blue, little green (BGR)
    assert np.abs(a - b).mean() > 30


def test_a_look_draws_every_die_of_the_frame_in_it_and_still_finds_room_for_them():
    seen = [2, 5, 6]
    game, placed_game = render_table(seen, np.random.default_rng(3))
    pink, placed = render_table(seen, np.random.default_rng(3), look=LOOKS["pink-elephants"])
    assert [d.seen for d in placed] == seen and not np.array_equal(game, pink)
    for die in placed:
        x, y, w, h = die.box()
        patch = pink[y + h // 3:y + 2 * h // 3, x + w // 3:x + 2 * w // 3].reshape(-1, 3).astype(float).mean(axis=0)
        assert patch[2] > patch[1] + 40  # the middle of each die is pink (or its white elephants), never the tray


def test_a_looks_dice_vary_a_little_and_keep_their_marks():
    look = LOOKS["orange-small-pips"]
    rng = np.random.default_rng(5)
    dice = [look.die(rng) for _ in range(20)]
    assert len({d.face for d in dice}) > 1 and {d.marks for d in dice} == {"pip"}
    assert all(abs(c - b) < 40 for d in dice for c, b in zip(d.face, look.style.face))
    assert all(0.4 < d.mark_scale < 0.5 for d in dice)
