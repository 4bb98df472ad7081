"""Read dice of looks no shared set holds, drawn here: dice printed with their number, and ones printed as an emblem.

Run with ``python -m models.training.other_looks [MODEL.onnx] [--json]`` (default: the shipped model). A table may
bring other dice than the game's: number dice (a lone digit in the middle of each face) and pip dice whose one is a
star, a diamond, a ring, a heart or a big red pip. Neither is in the shared sets, so they are drawn by this module's
own code (plain OpenCV shapes and Hershey digits on a flat die, turned any way on a grey ground, 40-96 px crops;
not ``vision.simtable``, so a model taught the renderer's number or shaped dice is still read on dice it was not
drawn from). Each crop is read by ``classify`` and counted as ``models.training.crop_robustness`` counts a crop:
right, silently wrong (sure and wrong: the failure the reader must not have) and flagged (not sure). The seeds are
fixed, so two models are read on the same dice.

With ``--photos`` the same dice are also read whole: each alone in a phone-sized cup photo as the built set ``mid``
is made (``bench.eval_sets.mid``: 1280 x 960, the die 12-33 % of the height, JPEG 92; seed ``PHOTO_SEED``), read by
``vision.evaluate`` as ``elephants-bluff evaluate`` reads a folder (eight minutes more).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from models.training.crop_robustness import measure, row_line

#: Number dice: (name, body, ink) in BGR.
NUMBER_LOOKS = (("pink", (200, 120, 240), (60, 20, 90)), ("white", (235, 235, 235), (20, 20, 20)),
                ("black", (25, 25, 25), (235, 235, 235)), ("red", (40, 40, 200), (240, 240, 240)),
                ("blue", (200, 90, 30), (250, 250, 250)))
NUMBER_FONTS = (cv2.FONT_HERSHEY_SIMPLEX, cv2.FONT_HERSHEY_DUPLEX, cv2.FONT_HERSHEY_COMPLEX, cv2.FONT_HERSHEY_TRIPLEX)
#: The one's emblem on a pip die.
EMBLEMS = ("star", "diamond", "ring", "big red pip", "heart")
NUMBER_SEED, EMBLEM_SEED = 7, 8
#: The seed of the photos ``--photos`` pastes the dice into (the one the first such count used, docs/classifier-log.md).
PHOTO_SEED = 11


def _on_ground(die: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """The die's square (1/1.3 of the crop) turned any way on a flat grey ground, with a little grain."""
    size = die.shape[0]
    img = np.full((size, size, 3), rng.integers(60, 180, 3), np.uint8)
    side = int(size / 1.3)
    start = (size - side) // 2
    mask = np.zeros((size, size), np.uint8)
    mask[start:start + side, start:start + side] = 1
    turn = cv2.getRotationMatrix2D((size / 2, size / 2), float(rng.uniform(0, 360)), 1.0)
    die = cv2.warpAffine(die, turn, (size, size))
    mask = cv2.warpAffine(mask, turn, (size, size), flags=cv2.INTER_NEAREST)
    img[mask > 0] = die[mask > 0]
    return np.clip(img + rng.normal(0, 3, img.shape), 0, 255).astype(np.uint8)


