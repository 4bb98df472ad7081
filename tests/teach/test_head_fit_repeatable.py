"""A head fitted twice from the same dice on one machine is the same head to the byte, with the same id.

docs/TEACHING.md says so: the fit is seeded (the jitter, the reference dice, full-batch Adam from zeros), so a table
that teaches the same confirmed dice again gets the model it already has, not a new id beside it.
"""

from __future__ import annotations

import numpy as np

from vision.adapt import fit_head, rendered_crops
from vision.embedding import EmbeddingClassifier


def test_a_head_fitted_twice_from_the_same_dice_is_the_same_head_with_the_same_id():
    base = EmbeddingClassifier()
    owner = rendered_crops(60, seed=7)  # the owner's dice: at least four of each face
    reference = rendered_crops(24, seed=8)
    crops, seen = np.asarray([c for c, _ in owner], np.uint8), [v for _, v in owner]
    first = fit_head(base, crops, seen, reference=reference, steps=40)
    second = fit_head(base, crops, seen, reference=reference, steps=40)
    assert first.head.to_bytes() == second.head.to_bytes()
    assert first.head.model_id == second.head.model_id


def test_other_dice_fit_another_head_with_another_id():
    base = EmbeddingClassifier()
    reference = rendered_crops(24, seed=8)
    ids = set()
    for seed in (7, 9):
        owner = rendered_crops(60, seed=seed)
        fit = fit_head(base, np.asarray([c for c, _ in owner], np.uint8), [v for _, v in owner], reference=reference, steps=40)
        ids.add(fit.head.model_id)
    assert len(ids) == 2
