"""Teaching the reader an owner's dice on the device: a small head fitted with numpy, no PyTorch.

The shipped classifier gives, besides its seven logits, the embedding its last
layer reads (``vision/embedding.py``). A *head* is a linear correction of the
logits from that embedding: ``logits + standardise(embedding) @ W + b``, fitted
by full-batch Adam on the owner's crops (each also once zoomed, shifted and
turned a little, and all in their eight turns and mirrors) with an L2 penalty
that keeps it near zero, so where the owner's crops say nothing the shipped
model's answer stands. The "not a die" score is never
corrected (the owner's crops are all dice). The taught model is the shipped
file plus the head: its id is the shipped model's id, ``-t`` and the first 8
hex digits of the head's sha256.

Measuring decides adoption (``measure`` and ``compare``): a candidate is
adopted only when it reads more of the owner's held-back crops right (or as
many, and more of them for sure), and no fewer right and no more silently
wrong on every evaluation set.
"""

from __future__ import annotations

import csv
import hashlib
import io
import time
import zipfile
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from companion.core.dice import FACES
from companion.core.errors import ElephantsBluffError, HardwareError
from companion.core.files import atomic_write
from vision.classifier import CROP, TURNS, turn
from vision.embedding import EmbeddingClassifier

#: Fewest examples of each face (before turns) a head is fitted from.
MIN_PER_FACE = 4
#: The L2 penalty on the head's weights (per weight, on standardised embeddings).
L2 = 0.02
#: Full-batch Adam steps and step size.
STEPS = 200
LEARNING_RATE = 0.02
#: A look the shipped model reads at this probability or more is left as it reads it: the head only speaks where it is unsure.
KEEP_SURE = 0.97
#: The gate's score from which the correction starts, and at which it applies in full (the owner's own held-back
#: dice score 0.9 and more; other dice mostly far less).
GATE_FROM, GATE_FULL = 0.7, 0.92
#: A face the head overturns keeps the shipped model's face within this log-odds of it: read, but never sure
#: (on a look the shipped model never saw, a head fitted on a few dozen crops is sometimes confidently wrong).
OVERTURNED_ODDS = float(np.log(1.5))
#: Renderer seeds: the reference dice the gate learns are not the owner's (never the evaluation set's seed).
REFERENCE_SEED = 4242
#: Each owner's crop is also learned once more, moved: zoomed by up to this share either way (a detector's box is
#: an estimate: on touching dice it comes out a fifth too small or too big), shifted and turned a little.
JITTER_ZOOM, JITTER_SHIFT, JITTER_TURN = 0.2, 0.06, 12.0
JITTER_SEED = 29


class TeachError(ElephantsBluffError, ValueError):
    """Teaching refused: too few examples, a bad folder; the message says what to do."""

    code = "cannot_teach"


