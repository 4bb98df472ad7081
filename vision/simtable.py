"""The simulated table: renders camera frames of dice on the tray.

One renderer serves two masters, so that what the reader is trained on and what
``serve --simulate`` shows it are the same thing:

* ``render_table`` draws a whole camera frame (from below through the acrylic
  tray by default, or from above), with the cup's footprint, dice anywhere
  inside or outside it, touching dice, shading, glare, blur, noise and JPEG loss;
* ``face_texture`` draws one die face (pink elephants on a light face, or round
  pips, in any colours, on a plain, swirled or translucent body), which the
  training code also cuts into crops;
* ``LOOKS`` names kinds of dice other than the game's (``DieLook``: a pink body with
  elephants seen from the front, unusual colours, small marks) that the shipped
  model never learned: ``render_table(..., look=LOOKS[name])`` draws three of them,
  and ``bench --only teach`` measures teaching the reader on them.

Everything is drawn with OpenCV and numpy from a ``numpy.random.Generator``, so a
seed gives the same frame again. Nothing here knows about the reader.
"""

from __future__ import annotations

import copy
import math
from dataclasses import dataclass, replace

import cv2
import numpy as np

#: Mark centres per face value, in face units (the face spans -1..1).
PIP_LAYOUT: dict[int, tuple[tuple[float, float], ...]] = {
    1: ((0.0, 0.0),),
    2: ((-0.5, -0.5), (0.5, 0.5)),
    3: ((-0.5, -0.5), (0.0, 0.0), (0.5, 0.5)),
    4: ((-0.5, -0.5), (0.5, -0.5), (-0.5, 0.5), (0.5, 0.5)),
    5: ((-0.5, -0.5), (0.5, -0.5), (0.0, 0.0), (-0.5, 0.5), (0.5, 0.5)),
    6: ((-0.5, -0.55), (0.5, -0.55), (-0.5, 0.0), (0.5, 0.0), (-0.5, 0.55), (0.5, 0.55)),
}

#: A BGR colour's brightness, with the weights of OpenCV's grey conversion.
LUMA = np.array([0.114, 0.587, 0.299])


def bgr(values) -> tuple[int, int, int]:
    """A colour drawn as floats, clipped to 0-255 in whole levels."""
    return tuple(int(x) for x in np.clip(values, 0, 255))  # type: ignore[return-value]


#: The boxed game's dice: light faces with pink elephants.
GAME_FACE = (232, 240, 246)  # BGR, an ivory white
GAME_MARK = (170, 90, 235)  # BGR, the elephants' pink


@dataclass(frozen=True)
class DieStyle:
    """How a die looks: face and mark colours (BGR) and the kind of mark."""

    face: tuple[int, int, int] = GAME_FACE
    mark: tuple[int, int, int] = GAME_MARK
    #: or "pip", or "head" (an elephant seen from the front: ears, head and trunk), or "numeral" (the face's number
    #: printed instead of marks), or one of ``SHAPED_MARKS`` (pips drawn as stars, diamonds, hearts, rings or squares)
    marks: str = "elephant"
    mark_scale: float = 1.0  # relative mark size
    #: Pips drilled into the plastic, as on most real dice: each hollow catches the light on the far side
    #: of its rim and is shadowed on the near side, so a glossy pip shows a bright crescent. Off for the
    #: simulated table (the game's elephants are printed); the training data turns it on for some pips.
    drilled: bool = False
    #: The body: "plain" (one colour, the game's dice and every die drawn before), "swirl" (streaks of
    #: ``body_colour`` through it, as marbled dice) or "translucent" (a see-through body lit unevenly, the marks of
    #: the faces behind showing faintly through it, as casino dice).
    body: str = "plain"
    body_colour: tuple[int, int, int] = (0, 0, 0)
    #: One mark of each face of two or more drawn this share of the way from the marks' colour to the face's (a mark
    #: worn, filled with dirt or lit less than the others): 0, every mark whole, as the simulated table draws them.
    #: Training turns it on for some dice so that a face with one dim mark is not read, surely, as one mark fewer.
    faint_mark: float = 0.0
    #: The one's single mark this many times the other marks' size, as dice that print the one as a big emblem: 1.0,
    #: every mark one size, as the simulated table draws them.
    one_scale: float = 1.0

    @staticmethod
    def game(rng: np.random.Generator) -> "DieStyle":
        """The game's dice with a little colour variation (print, plastic, light)."""
        face = tuple(int(np.clip(c + rng.normal(0, 6), 0, 255)) for c in GAME_FACE)
        mark = tuple(int(np.clip(c + rng.normal(0, 12), 0, 255)) for c in GAME_MARK)
        return DieStyle(face, mark, "elephant", float(rng.uniform(0.9, 1.1)))  # type: ignore[arg-type]

    @staticmethod
    def random(rng: np.random.Generator) -> "DieStyle":
        """Any die: light or dark face, contrasting marks, elephants or pips."""
        faces = [(240, 240, 240), (215, 235, 245), (40, 40, 200), (60, 160, 40), (170, 80, 30), (30, 30, 30),
                 (30, 200, 230), (60, 150, 200), (120, 40, 90), (200, 200, 200), (90, 90, 90), (140, 30, 30)]
        face = np.array(faces[rng.integers(len(faces))], float) + rng.normal(0, 15, 3)
        lum = face @ LUMA
        if lum > 140:
            marks = [(20, 20, 20), GAME_MARK, (203, 150, 255), (40, 40, 190), (150, 60, 20), (60, 60, 60)]
        else:
            marks = [(245, 245, 245), (230, 230, 230), (60, 220, 240), (40, 200, 255), (200, 170, 255)]
        mark = np.array(marks[rng.integers(len(marks))], float) + rng.normal(0, 12, 3)
        kind = "elephant" if rng.random() < 0.5 else "pip"
        return DieStyle(bgr(face), bgr(mark), kind, float(rng.uniform(0.75, 1.2)))


