"""The saved photos of each Bluff: where they live, writing them, pruning them, and what is wrong with their folder.

A disputed roll is replayed from these files (R15), so they are written whole
or not at all (``atomic_write``); a full disk loses only the photo, never the
Bluff, and ``problem`` says so for ``/api/health``.

A photo becomes a Bluff's only after the log entry that names it: it is
first written as ``<challenge>.jpg.pending`` (``stage``; a full disk shows
here, before the event, which then says the photo was not saved), the event
is committed, and only then is it renamed to its name (``publish``). A kill
between the two leaves a pending file, which ``sweep`` at the next start
publishes if the log names it and deletes if not; a named photo that the log
in place does not hold (another log's) is set aside, never deleted.

Photos are pruned by count (``storage.frames_keep``, the newest kept) and by
age (``storage.frames_days``; 0 keeps them whatever their age): a Pi's card
is small, and a year of evenings fills it. A Bluff whose photo was pruned
keeps everything else (its reading, verdict and corrections are in the log).
"""

from __future__ import annotations

import logging
import os
import time
from dataclasses import replace
from pathlib import Path
from typing import Callable

from companion.core.capture import Capture
from companion.core.files import atomic_write

log = logging.getLogger(__name__)

PENDING = ".pending"
#: the folder (in the frames folder) where the start sets aside photos of Bluffs the game log in place does not hold
NOT_IN_LOG = "not-in-this-log"
_KINDS = ("frame", "annotated")


