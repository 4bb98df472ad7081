"""A die leaning on the cup told by how it looks: a linear cue on the face classifier's embedding.

Seen from below, a die leaning on the cup shows its tilted face and a strip of a side face, darker, with
its own marks. The outline check (``vision.pipeline.shape``) measures that shape, but where the leaning die
touches another die, or the detector boxed only its lit face, the outline says nothing, and such a die was
trusted (RULES.md R14 says the referee must not). The face classifier's embedding (the vector its last
layer reads, ``vision.embedding``) holds what the crop looks like, side strip included, so one logistic
layer on it (``models/leaning-cue.npz``, fit by ``python -m models.training.leaning_cue`` on rendered
frames from below and from above, with real photos' flat dice as negatives) tells a leaning die from a flat one.
From above, where a photo's slant lengthens every die's outline, it is the reader's only leaning check. It only ever adds a doubt: a die it calls leaning sends the
reading to the table; it never makes a reading sure.

The cue belongs to one classifier's embedding: the file names the classifier it was fit on, and with another
(a retrained model) it is not used (``load_cue`` says why). A taught classifier keeps the shipped model's
embedding, so the cue still fits it.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Callable

import numpy as np

from companion.core.protocols import Proposal
from vision.linear_cue import LinearCue, embedded_at_spans, load_for

log = logging.getLogger(__name__)

#: The cue fit for the shipped classifier, beside it in the ``models`` package.
CUE_FILE = "leaning-cue.npz"
#: A die scoring within this much under the cue's threshold is doubted too: a score that close to the line could
#: fall on either side on the Pi's arm64 CPU, and a doubt costs the table one confirmation, a trusted lean a round.
CUE_MARGIN = 0.02
#: The crops the cue reads a die in, as shares of its proposed side: the reader's first two cuts, and a wider one
#: that shows a neighbour or a side face whole (docs/READING.md, "The leaning cue").
CUE_SPANS = (1.0, 1.15, 1.5)


class LeaningCue(LinearCue):
    """One logistic layer on the standardised embeddings of a die's crops (``CUE_SPANS``)."""

    KIND = "leaning cue"

    def leaning(self, features: np.ndarray) -> list[bool]:
        """Per row, whether it is doubted as a leaning die (``threshold`` less ``CUE_MARGIN``).

        >>> cue = LeaningCue(np.array([1.0, 0.0], np.float32), 0.0, np.zeros(2, np.float32), np.ones(2, np.float32), "m", 0.9)
        >>> cue.leaning(np.array([[5.0, 0.0], [0.0, 3.0], [2.1, 0.0], [1.9, 0.0]]))  # scores .99, .5, .89, .87; the line .88
        [True, False, True, False]
        """
        return self.flags(features, CUE_MARGIN)


def cue_features(embed: Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]], bgr: np.ndarray, proposals: list[Proposal],
                 known: list[np.ndarray | None] | None = None) -> np.ndarray:
    """What the cue reads of each proposed die (N × width): ``embed``'s embedding (a classifier's
    ``logits_and_embedding``) of its ``CUE_SPANS`` crops, side by side (``linear_cue.embedded_at_spans``). The fit
    takes it from here; the reader embeds the same cuts, in one run with the number cue's (``reconcile.flag_by_looks``),
    so the cue is fit on exactly what it reads. ``known``, per proposal, the
    embeddings of its first two spans' cuts side by side where the reader's first look made them already (None:
    embed them here)."""
    return embedded_at_spans(embed, bgr, proposals, CUE_SPANS, known)


def shipped_cue_path() -> Path:
    """Where the shipped cue lies: beside the shipped models."""
    from importlib import resources

    return Path(str(resources.files("models"))) / CUE_FILE


def load_cue(base_model_id: str, embedding_width: int, path: Path | None = None) -> tuple[LeaningCue | None, str | None]:
    """The cue for a classifier whose embedding is that of ``base_model_id`` (``embedding_width`` long), and None;
    or None and why it is not used (missing, damaged, fit on another classifier). The reader then reads without it,
    with the outline check alone."""
    cue, why = load_for(LeaningCue, path or shipped_cue_path(), base_model_id, embedding_width * len(CUE_SPANS))
    return cue, why  # type: ignore[return-value]