def _draw_elephant(img: np.ndarray, cx: float, cy: float, r: float, colour: tuple[int, int, int], facing: int) -> None:
    """A small elephant silhouette (body, head, ear, trunk, legs) centred at (cx, cy), about 2r wide."""
    f = 16.0  # drawing in fixed point (shift 4) for sub-pixel shapes

    def p(x: float, y: float) -> tuple[int, int]:
        return int(round((cx + facing * x * r) * f)), int(round((cy + y * r) * f))

    def L(v: float) -> int:  # a length in fixed point
        return max(1, int(round(v * r * f)))

    def T(v: float) -> int:  # a line thickness (never fixed point in OpenCV)
        return max(1, int(round(v * r * 2)))

    cv2.ellipse(img, p(0.15, 0.0), (L(0.62), L(0.45)), 0, 0, 360, colour, -1, cv2.LINE_AA, 4)
    cv2.circle(img, p(-0.55, -0.22), L(0.33), colour, -1, cv2.LINE_AA, 4)
    cv2.ellipse(img, p(-0.35, -0.18), (L(0.22), L(0.3)), 0, 0, 360, colour, -1, cv2.LINE_AA, 4)
    trunk = np.array([p(-0.8, -0.15), p(-0.95, 0.2), p(-0.92, 0.55)], np.int32)
    cv2.polylines(img, [trunk], False, colour, T(0.16), cv2.LINE_AA, 4)
    for lx in (-0.25, -0.05, 0.3, 0.5):
        cv2.rectangle(img, p(lx - 0.08, 0.2), p(lx + 0.08, 0.75), colour, -1, cv2.LINE_AA, 4)
    cv2.line(img, p(0.75, -0.1), p(0.92, 0.25), colour, T(0.05), cv2.LINE_AA, 4)


def _draw_elephant_head(img: np.ndarray, cx: float, cy: float, r: float, colour: tuple[int, int, int], mirrored: bool) -> None:
    """An elephant seen from the front, centred at (cx, cy), about 2r wide: two wide ears, the head, the trunk
    curling to one side and One mark, but three round blobs at a glance."""
    f = 16.0
    side = -1 if mirrored else 1

    def p(x: float, y: float) -> tuple[int, int]:
        return int(round((cx + side * x * r) * f)), int(round((cy + y * r) * f))

    def L(v: float) -> int:
        return max(1, int(round(v * r * f)))

    for ear in (-1, 1):
        cv2.ellipse(img, p(ear * 0.5, -0.12), (L(0.34), L(0.46)), ear * 15, 0, 360, colour, -1, cv2.LINE_AA, 4)
    cv2.ellipse(img, p(0.0, -0.05), (L(0.3), L(0.4)), 0, 0, 360, colour, -1, cv2.LINE_AA, 4)
    trunk = np.array([p(-0.09, 0.2), p(0.09, 0.2), p(0.12, 0.6), p(0.3, 0.74), p(0.26, 0.86), p(0.0, 0.7)], np.int32)
    cv2.fillPoly(img, [trunk], colour, cv2.LINE_AA, 4)


@dataclass(frozen=True)
class DieLook:
    """A kind of die, named: the style each die of it varies around (its colours by a few levels, its marks' size a little).

    >>> LOOKS["pink-elephants"].die(np.random.default_rng(1)).marks
    'head'
    """

    name: str
    style: DieStyle
    #: how much one die's colours differ from the next (print, plastic, light), in BGR levels
    jitter: float = 8.0

    def die(self, rng: np.random.Generator) -> DieStyle:
        c = lambda base, spread: tuple(int(np.clip(v + rng.normal(0, spread), 0, 255)) for v in base)  # noqa: E731
        s = self.style
        return DieStyle(c(s.face, self.jitter), c(s.mark, self.jitter * 1.5), s.marks, float(s.mark_scale * rng.uniform(0.93, 1.07)), s.drilled)  # type: ignore[arg-type]


#: Dice the shipped model never learned (its training draws the game's dice, ``DieStyle.random`` and dark dice with
#: coloured pips): the game's elephants on a pink body seen from the front, unusual colours, small marks.
LOOKS: dict[str, DieLook] = {look.name: look for look in (
    DieLook("pink-elephants", DieStyle((185, 120, 250), (250, 245, 255), "head", 1.0)),  # white elephants' heads on a pink body
    DieLook("mint-violet-elephants", DieStyle((180, 235, 170), (140, 40, 110), "head", 0.85)),  # violet on a pale mint body
    DieLook("orange-small-pips", DieStyle((30, 140, 250), (70, 30, 20), "pip", 0.45)),  # tiny navy pips on orange
    DieLook("teal-small-elephants", DieStyle((140, 130, 20), (120, 230, 250), "elephant", 0.6)),  # small yellow elephants on teal
)}


