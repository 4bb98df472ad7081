"""How proposals are scored against labels: one matcher for training's epoch picking and for the card.

A proposal matches a die when the axis-aligned box of its square and the die's label box overlap by
IoU ≥ 0.5 (each die and proposal used once, best score first). Side error is relative: against the
square's side for rendered dice, against the box's short side for real ones compared with the
proposal's own box short side (a real label's box is the box of a possibly turned square).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from models.training.detector import labels as L

IOU = 0.5


@dataclass
class Tally:
    dice: int = 0
    proposals: int = 0
    found: int = 0
    side_errors: list[float] = field(default_factory=list)
    angle_errors: list[float] = field(default_factory=list)
    frames: int = 0
    frames_all_found: int = 0

    def add(self, props: list[tuple[float, float, float, float, float]], dice: np.ndarray) -> None:
        """``props``: (cx, cy, side, angle, score) best first; ``dice``: label rows, in the same pixels."""
        self.frames += 1
        self.dice += len(dice)
        self.proposals += len(props)
        used = np.zeros(len(dice), bool)
        found = 0
        for cx, cy, side, angle, _ in props:
            a = math.radians(angle)
            half = side * (abs(math.cos(a)) + abs(math.sin(a))) / 2
            pbox = (cx - half, cy - half, cx + half, cy + half)
            best, bi = IOU, -1
            for i, row in enumerate(dice):
                if not used[i]:
                    v = L.iou(pbox, L.label_box(row))
                    if v >= best:
                        best, bi = v, i
            if bi < 0:
                continue
            used[bi] = True
            found += 1
            row = dice[bi]
            if row[6] > 0:
                self.side_errors.append(abs(side - float(row[4])) / float(row[4]))
                self.angle_errors.append(L.angle_error(angle, float(row[5])))
            else:
                self.side_errors.append(abs(2 * half - float(row[4])) / float(row[4]))
        self.found += found
        self.frames_all_found += int(found == len(dice) and len(props) == len(dice))

    @property
    def recall(self) -> float:
        return self.found / self.dice if self.dice else 1.0

    @property
    def precision(self) -> float:
        return self.found / self.proposals if self.proposals else 1.0

    @property
    def f1(self) -> float:
        p, r = self.precision, self.recall
        return 2 * p * r / (p + r) if p + r else 0.0

    def summary(self) -> dict[str, float | int | None]:
        return {"frames": self.frames, "dice": self.dice, "proposals": self.proposals, "found": self.found,
                "recall": round(self.recall, 4), "precision": round(self.precision, 4),
                "frames_exact": self.frames_all_found,
                "side_error": round(float(np.mean(self.side_errors)), 4) if self.side_errors else None,
                "angle_error_deg": round(float(np.mean(self.angle_errors)), 2) if self.angle_errors else None}
