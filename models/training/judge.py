"""Judge candidate face models (or detectors) against the shipped pair, end to end, on every set a choice may read.

Run with ``python -m models.training.judge CANDIDATE.onnx [MORE.onnx ...] [--detector DETECTOR.onnx] [--only SET ...]
[--number-cue CUE.npz] [--json]``. Each model reads, through the product's staged reader and ``elephants-bluff
evaluate``'s counts, every shared ``val`` split and every set ``python -m bench.eval_sets`` builds (the pasted cup sets, close up, in a
phone-sized photo, far off, many, the val crops read whole, the renderer's test frames), the shipped model first.
Per set and model: dice right, silently wrong (the failure a model must not add) and right without a doubt (the
dice the table need not confirm); then the pasted sets' sum, which every shipping rule in ``models/MODEL_CARD.md``
has named, and ``worse``: the sets where a candidate reads fewer dice right, or more silently wrong, than the
shipped model. A shipping rule is written before its run ends; this prints the lines such a rule names.

With ``--table N`` each model also reads the simulated table (``bench.reader.synthetic``: the 216 outcomes N times,
rendered from below) three ways: knowing nothing, knowing the dice's size, and in the whole tray mode (size and
empty tray): frames ok and right, uncertain, ok but wrong. The table is where a fine-tune that teaches new dice shows
what it costs the game's own (docs/classifier-log.md, "Keeping the old answers").

With ``--things N`` each model also reads ``models.training.not_dice``'s scenes, N of each thing a way (a button, a
coin, a glass bead... in a die's place, beside three dice, in the tray): readings ok and wrong verdicts, the failure
a model that has learned more dice may add on things that are not dice. With ``--covered N`` each model also reads
``models.training.covered``'s scenes, N of each cover (a finger, a card's edge, another die over one of three real
dice): readings ok, wrong verdicts and covered dice read wrong without a doubt, a model's sure reading of a part of a
face.

A candidate is read with cues of its own, as it would ship with them: the number-dice cue (and with ``--table``
the leaning cue) fit on its embedding by the cue's own command, once per model, into ``--cues`` (default
``build/judge/cues``: four minutes a candidate, twenty more for the leaning cue; without ``--table`` a candidate has
no leaning cue, so from above, as the judged sets are read, it has no leaning check and its dice right without a
doubt are more than it would ship with;
the fits are seeded, so a file already there for the same model is the same file and is used as it is). The shipped
files' cues are fit on the shipped model only: without its own, a candidate would be read with no doubt from either.
With ``--number-cue CUE.npz`` (and no model, or beside them) the shipped model is also read with that cue in place of
its shipped one: a refit of the cue is judged as a candidate, since a cue that doubts more also doubts real dice.

Byler's ``test`` split is not among the sets: it is read once, for the card, after a choice (``make bench``), and
never to make one. One run of a recipe is not a measurement (its seeds spread by about five of rune55's 665 val
dice): judge several seeds.
"""

from __future__ import annotations

import argparse
import json
import sys
from contextlib import redirect_stdout
from pathlib import Path
from typing import Any

import cv2

from bench.reading import EVAL_SETS, SETS, accuracy
from companion.core.settings import Settings
from vision.reader import load_reader

#: The sets a choice may read: every set the bench reads but Byler's test split.
JUDGED = [(name, folder, split, crops) for name, folder, split, crops in SETS if split != "test"]
#: ``--table``'s three ways of reading the simulated table: (name, knowing the dice's size, knowing the empty tray).
TABLE_MODES = (("table_unknown", False, False), ("table_sized", True, False), ("table_tray", True, True))
#: The real val dice pasted into built frames: the sum every shipping rule has named.
PASTED = ("cup_one", "cup_three", "big", "far")
COUNTS = ("dice", "right", "silently_wrong", "right_without_doubt")
#: Where each candidate's own cues are fit and kept (``--cues``).
CUE_DIR = Path("build/judge/cues")


