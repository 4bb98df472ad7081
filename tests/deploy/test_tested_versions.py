"""The reading stack's tested versions: what ``make pi-check`` read equal on arm64, and what the Pi installs.

``deploy/pi/tested-versions.txt`` holds numpy, onnxruntime and OpenCV at the versions the last passing
``make pi-check`` read every conformance frame equal with; ``install-pi.sh`` and ``make venv`` install with it as
pip constraints (docs/PI.md).
"""

from __future__ import annotations

import sys
import tomllib

from packaging.requirements import Requirement

from tests.deploy.scripts import ROOT, load_script

pi_check = load_script("pi_check_tested_versions", ROOT / "deploy" / "pi" / "pi_check.py")
common = sys.modules[pi_check.Chroot.__module__]  # deploy/pi/common.py, as the script imported it
pins = common.pinned_versions


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


def test_the_pi_install_and_this_machines_install_both_use_the_tested_versions():
    install = (ROOT / "deploy" / "install-pi.sh").read_text(encoding="utf-8")
    assert 'TESTED_VERSIONS="$SRC/deploy/pi/tested-versions.txt"' in install and '--constraint "$TESTED_VERSIONS"' in install
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    assert "TESTED := deploy/pi/tested-versions.txt" in makefile and makefile.count("-c $(TESTED)") == 2
