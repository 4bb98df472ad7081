"""The tray's buttons and lights against the real referee, with gpiozero mock pins."""

from __future__ import annotations

import logging
import threading

import pytest

from companion.core.errors import BadRequest, HardwareError, NotAllowed
from firmware.capture import CaptureLoop
from tests.firmware.helpers import ScriptedReader, TrayCamera, die_row, press, settings, start_deciding
from companion.app.web import close_app

BELIEVE, BLUFF, CONFIRM, LID = 17, 27, 6, 5


def game_in_phase(referee, dice, phase: str) -> str | None:
    """A game brought to ``phase`` by the tablet's own calls (None: no game at all)."""
    if phase == "none":
        return None
    game = referee.new_game(["Ann", "Ben", "Cy"], path_length=2)
    gid = game["id"]
    if phase == "claim":
        return gid
    if phase == "over":
        referee.claim(gid, 18)
        dice.set_next_values([1, 2, 3])
        referee.bluff(gid)  # R10: Bluff on 18 with less: the claimer moves 2 steps and reaches red
        return gid
    referee.claim(gid, 9)
    if phase == "confirm":
        dice.uncertain_next = True
        referee.bluff(gid)
    return gid


@pytest.mark.parametrize("phase", ["none", "claim", "decide", "confirm", "over"])
@pytest.mark.parametrize("button,pin", [("believe", BELIEVE), ("bluff", BLUFF)])
def test_each_button_acts_only_in_the_phase_that_allows_it(referee, dice, make_table, pin_factory, phase, button, pin):
    gid = game_in_phase(referee, dice, phase)
    before = referee.game_state(gid) if gid else None
    table = make_table(referee)
    dice.set_next_values([6, 5, 4])

    press(pin_factory, pin)
    assert table.wait_idle(10)

    if phase == "decide":
        after = referee.game_state(gid)
        assert table.stats["accepted"] == 1 and table.stats["refused"] == 0
        if button == "believe":
            assert (after["phase"], after["to_act"], after["claim"]["by"]) == ("claim", 1, 0)
        else:  # 15 >= 9: the caller (seat 1) moves and starts the next round (R9, R11)
            assert after["round"] == 2 and after["players"][1]["position"] == 1
    else:
        assert table.stats == {"accepted": 0, "refused": 1, "stale": 0, "bounced": 0, "glitches": 0, "errors": 0}
        assert table.lights_state()["status"] == "refused"
        assert table.last_refusal
        if gid:
            assert referee.game_state(gid)["events"] == before["events"]  # nothing logged


def test_a_refused_press_is_logged_with_the_referees_reason(referee, make_table, pin_factory, caplog):
    gid = referee.new_game(["Ann", "Ben"])["id"]
    table = make_table(referee)
    with caplog.at_level(logging.INFO, logger="firmware.table"):
        press(pin_factory, BLUFF)
        table.wait_idle(10)
    assert referee.game_state(gid)["phase"] == "claim"
    assert any("bluff pressed and ignored" in r.getMessage() for r in caplog.records)


def test_the_status_light_goes_back_to_the_phase_after_the_refusal_flash(referee, make_table, pin_factory, clock):
    referee.new_game(["Ann", "Ben"])
    table = make_table(referee)
    press(pin_factory, BELIEVE)
    table.wait_idle(10)
    assert table.lights_state()["status"] == "refused"
    clock.advance(table.lights.refusal_flash_s + 0.01)
    done = threading.Event()
    for _ in range(200):  # the worker polls while a flash is pending
        if table.lights_state()["status"] == "on":
            done.set()
            break
        done.wait(0.02)
    assert table.lights_state()["status"] == "on"


