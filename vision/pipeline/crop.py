"""Stage 3, crop: each proposed die cut out upright and tight, as the classifier was trained to see it.

The cropper is ``vision.classifier.cut_crop``, the same function the training
code cuts its crops with, so a die looks the same to the model in use as in
training. Through a wide lens a die near the frame's edge is squeezed along the
line to the centre; each proposal then carries the lens's straightening where it
lies, and is cut square again.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from companion.core.protocols import Proposal
from vision.classifier import CROP, cut_crop
from vision.pipeline.lens import Lens


def crops(bgr: np.ndarray, proposals: list[Proposal], span: float = 1.0) -> np.ndarray:
    """N×CROP×CROP×3 crops of ``proposals`` in ``bgr``, each die's side scaled by ``span``.

    >>> frame = np.zeros((100, 100, 3), np.uint8)
    >>> crops(frame, [Proposal(50, 50, 30, 10, 0.9)]).shape
    (1, 40, 40, 3)
    """
    cut = [cut_crop(bgr, p.cx, p.cy, p.side * span, p.angle_deg, straighten=p.straighten) for p in proposals]
    return np.array(cut, np.uint8).reshape(-1, CROP, CROP, 3)


def straightened_where_they_lie(proposals: list[Proposal], lens: Lens | None) -> list[Proposal]:
    """``proposals``, each carrying the ``lens``'s straightening where it lies (``Lens.straightening_at``), so that
    every crop of it is cut square again from the bent picture, as the classifier and the cues were trained to see
    a die (None: no bend, the proposals as they are)."""
    if lens is None:
        return proposals
    return [replace(p, straighten=lens.straightening_at(p.cx, p.cy)) for p in proposals]
