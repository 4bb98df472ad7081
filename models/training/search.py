"""Run several stage-2 recipes, each with several seeds, side by side on one machine: a recipe search.

Run with ``python -m models.training.search --out DIR --data="DATA ARGS" --seeds 3,4,5 [--device cuda]
[--workers 3] [--deadline SECONDS] NAME="RECIPE ARGS" ...``. Each seed's data cache is built once (the
seeds side by side), then every recipe with every seed trains at once (``train --resume --augment-workers``),
each into ``DIR/NAME-sSEED`` with its log beside it. At the deadline the runs still going are stopped; their
checkpoints stay in ``DIR/work`` and the same command resumes them. ``DIR/summary.json`` holds each run's
last epoch (its training val crops), whether it finished, and its model file.

One run is not a measurement: two runs of one recipe that differ only in float rounding read rune55 val 609
and 604 (docs/classifier-log.md, "A recipe search on a GPU machine"), so compare recipes over several seeds.
On a GPU machine (16 cores) four runs of three workers each keep it busy at about 8.5 s an epoch; here, on
two cores, one run at a time is what fits.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

#: The shipped stage-2 recipe's data arguments (``make train``).
SHIPPED_DATA = "--real-sets --strong-augment --byler-reps 5 --faces 8000 --frames 120 --side-range 0.8,1.35 --detector-reps 2"


def parse_recipe(text: str) -> tuple[str, list[str]]:
    """``NAME=ARGS`` as the run's name and its ``train`` arguments.

    >>> parse_recipe("ft20=--epochs 20 --lr 1e-3")
    ('ft20', ['--epochs', '20', '--lr', '1e-3'])
    """
    name, sep, args = text.partition("=")
    name = name.strip()
    if not sep or not name or not name.replace("-", "").replace("_", "").isalnum():
        raise argparse.ArgumentTypeError(f"{text!r} is not NAME=ARGS (a name of letters, digits, - and _, then train's arguments)")
    return name, shlex.split(args)


def parse_seeds(text: str) -> list[int]:
    """``3,4,5`` as a list of seeds.

    >>> parse_seeds("3, 4,5")
    [3, 4, 5]
    """
    try:
        seeds = [int(s) for s in text.split(",") if s.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a list of whole numbers such as 3,4,5") from None
    if not seeds:
        raise argparse.ArgumentTypeError("give at least one seed, such as 3")
    return seeds


def last_epoch(log: Path) -> dict[str, Any] | None:
    """The last ``epoch N: loss L val {...}`` line of a run's log: its epoch, loss and val figures."""
    found = None
    if log.exists():
        for line in log.read_text(encoding="utf-8", errors="replace").splitlines():
            if line.startswith("epoch ") and " val {" in line:
                head, _, rest = line.partition(" val ")
                figures = ast.literal_eval(rest[:rest.rindex("}") + 1])
                epoch, _, loss = head.removeprefix("epoch ").partition(": loss ")
                found = {"epoch": int(epoch), "loss": float(loss), "val": figures}
    return found


def _train(args: list[str], log: Path) -> subprocess.Popen:
    with open(log, "w", encoding="utf-8") as out:
        # its own process group, so that stopping it at the deadline stops its augmentation workers too
        return subprocess.Popen([sys.executable, "-m", "models.training.train", *args], stdout=out, stderr=subprocess.STDOUT,
                                start_new_session=True)


def search(out: Path, data: list[str], recipes: list[tuple[str, list[str]]], seeds: list[int], device: str = "cpu",
           workers: int = 1, deadline: float | None = None) -> dict[str, Any]:
    """Build each seed's data, train every recipe with every seed side by side, stop at ``deadline`` seconds."""
    t0 = time.monotonic()
    out.mkdir(parents=True, exist_ok=True)
    work = out / "work"
    common = [*data, "--resume", "--work", str(work), "--device", device, "--augment-workers", str(workers)]
    builds = [_train([*common, "--seed", str(s), "--epochs", "0", "--out", str(work / f"data-s{s}")], out / f"data-s{s}.log")
              for s in seeds]
    if any(p.wait() != 0 for p in builds):
        raise RuntimeError(f"building the data failed; see {out}/data-s*.log")
    runs = {f"{name}-s{s}": _train([*common, *args, "--seed", str(s), "--out", str(out / f"{name}-s{s}")], out / f"{name}-s{s}.log")
            for name, args in recipes for s in seeds}
    while any(p.poll() is None for p in runs.values()) and (deadline is None or time.monotonic() - t0 < deadline):
        time.sleep(1)
    summary: dict[str, Any] = {"seconds": round(time.monotonic() - t0), "runs": {}}
    for key, p in runs.items():
        stopped = p.poll() is None
        if stopped:
            os.killpg(p.pid, signal.SIGTERM)
            p.wait()
        models = sorted((out / key).glob("dice-faces-*.onnx"))
        summary["runs"][key] = {"finished": not stopped and p.returncode == 0, "stopped_at_deadline": stopped,
                                "last_epoch": last_epoch(out / f"{key}.log"), "model": str(models[0]) if models else None}
    (out / "summary.json").write_text(json.dumps(summary, indent=1), encoding="utf-8")
    return summary


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("recipes", nargs="+", type=parse_recipe, metavar='NAME="ARGS"', help="a run's name and its train arguments")
    ap.add_argument("--out", type=Path, required=True, help="folder for the runs, their logs, the data caches and summary.json")
    ap.add_argument("--data", default=SHIPPED_DATA, help="train's data arguments, the same for every recipe (default: the shipped recipe's)")
    ap.add_argument("--seeds", type=parse_seeds, default=[3], help="each recipe runs once per seed, e.g. 3,4,5")
    ap.add_argument("--device", default="cpu", help="cpu, or cuda on a GPU machine")
    ap.add_argument("--workers", type=int, default=1, help="augmentation processes per run (train --augment-workers)")
    ap.add_argument("--deadline", type=float, help="stop the runs still going after this many seconds (they resume with the same command)")
    args = ap.parse_args(argv)
    if args.workers < 1:
        ap.error("--workers is at least 1: the runs' batches come from per-batch seeds")
    if len({name for name, _ in args.recipes}) != len(args.recipes):
        ap.error("two recipes have the same name; each run's folder is named after its recipe")
    summary = search(args.out, shlex.split(args.data), args.recipes, args.seeds, args.device, args.workers, args.deadline)
    for key, run in summary["runs"].items():
        last = run["last_epoch"] or {}
        state = "finished" if run["finished"] else "stopped at the deadline" if run["stopped_at_deadline"] else "failed (see its log)"
        print(f"{key}: {state}, epoch {last.get('epoch', 0)}, val {last.get('val', {})}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
