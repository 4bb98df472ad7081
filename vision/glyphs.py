"""A small bitmap font for the words drawn on an annotated photo.

OpenCV 5's ``putText`` loads its whole font engine on first use, about 8 MiB
that ``serve`` then keeps for good; the annotated photo of each Bluff only
needs digits, lower-case words and some punctuation. These 5x7 glyphs are
drawn as pixel masks, with a dark outline so they read on any tray.
"""

from __future__ import annotations

import cv2
import numpy as np

#: Each glyph: seven rows of five cells, top to bottom ("1": drawn).
_ROWS = {
    " ": "00000 00000 00000 00000 00000 00000 00000",
    "0": "01110 10001 10011 10101 11001 10001 01110",
    "1": "00100 01100 00100 00100 00100 00100 01110",
    "2": "01110 10001 00001 00010 00100 01000 11111",
    "3": "11111 00010 00100 00010 00001 10001 01110",
    "4": "00010 00110 01010 10010 11111 00010 00010",
    "5": "11111 10000 11110 00001 00001 10001 01110",
    "6": "00110 01000 10000 11110 10001 10001 01110",
    "7": "11111 00001 00010 00100 01000 01000 01000",
    "8": "01110 10001 10001 01110 10001 10001 01110",
    "9": "01110 10001 10001 01111 00001 00010 01100",
    "a": "00000 00000 01110 00001 01111 10001 01111",
    "b": "10000 10000 10110 11001 10001 10001 11110",
    "c": "00000 00000 01110 10000 10000 10001 01110",
    "d": "00001 00001 01101 10011 10001 10001 01111",
    "e": "00000 00000 01110 10001 11111 10000 01110",
    "f": "00110 01001 01000 11100 01000 01000 01000",
    "g": "00000 01111 10001 10001 01111 00001 01110",
    "h": "10000 10000 10110 11001 10001 10001 10001",
    "i": "00100 00000 01100 00100 00100 00100 01110",
    "j": "00010 00000 00110 00010 00010 10010 01100",
    "k": "10000 10000 10010 10100 11000 10100 10010",
    "l": "01100 00100 00100 00100 00100 00100 01110",
    "m": "00000 00000 11010 10101 10101 10001 10001",
    "n": "00000 00000 10110 11001 10001 10001 10001",
    "o": "00000 00000 01110 10001 10001 10001 01110",
    "p": "00000 00000 11110 10001 11110 10000 10000",
    "q": "00000 00000 01101 10011 01111 00001 00001",
    "r": "00000 00000 10110 11001 10000 10000 10000",
    "s": "00000 00000 01110 10000 01110 00001 11110",
    "t": "01000 01000 11100 01000 01000 01001 00110",
    "u": "00000 00000 10001 10001 10001 10011 01101",
    "v": "00000 00000 10001 10001 10001 01010 00100",
    "w": "00000 00000 10001 10001 10101 10101 01010",
    "x": "00000 00000 10001 01010 00100 01010 10001",
    "y": "00000 00000 10001 10001 01111 00001 01110",
    "z": "00000 00000 11111 00010 00100 01000 11111",
    ".": "00000 00000 00000 00000 00000 01100 01100",
    ",": "00000 00000 00000 00000 01100 00100 01000",
    ":": "00000 01100 01100 00000 01100 01100 00000",
    ";": "00000 01100 01100 00000 01100 00100 01000",
    "(": "00010 00100 01000 01000 01000 00100 00010",
    ")": "01000 00100 00010 00010 00010 00100 01000",
    "?": "01110 10001 00001 00010 00100 00000 00100",
    "!": "00100 00100 00100 00100 00100 00000 00100",
    "%": "11000 11001 00010 00100 01000 10011 00011",
    "-": "00000 00000 00000 11111 00000 00000 00000",
    "+": "00000 00100 00100 11111 00100 00100 00000",
    "=": "00000 00000 11111 00000 11111 00000 00000",
    "/": "00000 00001 00010 00100 01000 10000 00000",
    "'": "01100 00100 01000 00000 00000 00000 00000",
    "<": "00010 00100 01000 10000 01000 00100 00010",
    ">": "01000 00100 00010 00001 00010 00100 01000",
}
GLYPHS = {ch: np.array([[c == "1" for c in row] for row in rows.split()], bool) for ch, rows in _ROWS.items()}
#: Glyph cells: a glyph is this many cells high, and each is followed by one empty column.
HEIGHT, WIDTH = 7, 5


#: Each glyph with the empty column that follows it.
_SPACED = {ch: np.hstack([cells, np.zeros((HEIGHT, 1), bool)]) for ch, cells in GLYPHS.items()}


def glyph(ch: str) -> np.ndarray:
    """The 7x5 cells of ``ch``: capitals as small letters (the font has no capitals), "?" for what it lacks."""
    return GLYPHS[_known(ch)]


def _known(ch: str) -> str:
    return ch if ch in GLYPHS else ch.lower() if ch.lower() in GLYPHS else "?"


def text_mask(text: str, cell: int) -> np.ndarray:
    """``text`` as a bool mask, each glyph cell ``cell`` x ``cell`` pixels, one empty column between glyphs.

    >>> text_mask("ok", 2).shape
    (14, 22)
    """
    if not text:
        return np.zeros((HEIGHT * cell, 0), bool)
    cells = np.hstack([_SPACED[_known(ch)] for ch in text])[:, :-1]
    return cells.repeat(cell, axis=0).repeat(cell, axis=1)


def draw_text(image: np.ndarray, text: str, origin: tuple[int, int], height: int, colour: tuple[int, int, int]) -> None:
    """Draw ``text`` on the BGR ``image`` in place, its bottom-left corner at ``origin`` (as ``cv2.putText``),
    glyphs about ``height`` pixels high, in ``colour`` with a black outline; what falls outside is cut off.

    >>> img = np.zeros((40, 80, 3), np.uint8)
    >>> draw_text(img, "6", (2, 30), 14, (0, 255, 0)); bool((img[..., 1] == 255).any())
    True
    """
    cell = max(1, int(round(height / HEIGHT)))
    mask = text_mask(text, cell)
    pad = max(1, cell // 2 + 1)
    inner = np.pad(mask, pad).astype(np.uint8)
    grown = cv2.dilate(inner, np.ones((2 * pad + 1, 2 * pad + 1), np.uint8))  # the outline: ``pad`` pixels around
    x0, y0 = origin[0] - pad, origin[1] - mask.shape[0] - pad
    _paint(image, grown.astype(bool), x0, y0, (0, 0, 0))
    _paint(image, inner.astype(bool), x0, y0, colour)


def _paint(image: np.ndarray, mask: np.ndarray, x0: int, y0: int, colour: tuple[int, int, int]) -> None:
    h, w = image.shape[:2]
    top, left = max(0, y0), max(0, x0)
    bottom, right = min(h, y0 + mask.shape[0]), min(w, x0 + mask.shape[1])
    if bottom <= top or right <= left:
        return
    part = mask[top - y0:bottom - y0, left - x0:right - x0]
    image[top:bottom, left:right][part] = colour
