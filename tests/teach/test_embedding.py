"""The classifier's embedding, added as a second output by editing the ONNX file's bytes (no onnx package at run time)."""

from __future__ import annotations

import numpy as np
import pytest

from companion.core.errors import HardwareError
from vision.classifier import FaceClassifier, shipped_model_path
from vision.embedding import EmbeddingClassifier, find_embedding, with_embedding_output


def _crops(n: int = 6) -> np.ndarray:
    return np.random.default_rng(0).integers(0, 255, (n, 40, 40, 3), dtype=np.uint8)


def test_the_edited_model_gives_the_same_logits_and_the_last_layers_input():
    onnx = pytest.importorskip("onnx")
    import onnxruntime as ort

    from vision.classifier import prepare

    raw = shipped_model_path().read_bytes()
    edited, plan = with_embedding_output(raw)
    model = onnx.load_from_string(edited)
    onnx.checker.check_model(model)
    last = [n for n in model.graph.node if plan.logits in n.output][0]
    assert plan.embedding == last.input[0] and [o.name for o in model.graph.output] == [plan.logits, plan.embedding]

    # the same tensor exposed by the onnx package's own edit
    reference = onnx.load_from_string(raw)
    reference.graph.output.append(onnx.helper.make_tensor_value_info(plan.embedding, onnx.TensorProto.FLOAT, None))
    session = ort.InferenceSession(reference.SerializeToString(), providers=["CPUExecutionProvider"])
    want_logits, want_emb = session.run([plan.logits, plan.embedding], {session.get_inputs()[0].name: prepare(_crops())})

    clf = EmbeddingClassifier()
    logits, emb = clf.logits_and_embedding(_crops())
    np.testing.assert_allclose(logits, want_logits, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(emb, want_emb.reshape(len(emb), -1), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(clf.probabilities(_crops()), FaceClassifier().probabilities(_crops()), atol=1e-6)
    assert clf.model_id == FaceClassifier().model_id


@pytest.mark.parametrize("data", [b"", b"\x08\x07", b"\x3a\xff\xff\xff\xff\x0f", bytes(range(256))])
def test_a_file_that_is_not_a_model_is_refused_in_words(data):
    with pytest.raises(HardwareError) as err:
        find_embedding(data)
    assert "cannot be taught" in err.value.message
