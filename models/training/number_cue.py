"""Screen a number-dice cue: one logistic layer on a face model's embedding that tells dice printed with their number
from pip dice, measured on dice it never saw.

Run with ``python -m models.training.number_cue [MODEL.onnx] [--json] [--quick]`` (default: the shipped model).
Number dice read as a sure one are the classifier's worst hazard among the looks no shared set holds
(``models.training.other_looks``), and teaching them to the classifier costs other dice by a seed's noise
(``docs/classifier-log.md``). A cue beside the classifier, like the leaning cue (``vision.leaning_cue``), would only
ever add a doubt. This fits one (``models.training.leaning_cue.fit``) on the embedding of one 40-px crop a die:
``data.numeral_style`` number dice against rendered game dice, dice with shaped marks and the shared sets' real
``train`` dice; then reports, per score line, the share flagged of what it never saw: ``other_looks``' number dice
(another drawer and other fonts), those of them read sure and wrong, its emblem ones, the real ``val`` dice read sure
and right, and rendered dice of bodies and marks it was not fit on. It writes nothing: no reader reads such a cue yet.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from models.training import data, other_looks, real_sets
from models.training.leaning_cue import fit
from vision.classifier import MARGIN, cut_crop
from vision.leaning_cue import LeaningCue
from vision.pipeline.classify import readable_crop
from vision.pipeline.decide import sure_confidence

#: The score lines the report reads the cue at.
LINES = (0.5, 0.7, 0.9)
#: Each source's seed: the cue's data and the held-out rendered dice never share one.
FIT_SEEDS = {"numerals": 777, "game": 778, "other_marks": 779}
HELD_OUT = (("game dice", None, 901), ("other bodies", data.other_body_style, 902), ("one faint mark", data.faint_mark_style, 903),
            ("other marks", data.other_marks_style, 904), ("numerals of the fit's drawer", data.numeral_style, 905))


def embedded(classifier: Any, crops: Any) -> tuple[np.ndarray, np.ndarray]:
    """The embedding (N × width) and the seven probabilities of each 40-px crop, 256 crops a network run."""
    crops = np.asarray(crops, np.uint8)
    runs = [classifier.probabilities_and_embedding(crops[i:i + 256]) for i in range(0, len(crops), 256)]
    return np.concatenate([e for _, e in runs]), np.concatenate([p for p, _ in runs])


def sure_faces(probabilities: np.ndarray, sure_at: float) -> tuple[np.ndarray, np.ndarray]:
    """Each crop's face (1-6) and whether it is read sure at ``sure_at``."""
    return probabilities[:, 1:].argmax(1) + 1, probabilities[:, 1:].max(1) >= sure_at


def crop_of_image(image: np.ndarray) -> np.ndarray:
    """One image holding one die, cut to the classifier's 40-px crop as ``classify`` cuts it first."""
    image = readable_crop(image)
    h, w = image.shape[:2]
    return cut_crop(image, w / 2, h / 2, min(h, w) / MARGIN)


def real_train_crops(per_subset: int) -> list[np.ndarray]:
    """The real ``train`` dice of the shared frame sets (``per_subset`` photos of each), cut on their label boxes."""
    out = []
    for set_name, subsets in real_sets.FRAME_SETS.items():
        for subset in subsets:
            for frame in real_sets.frames(set_name, "train", subset)[:per_subset]:
                out += [cut_crop(frame.image, cx, cy, max(w, h)) for _, cx, cy, w, h in frame.labels]
    return out


