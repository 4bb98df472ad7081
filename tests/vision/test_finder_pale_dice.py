"""The finder's faint pass: a pale die on a pale tray, seen only by its outline and its marks.

Drawn by hand rather than rendered, so each frame shows exactly one way the
faint outline goes wrong on real photos: a shadow that makes it oblong, a lit
side where it stays open, the die's own edge left just outside it.
"""

from __future__ import annotations

from dataclasses import replace

import cv2
import numpy as np
import pytest

from vision import finder_faint
from vision.finder import find_dice
from vision.simtable import finish

TRAY = 200.0
FAINT = 178.0  # differs from the tray by 22: above the faint threshold (12), under the clear one (40)
SIDE = 40  # frame pixels: 20 in the finder's 320-px working copy of a 640×480 frame
CX, CY = 320, 240


def _pale_die(outline_sides: str = "tlbr", shadow: int = 0, seed: int = 0) -> np.ndarray:
    """A white die (the tray's own colour inside) with a faint outline on ``outline_sides``,
    two black pips on its diagonal, and a faint shadow ``shadow`` px wide along its left side."""
    frame = np.full((480, 640, 3), TRAY, np.float32)
    x0, y0, x1, y1 = CX - SIDE // 2, CY - SIDE // 2, CX + SIDE // 2, CY + SIDE // 2
    if shadow:
        frame[y0:y1, x0 - shadow:x0] = FAINT
    edge = 3
    for side, (ya, yb, xa, xb) in {"t": (y0, y0 + edge, x0, x1), "b": (y1 - edge, y1, x0, x1),
                                   "l": (y0, y1, x0, x0 + edge), "r": (y0, y1, x1 - edge, x1)}.items():
        if side in outline_sides:
            frame[ya:yb, xa:xb] = FAINT
    for dx, dy in ((-9, -9), (9, 9)):
        cv2.circle(frame, (CX + dx, CY + dy), 4, (30, 30, 30), -1, cv2.LINE_AA)
    return finish(frame, np.random.default_rng(seed), blur=0.5, noise=1.5, jpeg_quality=92)


def _found_at_die(frame: np.ndarray) -> list:
    return [c for c in find_dice(frame) if np.hypot(c.cx - CX, c.cy - CY) < 0.25 * SIDE and 0.75 < c.side / SIDE < 1.3]


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_pale_die_whose_shadow_makes_its_outline_oblong_is_found_where_its_marks_are(seed):
    """The outline holds the die and its shadow (1.6 dice long); the die is the square around the marks."""
    frame = _pale_die(shadow=24, seed=seed)
    assert _found_at_die(frame), [(round(c.cx), round(c.cy), round(c.side)) for c in find_dice(frame)]


def test_without_the_marks_centred_square_the_shadowed_die_is_lost(monkeypatch):
    monkeypatch.setattr(finder_faint, "_shadowed_die_like", lambda contour, min_side, max_side: False)
    assert not _found_at_die(_pale_die(shadow=24))


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_pale_die_whose_outline_is_open_on_its_lit_side_is_filled_and_found(seed):
    frame = _pale_die(outline_sides="tlb", seed=seed)
    assert _found_at_die(frame), [(round(c.cx), round(c.cy), round(c.side)) for c in find_dice(frame)]


def test_without_filling_to_the_hull_the_open_outline_is_lost(monkeypatch):
    monkeypatch.setattr(finder_faint, "_fill_hulls", lambda mask, filled, min_side, max_side: mask)
    assert not _found_at_die(_pale_die(outline_sides="tlb"))


def _with_dark_pixels_beside_the_die(count: int) -> np.ndarray:
    """The pale die with a dark line ``count`` px long, 2 px wide, 3 px right of its outline."""
    frame = _pale_die()
    x = CX + SIDE // 2 + 3
    frame[CY - count // 2:CY - count // 2 + count, x:x + 2] = 40
    return frame


def test_a_few_clear_pixels_just_around_a_pale_die_do_not_lose_it():
    """A speck just outside the outline: on real photos, the die's own edge that the opening cut off."""
    assert _found_at_die(_with_dark_pixels_beside_the_die(4))


def test_with_no_clear_pixel_allowed_around_it_the_pale_die_beside_a_speck_is_lost(monkeypatch):
    monkeypatch.setattr(finder_faint, "CLASSIC", replace(finder_faint.CLASSIC, weak_around_clear=0))
    assert not _found_at_die(_with_dark_pixels_beside_the_die(4))


def test_a_pale_patch_along_a_long_clear_line_is_still_not_a_die():
    """A lit patch beside the cup's rim has a whole clear line around it: the tolerance does not cover that."""
    assert not _found_at_die(_with_dark_pixels_beside_the_die(120))


def _oblong_outline_with_a_mark(mark_row: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A faint outline 20×11 working px (a die 11 wide and its shadow), with a 3×3 mark at ``mark_row``, column 15."""
    patch = np.zeros((21, 30), np.uint8)
    patch[5:16, 5:25] = 255
    clear = np.zeros(patch.shape, bool)
    clear[mark_row - 1:mark_row + 2, 14:17] = True
    contour, _ = cv2.findContours(patch, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
    return contour[0], patch, clear


def test_the_die_under_an_oblong_outline_is_the_square_around_its_marks():
    contour, patch, clear = _oblong_outline_with_a_mark(10)
    square = finder_faint._die_under_marks(contour, patch, clear, (0, 0))
    ys, xs = np.nonzero(square)
    assert abs(xs.mean() - 15) <= 1 and abs(ys.mean() - 10) <= 1
    assert 9 <= xs.max() - xs.min() + 1 <= 12 and 9 <= ys.max() - ys.min() + 1 <= 12


def test_an_oblong_outline_that_cuts_through_its_marks_gives_no_die():
    """The outline missed part of the die: its short side is not the die's, so no square is guessed from it."""
    contour, patch, clear = _oblong_outline_with_a_mark(15)
    clear[14:18, 10:20] = True  # a pip and the die's edge, cut by the outline's bottom side
    assert finder_faint._die_under_marks(contour, patch, clear, (0, 0)) is None


def test_only_an_open_ring_is_filled_to_its_hull_not_one_whose_hole_was_filled():
    """A closed ring's hole is already filled: its hull would only add the shadow wedge beside it."""
    open_ring = np.zeros((40, 40), np.uint8)
    cv2.rectangle(open_ring, (10, 10), (29, 29), 255, 2)
    open_ring[12:28, 28:30] = 0  # the lit side: no outline
    filled = finder_faint._fill_hulls(open_ring, np.zeros_like(open_ring), 6.0, 64.0)
    assert filled[20, 20] == 255
    hole = np.zeros_like(open_ring)
    hole[12:28, 12:28] = 255  # what _fill_holes added: the ring was closed
    assert finder_faint._fill_hulls(open_ring, hole, 6.0, 64.0)[20, 20] == 0
