"""Dice printed with numbers or signs, told by how they look: a linear cue on the face classifier's embedding.

The face classifier was taught pip dice. A die printed with its number (a "1", a "5") or a sign shows it one dark
shape in the middle of the face, which the classifier reads surely as a one, or a three as a five; such a silent
wrong face is the worst thing the reader can do (RULES.md R14). Teaching the classifier number dice cost the other
dice by more than a retrain's noise (``docs/classifier-log.md``), so a cue beside it reads the classifier's
embedding of the die's crop (one logistic layer, ``models/number-cue.npz``, fit by ``python -m
models.training.number_cue``) and doubts a die whose marks look like numbers or signs, whatever face it is read as.
The reading then goes to the table with the reason ``marks``; the cue never makes a reading sure.

The cue was fit on crops cut at a die's side, and reads each die at ``CUE_SPANS`` of its proposed side: the detector
may box a big digit alone, as it boxes a pip die's mark, and only a wider cut shows the die around it. The first
two are the cuts the reader's first look made (``classify.first_look``: their embeddings are there already). It belongs to the shipped classifier's embedding; under a taught
head (``vision.adapt``) it leaves alone the dice the head's gate is sure are the owner's: a table that taught its
reader its own number dice must not have them doubted for ever, and a guest's still are.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from vision.linear_cue import LinearCue, load_for

#: The cue fit for the shipped classifier, beside it in the ``models`` package.
CUE_FILE = "number-cue.npz"
#: A die scoring within this much under the cue's threshold is doubted too: a score that close to the line could fall
#: on either side on the Pi's arm64 CPU, and a doubt costs the table one confirmation, a sure wrong face a round.
CUE_MARGIN = 0.05
#: The shares of a die's proposed side its crops are cut at; a die is doubted where any of them scores over the line
#: less ``CUE_MARGIN`` (docs/READING.md, "Number dice", has what each cut catches and costs).
CUE_SPANS = (1.0, 1.15, 1.3)
#: The reason code a die doubted by the cue gives its reading (``companion.core.reading.REASON_CODES``).
DOUBT = "marks"


class NumberCue(LinearCue):
    """One logistic layer on the standardised embedding of a die's crop cut at its proposed size."""

    KIND = "number-dice cue"

    def numbers(self, embeddings: np.ndarray) -> list[bool]:
        """Per row of ``embeddings`` (N × width), whether that die is doubted as showing numbers or signs.

        >>> cue = NumberCue(np.array([1.0], np.float32), 0.0, np.zeros(1, np.float32), np.ones(1, np.float32), "m", 0.7)
        >>> cue.numbers(np.array([[3.0], [0.7], [0.5]]))  # scores .95, .67 (within the margin), .62
        [True, True, False]
        """
        return self.flags(embeddings, CUE_MARGIN)


def shipped_cue_path() -> Path:
    """Where the shipped cue lies: beside the shipped models."""
    from importlib import resources

    return Path(str(resources.files("models"))) / CUE_FILE


def load_cue(base_model_id: str, embedding_width: int, path: Path | None = None) -> tuple[NumberCue | None, str | None]:
    """The cue for a classifier whose embedding is that of ``base_model_id`` (``embedding_width`` long), and None;
    or None and why it is not used (missing, damaged, fit on another classifier)."""
    cue, why = load_for(NumberCue, path or shipped_cue_path(), base_model_id, embedding_width)
    return cue, why  # type: ignore[return-value]
