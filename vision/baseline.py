"""The no-model baseline: count the marks on a die crop as blobs that contrast with the face.

Used only by ``bench``, so the model's gain over plain image processing is
measured in the same run on the same crops. A face is thresholded (Otsu) into
face and marks; the marks are the smaller side; blobs of a plausible mark size
in the die's middle are counted.
"""

from __future__ import annotations

import cv2
import numpy as np

from vision.classifier import MARGIN


def count_marks(crop: np.ndarray) -> int:
    """The number of marks (clipped to 1..6) on a crop whose die fills 1/MARGIN of its width."""
    grey = cv2.cvtColor(crop, cv2.COLOR_BGR2GRAY)
    size = grey.shape[0]
    die = size / MARGIN
    c0 = int((size - die * 0.85) / 2)
    face = grey[c0:size - c0, c0:size - c0]
    if face.size == 0:
        return 1
    _, bw = cv2.threshold(face, 0, 255, cv2.THRESH_BINARY + cv2.THRESH_OTSU)
    if (bw > 0).mean() > 0.5:  # the marks are the minority: dark marks on a light face or the reverse
        bw = 255 - bw
    n, _, stats, _ = cv2.connectedComponentsWithStats(bw, connectivity=8)
    area = face.shape[0] * face.shape[1]
    marks = [s for s in stats[1:] if area * 0.004 <= s[cv2.CC_STAT_AREA] <= area * 0.12]
    return int(np.clip(len(marks), 1, 6))
