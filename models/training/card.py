"""Measure the shipped model and write the figures part of ``models/MODEL_CARD.md``.

Run after training: ``python -m models.training.card``. It reads every set the
bench reads as ``elephants-bluff evaluate`` reads it (each shared ``val`` split,
Byler's ``test`` split, the sets ``bench.eval_sets`` builds), evaluates on a fresh
synthetic test set (seeds never used in training), on the real ``test`` split
(crops and whole frames, via the bench's own functions) and lists the ``train``
labels the model confidently disagrees with (possible label noise, to check by
eye). It needs no torch. The card only reports: no choice is made from these
figures (``models.training.judge`` reads the sets a choice may read).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from companion.core.settings import Settings
from models.training import data
from bench import reader as bench
from bench.reading import CHECKED_SETS, SETS, accuracy
from vision.classifier import cut_crop
from vision.dataset import photo
from vision.reader import load_reader

CARD = Path(__file__).resolve().parents[1] / "MODEL_CARD.md"
MARK_START = "<!-- figures: written by python -m models.training.card -->"
MARK_END = "<!-- end of figures -->"


def _matrix(m: list[list[int]]) -> str:
    lines = ["| true \\ read | missed | 1 | 2 | 3 | 4 | 5 | 6 |", "|---|---|---|---|---|---|---|---|"]
    for v, row in enumerate(m, 1):
        lines.append(f"| {v} | " + " | ".join(str(x) for x in row) + " |")
    return "\n".join(lines)


def _per_value(s: dict) -> str:
    return " · ".join(f"{v}: {a:.1%}" for v, a in s["per_value"].items())


def synthetic_crops(reader, n: int = 1200) -> dict:
    rng = np.random.default_rng(20261121)  # a seed training never used
    x, y = data.synth_face_crops(n, rng)
    p = reader.classifier.probabilities(x)
    pred = (p[:, 1:].argmax(1) + 1).tolist()
    conf = p[np.arange(len(p)), np.array(pred)]
    return bench._scores(y.tolist(), pred, (conf < reader.min_confidence).tolist())


#: What each of the bench's sets is, in the card's words.
SET_NAMES = {
    "rune55_val": "rune55 `val` (cup and tray photos)",
    "rune55_val_checked_labels": "rune55 `val` by its labels checked by eye",
    "skovy_val": "skovy `val` (webcam frames)",
    "skovy_val_crops": "skovy `val` crops",
    "patterson_val_crops": "patterson `val` crops",
    "byler_test": "Byler `test` (read for the card, never for a choice)",
    "rendered": "rendered test frames",
    "cup_one": "real `val` dice pasted into cup frames, one",
    "cup_three": "the same, three in a row",
    "big": "the same, close up",
    "mid": "the same, in a phone-sized photo",
    "far": "the same, far off",
    "many": "the same, many to a frame",
    "crops_whole": "real `val` crops read as whole frames",
}


def every_set(reader, sets: list[tuple[str, Path, str | None, bool]] = SETS,
              checked: list[tuple[str, Path, str | None, dict]] = CHECKED_SETS) -> list[str]:
    """One table line a set (``sets``, then ``checked``, read by the labels found wrong by eye): ``evaluate``'s counts,
    as the bench and ``judge`` read them; a set not there says so."""
    lines = ["| set | dice | right | silently wrong | flagged | right without a doubt | photos all right |",
             "| --- | --- | --- | --- | --- | --- | --- |"]
    for name, counts in accuracy(reader, False, sets, checked).items():
        if isinstance(counts, str):
            lines.append(f"| {SET_NAMES.get(name, name)} | {counts} | | | | | |")
            continue
        lines.append(f"| {SET_NAMES.get(name, name)} | {counts['dice']} | {counts['right']} ({counts['accuracy']:.2%}) | "
                     f"{counts['silently_wrong']} | {counts['flagged']} | {counts['right_without_doubt']} | "
                     f"{counts['photos_all_right']} of {counts['photos']} |")
    return lines


def label_noise(reader) -> list[str]:
    root = data.dataset_dir()
    found = []
    for name in data.split_names()["train"]:
        img, labels = photo(root, name, fixes=False)
        for value, cx, cy, w, h in labels:
            crops = np.array([cut_crop(img, cx, cy, max(w, h) * 0.85, a) for a in (0, 90, 180, 270)], np.uint8)
            p = reader.classifier.probabilities(crops).mean(0)
            v = int(p[1:].argmax()) + 1
            if v != value and p[v] > 0.9:
                found.append(f"`{name}` die at cx {cx / img.shape[1]:.4f} cy {cy / img.shape[0]:.4f}: labelled {value}, model reads {v} ({p[v]:.2f})")
    return found


def picture(reader, path: Path = Path(__file__).resolve().parents[2] / "docs" / "reader-annotated.jpg") -> None:
    """The README's picture: a simulated frame (from below) with the reader's boxes and values."""
    import cv2

    from vision.images import encode_jpeg
    from vision.simtable import render_table

    frame, _ = render_table([2, 6, 3], np.random.default_rng(2026), touching=0.5)
    out = reader.annotate(frame, reader.read(frame))
    path.parent.mkdir(exist_ok=True)
    path.write_bytes(encode_jpeg(cv2.resize(out, (800, 600), interpolation=cv2.INTER_AREA), 85))


def main() -> int:
    reader = load_reader(Settings.defaults())
    picture(reader)
    sets = every_set(reader)
    test = bench.test_split(data.dataset_dir())
    crops = bench.real_crops(reader, test)
    frames = bench.real_frames(reader, test)
    synth = synthetic_crops(reader)
    table = bench.synthetic(reader, 1)
    noise = label_noise(reader)
    out = [MARK_START, "", f"Model id: `{reader.model_id}` ({reader.classifier.path.stat().st_size} bytes); `reader.min_confidence` = {reader.min_confidence}.", ""]
    out += ["### Every set, read as `elephants-bluff evaluate` reads it (the staged reader, whole frames as seen)", "",
            "Right counts the face read, sure or not; flagged dice are wrong or missed dice the reading doubts (the table "
            "confirms them, R14); silently wrong dice are read sure and wrong.", "", *sets, ""]
    out += ["### Synthetic test set (1,200 fresh rendered crops, seed never used in training)", "",
            f"Per die: {synth['accuracy']:.2%}. Per value: {_per_value(synth)}.", "", _matrix(synth["confusion_rows_true_cols_pred0to6"]), ""]
    out += ["### Synthetic table (216 ordered outcomes, one rendered layout each, whole frames)", "",
            f"ok and right: {table['ok_and_right']}, uncertain: {table['uncertain']}, ok but wrong: {table['ok_but_wrong']}.", "",
            _matrix(table["dice"]["confusion_rows_true_cols_pred0to6"]), ""]
    m = crops["model"]
    out += ["### Real photos, `test` split: crops cut around each labelled box (308 dice)", "",
            f"Per die: {m['accuracy']:.2%} (baseline mark counting: {crops['baseline']['accuracy']:.2%}). Per value: {_per_value(m)}.",
            f"Wrong dice flagged by low confidence: {m['wrong_flagged_share']}.", "", _matrix(m["confusion_rows_true_cols_pred0to6"]), ""]
    f = frames["model"]
    out += ["### Real photos, `test` split: whole frames read as seen (`read --as-seen`)", "",
            f"Per die (a die not found counts as wrong): {f['accuracy']:.2%}; dice found: {f['found_share']:.2%}; extra detections: {f['extra_detections']}. "
            f"Per value: {_per_value(f)}. (Baseline on the same finder: {frames['baseline']['accuracy']:.2%}.)", "",
            _matrix(f["confusion_rows_true_cols_pred0to6"]), ""]
    out += ["### Possible label noise in `train` (model confident, label differs)", ""]
    out += [f"- {n}" for n in noise] or ["- none found at confidence > 0.9"]
    out += ["", MARK_END]
    text = CARD.read_text() if CARD.exists() else MARK_START + "\n" + MARK_END + "\n"
    head, _, rest = text.partition(MARK_START)
    _, _, tail = rest.partition(MARK_END)
    CARD.write_text(head + "\n".join(out) + tail)
    print(json.dumps({"crops": m["accuracy"], "frames": f["accuracy"], "synthetic": synth["accuracy"], "noise": len(noise)}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
