"""``python -m models.training.search``: recipes × seeds side by side, a summary of each run, a deadline that
stops runs without losing them, and bad arguments refused in words."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

import pytest

from models.training.search import last_epoch, parse_recipe, parse_seeds

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("bad", ["--epochs 20", "=--epochs 20", "two words=--epochs 1", "a/b=--epochs 1"])
def test_a_recipe_without_a_plain_name_is_refused(bad):
    with pytest.raises(argparse.ArgumentTypeError, match="NAME=ARGS"):
        parse_recipe(bad)


@pytest.mark.parametrize("bad", ["", "3,four", "3.5"])
def test_seeds_that_are_not_whole_numbers_are_refused(bad):
    with pytest.raises(argparse.ArgumentTypeError):
        parse_seeds(bad)


def test_the_last_epoch_line_of_a_log_is_read(tmp_path):
    log = tmp_path / "r.log"
    log.write_text("data real: 10 crops\n"
                   "epoch 1: loss 0.9000 val {'val_real': 0.5, 'sure_wrong': 0} (3 s)\n"
                   "epoch 2: loss 0.4000 val {'val_real': 0.75, 'sure_wrong': 1} (6 s)\nwrote x.onnx\n")
    assert last_epoch(log) == {"epoch": 2, "loss": 0.4, "val": {"val_real": 0.75, "sure_wrong": 1}}
    assert last_epoch(tmp_path / "none.log") is None


def _search(tmp_path: Path, *more: str, timeout: int = 900) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "models.training.search", "--out", str(tmp_path / "s"), "--data=--quick", *more],
                          cwd=ROOT, capture_output=True, text=True, timeout=timeout)


def test_two_names_alike_are_refused_before_anything_runs(tmp_path):
    run = _search(tmp_path, "a=--epochs 1", "a=--epochs 2")
    assert run.returncode != 0 and "same name" in run.stderr and not (tmp_path / "s").exists()


def test_every_recipe_runs_with_every_seed_and_is_summed_up(tmp_path):
    pytest.importorskip("torch", reason="PyTorch is the optional train extra (make test-training installs it and runs these)")
    run = _search(tmp_path, "--seeds", "3,4", "one=--epochs 1", "lower=--epochs 1 --lr 1e-3")
    assert run.returncode == 0, run.stderr[-2000:]
    summary = json.loads((tmp_path / "s" / "summary.json").read_text())
    assert sorted(summary["runs"]) == ["lower-s3", "lower-s4", "one-s3", "one-s4"]
    for key, r in summary["runs"].items():
        assert r["finished"] and r["last_epoch"]["epoch"] == 1 and Path(r["model"]).is_file(), key
    assert summary["runs"]["one-s3"]["model"] != summary["runs"]["one-s4"]["model"]  # another seed, another net


def test_runs_still_going_at_the_deadline_are_stopped_and_say_so(tmp_path):
    pytest.importorskip("torch", reason="PyTorch is the optional train extra (make test-training installs it and runs these)")
    run = _search(tmp_path, "--deadline", "20", "long=--epochs 200")
    assert run.returncode == 0, run.stderr[-2000:]
    (r,) = json.loads((tmp_path / "s" / "summary.json").read_text())["runs"].values()
    assert r["stopped_at_deadline"] and not r["finished"] and r["model"] is None
    assert "stopped at the deadline" in run.stdout


def test_a_run_stopped_at_the_deadline_leaves_no_augmentation_worker_behind(tmp_path):
    pytest.importorskip("torch", reason="PyTorch is the optional train extra (make test-training installs it and runs these)")
    run = _search(tmp_path, "--deadline", "45", "--workers", "2", "long=--epochs 200")
    assert run.returncode == 0, run.stderr[-2000:]
    (r,) = json.loads((tmp_path / "s" / "summary.json").read_text())["runs"].values()
    # 45 s is past the quick data and into training, where the workers are, on an unloaded machine; nothing
    # here asserts how far it got, since load moves that (it is the workers' way out that is checked)
    assert r["stopped_at_deadline"]
    left = subprocess.run(["pgrep", "-f", str(tmp_path / "s")], capture_output=True, text=True)
    assert left.stdout.strip() == "", "processes of the stopped run are still going"
