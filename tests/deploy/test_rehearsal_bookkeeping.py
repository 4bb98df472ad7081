"""make pi-rehearsal's own logic, without emulation: how steps are counted, what a refusal must look like, the lock probe."""

from __future__ import annotations

import fcntl
import subprocess

import pytest

from tests.deploy.scripts import ROOT, load_script

rehearsal = load_script("rehearsal_under_test", ROOT / "deploy" / "pi" / "rehearsal.py")


@pytest.fixture
def r(tmp_path):
    return rehearsal.Rehearsal(tmp_path / "result.json", keep=False)


def test_a_step_that_raises_fails_with_its_reason_and_the_next_that_needs_it_is_not_run(r, capsys):
    def broken():
        raise rehearsal.StepFailed("the install failed (exit 1)")

    assert r.step("install", broken) is False
    assert r.step("health", lambda: "ok", ["install"]) is False
    assert r.step("docs", lambda: "fine") is True
    assert [(s["name"], s["passed"]) for s in r.steps] == [("install", False), ("health", False), ("docs", True)]
    assert r.steps[0]["detail"] == "the install failed (exit 1)"
    assert r.steps[1]["detail"] == "not run: it needs 'install', which did not pass"
    assert "FAIL install" in capsys.readouterr().out


def test_a_refusal_must_be_exit_1_and_one_sentence_that_says_the_words(r):
    one = subprocess.CompletedProcess([], 1, "", "install-pi: port 8000 is already used by another program on this Pi\n")
    assert r.refusal(one, "already used").startswith("install-pi: port 8000")
    with pytest.raises(rehearsal.StepFailed, match="not one sentence"):
        r.refusal(subprocess.CompletedProcess([], 1, "", "install-pi: warning: x\ninstall-pi: port 8000 is already used\n"), "already used")
    with pytest.raises(rehearsal.StepFailed, match="exit 0, not 1"):
        r.refusal(subprocess.CompletedProcess([], 0, "Done.", ""), "already used")
    with pytest.raises(rehearsal.StepFailed, match="does not say"):
        r.refusal(one, "Bookworm")


def test_the_lock_probe_sees_a_held_lock_without_taking_it(tmp_path):
    lock = tmp_path / "install.lock"
    assert rehearsal.lock_held(lock) is False  # no file yet
    lock.write_text("", encoding="utf-8")
    assert rehearsal.lock_held(lock) is False
    with open(lock, "w") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        assert rehearsal.lock_held(lock) is True
        with open(lock, "w") as other:  # the probe left the lock to its holder
            with pytest.raises(BlockingIOError):
                fcntl.flock(other, fcntl.LOCK_EX | fcntl.LOCK_NB)
    assert rehearsal.lock_held(lock) is False
