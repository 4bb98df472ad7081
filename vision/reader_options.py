"""What every reader is told about the table: the camera's view, the opposite faces, how sure, how many dice, the tray.

Both readers (the staged one and the classic cascade) take these options and
answer the same ``with_*`` questions, so the commands, the capture loop and
``evaluate`` work with either.
"""

from __future__ import annotations

from typing import Any

from companion.core.dice import STANDARD_OPPOSITE, opposite_face


class ReaderOptions:
    """The options of a reader and copies of it with one changed; a reader class supplies ``_but``."""

    def _set_options(self, *, camera_view: str = "below", opposite_faces: list[int] | None = None, min_confidence: float = 0.95,
                     expected_dice: int = 3, die_side_px: float = 0, tray_region: list[int] | None = None) -> None:
        self.camera_view = camera_view
        self.opposite = list(opposite_faces or STANDARD_OPPOSITE)
        self.min_confidence = float(min_confidence)
        self.expected_dice = int(expected_dice)
        self.die_side_px = float(die_side_px) or None
        self.tray_region = list(tray_region or [])

    def options(self) -> dict[str, Any]:
        """The options as keyword arguments of the reader's constructor."""
        return dict(camera_view=self.camera_view, opposite_faces=self.opposite, min_confidence=self.min_confidence,
                    expected_dice=self.expected_dice, die_side_px=self.die_side_px or 0, tray_region=self.tray_region)

    @property
    def region_problem(self) -> str | None:
        """Words for ``/api/health``, ``check`` and the set-up page when the tray's region is narrower than one die
        (a region typed by hand, or set before the die was measured): no die is ever found in it, so every reading
        says it found none. None when the region fits a die or either is not set."""
        if not self.tray_region or not self.die_side_px:
            return None
        w, h = self.tray_region[2:4]
        if min(w, h) >= self.die_side_px:
            return None
        return (f"The tray's region ({w}×{h} pixels) is narrower than one die ({round(self.die_side_px)} pixels), so no "
                "die is ever found in it: draw it round the whole tray (the set-up page, or elephants-bluff calibrate).")

    def _but(self, **changes: Any) -> Any:
        raise NotImplementedError

    def with_view(self, camera_view: str) -> Any:
        """The same reader for another camera view (``read --as-seen`` reads as from above)."""
        return self._but(camera_view=camera_view)

    def with_die_side(self, die_side_px: float) -> Any:
        """The same reader knowing a die's side in frame pixels (what ``calibrate --dice`` stores; 0: not known)."""
        return self._but(die_side_px=die_side_px)

    def with_expected(self, expected_dice: int) -> Any:
        """The same reader expecting another number of dice (``evaluate`` on photos of 1 to 48 dice)."""
        return self._but(expected_dice=expected_dice)

    def top_of(self, seen: int) -> int:
        """The face the game counts for the face the camera saw."""
        return opposite_face(seen, self.opposite) if self.camera_view == "below" else seen
