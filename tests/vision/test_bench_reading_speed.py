"""The reading bench times the staged reader as a calibrated table uses it too (a figure, never a timed test)."""

from __future__ import annotations

from bench.reading import speed


def test_the_speed_bench_times_the_whole_tray_mode_read_beside_the_plain_one(staged_reader):
    out = speed(staged_reader, repeats=2)
    assert out["read_tray_mode_median_ms"] > 0 and out["read_1280x960_3_dice_median_ms"] > 0
    assert out["detector_1280x960_median_ms"] > 0


def test_the_classic_reader_has_no_tray_mode_row(reader):
    assert "read_tray_mode_median_ms" not in speed(reader, repeats=1)
