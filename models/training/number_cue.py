"""Fit the number-dice cue (``vision.number_cue``) on the face model's embedding, and measure it on dice it never saw.

Run with ``python -m models.training.number_cue [MODEL.onnx] [--out models/number-cue.npz] [--json] [--quick] [--things N]``
(default: the shipped model and its cue; four minutes on one core; seeded, so the same command makes the same file
and the same table on one machine; another CPU's kernels move its weights in the fifth decimal, and the shipped
cue refit so read the same table to the die). Number dice read as a sure one are the classifier's worst hazard among the looks no shared set
holds (``models.training.other_looks``), and teaching them to the classifier cost other dice by more than a seed's
noise (``docs/classifier-log.md``). The cue is one logistic layer (``models.training.leaning_cue.fit``) on the
embedding of one 40-px crop a die, cut as the reader cuts it: ``data.numeral_style`` number dice (a third of them cut
tight, as a detector boxing the digit alone cuts them) against rendered game dice, dice with shaped marks, the shared
sets' real ``train`` dice (Byler's fitted photos, rune55's and skovy's frames, the hand-sorted crops; on their own
photos, and pasted into cup photos as the judged sets paste the ``val`` dice) and the game's dice as the staged
reader boxes them on rendered tray frames, at each of the cue's cuts. It then reports, per score line and at the reader's own rule
(``doubted``: the line less ``CUE_MARGIN``), the share flagged of what it never saw: ``other_looks``' number dice
(another drawer and other fonts), those of them read sure and wrong, its emblem ones, the real ``val`` dice and
Byler's held-out photos read sure and right, and rendered dice of bodies and marks it was not fit on.
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
from vision.classifier import CROP, MARGIN, cut_crop
from vision.number_cue import CUE_MARGIN, CUE_SPANS, NumberCue, shipped_cue_path
from vision.pipeline.classify import readable_crop
from vision.pipeline.decide import sure_confidence

#: The score lines the report reads the cue at.
LINES = (0.5, 0.7, 0.9, 0.95)
#: The cue's line. Less its margin (``CUE_MARGIN``) it doubts, at any of the reader's cuts, none of the 419 real
#: ``val`` dice and Byler's held-out ones read sure and right and 3 of 1,358 rendered game dice; a score of 0.7, 12
#: and 21 (docs/READING.md, "Number dice").
THRESHOLD = 0.95
#: A second share of each kind of die is cut this tight (shares of its side): a detector may box a big digit alone
#: (half the die or so), as it boxes one mark of a pip die, and the cue must tell the two apart there too.
TIGHT = (0.45, 0.8)
#: The first seed of the rendered tray frames the fit reads (``table_crops``): never the bench's simulated table (one
#: stream from seed 216), its leaning frames (from 20,000), the leaning cue's (50,000 and 70,000) nor the tests' (90,000).
TABLE_SEED = 80_000
#: Each source's seed: the cue's data and the held-out rendered dice never share one.
FIT_SEEDS = {"numerals": 777, "game": 778, "other_marks": 779, "real": 780, "pasted": 781, "things": 782}
#: The real ``train`` dice pasted into cup photos are this share of the photo's height (the judged sets' close-up to
#: far-off range).
PASTED_FILL = (0.04, 0.35)
#: Things that are not dice of the fit's drawer, from another seed than the fit's.
HELD_OUT_THINGS_SEED = 906
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
    return cut_crop(*_crop_die(image))


def _crop_die(image: np.ndarray) -> tuple[np.ndarray, float, float, float]:
    """One image of one die as the reader's crop look takes it: enlarged where small, the die filling it."""
    image = readable_crop(image)
    h, w = image.shape[:2]
    return image, w / 2, h / 2, min(h, w) / MARGIN


def _byler_fitted_and_held_out() -> tuple[list[str], list[str]]:
    """Byler's ``train`` photos the shipped model was fit on, and those held out (``data.fit_and_held_out``)."""
    return data.fit_and_held_out(json.loads((real_sets.shared_root() / "real-dice-byler" / "split.json").read_text())["train"])


