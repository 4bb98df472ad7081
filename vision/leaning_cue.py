"""A die leaning on the cup told by how it looks: a linear cue on the face classifier's embedding.

Seen from below, a die leaning on the cup shows its tilted face and a strip of a side face, darker, with
its own marks. The outline check (``vision.pipeline.shape``) measures that shape, but where the leaning die
touches another die, or the detector boxed only its lit face, the outline says nothing, and such a die was
trusted (RULES.md R14 says the referee must not). The face classifier's embedding (the vector its last
layer reads, ``vision.embedding``) holds what the crop looks like, side strip included, so one logistic
layer on it (``models/leaning-cue.npz``, fit by ``python -m models.training.leaning_cue`` on rendered
frames) tells a leaning die from a flat one. It only ever adds a doubt: a die it calls leaning sends the
reading to the table; it never makes a reading sure.

The cue belongs to one classifier's embedding: the file names the classifier it was fit on, and with another
(a retrained model) it is not used (``load_cue`` says why). A taught classifier keeps the shipped model's
embedding, so the cue still fits it.
"""

from __future__ import annotations

import io
import logging
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np

from companion.core.protocols import Proposal

log = logging.getLogger(__name__)

#: The cue fit for the shipped classifier, beside it in the ``models`` package.
CUE_FILE = "leaning-cue.npz"
#: A die scoring within this much under the cue's threshold is doubted too: a score that close to the line could
#: fall on either side on the Pi's arm64 CPU, and a doubt costs the table one confirmation, a trusted lean a round.
CUE_MARGIN = 0.02
#: The crops the cue reads a die in, as shares of its proposed side: the reader's first two cuts, and a wider one
#: that shows a neighbour or a side face whole (docs/READING.md, "The leaning cue").
CUE_SPANS = (1.0, 1.15, 1.5)


@dataclass(frozen=True)
class LeaningCue:
    """One logistic layer on the standardised embeddings of a die's crops (``CUE_SPANS``)."""

    weight: np.ndarray
    bias: float
    mean: np.ndarray
    scale: np.ndarray
    #: the face classifier whose embedding the cue was fit on
    classifier_id: str
    #: a die scoring at or above this (less ``CUE_MARGIN``) is doubted as leaning
    threshold: float

    @classmethod
    def load(cls, path: Path) -> "LeaningCue":
        """The cue in ``path``, or ``ValueError`` in words where the file is missing, damaged or inconsistent."""
        try:
            data = path.read_bytes()  # read whole first: numpy leaves the file open when the zip is damaged
            with np.load(io.BytesIO(data), allow_pickle=False) as f:
                parts = {k: f[k] for k in ("weight", "bias", "mean", "scale", "classifier_id", "threshold")}
        except FileNotFoundError:
            raise ValueError(f"the leaning cue {path.name} is missing") from None
        except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile) as exc:
            raise ValueError(f"the leaning cue {path.name} cannot be read ({type(exc).__name__})") from None
        weight, mean, scale = (np.asarray(parts[k], np.float32).ravel() for k in ("weight", "mean", "scale"))
        if not (len(weight) == len(mean) == len(scale) > 0) or not np.all(np.isfinite(weight)) or not np.all(scale > 0):
            raise ValueError(f"the leaning cue {path.name} is damaged (its parts do not fit together)")
        return cls(weight, float(parts["bias"]), mean, scale, str(parts["classifier_id"]), float(parts["threshold"]))

    def save(self, path: Path) -> None:
        """Write the cue to ``path`` (numpy's own format, no pickled objects)."""
        with open(path, "wb") as f:
            np.savez(f, weight=self.weight.astype(np.float32), bias=np.float32(self.bias), mean=self.mean.astype(np.float32),
                     scale=self.scale.astype(np.float32), classifier_id=np.str_(self.classifier_id), threshold=np.float32(self.threshold))

    @property
    def width(self) -> int:
        """The length of the features it reads: the embeddings of ``CUE_SPANS`` crops side by side."""
        return len(self.weight)

    def scores(self, features: np.ndarray) -> np.ndarray:
        """The probability that each row of ``features`` (N × ``width``) is a leaning die."""
        z = ((np.asarray(features, np.float32) - self.mean) / self.scale) @ self.weight + self.bias
        return 1.0 / (1.0 + np.exp(-np.clip(z, -60.0, 60.0)))

    def leaning(self, features: np.ndarray) -> list[bool]:
        """Per row, whether it is doubted as a leaning die (``threshold`` less ``CUE_MARGIN``).

        >>> cue = LeaningCue(np.array([1.0, 0.0], np.float32), 0.0, np.zeros(2, np.float32), np.ones(2, np.float32), "m", 0.9)
        >>> cue.leaning(np.array([[5.0, 0.0], [0.0, 3.0], [2.1, 0.0], [1.9, 0.0]]))  # scores .99, .5, .89, .87; the line .88
        [True, False, True, False]
        """
        return [bool(s >= self.threshold - CUE_MARGIN) for s in self.scores(features)]


def cue_features(embed: Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]], bgr: np.ndarray, proposals: list[Proposal],
                 known: list[np.ndarray | None] | None = None) -> np.ndarray:
    """What the cue reads of each proposed die (N × width): ``embed``'s embedding (a classifier's
    ``logits_and_embedding``) of its ``CUE_SPANS`` crops, side by side. The reader and the fit both take it from here,
    so the cue is fit on exactly what it reads. Every cut goes to the model in one batch: one session run a look
    (a crop's embedding does not depend on the batch it is in). ``known``, per proposal, the embeddings of its
    first two spans' cuts side by side where the reader's first look made them already (None: embed them here)."""
    from vision.pipeline.crop import crops

    if not proposals:
        return np.zeros((0, 0), np.float32)
    known = known if known is not None else [None] * len(proposals)
    fresh = [p for p, k in zip(proposals, known) if k is None]
    cut = [crops(bgr, fresh, span) for span in CUE_SPANS[:2]] + [crops(bgr, proposals, span) for span in CUE_SPANS[2:]]
    embedded = embed(np.concatenate(cut))[1]
    first_two, farther = embedded[:2 * len(fresh)], embedded[2 * len(fresh):]
    embedded_here = iter(np.concatenate(np.split(first_two, 2), axis=1))
    firsts = np.stack([next(embedded_here) if k is None else k for k in known])
    return np.concatenate([firsts, *np.split(farther, len(CUE_SPANS) - 2)], axis=1)


def shipped_cue_path() -> Path:
    """Where the shipped cue lies: beside the shipped models."""
    from importlib import resources

    return Path(str(resources.files("models"))) / CUE_FILE


def load_cue(base_model_id: str, embedding_width: int, path: Path | None = None) -> tuple[LeaningCue | None, str | None]:
    """The cue for a classifier whose embedding is that of ``base_model_id`` (``embedding_width`` long), and None;
    or None and why it is not used (missing, damaged, fit on another classifier). The reader then reads without it,
    with the outline check alone."""
    path = path or shipped_cue_path()
    try:
        cue = LeaningCue.load(path)
    except ValueError as exc:
        return None, str(exc)
    if cue.classifier_id != base_model_id:
        return None, f"the leaning cue was fit on the dice model {cue.classifier_id}, not {base_model_id}"
    if cue.width != embedding_width * len(CUE_SPANS):
        return None, "the leaning cue does not fit the dice model's embedding"
    return cue, None
