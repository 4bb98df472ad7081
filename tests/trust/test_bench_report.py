"""``make bench``: the referee's benches are registered, and the report lands in the README."""

from __future__ import annotations

import json

from bench import report as bench


def test_the_load_and_durability_benches_are_registered():
    bench._load_benches()
    assert {"load", "durability"} <= set(bench.BENCHES)


def test_the_readme_section_shows_the_machine_and_every_figure_and_is_replaced_in_place(tmp_path):
    readme = tmp_path / "README.md"
    readme.write_text("# Elephants Bluff\n\nIntro.\n\n## Install\n\nSteps.\n")
    report = {
        "machine": {"cpu_model": "Test CPU 9000", "cpus": 2, "memory_gib": 24.0, "platform": "Linux", "python": "3.11.7", "load_average_at_start": [1.0, 1.0, 1.0]},
        "taken_at": "2026-11-21T15:00:00Z",
        "form": "full",
        "load": {"viewers": 50, "event_delay_ms": {"p50": 1.5, "p95": 7.25}, "errors": 0, "error_samples": []},
        "reader": {"accuracy": 0.991, "per_image_ms": {"p50": 40}},
    }
    bench.update_readme(readme, report)
    text = readme.read_text()
    assert text.startswith("# Elephants Bluff\n\nIntro.\n\n## Install\n\nSteps.\n\n## Latest figures\n")
    for shown in ("Test CPU 9000", "2 CPUs", "full form; load, reader", "2026-11-21T15:00:00Z", "**load**", "| event_delay_ms.p95 | 7.25 |", "| errors | 0 |", "**reader**", "| accuracy | 0.991 |"):
        assert shown in text, shown
    # A second run replaces the figures, and keeps what follows the section.
    readme.write_text(text + "\n## After\n\nMore.\n")
    report["load"]["event_delay_ms"]["p95"] = 9.5
    bench.update_readme(readme, report)
    again = readme.read_text()
    assert again.count("## Latest figures") == 1 and "| event_delay_ms.p95 | 9.5 |" in again and "7.25" not in again
    assert again.rstrip().endswith("## After\n\nMore.")
    json.dumps(report)  # the report itself is plain JSON


def test_the_pi_check_goal_is_that_no_frame_differs_however_many_the_set_holds(tmp_path, monkeypatch):
    import json

    import bench.pi
    from bench.report import render_goals

    (tmp_path / "pi-check-latest.json").write_text(json.dumps({"frames": 44, "equal": 44, "status_equal": 44}))
    monkeypatch.setattr(bench.pi, "DOCS", tmp_path)
    report = {"pi": bench.pi.bench_pi(False)}
    assert report["pi"]["pi_check"]["differ"] == 0
    assert any(line.startswith("| pi-check: conformance frames read differently") and line.endswith("| yes |") for line in render_goals(report))
    (tmp_path / "pi-check-latest.json").write_text(json.dumps({"frames": 44, "equal": 43, "status_equal": 44}))
    lines = render_goals({"pi": bench.pi.bench_pi(False)})
    assert "| pi-check: conformance frames read differently on arm64 (qemu) | 1 | 0 | **no** |" in lines



def test_the_pi_5_check_is_its_own_goal_row_and_a_missing_one_says_so(tmp_path, monkeypatch):
    import json

    import bench.pi
    from bench.report import render_goals

    monkeypatch.setattr(bench.pi, "DOCS", tmp_path)
    (tmp_path / "pi-check-latest.json").write_text(json.dumps({"frames": 71, "equal": 71, "status_equal": 71}))
    report = {"pi": bench.pi.bench_pi(False)}
    assert report["pi"]["pi_check_pi5"] == "not run yet: pi-check-pi5-latest.json is missing"
    assert not any("as a Raspberry Pi 5" in line and line.endswith("| yes |") for line in render_goals(report))
    (tmp_path / "pi-check-pi5-latest.json").write_text(json.dumps({"frames": 71, "equal": 70, "status_equal": 71, "cpu": "cortex-a76"}))
    lines = render_goals({"pi": bench.pi.bench_pi(False)})
    assert "| pi-check as a Raspberry Pi 5 (qemu's Cortex-A76): frames read differently | 1 | 0 | **no** |" in lines