def test_bouncing_contacts_within_the_window_make_one_press(referee, make_table, pin_factory, clock):
    gid = start_deciding(referee)
    table = make_table(referee, gpio__debounce_ms=50)
    pin = pin_factory.pin(BELIEVE)
    for _ in range(4):  # chatter: four closures, 5 ms apart
        pin.drive_low()
        clock.advance(0.0025)
        pin.drive_high()
        clock.advance(0.0025)
    table.wait_idle(10)
    assert table.stats["accepted"] == 1 and table.stats["bounced"] == 3 and table.stats["refused"] == 0
    assert referee.game_state(gid)["phase"] == "claim"

    clock.advance(0.05)  # quiet for the whole window: the next closure is a new press
    press(pin_factory, BELIEVE)
    table.wait_idle(10)
    assert table.stats["refused"] == 1  # Believe is not allowed in phase claim: the press reached the referee


def table_with_a_held_camera(referee, make_table, clock):
    """A deciding game whose capture loop waits inside the grab until ``camera.gate`` is set."""
    camera = TrayCamera()
    loop = CaptureLoop(camera, ScriptedReader(die_row([6, 5, 4])), clock=clock, sleep=clock.sleep, grab_timeout_s=None)
    referee.dice_source = loop
    gid = start_deciding(referee)
    table = make_table(referee, capture=loop)
    camera.gate = threading.Event()
    return camera, table, gid


def test_a_press_during_a_capture_is_ignored_not_replayed_later(referee, make_table, pin_factory, clock):
    camera, table, gid = table_with_a_held_camera(referee, make_table, clock)

    press(pin_factory, BLUFF)
    assert camera.grabbing.wait(10)  # the worker is inside the capture now
    assert table.lights_state()["status"] == "busy"
    clock.advance(1)
    press(pin_factory, BLUFF)  # impatient: Bluff again, then Believe, while the camera reads
    clock.advance(1)
    press(pin_factory, BELIEVE)
    camera.gate.set()
    table.wait_idle(10)

    state = referee.game_state(gid)
    assert len(referee.challenges(gid)) == 1 and state["round"] == 2 and state["phase"] == "claim"
    assert table.stats["accepted"] == 1 and table.stats["stale"] == 2


def test_a_callback_that_raises_does_not_kill_the_table(referee, make_table, pin_factory, clock, caplog):
    gid = start_deciding(referee)
    table = make_table(referee)
    real_clock = clock.__class__.__call__

    def broken(self):
        raise OSError("clock read failed")

    clock.__class__.__call__ = broken
    try:
        with caplog.at_level(logging.ERROR, logger="firmware.table"):
            pin_factory.pin(BELIEVE).drive_low()  # must not raise into gpiozero's thread
    finally:
        clock.__class__.__call__ = real_clock
    pin_factory.pin(BELIEVE).drive_high()
    assert table.stats["errors"] == 1
    assert any("callback failed" in r.getMessage() for r in caplog.records)

    clock.advance(1)
    press(pin_factory, BELIEVE)
    table.wait_idle(10)
    assert referee.game_state(gid)["phase"] == "claim"


def test_a_handler_that_raises_does_not_kill_the_worker(referee, make_table, pin_factory, clock, monkeypatch):
    gid = start_deciding(referee)
    table = make_table(referee)
    real_believe = referee.believe
    calls = []

    def believe_once_broken(*a, **kw):
        calls.append(1)
        if len(calls) == 1:
            raise RuntimeError("disk full")
        return real_believe(*a, **kw)

    monkeypatch.setattr(referee, "believe", believe_once_broken)
    assert table.press("believe")["result"] == "error"
    assert table.stats["errors"] == 1
    assert table.press("believe")["result"] == "done"
    assert referee.game_state(gid)["phase"] == "claim"


