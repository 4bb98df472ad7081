"""Time the face classifier as the reader runs it: three 40×40 crops, onnxruntime, one thread.

``python -m models.training.speed [MODEL.onnx ...] [--repeats N]`` prints the median and 90th percentile over many
repeats (default: the shipped model). The budget is 1 ms median for three crops; compare models in the same run
(load changes timings).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

from companion.core.errors import ElephantsBluffError
from vision.classifier import CROP, FaceClassifier, shipped_model_path


def time_model(path: Path | None, repeats: int = 3000) -> tuple[float, float]:
    clf = FaceClassifier(path, threads=1)
    crops = np.random.default_rng(0).integers(0, 255, (3, CROP, CROP, 3), dtype=np.uint8)
    for _ in range(min(200, repeats)):
        clf.probabilities(crops)
    t = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        clf.probabilities(crops)
        t.append(time.perf_counter() - t0)
    return float(np.median(t) * 1e3), float(np.percentile(t, 90) * 1e3)


def as_candidate(words: str) -> str:
    """The reader's refusal of a model file said of a file named to time: the reader's words end by telling a player
    what mends it (reinstall the companion, or the setting that names the file, ``classifier.model_fix``), which
    mends neither a candidate (a run's export, a wrong file).

    >>> as_candidate("The dice model x.onnx cannot be loaded; reinstall the companion.")
    'The dice model x.onnx cannot be loaded, so it cannot be timed (a face model exported by models.training.train?).'
    >>> as_candidate("The dice model x.onnx cannot be loaded; check reader.model in config.toml, which names it.")
    'The dice model x.onnx cannot be loaded, so it cannot be timed (a face model exported by models.training.train?).'
    """
    said, _, fix = words.removesuffix(".").rpartition("; ")
    if not said or not fix.startswith(("reinstall the companion", "check reader.")):
        said = words.removesuffix(".")
    return said + ", so it cannot be timed (a face model exported by models.training.train?)."


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m models.training.speed", description=__doc__.splitlines()[0])
    ap.add_argument("models", nargs="*", type=Path, help="face models (.onnx) to time, in turn (default: the shipped one)")
    ap.add_argument("--repeats", type=int, default=3000, help="timed runs of three crops a model (default 3000)")
    args = ap.parse_args(argv)
    if args.repeats < 1:
        ap.error("--repeats is how many times three crops are read: 1 or more")
    missing = [str(p) for p in args.models if not p.is_file()]
    if missing:
        ap.error(f"no such model file: {', '.join(missing)}")
    for p in args.models or [None]:
        try:
            med, p90 = time_model(p, args.repeats)
        except ElephantsBluffError as exc:
            print(f"{p or 'shipped'}: {exc if p is None else as_candidate(str(exc))}", file=sys.stderr)
            return 1
        size = (p or shipped_model_path()).stat().st_size
        print(f"{p or 'shipped'}: median {med:.3f} ms, p90 {p90:.3f} ms for 3 crops; {size} bytes")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
