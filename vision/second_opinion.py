"""A second opinion on the dice of a reading about to be ``ok``: another face classifier that must read the same face.

The shipped classifier's "not a die" class learned the finder's stray blobs; a glass bead's lit highlight is to it a
one's mark, as sure as any die (``python -m models.training.not_dice``). The second classifier is the shipped
recipe trained also on round things labelled not a die (``train --round-things``, ``models/MODEL_CARD.md``, "The
second opinion"): alone it reads a few real dice worse, so it does not read the faces, it only checks them. Where it
gives the face read under ``SECOND_OPINION_BAR`` at both of the die's first cuts (as proposed and ``WIDER_LOOK``
wider), the die is doubted with the reason ``second_opinion`` and the table checks it (RULES.md R14). It never
changes a face, and it is asked only where a reading would be acted on, so every other reading costs nothing.
It is on by default (``[reader] second_opinion = "off"`` turns it off): a reading about to be ok costs it a run,
about 1 ms on one core of the development machine (docs/READING.md, "The second opinion").

The file is ``models/second-opinion-<id>.onnx`` (its id: the first 12 hex digits of its sha256, as every model's).
Under a taught head, dice the head's gate is sure are the owner's are not asked: the owner taught the reader those
dice, which the second model never saw (``vision.adapt.Head.owners``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from companion.core.errors import HardwareError
from companion.core.protocols import Proposal
from vision.classifier import FaceClassifier
from vision.model_files import shipped
from vision.pipeline.classify import WIDER_LOOK
from vision.pipeline.crop import crops
from vision.pipeline.decide import CONFIDENCE_MARGIN

#: The reason code a die the second opinion doubts gives its reading (``companion.core.reading.REASON_CODES``).
SECOND_OPINION = "second_opinion"
#: A die is doubted where the second model gives its face less than this at every cut it reads.
SECOND_OPINION_BAR = 0.5
#: The cuts it reads of each die, in the die's proposed sides: the first look's two (``classify.first_look``), so a
#: die's own cuts are taken from its read where the first look made them (``FaceRead.first_crops``).
SPANS = (1.0, WIDER_LOOK)


def shipped_path() -> Path | None:
    """The ``second-opinion-*.onnx`` that ``models/shipped.json`` names, or None."""
    return shipped("second_opinion")


class SecondOpinion:
    """The second classifier and the rule it checks a reading's dice by.

    >>> opinion = SecondOpinion.load()[0]
    >>> opinion.model_id.startswith("second-opinion-")
    True
    >>> opinion.doubted(np.zeros((120, 120, 3), np.uint8), [Proposal(60, 60, 40, 0, 0.9)], [1])  # no die there
    [True]
    """

    def __init__(self, path: Path, threads: int = 1) -> None:
        self.path = path
        self.classifier = FaceClassifier(path, threads)
        #: ``second-opinion-`` and the first 12 hex digits of the file's sha256, as ``file_model_id`` reads them
        self.model_id = "second-opinion-" + self.classifier.model_id.removeprefix("dice-faces-")

    @classmethod
    def load(cls, path: Path | None = None, threads: int = 1) -> tuple["SecondOpinion | None", str | None]:
        """The second opinion from ``path`` (None: the shipped file) and None; or None and why there is none, in
        words for ``/api/health`` (missing, or a file onnxruntime cannot load)."""
        path = path if path is not None else shipped_path()
        if path is None or not path.is_file():
            return None, f"the second opinion's model ({path.name if path else 'models/second-opinion-*.onnx'}) is missing"
        try:
            return cls(path, threads), None
        except (HardwareError, OSError) as exc:
            return None, f"the second opinion's model {path.name} cannot be loaded ({getattr(exc, 'message', exc)})"

    def doubted(self, bgr: np.ndarray, proposals: list[Proposal], faces: list[int],
                cut: list[np.ndarray | None] | None = None) -> list[bool]:
        """Per proposed die, whether the second model reads its face (``faces``) under the bar at every cut in ``SPANS``
        (within ``CONFIDENCE_MARGIN`` above it counts as under: a score that close could fall either side on the Pi's
        CPU, and a doubt costs the table one confirmation). The dice's first cuts go to the model in one batch, and
        only the dice it read under the line are read at the next: nearly every die of a reading about to be ok is
        settled by its first cut (a crop's probabilities do not depend on the batch it is in). ``cut``, per die, its
        cuts at ``SPANS`` where they were made already (``FaceRead.first_crops``; None: cut here)."""
        line = SECOND_OPINION_BAR + CONFIDENCE_MARGIN
        cut = cut if cut is not None else [None] * len(proposals)
        doubted = [True] * len(proposals)
        todo = list(range(len(proposals)))
        for k, span in enumerate(SPANS):  # a cut that reads the face over the line settles its die: the next only for the rest
            if not todo:
                break
            p = self.classifier.probabilities(np.array([crops(bgr, [proposals[i]], span)[0] if cut[i] is None else cut[i][k] for i in todo]))
            for i, row in zip(todo, p):
                doubted[i] = bool(row[faces[i]] < line)
            todo = [i for i in todo if doubted[i]]
        return doubted


def asked(dice: list[Any], classifier: Any) -> list[bool]:
    """Per die (``vision.pipeline.reconcile.Die``), whether the second opinion is asked of it: always, but under a
    taught head where the head's gate is sure the die is the owner's (its first cut's embedding, as the first look
    kept it)."""
    head = getattr(classifier, "head", None)
    if head is None:
        return [True] * len(dice)
    out = []
    for d in dice:
        cuts = d.face.first_cuts
        out.append(cuts is None or not bool(head.owners(np.asarray(cuts)[None, : len(cuts) // 2])[0]))
    return out
