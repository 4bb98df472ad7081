"""The face classifier's embedding: the vector its last layer turns into the seven class scores.

Adapting the reader to an owner's dice (``vision/adapt.py``) fits a small head
on this vector, so the classifier must give it out beside its logits. The
shipped ONNX file gives only the logits; ``with_embedding_output`` adds the last
layer's input as a second graph output, in memory, from whatever
``models/dice-faces-*.onnx`` is shipped (so a retrained classifier needs no
rebuilt file). It edits the file's protobuf directly, a few fields of the wire
format, so neither the ``onnx`` package nor PyTorch is needed on the Pi: only
onnxruntime, which then runs the edited model from bytes.

The wire format's pieces used here (onnx.proto): ModelProto.graph = 7;
GraphProto.node = 1, .output = 12; NodeProto.input = 1, .output = 2,
.op_type = 4; ValueInfoProto.name = 1, .type = 2; TypeProto.tensor_type = 1;
TypeProto.Tensor.elem_type = 1 (FLOAT = 1), .shape = 2; TensorShapeProto.dim = 1;
Dimension.dim_param = 2.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from companion.core.errors import HardwareError
from vision.classifier import CROP, FaceClassifier, model_fix, open_session, prepare
from vision.model_files import read_whole

#: The last layer's kinds whose first input is the embedding.
LAST_LAYERS = ("Gemm", "MatMul")


def _varint(buf: bytes, i: int) -> tuple[int, int]:
    shift = value = 0
    while True:
        if i >= len(buf):
            raise ValueError("truncated varint")
        b = buf[i]
        i += 1
        value |= (b & 0x7F) << shift
        if not b & 0x80:
            return value, i
        shift += 7
        if shift > 63:
            raise ValueError("varint too long")


def _put_varint(value: int) -> bytes:
    out = bytearray()
    while True:
        b = value & 0x7F
        value >>= 7
        if value:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def _fields(buf: bytes) -> list[tuple[int, int, int, int, int]]:
    """Every field of one message: (number, wire type, start of the field, start of its payload, end)."""
    out = []
    i = 0
    while i < len(buf):
        start = i
        key, i = _varint(buf, i)
        number, wire = key >> 3, key & 7
        if wire == 0:
            _, i = _varint(buf, i)
            out.append((number, wire, start, start, i))
            continue
        if wire == 1:
            payload, i = i, i + 8
        elif wire == 2:
            length, i = _varint(buf, i)
            payload, i = i, i + length
        elif wire == 5:
            payload, i = i, i + 4
        else:
            raise ValueError(f"wire type {wire} not supported")
        if i > len(buf):
            raise ValueError("truncated field")
        out.append((number, wire, start, payload, i))
    return out


def _strings(buf: bytes, number: int) -> list[str]:
    return [buf[p:e].decode("utf-8") for n, w, _, p, e in _fields(buf) if n == number and w == 2]


def _length_field(number: int, payload: bytes) -> bytes:
    return _put_varint(number << 3 | 2) + _put_varint(len(payload)) + payload


@dataclass(frozen=True)
class EmbeddingPlan:
    """Which graph output holds the logits and which tensor feeds the last layer (the embedding)."""

    logits: str
    embedding: str


def find_embedding(model: bytes) -> EmbeddingPlan:
    """The logits output and the embedding tensor of an ONNX classifier (its last Gemm or MatMul's input)."""
    return _find(model)[0]


def _find(model: bytes) -> tuple[EmbeddingPlan, str]:
    try:
        graphs = [(p, e) for n, w, _, p, e in _fields(model) if n == 7 and w == 2]
        if len(graphs) != 1:
            raise ValueError("no graph")
        graph = model[graphs[0][0]:graphs[0][1]]
        fields = _fields(graph)
        outputs = [_strings(graph[p:e], 1)[0] for n, w, _, p, e in fields if n == 12 and w == 2]
        nodes = [graph[p:e] for n, w, _, p, e in fields if n == 1 and w == 2]
    except (ValueError, IndexError, UnicodeDecodeError):
        raise HardwareError("The dice model file is not a readable ONNX model, so it cannot be taught.", code="bad_model") from None
    if not outputs:
        raise HardwareError("The dice model has no output, so it cannot be taught.", code="bad_model")
    logits = outputs[0]
    for node in nodes:
        if logits in _strings(node, 2):
            kind = (_strings(node, 4) or [""])[0]
            inputs = _strings(node, 1)
            if kind in LAST_LAYERS and inputs:
                return EmbeddingPlan(logits, inputs[0]), kind
            raise HardwareError(f"The dice model ends in a {kind or 'unnamed'} layer, not a fully connected one, so it cannot be taught.", code="bad_model")
    raise HardwareError("The dice model's output is made by no layer, so it cannot be taught.", code="bad_model")


def with_embedding_output(model: bytes) -> tuple[bytes, EmbeddingPlan]:
    """The same model with the embedding as a second graph output (float, shape left to onnxruntime)."""
    plan, kind = _find(model)
    (_, _, start, payload, end), = [f for f in _fields(model) if f[0] == 7 and f[1] == 2]
    graph = model[payload:end]
    tensor = _put_varint(1 << 3 | 0) + _put_varint(1)  # TypeProto.Tensor.elem_type = FLOAT
    if kind == "Gemm":  # a Gemm's input is a matrix: shape [n, d], both named, not fixed (TensorShapeProto.dim.dim_param)
        tensor += _length_field(2, _length_field(1, _length_field(2, b"n")) + _length_field(1, _length_field(2, b"d")))
    type_proto = _length_field(1, tensor)  # TypeProto.tensor_type
    value_info = _length_field(1, plan.embedding.encode("utf-8")) + _length_field(2, type_proto)
    new_graph = graph + _length_field(12, value_info)
    return model[:start] + _length_field(7, new_graph) + model[end:], plan


class EmbeddingClassifier(FaceClassifier):
    """The face classifier that also gives each crop's embedding (one onnxruntime run for both).

    It reads exactly as ``FaceClassifier`` does (same logits, same id), so a
    reader may hold it in its place.

    >>> clf = EmbeddingClassifier()
    >>> logits, emb = clf.logits_and_embedding(np.zeros((2, CROP, CROP, 3), np.uint8))
    >>> logits.shape, emb.shape[0], emb.ndim
    ((2, 7), 2, 2)
    """

    def __init__(self, path: Path | None = None, threads: int = 1) -> None:
        from vision.classifier import shipped_model_path

        self.path = Path(path) if path else shipped_model_path()
        fix = model_fix(self.path, "reader.model")
        raw, found = read_whole(self.path, "dice model", fix)
        self.model_id = "dice-faces-" + found
        edited, self.plan = with_embedding_output(raw)
        self._session = open_session(edited, self.path.name, threads, fix)
        self._input = self._session.get_inputs()[0].name
        self._outputs = [self.plan.logits, self.plan.embedding]
        self.warm_up()

    def logits_and_embedding(self, crops: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """N×7 logits and N×D embeddings for N uint8 BGR crops of CROP×CROP."""
        if len(crops) == 0:
            return np.zeros((0, 7), np.float32), np.zeros((0, 0), np.float32)
        logits, emb = self._session.run(self._outputs, {self._input: prepare(crops)})
        return logits, emb.reshape(len(crops), -1)

    def logits(self, crops: np.ndarray) -> np.ndarray:
        """N×7 logits, the head's correction included in a subclass."""
        return self.corrected(*self.logits_and_embedding(crops))

    def corrected(self, logits: np.ndarray, embedding: np.ndarray) -> np.ndarray:
        """The logits this classifier reads from the network's ``logits`` and ``embedding`` (here: as they are)."""
        return logits

    def probabilities_and_embedding(self, crops: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``probabilities`` and the crops' embeddings from one network run (crops of CROP×CROP): the first look
        keeps the embeddings, so the leaning cue does not embed the same cuts again (``vision.leaning_cue``)."""
        z, emb = self.logits_and_embedding(crops)
        if len(crops) == 0:
            return np.zeros((0, 7), np.float32), emb
        z = self.corrected(z, emb)
        e = np.exp(z - z.max(axis=1, keepdims=True))
        return e / e.sum(axis=1, keepdims=True), emb

    def probabilities(self, crops: np.ndarray) -> np.ndarray:
        if len(crops) == 0:
            return np.zeros((0, 7), np.float32)
        if crops.shape[1:] != (CROP, CROP, 3):
            import cv2

            crops = np.array([cv2.resize(np.ascontiguousarray(c), (CROP, CROP), interpolation=cv2.INTER_AREA) for c in crops], np.uint8)
        return self.probabilities_and_embedding(crops)[0]