def reader_of(model: Path | None, detector: Path | None = None, cues: dict[str, Path] | None = None,
              camera_view: str | None = None) -> Any:
    """The product's reader with ``model`` as its face classifier and ``detector`` as its learned detector (the
    shipped ones where None), as ``evaluate --instance`` reads with a ``[reader] model`` in the instance's config;
    ``cues``: the cue files fit on ``model`` (``reader.leaning_cue``, ``reader.number_cue``; ``candidate_cues``);
    ``camera_view``: the setting's (default "below"), given "above" where the labels are the faces photographed."""
    overrides: dict[str, str] = {f"reader__{key}": str(path) for key, path in (cues or {}).items()}
    if camera_view is not None:
        overrides["camera__camera_view"] = camera_view
    if model is not None:
        overrides["reader__model"] = str(model)
    if detector is not None:
        overrides["reader__detector_model"] = str(detector)
    return load_reader(Settings.defaults().with_overrides(**overrides))


def candidate_cues(model: Path, folder: Path, leaning: bool, quick: bool = False) -> dict[str, Path]:
    """``model``'s own cues in ``folder`` by setting (``number_cue``, and ``leaning_cue`` where ``leaning``), each fit
    there first by its training command where no file fit on this model is there yet; none for the shipped model,
    whose cues are shipped. The fits' reports go to standard error. ``quick``: the fits' test sizes, in file names of
    their own (never taken for a full fit's)."""
    from models.training import leaning_cue, number_cue
    from vision.classifier import file_model_id, shipped_model_id
    from vision.leaning_cue import LeaningCue
    from vision.number_cue import NumberCue

    model_id = file_model_id(model)
    if model_id == shipped_model_id():
        return {}
    tag = "-quick" if quick else ""
    wanted = {"number_cue": (NumberCue, [str(model), *(["--quick"] if quick else []), "--out"], number_cue.main)}
    if leaning:
        wanted["leaning_cue"] = (LeaningCue, ["--model", str(model), *(["--leaning", "5", "--flat", "5", "--above", "0", "--no-real-flat"] if quick else []), "--out"],
                                 leaning_cue.main)
    out = {}
    for key, (kind, args, fit) in wanted.items():
        path = folder / f"{model_id}{tag}-{key.replace('_', '-')}.npz"
        try:
            ready = kind.load(path).classifier_id == model_id
        except ValueError:
            ready = False
        if not ready:
            print(f"fitting the {kind.KIND} for {model_id} into {path}", file=sys.stderr)
            folder.mkdir(parents=True, exist_ok=True)
            with redirect_stdout(sys.stderr):
                fit([*args, str(path)])
        out[key] = path
    return out


def judge(reader: Any, sets: list[tuple[str, Path, str | None, bool]]) -> dict[str, Any]:
    """The bench's counts for each of ``sets`` and no others (``bench.reading.accuracy``), and the pasted sets' sum (when
    all four were read)."""
    out: dict[str, Any] = {"model": reader.model_id}
    out.update({name: {k: counts[k] for k in COUNTS} for name, counts in accuracy(reader, False, sets, checked=[]).items()})
    if all(name in out for name in PASTED):
        out["pasted"] = {k: sum(out[name][k] for name in PASTED) for k in COUNTS}
    return out


def judge_table(reader: Any, layouts: int) -> dict[str, dict[str, int]]:
    """The simulated table read ``layouts`` times over in each of ``TABLE_MODES``: frames ok and right, uncertain,
    ok but wrong."""
    from bench.reader import synthetic

    out = {}
    for name, sized, tray in TABLE_MODES:
        r = synthetic(reader, layouts, die_side_known=sized, empty_tray=tray)
        out[name] = {k: r[k] for k in ("frames", "ok_and_right", "uncertain", "ok_but_wrong")}
    return out


def judge_things(reader: Any, per_kind: int) -> dict[str, dict[str, int]]:
    """``not_dice``'s scenes read ``per_kind`` times a thing in each of its ways: frames, readings ok, wrong verdicts."""
    from models.training.not_dice import read

    return {f"things {mode}": {k: rows["all"][k] for k in ("frames", "ok", "wrong_verdicts")} for mode, rows in read(reader, per_kind).items()}


