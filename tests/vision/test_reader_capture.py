"""The one capture loop with the real reader: camera + reader, and a missing camera as a problem, not a crash."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from companion.core.errors import NotFound
from firmware.capture import CaptureLoop
from vision.classifier import file_model_id, shipped_model_id, shipped_model_path
from vision.sources.files import FilesSource
from vision.sources.simulated import SimulatedTableSource


def test_capture_reads_the_simulated_table_through_the_real_reader(reader):
    table = SimulatedTableSource(rng=np.random.default_rng(8), touching=0.0, glare=0)
    src = CaptureLoop(table, reader, wait_for_still=False)
    src.set_next_values([5, 2, 6])
    cap = src.capture()
    assert cap.problem is None and cap.reading.status == "ok", cap.reading.reason
    assert sorted(cap.reading.tops()) == [2, 5, 6]
    assert cap.frame_jpeg[:2] == b"\xff\xd8" and cap.annotated_jpeg[:2] == b"\xff\xd8"
    assert src.name == "simulated" and src.health() == "ok"


def test_missing_camera_gives_a_capture_with_a_problem(reader, tmp_path):
    src = CaptureLoop(FilesSource(tmp_path / "gone"), reader, wait_for_still=False)
    cap = src.capture()
    assert cap.reading is None and "does not exist" in cap.problem
    with pytest.raises(NotFound):
        src.set_next_values([1, 2, 3])


def test_shipped_model_is_small_and_its_id_is_its_hash():
    path = shipped_model_path()
    assert path.stat().st_size <= 1_000_000
    assert path.stem == file_model_id(path) == shipped_model_id()


def test_runtime_never_imports_torch():
    code = ("import sys, numpy as np; from companion.app.settings import Settings; import vision.commands, firmware.capture, vision.sources;"
            "from vision.reader import load_reader; r = load_reader(Settings.defaults()); r.read(np.zeros((64, 64, 3), np.uint8));"
            "import bench.reader; print('torch' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == "False"
