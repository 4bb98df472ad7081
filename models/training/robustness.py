"""Read the 20 held-out ``train`` photos whole, changed the way another camera, light, table or distance would.

Run with ``python -m models.training.robustness [MODEL.onnx] [--reader learned|classic] [--only CHANGE ...]``
(default: the shipped model in the default staged reader, every change); ``--set DIR [--split val]
[--subset NAME] [--limit N]`` reads another shared set's photos the same way (never its ``test`` split; the sets
``bench.eval_sets`` builds, whose one split is called ``test``, with ``--split test``);
``--calibrated`` reads them in tray mode, each photo calibrated once as photographed. The
reader is judged on other real photos than these (other dice, cameras, light),
so a change to the detector, the reader or the model is checked here as well as
on the photos as they are. Each photo is read told how many dice it holds, as
the table knows it plays with three. Per change it prints the dice, how many
were found, read right, silently wrong (wrong, missing or extra in a reading
that says ``ok``: the worst, counted as ``evaluate`` counts it), and the extra
detections. Only the held-out photos are read (never trained on), never ``test``.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable, Iterator
from pathlib import Path

import cv2
import numpy as np

from models.training import data
from models.training.augment import smear
from models.training.heldout import HERE, heldout_names
from models.training.judge import CUE_DIR, candidate_cues, reader_of
from models.training.image_changes import blurred, defocused, grey, haze, jpeg, light, off_a_screen, posterised, sharpened, tone, upscaled
from models.training.tables import other_table
from bench.reader import _match
from vision.classifier import FaceClassifier
from vision.dataset import photo, shared_datasets
from vision.evaluate import frame_names, image_of, reader_for, yolo_labels
from vision.images import load_image
from companion.core.reading import Reading
from vision.classic_reader import DiceReader

#: Why ``--reader classic`` cannot take ``--detector``: said in these words by the command and by ``reader_with_model``.
CLASSIC_HAS_NO_DETECTOR = "the classic reader has no learned detector to replace"
#: Why ``--reader classic`` cannot take ``--calibrated``: tray mode (the calibrated size as a prior) is the staged reader's.
CLASSIC_HAS_NO_TRAY_MODE = "--calibrated reads in tray mode, which only the staged reader has (not the classic one)"

Shown = Iterator[tuple[np.ndarray, list, int]]  # (image, the labels of the dice wholly in it, how many more it cuts)


def _noise(sigma: float) -> Callable[[np.ndarray, list, np.random.Generator], Shown]:
    def change(img, labels, rng):
        yield np.clip(img.astype(np.float32) + rng.normal(0, sigma, img.shape), 0, 255).astype(np.uint8), labels, 0
    return change


def _pixels(f: Callable[[np.ndarray], np.ndarray]) -> Callable[[np.ndarray, list, np.random.Generator], Shown]:
    def change(img, labels, rng):
        yield np.ascontiguousarray(f(img)), labels, 0
    return change


def _zoomed(z: float) -> Callable[[np.ndarray, list, np.random.Generator], Shown]:
    """A window 1/z of the photo around each of its first three dice, enlarged to the photo's size."""
    def change(img, labels, rng):
        h, w = img.shape[:2]
        cw, ch = int(w / z), int(h / z)
        for _, cx0, cy0, _, _ in labels[:3]:
            x0, y0 = int(np.clip(cx0 - cw / 2, 0, w - cw)), int(np.clip(cy0 - ch / 2, 0, h - ch))
            window = cv2.resize(img[y0:y0 + ch, x0:x0 + cw], (w, h), interpolation=cv2.INTER_LINEAR)
            inside = [(v, (cx - x0) * z, (cy - y0) * z, bw * z, bh * z) for v, cx, cy, bw, bh in labels
                      if x0 <= cx - bw / 2 and cx + bw / 2 <= x0 + cw and y0 <= cy - bh / 2 and cy + bh / 2 <= y0 + ch]
            touching = sum(cx + bw / 2 > x0 and cx - bw / 2 < x0 + cw and cy + bh / 2 > y0 and cy - bh / 2 < y0 + ch
                           for _, cx, cy, bw, bh in labels)
            yield window, inside, touching - len(inside)
    return change


