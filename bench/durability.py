"""Kill -9 the real server during a scripted game and check nothing acknowledged is lost.

A seeded script of actions (valid ones, and refused ones a clumsy table makes)
is sent to a real ``serve --simulate`` process over loopback. The client keeps
its own model of the game: the events of every *acknowledged* action, folded
with the pure rules engine. Each response is checked against the model (the
same refusal, the same state). At random points a timer sends SIGKILL, so the
kill lands before, during or after an action's commit. Then, with the server
dead, the game log on disk must hold exactly the acknowledged events (plus, at
most, the one action in flight, which the client cannot know about); the
server is restarted on the same instance, its state must equal the fold of
those events, and the script goes on.

>>> import tempfile, pathlib
>>> run = kill_run(7, actions=12, kills=1, workdir=pathlib.Path(tempfile.mkdtemp()))
>>> run["ok"], run["kills"]
(True, 1)
"""

from __future__ import annotations

import random
import threading
import time
from pathlib import Path
from typing import Any, Callable

import requests

from companion.core.errors import ElephantsBluffError
from bench.live_server import LiveServer
from companion.rules import apply, decide_believe, decide_bluff, decide_claim, decide_confirm, decide_correction, decide_start, fold
from companion.rules.engine import bluff_event
from companion.rules.state import GameState
from companion.rules.views import public_state
from companion.app.store import GameStore

PIN = "4821"
PLAYERS = ["Ann", "Ben", "Cy", "Dee"]