def face_texture(value: int, size: int, style: DieStyle, rng: np.random.Generator, mirrored: bool = False) -> np.ndarray:
    """One die face, ``size``×``size`` BGR float32, with rounded darker edges.

    ``mirrored`` draws the marks as seen through the acrylic from below (the
    elephants face the other way; the count is the same).
    """
    face = _body(size, style, rng)
    if style.marks == "numeral":
        canvas = np.ascontiguousarray(face.astype(np.uint8))
        _draw_numeral(canvas, value, style, rng, mirrored)
        return _shaded(canvas.astype(np.float32), size, rng)
    if style.marks == "pip" or style.marks in SHAPED_MARKS:
        radius = _pip_radius(size, style)
    else:
        radius = size * (0.12 if value <= 3 else 0.1) * style.mark_scale
    if value == 1:
        radius *= style.one_scale
    layout = PIP_LAYOUT[value]
    if value in (2, 3, 6) and rng.random() < 0.5:
        layout = tuple((y, x) for x, y in layout)
    facing = -1 if mirrored else 1
    canvas = np.ascontiguousarray(face.astype(np.uint8))
    faint = int(rng.integers(len(layout))) if style.faint_mark and len(layout) > 1 else -1  # no draw when off
    centres = []
    for i, (x, y) in enumerate(layout):
        cx, cy = _mark_centre(size, x, y)
        cx += rng.normal(0, size * 0.008)
        cy += rng.normal(0, size * 0.008)
        centres.append((cx, cy))
        colour = _faded(style.mark, style.face, style.faint_mark) if i == faint else style.mark
        if style.marks == "pip":
            cv2.circle(canvas, (int(cx * 16), int(cy * 16)), max(1, int(radius * 16)), colour, -1, cv2.LINE_AA, 4)
        elif style.marks == "head":
            _draw_elephant_head(canvas, cx, cy, radius, colour, mirrored)
        elif style.marks in SHAPED_MARKS:
            draw_shaped_mark(canvas, style.marks, cx, cy, radius, colour)
        else:
            _draw_elephant(canvas, cx, cy, radius, colour, facing)
    face = canvas.astype(np.float32)
    if style.marks == "pip" and style.drilled:
        face = _drilled(face, centres, radius, rng)
    return _shaded(face, size, rng)


#: The fonts a die printed with its number may use (OpenCV's Hershey fonts: plain, bold, serif, script-like).
NUMERAL_FONTS = (cv2.FONT_HERSHEY_SIMPLEX, cv2.FONT_HERSHEY_DUPLEX, cv2.FONT_HERSHEY_COMPLEX, cv2.FONT_HERSHEY_TRIPLEX,
                 cv2.FONT_HERSHEY_PLAIN, cv2.FONT_HERSHEY_COMPLEX_SMALL)