def test_the_lights_follow_the_phase(referee, dice, make_table, pin_factory):
    table = make_table(referee, gpio__buzzer=25)
    lights = table.lights_state
    assert (lights()["believe"], lights()["bluff"], lights()["status"]) == (False, False, "off")  # no game

    gid = referee.new_game(["Ann", "Ben"], path_length=2)["id"]
    assert (lights()["believe"], lights()["bluff"], lights()["status"]) == (False, False, "on")  # claim on the tablet

    referee.claim(gid, 9)
    assert (lights()["believe"], lights()["bluff"], lights()["status"]) == (True, True, "on")  # decide: both pressable

    dice.uncertain_next = True
    assert table.press("bluff")["result"] == "done"
    assert (lights()["believe"], lights()["bluff"], lights()["status"]) == (False, False, "blink")  # confirm on the tablet

    referee.confirm(gid, [1, 1, 1])  # 3 < 9: the claimer (seat 0) moves
    assert (lights()["believe"], lights()["bluff"], lights()["status"]) == (False, False, "on")

    referee.claim(gid, 18)
    dice.set_next_values([1, 1, 1])
    table.press("bluff")  # Bluff on 18 with less: the claimer moves 2 and the game is over
    assert referee.game_state(gid)["phase"] == "over"
    assert (lights()["believe"], lights()["bluff"], lights()["status"]) == (False, False, "off")
    assert lights()["tray"] == 0.0
    buzzer_pin = pin_factory.pin(25)
    assert any(state for _, state in buzzer_pin.states)  # the verdicts beeped


def test_press_drives_the_real_button_code_and_reports_the_outcome(referee, make_table):
    gid = start_deciding(referee)
    table = make_table(referee)
    out = table.press("believe")
    assert out == {"button": "believe", "result": "done", "message": "Believed."}
    referee.claim(gid, 10)
    assert table.press("bluff")["message"] == "Bluff called: the dice were read and the Bluff decided."
    assert referee.game_state(gid)["phase"] == "claim"  # a new round after the Bluff
    out = table.press("believe")
    assert out["result"] == "refused" and "not" in out["message"].lower()


def test_press_refuses_unknown_and_unfitted_buttons_in_words(referee, make_table):
    table = make_table(referee)
    with pytest.raises(BadRequest, match="no button called 'launch'"):
        table.press("launch")
    with pytest.raises(BadRequest, match=r"no confirm button fitted \(gpio.confirm_button is -1\)"):
        table.press("confirm")
    with pytest.raises(BadRequest, match="no lid switch fitted"):
        table.press("lid")


def test_press_is_refused_off_the_simulated_table(referee, pin_factory):
    from firmware.table import build_table

    table = build_table(settings(gpio__pin_factory="lgpio"), referee, simulate=False, pin_factory=pin_factory, environ={})
    try:
        with pytest.raises(NotAllowed, match="only on the simulated table"):
            table.press("bluff")
    finally:
        table.close()


class FirstLookUnsure:
    """The one camera of a Bluff: its first look is unsure (a die leaning on the cup, with its photo), the next ones
    are ``then``'s."""

    name = "tray"

    def __init__(self, then) -> None:
        self.then, self.looks = then, 0

    def capture(self):
        from companion.core.capture import Capture

        self.looks += 1
        if self.looks == 1:
            return Capture(None, frame_jpeg=b"first look", problem="a die leans on the cup", problem_codes=({"code": "leaning"},))
        return self.then.capture()

    def health(self) -> str:
        return "ok"


