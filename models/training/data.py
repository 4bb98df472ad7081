"""Training crops for the face classifier: synthetic faces, rendered frames and real photos.

Every crop is cut with ``vision.classifier.cut_crop``, the function the reader
uses, so training sees what reading sees. Class 0 is "not a die": blobs the
finder proposes that match no die (glare, the cup's rim, halves of dice).

Only the ``train`` split of the real photos is read here; ``test`` is for the
model card and ``bench``.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import cv2
import numpy as np

from models.training.tables import other_table
from vision.classifier import CROP, cut_crop
from vision.dataset import dataset_dir as shared_dataset_dir
from vision.dataset import photo
from vision.finder import find_dice
from vision.simtable import LUMA, SHAPED_MARKS, DieStyle, PlacedDie, bgr, draw_shaped_mark, face_texture, finish, paste_die, render_table

def dataset_dir() -> Path:
    root = shared_dataset_dir()
    if root is None:
        raise FileNotFoundError("the real-dice-byler dataset is not found next to the repository")
    return root


def _match(cands, dice: list[tuple[int, float, float, float]]) -> list[int | None]:
    """For each candidate: the index of the die it sits on (centre near, size alike), None when it
    is on no die (a true "not a die"), or -1 when ambiguous (near a die but not cut like one): skipped."""
    out: list[int | None] = []
    for c in cands:
        best = None
        near = False
        for j, (_, x, y, s) in enumerate(dice):
            d = np.hypot(c.cx - x, c.cy - y)
            near = near or d < 0.75 * s
            if d < 0.3 * s and 0.6 < max(c.w, c.h) / s < 1.5 and (best is None or d < best[0]):
                best = (d, j)
        out.append(best[1] if best else (-1 if near else None))
    return out


def real_crops(names: list[str], rng: np.random.Generator, reps: int) -> tuple[np.ndarray, np.ndarray]:
    """Jittered, rotated crops around each labelled die, plus the finder's own blobs (dice and not);
    for a share of the photos (``OTHER_TABLE_SHARE``) also the same dice on another table (``other_table``)."""
    root = dataset_dir()
    xs, ys = [], []
    for name in names:
        img, labels = photo(root, name)
        tables = [(img, reps, TRAY_CROPS)]
        if OTHER_TABLE_SHARE and rng.random() < OTHER_TABLE_SHARE:
            tables.append((other_table(img, labels, rng), max(1, reps // 2), TRAY_CROPS // 2))
        for table, n, plain_n in tables:
            for value, cx, cy, bw, bh in labels:
                for _ in range(n):
                    side = max(bw, bh) * rng.uniform(0.72, 1.08)
                    jx, jy = rng.normal(0, 0.06 * side, 2)
                    xs.append(cut_crop(table, cx + jx, cy + jy, side, rng.uniform(0, 360)))
                    ys.append(value)
            plain = tray_crops(table, labels, rng, plain_n)
            xs += plain
            ys += [0] * len(plain)
        cands = find_dice(img)
        dice = [(v, cx, cy, max(bw, bh)) for v, cx, cy, bw, bh in labels]
        for c, j in zip(cands, _match(cands, dice)):
            if j == -1:
                continue
            for _ in range(2):
                angle = c.angle + 90 * int(rng.integers(4)) + rng.normal(0, 3)
                xs.append(cut_crop(img, c.cx, c.cy, max(c.w, c.h), angle))
                ys.append(0 if j is None else dice[j][0])
    return np.array(xs, np.uint8), np.array(ys, np.int64)


#: Plain patches of a photo's tray (no die in them) cut per photo, as "not a die".
TRAY_CROPS = 6
#: The share of training photos also shown on another table (``models.training.tables``), at half the crops.
#: 0.5 was tried (``25a3822c5e8a``, model card): 2 more of 492 held-out dice right on other tables, 3 fewer of
#: 123 as photographed, so not shipped; at 0 no random draw is spent, and the data is drawn as for the shipped model.
OTHER_TABLE_SHARE = 0.0


def tray_crops(img: np.ndarray, labels, rng: np.random.Generator, n: int) -> list[np.ndarray]:
    """Up to ``n`` crops of the photo's own tray, well away from every labelled die, each the size of one of
    its dice: with grain added in training, a flat patch must read "not a die" (it read as a six)."""
    h, w = img.shape[:2]
    sides = [max(bw, bh) for _, _, _, bw, bh in labels] or [min(h, w) / 10]
    out: list[np.ndarray] = []
    for _ in range(40 * n):
        if len(out) == n:
            break
        side = float(rng.choice(sides)) * rng.uniform(0.8, 1.2)
        x, y = rng.uniform(side, w - side), rng.uniform(side, h - side)
        if all(np.hypot(x - cx, y - cy) > 0.95 * side + 0.75 * max(bw, bh) for _, cx, cy, bw, bh in labels):
            out.append(cut_crop(img, x, y, side, rng.uniform(0, 360)))
    return out  # fewer when the tray is crowded


#: Dark dice with coloured pips (BGR): the dark faces ``DieStyle.random`` has, and marks it never pairs with them.
DARK_FACES = [(30, 30, 30), (55, 55, 60), (85, 85, 90), (60, 45, 45), (45, 45, 75), (40, 60, 40)]
COLOURED_MARKS = [(40, 40, 200), (70, 60, 225), (200, 100, 40), (60, 170, 60), (40, 170, 230)]


def dark_coloured_style(rng: np.random.Generator) -> DieStyle:
    """A dark die with red, blue, green or gold marks (little contrast in brightness, some in hue)."""
    face = np.array(DARK_FACES[rng.integers(len(DARK_FACES))], float) + rng.normal(0, 10, 3)
    mark = np.array(COLOURED_MARKS[rng.integers(len(COLOURED_MARKS))], float) * rng.uniform(0.7, 1.1) + rng.normal(0, 10, 3)
    kind = "pip" if rng.random() < 0.75 else "elephant"
    # Marks up to 1.5× the usual size: the held-out dark dice with red pips that are read wrong have
    # big pips filling most of the face (a 4 read as 6), bigger than any 1.25× mark drawn before.
    return DieStyle(bgr(face), bgr(mark), kind, float(rng.uniform(0.8, 1.5)))


def paste_side_face(frame: np.ndarray, die: PlacedDie, style: DieStyle, rng: np.random.Generator) -> None:
    """A side face of a tall die seen a little from the side: a foreshortened, shaded face (with its
    marks) along one edge of the top face. Drawn before the top face, which then covers its seam."""
    corners = die.corners().astype(np.float32)
    k = int(rng.integers(4))
    a, b = corners[k], corners[(k + 1) % 4]
    mid = (a + b) / 2
    normal = mid - np.float32([die.cx, die.cy])
    normal /= max(1e-6, float(np.hypot(*normal)))
    depth = die.side * rng.uniform(0.12, 0.45)
    skew = (b - a) * rng.uniform(-0.15, 0.15)  # the side face seen a little obliquely
    quad = np.float32([a, b, b + normal * depth + skew, a + normal * depth + skew])
    tex_size = int(max(16, round(die.side * 1.5)))
    tex = face_texture(int(rng.integers(1, 7)), tex_size, style, rng) * rng.uniform(0.5, 0.9)
    src = np.float32([[0, 0], [tex_size, 0], [tex_size, tex_size], [0, tex_size]])
    m = cv2.getPerspectiveTransform(src, quad)
    h, w = frame.shape[:2]
    warped = cv2.warpPerspective(tex, m, (w, h), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_CONSTANT)
    alpha = cv2.warpPerspective(np.ones((tex_size, tex_size), np.float32), m, (w, h), flags=cv2.INTER_LINEAR)
    alpha = cv2.GaussianBlur(alpha, (0, 0), 0.7)[..., None]
    frame[:] = frame * (1 - alpha) + warped * alpha


#: The share of synthetic pip dice drawn with drilled pips lit from one side (``DieStyle.drilled``).
#: 0.5 was tried twice (``e1f0bb53241c``, ``cd0f8a128706``, model card): neither met its rule, so not shipped;
#: at 0 no random draw is spent, and the data is drawn as for the shipped model.
DRILLED_SHARE = 0.0


#: Bodies of swirled dice (BGR) and the streaks through them: dark, deep and pale bodies, streaks that contrast.
SWIRL_BODIES = [(30, 30, 30), (120, 40, 20), (40, 40, 150), (40, 110, 40), (110, 40, 100), (220, 225, 230), (60, 60, 60)]
SWIRL_STREAKS = [(40, 40, 200), (235, 235, 235), (40, 170, 230), (200, 120, 40), (150, 150, 150), (20, 20, 20)]
#: Bodies of translucent dice (BGR): casino reds and blues, green, purple, amber, smoke.
TRANSLUCENT_BODIES = [(40, 40, 190), (150, 70, 20), (60, 140, 40), (120, 40, 110), (40, 140, 220), (80, 80, 80)]


def other_body_style(rng: np.random.Generator) -> DieStyle:
    """A swirled or a translucent die (``DieStyle.body``), half of each: light, dark or coloured marks on a body whose
    own pattern (streaks, the marks of the faces behind) a classifier must learn to look past."""
    kind = "pip" if rng.random() < 0.8 else "elephant"
    if rng.random() < 0.5:
        face = np.array(SWIRL_BODIES[rng.integers(len(SWIRL_BODIES))], float) + rng.normal(0, 12, 3)
        streak = np.array(SWIRL_STREAKS[rng.integers(len(SWIRL_STREAKS))], float) + rng.normal(0, 12, 3)
        mark = np.array((235, 235, 235) if float(face @ LUMA) < 128 else (25, 25, 25), float)
        if rng.random() < 0.3 and abs(float((streak - face) @ LUMA)) > 90:  # marks in the streaks' colour, where they still show
            mark = streak
        return DieStyle(bgr(face), bgr(mark), kind, float(rng.uniform(0.8, 1.4)), body="swirl", body_colour=bgr(streak))
    face = np.array(TRANSLUCENT_BODIES[rng.integers(len(TRANSLUCENT_BODIES))], float) + rng.normal(0, 12, 3)
    mark = np.array((240, 240, 240), float) + rng.normal(0, 8, 3)
    return DieStyle(bgr(face), bgr(mark), kind, float(rng.uniform(0.9, 1.5)), body="translucent")


#: How far a faint mark is moved from the marks' colour to the face's (``DieStyle.faint_mark``): it keeps 20-60 % of its
#: contrast, dim beside the others but a mark a person still counts.
FAINT_MARK_RANGE = (0.4, 0.8)


def faint_mark_style(rng: np.random.Generator) -> DieStyle:
    """A die drawn as ``synth_face_crops`` draws one, light or dark, with one mark of its face faint
    (``FAINT_MARK_RANGE``); half of them dark dice with light or coloured marks, where a dim mark has least
    contrast to lose."""
    r = rng.random()
    style = DieStyle.game(rng) if r < 0.2 else dark_coloured_style(rng) if r < 0.5 else DieStyle.random(rng)
    return replace(style, faint_mark=float(rng.uniform(*FAINT_MARK_RANGE)))


#: Light and dark bodies a die printed with numbers may have, and contrasting ink (BGR).
NUMERAL_LIGHT = [(240, 240, 240), (215, 235, 245), (200, 120, 240), (30, 200, 230), (180, 235, 170), (200, 200, 200)]
NUMERAL_DARK = [(25, 25, 25), (40, 40, 200), (170, 80, 30), (60, 120, 40), (120, 40, 90), (80, 80, 80)]


def numeral_style(rng: np.random.Generator) -> DieStyle:
    """A die printed with its number instead of marks (``DieStyle.marks == "numeral"``): a light body with dark
    ink or a dark one with light ink, as number dice are made. Its face is the number printed, so a classifier that
    has seen them reads the number, not the one mark a lone glyph in the middle of a face looks like."""
    if rng.random() < 0.5:
        face = np.array(NUMERAL_LIGHT[rng.integers(len(NUMERAL_LIGHT))], float) + rng.normal(0, 12, 3)
        ink = np.array([(20, 20, 20), (40, 40, 190), (150, 60, 20), (60, 20, 90)][rng.integers(4)], float) + rng.normal(0, 12, 3)
    else:
        face = np.array(NUMERAL_DARK[rng.integers(len(NUMERAL_DARK))], float) + rng.normal(0, 12, 3)
        ink = np.array([(240, 240, 240), (60, 220, 240), (200, 170, 255)][rng.integers(3)], float) + rng.normal(0, 12, 3)
    return DieStyle(bgr(face), bgr(ink), "numeral", float(rng.uniform(0.8, 1.25)))


def other_marks_style(rng: np.random.Generator) -> DieStyle:
    """A die whose marks are not round pips or elephants (``SHAPED_MARKS``: stars, diamonds, hearts, rings, squares),
    or round pips with the one printed as a big emblem (``DieStyle.one_scale``), light or dark, as ``DieStyle.random``
    colours them. Taught beside number dice so that a lone mark of any shape stays a one while a printed digit is its
    number: the count of marks is what a face shows, whatever their shape."""
    base = DieStyle.random(rng)
    marks = SHAPED_MARKS[int(rng.integers(len(SHAPED_MARKS)))] if rng.random() < 0.6 else "pip"
    one_scale = float(rng.uniform(1.5, 2.6)) if rng.random() < 0.5 else 1.0
    return replace(base, marks=marks, mark_scale=float(rng.uniform(0.8, 1.3)), one_scale=one_scale)


def _ground(rng: np.random.Generator, size: int) -> np.ndarray:
    """A ``size``-px square of one colour with a soft unevenness: what a drawn die or thing lies on (float BGR)."""
    ground = np.empty((size, size, 3), np.float32)
    ground[:] = rng.uniform(30, 220, 3)
    ground += cv2.resize(rng.normal(0, 12, (4, 4, 3)).astype(np.float32), (size, size))
    return ground


def synth_face_crops(n: int, rng: np.random.Generator, style_of: Callable[[np.random.Generator], DieStyle] | None = None,
                     cut: tuple[float, float] = (0.9, 1.12)) -> tuple[np.ndarray, np.ndarray]:
    """Single dice on plain or busy backgrounds, sometimes with a neighbour or a side face showing,
    many styles (a share of them dark with coloured marks), cut jittered (``cut``: the square's side as shares of
    the die's, drawn evenly; tighter shows the middle of the face, as a detector that boxed one big mark cuts it); or
    each die's style drawn by ``style_of`` (``other_body_style``)."""
    xs, ys = [], []
    for _ in range(n):
        side = rng.uniform(24, 80)
        size = int(side * 3)
        bg = _ground(rng, size)
        if style_of is not None:
            style = style_of(rng)
        else:
            r = rng.random()
            style = DieStyle.game(rng) if r < 0.4 else dark_coloured_style(rng) if r < 0.55 else DieStyle.random(rng)
        if DRILLED_SHARE and style.marks == "pip" and rng.random() < DRILLED_SHARE:
            style = replace(style, drilled=True)
        value = int(rng.integers(1, 7))
        angle = float(rng.uniform(0, 90))
        c = size / 2
        die = PlacedDie(value, c, c, side, angle)
        if rng.random() < 0.3:  # a touching neighbour
            t = np.radians(angle + 90 * int(rng.integers(4)))
            d = side * rng.uniform(1.0, 1.15)
            paste_die(bg, PlacedDie(int(rng.integers(1, 7)), c + d * np.cos(t), c + d * np.sin(t), side, angle + rng.normal(0, 5)),
                      style, rng, bool(rng.random() < 0.5), bool(rng.random() < 0.5))
        if rng.random() < 0.25:
            paste_side_face(bg, die, style, rng)
        paste_die(bg, die, style, rng, mirrored=bool(rng.random() < 0.5), shadow=bool(rng.random() < 0.5))
        frame = finish(bg, rng, blur=rng.uniform(0, 1.0) * side / 64, noise=rng.uniform(0, 8))
        s = side * rng.uniform(*cut)
        a = angle + 90 * int(rng.integers(4)) + rng.normal(0, 6) if rng.random() < 0.7 else rng.uniform(0, 360)
        jx, jy = rng.normal(0, 0.05 * side, 2)
        xs.append(cut_crop(frame, c + jx, c + jy, s, a))
        ys.append(value)
    return np.array(xs, np.uint8), np.array(ys, np.int64)


def _thing_ground(rng: np.random.Generator) -> tuple[np.ndarray, float, float]:
    """Where a drawn thing lies: a ground (``_ground``) three times its side, the ground's middle, and the side
    (24-80 px, as ``synth_face_crops``' dice)."""
    side = rng.uniform(24, 80)
    size = int(side * 3)
    return _ground(rng, size), size / 2, side


def _cut_thing(frame: np.ndarray, c: float, side: float, rng: np.random.Generator, spans: tuple[float, float]) -> np.ndarray:
    """The thing drawn around (c, c) on ``frame`` as the classifier sees it: through the camera's blur and noise
    (``finish``), cut a little off its middle at ``spans`` of its ``side`` (drawn evenly), at any turn."""
    image = finish(frame, rng, blur=rng.uniform(0, 1.0) * side / 64, noise=rng.uniform(0, 8))
    jx, jy = rng.normal(0, 0.08 * side, 2)
    return cut_crop(image, c + jx, c + jy, side * rng.uniform(*spans), rng.uniform(0, 360))


def round_thing_crops(n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Round things that are not dice, cut as a die would be and labelled 0 ("not a die"): balls lit from one side
    with the lamp's shine on them (opaque, glassy or swirled like a marble), and flat discs (plain, ringed, or with a
    boss in the middle), on ``synth_face_crops``' grounds. The detector boxes a ball at about its lit part, so the
    square is 0.55-1.15 of the thing's side. A ball's highlight is a light mark on a darker face: without these the
    classifier reads a glass bead as a sure one. Drawn here, not by ``models.training.not_dice`` (the held-out check of
    such things), so that check still reads things drawn otherwise."""
    xs = []
    for _ in range(n):
        frame, c, side = _thing_ground(rng)
        size, r = frame.shape[0], side / 2
        yy, xx = np.mgrid[0:size, 0:size].astype(np.float32)
        dx, dy = (xx - c) / r, (yy - c) / r
        inside = dx * dx + dy * dy < 1.0
        colour = rng.uniform(20, 240, 3).astype(np.float32)
        if rng.random() < 0.65:  # a ball: Lambert shading from a lamp up and to a side, and its specular shine
            nz = np.sqrt(np.clip(1.0 - dx * dx - dy * dy, 0.0, 1.0))
            up, turn = rng.uniform(0.35, 1.3), rng.uniform(0, 2 * np.pi)
            light = np.array([np.cos(turn) * np.cos(up), np.sin(turn) * np.cos(up), np.sin(up)], np.float32)
            lit = np.clip(dx * light[0] + dy * light[1] + nz * light[2], 0.0, 1.0)
            body = colour * (rng.uniform(0.15, 0.4) + rng.uniform(0.6, 1.0) * lit)[..., None]
            if rng.random() < 0.35:  # swirled like a marble
                swirl = cv2.resize(rng.normal(0, 1, (5, 5)).astype(np.float32), (size, size), interpolation=cv2.INTER_CUBIC)
                body = body * (1.0 + 0.35 * np.tanh(swirl))[..., None]
            half = light + np.array([0.0, 0.0, 1.0], np.float32)  # the lamp's and the camera's halfway direction
            half /= np.linalg.norm(half)
            shine = np.clip(dx * half[0] + dy * half[1] + nz * half[2], 0.0, 1.0) ** rng.uniform(15, 120)
            body = body + rng.uniform(150, 300) * shine[..., None]
            see_through = rng.uniform(0.55, 1.0) if rng.random() < 0.4 else 1.0  # glass lets the ground through
            frame[inside] = frame[inside] * (1 - see_through) + body[inside] * see_through
        else:  # a flat disc: a counter, a coin's plain face, a cap; a ring or a boss in the middle
            frame[inside] = colour
            if rng.random() < 0.6:
                cv2.circle(frame, (int(c), int(c)), int(r * rng.uniform(0.2, 0.85)), (colour * rng.uniform(0.5, 1.4)).tolist(),
                           -1 if rng.random() < 0.5 else max(1, int(r * 0.08)), cv2.LINE_AA)
        xs.append(_cut_thing(frame, c, side, rng, (0.55, 1.15)))
    return np.array(xs, np.uint8).reshape(-1, CROP, CROP, 3), np.zeros(n, np.int64)


#: The kinds ``table_thing_crops`` draws, and the share of each.
TABLE_THINGS = {"round": 0.35, "printed": 0.35, "studded": 0.3}
#: Printed on a drawn tile or card's corner: letters, signs and the numbers no die shows (a die's 1-6 are the
#: numeral dice's, ``numeral_style``).
PRINTED_GLYPHS = "ABCDEFGHJKLMNPQRSTUVWXYZ7890#&%?+=@"


def _printed_thing(frame: np.ndarray, c: float, side: float, rng: np.random.Generator) -> None:
    """A tile, a label or a playing card's corner, in place on ``frame`` (float BGR) around (c, c): a light or
    coloured flat rectangle larger or smaller than a die, with one to three printed glyphs and signs, off the middle
    as a card's rank and suit are, or a word of them as a label's."""
    canvas = np.clip(frame, 0, 255).astype(np.uint8)  # OpenCV prints text on 8-bit images only
    w, h = side * rng.uniform(0.8, 2.2), side * rng.uniform(0.8, 1.6)
    box = ((c + rng.normal(0, 0.2 * side), c + rng.normal(0, 0.2 * side)), (w, h), float(rng.uniform(0, 180)))
    paper = rng.uniform(190, 250, 3) if rng.random() < 0.6 else rng.uniform(30, 230, 3)
    cv2.fillConvexPoly(canvas, cv2.boxPoints(box).astype(np.int32), paper.tolist(), cv2.LINE_AA)
    ink = np.array([(40, 40, 200), (30, 30, 30), (160, 60, 20), (30, 120, 30)][int(rng.integers(4))], float)
    if paper.mean() < 110:
        ink = 255 - ink
    for _ in range(int(rng.integers(1, 4))):
        x, y = c + rng.uniform(-0.35, 0.35) * side, c + rng.uniform(-0.35, 0.35) * side
        if rng.random() < 0.55:
            scale = side * rng.uniform(0.25, 0.6) / 22.0
            glyph = "".join(rng.choice(list(PRINTED_GLYPHS), int(rng.integers(1, 3))))
            font = [cv2.FONT_HERSHEY_SIMPLEX, cv2.FONT_HERSHEY_DUPLEX, cv2.FONT_HERSHEY_TRIPLEX, cv2.FONT_HERSHEY_COMPLEX][int(rng.integers(4))]
            cv2.putText(canvas, glyph, (int(x - 8 * scale), int(y + 8 * scale)), font, scale, ink.tolist(),
                        max(1, int(scale * rng.uniform(1.2, 2.5))), cv2.LINE_AA)
        else:  # a card's suit or a printed sign
            draw_shaped_mark(canvas, SHAPED_MARKS[int(rng.integers(len(SHAPED_MARKS)))], x, y, side * rng.uniform(0.08, 0.2),
                             tuple(int(v) for v in ink))
    frame[:] = canvas


def _studded_thing(frame: np.ndarray, c: float, side: float, rng: np.random.Generator) -> None:
    """A toy brick from above, in place on ``frame`` (float BGR) around (c, c): a coloured plastic block of two to
    four studs a row, each stud a raised cylinder of the block's own colour lit from one side (a bright rim towards
    the lamp, a shadow away from it), the block often larger than the cut."""
    rows, cols = int(rng.integers(1, 4)), int(rng.integers(2, 5))
    pitch = side * rng.uniform(0.3, 0.55)
    colour = rng.uniform(20, 240, 3)
    turn = float(rng.uniform(0, 180))
    ox, oy = c + rng.normal(0, 0.15 * side), c + rng.normal(0, 0.15 * side)
    box = ((ox, oy), (cols * pitch, rows * pitch), turn)
    cv2.fillConvexPoly(frame, cv2.boxPoints(box).astype(np.int32), colour.tolist(), cv2.LINE_AA)
    t = np.radians(turn)
    ux, uy, vx, vy = np.cos(t), np.sin(t), -np.sin(t), np.cos(t)
    light = rng.uniform(0, 2 * np.pi)
    lx, ly = np.cos(light), np.sin(light)
    r = pitch * rng.uniform(0.28, 0.36)
    for i in range(cols):
        for j in range(rows):
            a, b = (i - (cols - 1) / 2) * pitch, (j - (rows - 1) / 2) * pitch
            sx, sy = ox + a * ux + b * vx, oy + a * uy + b * vy
            shadow = (sx - lx * r * 0.25, sy - ly * r * 0.25)
            cv2.circle(frame, (int(shadow[0]), int(shadow[1])), int(r * 1.05), (colour * rng.uniform(0.4, 0.7)).tolist(), -1, cv2.LINE_AA)
            cv2.circle(frame, (int(sx), int(sy)), int(r), np.clip(colour * rng.uniform(1.0, 1.25), 0, 255).tolist(), -1, cv2.LINE_AA)
            cv2.ellipse(frame, (int(sx), int(sy)), (int(r), int(r)), float(np.degrees(light)), -60, 60,
                        np.clip(colour * 1.5 + 40, 0, 255).tolist(), max(1, int(r * 0.15)), cv2.LINE_AA)


def table_thing_crops(n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Things that lie on a games table and are not dice, cut as a die would be and labelled 0 ("not a die"): round
    things (``round_thing_crops``), printed tiles, labels and card corners, and toy bricks' studded tops, in the
    shares of ``TABLE_THINGS``, on ``synth_face_crops``' grounds, the printed and studded ones cut at 0.55-1.3 of a
    die's side (the detector may box part of one; round things as ``round_thing_crops`` cuts them). Drawn here, not by ``models.training.not_dice`` (the held-out check of such things), so that
    check still reads things drawn otherwise."""
    kinds = list(TABLE_THINGS)
    picks = rng.choice(len(kinds), n, p=list(TABLE_THINGS.values()))
    xs = np.zeros((n, CROP, CROP, 3), np.uint8)
    rounds = np.flatnonzero(picks == kinds.index("round"))
    if len(rounds):
        xs[rounds] = round_thing_crops(len(rounds), rng)[0]
    for k in np.flatnonzero(picks != kinds.index("round")):
        frame, c, side = _thing_ground(rng)
        (_printed_thing if kinds[picks[k]] == "printed" else _studded_thing)(frame, c, side, rng)
        xs[k] = _cut_thing(frame, c, side, rng, (0.55, 1.3))
    return xs, np.zeros(n, np.int64)


