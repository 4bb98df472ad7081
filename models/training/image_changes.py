"""Pixel changes another camera or light would make, shared by the two robustness sweeps.

``models.training.robustness`` changes whole photos and ``models.training.crop_robustness`` changes crops; both
need the same JPEG, grey and light changes, so a figure measured "grey" in one means what it means in the other.
Each takes a BGR uint8 image and returns a new one of the same shape and dtype.
"""

from __future__ import annotations

from typing import Callable

import cv2
import numpy as np

Change = Callable[[np.ndarray], np.ndarray]


def jpeg(quality: int) -> Change:
    """Saved as JPEG at ``quality`` (1-100) and read back: a cheap camera's or a messenger app's blocks."""
    return lambda img: cv2.imdecode(cv2.imencode(".jpg", img, [cv2.IMWRITE_JPEG_QUALITY, quality])[1], cv2.IMREAD_COLOR)


def grey(img: np.ndarray) -> np.ndarray:
    """The colour dropped, kept as three equal channels (a grey camera's frame given to a colour reader)."""
    return cv2.cvtColor(cv2.cvtColor(img, cv2.COLOR_BGR2GRAY), cv2.COLOR_GRAY2BGR)


def light(factor: float | tuple[float, float, float]) -> Change:
    """Every channel times ``factor`` (one number: darker or brighter; three, in B, G, R order: a tinted light),
    clipped to 0-255."""
    scale = np.asarray(factor, np.float32)
    return lambda img: np.clip(img.astype(np.float32) * scale, 0, 255).astype(np.uint8)


def tone(gamma: float) -> Change:
    """Every level raised to the power ``gamma`` (on 0-1): a phone's tone curve, under 1 lifting the shadows (a
    grey, washed-out photo), over 1 deepening them (dark marks and a dark table run together)."""
    table = np.clip(np.round(255 * (np.arange(256) / 255.0) ** gamma), 0, 255).astype(np.uint8)
    return lambda img: cv2.LUT(img, table)


def haze(share: float) -> Change:
    """Each pixel ``share`` of the way to mid-grey: a scratched or misted tray, a fogged lens, flat light; the
    marks keep their place and lose their contrast."""
    return lambda img: cv2.addWeighted(img, 1.0 - share, np.full_like(img, 128), share, 0.0)


def sharpened(amount: float, sigma: float = 2.0) -> Change:
    """Unsharp masking at ``amount`` (1: the detail doubled) over ``sigma`` px, as phone cameras do before saving:
    bright halos along every edge, the grain made coarser."""
    def change(img: np.ndarray) -> np.ndarray:
        return cv2.addWeighted(img, 1.0 + amount, cv2.GaussianBlur(img, (0, 0), sigma), -amount, 0.0)
    return change


def blurred(sigma: float) -> Change:
    """A Gaussian blur of ``sigma`` px: a lens out of focus, a soft webcam."""
    return lambda img: cv2.GaussianBlur(img, (0, 0), sigma)


def upscaled(k: int) -> Change:
    """Taken with ``k`` times fewer pixels a side and enlarged back: a small webcam's picture shown big, every mark
    soft and blocky."""
    def change(img: np.ndarray) -> np.ndarray:
        h, w = img.shape[:2]
        small = cv2.resize(img, (max(1, w // k), max(1, h // k)), interpolation=cv2.INTER_AREA)
        return cv2.resize(small, (w, h), interpolation=cv2.INTER_LINEAR)
    return change


def defocused(share: float) -> Change:
    """A lens focused elsewhere: each point spread over a flat disc ``share`` of the image's width across (a
    Gaussian blur keeps a sharp core; this keeps none)."""
    def change(img: np.ndarray) -> np.ndarray:
        r = max(1, round(img.shape[1] * share))
        disc = np.zeros((2 * r + 1, 2 * r + 1), np.float32)
        cv2.circle(disc, (r, r), r, 1.0, -1)
        return cv2.filter2D(img, -1, disc / disc.sum())
    return change


def posterised(bits: int) -> Change:
    """Each level kept to its top ``bits`` bits: a cheap sensor's or an old GIF's banding."""
    mask = np.uint8((0xFF << (8 - bits)) & 0xFF)
    return lambda img: img & mask


def off_a_screen(period: float) -> Change:
    """Photographed off a screen: the screen's pixel grid beating with the camera's as slanting bands ``period`` px
    apart, the light down to 0.8 in their troughs."""
    def change(img: np.ndarray) -> np.ndarray:
        h, w = img.shape[:2]
        y, x = np.mgrid[0:h, 0:w].astype(np.float32)
        gain = 0.9 + 0.1 * np.sin(2 * np.pi * (x + 0.3 * y) / period)
        return np.clip(img * gain[..., None], 0, 255).astype(np.uint8)
    return change