def fit_cue(classifier: Any, per_source: int, per_subset: int) -> tuple[LeaningCue, dict[str, int]]:
    """The cue fit on ``per_source`` drawn number dice against as many game dice, half as many shaped-mark dice and
    the real ``train`` dice; and how many crops of each it saw."""
    numerals, _ = data.synth_face_crops(per_source, np.random.default_rng(FIT_SEEDS["numerals"]), data.numeral_style)
    game, _ = data.synth_face_crops(per_source, np.random.default_rng(FIT_SEEDS["game"]))
    marks, _ = data.synth_face_crops(per_source // 2, np.random.default_rng(FIT_SEEDS["other_marks"]), data.other_marks_style)
    real = real_train_crops(per_subset)
    parts = [embedded(classifier, x)[0] for x in (numerals, game, marks, real)]
    x = np.concatenate(parts)
    y = np.concatenate([np.ones(len(parts[0]), np.int64), np.zeros(len(x) - len(parts[0]), np.int64)])
    counts = {"numerals": len(numerals), "game dice": len(game), "other marks": len(marks), "real train dice": len(real)}
    return fit(x, y, getattr(classifier, "model_id", "")), counts


def _flagged(scores: np.ndarray, among: np.ndarray | None = None) -> dict[str, Any]:
    chosen = scores if among is None else scores[among]
    return {"n": int(len(chosen)), **{f"at {line}": int((chosen > line).sum()) for line in LINES}}


def measure(cue: LeaningCue, classifier: Any, min_confidence: float, per_face: int, per_kind: int, rendered: int) -> dict[str, Any]:
    """Per group of crops the cue never saw: how many, and how many it flags at each of ``LINES``."""
    sure_at = sure_confidence(min_confidence)
    out: dict[str, Any] = {}
    numbers = [c for look in other_looks.number_dice(per_face).values() for c in look]
    e, p = embedded(classifier, [crop_of_image(image) for _, image, _ in numbers])
    values = np.array([v for *_, v in numbers])
    scores = cue.scores(e)
    seen, sure = sure_faces(p, sure_at)
    out["other_looks number dice"] = _flagged(scores)
    out["  of them read sure and wrong"] = _flagged(scores, sure & (seen != values))
    ones = [c for look in other_looks.emblem_ones(per_kind).values() for c in look]
    out["other_looks emblem ones"] = _flagged(cue.scores(embedded(classifier, [crop_of_image(image) for _, image, _ in ones])[0]))
    for name, (x, y) in real_sets.val_crops().items():
        e, p = embedded(classifier, x)
        seen, sure = sure_faces(p, sure_at)
        out[f"{name}, read sure and right"] = _flagged(cue.scores(e), sure & (seen == y))
    for name, style, seed in HELD_OUT:
        x, y = data.synth_face_crops(rendered, np.random.default_rng(seed), style)
        e, p = embedded(classifier, x)
        seen, sure = sure_faces(p, sure_at)
        out[f"rendered {name}, read sure and right"] = _flagged(cue.scores(e), sure & (seen == y) & (y > 0))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("model", nargs="?", type=Path, help="a face model (.onnx; default: the shipped one)")
    ap.add_argument("--json", action="store_true", help="one JSON object: the crops fit on, and each group's flags")
    ap.add_argument("--quick", action="store_true", help="a few hundred crops of each kind (a test's size, not a measurement)")
    args = ap.parse_args(argv)
    from companion.app.settings import Settings
    from vision.reader import load_reader

    if args.model is not None and not args.model.is_file():
        ap.error(f"there is no model file at {args.model}")
    try:
        real_sets.shared_root()
    except FileNotFoundError as exc:
        ap.error(f"{exc}: the cue is fit and read on their dice")
    cv2.setNumThreads(1)
    settings = Settings.defaults()
    if args.model is not None:
        settings = settings.with_overrides(reader__model=str(args.model))
    reader = load_reader(settings, threads=1)
    if not hasattr(reader.classifier, "probabilities_and_embedding"):
        ap.error(f"the face model {reader.model_id} gives no embedding to fit a cue on")
    sizes = dict(per_source=300, per_subset=20, per_face=2, per_kind=6, rendered=300) if args.quick else \
        dict(per_source=4000, per_subset=400, per_face=20, per_kind=60, rendered=1500)
    cue, counts = fit_cue(reader.classifier, sizes["per_source"], sizes["per_subset"])
    report = {"model": reader.model_id, "fit on": counts,
              "flagged": measure(cue, reader.classifier, reader.min_confidence, sizes["per_face"], sizes["per_kind"], sizes["rendered"])}
    if args.json:
        print(json.dumps(report, indent=1))
        return 0
    print(f"{reader.model_id}: a cue fit on " + ", ".join(f"{n} {k}" for k, n in counts.items()))
    print(f"{'crops it never saw':52} {'n':>5}  " + "  ".join(f"flagged at {line}" for line in LINES))
    for name, row in report["flagged"].items():
        print(f"{name:52} {row['n']:>5}  " + "  ".join(f"{row[f'at {line}']:>13}" for line in LINES))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
