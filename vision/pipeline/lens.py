"""A wide lens's barrel distortion: where a point of the picture would lie through a lens that bends no line.

The camera under the tray sits close to it, so it needs a wide lens (the Camera Module 3 Wide, 102 degrees across),
and a wide lens bends the picture: towards the frame's edge a flat die is squeezed along the line to the centre more
than across it, so its outline is longer one way than the other, as a leaning die's is (``shape.footprint``). With
the lens known (``camera.lens_distortion``), an outline is measured where its points would lie without the bend.

The model has one coefficient, ``k``: a point at ``r`` from the frame's centre (a share of the half-diagonal) lies,
straightened, at ``r·(1 + k·r²)``. 0 is no bend; a lens that shows a frame's corner a tenth nearer the centre than a
distortion-free one is about 0.1. ``fit_distortion`` measures it from a chessboard lying on the tray, which the camera
sees square on: straightened, its corners lie on a square grid.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import cv2
import numpy as np

#: The most bend the setting and the measure take: a frame's corner shown half as near the centre.
MAX_DISTORTION = 1.0
#: ``fit_distortion`` refuses a chessboard whose straightened corners still lie further than this share of a square
#: from the grid (a board not flat on the tray, a photo of something else).
FIT_RESIDUAL = 0.08


@dataclass(frozen=True)
class Lens:
    """The bend ``k`` of the lens of the camera that took the whole frame, for the pixels of the part of it read:
    ``centre`` is the frame's centre and ``radius`` its half-diagonal, both in those pixels."""

    k: float
    centre: tuple[float, float]
    radius: float

    @classmethod
    def of_frame(cls, k: float, width: int, height: int, offset: tuple[int, int] = (0, 0)) -> "Lens | None":
        """The lens for a part of a ``width``×``height`` frame whose corner lies at ``offset`` (the tray region);
        None where ``k`` is 0 (no bend: nothing to straighten).

        >>> Lens.of_frame(0.2, 1280, 960, (100, 50)).centre, Lens.of_frame(0.0, 1280, 960) is None
        ((539.5, 429.5), True)
        """
        if not k:
            return None
        return cls(float(k), ((width - 1) / 2 - offset[0], (height - 1) / 2 - offset[1]), math.hypot(width, height) / 2)

    def straightened(self, points: np.ndarray) -> np.ndarray:
        """``points`` (N×2, x y in the picture's pixels) where a lens without bend would show them (float32).

        >>> lens = Lens(0.25, (100.0, 100.0), 100.0)
        >>> lens.straightened(np.array([[100, 100], [200, 100]])).tolist()
        [[100.0, 100.0], [225.0, 100.0]]
        """
        p = np.asarray(points, np.float64).reshape(-1, 2)
        d = p - self.centre
        grow = 1.0 + self.k * (d * d).sum(axis=1, keepdims=True) / (self.radius * self.radius)
        return (self.centre + d * grow).astype(np.float32)

    def area_scale(self, x: float | np.ndarray, y: float | np.ndarray) -> float | np.ndarray:
        """How many times bigger a small area at (x, y) of the picture (numbers, or arrays of them) is straightened:
        the bend squeezes it along the line to the centre by ``1 + 3·k·r²`` and across it by ``1 + k·r²``.

        >>> Lens(0.25, (100.0, 100.0), 100.0).area_scale(100, 100), Lens(0.25, (100.0, 100.0), 100.0).area_scale(200, 100)
        (1.0, 2.1875)
        """
        r2 = ((x - self.centre[0]) ** 2 + (y - self.centre[1]) ** 2) / (self.radius * self.radius)
        return (1.0 + 3.0 * self.k * r2) * (1.0 + self.k * r2)

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
        for _ in range(40):  # r·(1 + k·r²) = straight, by Newton's steps from r = straight (a monotone cubic for k >= 0)
            seen -= (seen * (1 + self.k * seen * seen) - straight) / (1 + 3 * self.k * seen * seen)
        share = np.divide(seen, straight, out=np.ones_like(seen), where=straight > 0)
        return self.centre + d * share[:, None]


def bend_frame(frame: np.ndarray, k: float) -> np.ndarray:
    """``frame`` as a lens of bend ``k`` shows it (what lies beyond the frame's edge comes out black): the renderer's
    tables seen through a wide lens, for the simulated camera and the checks.

    >>> bend_frame(np.full((40, 60, 3), 200, np.uint8), 0.3)[20, 30].tolist(), int(bend_frame(np.full((40, 60), 9, np.uint8), 0.3)[0, 0])
    ([200, 200, 200], 0)
    """
    if not k:
        return frame.copy()
    xs, ys = _bend_maps(frame.shape[1], frame.shape[0], float(k))
    return cv2.remap(frame, xs, ys, cv2.INTER_LINEAR, borderMode=cv2.BORDER_CONSTANT)


@functools.lru_cache(maxsize=2)
def _bend_maps(width: int, height: int, k: float) -> tuple[np.ndarray, np.ndarray]:
    """For each pixel of a ``width``×``height`` picture bent by ``k``, where it lies straightened (x and y maps for
    ``cv2.remap``): made once for a size and bend, as a table's frames and its empty tray share them."""
    lens = Lens.of_frame(k, width, height)
    xs, ys = np.meshgrid(np.arange(width, dtype=np.float64), np.arange(height, dtype=np.float64))
    source = lens.straightened(np.stack([xs.ravel(), ys.ravel()], axis=1)).reshape(height, width, 2)
    return np.ascontiguousarray(source[..., 0]), np.ascontiguousarray(source[..., 1])


def fit_distortion(corners: np.ndarray, grid: np.ndarray, width: int, height: int) -> tuple[float, float]:
    """The bend ``k`` under which the chessboard ``corners`` (N×2 pixels of a ``width``×``height`` frame) straighten
    onto a square grid (``grid``: N×2 board positions, in squares), and how far they then lie from it at most (a
    share of a square). The board lies flat on the tray, square on to the camera, so without bend its corners are
    the grid turned, scaled and moved: ``k`` is searched for the best such fit.

    >>> grid = np.array([(x, y) for y in range(6) for x in range(9)], np.float64)
    >>> lens = Lens.of_frame(0.15, 640, 480)
    >>> k, off = fit_distortion(lens.bent(grid * 50 + (120, 100)), grid, 640, 480); round(k, 3), off < 0.01
    (0.15, True)
    """
    corners = np.asarray(corners, np.float64).reshape(-1, 2)
    grid = np.asarray(grid, np.float64).reshape(-1, 2)
    # a board seen from below is seen mirrored, and a finder may list its corners either way round: fit the grid
    # the way round it fits best (a turn, a scale and a move cannot mirror it)
    grid = min((grid, grid * (-1.0, 1.0)), key=lambda g: _similarity_misfit(g, corners))

    def straight(k: float) -> np.ndarray:
        lens = Lens.of_frame(k, width, height)
        return lens.straightened(corners).astype(np.float64) if lens is not None else corners

    low, high = 0.0, MAX_DISTORTION
    for _ in range(60):  # golden-section search: the misfit falls to one least and rises after it
        a, b = high - (high - low) / 1.618033988749895, low + (high - low) / 1.618033988749895
        if _similarity_misfit(grid, straight(a)) <= _similarity_misfit(grid, straight(b)):
            high = b
        else:
            low = a
    k = round((low + high) / 2, 4)
    return k, _worst_off(grid, straight(k))


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