def test_confirm_button_reads_the_dice_again_and_the_second_look_is_saved_as_the_bluffs(referee, make_table, pin_factory, clock, tmp_path):
    """R14, R15: the second look decided the Bluff, but its photo was never saved and the log said the table had
    typed dice nobody typed (source "table"): the replay showed the first, unsure photo beside a verdict from
    another. The second look is logged and saved as the Bluff's, the first kept beside it, across a restart."""
    from companion.app.referee import Referee
    from companion.app.store import GameStore

    loop = CaptureLoop(TrayCamera(), ScriptedReader(die_row([6, 5, 4])), clock=clock, sleep=clock.sleep, grab_timeout_s=None)
    referee.dice_source = FirstLookUnsure(loop)
    gid = start_deciding(referee)
    table = make_table(referee, capture=loop, gpio__confirm_button=CONFIRM)

    assert table.press("confirm")["result"] == "refused"  # phase decide: nothing to confirm
    table.press("bluff")
    assert referee.game_state(gid)["phase"] == "confirm"
    assert table.press("confirm") == {"button": "confirm", "result": "done", "message": "The dice were read again and the Bluff decided."}
    state = referee.game_state(gid)
    assert state["round"] == 2 and state["players"][1]["position"] == 1  # 15 >= 9: the caller moved
    (challenge,) = referee.challenges(gid)
    assert challenge["source"] == "camera" and challenge["dice"] == [6, 5, 4] and challenge["confirmed"] is None
    assert [d["top"] for d in challenge["reading"]["dice"]] == [6, 5, 4] and challenge["problem"] is None
    first = challenge["first_look"]
    assert first["problem"] == "a die leans on the cup" and first["has_images"] is True and first["read_again_at"]
    photo = referee.frame_path(challenge["id"], "frame")
    assert photo.name == f"{challenge['id']}-look2.jpg" and photo.read_bytes()[:2] == b"\xff\xd8"  # the second look's JPEG
    assert (tmp_path / "frames" / f"{challenge['id']}.jpg").read_bytes() == b"first look"

    again = Referee(GameStore(tmp_path / "game-log.sqlite3"), FirstLookUnsure(loop), frames_dir=tmp_path / "frames")  # a restart
    try:
        again.archive.sweep(again.names_photo)
        assert again.challenge(challenge["id"]) == challenge
        assert again.frame_path(challenge["id"], "frame").read_bytes() == photo.read_bytes()
        assert (tmp_path / "frames" / f"{challenge['id']}.jpg").exists()  # the first look is kept by the sweep too
    finally:
        again.store.close()


def test_confirm_button_with_a_hung_camera_is_refused_within_the_referees_time_bound(referee, make_table, clock):
    """The second look runs under the referee's capture bound, like a Bluff's: a hung camera never hangs the table."""
    from companion.core.capture import Capture

    release = threading.Event()

    class HungCamera:
        name = "hung"

        def capture(self) -> Capture:
            release.wait(10)
            return Capture(None, problem="released")

        def health(self) -> str:
            return "ok"

    referee.dice_source = FirstLookUnsure(HungCamera())
    referee.capture_timeout_s = 0.2
    gid = start_deciding(referee)
    table = make_table(referee, capture=HungCamera(), gpio__confirm_button=CONFIRM)
    try:
        table.press("bluff")
        assert referee.game_state(gid)["phase"] == "confirm"
        out = table.press("confirm", timeout=5)
        assert out["result"] == "refused" and "type them on the tablet" in out["message"]
        assert referee.game_state(gid)["phase"] == "confirm"
    finally:
        release.set()


def test_a_table_playing_without_the_camera_is_never_decided_by_the_confirm_button(referee, make_table, clock, tmp_path):
    """The players chose to type the dice (``camera: off``, perhaps because it misreads): the Confirm button still read
    them with the camera and decided, and the Bluff button said the camera could not read them for sure."""
    loop = CaptureLoop(TrayCamera(), ScriptedReader(die_row([1, 1, 1])), clock=clock, sleep=clock.sleep, grab_timeout_s=None)
    referee.dice_source = loop
    referee.set_camera_mode("off")
    gid = start_deciding(referee)
    table = make_table(referee, capture=loop, gpio__confirm_button=CONFIRM)
    out = table.press("bluff")
    assert out["result"] == "done" and "plays without the camera" in out["message"]
    before = referee.game_state(gid)
    out = table.press("confirm")
    assert out["result"] == "refused" and "plays without the camera: type the dice on the tablet" in out["message"]
    assert referee.game_state(gid) == before and before["phase"] == "confirm"
    assert not list((tmp_path / "frames").glob("*look2*"))


def test_confirm_button_refuses_when_the_second_reading_is_unclear(referee, make_table, clock):
    from companion.core.reading import Reading

    loop = CaptureLoop(TrayCamera(), ScriptedReader(Reading("uncertain", (), reason="two dice touch")), clock=clock, sleep=clock.sleep, grab_timeout_s=None)
    referee.dice_source = loop
    gid = start_deciding(referee)
    table = make_table(referee, capture=loop, gpio__confirm_button=CONFIRM)
    table.press("bluff")
    out = table.press("confirm")
    assert out["result"] == "refused" and "type them on the tablet" in out["message"]
    assert referee.game_state(gid)["phase"] == "confirm"


