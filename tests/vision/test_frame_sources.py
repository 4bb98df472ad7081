"""The camera backends: files and the simulated table for real; the webcam and the Pi camera where present."""

from __future__ import annotations

import importlib.util
import sys

import cv2
import numpy as np
import pytest

from companion.core.errors import BadRequest, HardwareError
from companion.app.settings import Settings
from vision.sources import build_frame_source
from vision.sources.files import FilesSource
from vision.sources.picamera2 import Picamera2Source
from vision.sources.simulated import SimulatedTableSource
from vision.sources.webcam import WebcamSource


def _write(path, value):
    cv2.imwrite(str(path), np.full((40, 60, 3), value, np.uint8))


def test_files_source_cycles_through_a_folder_in_name_order(tmp_path):
    for name, v in (("b.png", 20), ("a.png", 10), ("c.jpg", 30), ("notes.txt", 0)):
        _write(tmp_path / name, v) if name.endswith(("png", "jpg")) else (tmp_path / name).write_text("x")
    src = FilesSource(tmp_path)
    src.open()
    got = [int(src.grab().mean() + 0.5) for _ in range(4)]
    assert got[:3] == [10, 20, 30] and got[3] == 10
    assert src.health() == "ok"


def test_files_source_serves_a_single_file(tmp_path):
    _write(tmp_path / "one.png", 77)
    src = FilesSource(tmp_path / "one.png")
    assert src.grab().shape == (40, 60, 3) and src.grab()[0, 0, 0] == 77


def test_files_source_without_a_folder_says_so_at_open(tmp_path):
    src = FilesSource(tmp_path / "missing")
    with pytest.raises(HardwareError, match="does not exist"):
        src.open()
    assert "does not exist" in src.health()
    with pytest.raises(HardwareError, match="no images"):
        FilesSource(tmp_path).open()
    with pytest.raises(HardwareError, match="camera.files_dir"):
        FilesSource("").open()


def test_files_source_turns_a_broken_image_into_a_hardware_error(tmp_path):
    (tmp_path / "bad.jpg").write_bytes(b"not a jpeg")
    with pytest.raises(HardwareError, match="The files camera cannot use one of its photos: .*bad.jpg"):
        FilesSource(tmp_path).grab()


def test_simulated_source_renders_the_faces_it_is_given_then_random_ones():
    src = SimulatedTableSource(rng=np.random.default_rng(0))
    src.set_next_values([1, 5, 6])
    frame = src.grab()
    assert frame.shape == (960, 1280, 3)
    assert src.last_tops == [1, 5, 6]
    assert [d.seen for d in src.last_dice] == [6, 2, 1]  # seen from below: the opposite faces
    src.grab()
    assert len(src.last_tops) == 3 and all(1 <= v <= 6 for v in src.last_tops)


def test_simulated_source_from_above_shows_the_top_faces():
    src = SimulatedTableSource(rng=np.random.default_rng(0), view="above")
    src.set_next_values([2, 3, 4])
    src.grab()
    assert [d.seen for d in src.last_dice] == [2, 3, 4]


@pytest.mark.parametrize("values", [[], [0, 1, 2], [7, 1, 1], ["6", 1, 1], [True, 1, 2], "123", [1] * 13])
def test_simulated_source_refuses_impossible_faces(values):
    with pytest.raises(BadRequest):
        SimulatedTableSource().set_next_values(values)


def test_backend_is_chosen_by_the_setting(tmp_path):
    s = Settings.defaults()
    assert isinstance(build_frame_source(s), SimulatedTableSource)
    assert isinstance(build_frame_source(s.with_overrides(camera__backend="files", camera__files_dir=str(tmp_path))), FilesSource)
    assert isinstance(build_frame_source(s.with_overrides(camera__backend="webcam")), WebcamSource)
    assert isinstance(build_frame_source(s.with_overrides(camera__backend="picamera2")), Picamera2Source)


def test_missing_webcam_is_a_clear_error():
    src = WebcamSource(device=63)
    with pytest.raises(HardwareError, match="No webcam"):
        src.open()


@pytest.mark.skipif(importlib.util.find_spec("picamera2") is not None, reason="picamera2 is installed: the missing-library path cannot be shown here")
def test_missing_picamera2_library_is_a_clear_error():
    with pytest.raises(HardwareError, match="picamera2"):
        Picamera2Source().open()
    assert "picamera2" in Picamera2Source().health()


@pytest.mark.skipif(importlib.util.find_spec("picamera2") is not None, reason="picamera2 is installed: a stand-in cannot take its place")
@pytest.mark.parametrize(("failure", "said"), [
    # Raspberry Pi OS's simplejpeg, built for its numpy 1, imported under the environment's numpy 2 (docs/PI.md)
    ('raise ValueError("numpy.dtype size changed, may indicate binary incompatibility. Expected 96 from C header, got 88 from PyObject")',
     "ValueError: numpy.dtype size changed"),
    ("import libcamera_not_here", "No module named 'libcamera_not_here'"),
])
def test_a_pi_camera_library_that_does_not_load_is_a_clear_error(tmp_path, monkeypatch, failure, said):
    """picamera2 installed but failing on import (a part it loads missing, or built for another numpy) says so, and
    how to mend it, instead of calling the library missing or escaping as a crash from ``open`` and ``health``."""
    (tmp_path / "picamera2").mkdir()
    (tmp_path / "picamera2" / "__init__.py").write_text(failure + "\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "picamera2", raising=False)
    with pytest.raises(HardwareError, match="installed but cannot be loaded") as caught:
        Picamera2Source().open()
    assert said in caught.value.message and "install-pi.sh" in caught.value.message
    assert caught.value.code == "camera_library"  # its software, not its cable: the check says what to install, not to reseat the ribbon
    assert "cannot be loaded" in Picamera2Source().health()


@pytest.mark.skipif(importlib.util.find_spec("picamera2") is None, reason="needs a Raspberry Pi with picamera2 and a camera attached")
def test_pi_camera_gives_bgr_frames():  # pragma: no cover - runs on the Pi only
    src = Picamera2Source(640, 480)
    try:
        frame = src.grab()
    finally:
        src.close()
    assert frame.shape == (480, 640, 3) and frame.dtype == np.uint8


def test_pi_camera_controls_lock_exposure_and_white_balance_when_set():
    assert Picamera2Source().controls() == {}
    c = Picamera2Source(exposure_us=8000, analogue_gain=2.0, colour_gains=[1.5, 1.8]).controls()
    assert c == {"AeEnable": False, "ExposureTime": 8000, "AnalogueGain": 2.0, "AwbEnable": False, "ColourGains": (1.5, 1.8)}


def test_a_seeded_simulated_table_shows_the_same_rolls_from_every_start():
    """``camera.simulated_seed``: a demonstration or a test sees the same layouts each time it starts; 0 draws anew."""
    def first_frame(seed: int) -> np.ndarray:
        src = build_frame_source(Settings.defaults().with_overrides(camera__simulated_seed=seed))
        src.set_next_values([6, 4, 2])
        return src.grab()

    assert np.array_equal(first_frame(7), first_frame(7))
    assert not np.array_equal(first_frame(7), first_frame(8))
    assert not np.array_equal(first_frame(0), first_frame(0))