def judge_covered(reader: Any, per_kind: int) -> dict[str, dict[str, int]]:
    """``covered``'s scenes read ``per_kind`` times a cover: frames, readings ok, wrong verdicts, and covered dice read
    at another face without a doubt."""
    from models.training.covered import read

    rows = read(reader, per_kind)["all"]
    return {"covered": {k: rows[k] for k in ("frames", "ok", "wrong_verdicts", "covered_surely_wrong")}}


def table_lines(results: list[dict[str, Any]]) -> list[str]:
    """One line a way of reading the table: each model's frames ok and right (ok but wrong) of the frames."""
    lines = []
    for name, *_ in TABLE_MODES:
        if name in results[0]:
            cells = [f"{r[name]['ok_and_right']} ({r[name]['ok_but_wrong']})" for r in results]
            lines.append(f"{name:20s} {results[0][name]['frames']:>5d}  " + "  ".join(f"{c:>24s}" for c in cells))
    for name in (k for k in results[0] if k.startswith("things ") or k == "covered"):  # readings ok (wrong verdicts) of the scenes
        cells = [f"{r[name]['ok']} ({r[name]['wrong_verdicts']})" for r in results]
        lines.append(f"{name.replace(' ', '_'):20s} {results[0][name]['frames']:>5d}  " + "  ".join(f"{c:>24s}" for c in cells))
    return lines


def worse(candidate: dict[str, Any], shipped: dict[str, Any]) -> list[str]:
    """The sets (and the pasted sum) where ``candidate`` reads fewer dice right or more silently wrong.

    >>> a = {"rune55_val": {"right": 609, "silently_wrong": 0}, "mid": {"right": 175, "silently_wrong": 0}}
    >>> worse({"rune55_val": {"right": 606, "silently_wrong": 0}, "mid": {"right": 176, "silently_wrong": 1}}, a)
    ['rune55_val: 606 right against 609', 'mid: 1 silently wrong against 0']
    """
    lines = []
    for name, base in shipped.items():
        if not isinstance(base, dict) or name not in candidate:
            continue
        got = candidate[name]
        if "wrong_verdicts" in base:  # things that are not dice, covered dice: scenes, not dice
            if got["wrong_verdicts"] > base["wrong_verdicts"]:
                lines.append(f"{name}: {got['wrong_verdicts']} wrong verdicts against {base['wrong_verdicts']}")
            if got.get("covered_surely_wrong", 0) > base.get("covered_surely_wrong", 0):
                lines.append(f"{name}: {got['covered_surely_wrong']} covered dice read wrong without a doubt against {base['covered_surely_wrong']}")
            continue
        if "ok_and_right" in base:  # a way of reading the simulated table: frames, not dice
            if got["ok_and_right"] < base["ok_and_right"]:
                lines.append(f"{name}: {got['ok_and_right']} frames ok and right against {base['ok_and_right']}")
            if got["ok_but_wrong"] > base["ok_but_wrong"]:
                lines.append(f"{name}: {got['ok_but_wrong']} frames ok but wrong against {base['ok_but_wrong']}")
            continue
        if got["right"] < base["right"]:
            lines.append(f"{name}: {got['right']} right against {base['right']}")
        if got["silently_wrong"] > base["silently_wrong"]:
            lines.append(f"{name}: {got['silently_wrong']} silently wrong against {base['silently_wrong']}")
    return lines