@dataclass(frozen=True)
class Head:
    """The fitted correction: standardisation (mean, scale) of the embedding, weights D×7 and bias 7."""

    base_id: str
    mean: np.ndarray
    scale: np.ndarray
    weights: np.ndarray
    bias: np.ndarray
    #: the gate: a logistic "one of the owner's dice" score on the standardised embedding (D weights, then the bias)
    gate: np.ndarray

    def to_bytes(self) -> bytes:
        out = io.BytesIO()
        np.savez(out, base_id=np.array(self.base_id), mean=self.mean, scale=self.scale, weights=self.weights, bias=self.bias, gate=self.gate)
        return out.getvalue()

    @classmethod
    def from_bytes(cls, data: bytes) -> "Head":
        """The head saved by ``to_bytes``; a ``ValueError`` that says so for a file cut short, emptied or overwritten
        (a card pulled mid-write): the registry then reads with the shipped model."""
        try:
            with np.load(io.BytesIO(data), allow_pickle=False) as z:
                head = cls(str(z["base_id"]), z["mean"].astype(np.float32), z["scale"].astype(np.float32), z["weights"].astype(np.float32), z["bias"].astype(np.float32), z["gate"].astype(np.float32))
        except (zipfile.BadZipFile, EOFError, zlib.error, KeyError, OSError) as exc:
            raise ValueError(f"the head's file is damaged ({exc.__class__.__name__}: {exc})") from exc
        d = head.mean.shape[0]
        arrays = (head.mean, head.scale, head.weights, head.bias, head.gate)
        if head.scale.shape != (d,) or head.weights.shape != (d, 7) or head.bias.shape != (7,) or head.gate.shape != (d + 1,) or not all(np.isfinite(a).all() for a in arrays):
            raise ValueError("the head's arrays do not fit together")
        return head

    @property
    def model_id(self) -> str:
        return f"{self.base_id}-t{hashlib.sha256(self.to_bytes()).hexdigest()[:8]}"

    def owners(self, embedding: np.ndarray) -> np.ndarray:
        """Per row of ``embedding``, whether the gate is sure it is one of the owner's dice (where the head's face
        stands even against a sure read of the shipped model): the number-dice cue leaves those alone, as the owner
        taught the reader them (``vision.number_cue``)."""
        x = (np.asarray(embedding, np.float32) - self.mean) / self.scale
        return _sigmoid(x @ self.gate[:-1] + self.gate[-1]) >= GATE_FULL

    def corrected(self, logits: np.ndarray, embedding: np.ndarray, overturn_unsure: bool = True) -> np.ndarray:
        """The logits with the head's correction where it applies: a look the shipped model is not sure of, of a die like the owner's.

        ``overturn_unsure``: a face the head overturns is left within ``OVERTURNED_ODDS`` of the shipped one (off
        for a caller that applies that rule itself, to the mean of several looks)."""
        x = (embedding - self.mean) / self.scale
        owner = np.clip((_sigmoid(x @ self.gate[:-1] + self.gate[-1]) - GATE_FROM) / (GATE_FULL - GATE_FROM), 0.0, 1.0)
        p = _softmax(logits)
        # the shipped model's sure reads stand, except on dice the gate is sure are the owner's: the head learned those
        # (sure but wrong is the worst case on a look the shipped model never saw)
        unsure = (p[:, 1:].max(axis=1) < KEEP_SURE) | (owner >= 1.0)
        weight = (owner * unsure)[:, None]
        out = logits + weight * (x @ self.weights + self.bias)
        return overturned_unsure(logits, out) if overturn_unsure else out


def overturned_unsure(shipped_logits: np.ndarray, taught_logits: np.ndarray) -> np.ndarray:
    """The taught logits, where their face differs from the shipped model's, with the shipped face raised to within
    ``OVERTURNED_ODDS`` of it: the head's face is read, never sure (the two models disagree)."""
    out = np.array(taught_logits, dtype=np.float32, copy=True)
    shipped, taught = shipped_logits[:, 1:].argmax(axis=1) + 1, out[:, 1:].argmax(axis=1) + 1
    rows = np.flatnonzero(shipped != taught)
    out[rows, shipped[rows]] = np.maximum(out[rows, shipped[rows]], out[rows, taught[rows]] - OVERTURNED_ODDS)
    return out


