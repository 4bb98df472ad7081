"""Training augmentations: how a crop is made to look like another camera's, another light's, another die's.

Kept apart from ``train.py`` (which needs PyTorch) so that they can be tested
without it: plain numpy and OpenCV on uint8 BGR crops.
"""

from __future__ import annotations

import cv2
import numpy as np

from models.training.image_changes import sharpened, tone


def specular(crop: np.ndarray, rng: np.random.Generator, size: float = 1.0) -> np.ndarray:
    """Glints of the lights on glossy plastic: 1-4 tiny saturated white dots or short streaks on the die
    (half of them where a pip may sit: concave pips catch the light), smaller than any mark; ``size`` scales
    the dots (a small light pip on a dark die is as big as the largest dot)."""
    n = crop.shape[0]
    half = n / 2 / 1.3  # the die's half-side in the crop (cut_crop's MARGIN)
    out = crop.astype(np.float32)
    layer = np.zeros((n, n), np.float32)
    for _ in range(int(rng.integers(1, 5))):
        if rng.random() < 0.6:  # on a pip's place; the centre (4 or 5? 2 or 3?) most often
            x, y = (rng.integers(-1, 2, 2) * 0.4 * half if rng.random() < 0.6 else np.zeros(2)) + rng.normal(0, 0.08 * half, 2)
        else:
            x, y = rng.uniform(-0.85 * half, 0.85 * half, 2)
        cx, cy = int(round((n / 2 + x) * 16)), int(round((n / 2 + y) * 16))
        if rng.random() < 0.6:  # a dot
            ax = (int(rng.uniform(0.5, 1.3) * size * 16), int(rng.uniform(0.4, 1.0) * size * 16))
            cv2.ellipse(layer, (cx, cy), ax, float(rng.uniform(0, 180)), 0, 360, 1.0, -1, cv2.LINE_AA, 4)
        else:  # a short streak
            t = rng.uniform(0, np.pi)
            length = rng.uniform(2, 0.5 * half) * 8
            d = np.array([np.cos(t), np.sin(t)]) * length
            cv2.line(layer, (int(cx - d[0]), int(cy - d[1])), (int(cx + d[0]), int(cy + d[1])), 1.0, 1, cv2.LINE_AA, 4)
    layer = cv2.GaussianBlur(layer, (0, 0), rng.uniform(0.3, 0.7))
    layer = np.clip(layer * rng.uniform(1.0, 2.0), 0, 1)[..., None] * rng.uniform(0.6, 1.0)
    out = out * (1 - layer) + rng.uniform(235, 255) * layer
    return np.clip(out, 0, 255).astype(np.uint8)


