"""A file that loads in onnxruntime but is not a face model is refused at load, in words (``FaceClassifier.warm_up``):
the detector's file named as the face model, or a net that gives other answers, would otherwise fail at the first
Bluff with onnxruntime's own error."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from companion.core.errors import HardwareError
from vision.classifier import CROP, FaceClassifier
from vision.detector_learned import default_model_path
from vision.registry import open_classifier


def _net_with_answers(tmp_path: Path, answers: int) -> Path:
    """A tiny net that takes the face model's crops and gives ``answers`` numbers a crop (7 for a face model)."""
    onnx = pytest.importorskip("onnx", reason="onnx is in the test extra (make test installs it)")
    from onnx import TensorProto, helper, numpy_helper

    x = helper.make_tensor_value_info("crops", TensorProto.FLOAT, ["n", 3, CROP, CROP])
    y = helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["n", answers])
    nodes = [helper.make_node("GlobalAveragePool", ["crops"], ["p"]), helper.make_node("Flatten", ["p"], ["f"]),
             helper.make_node("Pad", ["f", "pads"], ["logits"])]
    pads = numpy_helper.from_array(np.array([0, 0, 0, answers - 3], np.int64), "pads")
    path = tmp_path / f"answers-{answers}.onnx"
    onnx.save(helper.make_model(helper.make_graph(nodes, "padded", [x], [y], [pads]),
                                opset_imports=[helper.make_opsetid("", 17)]), str(path))
    return path


@pytest.mark.parametrize("opener", [FaceClassifier, open_classifier], ids=["plain", "as the reader opens it"])
def test_the_detectors_file_named_as_the_face_model_is_refused_in_words(opener):
    with pytest.raises(HardwareError) as refused:
        opener(default_model_path())
    assert refused.value.code == "bad_model"
    assert default_model_path().name in refused.value.message
    assert f"does not read {CROP}×{CROP} colour pictures of a die" in refused.value.message


def test_a_net_with_six_answers_a_crop_is_refused_in_words(tmp_path):
    with pytest.raises(HardwareError) as refused:
        open_classifier(_net_with_answers(tmp_path, 6))
    assert refused.value.code == "bad_model"
    assert "gives 6 answers a die where a face model gives 7" in refused.value.message


def test_a_net_with_seven_answers_a_crop_loads_and_reads(tmp_path):
    """The check's other side: the same tiny net with the face model's 7 answers is taken."""
    clf = open_classifier(_net_with_answers(tmp_path, 7))
    assert clf.probabilities(np.zeros((2, CROP, CROP, 3), np.uint8)).shape == (2, 7)