def number_die(value: int, rng: np.random.Generator, size: int, body: tuple[int, int, int], ink: tuple[int, int, int],
               font: int) -> np.ndarray:
    """A crop of a die printed with ``value`` as a digit, centred; a six underlined, as number dice tell it from a nine."""
    die = np.zeros((size, size, 3), np.uint8)
    die[:] = body
    thickness = max(2, size // 20)
    scale = size / 40 * rng.uniform(0.8, 1.2)
    (w, h), _ = cv2.getTextSize(str(value), font, scale, thickness)
    x, y = int(size / 2 - w / 2), int(size / 2 + h / 2)
    cv2.putText(die, str(value), (x, y), font, scale, ink, thickness, cv2.LINE_AA)
    if value == 6:
        cv2.line(die, (x, y + 4), (x + w, y + 4), ink, 2)
    return _on_ground(die, rng)


def emblem_one(kind: str, rng: np.random.Generator, size: int, light: bool) -> np.ndarray:
    """A crop of a die showing one, its single mark an emblem of ``kind`` (``EMBLEMS``)."""
    body, ink = ((235, 235, 235), (20, 20, 20)) if light else ((30, 30, 30), (235, 235, 235))
    die = np.zeros((size, size, 3), np.uint8)
    die[:] = body
    c, r = size / 2, size / 1.3 * rng.uniform(0.18, 0.3)
    if kind == "star":
        pts = [(c + (r if k % 2 == 0 else r * 0.45) * np.cos(np.pi / 2 + k * np.pi / 5),
                c - (r if k % 2 == 0 else r * 0.45) * np.sin(np.pi / 2 + k * np.pi / 5)) for k in range(10)]
        cv2.fillPoly(die, [np.int32(pts)], ink, cv2.LINE_AA)
    elif kind == "diamond":
        cv2.fillPoly(die, [np.int32([(c, c - r), (c + r * 0.7, c), (c, c + r), (c - r * 0.7, c)])], ink, cv2.LINE_AA)
    elif kind == "ring":
        cv2.circle(die, (int(c), int(c)), int(r), ink, max(2, int(r * 0.3)), cv2.LINE_AA)
    elif kind == "big red pip":
        cv2.circle(die, (int(c), int(c)), int(r * 1.2), (40, 40, 200), -1, cv2.LINE_AA)
    else:  # a heart
        for dx in (-0.45, 0.45):
            cv2.circle(die, (int(c + dx * r), int(c - r * 0.2)), int(r * 0.5), ink, -1, cv2.LINE_AA)
        cv2.fillPoly(die, [np.int32([(c - r * 0.92, c - r * 0.05), (c + r * 0.92, c - r * 0.05), (c, c + r)])], ink, cv2.LINE_AA)
    return _on_ground(die, rng)


def number_dice(per_face: int = 20) -> dict[str, list[tuple[str, np.ndarray, int]]]:
    """Each number look's crops, ``per_face`` of each face, at 40, 64 or 96 px, the fonts in turn."""
    rng = np.random.default_rng(NUMBER_SEED)
    return {name: [(f"{name}-{v}-{i}", number_die(v, rng, int(rng.choice([40, 64, 96])), body, ink, NUMBER_FONTS[i % 4]), v)
                   for v in range(1, 7) for i in range(per_face)] for name, body, ink in NUMBER_LOOKS}


def emblem_ones(per_kind: int = 60) -> dict[str, list[tuple[str, np.ndarray, int]]]:
    """Each emblem's ones, ``per_kind`` of them, light and dark dice, at 40, 64 or 96 px."""
    rng = np.random.default_rng(EMBLEM_SEED)
    out: dict[str, list[tuple[str, np.ndarray, int]]] = {}
    for kind in EMBLEMS:
        out[kind] = []
        for i in range(per_kind):
            light = bool(rng.random() < 0.6)
            out[kind].append((f"{kind}-{i}", emblem_one(kind, rng, int(rng.choice([40, 64, 96])), light), 1))
    return out


def read(reader: Any, per_face: int = 20, per_kind: int = 60) -> dict[str, dict[str, int]]:
    """Per look (``number dice, pink`` ..., ``emblem one, star`` ...) and for each family together: crops, right,
    silently wrong, flagged."""
    out: dict[str, dict[str, int]] = {}
    for family, looks in (("number dice", number_dice(per_face)), ("emblem one", emblem_ones(per_kind))):
        total = dict.fromkeys(("crops", "right", "silently_wrong", "flagged"), 0)
        for name, crops in looks.items():
            row = measure(reader, crops, ["as cropped"])["as cropped"]
            out[f"{family}, {name}"] = row
            total = {k: total[k] + row[k] for k in total}
        out[family] = total
    return out


def as_patch(crop: np.ndarray) -> np.ndarray:
    """A crop's die (``_on_ground``: its square 1/1.3 of the crop) cut with the built sets' 12 % margin."""
    size = crop.shape[0]
    side = int(round(size / 1.3 * 1.12))
    start = (size - side) // 2
    return crop[start:start + side, start:start + side]


def read_photos(reader: Any, per_face: int = 20, per_kind: int = 60) -> dict[str, dict[str, int]]:
    """Per family, each die alone in a cup photo (``bench.eval_sets.mid``) read whole by ``vision.evaluate``: photos,
    right, silently wrong, flagged."""
    import tempfile

    from bench import eval_sets
    from vision.evaluate import evaluate

    out: dict[str, dict[str, int]] = {}
    for family, looks in (("number dice", number_dice(per_face)), ("emblem one", emblem_ones(per_kind))):
        dice = [(value, as_patch(crop)) for crops in looks.values() for _, crop, value in crops]
        with tempfile.TemporaryDirectory() as folder:
            eval_sets.mid(Path(folder), dice, seed=PHOTO_SEED)
            report = evaluate(Path(folder), reader)
        out[f"{family}, whole photos"] = {"crops": report["dice"], "right": report["right"],
                                          "silently_wrong": report["silently_wrong"], "flagged": report["flagged"]}
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("model", nargs="?", type=Path, help="a face model (.onnx; default: the shipped one)")
    ap.add_argument("--json", action="store_true", help="one JSON object, look by look")
    ap.add_argument("--photos", action="store_true", help="also read each die alone in a phone-sized cup photo")
    args = ap.parse_args(argv)
    from models.training.judge import reader_of

    if args.model is not None and not args.model.is_file():
        ap.error(f"there is no model file at {args.model}")
    cv2.setNumThreads(1)
    reader = reader_of(args.model)
    report = read(reader)
    if args.photos:
        report.update(read_photos(reader))
    if args.json:
        print(json.dumps(report, indent=1))
        return 0
    for look, row in report.items():
        print(row_line(look, row, 28))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
