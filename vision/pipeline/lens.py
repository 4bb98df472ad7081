"""A wide lens's barrel distortion: where a point of the picture would lie through a lens that bends no line.

The camera under the tray sits close to it, so it needs a wide lens (the Camera Module 3 Wide, 102 degrees across),
and a wide lens bends the picture: towards the frame's edge a flat die is squeezed along the line to the centre more
than across it, so its outline is longer one way than the other, as a leaning die's is (``shape.footprint``). With
the lens known (``camera.lens_distortion``), an outline is measured where its points would lie without the bend.

The model has two coefficients, ``k`` and ``k2``: a point at ``r`` from the frame's centre (a share of the
half-diagonal) lies, straightened, at ``r·(1 + k·r² + k2·r⁴)``. 0 and 0 is no bend; a lens that shows a frame's corner
a tenth nearer the centre than a distortion-free one is about ``k`` 0.1. ``k2`` is for a lens whose bend grows faster
towards the edge than ``k`` alone draws it (one nearer a fisheye's): a chessboard, which covers the middle of the
picture, can be fitted by ``k`` alone while dice nearer the edge stay squeezed. ``fit_distortion`` measures them from
a chessboard lying on the tray, which the camera sees square on: straightened, its corners lie on a square grid.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import Callable

import cv2
import numpy as np

#: The most bend the settings and the measure take, each coefficient: ``k`` 1 shows a frame's corner half as near
#: the centre.
MAX_DISTORTION = 1.0
#: ``fit_distortion`` takes ``k2`` only where the board shows it: the fit with it must leave at most this share of the
#: misfit of ``k`` alone (corner noise alone lowers it by a few hundredths; a lens that needs ``k2`` by far more).
SECOND_TERM_GAIN = 0.5
#: ``fit_distortion`` refuses a chessboard whose straightened corners still lie further than this share of a square
#: from the grid (a board not flat on the tray, a photo of something else).
FIT_RESIDUAL = 0.08


@dataclass(frozen=True)
class Lens:
    """The bend ``k`` (and ``k2``) of the lens of the camera that took the whole frame, for the pixels of the part of
    it read: ``centre`` is the frame's centre and ``radius`` its half-diagonal, both in those pixels."""

    k: float
    centre: tuple[float, float]
    radius: float
    k2: float = 0.0

    @classmethod
    def of_frame(cls, k: float, width: int, height: int, offset: tuple[int, int] = (0, 0), k2: float = 0.0) -> "Lens | None":
        """The lens for a part of a ``width``×``height`` frame whose corner lies at ``offset`` (the tray region);
        None where ``k`` and ``k2`` are 0 (no bend: nothing to straighten).

        >>> Lens.of_frame(0.2, 1280, 960, (100, 50)).centre, Lens.of_frame(0.0, 1280, 960) is None
        ((539.5, 429.5), True)
        """
        if not k and not k2:
            return None
        return cls(float(k), ((width - 1) / 2 - offset[0], (height - 1) / 2 - offset[1]), math.hypot(width, height) / 2, float(k2))

    def _growth(self, r2: np.ndarray | float) -> np.ndarray | float:
        """How many times farther from the centre a point at ``r²`` (a share of the half-diagonal, squared) lies
        straightened."""
        return 1.0 + self.k * r2 + self.k2 * r2 * r2

    def _radial_growth(self, r2: np.ndarray | float) -> np.ndarray | float:
        """How many times longer a short step along the line to the centre, at ``r²``, is straightened: the
        derivative of ``r·_growth(r²)``."""
        return 1.0 + 3.0 * self.k * r2 + 5.0 * self.k2 * r2 * r2

    def straightened(self, points: np.ndarray) -> np.ndarray:
        """``points`` (N×2, x y in the picture's pixels) where a lens without bend would show them (float32).

        >>> lens = Lens(0.25, (100.0, 100.0), 100.0)
        >>> lens.straightened(np.array([[100, 100], [200, 100]])).tolist()
        [[100.0, 100.0], [225.0, 100.0]]
        """
        p = np.asarray(points, np.float64).reshape(-1, 2)
        d = p - self.centre
        grow = self._growth((d * d).sum(axis=1, keepdims=True) / (self.radius * self.radius))
        return (self.centre + d * grow).astype(np.float32)

    def area_scale(self, x: float | np.ndarray, y: float | np.ndarray) -> float | np.ndarray:
        """How many times bigger a small area at (x, y) of the picture (numbers, or arrays of them) is straightened:
        the bend squeezes it along the line to the centre by ``1 + 3·k·r² + 5·k2·r⁴`` and across it by
        ``1 + k·r² + k2·r⁴``.

        >>> Lens(0.25, (100.0, 100.0), 100.0).area_scale(100, 100), Lens(0.25, (100.0, 100.0), 100.0).area_scale(200, 100)
        (1.0, 2.1875)
        """
        r2 = ((x - self.centre[0]) ** 2 + (y - self.centre[1]) ** 2) / (self.radius * self.radius)
        return self._radial_growth(r2) * self._growth(r2)

    def bent(self, points: np.ndarray) -> np.ndarray:
        """The inverse of ``straightened``: where the lens shows points that lie at ``points`` without bend (float64).

        >>> lens = Lens(0.25, (100.0, 100.0), 100.0)
        >>> np.round(lens.straightened(lens.bent(np.array([[180.0, 30.0]]))), 3).tolist()
        [[180.0, 30.0]]
        """
        p = np.asarray(points, np.float64).reshape(-1, 2)
        d = p - self.centre
        straight = np.sqrt((d * d).sum(axis=1)) / self.radius
        seen = straight.copy()
        for _ in range(40):  # r·(1 + k·r² + k2·r⁴) = straight, by Newton's steps from r = straight (monotone for k, k2 >= 0)
            r2 = seen * seen
            seen -= (seen * self._growth(r2) - straight) / self._radial_growth(r2)
        share = np.divide(seen, straight, out=np.ones_like(seen), where=straight > 0)
        return self.centre + d * share[:, None]


