"""Where a staged read's time goes: per model, its network runs, the rows it reads and its milliseconds a read.

The speed rows give one number, a read's median, which moves by a fifth with the shared host's hour. Most of a read
is onnxruntime, and most of that the face model, whose cost is about the same per crop whatever the batch
(docs/reading-log.md, "One cut fewer a die"). How many crops a read cuts is decided by the dice, the looks and the
cuts alone, so it is the same on every host: the part of a read's cost a change can be checked against without a
clock (``tests/vision/test_read_cost.py`` holds the bench's frames to a budget). The milliseconds beside it are this
host's, this hour's.

``read_cost(reader, reads)`` meters every model session the reader holds (``meter``) for the time of the reads and
gives them back as they were; the readings are the same as without the meters.
"""

from __future__ import annotations

import statistics
import time
from contextlib import contextmanager
from typing import Any, Iterator

import numpy as np

#: The reader's model sessions, by the name the report gives them: where each lies on a ``PipelineReader``.
SESSIONS = (("face model", ("classifier", "_session")), ("second opinion", ("second_opinion", "classifier", "_session")),
            ("detector", ("proposer", "detector", "session")))


class Metered:
    """An onnxruntime session that counts its runs and the rows of their first input, and times them."""

    def __init__(self, session: Any) -> None:
        self.session = session
        self.runs = 0
        self.rows = 0
        self.seconds = 0.0

    def run(self, output_names: Any, feeds: dict[str, np.ndarray], *args: Any, **kwargs: Any) -> Any:
        start = time.perf_counter()
        try:
            return self.session.run(output_names, feeds, *args, **kwargs)
        finally:
            self.seconds += time.perf_counter() - start
            self.runs += 1
            self.rows += int(next(iter(feeds.values())).shape[0])

    def __getattr__(self, name: str) -> Any:  # everything else is the session's own
        return getattr(self.session, name)


def _holder(reader: Any, path: tuple[str, ...]) -> tuple[Any, str] | None:
    """The object holding the session at ``path`` on ``reader``, and the session's attribute name (None: not there)."""
    owner = reader
    for name in path[:-1]:
        owner = getattr(owner, name, None)
        if owner is None:
            return None
    return (owner, path[-1]) if hasattr(owner, path[-1]) else None


@contextmanager
def meter(reader: Any) -> Iterator[dict[str, Metered]]:
    """Each model session ``reader`` holds (``SESSIONS``; one it lacks, as a reader without a second opinion, is left
    out) replaced by a ``Metered`` one for the block, and put back after it, whatever happens in the block."""
    placed: list[tuple[Any, str, Any]] = []
    meters: dict[str, Metered] = {}
    try:
        for name, path in SESSIONS:
            found = _holder(reader, path)
            if found is None:
                continue
            owner, attribute = found
            session = getattr(owner, attribute)
            meters[name] = Metered(session)
            placed.append((owner, attribute, session))
            setattr(owner, attribute, meters[name])
        yield meters
    finally:
        for owner, attribute, session in reversed(placed):
            setattr(owner, attribute, session)


def read_cost(reader: Any, reads: list[tuple[Any, np.ndarray]], repeats: int = 3) -> dict[str, Any]:
    """Per read of ``reads`` (reader, frame; each read ``repeats`` times): the face model's crops (median and most:
    the same on any host), and per model the runs, rows and milliseconds a read (means), beside the whole read's
    median milliseconds and the share of it the models took. The readers are ``reader`` or copies of it
    (``with_die_side``, ``with_empty_tray``: a calibrated table each), which share its sessions and so its meters. A
    reader that reads with no model sessions (the classic finder) gives only the read's time."""
    crops: list[int] = []
    times: list[float] = []
    with meter(reader) as meters:
        face = meters.get("face model")
        for one, frame in reads:
            for _ in range(repeats):
                rows_before = face.rows if face else 0
                start = time.perf_counter()
                one.read(frame)
                times.append((time.perf_counter() - start) * 1000)
                if face:
                    crops.append(face.rows - rows_before)
    n = len(times)
    models = {name: {"runs_a_read": round(m.runs / n, 2), "rows_a_read": round(m.rows / n, 2),
                     "ms_a_read": round(1000 * m.seconds / n, 3), "ms_a_row": round(1000 * m.seconds / m.rows, 3) if m.rows else None}
              for name, m in meters.items()}
    out: dict[str, Any] = {"reads": n, "read_median_ms": round(statistics.median(times), 2), "models": models}
    if crops:
        out["face_model_crops_median"] = statistics.median(crops)
        out["face_model_crops_most"] = max(crops)
    if meters and times:
        out["models_share_of_read"] = round(1000 * sum(m.seconds for m in meters.values()) / sum(times), 3)
    return out
