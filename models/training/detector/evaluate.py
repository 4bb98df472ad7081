"""The detector's figures for its card, measured on the shipped ONNX model through ``LearnedDetector``.

    python -m models.training.detector.evaluate [--model PATH] [--byler-test] [--json]

Per set: recall and precision at IoU ≥ 0.5 (``metrics``), mean relative side error, and on rendered
frames the angle error. Sets: every real set's ``val`` split (Byler's held-out tenth of ``train``);
held-out rendered frames (a seed no training or epoch picking used); the issue's cup case rebuilt from
real dice of the ``val`` splits pasted about half a 128-px grey cup frame wide, alone and three in a
row (384×128); with ``--byler-test``, Byler's ``test`` split, the shared yardstick, read once for the
card and never for a choice. Speed: the median time of ``propose`` on a 1280×960 simulated-table frame,
one onnxruntime thread. Needs no torch.
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np

from models.training.detector import real, synth
from models.training.detector.metrics import Tally
from vision.detector_learned import LearnedDetector
from vision.simtable import render_table

EVAL_SEED = 104729


def tally(det: LearnedDetector, frames) -> Tally:
    t = Tally()
    for _, img, dice in frames:
        t.add([(p.cx, p.cy, p.side, p.angle_deg, p.score) for p in det.propose(img)], dice)
    return t


def speed(det: LearnedDetector, runs: int = 200) -> float:
    """Median milliseconds of ``propose`` on a 1280×960 grey frame of the simulated table with three dice."""
    import cv2

    frame, _ = render_table([2, 5, 6], np.random.default_rng(EVAL_SEED))
    grey = cv2.cvtColor(frame, cv2.COLOR_BGR2GRAY)
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        det.propose(grey)
        times.append(time.perf_counter() - t)
    return float(np.median(times) * 1000)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", default=None, help="an ONNX file (default: the shipped models/dice-detector-*.onnx)")
    ap.add_argument("--byler-test", action="store_true", help="also Byler's test split (the card's figure; never for choosing)")
    ap.add_argument("--rendered", type=int, default=300)
    ap.add_argument("--cup", type=int, default=300, help="cup frames of each kind (single, triple)")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    det = LearnedDetector(args.model)
    results: dict[str, dict] = {}
    for name in real.SETS:
        results[f"{name} val"] = tally(det, real.frames(name, "val")).summary()
    rendered = [(str(i), *synth.render(np.random.default_rng((EVAL_SEED, i)), None)) for i in range(args.rendered)]
    results["rendered (held out)"] = tally(det, rendered).summary()
    pool = real.DieCrops.from_frames([real.frames(name, "val") for name in real.SETS], min_side=24.0)
    cups = real.cup_set(pool, np.random.default_rng(EVAL_SEED), args.cup, args.cup)
    results["cup, one die (128×128)"] = tally(det, [c for c in cups if "single" in c[0]]).summary()
    results["cup, three in a row (384×128)"] = tally(det, [c for c in cups if "triple" in c[0]]).summary()
    if args.byler_test:
        results["byler test"] = tally(det, real.frames("byler", "test")).summary()
    report = {"model": det.model_id, "threshold": det.score_threshold, "sets": results, "speed_ms_1280x960_one_thread": round(speed(det), 3)}
    if args.json:
        print(json.dumps(report, indent=1))
        return
    print(f"model {det.model_id}, score threshold {det.score_threshold}")
    print("| set | frames | dice | recall | precision | frames exact | side error | angle error |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for name, s in results.items():
        side = f"{100 * s['side_error']:.1f} %" if s["side_error"] is not None else "–"
        angle = f"{s['angle_error_deg']:.1f}°" if s["angle_error_deg"] is not None else "–"
        print(f"| {name} | {s['frames']} | {s['dice']} | {100 * s['recall']:.1f} % | {100 * s['precision']:.1f} % | {s['frames_exact']} | {side} | {angle} |")
    print(f"speed: median {report['speed_ms_1280x960_one_thread']:.2f} ms per 1280×960 frame, one thread")


if __name__ == "__main__":
    main()
