"""A ``companion.core.capture.DiceSource`` made of a camera and the reader: grab, read, annotate, encode.

The referee asks it for the dice at a Bluff. A camera problem never raises
here: it becomes a ``Capture`` with no reading and a sentence, and the referee
asks the table to confirm (RULES.md R14).
"""

from __future__ import annotations

import threading

from companion.core.capture import Capture
from companion.core.errors import HardwareError, NotFound
from companion.core.protocols import FrameSource
from vision.images import encode_jpeg
from vision.reader import DiceReader


class ReaderDiceSource:
    """Reads the dice with a real (or simulated) camera and the ONNX reader.

    >>> import numpy as np
    >>> from companion.core.settings import Settings
    >>> from vision.reader import load_reader
    >>> from vision.sources.simulated import SimulatedTableSource
    >>> table = SimulatedTableSource(rng=np.random.default_rng(7))
    >>> src = ReaderDiceSource(table, load_reader(Settings.defaults()))
    >>> table.set_next_values([2, 6, 3])
    >>> cap = src.capture()
    >>> cap.reading.status in ("ok", "uncertain"), cap.frame_jpeg[:2]
    (True, b'\\xff\\xd8')
    """

    def __init__(self, frames: FrameSource, reader: DiceReader) -> None:
        self.frames = frames
        self.reader = reader
        self.name = frames.name
        self._lock = threading.Lock()

    def capture(self) -> Capture:
        with self._lock:
            try:
                frame = self.frames.grab()
            except HardwareError as exc:
                return Capture(reading=None, problem=exc.message)
            reading = self.reader.read(frame)
            annotated = self.reader.annotate(frame, reading)
            return Capture(reading=reading, frame_jpeg=encode_jpeg(frame), annotated_jpeg=encode_jpeg(annotated, 85))

    def set_next_values(self, values: list[int]) -> None:
        """Pass the next top faces to a simulated table (``POST /api/sim/dice``)."""
        setter = getattr(self.frames, "set_next_values", None)
        if setter is None:
            raise NotFound(f"The {self.frames.name} camera shows real dice; only the simulated table takes values.")
        setter(values)

    def health(self) -> str:
        return self.frames.health()