def sensor_noise(crop: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """A dim or cheap camera's grain: Gaussian noise of 2-8 grey levels, in brightness only or per
    channel, sometimes softened as demosaicing does.

    Without it the model read a flat patch of tray with noise of only 4 grey
    levels as a six at 0.97 (the crop is brought to unit contrast, so grain
    looks like many small marks), and the train photos with noise of 8 added
    read 5 points worse with hundreds of extra "dice"."""
    shape = crop.shape[:2] + ((1,) if rng.random() < 0.5 else (3,))
    noise = rng.normal(0, rng.uniform(2, 8), shape).astype(np.float32)
    if rng.random() < 0.4:
        noise = cv2.GaussianBlur(noise, (0, 0), rng.uniform(0.5, 0.8)).reshape(shape) * 1.6
    return np.clip(crop.astype(np.float32) + noise, 0, 255).astype(np.uint8)


def distort(crop: np.ndarray, rng: np.random.Generator, glint_size: float = 1.0, motion_blur: float = 0.0,
            camera_tone: float = 0.0) -> np.ndarray:
    """One crop made to look like a small, tilted, soft real die: glints (``specular``, their dots scaled by
    ``glint_size``), perspective, lost resolution, blur, in ``motion_blur`` of the crops a shaken camera's smear
    (``smear``), in ``camera_tone`` of them a phone's tone curve and sharpening (``phone_tone``), sensor noise, JPEG."""
    n = crop.shape[0]
    out = crop
    if rng.random() < 0.5:  # glints of light first: the camera's blur and JPEG then soften them
        out = specular(out, rng, glint_size)
    if rng.random() < 0.5:  # a perspective warp: the corners moved by up to 8 % of the crop, zoom 0.85-1.15
        src = np.float32([[0, 0], [n, 0], [n, n], [0, n]])
        z = rng.uniform(0.85, 1.15)
        dst = (src - n / 2) * z + n / 2 + rng.uniform(-0.08 * n, 0.08 * n, (4, 2)).astype(np.float32)
        m = cv2.getPerspectiveTransform(src, dst.astype(np.float32))
        out = cv2.warpPerspective(out, m, (n, n), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
    if rng.random() < 0.4:  # a small die: seen at 50-100 % of the crop's resolution
        s = max(8, int(round(n * rng.uniform(0.5, 1.0))))
        out = cv2.resize(cv2.resize(out, (s, s), interpolation=cv2.INTER_AREA), (n, n), interpolation=cv2.INTER_LINEAR)
    if rng.random() < 0.25:
        out = cv2.GaussianBlur(out, (0, 0), rng.uniform(0.4, 1.1))
    if motion_blur > 0 and rng.random() < motion_blur:  # drawn only when asked: the shipped stream stays as it was
        out = smear(out, rng.uniform(*SMEAR_SHARE) * n, rng.uniform(0, 180))
    if camera_tone > 0 and rng.random() < camera_tone:  # drawn only when asked, as the smear
        out = phone_tone(out, rng)
    if rng.random() < 0.2:
        out = sensor_noise(out, rng)
    if rng.random() < 0.25:
        ok, buf = cv2.imencode(".jpg", np.ascontiguousarray(out), [cv2.IMWRITE_JPEG_QUALITY, int(rng.integers(30, 90))])
        if ok:
            out = cv2.imdecode(buf, cv2.IMREAD_COLOR)
    return out


def phone_tone(crop: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """The crop as a phone's processing leaves it: a tone curve (levels to a power 0.5-2, drawn evenly on its
    logarithm: shadows lifted or deepened), and half the time unsharp masking (amount 0.5-1.5, 0.8-2 px), the
    halos along a die's marks and edges that the robustness sweeps' "sharpened" rows show.

    >>> crop = np.zeros((40, 40, 3), np.uint8); crop[:, 20:] = 200
    >>> out = phone_tone(crop, np.random.default_rng(0))
    >>> out.shape, out.dtype, int(out[0, 0, 0])  # black stays black under any curve
    ((40, 40, 3), dtype('uint8'), 0)
    """
    out = tone(float(np.exp(rng.uniform(np.log(0.5), np.log(2.0)))))(crop)
    if rng.random() < 0.5:
        out = sharpened(rng.uniform(0.5, 1.5), rng.uniform(0.8, 2.0))(out)
    return out


#: ``smear``'s length as a share of the crop's side: 2-7 px on a 40-px crop, up to about a fifth of the die's side.
SMEAR_SHARE = (0.05, 0.175)


def smear(crop: np.ndarray, length: float, degrees: float) -> np.ndarray:
    """The crop smeared along a ``length``-px line at ``degrees``: a hand-held camera, or a die still sliding,
    during the exposure (the robustness sweep's "shaken" change is one such smear of a whole photo).

    >>> crop = np.zeros((40, 40, 3), np.uint8); crop[20, 20] = 255
    >>> out = smear(crop, 5.0, 0.0)
    >>> int((out[20, :, 0] > 0).sum()), int((out[:, 20, 0] > 0).sum())  # along the line, not across it
    (5, 1)
    """
    k = max(3, int(np.ceil(length)) | 1)
    kernel = np.zeros((k, k), np.float32)
    half = (k - 1) / 2
    cv2.line(kernel, (int(round(half - (length - 1) / 2)), int(half)), (int(round(half + (length - 1) / 2)), int(half)), 1.0, 1)
    kernel = cv2.warpAffine(kernel, cv2.getRotationMatrix2D((half, half), degrees, 1.0), (k, k))
    kernel /= kernel.sum()
    return cv2.filter2D(crop, -1, kernel, borderType=cv2.BORDER_REPLICATE)


#: ``squash``: a die's face seen this much narrower along one axis at most (a photo stretched to a square, a camera
#: at a slant): the rune55 tray photos' dice are up to twice as tall as wide.
SQUASH_RANGE = (0.5, 0.9)


def squash(crop: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """One crop narrowed along an axis turned any way, about its centre (``SQUASH_RANGE``), the edges repeated.

    >>> die = np.zeros((40, 40, 3), np.uint8); die[10:30, 10:30] = 255
    >>> out = squash(die, np.random.default_rng(0))
    >>> out.shape, 0 < int((out[:, :, 0] > 127).sum()) < 400
    ((40, 40, 3), True)
    """
    n = crop.shape[0]
    f = rng.uniform(*SQUASH_RANGE)
    t = rng.uniform(0, np.pi)
    c, s = np.cos(t), np.sin(t)
    turn = np.array([[c, -s], [s, c]])
    m = turn @ np.diag([f, 1.0]) @ turn.T
    offset = np.array([n / 2, n / 2]) - m @ np.array([n / 2, n / 2])
    return cv2.warpAffine(crop, np.hstack([m, offset[:, None]]), (n, n), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)


def invert(crops: np.ndarray) -> np.ndarray:
    """The crops' negative: a light die with dark marks becomes a dark die with light marks (black dice with
    white pips, red casino dice), the look most real dice sets have besides the white one. Done before
    ``distort``, so the glints it adds stay white, as light on any plastic is.

    >>> invert(np.array([[[[0, 128, 255]]]], np.uint8)).tolist()
    [[[[255, 127, 0]]]]
    """
    return 255 - crops


#: The share of crops made grey in training. 0.3 was tried (the held-out crops in grey read 112 -> 114 of 123,
#: but one die fewer in colour, with more grain as well); this model's 0.15 reads 114 in grey too.
GREY_SHARE = 0.15


def augment(x: np.ndarray, rng: np.random.Generator, strong: bool = False, squashed: float = 0.0, inverted: float = 0.0,
            glint_size: float = 1.0, motion_blur: float = 0.0, camera_tone: float = 0.0) -> np.ndarray:
    """Per-batch: random 90° turns, flips, brightness/contrast and channel order (colour-blind to hue);
    with ``strong``, per crop also glints, perspective, resolution loss, blur, grain, JPEG (``distort``) and a colour cast;
    ``squashed``: this share of the crops narrowed along one axis first (``squash``); ``inverted``: this share
    turned to their negative first (``invert``); ``glint_size`` scales the glints' dots (``specular``);
    ``motion_blur``: with ``strong``, this share of the crops smeared as by a shaken camera (``smear``);
    ``camera_tone``: with ``strong``, this share given a phone's tone curve and sharpening (``phone_tone``)."""
    x = np.ascontiguousarray(x)
    if squashed > 0:
        picked = rng.random(len(x)) < squashed
        if picked.any():
            x = x.copy()
            x[picked] = [squash(c, rng) for c in x[picked]]
    if inverted > 0:
        picked = rng.random(len(x)) < inverted
        if picked.any():
            x = x.copy()
            x[picked] = invert(x[picked])
    if strong:
        x = np.array([distort(c, rng, glint_size, motion_blur, camera_tone) for c in x], np.uint8)
    k = int(rng.integers(4))
    x = np.rot90(x, k, axes=(1, 2))
    if rng.random() < 0.5:
        x = x[:, :, ::-1]
    x = x.astype(np.float32)
    cast = rng.uniform(0.85, 1.15, (len(x), 1, 1, 3)) if strong else 1.0
    x = x * rng.uniform(0.7, 1.3, (len(x), 1, 1, 1)) * cast + rng.uniform(-30, 30, (len(x), 1, 1, 1))
    perm = rng.permutation(3)
    grey = rng.random(len(x)) < GREY_SHARE
    x = x[..., perm]
    x[grey] = x[grey].mean(axis=3, keepdims=True)
    return np.clip(x, 0, 255).astype(np.uint8)
