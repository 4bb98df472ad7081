"""The referee's benchmarks: ``load`` (viewers and actions) and ``durability`` (kill -9).

Both run a real ``serve --simulate`` process on loopback only (127.0.0.1), are
bounded in count and time, and stop by themselves. ``make bench`` runs the full
forms; the tests in ``tests/trust/`` run the same code in a short form.

- load: ``viewers`` SSE viewers on ``/api/events`` while a table acts at
  ``rate`` actions per second for ``seconds``. Figures: the delay from an
  action's response to each viewer's copy of its event (p50, p95, max), the
  errors (failed actions, dropped streams, events a viewer never got), and the
  server's RSS before, at the end and after the viewers left.
- durability: seeded kill runs (``bench/durability.py``).
"""

from __future__ import annotations

import math
import random
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.report import BENCHES
from bench.durability import kill_run
from bench.live_server import LiveServer, ViewerPool
from bench.process_memory import memory_split

PIN = "4821"


def _percentile(values: list[float], q: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    k = max(0, min(len(ordered) - 1, math.ceil(q / 100 * len(ordered)) - 1))
    return ordered[k]


def _rss_mib(pid: int) -> float:
    import psutil

    return round(psutil.Process(pid).memory_info().rss / 2**20, 1)


def _next_action(state: dict[str, Any] | None, rng: random.Random) -> tuple[str, dict[str, Any]]:
    """A table playing quickly by the rules; every action is accepted and makes an event."""
    if state is None or state["phase"] == "over":
        return "/api/games", {"players": ["Ann", "Ben", "Cy", "Dee", "Eve", "Fay"], "path_length": 30}
    gid = state["id"]
    if state["phase"] == "claim":
        return f"/api/games/{gid}/claim", {"amount": min(18, state["min_claim"] + rng.choice([0, 1, 2]))}
    if state["phase"] == "decide":
        if state["claim"]["amount"] < 14 and rng.random() < 0.7:
            return f"/api/games/{gid}/believe", {"peeked": rng.random() < 0.3}
        return f"/api/games/{gid}/bluff", {}
    return f"/api/games/{gid}/confirm", {"dice": [rng.randint(1, 6) for _ in range(3)]}


def load_run(*, viewers: int = 50, rate: float = 20.0, seconds: float = 60.0, workdir: Path | None = None, seed: int = 1, drain_s: float = 5.0, settle_s: float = 0.0, threads: int | None = None, env: dict[str, str] | None = None) -> dict[str, Any]:
    """``viewers`` SSE viewers, actions at ``rate``/s for ``seconds``; returns the figures.

    ``settle_s`` > 0 waits up to that long after the viewers leave for the
    server to free them (at its next keep-alives), and reports how many it
    still counts. The RSS is sampled before, every 10 s, at the end and after.
    """
    rng = random.Random(seed)
    own_tmp = None
    if workdir is None:
        own_tmp = tempfile.TemporaryDirectory(prefix="eb-load-")
        workdir = Path(own_tmp.name)
    server = LiveServer(Path(workdir) / "load", pin=PIN, threads=threads, env=env)
    errors: list[str] = []
    acked: dict[str, float] = {}  # SSE id (game:events) -> monotonic time of the response
    sent: dict[str, float] = {}  # SSE id -> monotonic time the action was sent
    latencies: list[float] = []
    from_request: list[float] = []
    early = 0
    missing = 0
    rss_timeline: list[float] = []  # every 10 s of load
    try:
        server.start()
        rss_before = _rss_mib(server.pid)
        pool = ViewerPool(server.port, viewers).open()
        try:
            state = None
            count = int(rate * seconds)
            t0 = time.monotonic()
            late = 0.0
            for i in range(count):
                due = t0 + i / rate
                wait = due - time.monotonic()
                if wait > 0:
                    time.sleep(wait)
                else:
                    late = max(late, -wait)
                if i % int(rate * 10) == 0:
                    rss_timeline.append(_rss_mib(server.pid))
                path, body = _next_action(state, rng)
                t_sent = time.monotonic()
                try:
                    response = server.post(path, json=body, timeout=10)
                except Exception as exc:  # noqa: BLE001 - every failure is a figure
                    errors.append(f"{path}: {exc.__class__.__name__}: {exc}")
                    continue
                now = time.monotonic()
                if response.status_code not in (200, 201):
                    errors.append(f"{path}: {response.status_code} {response.text[:120]}")
                    continue
                data = response.json()
                state = data.get("state", data)
                acked[f"{state['id']}:{state['events']}"] = now
                sent[f"{state['id']}:{state['events']}"] = t_sent
            elapsed = time.monotonic() - t0
            # Let the last events reach every viewer (bounded).
            deadline = time.monotonic() + drain_s
            while time.monotonic() < deadline and not all(set(acked) <= set(r) for r in pool.received):
                time.sleep(0.05)
            rss_end = _rss_mib(server.pid)
            split_end = memory_split(server.pid)
            for got in pool.received:
                for event_id, t_ack in acked.items():
                    t = got.get(event_id)
                    if t is None:
                        missing += 1
                    else:
                        # The event is announced before the response is written, so a
                        # viewer often has it first: that counts as no delay.
                        early += t < t_ack
                        latencies.append(max(0.0, t - t_ack))
                        from_request.append(t - sent[event_id])
            errors.extend(pool.errors)
        finally:
            pool.close()
        still_counted = None
        if settle_s > 0:
            deadline = time.monotonic() + settle_s
            while time.monotonic() < deadline:
                still_counted = server.get("/api/health").json().get("viewers")
                if still_counted == 0:
                    break
                time.sleep(0.5)
        rss_after = _rss_mib(server.pid)
    finally:
        server.stop()
        if own_tmp is not None:
            own_tmp.cleanup()
    ms = [v * 1000 for v in latencies]
    req_ms = [v * 1000 for v in from_request]
    return {
        "viewers": viewers,
        "rate_per_s": rate,
        "seconds": seconds,
        "actions_sent": int(rate * seconds),
        "actions_acknowledged": len(acked),
        "achieved_rate_per_s": round(len(acked) / elapsed, 2) if elapsed else None,
        "worst_lag_behind_schedule_ms": round(late * 1000, 1),
        "deliveries_expected": len(acked) * viewers,
        "deliveries_missing": missing,
        "errors": len(errors) + missing,
        "error_samples": errors[:5],
        "event_delay_ms": {
            "p50": round(_percentile(ms, 50), 2) if ms else None,
            "p95": round(_percentile(ms, 95), 2) if ms else None,
            "max": round(max(ms), 2) if ms else None,
            "goal_p95": 100,
            "share_before_the_response": round(early / len(ms), 3) if ms else None,
        },
        "event_delay_from_request_sent_ms": {"p50": round(_percentile(req_ms, 50), 2) if req_ms else None, "p95": round(_percentile(req_ms, 95), 2) if req_ms else None},
        "server_rss_mib": {"before": rss_before, "every_10_s": rss_timeline, "end_of_load": rss_end, "after_viewers_left": rss_after},
        # what the end-of-load RSS is made of (bench/process_memory.py: the file part moves with the kernel)
        "server_memory_at_end_mib": split_end,
        "viewers_still_counted_after_leaving": still_counted,
    }


def bench_load(full: bool) -> dict[str, Any]:
    if full:
        return load_run(viewers=50, rate=20, seconds=60, settle_s=30)
    return load_run(viewers=10, rate=20, seconds=5)


def bench_durability(full: bool) -> dict[str, Any]:
    seeds = [11, 22, 33, 44, 55] if full else [11]
    actions, kills = (200, 10) if full else (60, 4)
    with tempfile.TemporaryDirectory(prefix="eb-kill-") as tmp:
        runs = [kill_run(seed, actions=actions, kills=kills, workdir=Path(tmp), log=lambda s: print(s, file=sys.stderr)) for seed in seeds]
    outcomes: dict[str, int] = {}
    for run in runs:
        for line in run["outcomes"]:
            what = line.split(": ", 1)[1]
            what = what.split(" (")[0] if what.startswith("in-flight") else what
            outcomes[what] = outcomes.get(what, 0) + 1
    return {
        "seeds": seeds,
        "actions_per_run": actions,
        "kills": sum(r["kills"] for r in runs),
        "runs_ok": sum(r["ok"] for r in runs),
        "runs": len(runs),
        "acknowledged_actions": sum(r.get("acknowledged", 0) for r in runs),
        "kill_outcomes": outcomes,
        "restart_s_max": max((r.get("restart_s_max") or 0) for r in runs),
        "failures": [{k: r[k] for k in ("seed", "error")} for r in runs if not r["ok"]],
    }


BENCHES["load"] = bench_load
BENCHES["durability"] = bench_durability
