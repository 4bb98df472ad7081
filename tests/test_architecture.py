"""The house's shape: layers that import only downward, no circles, and a wheel of product code only.

``lint-imports`` (run by ``make test`` before pytest) checks the layer and
forbidden-tool contracts named in ``pyproject.toml``; these tests check what
it does not: circles inside one layer, that the bottom layers load nothing
above them, and what the built wheel holds.
"""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import grimp
import pytest

ROOT = Path(__file__).resolve().parents[1]
PRODUCT = ("companion", "vision", "firmware")


def _cycles(graph: grimp.ImportGraph) -> list[list[str]]:
    """Strongly connected groups of more than one module (Tarjan), i.e. import circles."""
    modules = sorted(graph.modules)
    edges = {m: sorted(x for x in graph.find_modules_directly_imported_by(m) if x in graph.modules) for m in modules}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in edges[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for m in modules:
        if m not in index:
            visit(m)
    return found


def test_no_product_module_imports_in_a_circle():
    graph = grimp.build_graph(*PRODUCT)
    assert _cycles(graph) == []


def test_the_circle_finder_finds_a_circle(tmp_path, monkeypatch):
    pkg = tmp_path / "roundabout"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from roundabout import b\n")
    (pkg / "b.py").write_text("from roundabout import a\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert _cycles(grimp.build_graph("roundabout")) == [["roundabout.a", "roundabout.b"]]


@pytest.mark.parametrize(
    ("bottom", "above"),
    [
        ("companion.core.settings, companion.core.reading, companion.core.capture, companion.core.protocols, companion.core.files", ("companion.rules", "vision", "firmware", "companion.app")),
        ("companion.rules", ("vision", "firmware", "companion.app")),
        ("vision.reader, vision.sources", ("firmware", "companion.app")),
        ("firmware.table, firmware.capture", ("companion.app",)),
    ],
)
def test_importing_a_layer_loads_nothing_above_it(bottom, above):
    code = f"import sys; import {bottom}; print(sorted({{m.split('.')[0] if not m.startswith('companion.') else '.'.join(m.split('.')[:2]) for m in sys.modules}}))"
    loaded = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    assert not [m for m in above if f"'{m}'" in loaded], loaded


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> zipfile.ZipFile:
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--wheel-dir", str(out), str(ROOT)], check=True, capture_output=True)
    (built,) = out.glob("elephants_bluff-*.whl")
    return zipfile.ZipFile(built)


def test_the_wheel_holds_only_product_code_models_and_page_files(wheel):
    names = wheel.namelist()
    tops = {n.split("/", 1)[0] for n in names if not n.split("/", 1)[0].endswith(".dist-info")}
    assert tops == {"companion", "vision", "firmware", "models"}
    assert not [n for n in names if n.startswith(("models/training/", "bench/", "tests/"))]
    assert any(n.startswith("models/dice-faces-") and n.endswith(".onnx") for n in names)
    for shipped in ("companion/app/web/templates/base.html", "companion/app/web/static/js/table.js", "companion/app/web/translations/pl/LC_MESSAGES/messages.mo", "companion/app/web/translations/pl/LC_MESSAGES/messages.po"):
        assert shipped in names


def test_the_wheel_declares_no_test_or_training_tool_as_a_runtime_dependency(wheel):
    (metadata,) = [n for n in wheel.namelist() if n.endswith(".dist-info/METADATA")]
    runtime = [line for line in wheel.read(metadata).decode().splitlines() if line.startswith("Requires-Dist:") and "extra ==" not in line]
    assert runtime and not [r for r in runtime if any(tool in r for tool in ("torch", "pytest", "requests", "psutil", "playwright", "onnx>"))]