def _draw_numeral(canvas: np.ndarray, value: int, style: DieStyle, rng: np.random.Generator, mirrored: bool) -> None:
    """The face's number as one printed digit, centred, 45-70 % of the face tall (times ``mark_scale``), in one of
    ``NUMERAL_FONTS``; half the sixes underlined, as number dice tell a six from a nine."""
    size = canvas.shape[0]
    font = NUMERAL_FONTS[int(rng.integers(len(NUMERAL_FONTS)))]
    glyph = np.zeros((size, size), np.uint8)
    _, base_h = cv2.getTextSize(str(value), font, 1.0, 1)[0]
    scale = size * float(rng.uniform(0.45, 0.7)) * style.mark_scale / max(1, base_h)
    thickness = max(1, int(round(size * float(rng.uniform(0.05, 0.11)))))
    (w, h), _ = cv2.getTextSize(str(value), font, scale, thickness)
    x, y = (size - w) / 2, (size + h) / 2
    cv2.putText(glyph, str(value), (int(x), int(y)), font, scale, 255, thickness, cv2.LINE_AA)
    if value == 6 and rng.random() < 0.5:
        cv2.line(glyph, (int(x), int(y + thickness * 1.5)), (int(x + w), int(y + thickness * 1.5)), 255, max(1, thickness // 2 + 1), cv2.LINE_AA)
    ys, xs = np.nonzero(glyph)
    if len(xs):  # the glyph as drawn, centred (fonts differ in where a digit sits on its line), a little off
        dx = size / 2 - (xs.min() + xs.max()) / 2 + rng.normal(0, size * 0.02)
        dy = size / 2 - (ys.min() + ys.max()) / 2 + rng.normal(0, size * 0.02)
        glyph = cv2.warpAffine(glyph, np.float32([[1, 0, dx], [0, 1, dy]]), (size, size))
    if mirrored:
        glyph = glyph[:, ::-1]
    a = (glyph.astype(np.float32) / 255.0)[..., None]
    canvas[:] = (canvas * (1 - a) + np.array(style.mark, np.float32) * a).astype(np.uint8)


#: Marks of other shapes than round pips, counted the same.
SHAPED_MARKS = ("star", "diamond", "heart", "ring", "square")


def draw_shaped_mark(img: np.ndarray, kind: str, cx: float, cy: float, r: float, colour: tuple[int, int, int]) -> None:
    """One mark of ``kind`` (``SHAPED_MARKS``) centred at (cx, cy), about 2r wide, upright on the face."""
    f = 16.0

    def poly(points: list[tuple[float, float]]) -> None:
        cv2.fillPoly(img, [np.int32([(round((cx + x * r) * f), round((cy + y * r) * f)) for x, y in points])], colour, cv2.LINE_AA, 4)

    if kind == "star":
        poly([((1.0 if k % 2 == 0 else 0.45) * np.sin(k * np.pi / 5), -(1.0 if k % 2 == 0 else 0.45) * np.cos(k * np.pi / 5)) for k in range(10)])
    elif kind == "diamond":
        poly([(0, -1.0), (0.7, 0), (0, 1.0), (-0.7, 0)])
    elif kind == "square":
        poly([(-0.8, -0.8), (0.8, -0.8), (0.8, 0.8), (-0.8, 0.8)])
    elif kind == "heart":
        for x in (-0.45, 0.45):
            cv2.circle(img, (int((cx + x * r) * f), int((cy - 0.2 * r) * f)), max(1, int(0.5 * r * f)), colour, -1, cv2.LINE_AA, 4)
        poly([(-0.92, -0.05), (0.92, -0.05), (0, 1.0)])
    else:  # a ring
        cv2.circle(img, (int(cx * f), int(cy * f)), max(1, int(0.8 * r * f)), colour, max(1, int(round(0.35 * r))), cv2.LINE_AA, 4)


def _shaded(face: np.ndarray, size: int, rng: np.random.Generator) -> np.ndarray:
    """The face with a real die's rounded edges (darker towards the border) and a soft one-sided light."""
    yy, xx = np.mgrid[0:size, 0:size].astype(np.float32)
    edge = np.minimum(np.minimum(xx, size - 1 - xx), np.minimum(yy, size - 1 - yy)) / max(1.0, size * 0.09)
    shade = 0.55 + 0.45 * np.clip(edge, 0, 1) ** 0.7
    # One-sided light: a soft gradient across the face.
    g = rng.uniform(-0.12, 0.12, 2)
    shade = shade * (1.0 + g[0] * (xx / size - 0.5) + g[1] * (yy / size - 0.5))
    return face * shade[..., None]


def _faded(mark: tuple[int, int, int], face: tuple[int, int, int], share: float) -> tuple[int, int, int]:
    """The mark's colour moved ``share`` of the way to the face's.

    >>> _faded((200, 100, 0), (0, 100, 200), 0.25)
    (150, 100, 50)
    """
    return tuple(int(round(m + share * (f - m))) for m, f in zip(mark, face))  # type: ignore[return-value]


def _mark_centre(size: int, x: float, y: float) -> tuple[float, float]:
    """Where the mark at ``PIP_LAYOUT``'s (x, y) lies on a face ``size`` pixels wide."""
    half = size / 2.0
    spread = half * 0.92
    return half + x * spread * 0.85, half + y * spread * 0.85


def _pip_radius(size: int, style: DieStyle) -> float:
    """A round pip's radius on a face ``size`` pixels wide."""
    return size * 0.085 * style.mark_scale


def _body(size: int, style: DieStyle, rng: np.random.Generator) -> np.ndarray:
    """The face's body before its marks, ``size``×``size`` BGR float32: one colour for a plain body (no random
    draw, so plain dice are drawn as they always were); swirled or translucent as ``style.body`` says."""
    face = np.empty((size, size, 3), np.float32)
    face[:] = style.face
    if style.body == "plain":
        return face
    yy, xx = np.mgrid[0:size, 0:size].astype(np.float32) / size
    warp = cv2.resize(rng.normal(0, 1, (4, 4)).astype(np.float32), (size, size), interpolation=cv2.INTER_CUBIC)
    if style.body == "swirl":  # streaks of the second colour, bent by a smooth random field
        turn = rng.uniform(0, np.pi)
        streaks = np.sin(rng.uniform(5, 14) * (xx * np.cos(turn) + yy * np.sin(turn)) + rng.uniform(1.5, 4) * warp)
        mix = np.clip((streaks - rng.uniform(-0.3, 0.6)) * rng.uniform(1.5, 4), 0, 1)[..., None] * rng.uniform(0.45, 0.95)
        return np.clip(face * (1 - mix) + np.float32(style.body_colour) * mix, 0, 255)
    if style.body != "translucent":
        raise ValueError(f"a die's body is plain, swirl or translucent, not {style.body!r}")
    # Light through the body: brighter where it comes through, darker where the body is thick.
    glow = 1.0 + rng.uniform(0.15, 0.45) * warp / max(1e-6, float(np.abs(warp).max()))
    face = face * glow[..., None]
    # The marks of another face seen through the body: shifted, blurred, faint.
    behind = np.zeros((size, size), np.float32)
    shift = rng.uniform(-0.25, 0.25, 2) * size
    radius = _pip_radius(size, style) * rng.uniform(0.8, 1.1)
    for x, y in PIP_LAYOUT[int(rng.integers(1, 7))]:
        cx, cy = np.add(_mark_centre(size, x, y), shift)
        cv2.circle(behind, (int(cx * 16), int(cy * 16)), max(16, int(radius * 16)), 1.0, -1, cv2.LINE_AA, 4)
    behind = cv2.GaussianBlur(behind, (0, 0), max(0.5, size * rng.uniform(0.01, 0.04)))[..., None] * rng.uniform(0.2, 0.5)
    return np.clip(face * (1 - behind) + np.float32(style.mark) * behind, 0, 255)


def _drilled(face: np.ndarray, centres: list[tuple[float, float]], radius: float, rng: np.random.Generator) -> np.ndarray:
    """Each pip's hollow lit from one side (the same light for the whole face): a bright crescent on the
    rim away from the light, often near white on glossy plastic whatever the pip's colour, and a
    shadow on the rim towards it. On real dark dice with big red pips these crescents look like extra
    small marks, and a four was read as a six."""
    size = face.shape[0]
    light = float(rng.uniform(0, 360))
    reach = float(rng.uniform(40, 95))  # half the crescent's arc, degrees
    width = max(1.0, radius * rng.uniform(0.15, 0.35))
    bright = np.zeros((size, size), np.float32)
    dark = np.zeros((size, size), np.float32)
    r = max(1, int(round((radius - width / 2) * 16)))  # the rim's radius in fixed point (4 bits)
    thickness = max(1, int(round(width)))  # OpenCV takes line widths in whole pixels
    for cx, cy in centres:
        centre = (int(round(cx * 16)), int(round(cy * 16)))
        cv2.ellipse(bright, centre, (r, r), light + 180, -reach, reach, 1.0, thickness, cv2.LINE_AA, 4)
        cv2.ellipse(dark, centre, (r, r), light, -reach * 0.8, reach * 0.8, 1.0, thickness, cv2.LINE_AA, 4)
    bright = cv2.GaussianBlur(bright, (0, 0), 0.5)[..., None] * rng.uniform(0.5, 1.0)
    dark = cv2.GaussianBlur(dark, (0, 0), 0.5)[..., None] * rng.uniform(0.2, 0.5)
    face = face * (1 - dark)
    return face * (1 - bright) + rng.uniform(200, 255) * bright


@dataclass(frozen=True)
class PlacedDie:
    """Where a rendered die lies: the seen face, centre, side and angle (degrees), in frame pixels."""

    seen: int
    cx: float
    cy: float
    side: float
    angle: float

    def box(self) -> tuple[int, int, int, int]:
        """The axis-aligned box (x, y, w, h) around the die's square."""
        pts = cv2.boxPoints(((self.cx, self.cy), (self.side, self.side), self.angle))
        x0, y0 = np.floor(pts.min(0))
        x1, y1 = np.ceil(pts.max(0))
        return int(x0), int(y0), int(x1 - x0), int(y1 - y0)

    def corners(self) -> np.ndarray:
        return cv2.boxPoints(((self.cx, self.cy), (self.side, self.side), self.angle))


def _background(rng: np.random.Generator, w: int, h: int, view: str) -> tuple[np.ndarray, tuple[float, float, float] | None]:
    """The tray behind the dice, and the cup's footprint (centre, radius) when seen from below.

    From below: the blurred room, a light, the cup (darker inside, its rim a ring).
    From above: the tray's floor. Shading and vignetting are made at 1/8 scale and
    enlarged once, so a 1280×960 frame costs a few milliseconds.
    """
    sw, sh = max(2, w // 8), max(2, h // 8)
    if view == "below":
        base = rng.uniform(60, 150) * np.array(rng.uniform(0.8, 1.15, 3), np.float32)
    else:
        base = rng.uniform(110, 190) * np.array(rng.uniform(0.9, 1.08, 3), np.float32)
    grid = np.empty((12, 16, 3), np.float32)
    grid[:] = base
    grid += rng.normal(0, 7, grid.shape).astype(np.float32) + rng.normal(0, 10, (12, 16, 1)).astype(np.float32)
    small = cv2.resize(grid, (sw, sh), interpolation=cv2.INTER_CUBIC)
    yy, xx = np.mgrid[0:sh, 0:sw].astype(np.float32)
    yy, xx = yy * 8 + 4, xx * 8 + 4
    lx, ly = rng.uniform(0, w), rng.uniform(0, h)
    small += (rng.uniform(10, 50) * np.exp(-(((xx - lx) ** 2 + (yy - ly) ** 2) / (2 * (0.35 * w) ** 2))))[..., None]
    # vignetting: darker corners
    d2 = ((xx - w / 2) / (w / 2)) ** 2 + ((yy - h / 2) / (h / 2)) ** 2
    small *= (1 - rng.uniform(0, 0.25) * d2 / 2)[..., None]
    cup = None
    if view == "below":
        r = rng.uniform(0.28, 0.36) * h
        cx, cy = rng.uniform(r * 0.8, w - r * 0.8), rng.uniform(r * 0.8, h - r * 0.8)
        inside = np.clip((r - np.sqrt((xx - cx) ** 2 + (yy - cy) ** 2)) / 8 + 0.5, 0, 1)
        small *= (1.0 - inside * rng.uniform(0.2, 0.45))[..., None]
        cup = (float(cx), float(cy), float(r))
    bg = cv2.resize(small, (w, h), interpolation=cv2.INTER_LINEAR)
    if cup is not None:
        ring_colour = tuple(float(c) for c in rng.uniform(40, 200, 3))
        cv2.circle(bg, (int(cup[0]), int(cup[1])), int(cup[2]), ring_colour, max(3, int(cup[2] * 0.05)), cv2.LINE_AA)
    return bg, cup


def _overlaps(corners: np.ndarray, placed: list[np.ndarray], gap: float) -> bool:
    c = corners.astype(np.float32)
    centre = c.mean(0)
    grown = centre + (c - centre) * (1 + gap)
    for other in placed:
        area, _ = cv2.intersectConvexConvex(grown, other.astype(np.float32))
        if area > 0:
            return True
    return False


def layout_dice(n: int, rng: np.random.Generator, w: int, h: int, side: float, cup: tuple[float, float, float] | None,
                touching: float = 0.3, margin: float = 0.0) -> list[tuple[float, float, float]]:
    """Positions (cx, cy, angle) for ``n`` dice of ``side`` px, none overlapping, all inside the frame.

    Each die falls inside the cup's footprint or outside it at random; with
    probability ``touching`` a die is pushed against the previous one.
    """
    placed: list[np.ndarray] = []
    out: list[tuple[float, float, float]] = []
    edge = side * (0.75 + margin)
    for i in range(n):
        for _attempt in range(200):
            angle = float(rng.uniform(0, 90))
            if i > 0 and rng.random() < touching:
                px, py, pa = out[-1]
                theta = math.radians(pa + 90 * int(rng.integers(4)))
                d = side * rng.uniform(1.0, 1.1)
                shift = rng.uniform(-0.4, 0.4) * side
                cx = px + d * math.cos(theta) - shift * math.sin(theta)
                cy = py + d * math.sin(theta) + shift * math.cos(theta)
                angle = pa + float(rng.normal(0, 4))
            elif cup is not None and rng.random() < 0.6:
                rr = (cup[2] - side * 0.8) * math.sqrt(rng.random())
                t = rng.uniform(0, 2 * math.pi)
                cx, cy = cup[0] + rr * math.cos(t), cup[1] + rr * math.sin(t)
            else:
                cx, cy = rng.uniform(edge, w - edge), rng.uniform(edge, h - edge)
            if not (edge <= cx <= w - edge and edge <= cy <= h - edge):
                continue
            if cup is not None and abs(math.hypot(cx - cup[0], cy - cup[1]) - cup[2]) < side * 0.72 + max(3.0, cup[2] * 0.05) / 2:
                continue  # a die cannot lie under the cup's wall: it is inside the cup or outside it
            corners = cv2.boxPoints(((cx, cy), (side, side), angle))
            if _overlaps(corners, placed, 0.02):
                continue
            placed.append(corners)
            out.append((cx, cy, angle))
            break
        else:
            raise RuntimeError("could not place the dice without overlap; use a smaller die size")
    return out


def paste_die(frame: np.ndarray, die: PlacedDie, style: DieStyle, rng: np.random.Generator, mirrored: bool, shadow: bool) -> None:
    """Draw one die face into the float frame (in place), with a soft contact shadow when seen from above."""
    tex_size = int(max(16, round(die.side * 1.5)))
    tex = face_texture(die.seen, tex_size, style, rng, mirrored)
    # Texture corners -> frame corners (the texture's first corner maps to boxPoints' order).
    src = np.array([[0, tex_size], [0, 0], [tex_size, 0], [tex_size, tex_size]], np.float32)
    _paste_face(frame, tex, src, die.corners().astype(np.float32), die.side, shadow)


def paste_leaning_die(frame: np.ndarray, die: PlacedDie, style: DieStyle, rng: np.random.Generator, mirrored: bool,
                      tilt: float) -> None:
    """Draw a die leaning on the cup by ``tilt`` degrees, as the camera below sees it (in place): its
    face foreshortened along the die's first axis, and beside it the side face it leans towards, darker
    and foreshortened the other way. Together they lie centred on ``die``'s centre; the footprint is
    longer than a die by the factor cos(tilt) + sin(tilt)."""
    t = np.radians(tilt)
    a = np.radians(die.angle)
    u, v = np.float32([np.cos(a), np.sin(a)]), np.float32([-np.sin(a), np.cos(a)])
    s = die.side
    face_len, side_len = s * float(np.cos(t)), s * float(np.sin(t))
    corner = np.float32([die.cx, die.cy]) - u * (face_len + side_len) / 2 - v * s / 2
    tex_size = int(max(16, round(s * 1.5)))
    src = np.array([[0, 0], [tex_size, 0], [tex_size, tex_size], [0, tex_size]], np.float32)
    side_face = (face_len, side_len, int(rng.integers(1, 7)), rng.uniform(0.5, 0.8))  # in the shade of the die
    face = (0.0, face_len, die.seen, 1.0)
    for start, length, value, shade in (side_face, face):  # the face last: it covers their seam
        a0 = corner + u * start
        quad = np.float32([a0, a0 + u * length, a0 + u * length + v * s, a0 + v * s])
        tex = face_texture(value, tex_size, style, rng, mirrored) * shade
        _paste_face(frame, tex, src, quad, s, shadow=False)


def _paste_face(frame: np.ndarray, tex: np.ndarray, src: np.ndarray, dst: np.ndarray, side: float, shadow: bool) -> None:
    """Warp a face texture onto the frame quad ``dst`` (its corners ``src`` in the texture), with softly rounded
    edges, and a soft contact shadow under it when ``shadow``."""
    tex = cv2.GaussianBlur(tex, (0, 0), 0.6)
    m = cv2.getAffineTransform(src[:3], dst[:3])
    x, y = np.floor(dst.min(0)).astype(int)
    x1, y1 = np.ceil(dst.max(0)).astype(int)
    pad = int(side * 0.3) + 2
    h, w = frame.shape[:2]
    x0, y0, x1, y1 = max(0, x - pad), max(0, y - pad), min(w, x1 + pad), min(h, y1 + pad)
    if x1 <= x0 or y1 <= y0:
        return
    m[:, 2] -= (x0, y0)
    region = frame[y0:y1, x0:x1]
    if shadow:
        sh = np.zeros(region.shape[:2], np.float32)
        cv2.fillConvexPoly(sh, (dst - (x0, y0) + side * 0.08).astype(np.int32), 1.0)
        sh = cv2.GaussianBlur(sh, (0, 0), side * 0.08)
        region *= 1 - 0.45 * sh[..., None]
    size = tex.shape[0]
    warped = cv2.warpAffine(tex, m, (x1 - x0, y1 - y0), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_CONSTANT)
    alpha = cv2.warpAffine(np.ones((size, size), np.float32), m, (x1 - x0, y1 - y0), flags=cv2.INTER_LINEAR)
    # Slightly rounded corners of the silhouette.
    alpha = cv2.GaussianBlur(alpha, (0, 0), max(0.5, side * 0.02))
    alpha = np.clip((alpha - 0.5) * 2.2 + 0.5, 0, 1)[..., None]
    region[:] = region * (1 - alpha) + warped * alpha


def _glare(frame: np.ndarray, rng: np.random.Generator, count: int) -> None:
    """Reflections of the lights in the acrylic: soft bright ellipses."""
    h, w = frame.shape[:2]
    for _ in range(count):
        g = np.zeros((h // 4, w // 4), np.float32)
        centre = (int(rng.uniform(0, w // 4)), int(rng.uniform(0, h // 4)))
        axes = (int(rng.uniform(3, w // 40)), int(rng.uniform(2, h // 60)))
        cv2.ellipse(g, centre, axes, float(rng.uniform(0, 180)), 0, 360, 1.0, -1, cv2.LINE_AA)
        g = cv2.GaussianBlur(g, (0, 0), rng.uniform(1, 3))
        g = cv2.resize(g, (w, h), interpolation=cv2.INTER_LINEAR)
        frame += (rng.uniform(40, 110) * g)[..., None]


def finish(frame: np.ndarray, rng: np.random.Generator, blur: float | None = None, noise: float | None = None,
           jpeg_quality: int | None = None) -> np.ndarray:
    """Camera effects on a float frame: blur, sensor noise, JPEG loss -> BGR uint8."""
    blur = rng.uniform(0.0, 1.2) if blur is None else blur
    if blur > 0.25:
        frame = cv2.GaussianBlur(frame, (0, 0), blur)
    noise = rng.uniform(1.0, 6.0) if noise is None else noise
    if noise > 0:
        grain = np.empty_like(frame)
        cv2.setRNGSeed(int(rng.integers(2**31)))  # OpenCV's generator, seeded from ours: 10x faster than numpy's
        cv2.randn(grain, 0.0, float(noise))
        frame = cv2.add(frame, grain)
    out = cv2.convertScaleAbs(cv2.max(frame, 0.0))  # clip to 0..255 as uint8
    q = int(rng.integers(55, 96)) if jpeg_quality is None else jpeg_quality
    if q < 100:
        ok, buf = cv2.imencode(".jpg", out, [cv2.IMWRITE_JPEG_QUALITY, q])
        out = cv2.imdecode(buf, cv2.IMREAD_COLOR)
    return out


def render_table(seen: list[int], rng: np.random.Generator, *, width: int = 1280, height: int = 960, view: str = "below",
                 die_side: float | None = None, styles: list[DieStyle] | None = None, touching: float = 0.3,
                 glare: int | None = None, blur: float | None = None, noise: float | None = None,
                 jpeg_quality: int | None = None, leaning: float = 0.0, look: DieLook | None = None) -> tuple[np.ndarray, list[PlacedDie]]:
    """A camera frame of dice showing the faces ``seen`` to the camera, and where each die lies.

    ``view="below"``: through the acrylic tray (faces mirrored, no shadows, the
    room and the cup's footprint behind). ``view="above"``: on the tray's floor,
    with contact shadows. ``die_side`` defaults to the boxed game's 16 mm dice
    for a 1280-wide frame of the tray (about 64 px), scaled with ``width``.
    ``leaning``: the first die leans on the cup by this many degrees
    (``paste_leaning_die``; RULES.md R14: the referee must not trust it).
    ``look``: every die of that kind (``LOOKS``) instead of the game's; ``styles`` still wins.
    The default draws the game's dice exactly as before (the same frame for the same seed).
    """
    frame, dice, _ = _draw_table(seen, rng, width, height, view, die_side, styles, touching, glare, blur, noise, jpeg_quality, leaning, look)
    return frame, dice


def from_farther(frame: np.ndarray, placed: list[PlacedDie], die_px: float, width: int, height: int) -> tuple[np.ndarray, list[PlacedDie]]:
    """A rendered ``frame`` (colour or grey) shrunk so its dice are ``die_px`` wide, centred in a ``width``×``height``
    frame with its edges stretched out around it: the same table seen from farther away, or by a camera with many
    more pixels. And where its dice ``placed`` now lie.

    >>> frame, placed = render_table([2, 5], np.random.default_rng(0), touching=0.0)
    >>> far, moved = from_farther(frame, placed, 16, 1280, 960)
    >>> far.shape, round(moved[0].side), moved[0].seen == placed[0].seen
    ((960, 1280, 3), 16, True)
    """
    f = die_px / placed[0].side
    small = cv2.resize(frame, None, fx=f, fy=f, interpolation=cv2.INTER_AREA)
    h, w = small.shape[:2]
    top, left = (height - h) // 2, (width - w) // 2
    out = cv2.copyMakeBorder(small, top, height - h - top, left, width - w - left, cv2.BORDER_REPLICATE)
    return out, [replace(d, cx=d.cx * f + left, cy=d.cy * f + top, side=d.side * f) for d in placed]


def render_calibrated_table(seen: list[int], rng: np.random.Generator, **kwargs) -> tuple[np.ndarray, list[PlacedDie], np.ndarray]:
    """``render_table``'s frame and dice (the same for the same seed), and the empty tray as ``calibrate`` photographs it.

    The empty tray is the same room, tray and glare without the dice, with its own sensor noise: what
    a tray-mode reader compares each proposal with (``reconcile.tray_change``). It is drawn from a copy
    of ``rng``, so the frames after it are the same as without it.
    """
    keys = ("width", "height", "view", "die_side", "styles", "touching", "glare", "blur", "noise", "jpeg_quality", "leaning", "look")
    defaults = dict(width=1280, height=960, view="below", die_side=None, styles=None, touching=0.3, glare=None, blur=None, noise=None,
                    jpeg_quality=None, leaning=0.0, look=None)
    unknown = set(kwargs) - set(keys)
    if unknown:
        raise TypeError(f"render_calibrated_table() got unexpected arguments {sorted(unknown)}")
    args = {**defaults, **kwargs}
    frame, dice, empty = _draw_table(seen, rng, *(args[k] for k in keys), keep_empty=True)
    return frame, dice, empty


def _draw_table(seen, rng, width, height, view, die_side, styles, touching, glare, blur, noise, jpeg_quality, leaning, look,
                keep_empty: bool = False) -> tuple[np.ndarray, list[PlacedDie], np.ndarray | None]:
    side = die_side if die_side is not None else width / 1280 * rng.uniform(56, 72)
    frame, cup = _background(rng, width, height, view)
    empty = frame.copy() if keep_empty else None
    positions = layout_dice(len(seen), rng, width, height, side, cup, touching)
    dice: list[PlacedDie] = []
    for i, (value, (cx, cy, angle)) in enumerate(zip(seen, positions)):
        die = PlacedDie(int(value), float(cx), float(cy), float(side * rng.uniform(0.98, 1.02)), float(angle % 90))
        style = styles[i] if styles else look.die(rng) if look is not None else DieStyle.game(rng)
        if i == 0 and leaning:
            paste_leaning_die(frame, die, style, rng, mirrored=view == "below", tilt=leaning)
        else:
            paste_die(frame, die, style, rng, mirrored=view == "below", shadow=view == "above")
        dice.append(die)
    glares = int(rng.integers(0, 3)) if glare is None else glare
    if empty is not None:
        _glare(empty, copy.deepcopy(rng), glares)  # the same draws: the same glare where the frame has it
    _glare(frame, rng, glares)
    blur = rng.uniform(0.0, 1.2) if blur is None else blur  # drawn here as finish() draws them, to share with the empty tray
    noise = rng.uniform(1.0, 6.0) if noise is None else noise
    twin = copy.deepcopy(rng) if empty is not None else None
    out = finish(frame, rng, blur, noise, jpeg_quality)
    if empty is None or twin is None:
        return out, dice, None
    twin.random()  # the same camera, its own sensor noise
    return out, dice, finish(empty, twin, blur, noise, jpeg_quality)


def render_chessboard(width: int = 1280, height: int = 960, squares: tuple[int, int] = (10, 7), fill: float = 0.85,
                      turn_deg: float = 0.0, curl: float = 0.0) -> np.ndarray:
    """A printed chessboard of ``squares`` (across, down) lying on the tray, seen square on from below, filling ``fill``
    of the frame's height (white paper round it, the room's grey beyond): what ``calibrate --lens`` photographs.
    ``turn_deg`` turns it on the tray; ``curl`` lifts its right half towards the camera, so its squares there grow
    towards the frame's right edge up to ``1 + curl`` times (a board not lying flat, which no lens's bend explains).
    Bend it with ``vision.pipeline.lens.bend_frame`` for a wide lens's view."""
    across, down = squares
    square = int(fill * height / (down + 1))
    board = np.full(((down + 1) * square, (across + 1) * square, 3), 245, np.uint8)
    for row in range(down):
        for col in range(across):
            if (row + col) % 2 == 0:
                y, x = square // 2 + row * square, square // 2 + col * square
                board[y:y + square, x:x + square] = 20
    frame = np.full((height, width, 3), 150, np.uint8)
    turn = cv2.getRotationMatrix2D((board.shape[1] / 2, board.shape[0] / 2), turn_deg, 1.0)
    turn[:, 2] += (width - board.shape[1]) / 2, (height - board.shape[0]) / 2
    flat = cv2.warpAffine(board, turn, (width, height), dst=frame, borderMode=cv2.BORDER_TRANSPARENT)
    if not curl:
        return flat
    xs, ys = np.meshgrid(np.arange(width, dtype=np.float32), np.arange(height, dtype=np.float32))
    grow = 1.0 + curl * np.clip((xs - width / 2) / (width / 2), 0, 1) ** 2
    return cv2.remap(flat, (width / 2 + (xs - width / 2) / grow).astype(np.float32),
                     (height / 2 + (ys - height / 2) / grow).astype(np.float32), cv2.INTER_LINEAR)
