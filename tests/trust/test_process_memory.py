"""bench/process_memory.py: the resident memory of a process split into its own pages and its files'."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import psutil
import pytest

from bench.process_memory import memory_split

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")


ROOT = Path(__file__).resolve().parents[2]


def test_the_split_agrees_with_the_resident_set_psutil_reads():
    """smaps_rollup and psutil (statm) are two views of one process: the RSS and its file part agree. Read in a
    fresh process of its own: in the test run's, another test's threads (a live server, a model's pool) allocate
    between the two reads and move the RSS by megabytes."""
    code = (
        "import json, os\n"
        "import numpy as np, psutil\n"
        "from bench.process_memory import memory_split\n"
        "held = np.ones(16 * 2**20, np.uint8)  # something of its own to count\n"
        "split = memory_split(os.getpid())\n"
        "info = psutil.Process().memory_info()\n"
        "print(json.dumps([split, info.rss / 2**20, info.shared / 2**20]))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    split, rss, shared = json.loads(out)
    assert split["rss"] == pytest.approx(rss, abs=2)
    assert split["file_backed"] == pytest.approx(shared, abs=2)  # statm's shared: file pages (+ shmem)
    assert split["anonymous"] > 16


def _split_before_and_after(step: str, tmp_path: Path) -> tuple[dict, dict]:
    """``memory_split`` of a fresh Python process before and after it runs ``step`` (with ``tmp`` its folder): alone
    in its process, so no other test's buffers, freed or collected in between, move the figures."""
    code = (
        "import json, mmap, os, sys\n"
        "import numpy as np\n"
        "from pathlib import Path\n"
        "from bench.process_memory import memory_split\n"
        f"tmp = Path({str(tmp_path)!r})\n"
        "before = memory_split(os.getpid())\n"
        f"{step}\n"
        "print(json.dumps([before, memory_split(os.getpid())]))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    before, after = json.loads(out)
    return before, after


def test_memory_the_process_writes_counts_as_its_own(tmp_path):
    before, after = _split_before_and_after("held = np.ones(48 * 2**20, np.uint8)  # written: every page resident", tmp_path)
    assert after["anonymous"] - before["anonymous"] > 40
    assert after["file_backed"] - before["file_backed"] < 8


def test_a_file_read_through_a_mapping_counts_as_file_pages(tmp_path):
    (tmp_path / "library.bin").write_bytes(os.urandom(16 * 2**20))
    step = ("f = open(tmp / 'library.bin', 'rb'); mapped = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)\n"
            "total = sum(mapped[i] for i in range(0, len(mapped), mmap.PAGESIZE))  # one byte of every page")
    before, after = _split_before_and_after(step, tmp_path)
    assert after["file_backed"] - before["file_backed"] > 14
    assert after["anonymous"] - before["anonymous"] < 8


def test_the_large_folio_share_is_a_share_or_unknown():
    share = memory_split(os.getpid())["file_pages_in_large_folios"]
    assert share is None or 0.0 <= share <= 1.0
    if os.geteuid() != 0:
        assert share is None, "the page frames are hidden from other users than root"


def test_a_process_that_is_gone_is_an_error_not_a_figure():
    with pytest.raises(OSError):
        memory_split(2**22 + 12345)
