"""The reading stack's tested versions: what ``make pi-check`` read equal on arm64, and what the Pi installs.

``deploy/pi/tested-versions.txt`` holds numpy, onnxruntime and OpenCV at the versions the last passing
``make pi-check`` read every conformance frame equal with; ``install-pi.sh`` and ``make venv`` install with it as
pip constraints (docs/PI.md).
"""

from __future__ import annotations

import sys
import tomllib
from importlib import metadata

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from tests.deploy.scripts import ROOT, load_script

pi_check = load_script("pi_check_tested_versions", ROOT / "deploy" / "pi" / "pi_check.py")
common = sys.modules[pi_check.Chroot.__module__]  # deploy/pi/common.py, as the script imported it
pins = common.pinned_versions
lock_versions = load_script("lock_versions", ROOT / "deploy" / "lock_versions.py")


def test_the_tested_versions_pin_the_reading_stack_within_the_projects_ranges():
    pinned = pins(common.TESTED_VERSIONS.read_text(encoding="utf-8"))
    assert tuple(pinned) == common.READING_STACK
    wanted = {r.name: r for r in map(Requirement, tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["dependencies"])}
    for name, version in pinned.items():
        assert version in wanted[name].specifier, f"{name} {version} is outside the project's range {wanted[name].specifier}"


def test_pi_check_writes_only_the_reading_stack_and_where_it_was_checked():
    versions = {"numpy": "2.4.6", "onnxruntime": "1.32.0", "opencv-python-headless": "5.0.0.93", "flask": "3.1.3", "elephants-bluff": "0.1.0"}
    text = pi_check.tested_versions_text(versions, "abc1234", "2026-12-02T10:00:00Z")
    assert pins(text) == {"numpy": "2.4.6", "onnxruntime": "1.32.0", "opencv-python-headless": "5.0.0.93"}
    assert "abc1234" in text and "2026-12-02T10:00:00Z" in text


def test_the_pi_install_and_this_machines_install_both_use_the_tested_and_locked_versions():
    install = (ROOT / "deploy" / "install-pi.sh").read_text(encoding="utf-8")
    assert 'TESTED_VERSIONS="$SRC/deploy/pi/tested-versions.txt"' in install and '--constraint "$TESTED_VERSIONS"' in install
    assert 'LOCKED_VERSIONS="$SRC/deploy/locked-versions.txt"' in install and '--constraint "$LOCKED_VERSIONS"' in install
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    assert "TESTED := deploy/pi/tested-versions.txt" in makefile and "LOCKED := deploy/locked-versions.txt" in makefile
    assert "PINS := -c $(TESTED) -c $(LOCKED)" in makefile
    installs = [line for line in makefile.splitlines() if "pip install" in line]
    assert len(installs) >= 3 and all("$(PINS)" in line or "-c $(LOCKED)" in line for line in installs), installs


def _locked() -> dict[str, str]:
    return {canonicalize_name(n): v for n, v in pins(common.LOCKED_VERSIONS.read_text(encoding="utf-8")).items()}


def test_the_locked_versions_hold_the_reading_stack_at_the_tested_versions():
    locked = _locked()
    for name, version in pins(common.TESTED_VERSIONS.read_text(encoding="utf-8")).items():
        assert locked[canonicalize_name(name)] == version, f"{name}: locked {locked.get(name)}, tested {version}; run make lock"


def test_every_requirement_of_the_project_is_locked_within_its_range():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    wanted = [*project["dependencies"], *project["optional-dependencies"]["test"], *project["optional-dependencies"]["pi"]]
    locked = _locked()
    for requirement in map(Requirement, wanted):
        name = canonicalize_name(requirement.name)
        assert name in locked, f"{requirement} is not in deploy/locked-versions.txt: run make lock"
        assert locked[name] in requirement.specifier, f"{name} is locked at {locked[name]}, outside {requirement.specifier}: run make lock"


def test_this_environment_holds_every_dependency_of_the_project_at_its_locked_version():
    """What `make venv` installed (so what CI tests with): the project's runtime and test dependencies, and theirs,
    each pinned in the lock and installed at that version. A dependency added to pyproject.toml without `make lock`,
    or a library upgraded by hand here, fails."""
    locked = _locked()
    seen: set[str] = set()
    todo: list[tuple[str, frozenset[str]]] = [("elephants-bluff", frozenset({"test"}))]
    while todo:
        name, extras = todo.pop()
        for text in metadata.distribution(name).requires or []:
            requirement = Requirement(text)
            if requirement.marker is not None and not any(requirement.marker.evaluate({"extra": e}) for e in ("", *extras)):
                continue
            dep = canonicalize_name(requirement.name)
            key = f"{dep}[{','.join(sorted(requirement.extras))}]"
            if key in seen:
                continue
            seen.add(key)
            installed = metadata.version(dep)
            assert dep in locked, f"{dep} (needed by {name}) is not in deploy/locked-versions.txt: run make lock"
            assert installed == locked[dep], f"{dep} {installed} is installed here, {locked[dep]} locked: run make venv (or make lock)"
            todo.append((dep, frozenset(requirement.extras)))
    assert {"flask", "numpy", "pytest", "werkzeug"} <= {key.split("[")[0] for key in seen}
    assert metadata.version("pip") == locked["pip"], "make venv installs pip at its locked version: run make venv (or make lock)"


def test_the_lock_is_written_sorted_with_a_header_saying_where_it_came_from():
    text = lock_versions.locked_text("numpy==2.4.6\nFlask==3.1.3\nbabel==2.19.0\n", "abc1234", "2026-12-02T12:00:00Z")
    lines = text.splitlines()
    assert [line for line in lines if not line.startswith("#")] == ["babel==2.19.0", "Flask==3.1.3", "numpy==2.4.6"]
    assert "abc1234" in text and "2026-12-02T12:00:00Z" in text and "make lock" in text
    assert pins(text) == {"babel": "2.19.0", "Flask": "3.1.3", "numpy": "2.4.6"}


def test_make_lock_checks_what_the_pi_installs_the_runtime_and_the_pi_extra_not_the_test_tools():
    wanted = lock_versions.pi_requirements()
    names = {canonicalize_name(Requirement(r).name) for r in wanted}
    assert {"flask", "numpy", "onnxruntime", "opencv-python-headless", "gpiozero", "simplejpeg"} <= names
    assert not names & {"pytest", "playwright", "hypothesis", "torch"}
