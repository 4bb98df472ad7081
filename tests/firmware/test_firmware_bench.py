"""The firmware's bench runs and reports its figures (the numbers themselves are for people, not asserts)."""

from __future__ import annotations

from bench import report as companion_bench


def test_the_firmware_bench_reports_each_figure():
    companion_bench._load_benches()
    report = companion_bench.BENCHES["firmware"](False)
    assert set(report) == {"frame_change_ms", "capture_overhead_ms", "press_to_verdict_ms"}
    assert set(report["frame_change_ms"]) == {"1280x960", "2304x1296"}
    for figure in (report["capture_overhead_ms"], report["press_to_verdict_ms"], *report["frame_change_ms"].values()):
        assert figure["runs"] >= 5 and 0 < figure["median"] <= figure["p95"]