def _unstamped(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The events without the server's stamps (when and which session confirmed or corrected, a Bluff's photos'
    fingerprints): the rules predict everything else (R14, R15)."""
    stamps = {"confirmed": ("at", "session"), "corrected": ("at", "session"), "bluff_called": ("photo_sha256",)}
    return [{k: v for k, v in e.items() if k not in stamps.get(e.get("type"), ())} for e in events]


class Mismatch(AssertionError):
    """The server and the acknowledged actions disagree."""


class ModelTable:
    """The client's side: what every acknowledged action means, by the pure engine."""

    def __init__(self, server: LiveServer, rng: random.Random) -> None:
        self.server = server
        self.rng = rng
        self.events: list[dict[str, Any]] = []
        self.state: GameState | None = None
        self.acked = 0
        self.refused = 0

    # --- the script --------------------------------------------------------------------

    def next_action(self) -> tuple[str, dict[str, Any]]:
        """A table's next action, refused about one time in six."""
        rng, s = self.rng, self.state
        if s is None or s.phase == "over":
            if s is not None and s.challenges and rng.random() < 0.3:
                return "correct", {"challenge": rng.choice(list(s.challenges)), "dice": [rng.randint(1, 6) for _ in range(3)]}
            return "new_game", {"players": PLAYERS, "path_length": 4, "starter": rng.randrange(len(PLAYERS))}
        bad = rng.random() < 1 / 6
        if s.phase == "claim":
            if bad:
                return rng.choice([("claim", {"amount": s.min_claim - 1}), ("claim", {"amount": 19}), ("claim", {"amount": s.min_claim, "seat": (s.to_act + 1) % len(s.players)}), ("believe", {})])
            if s.challenges and rng.random() < 0.05:
                return "correct", {"challenge": rng.choice(list(s.challenges)), "dice": [rng.randint(1, 6) for _ in range(3)]}
            return "claim", {"amount": min(18, s.min_claim + rng.choice([0, 0, 1, 2, 5]))}
        if s.phase == "decide":
            if bad:
                return rng.choice([("confirm", {"dice": [1, 2, 3]}), ("claim", {"amount": 18}), ("bluff", {"seat": (s.to_act + 1) % len(s.players)})])
            roll = rng.random()
            if roll < 0.45 and s.claim[0] < 18:
                return "believe", {"peeked": rng.random() < 0.5}
            if roll < 0.6:
                # Two dice make the reading uncertain: the table must confirm (R14).
                return "sim_dice", {"values": [rng.randint(1, 6) for _ in range(rng.choice([3, 3, 3, 2]))]}
            return "bluff", {}
        # confirm
        if bad:
            return "confirm", {"dice": [7, 1, 1]}
        return "confirm", {"dice": [rng.randint(1, 6) for _ in range(3)]}

    def expected(self, kind: str, body: dict[str, Any]) -> tuple[Any, int | None]:
        """(event or caller seat, error status) that the rules predict."""
        s = self.state
        try:
            if kind == "new_game":
                return "start", None
            if kind == "sim_dice":
                return "sim", None
            assert s is not None
            if kind == "claim":
                return decide_claim(s, body["amount"], body.get("seat")), None
            if kind == "believe":
                return decide_believe(s, body.get("peeked", False), body.get("seat")), None
            if kind == "bluff":
                return decide_bluff(s, body.get("seat")), None
            if kind == "confirm":
                return decide_confirm(s, body["dice"]), None
            if kind == "correct":
                return decide_correction(s, body["challenge"], body["dice"], "table", "-"), None
        except ElephantsBluffError as exc:
            return None, exc.status
        raise ValueError(kind)

    def request(self, kind: str, body: dict[str, Any]) -> requests.Response:
        gid = self.state.id if self.state is not None else None
        path = {
            "new_game": "/api/games",
            "sim_dice": "/api/sim/dice",
            "claim": f"/api/games/{gid}/claim",
            "believe": f"/api/games/{gid}/believe",
            "bluff": f"/api/games/{gid}/bluff",
            "confirm": f"/api/games/{gid}/confirm",
            "correct": f"/api/challenges/{body.get('challenge')}/correct",
        }[kind]
        payload = {k: v for k, v in body.items() if k != "challenge"}
        return self.server.post(path, json=payload, timeout=30)

    # --- folding what was acknowledged ----------------------------------------------------

    def event_from_response(self, kind: str, body: dict[str, Any], predicted: Any, data: dict[str, Any]) -> dict[str, Any] | None:
        if kind == "sim_dice":
            return None
        if kind == "new_game":
            return decide_start(data["id"], body["players"], body["path_length"], body["starter"])
        if kind == "bluff":
            c = data["challenge"]
            return bluff_event(predicted, c["id"], c["reading"], c["problem"], c["has_images"], c.get("problem_codes"))
        if kind == "correct":
            return {**predicted, "at": data["challenge"]["corrections"][-1]["at"]}
        return predicted

    def take(self, event: dict[str, Any] | None) -> None:
        if event is None:
            return
        if event["type"] == "game_started":
            self.events = [event]
            self.state = fold(self.events)
        else:
            assert self.state is not None
            self.state = apply(self.state, event)
            self.events.append(event)

    def send(self, kind: str, body: dict[str, Any]) -> requests.Response:
        """Send one action and check the answer against the model; may raise on a kill."""
        predicted, status = self.expected(kind, body)
        response = self.request(kind, body)
        if status is not None:
            if response.status_code != status:
                raise Mismatch(f"{kind} {body}: the rules refuse it with {status}, the server said {response.status_code} {response.text[:200]}")
            self.refused += 1
            return response
        if response.status_code not in (200, 201):
            raise Mismatch(f"{kind} {body}: the rules accept it, the server said {response.status_code} {response.text[:200]}")
        data = response.json()
        self.take(self.event_from_response(kind, body, predicted, data))
        self.acked += 1
        if kind != "sim_dice":
            served = data.get("state", data)
            if served != public_state(self.state):
                raise Mismatch(f"{kind}: the server's state differs from the fold of the acknowledged actions:\n{served}\n{public_state(self.state)}")
        return response

    # --- after a kill ---------------------------------------------------------------------

    def reconcile(self, in_flight: tuple[str, dict[str, Any], Any] | None, db_path: Path) -> str:
        """With the server dead: the log on disk is the acknowledged events (+ at most the one in flight)."""
        store = GameStore(db_path)  # the same checks as a restart: ours, undamaged
        try:
            if self.state is None:
                on_disk: list[dict[str, Any]] = []
            else:
                on_disk = store.events(self.state.id)
            newest = store.current_game_id()
            games = store.game_ids()
            new_games = [g for g in games if self.state is None or g != self.state.id]
            newest_events = store.events(games[-1]) if games else []
        finally:
            store.close()
        if _unstamped(on_disk[: len(self.events)]) != _unstamped(self.events):
            raise Mismatch(f"the log on disk lost or changed an acknowledged event:\n{on_disk}\n{self.events}")
        extra = on_disk[len(self.events):]
        if len(extra) > 1:
            raise Mismatch(f"the log on disk holds {len(extra)} events nobody sent: {extra}")
        if in_flight is None:
            if extra:
                raise Mismatch(f"an event appeared with no action in flight: {extra}")
            return "none in flight"
        kind, body, predicted = in_flight
        if kind == "new_game":
            fresh = games[-1] if games and (self.state is None or games[-1] != self.state.id) else None
            if fresh is not None and fresh == newest and len(newest_events) == 1 and newest_events[0]["players"] == body["players"]:
                self.take(newest_events[0])
                return "in-flight new game kept"
            if new_games and self.state is None:
                raise Mismatch(f"unexpected games on disk: {new_games}")
            return "in-flight new game lost (never acknowledged)"
        if not extra:
            return f"in-flight {kind} not written (never acknowledged)"
        event = extra[0]
        if kind == "bluff":
            want = {"type": "bluff_called", "seat": predicted}
            if {k: event.get(k) for k in want} != want:
                raise Mismatch(f"the in-flight Bluff was written as {event}")
        elif kind in ("correct", "confirm"):
            # The clock and the sender's session are the server's to fill in (R14, R15 keep who and when).
            stamped = ("at", "session")
            if {k: v for k, v in event.items() if k not in stamped} != {k: v for k, v in predicted.items() if k not in stamped}:
                raise Mismatch(f"the in-flight {kind} was written as {event}, the rules say {predicted}")
        elif event != predicted:
            raise Mismatch(f"the in-flight {kind} was written as {event}, the rules say {predicted}")
        self.take(event)
        return f"in-flight {kind} written (kept, unacknowledged)"

    def check_served(self) -> None:
        """After the restart: the server's state is the fold of the log we expect."""
        if self.state is None:
            return
        served = self.server.get(f"/api/games/{self.state.id}").json()
        if served != public_state(self.state):
            raise Mismatch(f"after restart the state differs from the fold of the acknowledged events:\n{served}\n{public_state(self.state)}")
        current = self.server.get("/api/games/current")
        if self.state.phase != "over" and current.json().get("id") != self.state.id:
            raise Mismatch(f"after restart the current game is {current.json()}, not {self.state.id}")


