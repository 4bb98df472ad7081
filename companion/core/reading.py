"""What the reader says about one frame: the seam between vision and the referee.

The referee decides a Bluff from ``Reading.tops()`` only when ``status == "ok"``;
anything else sends it to the ``confirm`` phase (RULES.md R14), so the reader
never has to guess.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

OK = "ok"
UNCERTAIN = "uncertain"

#: Why a reading is uncertain, as codes the page translates (``reason_<code>`` in every language):
#: ``count`` {found, expected}, ``cut_off``, ``leaning``, ``low_confidence`` {n, lowest}, ``dark``, ``blank``,
#: ``size`` {seen_px, calibrated_px} (the dice look another size than calibrated), ``marks`` (a die shows numbers or signs,
#: not pips: ``vision.number_cue``), ``second_look`` {n} (tray mode's look at the calibrated size missed ``n`` dice that a
#: look knowing no size found, of that size), ``second_opinion`` (a second classifier does not read a die's face: a bead or a
#: game piece taken for a die?, ``vision.second_opinion``), ``unlike`` (tray mode: a die's colour is unlike every other die's,
#: ``vision.pipeline.alike``), ``calibration`` {frame: [w, h], and region: [x, y, w, h] or empty_tray: [w, h]} (the camera's set-up
#: was made for another picture: read without it, ``vision.pipeline.normalise.calibration_misfit``).
#: Any other trouble (an unusable image) keeps only the English ``reason``.
REASON_CODES = ("count", "cut_off", "leaning", "low_confidence", "dark", "blank", "size", "marks", "second_look", "second_opinion", "unlike", "calibration")


@dataclass(frozen=True)
class DieReading:
    """One die: the face the camera saw, the top face the game counts, and evidence."""

    seen: int
    top: int
    confidence: float
    box: tuple[int, int, int, int]  # x, y, w, h in frame pixels
    #: why this die alone makes its reading uncertain (``cut_off``, ``leaning``, ``low_confidence``): the
    #: annotated image marks that die. Evidence of the read, not of the record: the JSON keeps API.md's four keys.
    doubts: tuple[str, ...] = field(default=(), compare=False)

    def to_json(self) -> dict[str, Any]:
        return {
            "seen": self.seen,
            "top": self.top,
            "confidence": round(float(self.confidence), 4),
            "box": [int(v) for v in self.box],
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> "DieReading":
        return cls(int(data["seen"]), int(data["top"]), float(data["confidence"]), tuple(int(v) for v in data["box"]))  # type: ignore[arg-type]


@dataclass(frozen=True)
class Reading:
    """The reader's verdict on one frame.

    >>> r = Reading(OK, (DieReading(1, 6, 0.99, (0, 0, 10, 10)),) * 3, model_id="m")
    >>> r.total
    18
    """

    status: str
    dice: tuple[DieReading, ...]
    reason: str | None = None
    model_id: str = "none"
    extra: dict[str, Any] = field(default_factory=dict, compare=False)
    #: the reason again, as ``{"code": ..., params}`` for the page to say in the players' language
    reasons: tuple[dict[str, Any], ...] = ()
    #: the confidence from which a die counted as read for sure (the setting in force, kept with the Bluff)
    sure_at: float | None = None

    @property
    def total(self) -> int:
        return sum(d.top for d in self.dice)

    def tops(self) -> list[int]:
        return [d.top for d in self.dice]

    def to_json(self) -> dict[str, Any]:
        return {
            "status": self.status,
            "reason": self.reason,
            "dice": [d.to_json() for d in self.dice],
            "total": self.total,
            "model": self.model_id,
            "reasons": [dict(r) for r in self.reasons],
            "sure_at": self.sure_at,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> "Reading":
        return cls(
            status=data["status"],
            dice=tuple(DieReading.from_json(d) for d in data.get("dice", [])),
            reason=data.get("reason"),
            model_id=data.get("model", "none"),
            reasons=tuple(dict(r) for r in data.get("reasons") or ()),
            sure_at=data.get("sure_at"),
        )
