"""The small interfaces the layers talk through: frames, detectors, classifiers, the table's buttons and lights.

Each has real implementations in the layer that owns it: frame sources in
``vision/sources/`` (Picamera2, an OpenCV webcam, image files, the simulated
table), the face classifier in ``vision/classifier.py``, the buttons and lights
in ``firmware/`` (gpiozero, on real or mock pins), the capture loop in
``firmware/capture.py``. Code above a layer depends on these, never on
``hasattr`` probes of what it was handed.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any, Callable, Protocol, runtime_checkable

import numpy as np

from companion.core.capture import DiceSource
from companion.core.errors import HardwareError
from companion.core.reading import Reading


class FrameSource(ABC):
    """Gives camera frames of the tray as BGR ``uint8`` arrays (H×W×3).

    ``open`` raises ``companion.core.errors.HardwareError`` with a sentence a person
    understands when the camera is missing, so a bad set-up shows at start-up
    and in ``/api/health``, never as a crash inside a Bluff.
    """

    #: short backend name shown by ``/api/health`` ("picamera2", "webcam", "files", "simulated")
    name: str = "unknown"

    def open(self) -> None:  # noqa: B027 - optional hook
        """Acquire the device. Idempotent."""

    @abstractmethod
    def grab(self) -> np.ndarray:
        """Return the newest frame; raise ``HardwareError`` if none can be had."""

    def close(self) -> None:  # noqa: B027 - optional hook
        """Release the device. Idempotent."""

    def health(self) -> str:
        """"ok", or a sentence saying what is wrong with the camera.

        Tries ``open`` (idempotent), so a camera unplugged at start-up and
        plugged in later reports "ok" without a restart.
        """
        try:
            self.open()
        except HardwareError as exc:
            return exc.message
        return "ok"


@dataclass(frozen=True)
class Proposal:
    """Where a detector thinks a die lies: its centre, side and turn in frame pixels, and how sure it is."""

    cx: float
    cy: float
    side: float
    angle_deg: float
    score: float

    def box(self) -> tuple[float, float, float, float]:
        """The axis-aligned box (x0, y0, x1, y1) around the die's square.

        >>> Proposal(50, 50, 20, 45, 0.9).box()[0] < 40
        True
        """
        a = math.radians(self.angle_deg)
        half = self.side * (abs(math.cos(a)) + abs(math.sin(a))) / 2
        return self.cx - half, self.cy - half, self.cx + half, self.cy + half

    def of_die_size(self, die_side_px: float) -> bool:
        """Whether this can be one of the dice whose side is ``die_side_px`` (calibrated): its side is off it by
        no more than ``DIE_SIZE_TOLERANCE`` either way.

        >>> Proposal(50, 50, 90, 0, 0.9).of_die_size(60), Proposal(50, 50, 100, 0, 0.9).of_die_size(60)
        (True, False)
        """
        return 1 / DIE_SIZE_TOLERANCE <= self.side / die_side_px <= DIE_SIZE_TOLERANCE


#: With the dice's side known, a proposal whose side is off it by more than this factor is not one of the dice:
#: a ``Detector`` asked with ``die_side_px`` leaves it out, and the pipeline keeps only such sides from a look taken
#: without the size (``propose.of_die_size``). What a detector proposes when told the size, the pipeline takes as
#: the dice, its own side estimate aside: the calibrated size replaces it.
DIE_SIZE_TOLERANCE = 1.6


@runtime_checkable
class Detector(Protocol):
    """Finds dice in a grey frame (the reading pipeline's ``propose`` stage); chosen by name in the settings.
    Given ``die_side_px`` (the calibrated side in this frame's pixels, in the detector's own side units), it
    proposes only dice of that size (``Proposal.of_die_size``)."""

    #: the name the settings choose it by
    name: str

    def propose(self, grey: np.ndarray, *, die_side_px: float | None = None) -> list[Proposal]: ...


@runtime_checkable
class Classifier(Protocol):
    """Reads the face of each upright die crop: N×7 probabilities, column 0 "not a die", column k face k."""

    model_id: str

    def probabilities(self, crops: np.ndarray) -> np.ndarray: ...


@runtime_checkable
class Lights(Protocol):
    """The tray's lights: they show a game state, the camera at work, and a refused press."""

    def show(self, state: dict[str, Any] | None) -> None: ...

    def busy(self, busy: bool) -> None: ...

    def flash_refused(self) -> None: ...

    def snapshot(self) -> dict[str, Any]: ...


@runtime_checkable
class Buttons(Protocol):
    """The tray's inputs: each accepted press is handed on by name; ``drive`` presses one on mock pins."""

    def fitted(self, name: str) -> Any: ...

    def drive(self, name: str) -> None: ...


@runtime_checkable
class TrayCapture(DiceSource, Protocol):
    """A dice source that lights the tray while it reads and tells when it is busy (the capture loop)."""

    tray_light: Any

    def attach_light(self, tray_light: Any) -> None: ...

    def add_busy_listener(self, fn: Callable[[bool], None]) -> None: ...

    def remove_busy_listener(self, fn: Callable[[bool], None]) -> None: ...

    def snapshot(self) -> Reading | None: ...
