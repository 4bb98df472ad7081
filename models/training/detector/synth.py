"""Rendered training frames for the detector: the project's renderer (``vision.simtable``) in a much wider world.

The simulated table alone is one camera, one tray and one kind of die; a detector trained on it learns
that tray. Here every frame draws, from one ``numpy.random.Generator`` (a seed gives the frame again):

* a scene: the renderer's own tray from below or above, or any backdrop (noise, gradients, felt,
  wood, grid paper, stripes), or small grey cup-like frames with one or two big dice (alone or several
  side by side, as a row of cup photos);
* a transparent tray over it: reflections, scratches, dust;
* 0 to 25 dice, 3 % to 70 % of the frame's width, of many looks (the game's, light or dark bodies, dark,
  light or coloured marks, pips drilled and lit from one side, rounded corners, a side face showing),
  and real dice cut from the real sets' train splits (``real.DieCrops``), whose angle is not known;
* hard negatives that are not dice: hands at the edge, coins, pawns and other pieces, cards and blank
  squares, rims;
* camera effects: light, blur, noise, JPEG, and a grey conversion with random channel weights.

Output is grey uint8 at network scale (long side ``NET_SIDE``), with labels in ``labels`` rows.
"""

from __future__ import annotations

import math

import cv2
import numpy as np

from models.training.detector import labels as L
from vision.detector_learned import NET_SIDE
from vision.simtable import LUMA, DieStyle, PlacedDie, _background, bgr, face_texture, finish, layout_dice

DARK_FACES = [(25, 25, 25), (60, 60, 60), (40, 20, 15), (20, 40, 15), (70, 25, 20), (20, 25, 70)]
COLOURED_MARKS = [(40, 40, 210), (200, 90, 30), (40, 170, 40), (40, 190, 230), (200, 60, 200)]


def die_style(rng: np.random.Generator) -> DieStyle:
    """Any die look: the game's, the renderer's random ones, dark with coloured marks, white with black
    pips, translucent-looking mid tones; pips sometimes drilled."""
    r = rng.random()
    if r < 0.2:
        style = DieStyle.game(rng)
    elif r < 0.55:
        style = DieStyle.random(rng)
    elif r < 0.7:
        face = np.array(DARK_FACES[rng.integers(len(DARK_FACES))], float) + rng.normal(0, 10, 3)
        mark = np.array(COLOURED_MARKS[rng.integers(len(COLOURED_MARKS))], float) * rng.uniform(0.7, 1.1)
        style = DieStyle(bgr(face), bgr(mark), "pip", float(rng.uniform(0.8, 1.5)))
    elif r < 0.88:
        face = rng.uniform(200, 250) * rng.uniform(0.93, 1.05, 3)
        style = DieStyle(bgr(face), bgr(rng.uniform(0, 60, 3)), "pip", float(rng.uniform(0.8, 1.4)))
    else:
        face = rng.uniform(60, 200, 3)
        mark = 255 - face + rng.normal(0, 30, 3)
        style = DieStyle(bgr(face), bgr(mark), "pip" if rng.random() < 0.7 else "elephant", float(rng.uniform(0.7, 1.3)))
    if style.marks == "pip" and rng.random() < 0.3:
        style = DieStyle(style.face, style.mark, "pip", style.mark_scale, drilled=True)
    return style