def synth_frame_crops(frames: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Whole rendered frames through the finder: its blobs, labelled by the dice they sit on (or 0)."""
    xs, ys = [], []
    for _ in range(frames):
        width = int(rng.choice([640, 960, 1280]))
        n = int(rng.integers(2, 6))
        seen = [int(v) for v in rng.integers(1, 7, n)]
        styles = [DieStyle.game(rng) if rng.random() < 0.7 else DieStyle.random(rng)] * n
        frame, dice = render_table(seen, rng, width=width, height=width * 3 // 4, view="below" if rng.random() < 0.7 else "above", styles=styles)
        cands = find_dice(frame)
        truth = [(d.seen, d.cx, d.cy, d.side) for d in dice]
        for c, j in zip(cands, _match(cands, truth)):
            if j == -1:
                continue
            angle = c.angle + 90 * int(rng.integers(4)) + rng.normal(0, 3)
            xs.append(cut_crop(frame, c.cx, c.cy, max(c.w, c.h), angle))
            ys.append(0 if j is None else truth[j][0])
    return np.array(xs, np.uint8).reshape(-1, CROP, CROP, 3), np.array(ys, np.int64)


def split_names() -> dict[str, list[str]]:
    return json.loads((dataset_dir() / "split.json").read_text())


#: How many ``train`` photos are held out to choose a recipe, and the seed that draws them (whatever the run's seed,
#: so that runs are judged on the same photos).
HELD_OUT_PHOTOS = 20
HELD_OUT_SEED = 3


def fit_and_held_out(names: list[str], all_photos: bool = False) -> tuple[list[str], list[str]]:
    """The ``train`` photos a run fits on, and the ``HELD_OUT_PHOTOS`` it is judged on. With ``all_photos`` the
    fit also takes the held-out ones (after them): the final fit of a recipe already chosen on them."""
    order = np.random.default_rng(HELD_OUT_SEED).permutation(len(names))
    held_out = [names[i] for i in order[:HELD_OUT_PHOTOS]]
    fit = [names[i] for i in order[HELD_OUT_PHOTOS:]]
    return fit + (held_out if all_photos else []), held_out
