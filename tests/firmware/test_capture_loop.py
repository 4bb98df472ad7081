"""The capture loop: light, stillness, grab, light off, read; never raises, never hangs."""

from __future__ import annotations

import threading

import cv2
import numpy as np
import pytest
from gpiozero import PWMLED

from companion.core.errors import HardwareError
from firmware.capture import CaptureLoop, frame_change
from tests.firmware.helpers import ScriptedReader, ShakenTray, TrayCamera, die_row
from companion.core.reading import Reading


@pytest.fixture
def ring(pin_factory):
    led = PWMLED(18)
    yield led
    led.close()


def loop_for(camera, clock, reader=None, ring=None, **kw):
    return CaptureLoop(camera, reader or ScriptedReader(die_row([6, 5, 4])), ring, clock=clock, sleep=clock.sleep, **kw)


def test_a_still_tray_is_read_with_the_light_on_and_the_light_is_off_after(clock, ring):
    camera = TrayCamera(light=ring)
    capture = loop_for(camera, clock, ring=ring, light_level=0.6, still_frames=3, grab_timeout_s=None).capture()
    assert capture.reading.tops() == [6, 5, 4] and capture.problem is None
    assert camera.light_during_grabs == [0.6] * 4  # one frame, then three still comparisons
    assert ring.value == 0
    frame = cv2.imdecode(np.frombuffer(capture.frame_jpeg, np.uint8), cv2.IMREAD_COLOR)
    annotated = cv2.imdecode(np.frombuffer(capture.annotated_jpeg, np.uint8), cv2.IMREAD_COLOR)
    assert frame.shape == (120, 160, 3) and annotated[0, 0, 1] > 200 and frame[0, 0, 1] < 150


def test_the_camera_set_up_sees_the_tray_lit_as_a_bluff_does_and_the_ring_goes_off_when_it_stops_asking(clock, ring):
    """The set-up's empty tray, die size, lens and light check were taken by the room's light while every Bluff is
    read with the ring lit (and the exposure it locks was the room's): the set-up now lights the ring too."""
    import time

    camera = TrayCamera(light=ring)
    loop = loop_for(camera, clock, ring=ring, light_level=0.7, still_frames=2, grab_timeout_s=None)
    try:
        loop.set_up_frame(hold_s=0.05)
        assert camera.light_during_grabs == [0.7] * 3  # lit, then grabbed until still: the exposure has followed
        loop.set_up_frame(hold_s=0.05)  # the preview's next frame: the ring is still lit, one frame
        assert camera.light_during_grabs == [0.7] * 4 and ring.value == 0.7
        time.sleep(0.3)
        assert ring.value == 0.7  # held while the set-up's clock says it asked within hold_s
        clock.advance(1.0)  # the page stopped asking
        for _ in range(100):
            if ring.value == 0:
                break
            time.sleep(0.05)
        assert ring.value == 0
        loop.capture()  # a Bluff after the set-up: lit for its frames, off after, as always
        assert ring.value == 0 and camera.light_during_grabs[-1] == 0.7
    finally:
        loop.close()


def test_the_capture_waits_until_the_dice_stop_moving(clock):
    class Settling(TrayCamera):
        def grab(self):
            super().grab()
            value = 100 if self.grabs > 5 else self.grabs * 40  # rolling, then lying still
            return np.full((120, 160, 3), value, np.uint8)

    camera = Settling()
    capture = loop_for(camera, clock, still_frames=2, grab_timeout_s=None).capture()
    assert capture.reading is not None
    assert camera.grabs == 8  # frames 6, 7, 8 are equal: two still comparisons after the motion


def test_dice_that_never_settle_time_out_to_confirm_with_the_light_off(clock, ring):
    camera = ShakenTray(light=ring)
    reader = ScriptedReader(die_row([6, 5, 4]))
    capture = loop_for(camera, clock, reader, ring=ring, still_timeout_s=2.0, frame_interval_s=0.1, grab_timeout_s=None).capture()
    assert capture.reading is None
    assert capture.problem.startswith("The dice did not lie still within 2 seconds")
    assert capture.problem_codes == ({"code": "dice_not_still", "seconds": "2"},)  # for the pages' words
    assert capture.frame_jpeg is not None  # the last frame is kept for the table to look at
    assert reader.frames_read == 0 and ring.value == 0
    assert 19 <= camera.grabs <= 22  # about 2 s of frames 0.1 s apart, on the fake clock


def test_a_camera_that_fails_returns_a_problem_and_switches_the_light_off(clock, ring):
    camera = TrayCamera(light=ring)
    camera.fail = HardwareError("The camera is not connected.")
    capture = loop_for(camera, clock, ring=ring, grab_timeout_s=1.0).capture()
    assert capture.reading is None and capture.frame_jpeg is None
    assert capture.problem == "The camera is not connected. Type the dice on the tablet."
    assert capture.problem_codes == ({"code": "camera_failed", "detail": "The camera is not connected."},)
    assert ring.value == 0


def test_an_unexpected_camera_exception_becomes_a_problem_sentence(clock):
    camera = TrayCamera()
    camera.fail = OSError("VIDIOC_DQBUF: No such device")
    capture = loop_for(camera, clock, grab_timeout_s=1.0).capture()
    assert capture.reading is None and "The camera failed (VIDIOC_DQBUF: No such device)." in capture.problem
    assert capture.problem_codes == ({"code": "camera_failed", "detail": "The camera failed (VIDIOC_DQBUF: No such device)."},)