def _rounded_alpha(size: int, radius: float) -> np.ndarray:
    a = np.zeros((size, size), np.uint8)
    r = int(max(0, min(size // 2 - 1, radius)))
    if r == 0:
        a[:] = 255
    else:
        cv2.rectangle(a, (r, 0), (size - 1 - r, size - 1), 255, -1)
        cv2.rectangle(a, (0, r), (size - 1, size - 1 - r), 255, -1)
        for x, y in ((r, r), (size - 1 - r, r), (r, size - 1 - r), (size - 1 - r, size - 1 - r)):
            cv2.circle(a, (x, y), r, 255, -1, cv2.LINE_AA)
    return a.astype(np.float32) / 255.0


def _warp_into(frame: np.ndarray, tex: np.ndarray, alpha: np.ndarray, dst: np.ndarray) -> None:
    """Warp a square texture (and its alpha) onto the frame quad ``dst`` (4×2, the texture's corners
    (0,0), (s,0), (s,s), (0,s) in order), in place, only over the quad's bounding region."""
    s = tex.shape[0]
    src = np.float32([[0, 0], [s, 0], [s, s], [0, s]])
    h, w = frame.shape[:2]
    x0, y0 = np.floor(dst.min(0)).astype(int) - 2
    x1, y1 = np.ceil(dst.max(0)).astype(int) + 2
    x0, y0, x1, y1 = max(0, x0), max(0, y0), min(w, x1), min(h, y1)
    if x1 <= x0 or y1 <= y0:
        return
    m = cv2.getPerspectiveTransform(src, (dst - (x0, y0)).astype(np.float32))
    size = (x1 - x0, y1 - y0)
    warped = cv2.warpPerspective(tex, m, size, flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_CONSTANT)
    a = cv2.warpPerspective(alpha, m, size, flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_CONSTANT)
    if warped.ndim == 3:
        a = a[..., None]
    region = frame[y0:y1, x0:x1]
    region[:] = region * (1 - a) + warped * a


def _square(cx: float, cy: float, side: float, angle: float) -> np.ndarray:
    """The square's corners in the texture's order (top-left, top-right, bottom-right, bottom-left)."""
    a = math.radians(angle)
    u = np.float32([math.cos(a), math.sin(a)]) * side / 2
    v = np.float32([-math.sin(a), math.cos(a)]) * side / 2
    c = np.float32([cx, cy])
    return np.float32([c - u - v, c + u - v, c + u + v, c - u + v])


def paste_die(frame: np.ndarray, die: PlacedDie, style: DieStyle, rng: np.random.Generator, mirrored: bool) -> None:
    """One die: sometimes a contact shadow, sometimes a side face showing (a die seen a little from the
    side), then its face with corners rounded by a random radius."""
    s = die.side
    tex_size = int(max(12, min(160, round(s * 1.3))))
    radius = tex_size * rng.uniform(0.0, 0.22)
    alpha = cv2.GaussianBlur(_rounded_alpha(tex_size, radius), (0, 0), max(0.5, tex_size * 0.012))
    quad = _square(die.cx, die.cy, s, die.angle)
    if rng.random() < 0.3:  # contact shadow
        off = rng.normal(0, 0.08, 2) * s
        shadow = np.zeros((tex_size, tex_size, 3), np.float32)
        region_alpha = cv2.GaussianBlur(alpha, (0, 0), tex_size * 0.08) * rng.uniform(0.2, 0.5)
        _warp_into(frame, shadow, region_alpha, quad * 1.0 + off.astype(np.float32))
    if rng.random() < 0.25:  # a side face below the top face
        k = int(rng.integers(4))
        a, b = quad[k], quad[(k + 1) % 4]
        normal = (a + b) / 2 - np.float32([die.cx, die.cy])
        normal /= max(1e-6, float(np.hypot(*normal)))
        depth = s * rng.uniform(0.1, 0.4)
        skew = (b - a) * rng.uniform(-0.15, 0.15)
        side_quad = np.float32([a, b, b + normal * depth + skew, a + normal * depth + skew])
        tex = face_texture(int(rng.integers(1, 7)), tex_size, style, rng) * rng.uniform(0.45, 0.85)
        _warp_into(frame, tex, np.ones((tex_size, tex_size), np.float32), side_quad)
    tex = face_texture(die.seen, tex_size, style, rng, mirrored)
    tex = cv2.GaussianBlur(tex, (0, 0), 0.5)
    _warp_into(frame, tex, alpha, quad)


# --- backdrops -------------------------------------------------------------------------------------

def _smooth_noise(rng: np.random.Generator, h: int, w: int, cells: int) -> np.ndarray:
    g = rng.normal(0, 1, (max(2, cells * h // max(h, w)), max(2, cells * w // max(h, w)))).astype(np.float32)
    return cv2.resize(g, (w, h), interpolation=cv2.INTER_CUBIC)


def backdrop(rng: np.random.Generator, h: int, w: int) -> np.ndarray:
    """Any surface behind the dice, float32 BGR."""
    kind = rng.choice(["flat", "gradient", "noise", "felt", "wood", "grid", "stripes", "blotches"])
    base = rng.uniform(15, 240) * rng.uniform(0.85, 1.15, 3)
    if rng.random() < 0.3:
        hsv = np.uint8([[[rng.integers(0, 180), rng.integers(60, 230), rng.integers(40, 230)]]])
        base = cv2.cvtColor(hsv, cv2.COLOR_HSV2BGR)[0, 0].astype(np.float64)
    img = np.empty((h, w, 3), np.float32)
    img[:] = base
    if kind == "gradient":
        yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
        t = math.radians(rng.uniform(0, 360))
        ramp = (xx * math.cos(t) + yy * math.sin(t)) / max(h, w)
        img += (ramp * rng.uniform(-120, 120))[..., None]
    elif kind == "noise":
        img += (rng.normal(0, rng.uniform(5, 40), (h, w)).astype(np.float32))[..., None]
    elif kind == "felt":
        img += (_smooth_noise(rng, h, w, int(rng.integers(20, 80))) * rng.uniform(4, 15))[..., None]
        img += rng.normal(0, rng.uniform(2, 8), (h, w, 1)).astype(np.float32)
    elif kind == "wood":
        yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
        warp = _smooth_noise(rng, h, w, 6) * rng.uniform(5, 30)
        period = rng.uniform(4, 30)
        grain = np.sin((yy + warp) / period * 2 * math.pi) + 0.5 * np.sin((yy + warp * 1.7) / (period * 0.37))
        if rng.random() < 0.5:
            grain = grain.T if h == w else np.sin((xx + warp) / period * 2 * math.pi)
        img += (grain * rng.uniform(5, 30))[..., None]
    elif kind == "grid":
        step = int(rng.integers(6, 40))
        line = rng.uniform(-80, 80)
        img[::step, :] += line
        img[:, ::step] += line
    elif kind == "stripes":
        yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
        t = math.radians(rng.uniform(0, 180))
        img += (np.sign(np.sin((xx * math.cos(t) + yy * math.sin(t)) / rng.uniform(5, 60))) * rng.uniform(10, 60))[..., None]
    elif kind == "blotches":
        img += (_smooth_noise(rng, h, w, int(rng.integers(3, 12))) * rng.uniform(15, 60))[..., None]
    return img


def cup_frame(rng: np.random.Generator, h: int, w: int) -> np.ndarray:
    """A small grey photo into a cup: a light or dark floor, a soft wall darker or lighter towards the edge."""
    floor = rng.uniform(60, 230)
    img = np.empty((h, w, 3), np.float32)
    img[:] = floor * rng.uniform(0.95, 1.05, 3)
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    cx, cy = w / 2 + rng.normal(0, w * 0.08), h / 2 + rng.normal(0, h * 0.08)
    r = math.hypot(w, h) / 2 * rng.uniform(0.55, 1.0)
    d = np.sqrt((xx - cx) ** 2 + (yy - cy) ** 2) / r
    wall = np.clip((d - rng.uniform(0.6, 0.9)) * rng.uniform(2, 6), 0, 1)
    img += (wall * rng.uniform(-120, 60))[..., None]
    if rng.random() < 0.5:
        img += (_smooth_noise(rng, h, w, 8) * rng.uniform(2, 12))[..., None]
    return img


# --- the transparent tray ----------------------------------------------------------------------

def tray_effects(frame: np.ndarray, rng: np.random.Generator) -> None:
    """Acrylic between camera and scene: reflections (soft streaks and spots), scratches, dust."""
    h, w = frame.shape[:2]
    for _ in range(int(rng.integers(1, 4)) if rng.random() < 0.4 else 0):  # reflections of lights: soft bright ellipses
        g = np.zeros((h, w), np.float32)
        axes = (int(rng.uniform(2, max(3, w / 8))), int(rng.uniform(1, max(2, h / 14))))
        cv2.ellipse(g, (int(rng.uniform(0, w)), int(rng.uniform(0, h))), axes, float(rng.uniform(0, 180)), 0, 360, 1.0, -1, cv2.LINE_AA)
        g = cv2.GaussianBlur(g, (0, 0), rng.uniform(1, max(1.5, w / 60)))
        frame += (g * rng.uniform(40, 130))[..., None]
    if rng.random() < 0.3:  # a long soft reflection band
        band = np.zeros((h, w), np.float32)
        p = rng.uniform(0, 1, 2) * (w, h)
        t = rng.uniform(0, math.pi)
        d = np.float32([math.cos(t), math.sin(t)]) * max(h, w)
        cv2.line(band, tuple(int(v) for v in p - d), tuple(int(v) for v in p + d), 1.0, int(rng.integers(2, max(3, w // 8))))
        band = cv2.GaussianBlur(band, (0, 0), rng.uniform(2, max(3, w / 30)))
        frame += (band * rng.uniform(20, 90))[..., None]
    if rng.random() < 0.4:  # scratches: thin light or dark arcs
        layer = np.zeros((h, w), np.float32)
        for _ in range(int(rng.integers(1, 12))):
            p0 = rng.uniform(0, 1, 2) * (w, h)
            p1 = p0 + rng.normal(0, 0.2, 2) * max(w, h)
            cv2.line(layer, tuple(int(v) for v in p0), tuple(int(v) for v in p1), float(rng.uniform(0.3, 1)), 1, cv2.LINE_AA)
        frame += (layer * rng.uniform(-60, 90))[..., None]
    if rng.random() < 0.3:  # dust specks
        n = int(rng.integers(5, 60))
        for x, y in zip(rng.integers(0, w, n), rng.integers(0, h, n)):
            cv2.circle(frame, (int(x), int(y)), int(rng.integers(1, 3)), tuple(float(v) for v in rng.uniform(0, 255) * np.ones(3)), -1)


# --- hard negatives -------------------------------------------------------------------------------

def _free(cx: float, cy: float, r: float, dice: list[tuple[float, float, float]]) -> bool:
    return all(math.hypot(cx - x, cy - y) > r + s * 0.75 for x, y, s in dice)


def distractors(frame: np.ndarray, rng: np.random.Generator, dice: list[tuple[float, float, float]], scale: float) -> None:
    """Things that are not dice, kept off the dice: hands at the edge, coins, pawns, cards and blank squares, rims."""
    h, w = frame.shape[:2]
    n = int(rng.integers(1, 5))
    for _ in range(n):
        kind = rng.choice(["hand", "coin", "pawn", "card", "blank", "rim", "blob"])
        size = scale * rng.uniform(0.6, 2.5)
        colour = tuple(float(v) for v in rng.uniform(20, 240, 3))
        if kind == "hand":  # a hand reaching in from an edge: a palm and fingers, skin or glove
            edge = int(rng.integers(4))
            t = rng.uniform(0.1, 0.9)
            px, py = [(t * w, 0), (w, t * h), (t * w, h), (0, t * h)][edge]
            inward = [(0, 1), (-1, 0), (0, -1), (1, 0)][edge]
            skin = np.array([rng.uniform(90, 200), rng.uniform(110, 210), rng.uniform(150, 240)]) * rng.uniform(0.5, 1.1)
            palm = size * rng.uniform(1.5, 3)
            cx, cy = px + inward[0] * palm * 0.3, py + inward[1] * palm * 0.3
            layer = frame.copy()
            cv2.ellipse(layer, (int(cx), int(cy)), (int(palm * 0.6), int(palm * 0.5)), float(rng.uniform(0, 180)), 0, 360, tuple(skin.tolist()), -1, cv2.LINE_AA)
            for k in range(int(rng.integers(2, 6))):
                a = math.atan2(inward[1], inward[0]) + rng.uniform(-0.7, 0.7)
                tip = (cx + math.cos(a) * palm * rng.uniform(0.8, 1.4), cy + math.sin(a) * palm * rng.uniform(0.8, 1.4))
                cv2.line(layer, (int(cx), int(cy)), (int(tip[0]), int(tip[1])), tuple((skin * rng.uniform(0.9, 1.05)).tolist()), max(2, int(palm * 0.18)), cv2.LINE_AA)
            layer = cv2.GaussianBlur(layer, (0, 0), rng.uniform(0.5, 2.5))
            frame[:] = layer
            continue
        cx, cy = rng.uniform(0, w), rng.uniform(0, h)
        if not _free(cx, cy, size * 0.8, dice):
            continue
        if kind == "coin":
            r = int(size * 0.5)
            cv2.circle(frame, (int(cx), int(cy)), r, colour, -1, cv2.LINE_AA)
            cv2.circle(frame, (int(cx), int(cy)), max(1, int(r * 0.85)), tuple(c * 0.8 for c in colour), max(1, r // 10), cv2.LINE_AA)
            for _ in range(int(rng.integers(0, 6))):  # embossing
                q = (int(cx + rng.normal(0, r * 0.3)), int(cy + rng.normal(0, r * 0.3)))
                cv2.circle(frame, q, max(1, int(r * rng.uniform(0.05, 0.2))), tuple(c * 0.7 for c in colour), -1)
        elif kind == "pawn":
            cv2.circle(frame, (int(cx), int(cy)), int(size * 0.45), colour, -1, cv2.LINE_AA)
            cv2.circle(frame, (int(cx), int(cy)), int(size * 0.22), tuple(c * 1.2 for c in colour), -1, cv2.LINE_AA)
        elif kind in ("card", "blank"):
            aspect = rng.uniform(1.3, 3.0) if kind == "card" else rng.uniform(0.9, 1.1)
            box = ((cx, cy), (size * aspect, size), float(rng.uniform(0, 180)))
            pts = cv2.boxPoints(box).astype(np.int32)
            cv2.fillConvexPoly(frame, pts, colour, cv2.LINE_AA)
            if kind == "card" and rng.random() < 0.6:  # print on the card
                for _ in range(int(rng.integers(1, 5))):
                    q = (int(cx + rng.normal(0, size * 0.3)), int(cy + rng.normal(0, size * 0.2)))
                    cv2.line(frame, q, (q[0] + int(size * 0.4), q[1]), tuple(255 - c for c in colour), max(1, int(size * 0.05)))
        elif kind == "rim":
            r = size * rng.uniform(2, 6)
            cv2.ellipse(frame, (int(cx), int(cy)), (int(r), int(r)), 0, float(rng.uniform(0, 360)), float(rng.uniform(60, 300)), colour, max(2, int(size * 0.15)), cv2.LINE_AA)
        else:  # an irregular blob (a crumb, a shadow, a sticker)
            pts = np.array([(cx + math.cos(t) * size * rng.uniform(0.2, 0.6), cy + math.sin(t) * size * rng.uniform(0.2, 0.6))
                            for t in np.linspace(0, 2 * math.pi, 9)[:-1]], np.int32)
            cv2.fillPoly(frame, [pts], colour, cv2.LINE_AA)


# --- a whole frame ---------------------------------------------------------------------------------

def _count(rng: np.random.Generator) -> int:
    r = rng.random()
    if r < 0.1:
        return 0
    if r < 0.5:
        return int(rng.integers(1, 4))
    if r < 0.8:
        return int(rng.integers(4, 11))
    return int(rng.integers(11, 26))


def _place(rng: np.random.Generator, n: int, w: int, h: int, side: float, cup,
           touching: tuple[float, float] = (0.0, 0.5)) -> list[tuple[float, float, float]]:
    """Positions for up to ``n`` dice of ``side``: fewer when they do not fit."""
    while n > 0:
        try:
            return layout_dice(n, rng, w, h, side, cup, touching=float(rng.uniform(*touching)))
        except (RuntimeError, ValueError):
            n = n // 2 if n > 3 else n - 1
    return []


def _grey(frame_bgr: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """A camera's grey: random channel weights (a grey sensor, an IR-cut-less one, a colour one converted)."""
    wts = rng.dirichlet((2, 4, 3)) if rng.random() < 0.6 else LUMA
    g = frame_bgr.astype(np.float32) @ wts.astype(np.float32)
    return np.clip(g, 0, 255).astype(np.uint8)


def _light(frame: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Exposure and contrast of the whole frame, sometimes a gamma."""
    frame = frame * rng.uniform(0.5, 1.3) + rng.uniform(-30, 30)
    if rng.random() < 0.3:
        frame = 255.0 * (np.clip(frame, 0, 255) / 255.0) ** rng.uniform(0.6, 1.6)
    return frame.astype(np.float32)


def _scene_dims(rng: np.random.Generator, kind: str) -> tuple[int, int]:
    if kind == "cups":
        return 0, 0  # decided by the cup frames
    long = int(rng.integers(256, 641))
    aspect = rng.choice([1.0, 4 / 3, 16 / 9, 3 / 2, 2.0, 1.0])
    short = max(64, int(long / aspect))
    return (long, short) if rng.random() < 0.8 else (short, long)


#: Cluster frames: dice this many network pixels wide, where two touching dice's gap is a pixel or two.
CLUSTER_SIDES = (10.0, 40.0)


def render(rng: np.random.Generator, crops=None, clusters: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """One training frame: grey uint8 at network scale (long side ``NET_SIDE``) and its dice (``labels``).

    ``clusters``: a tray or backdrop frame of 2-8 small dice mostly pushed against each other, the
    case where the network boxes two or three touching dice as one.
    """
    kind = rng.choice(["renderer", "backdrop"], p=[0.6, 0.4]) if clusters else rng.choice(["renderer", "backdrop", "cups"], p=[0.3, 0.45, 0.25])
    if kind == "cups":
        frame, rows = _cups(rng, crops)
    else:
        w, h = _scene_dims(rng, kind)
        cup = None
        if kind == "renderer":
            w, h = max(w, h), min(w, h)  # the renderer draws landscape frames (its cup is sized by the height)
            view = "below" if rng.random() < 0.7 else "above"
            frame, cup = _background(rng, w, h, view)
            if cup is not None and rng.random() < 0.5:
                cup = None  # dice anywhere, the rim still drawn
        else:
            frame = backdrop(rng, h, w)
        if clusters:
            n = int(rng.integers(2, 9))
            side = max(w, h) / NET_SIDE * math.exp(rng.uniform(*np.log(CLUSTER_SIDES)))
            touching = (0.6, 0.95)
        else:
            n = _count(rng)
            # Die size as a share of the frame's width, log-uniform; many dice must be smaller to fit.
            top = 0.7 if n <= 1 else (0.4 if n <= 3 else (0.2 if n <= 10 else 0.12))
            side = w * math.exp(rng.uniform(math.log(0.03), math.log(top)))
            touching = (0.0, 0.5)
        side = min(side, min(w, h) / 1.55)  # a turned die's corners stay in the frame
        positions = _place(rng, n, w, h, side, cup, touching)
        mirrored = bool(rng.random() < 0.5)
        placed = [(cx, cy, side) for cx, cy, _ in positions]
        if rng.random() < 0.5:
            distractors(frame, rng, placed, side)
        rows = []
        same_style = die_style(rng) if rng.random() < 0.4 else None
        for cx, cy, angle in positions:
            s = side * rng.uniform(0.94, 1.06)
            if crops is not None and rng.random() < 0.2:
                rows.append(crops.paste(frame, rng, cx, cy, s))
                continue
            die = PlacedDie(int(rng.integers(1, 7)), float(cx), float(cy), float(s), float(angle % 90))
            paste_die(frame, die, same_style or die_style(rng), rng, mirrored)
            rows.append(L.exact_row(die.cx, die.cy, die.side, die.angle))
        tray_effects(frame, rng)
        if rng.random() < 0.2:
            distractors(frame, rng, placed, side)  # some in front of the tray's reflections too
    frame = _light(frame, rng)
    h, w = frame.shape[:2]
    scale = NET_SIDE / max(h, w)
    blur = float(rng.uniform(0, 1.5) / max(scale, 0.25)) if rng.random() < 0.6 else 0.0
    out = finish(frame, rng, blur=blur, noise=float(rng.uniform(0, 8)), jpeg_quality=int(rng.integers(40, 101)))
    grey = _grey(out, rng)
    nw, nh = max(1, round(w * scale)), max(1, round(h * scale))
    small = cv2.resize(grey, (nw, nh), interpolation=cv2.INTER_AREA if scale < 1 else cv2.INTER_LINEAR)
    dice = L.as_array(rows)
    if len(dice):
        dice[:, [0, 2, 4]] *= nw / w
        dice[:, [1, 3]] *= nh / h
        dice[:, 4] = np.where(dice[:, 6] > 0, dice[:, 4], np.minimum(dice[:, 2], dice[:, 3]))
    return small, dice


def _cups(rng: np.random.Generator, crops) -> tuple[np.ndarray, list[list[float]]]:
    """One to four small grey cup photos side by side, each with one or two big dice (30-70 % of its width)."""
    k = int(rng.choice([1, 1, 2, 3, 3, 4]))
    size = int(rng.integers(96, 257))
    frames, rows = [], []
    for i in range(k):
        f = cup_frame(rng, size, size)
        n = 1 if rng.random() < 0.75 else int(rng.choice([0, 2]))
        top = 0.64 if n == 1 else 0.4
        side = size * rng.uniform(0.3, top)
        positions = _place(rng, n, size, size, side, None)
        style = die_style(rng) if rng.random() < 0.5 else DieStyle(bgr(rng.uniform(200, 250) * np.ones(3)), bgr(rng.uniform(0, 70) * np.ones(3)), "pip", float(rng.uniform(0.8, 1.3)))
        for cx, cy, angle in positions:
            if crops is not None and rng.random() < 0.4:
                r = crops.paste(f, rng, cx, cy, side)
            else:
                die = PlacedDie(int(rng.integers(1, 7)), float(cx), float(cy), float(side), float(angle % 90))
                paste_die(f, die, style, rng, bool(rng.random() < 0.5))
                r = L.exact_row(die.cx, die.cy, die.side, die.angle)
            r[0] += i * size
            rows.append(r)
        if rng.random() < 0.3:
            tray_effects(f, rng)
        frames.append(f)
    return np.concatenate(frames, axis=1), rows
