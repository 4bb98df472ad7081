"""The referee shell: frames saved by challenge id, cameras that fail, R13 timing."""

from __future__ import annotations

from pathlib import Path

import pytest

from companion.core.capture import Capture, ValuesDiceSource
from companion.app.referee import Referee
from companion.app.store import GameStore
from companion.core.errors import NotAllowed
from companion.core.reading import OK, DieReading, Reading


class PhotoSource:
    """A dice source that produces real JPEG bytes and counts how often it was asked."""

    name = "photo-test"

    def __init__(self, values=(6, 5, 4)) -> None:
        self.values = list(values)
        self.calls = 0

    def capture(self) -> Capture:
        self.calls += 1
        dice = tuple(DieReading(7 - v, v, 0.99, (10 * i, 10, 8, 8)) for i, v in enumerate(self.values))
        return Capture(Reading(OK, dice, model_id="test"), frame_jpeg=b"\xff\xd8frame\xff\xd9", annotated_jpeg=b"\xff\xd8annotated\xff\xd9")

    def health(self) -> str:
        return "ok"


class BrokenSource(PhotoSource):
    def capture(self) -> Capture:
        raise OSError("camera unplugged")


def make(tmp_path: Path, source) -> Referee:
    return Referee(GameStore(tmp_path / "log.sqlite3"), source, frames_dir=tmp_path / "frames")


def test_r13_the_dice_are_read_only_when_a_bluff_is_called(tmp_path):
    source = PhotoSource()
    ref = make(tmp_path, source)
    g = ref.new_game(["Ann", "Ben"])["id"]
    ref.claim(g, 10)
    ref.believe(g)
    ref.claim(g, 12)
    assert source.calls == 0
    ref.bluff(g)
    assert source.calls == 1


def test_r13_an_illegal_bluff_never_reads_the_dice(tmp_path):
    source = PhotoSource()
    ref = make(tmp_path, source)
    g = ref.new_game(["Ann", "Ben"])["id"]
    with pytest.raises(Exception):
        ref.bluff(g)
    assert source.calls == 0


def test_r15_frames_are_saved_beside_the_log_named_by_challenge_id(tmp_path):
    ref = make(tmp_path, PhotoSource())
    g = ref.new_game(["Ann", "Ben"])["id"]
    ref.claim(g, 10)
    _, challenge = ref.bluff(g)
    cid = challenge["id"]
    assert challenge["has_images"]
    assert ref.frame_path(cid, "image") == tmp_path / "frames" / f"{cid}.jpg"
    assert (tmp_path / "frames" / f"{cid}.jpg").read_bytes() == b"\xff\xd8frame\xff\xd9"
    assert (tmp_path / "frames" / f"{cid}-annotated.jpg").read_bytes() == b"\xff\xd8annotated\xff\xd9"
    assert sorted(p.name for p in (tmp_path / "frames").iterdir()) == [f"{cid}-annotated.jpg", f"{cid}.jpg"]


def test_r14_a_camera_that_raises_sends_the_bluff_to_confirm(tmp_path):
    ref = make(tmp_path, BrokenSource())
    g = ref.new_game(["Ann", "Ben"])["id"]
    ref.claim(g, 10)
    state, challenge = ref.bluff(g)
    assert state["phase"] == "confirm" and "camera failed" in challenge["problem"]
    assert ref.confirm(g, [6, 6, 6])["phase"] == "claim"


def test_a_frames_folder_that_cannot_be_written_loses_only_the_photo(tmp_path):
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the frames folder should be")
    ref = Referee(GameStore(tmp_path / "log.sqlite3"), PhotoSource([1, 1, 1]), frames_dir=blocker / "frames")
    g = ref.new_game(["Ann", "Ben"])["id"]
    ref.claim(g, 10)
    state, challenge = ref.bluff(g)
    assert challenge["status"] == "decided" and not challenge["has_images"]
    assert "photo could not be saved" in challenge["problem"]
    assert state["players"][0]["position"] == 1


def test_listeners_see_every_change_and_a_failing_listener_does_not_stop_the_game(tmp_path):
    ref = make(tmp_path, ValuesDiceSource())
    seen = []
    ref.add_listener(lambda s: 1 / 0)
    ref.add_listener(lambda s: seen.append(s["events"]))
    g = ref.new_game(["Ann", "Ben"])["id"]
    ref.claim(g, 10)
    ref.believe(g)
    assert seen == [1, 2, 3]


def test_a_restarted_referee_folds_the_same_state_from_the_log(tmp_path):
    source = ValuesDiceSource()
    ref = make(tmp_path, source)
    g = ref.new_game(["Ann", "Ben", "Cy"])["id"]
    ref.claim(g, 10)
    source.set_next_values([6, 6, 6])
    ref.bluff(g)
    ref.claim(g, 4)
    before = ref.game_state(g)
    ref.store.close()
    again = make(tmp_path, source)
    assert again.game_state(g) == before and again.current_game_id() == g


def _lose(ref: Referee, source: ValuesDiceSource, game_id: str) -> dict:
    """The player to act claims 18 and is called on 1+1+1 until someone's elephant is on the red square (R10, R12)."""
    state = ref.game_state(game_id)
    while state["phase"] != "over":
        ref.claim(game_id, 18)
        source.set_next_values([1, 1, 1])
        state, _ = ref.bluff(game_id)
    return state