def _scaled(f: float) -> Callable[[np.ndarray, list, np.random.Generator], Shown]:
    """The photo with ``f`` times the pixels on each side: another camera's resolution, or the dice nearer or farther."""
    def change(img, labels, rng):
        h, w = img.shape[:2]
        shown = cv2.resize(img, (round(w * f), round(h * f)), interpolation=cv2.INTER_AREA if f < 1 else cv2.INTER_LINEAR)
        yield shown, [(v, cx * f, cy * f, bw * f, bh * f) for v, cx, cy, bw, bh in labels], 0
    return change


def _farther(k: float) -> Callable[[np.ndarray, list, np.random.Generator], Shown]:
    """The photo shrunk to 1/k of its sides in a frame of its own size, its edges stretched out around it: the
    same dice photographed ``k`` times farther away, or small in a bigger camera's frame."""
    def change(img, labels, rng):
        h, w = img.shape[:2]
        sw, sh = round(w / k), round(h / k)
        x0, y0 = int(rng.integers(0, w - sw + 1)), int(rng.integers(0, h - sh + 1))
        small = cv2.resize(img, (sw, sh), interpolation=cv2.INTER_AREA)
        shown = cv2.copyMakeBorder(small, y0, h - sh - y0, x0, w - sw - x0, cv2.BORDER_REPLICATE)
        yield shown, [(v, cx * sw / w + x0, cy * sh / h + y0, bw * sw / w, bh * sh / h) for v, cx, cy, bw, bh in labels], 0
    return change


def _median_colour(img: np.ndarray) -> np.ndarray:
    """The photo's median colour, per channel: what a change fills the frame around the photo with."""
    return np.median(img.reshape(-1, img.shape[2]), axis=0)


def _turned(degrees: float) -> Callable[[np.ndarray, list, np.random.Generator], Shown]:
    """The photo turned ``degrees`` about its centre on a canvas that holds all of it, the new corners in the photo's
    median colour: a camera held askew, or the tray turned under it. Each die keeps its size (its box turns with it)."""
    def change(img, labels, rng):
        h, w = img.shape[:2]
        m = cv2.getRotationMatrix2D((w / 2, h / 2), degrees, 1.0)
        c, s = abs(m[0, 0]), abs(m[0, 1])
        nw, nh = int(np.ceil(w * c + h * s)), int(np.ceil(w * s + h * c))
        m[0, 2] += nw / 2 - w / 2
        m[1, 2] += nh / 2 - h / 2
        fill = tuple(float(v) for v in _median_colour(img))
        shown = cv2.warpAffine(img, m, (nw, nh), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_CONSTANT, borderValue=fill)
        yield shown, [(v, *(m @ np.array([cx, cy, 1.0])), bw, bh) for v, cx, cy, bw, bh in labels], 0
    return change


