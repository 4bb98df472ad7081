"""Face models from different seeds joined into one file (``models.training.ensemble``): the runtime reads the
members' mean probability from it, with no change at run time."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

onnx = pytest.importorskip("onnx", reason="onnx is in the test extra (make test installs it)")

from models.training.ensemble import join, main, write  # noqa: E402
from vision.classifier import CROP, FaceClassifier, file_model_id, shipped_model_path  # noqa: E402

BASE = Path(__file__).resolve().parents[2] / "models" / "training" / "base" / "dice-faces-5bbb6f704193.onnx"


def _members() -> list[Path]:
    """Two real face models that read differently: the shipped one and the base it was fine-tuned from."""
    return [shipped_model_path(), BASE]


def _crops(n: int = 12) -> np.ndarray:
    rng = np.random.default_rng(4)
    crops = rng.integers(0, 255, (n, CROP, CROP, 3), dtype=np.uint8)
    crops[: n // 2] = 200  # plain light squares with dark marks: die-like crops as well as noise
    for k, c in enumerate(crops[: n // 2]):
        for j in range(k % 6 + 1):
            c[8 + 5 * j: 12 + 5 * j, 8 + 4 * j: 12 + 4 * j] = 30
    return crops


def _softmax(z: np.ndarray) -> np.ndarray:
    e = np.exp(z - z.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def test_the_joined_model_reads_the_mean_of_its_members_logits(tmp_path):
    path = write(_members(), tmp_path)
    crops = _crops()
    members = [FaceClassifier(p).probabilities(crops) for p in _members()]
    joined = FaceClassifier(path).probabilities(crops)
    assert np.abs(members[0] - members[1]).max() > 0.05  # the members differ, so the mean is a real test
    # a member's log-probabilities are its logits less a constant per crop, which the softmax takes away
    np.testing.assert_allclose(joined, _softmax((np.log(members[0]) + np.log(members[1])) / 2), atol=1e-5)


def test_where_the_members_disagree_the_joined_model_is_less_sure_than_the_surer_one(tmp_path):
    crops = _crops()
    members = [FaceClassifier(p).probabilities(crops) for p in _members()]
    joined = FaceClassifier(write(_members(), tmp_path)).probabilities(crops)
    disagree = members[0].argmax(1) != members[1].argmax(1)
    assert disagree.any()
    surer = np.maximum(members[0].max(1), members[1].max(1))
    assert (joined.max(1)[disagree] < surer[disagree]).all()


def test_the_joined_model_can_still_be_taught_its_embedding_is_every_members(tmp_path):
    from vision.embedding import EmbeddingClassifier, find_embedding

    path = write(_members(), tmp_path)
    plan = find_embedding(path.read_bytes())
    assert plan.logits == "logits" and plan.embedding == "embedding"
    taught = EmbeddingClassifier(path)
    crops = _crops()
    _, emb = taught.logits_and_embedding(crops)
    widths = [EmbeddingClassifier(p).logits_and_embedding(crops)[1].shape[1] for p in _members()]
    assert emb.shape == (len(crops), sum(widths))
    np.testing.assert_allclose(taught.probabilities(crops), FaceClassifier(path).probabilities(crops), atol=1e-6)


def test_the_joined_file_is_named_by_its_bytes_like_every_face_model(tmp_path):
    path = write(_members(), tmp_path)
    assert path.name == f"{file_model_id(path)}.onnx"
    assert [p.name for p in tmp_path.iterdir()] == [path.name]  # no temporary file left behind


def test_joining_is_repeatable_to_the_byte(tmp_path):
    assert join(_members()) == join(_members())


def test_one_model_alone_is_refused_in_words():
    with pytest.raises(ValueError, match="at least two face models"):
        join([BASE])


def test_a_file_that_is_not_a_model_is_refused_in_words(tmp_path):
    bad = tmp_path / "notes.onnx"
    bad.write_bytes(b"these are not the weights you are looking for")
    with pytest.raises(ValueError, match="is not an ONNX model"):
        join([BASE, bad])


def _tiny_model(path: Path, last: str, classes: int) -> Path:
    """A crops-to-scores model: pooled colours, then ``last`` ("Gemm": a fully connected layer; "Pad": none)."""
    from onnx import TensorProto, helper, numpy_helper

    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", 3, CROP, CROP])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, ["n", classes])
    nodes = [helper.make_node("GlobalAveragePool", ["x"], ["p"]), helper.make_node("Flatten", ["p"], ["f"])]
    if last == "Gemm":
        nodes.append(helper.make_node("Gemm", ["f", "w", "b"], ["y"], transB=1))
        inits = [numpy_helper.from_array(np.ones((classes, 3), np.float32), "w"),
                 numpy_helper.from_array(np.zeros(classes, np.float32), "b")]
    else:
        nodes.append(helper.make_node("Pad", ["f", "pads"], ["y"]))
        inits = [numpy_helper.from_array(np.array([0, 0, 0, classes - 3], np.int64), "pads")]
    onnx.save(helper.make_model(helper.make_graph(nodes, "tiny", [x], [y], inits), opset_imports=[helper.make_opsetid("", 17)]), str(path))
    return path


def test_a_model_with_other_classes_than_the_faces_is_refused(tmp_path):
    with pytest.raises(ValueError, match="gives 5 classes, not 7"):
        join([BASE, _tiny_model(tmp_path / "five.onnx", "Gemm", 5)])


def test_a_model_not_ending_in_a_fully_connected_layer_is_refused(tmp_path):
    with pytest.raises(ValueError, match="does not end in a fully connected layer"):
        join([BASE, _tiny_model(tmp_path / "padded.onnx", "Pad", 7)])


def test_the_command_names_a_missing_file_and_writes_nothing(tmp_path, capsys):
    with pytest.raises(SystemExit):
        main([str(BASE), str(tmp_path / "gone.onnx"), "--out", str(tmp_path / "out")])
    assert "no such model file" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


def test_the_command_refuses_a_bad_member_in_words(tmp_path, capsys):
    bad = tmp_path / "bad.onnx"
    bad.write_bytes(b"\x00" * 10)
    assert main([str(BASE), str(bad), "--out", str(tmp_path / "out")]) == 2
    assert "is not an ONNX model" in capsys.readouterr().err


def test_the_command_writes_the_joined_model(tmp_path, capsys):
    assert main([*map(str, _members()), "--out", str(tmp_path)]) == 0
    written = list(tmp_path.glob("dice-faces-*.onnx"))
    assert len(written) == 1 and "from 2 models" in capsys.readouterr().out