def test_a_camera_that_hangs_cannot_hang_the_game(clock, ring):
    camera = TrayCamera(light=ring)
    camera.gate = threading.Event()
    loop = loop_for(camera, clock, ring=ring, grab_timeout_s=0.2)
    try:
        capture = loop.capture()
        assert capture.reading is None and "did not answer within 0.2 seconds" in capture.problem
        assert ring.value == 0
        assert "has not answered" in loop.health()
        again = loop.capture()  # still stuck: told at once, without a second stuck thread
        assert "has not answered" in again.problem and camera.grabs == 1
    finally:
        camera.gate.set()
    for _ in range(100):  # the stuck grab returns; the camera is usable again
        if loop.health() == "ok":
            break
        threading.Event().wait(0.02)
    assert loop.health() == "ok"
    assert loop.capture().reading is not None


def test_a_broken_frame_is_a_problem_not_a_crash(clock):
    camera = TrayCamera()
    camera.frame = np.zeros((120, 160), np.uint8)  # grey, not BGR
    capture = loop_for(camera, clock, grab_timeout_s=None).capture()
    assert capture.reading is None and "a frame the reader cannot use ((120, 160)" in capture.problem


def test_a_reader_that_raises_keeps_the_frame_and_asks_the_table(clock):
    class Broken(ScriptedReader):
        def read(self, frame):
            raise ValueError("model file is damaged")

    capture = loop_for(TrayCamera(), clock, Broken(die_row([1, 1, 1])), grab_timeout_s=None).capture()
    assert capture.reading is None and capture.frame_jpeg is not None
    assert "The dice reader failed on this frame (model file is damaged)" in capture.problem
    assert capture.problem_codes == ({"code": "reader_failed", "detail": "model file is damaged"},)


def test_a_drawing_that_fails_keeps_the_reading(clock):
    class NoDrawing(ScriptedReader):
        def annotate(self, frame, reading):
            raise RuntimeError("font missing")

    capture = loop_for(TrayCamera(), clock, NoDrawing(die_row([2, 2, 2])), grab_timeout_s=None).capture()
    assert capture.reading.tops() == [2, 2, 2] and capture.annotated_jpeg is None and capture.frame_jpeg


def test_an_uncertain_reading_is_passed_on_for_the_referee_to_confirm(clock):
    uncertain = Reading("uncertain", (), reason="a die leans on the cup")
    capture = loop_for(TrayCamera(), clock, ScriptedReader(uncertain), grab_timeout_s=None).capture()
    assert capture.reading == uncertain and capture.problem is None


def test_the_loop_is_built_from_the_capture_settings(clock):
    from companion.app.settings import Settings

    s = Settings.defaults().with_overrides(capture__light_level=0.5, capture__still_timeout_s=4.0, capture__still_frames=5)
    loop = CaptureLoop.from_settings(s, TrayCamera(), ScriptedReader(die_row([1, 2, 3])))
    assert (loop.light_level, loop.still_timeout_s, loop.still_frames, loop.name) == (0.5, 4.0, 5, "test tray")


def test_bad_loop_arguments_are_refused_in_words():
    with pytest.raises(ValueError, match="light_level must be above 0"):
        CaptureLoop(TrayCamera(), None, light_level=0)
    with pytest.raises(ValueError, match="still_frames must be at least 1"):
        CaptureLoop(TrayCamera(), None, still_frames=0)


def test_frame_change_ignores_size_mismatch_by_calling_it_a_change():
    assert frame_change(np.zeros((10, 10, 3), np.uint8), np.zeros((20, 10, 3), np.uint8)) == float("inf")


def test_without_waiting_for_stillness_one_frame_is_read(clock, ring):
    camera = ShakenTray(light=ring)  # every frame a new scene, like a renderer that rolls on each grab
    capture = loop_for(camera, clock, ring=ring, wait_for_still=False, grab_timeout_s=None).capture()
    assert capture.reading is not None and camera.grabs == 1
    assert camera.light_during_grabs == [0.8] and ring.value == 0


def test_an_unguarded_camera_that_raises_anything_still_returns_a_problem(clock, ring):
    camera = TrayCamera(light=ring)
    camera.fail = OSError("device busy")
    capture = loop_for(camera, clock, ring=ring, grab_timeout_s=None).capture()
    assert capture.reading is None and capture.problem == "The camera failed (device busy). Type the dice on the tablet."
    assert ring.value == 0


def test_a_camera_that_cannot_open_is_a_problem_and_the_next_capture_tries_again(clock):
    class Unplugged(TrayCamera):
        def __init__(self):
            super().__init__()
            self.plugged = False
            self.opens = 0

        def open(self):
            self.opens += 1
            if not self.plugged:
                raise HardwareError("No camera is connected to the CSI port.")

    camera = Unplugged()
    loop = loop_for(camera, clock, grab_timeout_s=None)
    first = loop.capture()
    assert first.reading is None and first.problem.startswith("No camera is connected") and camera.grabs == 0
    camera.plugged = True
    assert loop.capture().reading is not None and camera.opens == 2
    loop.capture()
    assert camera.opens == 2  # opened once, then kept open


def test_next_values_go_to_a_simulated_table_and_are_refused_for_a_real_camera(clock):
    from companion.core.errors import NotFound

    class SimTray(TrayCamera):
        name = "simulated"
        values = None

        def set_next_values(self, values):
            self.values = values

    sim = SimTray()
    loop_for(sim, clock).set_next_values([6, 2, 5])
    assert sim.values == [6, 2, 5]
    with pytest.raises(NotFound, match="The test tray camera shows real dice"):
        loop_for(TrayCamera(), clock).set_next_values([6, 2, 5])
