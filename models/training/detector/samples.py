"""Training samples: a frame placed on the network's square canvas, augmented, and its target maps.

Plain numpy and OpenCV (no torch), so the tests check it without PyTorch. A frame is always placed
at the canvas's top-left and the rest left as padding, as ``vision.detector_learned`` pads at run
time; the input normalisation is that module's ``net_input``.
"""

from __future__ import annotations

import math

import cv2
import numpy as np

from models.training.detector import labels as L
from vision.detector_learned import NET_SIDE, SIDE_UNIT, STRIDE, net_input

#: Training samples are square windows this wide (smaller than ``NET_SIDE``: CPU time; the net is convolutional).
TRAIN_SIDE = 192
GRID = TRAIN_SIDE // STRIDE
#: The centre heat's Gaussian, in grid cells: this share of the die's side, at least ``MIN_SIGMA``.
SIGMA_SHARE, MIN_SIGMA = 1 / 6, 0.6
#: Real dice are brought to a network size drawn log-uniform between these (pixels).
REAL_SIDES = (7.0, 170.0)


def turn_flip(img: np.ndarray, dice: np.ndarray, turn: int, flip: bool) -> tuple[np.ndarray, np.ndarray]:
    """``turn`` quarter turns (counter-clockwise, as ``np.rot90``) then a left-right mirror, labels with them."""
    h, w = img.shape[:2]
    m = np.array([[1.0, 0, 0], [0, 1.0, 0]])
    for _ in range(turn % 4):  # rot90: (x, y) -> (y, w - 1 - x) on a w-wide image; with pixel centres: (y, w - x)
        m = np.array([[0, 1.0, 0], [-1.0, 0, w]]) @ np.vstack([m, [0, 0, 1]])
        h, w = w, h
    img = np.rot90(img, turn % 4)
    if flip:
        m = np.array([[-1.0, 0, w], [0, 1.0, 0]]) @ np.vstack([m, [0, 0, 1]])
        img = img[:, ::-1]
    return np.ascontiguousarray(img), L.transform(dice, m, turn, flip)


def photometric(img: np.ndarray, rng: np.random.Generator, strong: bool) -> np.ndarray:
    """Exposure, contrast, gamma, sometimes a negative, blur, grain, JPEG."""
    f = img.astype(np.float32)
    f = (f - 128) * rng.uniform(0.6, 1.4) + 128 + rng.uniform(-40, 40)
    if rng.random() < 0.3:
        f = 255.0 * (np.clip(f, 0, 255) / 255.0) ** rng.uniform(0.6, 1.6)
    if strong and rng.random() < 0.1:
        f = 255 - f
    if rng.random() < 0.2:
        f = cv2.GaussianBlur(f, (0, 0), rng.uniform(0.4, 1.3))
    if rng.random() < 0.4:
        f = f + rng.normal(0, rng.uniform(1, 8), f.shape).astype(np.float32)
    out = np.clip(f, 0, 255).astype(np.uint8)
    if strong and rng.random() < 0.3:
        ok, buf = cv2.imencode(".jpg", out, [cv2.IMWRITE_JPEG_QUALITY, int(rng.integers(40, 95))])
        out = cv2.imdecode(buf, cv2.IMREAD_GRAYSCALE)
    return out