def kill_run(seed: int, *, actions: int = 200, kills: int = 10, workdir: Path, log: Callable[[str], None] = lambda s: None, max_kill_delay: float = 0.012) -> dict[str, Any]:
    """One seeded run: ``actions`` scripted requests, ``kills`` SIGKILLs at random points."""
    rng = random.Random(seed)
    instance = Path(workdir) / f"kill-{seed}"
    server = LiveServer(instance, pin=PIN)
    table = ModelTable(server, rng)
    kill_points = set(rng.sample(range(1, actions), min(kills, actions - 1)))
    outcomes: list[str] = []
    restart_s: list[float] = []
    log(f"kill run seed={seed} actions={actions} kills at {sorted(kill_points)}")
    server.start()
    try:
        for i in range(actions):
            kind, body = table.next_action()
            if i not in kill_points:
                table.send(kind, body)
                continue
            predicted, status = table.expected(kind, body)
            timer = threading.Timer(rng.uniform(0.0, max_kill_delay), server.kill)
            timer.start()
            in_flight = None
            answered = False
            try:
                table.send(kind, body)
                answered = True
            except requests.RequestException:
                # No answer: the action may or may not have been written.
                in_flight = (kind, body, predicted) if status is None else None
            finally:
                timer.join()
                server.kill()  # the timer may have fired only after the answer
            outcome = table.reconcile(in_flight, instance / "game-log.sqlite3")
            if answered:
                outcome = "answered before the kill"
            elif in_flight is None:
                outcome = "a refused action cut off: nothing written"
            outcomes.append(f"action {i} ({kind}): {outcome}")
            t0 = time.monotonic()
            server.start()
            restart_s.append(time.monotonic() - t0)
            table.check_served()
        # The game goes on after the last restart: one more action is accepted.
        while True:
            kind, body = table.next_action()
            if table.expected(kind, body)[1] is None:
                break
        table.send(kind, body)
    except Exception as exc:
        log(f"seed {seed} FAILED: {exc}")
        return {"seed": seed, "ok": False, "error": str(exc), "kills": len(outcomes), "outcomes": outcomes, "server_log_tail": server.log_text()[-3000:]}
    finally:
        server.stop()
    log(f"seed {seed}: ok, {len(outcomes)} kills, {table.acked} acknowledged, {table.refused} refused")
    return {
        "seed": seed,
        "ok": True,
        "actions": actions,
        "kills": len(outcomes),
        "acknowledged": table.acked,
        "refused": table.refused,
        "outcomes": outcomes,
        "restart_s_max": round(max(restart_s), 3) if restart_s else None,
    }