def _softmax(z: np.ndarray) -> np.ndarray:
    e = np.exp(z - z.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def _sigmoid(v: np.ndarray) -> np.ndarray:
    return 0.5 * (1.0 + np.tanh(0.5 * v))


class AdaptedClassifier(EmbeddingClassifier):
    """The shipped classifier with an owner's head: reads as a ``FaceClassifier`` does, under the taught model's id."""

    def __init__(self, head: Head, path: Path | None = None, threads: int = 1) -> None:
        self.head = head
        super().__init__(path, threads)
        if self.model_id != head.base_id:
            raise HardwareError(f"The taught model was made for the dice model {head.base_id}, not {self.model_id}; teach the dice again.", code="bad_model")
        if self.logits_and_embedding(np.zeros((1, CROP, CROP, 3), np.uint8))[1].shape[1] != head.mean.shape[0]:
            raise HardwareError("The taught model does not fit the dice model's embedding; teach the dice again.", code="bad_model")
        self.model_id = head.model_id

    def corrected(self, logits: np.ndarray, embedding: np.ndarray) -> np.ndarray:
        return self.head.corrected(logits, embedding)

    def probabilities_turned(self, crops: np.ndarray) -> np.ndarray:
        """The mean over the eight turns and mirrors, as the shipped classifier gives it, with the head's
        correction in every look; where the mean's face differs from the shipped model's mean face, the head
        overturned it: read, never sure (``overturned_unsure`` on the two means, not on each look)."""
        if len(crops) == 0:
            return np.zeros((0, 7), np.float32)
        looks = turned(np.asarray(crops, np.uint8))
        z, emb = self.logits_and_embedding(looks)
        n = len(crops)
        shipped = _softmax(z).reshape(n, TURNS, -1).mean(axis=1)
        taught = _softmax(self.head.corrected(z, emb, overturn_unsure=False)).reshape(n, TURNS, -1).mean(axis=1)
        return _softmax(overturned_unsure(np.log(shipped + 1e-9), np.log(taught + 1e-9)))


def turned(crops: np.ndarray) -> np.ndarray:
    """Each crop in its eight turns and mirrors, crop by crop."""
    return np.array([turn(c, k) for c in crops for k in range(TURNS)], np.uint8).reshape(-1, CROP, CROP, 3)


def jittered(crops: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Each crop once more, zoomed, shifted and turned a little about its centre (the border repeated)."""
    import cv2

    out = np.empty_like(crops)
    for i, crop in enumerate(crops):
        zoom = float(np.exp(rng.uniform(-JITTER_ZOOM, JITTER_ZOOM)))
        m = cv2.getRotationMatrix2D((CROP / 2, CROP / 2), float(rng.uniform(-JITTER_TURN, JITTER_TURN)), zoom)
        m[:, 2] += rng.uniform(-JITTER_SHIFT, JITTER_SHIFT, 2) * CROP
        out[i] = cv2.warpAffine(crop, m, (CROP, CROP), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
    return out


def missing_faces(labels: Sequence[int], minimum: int = MIN_PER_FACE) -> list[int]:
    """The faces with fewer than ``minimum`` examples."""
    counts = {v: 0 for v in FACES}
    for v in labels:
        counts[int(v)] = counts.get(int(v), 0) + 1
    return [v for v in FACES if counts[v] < minimum]


@dataclass
class Fit:
    head: Head
    seconds: float
    examples: int


def _adam(grad: Any, shapes: list[tuple[int, ...]], steps: int, lr: float) -> list[np.ndarray]:
    """Full-batch Adam from zeros: ``grad(params)`` returns the gradients."""
    params = [np.zeros(sh, np.float32) for sh in shapes]
    m = [np.zeros(sh, np.float32) for sh in shapes]
    v = [np.zeros(sh, np.float32) for sh in shapes]
    beta1, beta2 = 0.9, 0.999
    for t in range(1, steps + 1):
        for i, g in enumerate(grad(params)):
            m[i] = beta1 * m[i] + (1 - beta1) * g
            v[i] = beta2 * v[i] + (1 - beta2) * g * g
            params[i] -= lr * (m[i] / (1 - beta1 ** t)) / (np.sqrt(v[i] / (1 - beta2 ** t)) + 1e-8)
    return params


def _embed(base: EmbeddingClassifier, looks: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    z_parts, e_parts = [], []
    for i in range(0, len(looks), 256):
        z, e = base.logits_and_embedding(looks[i:i + 256])
        z_parts.append(z)
        e_parts.append(e)
    return np.concatenate(z_parts).astype(np.float32), np.concatenate(e_parts).astype(np.float32)


def fit_head(base: EmbeddingClassifier, crops: np.ndarray, seen: Sequence[int], *, reference: list[tuple[np.ndarray, int]] | None = None,
             l2: float = L2, steps: int = STEPS, lr: float = LEARNING_RATE) -> Fit:
    """Fit a head on ``crops`` (N×40×40×3 uint8) labelled with the face the camera saw (1-6).

    ``reference`` holds (crop, face seen) of other dice (by default the
    renderer's, drawn from ``REFERENCE_SEED``): the head rehearses them so it
    keeps them right, and the gate learns to tell the owner's dice from them,
    so that the correction stays off dice unlike the owner's.
    """
    labels = np.asarray(seen, int)
    short = missing_faces(labels)
    if short:
        raise TeachError(f"Too few examples to teach: at least {MIN_PER_FACE} of each face are needed, and these faces (as the camera sees them) have fewer: {', '.join(map(str, short))}.")
    started = time.process_time()
    if reference is None:
        reference = rendered_crops(240, REFERENCE_SEED)
    examples = len(labels)
    crops = np.asarray(crops, np.uint8)
    crops = np.concatenate([crops, jittered(crops, np.random.default_rng(JITTER_SEED))])
    labels = np.concatenate([labels, labels])
    z_own, emb = _embed(base, turned(crops))
    z_ref, emb_ref = _embed(base, turned(np.asarray([c for c, _ in reference], np.uint8)))
    mean = emb.mean(axis=0)
    scale = emb.std(axis=0) + 1e-3
    x_own, x_ref = (emb - mean) / scale, (emb_ref - mean) / scale
    n, d = x_own.shape
    # the head learns the owner's dice and rehearses the reference dice, each half of the loss, so it keeps those right
    x = np.vstack([x_own, x_ref])
    z0 = np.vstack([z_own, z_ref])
    y = np.concatenate([np.repeat(labels, TURNS), np.repeat([v for _, v in reference], TURNS)])
    onehot = np.zeros((len(y), 7), np.float32)
    onehot[np.arange(len(y)), y] = 1.0
    owner = np.concatenate([np.ones(n), np.zeros(len(x_ref))]).astype(np.float32)
    balance = np.where(owner == 1, 0.5 / n, 0.5 / max(1, len(x_ref))).astype(np.float32)
    mask = np.ones(7, np.float32)
    mask[0] = 0.0  # "not a die" is never corrected

    def grad(params: list[np.ndarray]) -> list[np.ndarray]:
        """The head (columns 0-6) and the gate (column 7) in one pass over the embeddings: one product each way."""
        w, b = params
        out = x @ w + b
        logits = z0 + out[:, :7]
        logits -= logits.max(axis=1, keepdims=True)
        p = np.exp(logits)
        p /= p.sum(axis=1, keepdims=True)
        g = np.empty_like(out)
        g[:, :7] = (p - onehot) * balance[:, None] * mask
        g[:, 7] = (_sigmoid(out[:, 7]) - owner) * balance
        return [x.T @ g + 2 * l2 * w * np.append(mask, 1.0).astype(np.float32), g.sum(axis=0)]

    w, b = _adam(grad, [(d, 8), (8,)], steps, lr)
    f32 = np.float32
    head = Head(base.model_id, mean.astype(f32), scale.astype(f32), w[:, :7].astype(f32), b[:7].astype(f32), np.append(w[:, 7], b[7]).astype(f32))
    return Fit(head, time.process_time() - started, examples)


# --- measuring -------------------------------------------------------------------------------


class CropReader:
    """What ``vision.evaluate.evaluate`` needs to read a folder of crops with one classifier; it also counts the sure reads."""

    def __init__(self, classifier: Any, min_confidence: float = 0.95) -> None:
        self.classifier = classifier
        self.model_id = classifier.model_id
        self.min_confidence = float(min_confidence)
        #: crops read at or above the confidence ``evaluate`` acts on (right or silently wrong)
        self.sure = 0

    def classify_crop(self, image: np.ndarray) -> tuple[int, float]:
        from vision.pipeline.decide import sure_confidence
        from vision.pipeline.classify import classify_crop

        face = classify_crop(self.classifier, image)
        self.sure += face.confidence >= sure_confidence(self.min_confidence)
        return face.seen, face.confidence


def score(report: dict[str, Any], sure: int | None = None) -> dict[str, Any]:
    """The figures of an ``evaluate`` report that adoption compares; ``sure_right``: read right without asking the table."""
    out = {"dice": report["dice"], "right": report["right"], "accuracy": report["accuracy"], "silently_wrong": report["silently_wrong"]}
    if sure is not None:
        out["sure_right"] = sure - report["silently_wrong"]
    return out


def measure(classifier: Any, sets: dict[str, Path], min_confidence: float = 0.95) -> dict[str, dict[str, Any]]:
    """``evaluate`` on each crops folder of ``sets`` (name -> folder), read by ``classifier``."""
    from vision.evaluate import evaluate

    out = {}
    for name, folder in sets.items():
        reader = CropReader(classifier, min_confidence)
        out[name] = score(evaluate(folder, reader, crops=True), reader.sure)
    return out


@dataclass
class Verdict:
    adopt: bool
    why: str
    before: dict[str, dict[str, Any]] = field(default_factory=dict)
    after: dict[str, dict[str, Any]] = field(default_factory=dict)


def compare(before: dict[str, dict[str, Any]], after: dict[str, dict[str, Any]], owner: str = "owner") -> Verdict:
    """Adopt only when better on ``owner`` and no worse (right, silently wrong) on every other set.

    Better: more of the owner's dice read right; or as many, and more of them read right for sure (a look the
    shipped model reads right but unsure makes the table confirm every Bluff: teaching it spares them that).
    """
    b, a = before[owner], after[owner]
    surer = a["right"] == b["right"] and a.get("sure_right", 0) > b.get("sure_right", 0)
    if a["right"] < b["right"] or (a["right"] == b["right"] and not surer):
        return Verdict(False, f"not better on your own dice ({b['right']} → {a['right']} of {a['dice']} right"
                              f"{', ' + str(b['sure_right']) + ' → ' + str(a['sure_right']) + ' of them sure' if 'sure_right' in a else ''})", before, after)
    if a["silently_wrong"] > b["silently_wrong"]:
        return Verdict(False, f"more dice read wrong without a doubt on your own dice ({b['silently_wrong']} → {a['silently_wrong']})", before, after)
    for name in before:
        if name == owner:
            continue
        if after[name]["right"] < before[name]["right"]:
            return Verdict(False, f"worse on {name} ({before[name]['right']} → {after[name]['right']} of {after[name]['dice']} right)", before, after)
        if after[name]["silently_wrong"] > before[name]["silently_wrong"]:
            return Verdict(False, f"more dice read wrong without a doubt on {name} ({before[name]['silently_wrong']} → {after[name]['silently_wrong']})", before, after)
    sure = f", {b['sure_right']} → {a['sure_right']} of them sure" if surer else ""
    return Verdict(True, f"better on your own dice ({b['right']} → {a['right']} of {a['dice']} right{sure}) and no worse elsewhere", before, after)


# --- the rendered evaluation set --------------------------------------------------------------

#: Bump when the rendered set's recipe changes, so a cached copy is made again.
RENDERED_VERSION = 1


def rendered_crops(count: int, seed: int) -> list[tuple[np.ndarray, int]]:
    """``count`` crops of rendered dice (the game's and other looks) and the face each shows the camera."""
    from vision.classifier import cut_crop
    from vision.simtable import DieStyle, render_table

    rng = np.random.default_rng(seed)
    out: list[tuple[np.ndarray, int]] = []
    while len(out) < count:
        seen = [int(v) for v in rng.integers(1, 7, 3)]
        styles = [DieStyle.game(rng) if rng.random() < 0.5 else DieStyle.random(rng) for _ in seen]
        frame, placed = render_table(seen, rng, width=480, height=360, styles=styles, touching=0.0)
        out += [(cut_crop(frame, die.cx, die.cy, die.side, die.angle), die.seen) for die in placed]
    return out[:count]


def write_rendered_set(folder: Path, dice: int = 240, seed: int = 90210) -> Path:
    """The renderer's own dice, as crops with a ``crops.csv``, written once per recipe (``RENDERED_VERSION``).

    Made on the device from the renderer shipped in the wheel, so a taught
    model is always checked on dice it was not taught, even with no other set.
    Made again when any crop it lists is gone: a set read as no dice would let
    any model pass as "no worse" on it.
    """
    import cv2

    folder = Path(folder)
    stamp = folder / "VERSION"
    recipe = f"{RENDERED_VERSION} {dice} {seed}"
    if stamp.is_file() and stamp.read_text(encoding="utf-8").strip() == recipe and (folder / "crops.csv").is_file():
        listed = read_crops_csv(folder)
        if len(listed) == dice and all(path.is_file() for path, _, _ in listed):
            return folder
    try:
        (folder / "crops").mkdir(parents=True, exist_ok=True)
        rows = ["file,value,split"]
        for n, (crop, seen) in enumerate(rendered_crops(dice, seed)):
            name = f"crops/r{n:04d}.png"
            atomic_write(folder / name, cv2.imencode(".png", crop)[1].tobytes())
            rows.append(f"{name},{seen},eval")
        atomic_write(folder / "crops.csv", "\n".join(rows) + "\n")
        atomic_write(stamp, recipe + "\n")
    except OSError as exc:  # a file where a folder belongs, a full or read-only card
        raise TeachError(f"The renderer's dice that a taught model is checked on cannot be written in {folder} "
                         f"({exc.strerror or exc}): move away what is in the way, or free the disk, and teach again.") from None
    return folder


def read_crops_csv(root: Path) -> list[tuple[Path, int, str]]:
    """(image path, face, split) of each row of ``root/crops.csv``; split '' when none."""
    out = []
    with open(root / "crops.csv", newline="", encoding="utf-8") as f:
        for row in csv.DictReader(f):
            try:
                out.append((root / row["file"].strip(), int(row["value"]), (row.get("split") or "").strip()))
            except (KeyError, TypeError, ValueError, AttributeError):
                continue
    return out