def _tilted(narrowing: float) -> Callable[[np.ndarray, list, np.random.Generator], Shown]:
    """The photo as a camera tilted towards its top edge sees it: that edge ``narrowing`` of the width shorter (a
    share per side), the bottom as it was; each die moved and sized as the warp takes its box's middle lines."""
    def change(img, labels, rng):
        h, w = img.shape[:2]
        src = np.float32([[0, 0], [w, 0], [w, h], [0, h]])
        dst = np.float32([[w * narrowing, 0], [w * (1 - narrowing), 0], [w, h], [0, h]])
        m = cv2.getPerspectiveTransform(src, dst)
        shown = cv2.warpPerspective(img, m, (w, h), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
        moved = []
        for v, cx, cy, bw, bh in labels:
            pts = cv2.perspectiveTransform(np.float32([[[cx, cy], [cx - bw / 2, cy], [cx + bw / 2, cy], [cx, cy - bh / 2], [cx, cy + bh / 2]]]), m)[0]
            moved.append((v, float(pts[0, 0]), float(pts[0, 1]), float(np.linalg.norm(pts[2] - pts[1])), float(np.linalg.norm(pts[4] - pts[3]))))
        yield shown, moved, 0
    return change


def _in_bigger_frame(width: int, height: int) -> Callable[[np.ndarray, list, np.random.Generator], Shown]:
    """The photo at its own scale somewhere in a bigger camera's frame (``width`` × ``height``), the rest the photo's
    median colour with a little grain: the same dice photographed by a phone from afar, a few hundredths of its
    frame's width."""
    def change(img, labels, rng):
        h, w = img.shape[:2]
        fill = _median_colour(img)
        frame = np.clip(fill + rng.normal(0, 4, (height, width, img.shape[2])), 0, 255).astype(np.uint8)
        x0, y0 = int(rng.integers(0, width - w + 1)), int(rng.integers(0, height - h + 1))
        frame[y0:y0 + h, x0:x0 + w] = img
        yield frame, [(v, cx + x0, cy + y0, bw, bh) for v, cx, cy, bw, bh in labels], 0
    return change


def _vignette(corner: float) -> Callable[[np.ndarray], np.ndarray]:
    """A cheap lens's dark corners: the light falling off with the square of the distance from the centre, the
    corners at ``corner`` of the centre's brightness."""
    def change(img: np.ndarray) -> np.ndarray:
        h, w = img.shape[:2]
        y, x = np.mgrid[0:h, 0:w].astype(np.float32)
        r2 = ((x - w / 2) / (w / 2)) ** 2 / 2 + ((y - h / 2) / (h / 2)) ** 2 / 2
        gain = 1.0 - (1.0 - corner) * r2
        return np.clip(img.astype(np.float32) * gain[..., None], 0, 255).astype(np.uint8)
    return change


def _glare(spots: int) -> Callable[[np.ndarray, list, np.random.Generator], Shown]:
    """A lamp's hot spots on a glossy table or tray: ``spots`` soft white blooms, each 5-15 % of the photo's long
    side across, anywhere (over a die too), brightening by up to 200 levels at their centres."""
    def change(img, labels, rng):
        h, w = img.shape[:2]
        y, x = np.mgrid[0:h, 0:w].astype(np.float32)
        light_added = np.zeros((h, w), np.float32)
        for _ in range(spots):
            cx, cy, r = rng.uniform(0, w), rng.uniform(0, h), rng.uniform(0.05, 0.15) * max(h, w)
            light_added += 200.0 * np.exp(-((x - cx) ** 2 + (y - cy) ** 2) / (2 * r * r))
        yield np.clip(img.astype(np.float32) + light_added[..., None], 0, 255).astype(np.uint8), labels, 0
    return change


def _shadow(darkness: float) -> Callable[[np.ndarray, list, np.random.Generator], Shown]:
    """A hard shadow (a hand, the cup, a lamp's edge) over one side of a straight line through the photo's centre
    at a random angle: the light there ``darkness`` of the rest, its edge crossing dice."""
    def change(img, labels, rng):
        h, w = img.shape[:2]
        y, x = np.mgrid[0:h, 0:w].astype(np.float32)
        a = rng.uniform(0, np.pi)
        shade = np.where((x - w / 2) * np.cos(a) + (y - h / 2) * np.sin(a) > 0, darkness, 1.0).astype(np.float32)
        yield np.clip(img.astype(np.float32) * shade[..., None], 0, 255).astype(np.uint8), labels, 0
    return change


def _quarter_turns(turns: int) -> Callable[[np.ndarray, list, np.random.Generator], Shown]:
    """The photo turned ``turns`` quarter turns clockwise (1, 2 or 3): a phone held on its side or upside down, its
    orientation tag lost. Each die's box turns with it."""
    if turns not in (1, 2, 3):
        raise ValueError(f"a photo is turned 1, 2 or 3 quarter turns, not {turns}")

    def change(img, labels, rng):
        h, w = img.shape[:2]
        if turns == 1:
            yield cv2.rotate(img, cv2.ROTATE_90_CLOCKWISE), [(v, h - cy, cx, bh, bw) for v, cx, cy, bw, bh in labels], 0
        elif turns == 2:
            yield cv2.rotate(img, cv2.ROTATE_180), [(v, w - cx, h - cy, bw, bh) for v, cx, cy, bw, bh in labels], 0
        else:
            yield cv2.rotate(img, cv2.ROTATE_90_COUNTERCLOCKWISE), [(v, cy, w - cx, bh, bw) for v, cx, cy, bw, bh in labels], 0
    return change


def _stretched(f: float) -> Callable[[np.ndarray, list, np.random.Generator], Shown]:
    """The photo ``f`` times wider than it was taken: a video frame shown at the wrong aspect, a photo resized
    carelessly; each die as wide with it."""
    def change(img, labels, rng):
        h, w = img.shape[:2]
        yield cv2.resize(img, (round(w * f), h), interpolation=cv2.INTER_LINEAR), [(v, cx * f, cy, bw * f, bh) for v, cx, cy, bw, bh in labels], 0
    return change


def _crumbs(n: int) -> Callable[[np.ndarray, list, np.random.Generator], Shown]:
    """A dirty table or tray: ``n`` crumbs and specks of dust (dark and light, their radius 1 pixel to a 300th of the
    photo's width) anywhere, over a die too, and six thin light scratches across the photo."""
    def change(img, labels, rng):
        out = img.copy()
        h, w = img.shape[:2]
        for _ in range(n):
            x, y, level = int(rng.integers(0, w)), int(rng.integers(0, h)), int(rng.choice([20, 235]))
            cv2.circle(out, (x, y), int(rng.integers(1, max(2, w // 300) + 1)), (level, level, level), -1, cv2.LINE_AA)
        for _ in range(6):
            ends = [(int(rng.integers(0, w)), int(rng.integers(0, h))) for _ in range(2)]
            cv2.line(out, ends[0], ends[1], (210, 210, 210), 1, cv2.LINE_AA)
        yield out, labels, 0
    return change


def _blotchy_noise(sigma: float) -> Callable[[np.ndarray, list, np.random.Generator], Shown]:
    """A small sensor's noise in dim light: colour blotches a few pixels wide (each channel's noise of ``sigma``
    levels drawn at a quarter of the size and enlarged), not the grain of ``noise``."""
    def change(img, labels, rng):
        h, w = img.shape[:2]
        blotches = cv2.resize(rng.normal(0, sigma, (h // 4 + 1, w // 4 + 1, 3)).astype(np.float32), (w, h), interpolation=cv2.INTER_CUBIC)
        yield np.clip(img.astype(np.float32) + blotches, 0, 255).astype(np.uint8), labels, 0
    return change


def _mirrored(img, labels, rng):
    """The photo mirrored left to right (a selfie camera, a scanner): every die's box with it."""
    w = img.shape[1]
    yield cv2.flip(img, 1), [(v, w - cx, cy, bw, bh) for v, cx, cy, bw, bh in labels], 0


CHANGES: dict[str, Callable[[np.ndarray, list, np.random.Generator], Shown]] = {
    "as photographed": _pixels(lambda i: i),
    "noise 8": _noise(8),
    "noise 12": _noise(12),
    "JPEG 25": _pixels(jpeg(25)),
    "grey": _pixels(grey),
    "dark 0.5": _pixels(light(0.5)),
    "bright 1.4": _pixels(light(1.4)),
    "blur 1.5": _pixels(blurred(1.5)),
    "warm light": _pixels(light((0.75, 0.95, 1.2))),
    "other table": lambda img, labels, rng: iter([(other_table(img, labels, rng), labels, 0)]),
    "7 other tables": lambda img, labels, rng: ((other_table(img, labels, np.random.default_rng(k)), labels, 0) for k in range(7)),
    "zoomed 2x": _zoomed(2.0),
    "zoomed 3x": _zoomed(3.0),
    "half the pixels": _scaled(0.5),
    "1.5x the pixels": _scaled(1.5),
    "2x farther": _farther(2.0),
    "3x farther": _farther(3.0),
    "turned 30°": _turned(30.0),
    "tilted": _tilted(0.15),
    "shaken": _pixels(lambda i: smear(i, 7, 30.0)),  # a hand-held camera's shake, the same smear training may add
    "dark corners": _pixels(_vignette(0.35)),
    "in a 5 MP frame": _in_bigger_frame(2560, 1920),
    "in a 12 MP frame": _in_bigger_frame(4032, 3024),
    "glare": _glare(3),
    "hard shadow": _shadow(0.45),
    "haze": _pixels(haze(0.5)),
    "shadows lifted": _pixels(tone(0.5)),
    "shadows deepened": _pixels(tone(2.0)),
    "sharpened": _pixels(sharpened(1.0)),
    "on its side": _quarter_turns(1),
    "upside down": _quarter_turns(2),
    "turned 45°": _turned(45.0),
    "stretched 4:3": _stretched(4 / 3),
    "green light": _pixels(light((0.8, 1.2, 0.8))),
    "pink light": _pixels(light((1.3, 0.7, 1.3))),
    "overexposed 2": _pixels(light(2.0)),
    "dark 0.25": _pixels(light(0.25)),
    "JPEG 10": _pixels(jpeg(10)),
    "blur 2.5": _pixels(blurred(2.5)),
    "noise 20": _noise(20),
    "upscaled from a quarter": _pixels(upscaled(4)),
    "upscaled from a sixth": _pixels(upscaled(6)),
    "defocused 0.4 %": _pixels(defocused(0.004)),
    "defocused 0.8 %": _pixels(defocused(0.008)),
    "crumbs and scratches": _crumbs(150),
    "blotchy colour noise 20": _blotchy_noise(20),
    "mirrored": _mirrored,
    "posterised 4 bits": _pixels(posterised(4)),
    "off a screen": _pixels(off_a_screen(4)),
}


def measure(model: Path | None, names: list[str], changes: list[str], reader_kind: str = "learned",
            root: Path | None = None, detector: Path | None = None, calibrated: bool = False) -> dict[str, dict[str, int]]:
    """Per change: dice, found, right, silently wrong and extra detections over the photos ``names`` of the
    dataset folder ``root`` (Byler's set when None); and the readings, and those acted on whose verdict is wrong
    (``wrong_verdict``): a die counts silently wrong where its reading's box misses the label even if every face is
    right, while the table scores the faces alone.

    ``calibrated`` (the staged reader): tray mode, as the product reads. Each photo is measured once as
    photographed, as ``calibrate --dice`` measures a table (``vision.calibrate.measure_die_side``), and every
    change of it is read told that side: the evening's light, camera and table change after the calibration, and
    a camera moved nearer or farther makes the dice another size than calibrated. A photo it cannot measure is left
    out of every row (counted in each as ``not_calibrated``)."""
    reader = reader_with_model(model, reader_kind, detector)
    if calibrated and reader_kind == "classic":
        raise ValueError(CLASSIC_HAS_NO_TRAY_MODE)
    if root is None:  # Byler's photos, with the train labels fixed by eye (``vision.dataset.photo``)
        byler = data.dataset_dir()
        photos = [photo(byler, name) for name in names]
    else:
        photos = [_any_photo(root, name) for name in names]
    sides = [_calibrated_side(reader, img, labels) for img, labels in photos] if calibrated else [None] * len(photos)
    out = {}
    for change in changes:
        row = dict.fromkeys(("dice", "found", "right", "silently_wrong", "extra", "readings", "wrong_verdicts"), 0)
        if calibrated:
            row["not_calibrated"] = sides.count(None)
        for k, ((img, labels), side) in enumerate(zip(photos, sides)):
            if calibrated and side is None:
                continue
            told = reader if side is None else reader.with_die_side(side)
            for image, inside, cut in CHANGES[change](img, labels, np.random.default_rng(k)):
                reading = reader_for(told, len(inside) + cut).read(image)
                acted_on = reading.status == "ok"
                matched = _match([d.box for d in reading.dice], inside)
                row["dice"] += len(inside)
                # a die cut by a zoomed window's edge is no extra detection (at most one reading each)
                extra = max(0, len(reading.dice) - sum(j is not None for j in matched) - cut)
                row["extra"] += extra
                row["silently_wrong"] += extra * acted_on
                row["readings"] += 1
                row["wrong_verdicts"] += acted_on and wrong_verdict(reading, inside, cut, matched)
                for (value, *_), j in zip(inside, matched):
                    right = j is not None and reading.dice[j].top == value
                    row["found"] += j is not None
                    row["right"] += right
                    row["silently_wrong"] += (not right) and acted_on
        out[change] = row
    return out


def is_shared_set(folder: Path) -> bool:
    """Whether ``folder`` is one of the shared labelled sets (in ``shared_datasets()``, or named ``real-dice-*``), whose
    ``test`` split is for evaluation only. The sets ``bench.eval_sets`` builds from val dice call their one split
    ``test`` too; those the sweep reads with ``--split test``."""
    folder = Path(folder).resolve()
    return folder.name.startswith("real-dice-") or folder.is_relative_to(Path(shared_datasets()).resolve())


def _calibrated_side(reader, img: np.ndarray, labels: list) -> float | None:
    """The die side ``calibrate --dice`` would store for the photo ``img`` of ``len(labels)`` dice, or None."""
    from vision.calibrate import measure_die_side

    side, _, _ = measure_die_side(img, reader_for(reader, len(labels)))
    return side


def wrong_verdict(reading: Reading, inside: list, cut: int, matched: list[int | None]) -> bool:
    """Whether ``reading`` gives the table other faces than the photo's ``inside`` dice show: its faces, in any
    order, are not theirs. Where the photo cuts dice at its edge (``cut``), whose faces no label gives, each die
    inside must be read right where its label is, and no die but the cut ones may be added.

    >>> from companion.core.reading import DieReading
    >>> die = lambda top, box: DieReading(top, top, 0.99, box)
    >>> ones = Reading("ok", (die(1, (0, 0, 10, 10)), die(3, (50, 50, 10, 10))))
    >>> wrong_verdict(ones, [(3, 0, 0, 8, 8), (1, 90, 90, 8, 8)], 0, [None, None])  # boxes elsewhere, faces right
    False
    >>> wrong_verdict(ones, [(3, 0, 0, 8, 8), (2, 90, 90, 8, 8)], 0, [None, None])
    True
    """
    if not cut:
        return sorted(d.top for d in reading.dice) != sorted(label[0] for label in inside)
    right = all(j is not None and reading.dice[j].top == label[0] for label, j in zip(inside, matched))
    return not right or len(reading.dice) > len(inside) + cut


def _any_photo(root: Path, name: str) -> tuple[np.ndarray, list]:
    """A photo of any folder in the shared layout and its labels in pixels, as ``evaluate`` reads them."""
    image = load_image(image_of(root, name))
    return image, yolo_labels(root / "labels" / f"{name}.txt", image.shape[1], image.shape[0])


def reader_with_model(model: Path | None, kind: str, detector: Path | None = None, cues: Path = CUE_DIR):
    """The reader that reads as the camera sees (the labels are the faces photographed): the product's default
    (``learned``, the staged reader) or the ``classic`` one, with ``model`` as its face classifier if given, and the
    staged reader with ``detector`` as its ONNX detector if given (a detector trained without the set read). A
    ``model`` of the staged reader's is read with its own number-dice and leaning cues, fit once into ``cues`` as the
    judge fits them (``judge.candidate_cues``): the shipped cues are fit on the shipped model only."""
    if kind == "classic":
        if detector is not None:
            raise ValueError(CLASSIC_HAS_NO_DETECTOR)
        return DiceReader(FaceClassifier(model), camera_view="above")
    own = candidate_cues(model, cues, leaning=True) if model is not None else {}
    return reader_of(model, detector, own, camera_view="above")


def flagged_share(row: dict[str, int]) -> float:
    """Of the dice missed or read wrong, the share the reading flags (1.0 when none).

    >>> flagged_share({"dice": 10, "right": 8, "silently_wrong": 1}), flagged_share({"dice": 3, "right": 3, "silently_wrong": 0})
    (0.5, 1.0)
    """
    bad = row["dice"] - row["right"]
    return 1.0 if bad == 0 else (bad - row["silently_wrong"]) / bad


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("model", nargs="?", type=Path, help="an .onnx file (default: the shipped model); the staged reader reads "
                    f"it with its own number-dice cue, fit once into {CUE_DIR} (four minutes) as the judge fits it")
    ap.add_argument("--reader", choices=("learned", "classic"), default="learned", help="the staged reader (the default) or the classic one")
    ap.add_argument("--detector", type=Path, help="with the staged reader: this .onnx detector instead of the shipped one "
                    "(one trained with --leave-out, to read a set the whole reader never saw)")
    ap.add_argument("--only", action="append", choices=list(CHANGES), help="this change only (repeatable)")
    ap.add_argument("--set", type=Path, help="another folder in the shared layout (images/, labels/, split.json) instead of Byler's held-out photos")
    ap.add_argument("--split", default="val", help="with --set: the split read (default val; never a shared set's test; "
                    "test for the sets bench.eval_sets builds)")
    ap.add_argument("--subset", help="with --set: only the photos its subsets.json lists under this name (rune55: tray, cup)")
    ap.add_argument("--limit", type=int, help="with --set: at most this many photos, spread over the split")
    ap.add_argument("--calibrated", action="store_true", help="tray mode: each photo measured once as photographed "
                    "(as calibrate --dice measures), every change read told that die side")
    args = ap.parse_args(argv)
    if args.calibrated and args.reader == "classic":
        ap.error(CLASSIC_HAS_NO_TRAY_MODE)
    if args.detector is not None and args.reader == "classic":
        ap.error(f"--detector replaces the staged reader's detector, and {CLASSIC_HAS_NO_DETECTOR}")
    if args.detector is not None and not args.detector.is_file():
        ap.error(f"there is no detector file at {args.detector}")
    cv2.setNumThreads(1)
    root, names = None, heldout_names(HERE / "validation.json")
    if args.set is not None:
        if args.split == "test" and is_shared_set(args.set):
            ap.error("the test split of a shared set is for evaluation only; read train or val")
        root, names = args.set, frame_names(args.set, args.split)
        if args.subset:
            subsets = json.loads((args.set / "subsets.json").read_text(encoding="utf-8"))
            if args.subset not in subsets:
                ap.error(f"{args.set} has no subset {args.subset!r} (it has: {', '.join(sorted(subsets))})")
            names = [n for n in names if n in set(subsets[args.subset])]
        if args.limit and len(names) > args.limit:
            names = [names[round(i * (len(names) - 1) / (args.limit - 1))] for i in range(args.limit)] if args.limit > 1 else names[:1]
    for change, row in measure(args.model, names, args.only or list(CHANGES), args.reader, root, args.detector, args.calibrated).items():
        print(f"{change:16s} dice {row['dice']:4d}  found {row['found']:4d}  right {row['right']:4d}  "
              f"silently wrong {row['silently_wrong']:2d}  extra {row['extra']:3d}  "
              f"wrong verdicts {row['wrong_verdicts']:2d} of {row['readings']:4d} readings  "
              f"wrong or missed flagged {flagged_share(row):.2f}"
              + (f"  photos not calibrated {row['not_calibrated']}" if "not_calibrated" in row else ""), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
