"""``elephants-bluff bench`` (or ``python -m bench``): the project's figures as one JSON report.

Each area adds a function to ``BENCHES``; ``--full`` runs the long forms
(``make bench``), the default runs the short ones.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from pathlib import Path
from typing import Any, Callable

BENCHES: dict[str, Callable[[bool], dict[str, Any]]] = {}


def main(argv: list[str] | None = None) -> int:
    """``elephants-bluff bench [--full] [--only NAME] [--output FILE] [--readme FILE]``."""
    p = argparse.ArgumentParser(prog="elephants-bluff bench", description="print the project's figures as JSON")
    p.add_argument("--full", action="store_true", help="the long forms (make bench)")
    p.add_argument("--only", action="append", default=[], help="run only this bench (repeatable)")
    p.add_argument("--output", help="also write the report to this file")
    p.add_argument("--figures", "--readme", dest="readme", help="also rewrite the figures section of this Markdown page (make bench: docs/FIGURES.md)")
    return run(p.parse_args(argv))


def _load_benches() -> None:
    """Import the modules that register benches (kept lazy: they pull in heavy deps)."""
    import importlib

    for name in ("bench.reader", "bench.reading", "bench.load", "bench.firmware", "bench.flood", "bench.pi", "bench.teach"):
        try:
            importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name != name:
                raise


def run(args: argparse.Namespace) -> int:
    _load_benches()
    report: dict[str, Any] = {
        "machine": machine(),
        "taken_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "form": "full" if args.full else "short",
    }
    for name, bench in BENCHES.items():
        if args.only and name not in args.only:
            continue
        print(f"bench: {name} ...", file=sys.stderr)
        report[name] = bench(args.full)
    text = json.dumps(report, indent=2)
    print(text)
    if args.output:
        Path(args.output).parent.mkdir(parents=True, exist_ok=True)
        with open(args.output, "w", encoding="utf-8") as f:
            f.write(text + "\n")
    if args.readme:
        update_readme(Path(args.readme), report)
    return 0


def machine() -> dict[str, Any]:
    """What the figures were taken on, including how busy it was (a shared machine skews them)."""
    info: dict[str, Any] = {"python": platform.python_version(), "platform": platform.platform(), "processor": platform.machine(), "cpus": os.cpu_count()}
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.lower().startswith(("model name", "hardware")) and ":" in line:  # x86, then a Pi's SoC
                info["cpu_model"] = line.split(":", 1)[1].strip()
                break
        mem_kib = int(Path("/proc/meminfo").read_text().split()[1])
        info["memory_gib"] = round(mem_kib / 2**20, 1)
    except (OSError, ValueError, IndexError):
        pass
    try:
        info["load_average_at_start"] = [round(v, 2) for v in os.getloadavg()]
    except OSError:
        pass
    return info


START, END = "<!-- latest-figures:start -->", "<!-- latest-figures:end -->"


def _flatten(value: Any, prefix: str = "") -> list[tuple[str, Any]]:
    if isinstance(value, dict):
        out: list[tuple[str, Any]] = []
        for k, v in value.items():
            out += _flatten(v, f"{prefix}.{k}" if prefix else str(k))
        return out
    if isinstance(value, list) and len(value) > 6:
        return [(prefix, f"{len(value)} items (see the JSON)")]
    return [(prefix, value)]


#: The issues' goals: (figure, where in the report, goal, met?) — the README shows these first.
GOALS: list[tuple[str, str, str, Callable[[Any], bool]]] = [
    ("Classic reader: per-die accuracy, real test crops", "reader.real_test_crops.model.accuracy", ">= 0.995", lambda v: v >= 0.995),
    ("Classic reader: per-die accuracy, whole real test photos (read --as-seen)", "reader.real_test_frames_as_seen.model.accuracy", ">= 0.995", lambda v: v >= 0.995),
    ("Classic reader: wrong real test crops flagged uncertain", "reader.real_test_crops.model.wrong_flagged_share", ">= 0.9", lambda v: v >= 0.9),
    ("Classic reader: wrong or missed dice flagged, whole real photos", "reader.real_test_frames_as_seen.model.wrong_flagged_share", ">= 0.9", lambda v: v >= 0.9),
    ("Classic reader: synthetic 216 outcomes: right or uncertain", "reader.synthetic_216.right_or_uncertain_share", "1.0", lambda v: v == 1.0),
    ("Classic reader: synthetic 216 outcomes: read outright (ok)", "reader.synthetic_216.ok_share", "(higher is better)", lambda v: True),
    ("Classic reader: synthetic 216 outcomes, die size known (calibrate --dice): right or uncertain", "reader.synthetic_216_die_side_known.right_or_uncertain_share", "1.0", lambda v: v == 1.0),
    ("Classic reader: synthetic 216 outcomes, die size known: read outright (ok)", "reader.synthetic_216_die_side_known.ok_share", "(higher is better)", lambda v: True),
    ("Classic reader: synthetic frames with a die leaning on the cup (R14): uncertain", "reader.synthetic_leaning.uncertain_share", "1.0", lambda v: v == 1.0),
    ("Classic reader: synthetic frames with a die leaning on the cup: read ok with a wrong value", "reader.synthetic_leaning.ok_but_wrong", "0", lambda v: v == 0),
    ("Classic reader: read, 1280x960, 3 dice, one core, median ms", "reader.speed.read_1280x960_3_dice_median_ms", "<= 10", lambda v: v <= 10),
    ("Classic reader: read as above, die size known (calibrate --dice), median ms", "reader.speed.read_die_side_known_median_ms", "<= 10", lambda v: v <= 10),
    ("classifier, 3 faces, median ms", "reader.speed.classifier_3_faces_median_ms", "<= 1", lambda v: v <= 1),
    ("model file, bytes", "reader.model_bytes", "<= 1 MB", lambda v: v <= 1_000_000),
    ("Staged reader: Byler test photos, per die", "reading.learned.byler_test.accuracy", ">= 0.995", lambda v: v >= 0.995),
    ("Staged reader: Byler test photos all right", "reading.learned.byler_test.photos_all_right", ">= 48 of 50", lambda v: v >= 48),
    ("Staged reader: rune55 val, per die", "reading.learned.rune55_val.accuracy", ">= 0.95", lambda v: v >= 0.95),
    ("Staged reader: skovy val, per die", "reading.learned.skovy_val.accuracy", ">= 0.99", lambda v: v >= 0.99),
    ("Staged reader: patterson val crops, per die", "reading.learned.patterson_val_crops.accuracy", ">= 0.99", lambda v: v >= 0.99),
    ("Staged reader: real dice pasted into grey cup frames, per die", "reading.learned.cup_one.accuracy", "(higher is better)", lambda v: True),
    ("Staged reader: the same, three in a row", "reading.learned.cup_three.accuracy", "(higher is better)", lambda v: True),
    ("Staged reader: the same dice in colour, each filling 70-95 % of the frame, per die", "reading.learned.big.accuracy", "(higher is better)", lambda v: True),
    ("Staged reader: silently wrong per 1,000 dice, dice filling the frame", "reading.learned.big.silently_wrong_per_1000", "<= 1", lambda v: v <= 1),
    ("Staged reader: the same dice in colour, one a photo, 12-33 % of a 1280x960 JPEG's height, per die", "reading.learned.mid.accuracy", "(higher is better)", lambda v: True),
    ("Staged reader: silently wrong per 1,000 dice, one die a phone-sized photo", "reading.learned.mid.silently_wrong_per_1000", "<= 1", lambda v: v <= 1),
    ("Staged reader: the same dice in colour, 20-40 px in a 1280x960 frame, per die", "reading.learned.far.accuracy", "(higher is better)", lambda v: True),
    ("Staged reader: silently wrong per 1,000 dice, dice far off", "reading.learned.far.silently_wrong_per_1000", "<= 1", lambda v: v <= 1),
    ("Staged reader: the same dice in colour, 6-12 of 60-140 px in a 1280x960 frame, per die", "reading.learned.many.accuracy", "(higher is better)", lambda v: True),
    ("Staged reader: silently wrong per 1,000 dice, a table of dice of mixed sizes", "reading.learned.many.silently_wrong_per_1000", "<= 1", lambda v: v <= 1),
    ("Staged reader: the shared val crops read as whole photos, per die", "reading.learned.crops_whole.accuracy", "(higher is better)", lambda v: True),
    ("Staged reader: silently wrong per 1,000 dice, val crops read whole", "reading.learned.crops_whole.silently_wrong_per_1000", "<= 1", lambda v: v <= 1),
    ("Staged reader: simulated table, read outright (ok)", "reading.learned.synthetic_table.ok_share", "(>= 0.98)", lambda v: v >= 0.98),
    ("Staged reader: simulated table, read ok with a wrong value", "reading.learned.synthetic_table.ok_but_wrong", "0", lambda v: v == 0),
    ("Staged reader: simulated table, die size known, read outright (ok)", "reading.learned.synthetic_table_die_size.ok_share", "(>= 0.98)", lambda v: v >= 0.98),
    ("Staged reader: simulated table in tray mode (die size and empty tray), read outright (ok)", "reading.learned.synthetic_table_calibrated.ok_share", "(>= 0.98)", lambda v: v >= 0.98),
    ("Staged reader: simulated table in tray mode, read ok with a wrong value",
     "reading.learned.synthetic_table_calibrated.ok_but_wrong", "0", lambda v: v == 0),
    ("Staged reader: real dice, each photo calibrated by calibrate --dice's measure, then read in tray mode: dice right",
     "reading.learned.real_dice_calibrated.all.right", "(higher is better; of the photos calibrated)", lambda v: True),
    ("Staged reader: the same, read ok with a wrong value", "reading.learned.real_dice_calibrated.all.silently_wrong", "0", lambda v: v == 0),
    ("Staged reader: simulated table in tray mode through a wide lens (bend 0.2), the lens not known: read outright (ok)",
     "reading.learned.through_a_wide_lens.lens_unknown.ok_share", "(higher is better)", lambda v: True),
    ("Staged reader: the same, the lens's bend measured by calibrate --lens: read outright (ok)",
     "reading.learned.through_a_wide_lens.lens_measured.ok_share", "(>= 0.9)", lambda v: v >= 0.9),
    ("Staged reader: the same, read ok with a wrong value (either way)",
     "reading.learned.through_a_wide_lens.ok_but_wrong", "0", lambda v: v == 0),
    ("Staged reader: frames with a die leaning on the cup through the wide lens, measured, tray mode: uncertain",
     "reading.learned.through_a_wide_lens.leaning.uncertain_share", "1.0", lambda v: v == 1.0),
    ("Staged reader: simulated table in tray mode through a lens bending faster towards the edge (k 0.1, k2 0.2), not known: read outright (ok)",
     "reading.learned.through_a_fisheye_like_lens.lens_unknown.ok_share", "(higher is better)", lambda v: True),
    ("Staged reader: the same, both coefficients measured by calibrate --lens: read outright (ok)",
     "reading.learned.through_a_fisheye_like_lens.lens_measured.ok_share", "(>= 0.9)", lambda v: v >= 0.9),
    ("Staged reader: the same, read ok with a wrong value (either way)",
     "reading.learned.through_a_fisheye_like_lens.ok_but_wrong", "0", lambda v: v == 0),
    ("Staged reader: frames with a die leaning on the cup through that lens, measured, tray mode: uncertain",
     "reading.learned.through_a_fisheye_like_lens.leaning.uncertain_share", "1.0", lambda v: v == 1.0),
    ("Staged reader: frames with a die leaning on the cup, tray mode: uncertain", "reading.learned.synthetic_leaning.tray_mode.uncertain_share", "1.0", lambda v: v == 1.0),
    ("Staged reader: frames with a die leaning on the cup (R14): uncertain", "reading.learned.synthetic_leaning.uncertain_share", "1.0", lambda v: v == 1.0),
    ("Staged reader: frames with a die leaning on the cup: read ok with a wrong value", "reading.learned.synthetic_leaning.ok_but_wrong", "0", lambda v: v == 0),
    ("Staged reader: frames from above read as seen, a die leaning on the cup: uncertain",
     "reading.learned.from_above.leaning.uncertain_share", "(higher is better; the leaning cue alone)", lambda v: True),
    ("Staged reader: frames from above read as seen, every die flat: read outright (ok)",
     "reading.learned.from_above.flat.ok_share", "(higher is better)", lambda v: True),
    ("Staged reader: frames from above read as seen: read ok with a wrong value",
     "reading.learned.from_above.ok_but_wrong", "0", lambda v: v == 0),
    ("Staged reader: rendered tray frames, per die", "reading.learned.rendered.accuracy", "(>= 0.98 ok)", lambda v: True),
    ("Staged reader: silently wrong per 1,000 dice, Byler test", "reading.learned.byler_test.silently_wrong_per_1000", "<= 1", lambda v: v <= 1),
    ("Staged reader: silently wrong per 1,000 dice, rune55 val", "reading.learned.rune55_val.silently_wrong_per_1000", "<= 1", lambda v: v <= 1),
    ("Staged reader: the same by the project's checked labels (vision.dataset.VAL_LABEL_FIXES: labels the photo contradicts, "
     "checked by eye)", "reading.learned.rune55_val_checked_labels.silently_wrong_per_1000", "<= 1", lambda v: v <= 1),
    ("Staged reader: rune55 val by those checked labels, per die", "reading.learned.rune55_val_checked_labels.accuracy",
     "(>= 0.95)", lambda v: True),
    ("Staged reader: silently wrong per 1,000 dice, cup frames", "reading.learned.cup_one.silently_wrong_per_1000", "<= 1", lambda v: v <= 1),
    ("classify on the shared val crops cut 13 other ways (crop_robustness), per crop", "crops.all.right", "(higher is better)", lambda v: True),
    ("classify on those crops: silently wrong per 1,000 crops", "crops.all.silently_wrong_per_1000", "<= 1", lambda v: v <= 1),
    ("classify on number dice drawn by other_looks (600 in the full form): read right", "other_looks.number dice.right", "(higher is better)", lambda v: True),
    ("classify on those number dice: silently wrong (sure and wrong)", "other_looks.number dice.silently_wrong", "0 (<= 1 per 1,000)", lambda v: v == 0),
    ("classify on ones printed as an emblem (other_looks): silently wrong", "other_looks.emblem one.silently_wrong", "0", lambda v: v == 0),
    ("Staged reader: a thing not a die in a die's place (not_dice: a button, a coin, a glass bead...; 800 scenes in the "
     "full form): readings ok, each a wrong verdict", "not_dice.in a die's place.all.wrong_verdicts", "0", lambda v: v == 0),
    ("Staged reader: the same things in the tray in a die's place (tray mode, from below): readings ok, each a wrong verdict",
     "not_dice.in the tray, in a die's place.all.wrong_verdicts", "0", lambda v: v == 0),
    ("Staged reader: the same things beside three dice: readings ok and wrong", "not_dice.beside three dice.all.wrong_verdicts", "0",
     lambda v: v == 0),
    ("Staged reader: the same things beside three dice: read ok and right (the thing left out)",
     "not_dice.beside three dice.all.ok_and_right", "(higher is better)", lambda v: True),
    ("Staged reader: three real dice from above, one partly covered (covered: a finger, a card's edge, another die; 300 "
     "scenes in the full form): readings ok and wrong", "covered.all.wrong_verdicts", "0", lambda v: v == 0),
    ("Staged reader: the covered die read at another face without a doubt", "covered.all.covered_surely_wrong", "0", lambda v: v == 0),
    ("Staged reader: the covered die read right (sure or not)", "covered.all.covered_right", "(higher is better)", lambda v: True),
    ("Staged reader: the same dice uncovered (covered's control): readings ok and wrong", "covered.uncovered.wrong_verdicts", "0",
     lambda v: v == 0),
    ("Learned detector, 1280x960, one core, median ms", "reading.learned.speed.detector_1280x960_median_ms", "<= 3", lambda v: v <= 3),
    ("Staged read, 1280x960, 3 dice, one core, median ms", "reading.learned.speed.read_1280x960_3_dice_median_ms", "<= 10", lambda v: v <= 10),
    ("Staged read in tray mode (size and empty tray), 1280x960, 3 dice, one core, median ms", "reading.learned.speed.read_tray_mode_median_ms", "<= 10", lambda v: v <= 10),
    ("Staged read: the face model's crops in the median read of the speed row's frames (the same on any host; about "
     "0.25 ms a crop on one core here)", "reading.learned.read_cost.face_model_crops_median", "<= 22 (tests/vision/test_read_cost.py)",
     lambda v: v <= 22),
    ("Staged read in tray mode: the face model's crops in the median read", "reading.learned.read_cost_tray_mode.face_model_crops_median",
     "<= 12 (tests/vision/test_read_cost.py)", lambda v: v <= 12),
    ("Staged read: the share of a read spent in the models' network runs", "reading.learned.read_cost.models_share_of_read",
     "(what a faster model could save)", lambda v: True),
    ("All models together, bytes", "reading.models_bytes", "<= 2 MB", lambda v: v <= 2_000_000),
    ("Taught on 20 confirmed rolls: pink-elephants, per die", "teach.looks.pink-elephants.after.accuracy", ">= 0.995", lambda v: v >= 0.995),
    ("Taught on 20 confirmed rolls: pink-elephants, silently wrong", "teach.looks.pink-elephants.after.silently_wrong", "0", lambda v: v == 0),
    ("Taught on 20 confirmed rolls: mint-violet-elephants, per die", "teach.looks.mint-violet-elephants.after.accuracy", ">= 0.995", lambda v: v >= 0.995),
    ("Taught on 20 confirmed rolls: mint-violet-elephants, silently wrong", "teach.looks.mint-violet-elephants.after.silently_wrong", "0", lambda v: v == 0),
    ("Taught on 20 confirmed rolls: orange-small-pips, per die", "teach.looks.orange-small-pips.after.accuracy", ">= 0.995", lambda v: v >= 0.995),
    ("Taught on 20 confirmed rolls: orange-small-pips, silently wrong", "teach.looks.orange-small-pips.after.silently_wrong", "0", lambda v: v == 0),
    ("Taught on 20 confirmed rolls: teal-small-elephants, per die", "teach.looks.teal-small-elephants.after.accuracy", ">= 0.995", lambda v: v >= 0.995),
    ("Taught on 20 confirmed rolls: teal-small-elephants, silently wrong", "teach.looks.teal-small-elephants.after.silently_wrong", "0", lambda v: v == 0),
    ("pi-check: conformance frames read differently on arm64 (qemu)", "pi.pi_check.differ", "0", lambda v: v == 0),
    ("pi-check as a Raspberry Pi 5 (qemu's Cortex-A76): frames read differently", "pi.pi_check_pi5.differ", "0", lambda v: v == 0),
    ("pi-rehearsal: steps passed in the arm64 root", "pi.pi_rehearsal.passed", "all", lambda v: True),
    ("serve resident memory under load, MiB", "load.server_rss_mib.end_of_load", "<= 150, no growth", lambda v: v <= 150),
    ("serve under load: its own (anonymous) pages at the end, MiB (the rest of its RSS is its libraries' file pages: bench/process_memory.py)", "load.server_memory_at_end_mib.anonymous", "(the part the kernel cannot take back)", lambda v: True),
    ("action to every viewer's event, p95 ms (50 viewers, 20/s, 60 s)", "load.event_delay_ms.p95", "<= 100", lambda v: v <= 100),
    ("load errors", "load.errors", "0", lambda v: v == 0),
    ("kill -9 runs whose restarted state differs from the fold of acknowledged actions", "durability.failures", "none", lambda v: v == []),
    ("table's claims and confirmations in a flood of 300 idle + 100 slowloris connections, p95 ms", "flood.in_flood_ms.claims_and_confirms.p95", "<= 200", lambda v: v <= 200),
    ("table's Bluffs in that flood, p95 ms (a Bluff reads a rendered frame: see no_flood_ms)", "flood.in_flood_ms.bluffs.p95", "<= 200", lambda v: v <= 200),
    ("table's actions failed in that flood", "flood.table_errors", "0", lambda v: v == 0),
]


def _at(report: dict[str, Any], path: str) -> Any:
    value: Any = report
    for part in path.split("."):
        if not isinstance(value, dict) or part not in value:
            return None
        value = value[part]
    return value


def render_goals(report: dict[str, Any]) -> list[str]:
    rows = [(label, _at(report, path), goal, met) for label, path, goal, met in GOALS if _at(report, path) is not None]
    if not rows:
        return []
    lines = ["", "| goal | measured | target | met |", "| --- | --- | --- | --- |"]
    for label, value, goal, met in rows:
        verdict = "—" if goal.startswith("(") else "yes" if met(value) else "**no**"
        lines.append(f"| {label} | {value} | {goal} | {verdict} |")
    return lines


def render_figures(report: dict[str, Any]) -> str:
    """The README section: the machine, then one table per bench, from the JSON report."""
    m = report.get("machine", {})
    benches = [k for k, v in report.items() if k not in ("machine", "taken_at", "form") and isinstance(v, dict)]
    lines = [
        START,
        f"Taken {report.get('taken_at', '?')} by `elephants-bluff bench` ({report.get('form', '?')} form; {', '.join(benches) or 'no benches'}) on "
        f"{m.get('cpu_model', m.get('processor', '?'))}, {m.get('cpus', '?')} CPUs, {m.get('memory_gib', '?')} GiB, "
        f"{m.get('platform', '?')}, Python {m.get('python', '?')}; load average at start {m.get('load_average_at_start', '?')}. "
        "The whole report is `docs/bench-latest.json`.",
    ]
    lines += render_goals(report)
    for name, figures in report.items():
        if name in ("machine", "taken_at", "form") or not isinstance(figures, dict):
            continue
        lines += ["", f"**{name}**", "", "| figure | value |", "| --- | --- |"]
        for key, value in _flatten(figures):
            if "confusion" in key:
                continue  # matrices are in the JSON report and the model card
            shown = json.dumps(value) if not isinstance(value, str) else value
            lines.append(f"| {key} | {shown.replace('|', '/')} |")
    lines.append(END)
    return "\n".join(lines)


def update_readme(path: Path, report: dict[str, Any]) -> None:
    """Replace the figures between the markers (or add a 'Latest figures' section)."""
    text = path.read_text(encoding="utf-8") if path.exists() else ""
    section = render_figures(report)
    if START in text and END in text:
        before, rest = text.split(START, 1)
        after = rest.split(END, 1)[1]
        text = before + section + after
    else:
        text = text.rstrip("\n") + "\n\n## Latest figures\n\n" + section + "\n"
    path.write_text(text, encoding="utf-8")
