"""The Pi tools under ``deploy/pi`` are scripts run by path, not modules of the package: the tests load them so."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[2]


def load_script(name: str, path: Path) -> ModuleType:
    """The script at ``path`` as a module called ``name``, its own folder importable while it loads (as when run)."""
    sys.path.insert(0, str(path.parent))
    try:
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module
    finally:
        sys.path.remove(str(path.parent))