def real_train_crops(per_subset: int) -> list[np.ndarray]:
    """The real ``train`` dice of the shared sets (``per_subset`` photos or crops of each): the frame sets' dice and
    Byler's fitted photos' cut on their label boxes, each also once at a jittered size and place (a detector's box is
    an estimate), and the hand-sorted crops as the crop look cuts them."""
    rng = np.random.default_rng(FIT_SEEDS["real"])
    frames = real_sets.byler_frames(_byler_fitted_and_held_out()[0][:per_subset])
    for set_name, subsets in real_sets.FRAME_SETS.items():
        for subset in subsets:
            frames += real_sets.frames(set_name, "train", subset)[:per_subset]
    out = []
    for frame in frames:
        for _, cx, cy, w, h in frame.labels:
            out += [cut_crop(frame.image, cx, cy, max(w, h)), real_sets.jittered(frame.image, cx, cy, max(w, h), rng),
                    real_sets.jittered(frame.image, cx, cy, max(w, h), rng, TIGHT)]
    for set_name in real_sets.CROP_SETS:
        out += [crop_of_image(image) for image, _ in real_sets.hand_crops(set_name, "train")[:per_subset]]
    return out


def byler_held_out() -> list[real_sets.Frame]:
    """Byler's held-out ``train`` photos (never fit on by the shipped model nor the cue)."""
    return real_sets.byler_frames(_byler_fitted_and_held_out()[1])


def at_spans(classifier: Any, cue: NumberCue, dice: list[tuple[np.ndarray, float, float, float]]) -> tuple[np.ndarray, np.ndarray]:
    """Per die (image, centre x, y, side), the cue's highest score over the reader's cuts (``CUE_SPANS``) and the
    classifier's probabilities at its side, as ``flag_numbers_by_look`` reads a die the detector boxed there."""
    cut = np.array([cut_crop(image, cx, cy, side * span) for image, cx, cy, side in dice for span in CUE_SPANS], np.uint8)
    e, p = embedded(classifier, cut)
    spans = len(CUE_SPANS)
    return cue.scores(e).reshape(-1, spans).max(axis=1), p[::spans]


def pasted_train_crops(per_subset: int) -> np.ndarray:
    """The real ``train`` dice pasted alone into cup photos as the judged sets paste the ``val`` dice
    (``bench.eval_sets.one_a_frame``: 1280 x 960, the die ``PASTED_FILL`` of the height), each cut on its box at the
    cue's spans (``CUE_SPANS``) and once ``TIGHT``: a real die in another photo than its own, which the cue must not
    take for a number die (``per_subset`` dice of each set at most)."""
    from bench import eval_sets

    rng = np.random.default_rng(FIT_SEEDS["pasted"])
    dice = eval_sets.real_val_dice(real_sets.shared_root(), split="train")
    dice = [dice[i] for i in rng.permutation(len(dice))[:3 * per_subset]]
    out = []
    for image, (_, cx, cy, w, h) in eval_sets.one_a_frame(dice, (1280, 960), PASTED_FILL, FIT_SEEDS["pasted"]):
        side = max(w, h)
        out += [cut_crop(image, cx, cy, side * span) for span in CUE_SPANS]
        out.append(real_sets.jittered(image, cx, cy, side, rng, TIGHT))
    return np.array(out, np.uint8).reshape(-1, CROP, CROP, 3)


def table_crops(base: Any, frames: int) -> np.ndarray:
    """The game's dice as the staged reader boxes them on rendered tray frames from below (``frames`` of them, seeds
    from ``TABLE_SEED``), read knowing nothing, the die's size and the whole tray mode: every die any look keeps, cut
    at each of the cue's spans (``CUE_SPANS``), as ``flag_numbers_by_look`` reads it, neighbours and all."""
    from vision.pipeline.crop import crops
    from vision.simtable import render_calibrated_table

    looked: list = []
    # without any cue: the looks a reading takes depend on its doubts, as ``models.training.leaning_cue`` collects
    reader = type(base)(base.classifier, base.proposer, **base.options(), on_dice=lambda prepared, dice: looked.append((prepared, dice)))
    out = []
    for seed in range(TABLE_SEED, TABLE_SEED + frames):
        rng = np.random.default_rng(seed)
        frame, placed, empty = render_calibrated_table([int(v) for v in rng.integers(1, 7, 3)], rng, view="below")
        looked.clear()
        sized = reader.with_die_side(placed[0].side)
        for r in (reader, sized, sized.with_empty_tray(empty)):
            r.read(frame)
        for prepared, dice in looked:
            out += [crops(prepared.bgr, [d.proposal for d in dice], span) for span in CUE_SPANS]
    return np.concatenate(out) if out else np.zeros((0, CROP, CROP, 3), np.uint8)