def real_view(img: np.ndarray, dice: np.ndarray, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """A real photo zoomed so its dice land at a random network size, cut to at most the canvas."""
    h, w = img.shape
    med = float(np.median(dice[:, 4])) if len(dice) else 0.08 * max(h, w)
    target = math.exp(rng.uniform(math.log(REAL_SIDES[0]), math.log(REAL_SIDES[1])))
    z = target / max(med, 1.0)
    z = max(z, 0.5 * NET_SIDE / max(h, w))  # never smaller than half the canvas: the photos are whole scenes
    sw, sh = w * z, h * z
    ow, oh = int(min(TRAIN_SIDE, math.ceil(sw))), int(min(TRAIN_SIDE, math.ceil(sh)))
    ox = rng.uniform(0, max(0.0, sw - ow))
    oy = rng.uniform(0, max(0.0, sh - oh))
    if len(dice) and (sw > ow or sh > oh) and rng.random() < 0.7:  # mostly a window around some die
        cx, cy = dice[int(rng.integers(len(dice))), :2] * z
        ox = float(np.clip(cx - rng.uniform(0.1, 0.9) * ow, 0, max(0.0, sw - ow)))
        oy = float(np.clip(cy - rng.uniform(0.1, 0.9) * oh, 0, max(0.0, sh - oh)))
    if z < 1:  # area-average the whole photo first, as the runtime shrinks it, then cut
        small = cv2.resize(img, (max(1, round(sw)), max(1, round(sh))), interpolation=cv2.INTER_AREA)
        ix, iy = int(ox), int(oy)
        out = small[iy:iy + oh, ix:ix + ow]
        m = np.array([[small.shape[1] / w, 0, -ix], [0, small.shape[0] / h, -iy]])
    else:
        m = np.array([[z, 0, -ox], [0, z, -oy]])
        out = cv2.warpAffine(img, m, (ow, oh), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
    oh, ow = out.shape
    moved = L.transform(dice, m, 0, False)
    inside = (moved[:, 0] >= 0) & (moved[:, 0] < ow) & (moved[:, 1] >= 0) & (moved[:, 1] < oh)
    return out, moved[inside]


def letterbox(img: np.ndarray, dice: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A whole frame at network scale (long side ``NET_SIDE``), as the runtime shrinks it."""
    h, w = img.shape
    scale = NET_SIDE / max(h, w)
    nw, nh = max(1, round(w * scale)), max(1, round(h * scale))
    small = cv2.resize(img, (nw, nh), interpolation=cv2.INTER_AREA if scale < 1 else cv2.INTER_LINEAR)
    out = dice.copy()
    if len(out):
        out[:, [0, 2]] *= nw / w
        out[:, [1, 3]] *= nh / h
        out[:, 4] *= (nw / w + nh / h) / 2
    return small, out


def canvas(small: np.ndarray) -> np.ndarray:
    """The network input of one sample (1×TRAIN_SIDE×TRAIN_SIDE float32): ``net_input`` padded to the square."""
    x = net_input(small)[0]
    out = np.zeros((1, TRAIN_SIDE, TRAIN_SIDE), np.float32)
    out[:, : x.shape[1], : x.shape[2]] = x[:, :TRAIN_SIDE, :TRAIN_SIDE]
    return out


def window(img: np.ndarray, dice: np.ndarray, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """A ``TRAIN_SIDE`` window of a frame at network scale (all of it when smaller), mostly around some die."""
    h, w = img.shape
    ow, oh = min(w, TRAIN_SIDE), min(h, TRAIN_SIDE)
    ox, oy = int(rng.integers(0, w - ow + 1)), int(rng.integers(0, h - oh + 1))
    if len(dice) and rng.random() < 0.7:
        cx, cy = dice[int(rng.integers(len(dice))), :2]
        ox = int(np.clip(cx - rng.uniform(0.1, 0.9) * ow, 0, w - ow))
        oy = int(np.clip(cy - rng.uniform(0.1, 0.9) * oh, 0, h - oh))
    out = dice.copy()
    out[:, 0] -= ox
    out[:, 1] -= oy
    inside = (out[:, 0] >= 0) & (out[:, 0] < ow) & (out[:, 1] >= 0) & (out[:, 1] < oh)
    return img[oy:oy + oh, ox:ox + ow], out[inside]


def targets(dice: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The target maps on the ``GRID``×``GRID`` output: heat (1×G×G); regression (6×G×G: log side, cos 4θ,
    sin 4θ, offset x, offset y, exact) and its weight (1×G×G), set at each die's centre cell (1) and the
    eight around it (0.25; a smaller die's cells win over a larger one's)."""
    heat = np.zeros((GRID, GRID), np.float32)
    reg = np.zeros((6, GRID, GRID), np.float32)
    wt = np.zeros((GRID, GRID), np.float32)
    yy, xx = np.mgrid[0:GRID, 0:GRID].astype(np.float32)
    for row in sorted(dice, key=lambda r: -float(r[4])):
        cx, cy, side, angle, exact = float(row[0]) / STRIDE, float(row[1]) / STRIDE, float(row[4]), float(row[5]), float(row[6])
        ix, iy = int(math.floor(cx)), int(math.floor(cy))
        if not (0 <= ix < GRID and 0 <= iy < GRID) or side <= 0:
            continue
        sigma = max(MIN_SIGMA, side / STRIDE * SIGMA_SHARE)
        r = int(math.ceil(3 * sigma))
        x0, x1, y0, y1 = max(0, ix - r), min(GRID, ix + r + 1), max(0, iy - r), min(GRID, iy + r + 1)
        g = np.exp(-((xx[y0:y1, x0:x1] - ix) ** 2 + (yy[y0:y1, x0:x1] - iy) ** 2) / (2 * sigma**2))
        np.maximum(heat[y0:y1, x0:x1], g, out=heat[y0:y1, x0:x1])
        heat[iy, ix] = 1.0
        a4 = math.radians(4 * angle) if exact > 0 else 0.0
        for dy in (-1, 0, 1):
            for dx in (-1, 0, 1):
                x, y = ix + dx, iy + dy
                if 0 <= x < GRID and 0 <= y < GRID:
                    reg[:, y, x] = (math.log(side / SIDE_UNIT), math.cos(a4), math.sin(a4), cx - (x + 0.5), cy - (y + 0.5), exact)
                    wt[y, x] = 1.0 if dx == dy == 0 else 0.25
    return heat[None], reg, wt[None]


def sample(img: np.ndarray, dice: np.ndarray, rng: np.random.Generator, real: bool):
    """One augmented training sample (input, heat, regression, weight) from a frame already at network
    scale (rendered) or a real photo (``real``: zoomed and cut by ``real_view``)."""
    img, dice = real_view(img, dice, rng) if real else window(img, dice, rng)
    img, dice = turn_flip(img, dice, int(rng.integers(4)), bool(rng.random() < 0.5))
    img = photometric(img, rng, strong=real)
    return (canvas(img), *targets(dice))
