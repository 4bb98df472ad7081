"""Other tables under the real photos' dice: the grey tray swapped for a dark, light, coloured, felt or wood one.

Every real training photo shows one grey tray, so the model learned what a die
looks like *on that tray*: the held-out photos with their tray swapped for green
felt or black cloth lost 5-7 of 123 crops. The real dice are kept as they are
(their edges, glints, shadows and translucency); only what looks like the tray
changes, and the tray's own shading (the dice's shadows) carries over to the
new table. Plain numpy and OpenCV, so that it is tested without PyTorch.
"""

from __future__ import annotations

import cv2
import numpy as np

#: How far (a*b* units of CIE Lab) a pixel's colour may be from the tray's to count as tray.
TRAY_CHROMA = 9.0
#: The brightness a tray pixel may have, as a share of the tray's own there (a shadow, a sheen).
TRAY_LIGHT = (0.55, 1.25)
#: The disc at each labelled die's centre that is always kept, as a share of its box's long side:
#: inside any die, however turned, so a white die on the pale tray keeps its face.
DIE_CORE = 0.34


def _boxes(shape: tuple[int, int], labels, grow: float) -> np.ndarray:
    mask = np.zeros(shape, np.uint8)
    for _, cx, cy, bw, bh in labels:
        cv2.rectangle(mask, (int(cx - bw * grow), int(cy - bh * grow)), (int(cx + bw * grow), int(cy + bh * grow)), 255, -1)
    return mask


def tray_field(img: np.ndarray, boxes: np.ndarray) -> np.ndarray:
    """The tray's Lab colour at every pixel as if there were no dice: the photo at 1/8 scale with the
    dice's boxes painted over from around them, then smoothed (the tray's shading is slow)."""
    h, w = img.shape[:2]
    sw, sh = max(4, w // 8), max(4, h // 8)
    lab = cv2.resize(cv2.cvtColor(img, cv2.COLOR_BGR2LAB), (sw, sh), interpolation=cv2.INTER_AREA)
    covered = (cv2.resize(boxes, (sw, sh), interpolation=cv2.INTER_NEAREST) > 0).astype(np.uint8) * 255
    filled = cv2.inpaint(lab, covered, 5, cv2.INPAINT_TELEA).astype(np.float32)
    return cv2.resize(cv2.GaussianBlur(filled, (0, 0), 2), (w, h), interpolation=cv2.INTER_LINEAR)


def tray_mask(img: np.ndarray, labels) -> tuple[np.ndarray, np.ndarray]:
    """(weight, shade): how much each pixel is tray (0..1, soft at the edges), and its brightness as a
    share of the tray's typical brightness (the dice's shadows and the light's fall-off, to carry over).

    Outside the dice's boxes everything is tray. Inside them, a pixel is tray when its colour is the
    tray's and it joins the tray outside; the disc at each die's centre never is (``DIE_CORE``)."""
    h, w = img.shape[:2]
    boxes = _boxes((h, w), labels, 0.55)
    field = tray_field(img, boxes)
    lab = cv2.cvtColor(img, cv2.COLOR_BGR2LAB).astype(np.float32)
    chroma = np.sqrt(((lab[..., 1:] - field[..., 1:]) ** 2).sum(-1))
    shade = lab[..., 0] / np.maximum(field[..., 0], 1.0)
    like = (chroma < TRAY_CHROMA) & (shade > TRAY_LIGHT[0]) & (shade < TRAY_LIGHT[1])
    outside = boxes == 0
    _, parts = cv2.connectedComponents((like | outside).astype(np.uint8), connectivity=4)
    joined = np.isin(parts, np.unique(parts[outside & like]))
    tray = outside | (joined & like)
    core = np.zeros((h, w), np.uint8)
    for _, cx, cy, bw, bh in labels:
        cv2.circle(core, (int(round(cx)), int(round(cy))), int(DIE_CORE * max(bw, bh)), 255, -1)
    tray &= core == 0
    weight = cv2.GaussianBlur(tray.astype(np.float32), (0, 0), 1.0)
    light = field[..., 0] / max(1.0, float(np.median(field[..., 0])))  # the slow shading over the whole tray
    return weight, np.clip(shade * light, 0.3, 1.3).astype(np.float32)


def table_texture(h: int, w: int, rng: np.random.Generator) -> np.ndarray:
    """A random table, float32 BGR: dark cloth, white paper, a coloured board, felt (grain) or wood (streaks)."""
    kind = rng.choice(["dark", "light", "colour", "felt", "wood"])
    if kind == "dark":
        colour = rng.uniform(10, 60) * rng.uniform(0.85, 1.15, 3)
    elif kind == "light":
        colour = rng.uniform(205, 250) * rng.uniform(0.95, 1.03, 3)
    else:
        hsv = np.uint8([[[rng.integers(0, 180), rng.integers(90, 230), rng.integers(70, 210)]]])
        colour = cv2.cvtColor(hsv, cv2.COLOR_HSV2BGR)[0, 0].astype(np.float64)
    table = np.empty((h, w, 3), np.float32)
    table[:] = colour
    if kind == "wood":
        t = rng.uniform(0, np.pi)
        yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
        u = xx * np.cos(t) + yy * np.sin(t)
        v = -xx * np.sin(t) + yy * np.cos(t)
        period = rng.uniform(4, 14)
        grain = np.sin(u / period + 1.5 * np.sin(v / rng.uniform(20, 60)) + 0.8 * np.sin(u / (period * 7)))
        table *= (1 + rng.uniform(0.1, 0.3) * grain)[..., None]
    elif kind == "felt":
        table += rng.normal(0, rng.uniform(4, 12), (h, w, 1)).astype(np.float32)
    # a slow unevenness of light over the table
    table *= cv2.resize(rng.uniform(0.85, 1.15, (3, 3)).astype(np.float32), (w, h), interpolation=cv2.INTER_CUBIC)[..., None]
    return table


def other_table(img: np.ndarray, labels, rng: np.random.Generator) -> np.ndarray:
    """``img`` (BGR uint8) with its tray swapped for a random table (``table_texture``), the dice kept."""
    weight, shade = tray_mask(img, labels)
    table = table_texture(img.shape[0], img.shape[1], rng) * shade[..., None]
    out = img.astype(np.float32) * (1 - weight[..., None]) + table * weight[..., None]
    return np.clip(out, 0, 255).astype(np.uint8)
