"""The empty tray's photo and the settings taken with it switch in one step, config.toml's write: a process stopped
dead at any moment of ``store_with_empty_tray`` (as by a power cut: no clean-up runs) leaves config.toml naming a
whole photo with the region it was taken with, and the next store takes away what was left."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import cv2
import numpy as np
import pytest

import vision.calibrate as calibrate
from companion.core.settings import CONFIG_NAME, Settings, write_config
from vision.calibrate import EMPTY_TRAY, empty_tray_name, store_with_empty_tray
from vision.reader import _empty_tray

ROOT = Path(__file__).resolve().parents[2]
OLD_REGION, NEW_REGION, LAST_REGION = [0, 0, 64, 48], [4, 4, 56, 40], [8, 8, 48, 32]

#: Stores ``new.png`` with NEW_REGION, and the process dies (SIGKILL: nothing after it runs) right after the step named.
STOPPED_DEAD = r"""
import json, os, signal, sys
from pathlib import Path
import companion.app.settings  # every setting registered, as the command line has them
import vision.calibrate as calibrate

instance, png, stop_after, region = Path(sys.argv[1]), Path(sys.argv[2]).read_bytes(), sys.argv[3], json.loads(sys.argv[4])
for step in ("atomic_write", "store", "_take_away_old_photos"):
    def stopping(*args, _real=getattr(calibrate, step), _step=step, **kwargs):
        out = _real(*args, **kwargs)
        if _step == stop_after:
            os.kill(os.getpid(), signal.SIGKILL)
        return out
    setattr(calibrate, step, stopping)
calibrate.store_with_empty_tray(instance, png, {"camera.empty_tray": calibrate.empty_tray_name(png), "camera.tray_region": region})
"""


def _photo(shade: int, seed: int) -> bytes:
    grey = np.clip(np.random.default_rng(seed).normal(shade, 12, (48, 64)), 0, 255).astype(np.uint8)
    return cv2.imencode(".png", grey)[1].tobytes()


def _kept_pair(instance: Path) -> tuple[bytes, list]:
    """The photo config.toml names, as bytes (it must be whole: the reader opens it), and the region beside it."""
    settings = Settings.load(instance / CONFIG_NAME, environ={})
    image, problem = _empty_tray(settings)
    assert problem is None and image is not None, problem
    return (instance / settings["camera.empty_tray"]).read_bytes(), settings["camera.tray_region"]


def _old_pair(instance: Path, earlier_version: bool) -> bytes:
    """An instance holding an empty tray and its region: stored by this version, or as earlier versions kept it (one
    name, ``empty-tray.png``, overwritten each time)."""
    photo = _photo(100, 1)
    if earlier_version:
        (instance / EMPTY_TRAY).write_bytes(photo)
        write_config(instance, {"camera.empty_tray": EMPTY_TRAY, "camera.tray_region": OLD_REGION})
    else:
        write_config(instance, {})
        store_with_empty_tray(instance, photo, {"camera.empty_tray": empty_tray_name(photo), "camera.tray_region": OLD_REGION})
    return photo


@pytest.mark.parametrize("earlier_version", [False, True], ids=["stored-by-this-version", "stored-by-an-earlier-version"])
@pytest.mark.parametrize("stop_after, switched", [("atomic_write", False), ("store", True), ("_take_away_old_photos", True)])
def test_a_store_stopped_dead_at_any_step_leaves_a_whole_photo_with_its_own_region(tmp_path, earlier_version, stop_after, switched):
    old = _old_pair(tmp_path, earlier_version)
    new = _photo(160, 2)
    (tmp_path.parent / f"{tmp_path.name}-new.png").write_bytes(new)
    run = subprocess.run([sys.executable, "-c", STOPPED_DEAD, str(tmp_path), str(tmp_path.parent / f"{tmp_path.name}-new.png"), stop_after, json.dumps(NEW_REGION)],
                         cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)}, capture_output=True, text=True)
    assert run.returncode == -9, run.stderr  # stopped dead where it was told, not by an error of its own

    assert _kept_pair(tmp_path) == ((new, NEW_REGION) if switched else (old, OLD_REGION))

    last = _photo(200, 3)  # the next set-up takes away every photo config.toml no longer names
    store_with_empty_tray(tmp_path, last, {"camera.empty_tray": empty_tray_name(last), "camera.tray_region": LAST_REGION})
    assert _kept_pair(tmp_path) == (last, LAST_REGION)
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith("empty-tray")) == [empty_tray_name(last)]


def test_the_owner_stopping_calibrate_just_after_config_toml_names_the_new_photo_keeps_that_photo(tmp_path, monkeypatch):
    """Ctrl-C lands between config.toml's write and the rest: the clean-up that takes a new photo away on a failed
    write must not take away the photo config.toml now names."""
    _old_pair(tmp_path, earlier_version=False)
    new = _photo(160, 2)
    real_store = calibrate.store

    def store_then_ctrl_c(*args, **kwargs):
        real_store(*args, **kwargs)
        raise KeyboardInterrupt

    monkeypatch.setattr(calibrate, "store", store_then_ctrl_c)
    with pytest.raises(KeyboardInterrupt):
        store_with_empty_tray(tmp_path, new, {"camera.empty_tray": empty_tray_name(new), "camera.tray_region": NEW_REGION})
    assert _kept_pair(tmp_path) == (new, NEW_REGION)


def test_the_same_photo_stored_again_is_kept_when_config_toml_cannot_be_written(tmp_path, monkeypatch):
    """A tray photographed twice alike has one name: the photo config.toml names is written again, and a failed
    write of config.toml after it does not take it away."""
    photo = _old_pair(tmp_path, earlier_version=False)
    store_with_empty_tray(tmp_path, photo, {"camera.empty_tray": empty_tray_name(photo), "camera.tray_region": NEW_REGION})
    assert _kept_pair(tmp_path) == (photo, NEW_REGION)

    def card_full(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(calibrate, "store", card_full)
    with pytest.raises(OSError):
        store_with_empty_tray(tmp_path, photo, {"camera.empty_tray": empty_tray_name(photo), "camera.tray_region": LAST_REGION})
    assert _kept_pair(tmp_path) == (photo, NEW_REGION)


def test_updates_that_name_another_photo_are_refused(tmp_path):
    write_config(tmp_path, {})
    photo = _photo(100, 1)
    with pytest.raises(ValueError, match="must name the empty tray's photo"):
        store_with_empty_tray(tmp_path, photo, {"camera.empty_tray": EMPTY_TRAY, "camera.tray_region": OLD_REGION})
    assert not [p for p in tmp_path.iterdir() if p.name.startswith("empty-tray")]


def test_photos_an_owner_named_by_hand_stay_when_a_new_empty_tray_is_stored(tmp_path):
    """Only the names ``store_with_empty_tray`` gives (and earlier versions' ``empty-tray.png``) are taken away."""
    _old_pair(tmp_path, earlier_version=True)
    mine = ["empty-tray-mine.png", "my-tray.png", "empty-tray-0123456789ab.png.bak"]
    for name in mine:
        (tmp_path / name).write_bytes(_photo(90, 4))
    new = _photo(160, 2)
    store_with_empty_tray(tmp_path, new, {"camera.empty_tray": empty_tray_name(new), "camera.tray_region": NEW_REGION})
    assert sorted(p.name for p in tmp_path.iterdir() if p.name != CONFIG_NAME) == sorted(mine + [empty_tray_name(new)])
