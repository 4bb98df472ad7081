"""The reader loads onnxruntime with Microsoft's usage telemetry off (``vision/onnx_runtime.py``).

onnxruntime's PyPI builds keep a device identifier and a queue of usage events under
``~/.cache/Microsoft/DeveloperTools/.onnxruntime`` and upload them; on the Pi that is the instance
folder. Each case runs in a fresh process with its own home, as onnxruntime decides once, when it is
first imported.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
KEPT = Path(".cache") / "Microsoft" / "DeveloperTools" / ".onnxruntime"
#: onnxruntime keeps quiet where one of these says it runs under CI (read from its library's strings; seen with
#: ``CI=true``); a Pi at a table has none, so each process here runs without them, as the Pi's service does.
CI_MARKS = ("CI", "TF_BUILD", "GITHUB_ACTIONS", "GITLAB_CI", "CIRCLECI", "TRAVIS", "JENKINS_URL", "CODEBUILD_BUILD_ID",
            "BUILDKITE", "TEAMCITY_VERSION", "APPVEYOR", "BITBUCKET_BUILD_NUMBER")
READ_A_FRAME = ("import numpy as np; from companion.app.settings import Settings; from vision.reader import load_reader; "
                "load_reader(Settings.defaults()).read(np.full((480, 640, 3), 90, np.uint8))")


def files_kept(code: str, home: Path, **env: str) -> list[str]:
    """What onnxruntime keeps in ``home`` after a process runs ``code`` (the switch and the CI marks left out, unless
    ``env`` sets them)."""
    environ = {k: v for k, v in os.environ.items() if k not in ("ORT_DISABLE_TELEMETRY", *CI_MARKS)}
    environ.update(HOME=str(home), PYTHONPATH=str(ROOT), **env)
    subprocess.run([sys.executable, "-c", code], env=environ, cwd=ROOT, check=True, timeout=300, capture_output=True)
    return sorted(p.name for p in (home / KEPT).glob("*"))


@pytest.fixture(scope="module")
def kept_by_plain_onnxruntime(tmp_path_factory) -> list[str]:
    return files_kept("import onnxruntime", tmp_path_factory.mktemp("plain-onnxruntime"))


def test_reading_a_frame_leaves_no_telemetry_identifier_or_queue(tmp_path, kept_by_plain_onnxruntime):
    if not kept_by_plain_onnxruntime:
        pytest.skip("this onnxruntime keeps no telemetry files: there is nothing to switch off")
    assert files_kept(READ_A_FRAME, tmp_path) == []


def test_an_owner_who_turns_onnxruntimes_telemetry_on_is_obeyed(tmp_path, kept_by_plain_onnxruntime):
    if not kept_by_plain_onnxruntime:
        pytest.skip("this onnxruntime keeps no telemetry files: there is nothing to switch off")
    assert "deviceid" in files_kept(READ_A_FRAME, tmp_path, ORT_DISABLE_TELEMETRY="0")


def test_the_pis_service_switches_it_off_too():
    unit = (ROOT / "deploy" / "elephants-bluff.service").read_text(encoding="utf-8")
    assert "Environment=ORT_DISABLE_TELEMETRY=1" in unit.splitlines()