def test_a_bluff_with_a_failing_camera_goes_to_confirm_and_switches_the_light_off(referee, make_table, clock):
    camera = TrayCamera()
    camera.fail = HardwareError("The camera is not connected.")
    loop = CaptureLoop(camera, ScriptedReader(die_row([6, 5, 4])), clock=clock, sleep=clock.sleep, grab_timeout_s=None)
    referee.dice_source = loop
    gid = start_deciding(referee)
    table = make_table(referee, capture=loop)
    camera.light = table.tray_light

    out = table.press("bluff")
    assert out["result"] == "done" and "could not read the dice for sure" in out["message"]
    assert referee.game_state(gid)["phase"] == "confirm"
    challenge = referee.challenges(gid)[0]
    assert "camera is not connected" in str(challenge)
    assert camera.light_during_grabs == [0.8]  # the ring was on for the grab
    assert table.lights_state()["tray"] == 0.0 and table.lights_state()["status"] == "blink"


def test_a_bluff_from_the_tablet_blinks_the_status_light_while_the_camera_reads(referee, make_table, clock):
    camera, table, gid = table_with_a_held_camera(referee, make_table, clock)
    seen = []
    worker = threading.Thread(target=lambda: seen.append(referee.bluff(gid)))  # the tablet's request thread
    worker.start()
    try:
        assert camera.grabbing.wait(10)
        lights = table.lights_state()
        assert (lights["status"], lights["believe"], lights["bluff"], lights["tray"]) == ("busy", False, False, 0.8)
    finally:
        camera.gate.set()
        worker.join(10)
    lights = table.lights_state()
    assert (lights["status"], lights["believe"], lights["bluff"], lights["tray"]) == ("on", False, False, 0.0)
    assert seen and seen[0][0]["round"] == 2


def test_health_says_when_the_table_is_shut_down(referee, make_table):
    table = make_table(referee)
    assert table.health() == "ok"
    table.close()
    assert "shut down" in table.health()
    with pytest.raises(NotAllowed, match="shut down"):
        table.press("bluff")


@pytest.mark.parametrize("phase", ["none", "claim", "decide", "over"])
def test_confirm_is_refused_outside_phase_confirm(referee, dice, make_table, clock, phase):
    loop = CaptureLoop(TrayCamera(), ScriptedReader(die_row([6, 5, 4])), clock=clock, sleep=clock.sleep, grab_timeout_s=None)
    gid = game_in_phase(referee, dice, phase)
    before = referee.game_state(gid) if gid else None
    table = make_table(referee, capture=loop, gpio__confirm_button=CONFIRM)
    out = table.press("confirm")
    assert out["result"] == "refused"
    if gid:
        assert referee.game_state(gid) == before


def test_a_bluff_whose_dice_never_settle_goes_to_confirm(referee, make_table, clock):
    from tests.firmware.helpers import ShakenTray

    camera = ShakenTray()
    loop = CaptureLoop(camera, ScriptedReader(die_row([6, 5, 4])), clock=clock, sleep=clock.sleep, grab_timeout_s=None, still_timeout_s=2.0)
    referee.dice_source = loop
    gid = start_deciding(referee)
    table = make_table(referee, capture=loop)
    camera.light = table.tray_light
    out = table.press("bluff")
    assert "check them on the tablet" in out["message"]
    state = referee.game_state(gid)
    assert state["phase"] == "confirm" and state["round"] == 1
    assert "did not lie still" in str(referee.challenges(gid)[0])
    assert set(camera.light_during_grabs) == {0.8} and table.lights_state()["tray"] == 0.0


def test_press_refuses_a_button_that_is_not_a_name(referee, make_table):
    table = make_table(referee)
    with pytest.raises(BadRequest, match="no button called 7"):
        table.press(7)


