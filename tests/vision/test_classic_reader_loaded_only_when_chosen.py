"""The classic reader is a second plug-in: its finder and cascade (``vision.classic_reader``, ``vision.finder``,
``vision.marks``) load only when the settings choose ``reader.detector = "classic"``, so the default staged reader
and the served page do not carry them."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CLASSIC_MODULES = ("vision.classic_reader", "vision.finder", "vision.marks")


def _modules_after(code: str) -> set[str]:
    probe = code + "\nimport sys\nprint(' '.join(m for m in sys.modules if m.startswith('vision.')))"
    out = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    return set(out.split())


def test_the_default_reader_and_the_page_load_no_classic_module(tmp_path):
    loaded = _modules_after(
        "from companion.app.settings import CONFIG_NAME, Settings, init_config\n"
        "from companion.app.web import create_app\n"
        "from pathlib import Path\n"
        f"d = Path({str(tmp_path)!r}); init_config(d)\n"
        "create_app(d, simulate=True, settings=Settings.load(d / CONFIG_NAME)).app_context().push()\n"
        "from vision.reader import load_reader\n"
        "load_reader(Settings.defaults())\n")
    assert "vision.pipeline.reader" in loaded
    assert not loaded & set(CLASSIC_MODULES), loaded & set(CLASSIC_MODULES)


def test_choosing_the_classic_plug_in_loads_it_and_it_reads():
    loaded = _modules_after(
        "import numpy as np\n"
        "from companion.app.settings import Settings\n"
        "from vision.reader import load_reader\n"
        "r = load_reader(Settings.defaults().with_overrides(reader__detector='classic'))\n"
        "assert type(r).__name__ == 'DiceReader' and r.read(np.zeros((48, 64, 3), np.uint8)).status == 'uncertain'\n")
    assert set(CLASSIC_MODULES) <= loaded