class FrameArchive:
    """The frames folder of one instance: ``<challenge>.jpg`` and ``<challenge>-annotated.jpg``.

    >>> import tempfile, pathlib
    >>> archive = FrameArchive(pathlib.Path(tempfile.mkdtemp()) / "frames")
    >>> archive.stage("c-ab-1", Capture(None, frame_jpeg=b"jpeg"))[0]
    True
    >>> archive.path("c-ab-1", "frame").exists()  # not before its log entry
    False
    >>> archive.publish("c-ab-1"); archive.path("c-ab-1", "frame").read_bytes()
    b'jpeg'
    """

    def __init__(self, frames_dir: Path, *, keep: int = 1000, keep_days: int = 0, clock: Callable[[], float] = time.time) -> None:
        self.frames_dir = frames_dir
        self.keep = keep
        self.keep_days = keep_days
        self._clock = clock
        #: why the photos cannot be saved right now, or None; ``problem_detail``: the folder and the disk's error alone
        self.problem: str | None = None
        self.problem_detail: str | None = None

    def configure(self, *, keep: int, keep_days: int) -> None:
        """The pruning settings (``storage.frames_keep``, ``storage.frames_days``)."""
        self.keep, self.keep_days = keep, keep_days

    def path(self, challenge_id: str, kind: str) -> Path:
        """The file of a challenge's photo; ``kind`` "annotated" or the camera's "frame". Ids come from the log, never a client."""
        suffix = "-annotated.jpg" if kind == "annotated" else ".jpg"
        return self.frames_dir / f"{challenge_id}{suffix}"

    def _pending(self, challenge_id: str, kind: str) -> Path:
        final = self.path(challenge_id, kind)
        return final.with_name(final.name + PENDING)

    def stage(self, challenge_id: str, capture: Capture) -> tuple[bool, Capture]:
        """Write a capture's photos under their pending names. Returns (staged, the capture, with the disk's problem
        added to its own when they could not be written)."""
        problem = capture.problem
        if capture.frame_jpeg is None:
            return False, capture
        try:
            self.frames_dir.mkdir(parents=True, exist_ok=True)
            atomic_write(self._pending(challenge_id, "frame"), capture.frame_jpeg)
            if capture.annotated_jpeg is not None:
                atomic_write(self._pending(challenge_id, "annotated"), capture.annotated_jpeg)
            self.problem = self.problem_detail = None
            return True, capture
        except OSError as exc:
            self.discard(challenge_id)
            log.error("could not save the frames of %s: %s", challenge_id, exc)
            why = str(exc.strerror or exc)
            note = f"The photo could not be saved ({why})."
            self.problem = f"The photos of Bluffs cannot be saved in {self.frames_dir} ({why})."  # /api/health shows it within the instance
            self.problem_detail = f"{self.frames_dir}: {why}"  # the same, for a page that says the rest in its language
            return False, replace(capture, problem=f"{problem} {note}" if problem else note,
                                  problem_codes=(*capture.problem_codes, {"code": "photo_unsaved", "detail": why}))

    def publish(self, challenge_id: str) -> None:
        """The log entry naming the photos is committed: give them their names, then prune the oldest."""
        for kind in _KINDS:
            pending = self._pending(challenge_id, kind)
            try:
                os.replace(pending, self.path(challenge_id, kind))
            except FileNotFoundError:
                continue
            except OSError as exc:  # left pending: the next start's sweep publishes it
                log.error("could not publish the photo %s: %s", pending.name, exc)
        self.prune()

    def discard(self, challenge_id: str) -> None:
        """The log entry was not written: its photos go."""
        for kind in _KINDS:
            try:
                self._pending(challenge_id, kind).unlink(missing_ok=True)
            except OSError:
                pass  # the folder itself is unusable: nothing was written

    @staticmethod
    def _challenge_of(name: str) -> str:
        base = name[: -len(PENDING)] if name.endswith(PENDING) else name
        base = base[: -len(".jpg")] if base.endswith(".jpg") else base
        return base[: -len("-annotated")] if base.endswith("-annotated") else base

    def sweep(self, named: Callable[[str], bool]) -> dict[str, int]:
        """At start: publish the pending photos the log names and delete those it does not (Bluffs a kill stopped
        before their log entry), delete the half-written files a kill left; then prune.

        A published photo the log does not name is set aside in ``NOT_IN_LOG``, never deleted: the log in place is
        not the one that named it (moved away as safe mode advises, restored from a backup, a game ``doctor
        --repair`` could not read), and with that log back it is a disputed roll's evidence (R15)."""
        counts = {"published": 0, "deleted": 0, "set_aside": 0}
        if not self.frames_dir.is_dir():
            return counts
        for entry in sorted(self.frames_dir.iterdir()):
            name = entry.name
            if not name.startswith("c-") or not entry.is_file():
                continue
            if name.endswith(".jpg.part") or name.endswith(".jpg" + PENDING + ".part"):
                entry.unlink(missing_ok=True)  # a write a kill cut short: atomic_write's temporary file
                counts["deleted"] += 1
                continue
            if not (name.endswith(".jpg") or name.endswith(".jpg" + PENDING)):
                continue
            challenge = self._challenge_of(name)
            if named(challenge):
                if name.endswith(PENDING):
                    os.replace(entry, entry.with_name(name[: -len(PENDING)]))
                    counts["published"] += 1
            elif name.endswith(PENDING):
                entry.unlink(missing_ok=True)
                counts["deleted"] += 1
            else:
                aside = self.frames_dir / NOT_IN_LOG
                aside.mkdir(exist_ok=True)
                os.replace(entry, aside / name)
                counts["set_aside"] += 1
        if counts["set_aside"]:
            log.warning("%d photos of Bluffs this game log does not hold were set aside in %s (not deleted): "
                        "they belong to another log", counts["set_aside"], self.frames_dir / NOT_IN_LOG)
        if any(counts.values()):
            log.info("frames folder swept: %s", counts)
        self.prune()
        return counts

    def prune(self) -> int:
        """Delete the photos past ``keep`` (oldest first) and older than ``keep_days``; returns how many Bluffs lost theirs."""
        try:
            photos = [(e.stat().st_mtime, e) for e in self.frames_dir.iterdir() if e.name.startswith("c-") and e.name.endswith(".jpg") and e.is_file()]
        except OSError:
            return 0
        by_challenge: dict[str, float] = {}
        for mtime, entry in photos:
            challenge = self._challenge_of(entry.name)
            by_challenge[challenge] = max(mtime, by_challenge.get(challenge, 0.0))
        newest_first = sorted(by_challenge, key=lambda c: by_challenge[c], reverse=True)
        cutoff = self._clock() - self.keep_days * 86400 if self.keep_days else None
        gone = [c for i, c in enumerate(newest_first) if i >= self.keep or (cutoff is not None and by_challenge[c] < cutoff)]
        for challenge in gone:
            for kind in _KINDS:
                self.path(challenge, kind).unlink(missing_ok=True)
        return len(gone)