def test_correcting_a_finished_game_leaves_the_tray_showing_the_game_in_play(referee, dice, make_table, pin_factory):
    """A correction of a Bluff of a finished game announced that game: Believe and Bluff went dark (its phase is
    over) while the new game waited for them, and a press made then was dropped as made while the table was busy."""
    old = game_in_phase(referee, dice, "over")
    table = make_table(referee)
    new = start_deciding(referee)
    lit = table.lights_state()
    assert (lit["believe"], lit["bluff"], lit["status"]) == (True, True, "on")
    (challenge,) = referee.challenges(old)
    referee.correct(challenge["id"], [1, 2, 4], "table", after_game_over=True)  # still under 18: the game stays over
    assert referee.game_state(old)["phase"] == "over"
    lit = table.lights_state()
    assert (lit["believe"], lit["bluff"], lit["status"]) == (True, True, "on")
    assert table.press("believe")["result"] == "done" and referee.game_state(new)["phase"] == "claim"


def test_a_light_that_fails_to_switch_back_after_a_refusal_never_stops_the_buttons(referee, make_table, clock, monkeypatch):
    """One failed GPIO write as the refusal flash ended (the status light switched back) ended the table's worker:
    every later press went unanswered, and /api/health still said all was well."""
    from gpiozero import LED

    table = make_table(referee)
    status_light, failures = table.devices.status_light, []
    switch_off = LED.off

    def fails_once(led) -> None:  # the status light's pin write fails once, as lgpio's can
        if led is status_light and not failures:
            failures.append(OSError(5, "Input/output error"))
            raise failures[0]
        switch_off(led)

    monkeypatch.setattr(LED, "off", fails_once)
    assert table.press("bluff")["result"] == "refused"  # no game: a refusal flash
    clock.advance(5)
    for _ in range(200):  # the worker ends the flash on its next wake
        if failures:
            break
        threading.Event().wait(0.01)
    assert failures
    gid = start_deciding(referee)
    assert table.press("believe")["result"] == "done" and referee.game_state(gid)["phase"] == "claim"
    assert table.health() == "ok"


def test_health_names_a_stopped_button_worker_for_the_page(tmp_path):
    """``TableController.health`` said so, but nothing asked it: the page and /api/health said all was well."""
    from firmware.table import _Event
    from tests.trust.conftest import build_app

    app = build_app(tmp_path / "instance")
    services = app.extensions["elephants_bluff"]
    try:
        services.table._queue.put(_Event("stop"))  # the worker ends as an uncaught error would end it
        services.table._worker.join(5)
        health = app.test_client().get("/api/health").get_json()
        found = [p for p in health["problem_details"] if p["code"] == "no_buttons"]
        assert health["status"] == "degraded" and found and "button worker has stopped" in found[0]["params"]["detail"]
    finally:
        close_app(app)


@pytest.mark.parametrize("phase, words", [("none", "No game is in progress: start one on the tablet."),
                                          ("over", "The game is over: start a rematch or a new game on the tablet.")])
def test_a_press_with_no_game_in_play_says_whether_one_has_just_ended(referee, dice, make_table, phase, words):
    """After the last Bluff of a game a press said "No game is in progress", as if none had been played."""
    game_in_phase(referee, dice, phase)
    table = make_table(referee)
    assert table.press("bluff") == {"button": "bluff", "result": "refused", "message": words}


def _table_with_looks(referee, pin_factory, clock, between_looks, **overrides):
    """A simulated table whose waits move the fake clock, then call ``between_looks(seconds)``: what the input does
    before the glitch check's next look."""
    from firmware.table import build_table

    def sleep(seconds: float) -> None:
        clock.advance(seconds)
        between_looks(seconds)

    return build_table(settings(**overrides), referee, simulate=True, pin_factory=pin_factory, environ={}, clock=clock, sleep=sleep)


def _table_with_noise(referee, pin_factory, clock, pin: int, **overrides):
    """A simulated table whose waits may end a spike on ``pin``: while ``noise[0]`` is set, the input goes back to
    rest before the first look after an edge (the lid's reed closes again; a button opens)."""
    noise = [True]

    def spike_over(_seconds: float) -> None:
        if noise[0]:
            (pin_factory.pin(pin).drive_low if pin == LID else pin_factory.pin(pin).drive_high)()

    return _table_with_looks(referee, pin_factory, clock, spike_over, **overrides), noise