def fit_cue(base: Any, per_source: int, per_subset: int, table_frames: int, classifier_id: str,
            things: int = 0) -> tuple[NumberCue, dict[str, int]]:
    """The cue on the embedding of ``base``'s classifier (a staged reader), fit on ``per_source`` drawn number dice
    against as many game dice, half as many shaped-mark dice and the real ``train`` dice, each kind also cut
    ``TIGHT`` (half as many drawn again, every real die once more), and the game's dice as the reader boxes them on
    ``table_frames`` rendered tray frames; and how many crops of each it saw. ``things``: as many crops of things
    that are not dice (``data.table_thing_crops``) doubted beside the number dice (0, the shipped cue's recipe:
    docs/classifier-log.md, "A cue for things that are not dice", has why)."""
    def drawn(n: int, seed: int, style: Any = None) -> np.ndarray:
        rng = np.random.default_rng(seed)
        return np.concatenate([data.synth_face_crops(n, rng, style)[0], data.synth_face_crops(n // 2, rng, style, TIGHT)[0]])

    numerals = drawn(per_source, FIT_SEEDS["numerals"], data.numeral_style)
    things_drawn = data.table_thing_crops(things, np.random.default_rng(FIT_SEEDS["things"]))[0]
    game = drawn(per_source, FIT_SEEDS["game"])
    marks = drawn(per_source // 2, FIT_SEEDS["other_marks"], data.other_marks_style)
    real = real_train_crops(per_subset)
    table = table_crops(base, table_frames)
    pasted = pasted_train_crops(per_subset)
    classifier = base.classifier
    drawn_sets = (numerals, things_drawn, game, marks, real, table, pasted)  # the doubted first
    x = np.concatenate([embedded(classifier, d)[0] for d in drawn_sets if len(d)])
    doubted = len(numerals) + len(things_drawn)
    y = np.concatenate([np.ones(doubted, np.int64), np.zeros(len(x) - doubted, np.int64)])
    counts = {"numerals": len(numerals), "things that are not dice": len(things_drawn), "game dice": len(game),
              "other marks": len(marks), "real train dice": len(real), "dice on the rendered table": len(table),
              "real train dice pasted into cup photos": len(pasted)}
    cue = fit(x, y, classifier_id, THRESHOLD, NumberCue)
    assert isinstance(cue, NumberCue)
    return cue, counts


def _flagged(scores: np.ndarray, among: np.ndarray | None = None) -> dict[str, Any]:
    chosen = scores if among is None else scores[among]
    return {"n": int(len(chosen)), **{f"at {line}": int((chosen > line).sum()) for line in LINES},
            "doubted": int((chosen >= THRESHOLD - CUE_MARGIN).sum())}


def measure(cue: NumberCue, classifier: Any, min_confidence: float, per_face: int, per_kind: int, rendered: int) -> dict[str, Any]:
    """Per group of dice the cue never saw: how many, and how many it flags at each of ``LINES`` and by the reader's
    rule (``doubted``). Real dice and ``other_looks``' are scored at every cut the reader reads (``at_spans``: a real
    val die on its label box, a crop as the crop look cuts it); rendered ones, cut 40 px already, at their side."""
    sure_at = sure_confidence(min_confidence)
    out: dict[str, Any] = {}
    numbers = [c for look in other_looks.number_dice(per_face).values() for c in look]
    scores, p = at_spans(classifier, cue, [_crop_die(image) for _, image, _ in numbers])
    values = np.array([v for *_, v in numbers])
    seen, sure = sure_faces(p, sure_at)
    out["other_looks number dice"] = _flagged(scores)
    out["  of them read sure and wrong"] = _flagged(scores, sure & (seen != values))
    ones = [c for look in other_looks.emblem_ones(per_kind).values() for c in look]
    out["other_looks emblem ones"] = _flagged(at_spans(classifier, cue, [_crop_die(image) for _, image, _ in ones])[0])
    real: dict[str, list[tuple[tuple[np.ndarray, float, float, float], int]]] = {}
    for set_name, subsets in real_sets.FRAME_SETS.items():
        for subset in subsets:
            name = f"val_{set_name.removeprefix('real-dice-')}" + (f"_{subset}" if subset else "")
            real[name] = [((f.image, cx, cy, max(w, h)), v) for f in real_sets.frames(set_name, "val", subset) for v, cx, cy, w, h in f.labels]
    for set_name in real_sets.CROP_SETS:
        real[f"val_{set_name.removeprefix('real-dice-')}_crops"] = [(_crop_die(image), v) for image, v in real_sets.hand_crops(set_name, "val")]
    real["byler's held-out photos"] = [((f.image, cx, cy, max(w, h)), v) for f in byler_held_out() for v, cx, cy, w, h in f.labels]
    for name, dice in real.items():
        scores, p = at_spans(classifier, cue, [d for d, _ in dice])
        seen, sure = sure_faces(p, sure_at)
        out[f"{name}, read sure and right"] = _flagged(scores, sure & (seen == np.array([v for _, v in dice])))
    things = embedded(classifier, data.table_thing_crops(rendered, np.random.default_rng(HELD_OUT_THINGS_SEED))[0])[0]
    out["things that are not dice of the fit's drawer"] = _flagged(cue.scores(things))
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
    ap.add_argument("--out", type=Path, default=shipped_cue_path(), help="the cue file written (default: the shipped one)")
    ap.add_argument("--things", type=int, default=0, metavar="N",
                    help="also doubt N drawn things that are not dice (data.table_thing_crops: round things, printed tiles, "
                         "toy bricks); 0, the shipped cue's recipe (docs/classifier-log.md, 'A cue for things that are not dice')")
    args = ap.parse_args(argv)
    from models.training.judge import reader_of

    if args.things < 0:
        ap.error("--things is a number of drawn things that are not dice: 0 (none, the shipped recipe) or more")
    if args.things and args.out.resolve() == shipped_cue_path().resolve():
        ap.error("a cue fit with --things is a candidate, not the shipped recipe: give --out (and judge it with "
                 "python -m models.training.judge --number-cue)")
    if args.model is not None and not args.model.is_file():
        ap.error(f"there is no model file at {args.model}")
    if args.model is not None and args.out.resolve() == shipped_cue_path().resolve():
        ap.error("a cue for a model that is not shipped goes elsewhere than the shipped cue: give --out")
    if args.quick and args.out.resolve() == shipped_cue_path().resolve():
        ap.error("a --quick cue is a test's, not the shipped one: give --out")
    try:
        real_sets.shared_root()
    except FileNotFoundError as exc:
        ap.error(f"{exc}: the cue is fit and read on their dice")
    cv2.setNumThreads(1)
    reader = reader_of(args.model)
    if not hasattr(reader.classifier, "probabilities_and_embedding"):
        ap.error(f"the face model {reader.model_id} gives no embedding to fit a cue on")
    sizes = dict(per_source=300, per_subset=20, table_frames=10, per_face=2, per_kind=6, rendered=300) if args.quick else \
        dict(per_source=4000, per_subset=400, table_frames=600, per_face=20, per_kind=60, rendered=1500)
    cue, counts = fit_cue(reader, sizes["per_source"], sizes["per_subset"], sizes["table_frames"], reader.model_id, args.things)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    cue.save(args.out)
    report = {"model": reader.model_id, "cue": str(args.out), "threshold": THRESHOLD, "fit on": counts,
              "flagged": measure(cue, reader.classifier, reader.min_confidence, sizes["per_face"], sizes["per_kind"], sizes["rendered"])}
    if args.json:
        print(json.dumps(report, indent=1))
        return 0
    print(f"wrote {args.out}: a cue for {reader.model_id} fit on " + ", ".join(f"{n} {k}" for k, n in counts.items()))
    print(f"{'crops it never saw':52} {'n':>5}  " + "  ".join(f"flagged at {line}" for line in LINES)
          + f"  doubted (>= {THRESHOLD - CUE_MARGIN:.2f})")
    for name, row in report["flagged"].items():
        print(f"{name:52} {row['n']:>5}  " + "  ".join(f"{row[f'at {line}']:>13}" for line in LINES) + f"  {row['doubted']:>17}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