def bend_frame(frame: np.ndarray, k: float, k2: float = 0.0) -> np.ndarray:
    """``frame`` as a lens of bend ``k`` (and ``k2``) shows it (what lies beyond the frame's edge comes out black): the
    renderer's tables seen through a wide lens, for the simulated camera and the checks.

    >>> bend_frame(np.full((40, 60, 3), 200, np.uint8), 0.3)[20, 30].tolist(), int(bend_frame(np.full((40, 60), 9, np.uint8), 0.3)[0, 0])
    ([200, 200, 200], 0)
    """
    if not k and not k2:
        return frame.copy()
    xs, ys = _bend_maps(frame.shape[1], frame.shape[0], float(k), float(k2))
    return cv2.remap(frame, xs, ys, cv2.INTER_LINEAR, borderMode=cv2.BORDER_CONSTANT)


@functools.lru_cache(maxsize=2)
def _bend_maps(width: int, height: int, k: float, k2: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
    """For each pixel of a ``width``×``height`` picture bent by ``k`` and ``k2``, where it lies straightened (x and y
    maps for ``cv2.remap``): made once for a size and bend, as a table's frames and its empty tray share them."""
    lens = Lens.of_frame(k, width, height, k2=k2)
    xs, ys = np.meshgrid(np.arange(width, dtype=np.float64), np.arange(height, dtype=np.float64))
    source = lens.straightened(np.stack([xs.ravel(), ys.ravel()], axis=1)).reshape(height, width, 2)
    return np.ascontiguousarray(source[..., 0]), np.ascontiguousarray(source[..., 1])


def fit_distortion(corners: np.ndarray, grid: np.ndarray, width: int, height: int) -> tuple[float, float, float]:
    """The bend ``k``, ``k2`` under which the chessboard ``corners`` (N×2 pixels of a ``width``×``height`` frame)
    straighten onto a square grid (``grid``: N×2 board positions, in squares), and how far they then lie from it at
    most (a share of a square). The board lies flat on the tray, square on to the camera, so without bend its corners
    are the grid turned, scaled and moved: the bend is searched for the best such fit. ``k2`` stays 0 unless the fit
    with it leaves at most ``SECOND_TERM_GAIN`` of the misfit of ``k`` alone: corner noise must not bend the edges.

    >>> grid = np.array([(x, y) for y in range(6) for x in range(9)], np.float64)
    >>> lens = Lens.of_frame(0.15, 640, 480)
    >>> k, k2, off = fit_distortion(lens.bent(grid * 50 + (120, 100)), grid, 640, 480); round(k, 3), k2, off < 0.01
    (0.15, 0.0, True)
    >>> fisheye = Lens.of_frame(0.1, 640, 480, k2=0.3)
    >>> k, k2, off = fit_distortion(fisheye.bent(grid * 50 + (120, 100)), grid, 640, 480); round(k, 2), round(k2, 2)
    (0.1, 0.3)
    """
    corners = np.asarray(corners, np.float64).reshape(-1, 2)
    grid = np.asarray(grid, np.float64).reshape(-1, 2)
    # a board seen from below is seen mirrored, and a finder may list its corners either way round: fit the grid
    # the way round it fits best (a turn, a scale and a move cannot mirror it)
    grid = min((grid, grid * (-1.0, 1.0)), key=lambda g: _similarity_misfit(g, corners))

    def straight(k: float, k2: float = 0.0) -> np.ndarray:
        lens = Lens.of_frame(k, width, height, k2=k2)
        return lens.straightened(corners).astype(np.float64) if lens is not None else corners

    def best_k(k2: float) -> tuple[float, float]:
        k = _least(lambda k: _similarity_misfit(grid, straight(k, k2)))
        return k, _similarity_misfit(grid, straight(k, k2))

    k, alone = best_k(0.0)
    k2 = _least(lambda k2: best_k(k2)[1])
    k_with, misfit_with = best_k(k2)
    if misfit_with <= SECOND_TERM_GAIN * alone and round(k2, 4) > 0:
        k, k2 = k_with, k2
    else:
        k2 = 0.0
    k, k2 = round(k, 4), round(k2, 4)
    return k, k2, _worst_off(grid, straight(k, k2))


def _least(misfit: Callable[[float], float], steps: int = 60) -> float:
    """Where ``misfit`` is least over 0 to ``MAX_DISTORTION``: a golden-section search (the misfit of a bend falls to
    one least and rises after it)."""
    low, high = 0.0, MAX_DISTORTION
    for _ in range(steps):
        a, b = high - (high - low) / 1.618033988749895, low + (high - low) / 1.618033988749895
        if misfit(a) <= misfit(b):
            high = b
        else:
            low = a
    return (low + high) / 2


def _similarity_fit(grid: np.ndarray, points: np.ndarray) -> np.ndarray:
    """``grid`` turned, scaled and moved onto ``points`` as nearly as can be (least squares)."""
    g = grid[:, 0] + 1j * grid[:, 1]
    p = points[:, 0] + 1j * points[:, 1]
    a = np.stack([g, np.ones_like(g)], axis=1)
    (scale, shift), *_ = np.linalg.lstsq(a, p, rcond=None)
    fit = scale * g + shift
    return np.stack([fit.real, fit.imag], axis=1)


def _similarity_misfit(grid: np.ndarray, points: np.ndarray) -> float:
    """The mean squared distance of ``points`` from ``grid`` best fitted onto them, over a square's size squared."""
    fit = _similarity_fit(grid, points)
    square = _square_px(grid, fit)
    return float(((points - fit) ** 2).sum(axis=1).mean()) / (square * square)


def _worst_off(grid: np.ndarray, points: np.ndarray) -> float:
    """How far the farthest of ``points`` lies from ``grid`` best fitted onto them, as a share of a square."""
    fit = _similarity_fit(grid, points)
    return float(np.sqrt(((points - fit) ** 2).sum(axis=1)).max()) / _square_px(grid, fit)


def _square_px(grid: np.ndarray, fit: np.ndarray) -> float:
    """One square of the grid in pixels as ``fit`` places it."""
    return max(1e-9, float(np.linalg.norm(fit[1] - fit[0]) / max(1e-9, np.linalg.norm(grid[1] - grid[0]))))
