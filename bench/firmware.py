"""The table's figures for ``elephants-bluff bench``: what the firmware itself costs.

- ``frame_change_ms``: one stillness comparison of two frames, by frame size.
- ``capture_overhead_ms``: a whole capture of a still tray (3 still comparisons,
  4 grabs, 2 JPEG encodes) with a reader that costs nothing: the loop's own cost
  on top of the camera's frame time and the reader's.
- ``press_to_verdict_ms``: a simulated Believe press, through the mock pin, the
  debounce, the queue, the worker and the real referee on SQLite, until the
  press's outcome is known (debounce window set to 0 so it does not count).
"""

from __future__ import annotations

import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from bench.report import BENCHES


def _ms(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    return {"median": round(statistics.median(ordered) * 1000, 3), "p95": round(ordered[int(0.95 * (len(ordered) - 1))] * 1000, 3), "runs": len(ordered)}


def _frame_change(runs: int) -> dict[str, Any]:
    from firmware.capture import frame_change

    out = {}
    rng = np.random.default_rng(0)
    for w, h in ((1280, 960), (2304, 1296)):
        a = rng.integers(0, 255, (h, w, 3), dtype=np.uint8)
        b = a.copy()
        samples = []
        for _ in range(runs):
            t = time.perf_counter()
            frame_change(a, b)
            samples.append(time.perf_counter() - t)
        out[f"{w}x{h}"] = _ms(samples)
    return out


def _capture_overhead(runs: int) -> dict[str, float]:
    from firmware.capture import CaptureLoop
    from companion.core.protocols import FrameSource
    from companion.core.reading import Reading

    frame = np.random.default_rng(1).integers(0, 255, (960, 1280, 3), dtype=np.uint8)

    class Still(FrameSource):
        name = "bench"

        def grab(self) -> np.ndarray:
            return frame

    class Free:
        model_id = "none"

        def read(self, f: np.ndarray) -> Reading:
            return Reading("uncertain", (), reason="bench")

        def annotate(self, f: np.ndarray, r: Reading) -> np.ndarray:
            return f

    loop = CaptureLoop(Still(), Free(), frame_interval_s=0, grab_timeout_s=None)
    samples = []
    for _ in range(runs):
        t = time.perf_counter()
        loop.capture()
        samples.append(time.perf_counter() - t)
    return _ms(samples)


def _press(runs: int) -> dict[str, float]:
    from companion.core.capture import ValuesDiceSource
    from companion.app.referee import Referee
    from companion.app.settings import Settings
    from companion.app.store import GameStore
    from firmware.table import build_table

    with tempfile.TemporaryDirectory() as tmp:
        referee = Referee(GameStore(Path(tmp) / "bench.sqlite3"), ValuesDiceSource(), frames_dir=Path(tmp) / "frames")
        table = build_table(Settings.defaults().with_overrides(gpio__debounce_ms=0), referee, simulate=True, environ={})
        assert table is not None
        try:
            gid = referee.new_game(["Ann", "Ben", "Cy"], path_length=30)["id"]
            samples = []
            for _ in range(runs):
                state = referee.game_state(gid)
                if state["phase"] == "claim":
                    referee.claim(gid, state["min_claim"])  # the tablet's claim; believing 18 starts a new round (R8)
                t = time.perf_counter()
                outcome = table.press("believe")
                samples.append(time.perf_counter() - t)
                assert outcome["result"] == "done", outcome
        finally:
            table.close()
            referee.store.close()
    return _ms(samples)


def bench(full: bool) -> dict[str, Any]:
    runs = 200 if full else 20
    return {
        "frame_change_ms": _frame_change(runs),
        "capture_overhead_ms": _capture_overhead(max(5, runs // 4)),
        "press_to_verdict_ms": _press(max(10, runs // 4)),
    }


BENCHES["firmware"] = bench
