"""The saved photos of each Bluff: where they live, writing them, and what is wrong with their folder.

A disputed roll is replayed from these files (R15), so they are written whole
or not at all (``atomic_write``); a full disk loses only the photo, never the
Bluff, and ``problem`` says so for ``/api/health``.
"""

from __future__ import annotations

import logging
from pathlib import Path

from companion.core.capture import Capture
from companion.core.files import atomic_write

log = logging.getLogger(__name__)


class FrameArchive:
    """The frames folder of one instance: ``<challenge>.jpg`` and ``<challenge>-annotated.jpg``.

    >>> import tempfile, pathlib
    >>> archive = FrameArchive(pathlib.Path(tempfile.mkdtemp()) / "frames")
    >>> archive.save("c-ab-1", Capture(None, frame_jpeg=b"jpeg"))
    (True, None)
    >>> archive.path("c-ab-1", "frame").read_bytes()
    b'jpeg'
    """

    def __init__(self, frames_dir: Path) -> None:
        self.frames_dir = frames_dir
        #: why the photos cannot be saved right now, or None
        self.problem: str | None = None

    def path(self, challenge_id: str, kind: str) -> Path:
        """The file of a challenge's photo; ``kind`` "annotated" or the camera's "frame". Ids come from the log, never a client."""
        suffix = "-annotated.jpg" if kind == "annotated" else ".jpg"
        return self.frames_dir / f"{challenge_id}{suffix}"

    def save(self, challenge_id: str, capture: Capture) -> tuple[bool, str | None]:
        """Write a capture's photos. Returns (saved, the capture's problem with the disk's added)."""
        problem = capture.problem
        if capture.frame_jpeg is None:
            return False, problem
        try:
            self.frames_dir.mkdir(parents=True, exist_ok=True)
            atomic_write(self.path(challenge_id, "frame"), capture.frame_jpeg)
            if capture.annotated_jpeg is not None:
                atomic_write(self.path(challenge_id, "annotated"), capture.annotated_jpeg)
            self.problem = None
            return True, problem
        except OSError as exc:
            log.error("could not save the frames of %s: %s", challenge_id, exc)
            note = f"The photo could not be saved ({exc.strerror or exc})."
            self.problem = f"The photos of Bluffs cannot be saved in {self.frames_dir} ({exc.strerror or exc})."
            return False, f"{problem} {note}" if problem else note