def test_a_spike_of_noise_on_a_buttons_lead_is_no_press_and_a_finger_still_is(referee, pin_factory, clock):
    """A spike on a long lead is an edge too: taken for a press, it was a Bluff nobody called. The input is looked at
    again a moment later (gpio.glitch_ms); a spike is over by then, a finger still holds the button."""
    gid = start_deciding(referee)
    table, noise = _table_with_noise(referee, pin_factory, clock, BLUFF)
    try:
        before = referee.game_state(gid)
        pin_factory.pin(BLUFF).drive_low()  # the spike: over before the first look
        assert table.wait_idle(10)
        assert table.stats["glitches"] == 1 and table.stats["accepted"] == 0 and table.stats["refused"] == 0
        assert referee.game_state(gid)["events"] == before["events"] and table.last_refusal is None

        noise[0] = False
        clock.advance(0.1)
        press(pin_factory, BLUFF)  # a finger holds it through the look: the Bluff is called (R9)
        assert table.wait_idle(10)
        assert table.stats["accepted"] == 1 and table.stats["glitches"] == 1
        assert referee.game_state(gid)["round"] == 2
    finally:
        table.close()


def test_a_button_still_chattering_at_the_first_look_is_pressed_at_the_next(referee, pin_factory, clock):
    """Contacts that bounce open at the first look and closed at the second are a finger, not noise: one press."""
    gid = start_deciding(referee)
    pin = pin_factory.pin(BELIEVE)
    looks = []

    def chatter(seconds: float) -> None:
        looks.append(seconds)
        (pin.drive_high if len(looks) == 1 else pin.drive_low)()  # open at the first look, closed again after

    table = _table_with_looks(referee, pin_factory, clock, chatter, gpio__glitch_ms=10)
    try:
        pin.drive_low()
        assert table.wait_idle(10)
        assert looks == [0.01, 0.01]
        assert table.stats["accepted"] == 1 and table.stats["glitches"] == 0 and table.stats["bounced"] == 1
        assert referee.game_state(gid)["phase"] == "claim"  # believed (R8): the next claim
    finally:
        pin.drive_high()
        table.close()


def test_a_spike_on_the_lid_switch_is_no_lift(referee, pin_factory, clock):
    """The reed switch's lead picks up noise too: a lid 'lifted' for a spike is no peek (R13 warns only on a lift)."""
    start_deciding(referee)
    table, noise = _table_with_noise(referee, pin_factory, clock, LID, gpio__lid_switch=LID)
    try:
        pin_factory.pin(LID).drive_high()  # the reed opens for a spike, closed again before the first look
        assert table.wait_idle(10)
        assert table.stats["glitches"] == 1 and table.stats["accepted"] == 0
        noise[0] = False
        clock.advance(0.1)
        assert table.press("lid")["message"] == "The lid was lifted: a peek."
    finally:
        table.close()


def test_with_the_glitch_check_off_every_edge_the_debounce_takes_is_a_press(referee, pin_factory, clock):
    gid = start_deciding(referee)
    table, _ = _table_with_noise(referee, pin_factory, clock, BLUFF, gpio__glitch_ms=0)
    try:
        pin_factory.pin(BLUFF).drive_low()
        pin_factory.pin(BLUFF).drive_high()
        assert table.wait_idle(10)
        assert table.stats["accepted"] == 1 and table.stats["glitches"] == 0
        assert referee.game_state(gid)["round"] == 2
    finally:
        table.close()


@pytest.mark.parametrize("value,why", [("-1", "between 0 and 100"), ("101", "between 0 and 100"), ('"soon"', "number")])
def test_a_glitch_wait_out_of_range_is_refused_in_words(tmp_path, value, why):
    from companion.core.errors import SettingsError
    from companion.core.settings import Settings

    path = tmp_path / "config.toml"
    path.write_text(f"[gpio]\nglitch_ms = {value}\n")
    with pytest.raises(SettingsError) as err:
        Settings.load(path, environ={}, sections=["gpio"])
    assert err.value.key == "gpio.glitch_ms" and why in err.value.why
