"""The simulated table as a camera: renders a frame of the dice it was told to show.

``serve --simulate`` sets the next top faces through ``set_next_values`` (the
``POST /api/sim/dice`` route), the frame is rendered by ``vision.simtable``,
and the real reader reads it: nothing is passed around the camera.
"""

from __future__ import annotations

import threading

import numpy as np

from companion.core.dice import STANDARD_OPPOSITE, is_face, opposite_face
from companion.core.errors import BadRequest
from companion.core.protocols import FrameSource
from vision.simtable import PlacedDie, render_table


class SimulatedTableSource(FrameSource):
    """A rendered camera over (or under) a tray with dice.

    >>> src = SimulatedTableSource(rng=np.random.default_rng(1))
    >>> src.set_next_values([6, 5, 4])
    >>> src.grab().shape
    (960, 1280, 3)
    >>> src.last_tops
    [6, 5, 4]
    """

    name = "simulated"

    def __init__(self, rng: np.random.Generator | None = None, *, view: str = "below", opposite_faces: list[int] | None = None,
                 width: int = 1280, height: int = 960, **render_options) -> None:
        self.rng = rng if rng is not None else np.random.default_rng()
        self.view = view
        self.opposite = list(opposite_faces or STANDARD_OPPOSITE)
        self.width, self.height = width, height
        self.render_options = render_options
        self._next: list[int] | None = None
        self._lock = threading.Lock()
        #: the top faces and the placed dice of the last rendered frame (for tests and the demo page)
        self.last_tops: list[int] = []
        self.last_dice: list[PlacedDie] = []

    def set_next_values(self, values: list[int]) -> None:
        """The top faces the next frame shows (1-6 each, 1 to 12 dice); ``BadRequest`` otherwise."""
        if not isinstance(values, (list, tuple)) or not 1 <= len(values) <= 12:
            raise BadRequest("values must be a list of 1 to 12 dice faces, e.g. [6, 5, 4].")
        if not all(is_face(v) for v in values):
            raise BadRequest("each die's value must be a whole number from 1 to 6.")
        with self._lock:
            self._next = list(values)

    def dice_taken(self) -> None:
        """A Bluff's capture read the tray: the next frame shows new dice, unless ``set_next_values`` says which.

        >>> src = SimulatedTableSource(rng=np.random.default_rng(1))
        >>> src.set_next_values([6, 6, 6])
        >>> _ = src.grab(); _ = src.grab(); src.last_tops  # a look (the lid's peek check) takes nothing
        [6, 6, 6]
        >>> src.dice_taken(); _ = src.grab(); src.last_tops == [6, 6, 6]
        False
        """
        with self._lock:
            self._next = None

    def grab(self) -> np.ndarray:
        with self._lock:
            # Not cleared here: the dice stay on the tray until a Bluff's capture has
            # read them (``dice_taken``); the lid's private peek check looks too.
            tops = self._next or [int(v) for v in self.rng.integers(1, 7, 3)]
            seen = [opposite_face(t, self.opposite) for t in tops] if self.view == "below" else list(tops)
            frame, dice = render_table(seen, self.rng, width=self.width, height=self.height, view=self.view, **self.render_options)
            self.last_tops, self.last_dice = list(tops), dice
        return frame
