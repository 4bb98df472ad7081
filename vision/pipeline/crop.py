"""Stage 3, crop: each proposed die cut out upright and tight, as the classifier was trained to see it.

The cropper is ``vision.classifier.cut_crop``, the same function the training
code cuts its crops with, so a die looks the same to the model in use as in
training.
"""

from __future__ import annotations

import numpy as np

from companion.core.protocols import Proposal
from vision.classifier import CROP, cut_crop


def crops(bgr: np.ndarray, proposals: list[Proposal], span: float = 1.0) -> np.ndarray:
    """N×CROP×CROP×3 crops of ``proposals`` in ``bgr``, each die's side scaled by ``span``.

    >>> frame = np.zeros((100, 100, 3), np.uint8)
    >>> crops(frame, [Proposal(50, 50, 30, 10, 0.9)]).shape
    (1, 40, 40, 3)
    """
    cut = [cut_crop(bgr, p.cx, p.cy, p.side * span, p.angle_deg) for p in proposals]
    return np.array(cut, np.uint8).reshape(-1, CROP, CROP, 3)
