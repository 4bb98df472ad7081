"""A cue on the face classifier's embedding: one logistic layer that only ever adds a doubt to a die.

The face classifier's embedding (the vector its last layer reads, ``vision.embedding``) holds what a die's crop
looks like beyond the face it is read as. A cue reads it for one thing the classifier was never taught to say: a die
leaning on the cup (``vision.leaning_cue``), marks that are numbers or signs, not pips (``vision.number_cue``). A
die a cue flags makes its reading uncertain, so the table confirms it (RULES.md R14); a cue never makes a reading
sure. Each cue is fit on one classifier's embedding, and its file names that classifier, so a retrained model does
not read it.
"""

from __future__ import annotations

import io
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np

from companion.core.protocols import Proposal


@dataclass(frozen=True)
class LinearCue:
    """One logistic layer on the standardised features of a die (``width`` long)."""

    weight: np.ndarray
    bias: float
    mean: np.ndarray
    scale: np.ndarray
    #: the face classifier whose embedding the cue was fit on
    classifier_id: str
    #: a die scoring at or above this (less the cue's margin) is doubted
    threshold: float

    #: what the cue is called in its errors ("the leaning cue leaning-cue.npz is missing")
    KIND = "cue"

    @classmethod
    def load(cls, path: Path) -> "LinearCue":
        """The cue in ``path``, or ``ValueError`` in words where the file is missing, damaged or inconsistent."""
        try:
            data = path.read_bytes()  # read whole first: numpy leaves the file open when the zip is damaged
            with np.load(io.BytesIO(data), allow_pickle=False) as f:
                parts = {k: f[k] for k in ("weight", "bias", "mean", "scale", "classifier_id", "threshold")}
        except FileNotFoundError:
            raise ValueError(f"the {cls.KIND} {path.name} is missing") from None
        except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile) as exc:
            raise ValueError(f"the {cls.KIND} {path.name} cannot be read ({type(exc).__name__})") from None
        weight, mean, scale = (np.asarray(parts[k], np.float32).ravel() for k in ("weight", "mean", "scale"))
        if not (len(weight) == len(mean) == len(scale) > 0) or not np.all(np.isfinite(weight)) or not np.all(scale > 0):
            raise ValueError(f"the {cls.KIND} {path.name} is damaged (its parts do not fit together)")
        return cls(weight, float(parts["bias"]), mean, scale, str(parts["classifier_id"]), float(parts["threshold"]))

    def save(self, path: Path) -> None:
        """Write the cue to ``path`` (numpy's own format, no pickled objects)."""
        with open(path, "wb") as f:
            np.savez(f, weight=self.weight.astype(np.float32), bias=np.float32(self.bias), mean=self.mean.astype(np.float32),
                     scale=self.scale.astype(np.float32), classifier_id=np.str_(self.classifier_id), threshold=np.float32(self.threshold))

    @property
    def width(self) -> int:
        """The length of the features it reads."""
        return len(self.weight)

    def scores(self, features: np.ndarray) -> np.ndarray:
        """The probability that each row of ``features`` (N × ``width``) is what the cue looks for."""
        z = ((np.asarray(features, np.float32) - self.mean) / self.scale) @ self.weight + self.bias
        return 1.0 / (1.0 + np.exp(-np.clip(z, -60.0, 60.0)))

    def flags(self, features: np.ndarray, margin: float) -> list[bool]:
        """Per row, whether it scores at or above ``threshold`` less ``margin``: a score that close to the line could
        fall on either side on the Pi's arm64 CPU, and a doubt costs the table one confirmation.

        >>> cue = LinearCue(np.array([1.0, 0.0], np.float32), 0.0, np.zeros(2, np.float32), np.ones(2, np.float32), "m", 0.9)
        >>> cue.flags(np.array([[5.0, 0.0], [0.0, 3.0], [2.1, 0.0], [1.9, 0.0]]), 0.02)  # scores .99, .5, .89, .87
        [True, False, True, False]
        """
        return [bool(s >= self.threshold - margin) for s in self.scores(features)]


def embedded_at_spans(embed: Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]], bgr: np.ndarray, proposals: list[Proposal],
                      spans: tuple[float, ...], known: list[np.ndarray | None] | None = None) -> np.ndarray:
    """Each proposed die's embeddings (``embed``: a classifier's ``logits_and_embedding``) of its crops cut at
    ``spans`` of its side, side by side (N × len(spans)·width). Every cut goes to the model in one batch: one session
    run a look (a crop's embedding does not depend on the batch it is in). ``known``, per proposal, the embeddings of
    its first two spans' cuts side by side where the reader's first look made them already (None: embed them here).

    >>> embed = lambda crops: (None, crops.reshape(len(crops), -1)[:, :2].astype(np.float32))  # two pixel values
    >>> frame = np.zeros((100, 100, 3), np.uint8)
    >>> embedded_at_spans(embed, frame, [Proposal(50, 50, 30, 0, 0.9)], (1.0, 1.15, 1.5)).shape
    (1, 6)
    """
    from vision.pipeline.crop import crops

    if not proposals:
        return np.zeros((0, 0), np.float32)
    known = known if known is not None else [None] * len(proposals)
    fresh = [p for p, k in zip(proposals, known) if k is None]
    cut = [crops(bgr, fresh, span) for span in spans[:2]] + [crops(bgr, proposals, span) for span in spans[2:]]
    embedded = embed(np.concatenate(cut))[1]
    first_two, farther = embedded[:2 * len(fresh)], embedded[2 * len(fresh):]
    embedded_here = iter(np.concatenate(np.split(first_two, 2), axis=1))
    firsts = np.stack([next(embedded_here) if k is None else k for k in known])
    return np.concatenate([firsts, *np.split(farther, len(spans) - 2)], axis=1)


def load_for(cls: type[LinearCue], path: Path, base_model_id: str, width: int) -> tuple[LinearCue | None, str | None]:
    """The cue of kind ``cls`` in ``path`` for a classifier whose embedding is ``base_model_id``'s and reads ``width``
    features, and None; or None and why it is not used (missing, damaged, fit on another classifier)."""
    try:
        cue = cls.load(path)
    except ValueError as exc:
        return None, str(exc)
    if cue.classifier_id != base_model_id:
        return None, f"the {cls.KIND} was fit on the dice model {cue.classifier_id}, not {base_model_id}"
    if cue.width != width:
        return None, f"the {cls.KIND} does not fit the dice model's embedding"
    return cue, None