def test_a_long_running_referee_keeps_only_the_newest_games_in_memory(tmp_path):
    source = ValuesDiceSource()
    ref = make(tmp_path, source)
    games = [ref.new_game(["Ann", "Ben"], path_length=2)["id"] for _ in range(Referee.STATES_KEPT + 8)]
    assert len(ref._states) == Referee.STATES_KEPT
    assert games[0] not in ref._states and games[-1] in ref._states


def test_a_game_no_longer_in_memory_is_folded_again_from_its_log_and_plays_on(tmp_path):
    source = ValuesDiceSource()
    ref = make(tmp_path, source)
    earlier = [ref.new_game(["Dee", "Eve"])["id"] for _ in range(Referee.STATES_KEPT)]
    first = ref.new_game(["Ann", "Ben", "Cy"], path_length=3)["id"]  # the game on the table
    ref.claim(first, 10)
    source.set_next_values([6, 6, 6])
    ref.bluff(first)
    before = ref.game_state(first)
    challenges = ref.challenges(first)
    for gid in earlier:  # the replays of earlier games, looked at: the table's game leaves the memory
        ref.game_state(gid)
    assert first not in ref._states
    assert ref.game_state(first) == before and ref.challenges(first) == challenges
    assert ref.challenge(challenges[0]["id"]) == challenges[0]
    assert ref.claim(first, 11)["phase"] == "decide"  # acting on it works as before


def test_a_rematch_and_the_evening_are_found_for_games_no_longer_in_memory(tmp_path):
    source = ValuesDiceSource()
    ref = make(tmp_path, source)
    first = ref.new_game(["Ann", "Ben"], path_length=2, starter=0)["id"]
    assert _lose(ref, source, first)["loser"] == 0
    second = ref.rematch(first)["id"]
    _lose(ref, source, second)
    for _ in range(Referee.STATES_KEPT):
        ref.new_game(["Dee", "Eve"])
    assert first not in ref._states and second not in ref._states
    with pytest.raises(NotAllowed, match="had its rematch already"):
        ref.rematch(first)
    evening = ref.evening(first)
    assert [g["id"] for g in evening["games"]] == [first, second]
    assert ref.evening(second) == evening and sum(t["lost"] for t in evening["tally"]) == 2


def test_the_store_lists_each_newest_game_with_the_game_it_is_a_rematch_of(tmp_path):
    source = ValuesDiceSource()
    ref = make(tmp_path, source)
    first = ref.new_game(["Ann", "Ben"], path_length=2)["id"]
    _lose(ref, source, first)
    second = ref.rematch(first)["id"]
    third = ref.new_game(["Cy", "Dee"])["id"]
    assert ref.store.rematch_links() == [(first, None), (second, first), (third, None)]
    assert ref.store.rematch_links(2) == [(second, first), (third, None)]


def test_the_game_just_started_is_the_one_on_the_table_when_the_clock_went_back(tmp_path):
    """A Pi without a battery clock, restarted offline, may start with a time before the last game's: the game just
    started was not the one on the table (no game in progress, the tray's buttons refused, the camera set-up open
    during play, R13), and the evening's list had it before the night's earlier games."""
    now = [1_780_000_000.0]
    referee = Referee(GameStore(tmp_path / "game-log.sqlite3"), ValuesDiceSource(), frames_dir=tmp_path / "frames", clock=lambda: now[0])
    try:
        last_night = referee.new_game(["Ann", "Ben"], path_length=2)["id"]
        referee.claim(last_night, 18)
        referee.dice_source.set_next_values([1, 2, 3])
        referee.bluff(last_night)  # R10: Ann reaches the red square
        assert referee.game_state(last_night)["phase"] == "over"
        now[0] -= 3600  # restarted with a clock an hour behind
        tonight = referee.rematch(last_night)["id"]
        assert referee.current_game_id() == tonight and referee.newest_game() == (tonight, "claim")
        assert referee.game_ids() == [last_night, tonight]
        assert [g["id"] for g in referee.evening(tonight)["games"]] == [last_night, tonight]
    finally:
        referee.store.close()


def test_a_move_refused_because_another_writer_moved_first_can_be_retried(tmp_path):
    """"Someone else acted at the same moment: look at the table again and retry": the retry was refused the same
    way for good, as the referee kept its old idea of the game."""
    first = Referee(GameStore(tmp_path / "game-log.sqlite3"), ValuesDiceSource(), frames_dir=tmp_path / "frames")
    second = Referee(GameStore(tmp_path / "game-log.sqlite3"), ValuesDiceSource(), frames_dir=tmp_path / "frames")
    try:
        gid = first.new_game(["Ann", "Ben", "Cy"], starter=0)["id"]
        assert second.game_state(gid)["phase"] == "claim"  # the second has read the game
        first.claim(gid, 9)
        with pytest.raises(NotAllowed, match="Someone else acted"):
            second.claim(gid, 10)
        assert second.game_state(gid)["claim"]["amount"] == 9  # the retry sees the log
        second.believe(gid)
        assert first.store.events(gid)[-1]["type"] == "believed"
    finally:
        first.store.close()
        second.store.close()
