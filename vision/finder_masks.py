"""The finder's clear pass: a working copy of the frame, and what differs clearly from the tray.

The frame is shrunk to the finder's working copy, brightened when dim (every
threshold is a grey level of a frame exposed like the tray camera's), and
compared with a coarse median of itself that stands for the empty tray. What
differs by more than ``diff_threshold`` is kept, its small gaps closed, and thin
things (the cup's rim, scratches) opened away. The mask before closing is kept
too: it still shows the seams between touching dice (``vision.finder_cut``).
"""

from __future__ import annotations

import cv2
import numpy as np

from vision.classic_tunables import CLASSIC


def shrink(frame: np.ndarray, size: tuple[int, int]) -> np.ndarray:
    """Resize to ``size``; a big reduction goes linear to twice the size, then by area (faster than by area alone)."""
    w, h = size
    if frame.shape[1] > 2 * w:
        frame = cv2.resize(frame, (2 * w, 2 * h), interpolation=cv2.INTER_LINEAR)
    interp = cv2.INTER_AREA if frame.shape[1] > w else cv2.INTER_LINEAR
    return cv2.resize(frame, (w, h), interpolation=interp)


def exposed(small: np.ndarray) -> np.ndarray:
    """``small`` brightened when it is dim (``CLASSIC.exposure_level``), else itself.

    A photo from a dim room or a darker camera holds the same dice at half the
    contrast, and the fixed grey-level thresholds would lose them."""
    b, g, r = cv2.split(small)
    cum = np.cumsum(cv2.calcHist([cv2.max(cv2.max(b, g), r)], [0], None, [256], [0, 256]).ravel())
    level = float(np.searchsorted(cum, CLASSIC.exposure_quantile * cum[-1]))
    if level >= CLASSIC.exposure_level or level < 1:
        return small
    return cv2.convertScaleAbs(small, alpha=min(CLASSIC.max_gain, CLASSIC.exposure_level / level))


def _background(small: np.ndarray) -> np.ndarray:
    """The tray as it would look without dice: a median over cells larger than a die."""
    h, w = small.shape[:2]
    tw, th = max(4, w // CLASSIC.bg_cell), max(4, h // CLASSIC.bg_cell)
    tiny = cv2.resize(small, (tw, th), interpolation=cv2.INTER_AREA)
    tiny = cv2.medianBlur(tiny, CLASSIC.bg_median)
    return cv2.resize(tiny, (w, h), interpolation=cv2.INTER_LINEAR)


def difference(small: np.ndarray, bg: np.ndarray) -> np.ndarray:
    """The largest channel difference from the tray (faster than numpy's max over the channels)."""
    b, g, r = cv2.split(cv2.absdiff(small, bg))
    return cv2.max(cv2.max(b, g), r)


def _clean(mask: np.ndarray) -> np.ndarray:
    """Close small gaps, then open with a disc narrower than any die.

    Opening drops thin things (the cup's rim, scratches, the tray's edge) that
    would otherwise glue dice into one blob.
    """
    disc = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (CLASSIC.close_side, CLASSIC.close_side))
    mask = cv2.morphologyEx(mask, cv2.MORPH_CLOSE, disc, iterations=CLASSIC.close_iterations)
    return cv2.morphologyEx(mask, cv2.MORPH_OPEN, cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (CLASSIC.open_side, CLASSIC.open_side)))


def clear_masks(small: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Two 0/255 masks of what differs clearly from the tray (dice, their marks and edges): closed
    and opened (``_clean``), and before ``_clean`` closed its gaps (it still shows the seams between
    touching dice)."""
    diff = difference(small, _background(small))
    raw = (diff > CLASSIC.diff_threshold).astype(np.uint8) * 255
    return _clean(raw), raw