def table(results: list[dict[str, Any]]) -> str:
    """One line a set: each model's right (silently wrong) [right without a doubt] of the set's dice."""
    names = [name for name, *_ in JUDGED if name in results[0]] + (["pasted"] if "pasted" in results[0] else [])
    lines = [f"{'set':20s} {'dice':>5s}  " + "  ".join(f"{r['model']:>24s}" for r in results)]
    for name in names:
        cells = [f"{r[name]['right']} ({r[name]['silently_wrong']}) [{r[name]['right_without_doubt']}]" for r in results]
        lines.append(f"{name:20s} {results[0][name]['dice']:>5d}  " + "  ".join(f"{c:>24s}" for c in cells))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("models", nargs="*", type=Path, help="candidate face models (.onnx); the shipped model is read first")
    ap.add_argument("--detector", type=Path, help="read the candidates with this learned detector (.onnx) instead of the shipped one")
    ap.add_argument("--only", action="append", choices=[name for name, *_ in JUDGED], help="this set only (repeatable)")
    ap.add_argument("--table", type=int, default=0, metavar="N",
                    help="also read the simulated table's 216 outcomes N times, three ways (bench.reader.synthetic)")
    ap.add_argument("--things", type=int, default=0, metavar="N",
                    help="also read N scenes of each thing that is not a die in each of not_dice's ways (20: make bench's)")
    ap.add_argument("--covered", type=int, default=0, metavar="N",
                    help="also read N scenes of each cover over one of three real dice (models.training.covered)")
    ap.add_argument("--json", action="store_true", help="one JSON object: each model's counts per set, and what is worse")
    ap.add_argument("--number-cue", type=Path, metavar="CUE.npz",
                    help="also read the shipped model with this number-dice cue in place of its own: a refit cue "
                         "(python -m models.training.number_cue --out CUE.npz) judged as a candidate")
    ap.add_argument("--cues", type=Path, default=CUE_DIR, metavar="DIR",
                    help=f"where each candidate's own cues are fit and kept (default: {CUE_DIR})")
    args = ap.parse_args(argv)
    if args.table < 0:
        ap.error("--table is how many times the 216 outcomes are rendered: 0 (not read) or more")
    if args.things < 0:
        ap.error("--things is how many scenes of each thing are read: 0 (not read) or more")
    if args.covered < 0:
        ap.error("--covered is how many scenes of each cover are read: 0 (not read) or more")
    if not args.models and args.number_cue is None:
        ap.error("name a candidate to judge: a face model (.onnx), or a refit number-dice cue with --number-cue")
    for path in [*args.models, *([args.detector] if args.detector else [])]:
        if not path.is_file():
            ap.error(f"there is no model file at {path}")
    if args.number_cue is not None:
        from vision.classifier import shipped_model_id
        from vision.number_cue import NumberCue

        try:
            fit_on = NumberCue.load(args.number_cue).classifier_id
        except ValueError as exc:
            ap.error(str(exc))
        if fit_on != shipped_model_id():
            ap.error(f"the number-dice cue {args.number_cue} was fit on the dice model {fit_on}, not the shipped "
                     f"{shipped_model_id()}: a candidate model's own cue is fit by the judge")
    sets = [s for s in JUDGED if not args.only or s[0] in args.only]
    missing = [str(folder) for _, folder, *_ in sets if not folder.is_relative_to(EVAL_SETS) and not folder.is_dir()]
    if missing:
        ap.error(f"the shared datasets are not where the project looks for them: {', '.join(missing)}")
    cv2.setNumThreads(1)
    readers = [reader_of(None)] + [reader_of(m, args.detector, candidate_cues(m, args.cues, leaning=bool(args.table)))
                                   for m in args.models]
    if args.number_cue is not None:
        readers.append(reader_of(None, cues={"number_cue": args.number_cue}))
    results = [judge(reader, sets) for reader in readers]
    if args.table:
        for reader, r in zip(readers, results):
            r.update(judge_table(reader, args.table))
    if args.things:
        for reader, r in zip(readers, results):
            r.update(judge_things(reader, args.things))
    if args.covered:
        for reader, r in zip(readers, results):
            r.update(judge_covered(reader, args.covered))
    if args.detector is not None:  # a candidate detector read with the shipped classifier must not look like the shipped pair
        for r in results[1:len(args.models) + 1]:
            r["model"] += f" with {args.detector.stem}"
    if args.number_cue is not None:  # the shipped model with another cue must not look like the shipped pair either
        results[-1]["model"] += f" with {args.number_cue.stem}"
    verdicts = {r["model"]: worse(r, results[0]) for r in results[1:]}
    if args.json:
        print(json.dumps({"results": results, "worse": verdicts}, indent=1))
        return 0
    print("\n".join([table(results), *table_lines(results)]))
    for model, lines in verdicts.items():
        print(f"{model}: " + ("; ".join(lines) if lines else "no set worse than the shipped model"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
