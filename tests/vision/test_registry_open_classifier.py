"""The face model is opened once, with its embedding (``vision.registry.open_classifier``): the faces, the leaning
cue and teaching all read one onnxruntime session; a model that has no embedding still reads faces, and says why
it cannot do the rest."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import vision.classifier
import vision.embedding
from companion.app.settings import Settings
from companion.core.errors import HardwareError
from vision.classifier import CROP, FaceClassifier, shipped_model_path
from vision.embedding import EmbeddingClassifier
from vision.reader import load_reader
from vision.registry import open_classifier


def _crops() -> np.ndarray:
    rng = np.random.default_rng(7)
    return rng.integers(0, 255, (6, CROP, CROP, 3), dtype=np.uint8)


def test_the_reader_opens_the_shipped_face_model_once(monkeypatch):
    opened: list[str] = []
    real_open = vision.classifier.open_session

    def counting(model, name, threads=1, fix="reinstall the companion"):  # the real session, counted
        opened.append(name)
        return real_open(model, name, threads, fix)

    monkeypatch.setattr(vision.classifier, "open_session", counting)
    monkeypatch.setattr(vision.embedding, "open_session", counting)
    reader = load_reader(Settings.defaults(), threads=1)
    assert isinstance(reader.classifier, EmbeddingClassifier)
    assert reader.leaning_cue is not None
    assert opened.count(shipped_model_path().name) == 1, opened


def test_opened_with_its_embedding_the_model_reads_the_same_faces():
    crops = _crops()
    plain = FaceClassifier().probabilities(crops)
    with_embedding = open_classifier().probabilities(crops)
    np.testing.assert_allclose(with_embedding, plain, rtol=1e-5, atol=1e-6)


def _model_without_a_fully_connected_end(tmp_path: Path) -> Path:
    onnx = pytest.importorskip("onnx", reason="onnx is in the test extra (make test installs it)")
    from onnx import TensorProto, helper, numpy_helper

    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", 3, CROP, CROP])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, ["n", 7])
    nodes = [helper.make_node("GlobalAveragePool", ["x"], ["p"]), helper.make_node("Flatten", ["p"], ["f"]),
             helper.make_node("Pad", ["f", "pads"], ["y"])]
    pads = numpy_helper.from_array(np.array([0, 0, 0, 4], np.int64), "pads")
    path = tmp_path / "padded.onnx"
    onnx.save(helper.make_model(helper.make_graph(nodes, "padded", [x], [y], [pads]),
                                opset_imports=[helper.make_opsetid("", 17)]), str(path))
    return path


def test_a_model_without_a_fully_connected_end_still_reads_faces_and_the_reader_says_why_no_cue(tmp_path):
    path = _model_without_a_fully_connected_end(tmp_path)
    clf = open_classifier(path)
    assert not isinstance(clf, EmbeddingClassifier)
    assert clf.probabilities(_crops()).shape == (6, 7)
    reader = load_reader(Settings.defaults().with_overrides(reader__model=str(path)), threads=1)
    assert reader.leaning_cue is None
    assert "not a fully connected one" in reader.leaning_problem


def test_the_reader_asks_a_model_for_its_embedding_once_and_keeps_why_it_has_none(tmp_path, monkeypatch):
    path = _model_without_a_fully_connected_end(tmp_path)
    asked: list[int] = []
    real_plan = vision.embedding.with_embedding_output

    def counting(raw):  # the real edit, counted
        asked.append(len(raw))
        return real_plan(raw)

    monkeypatch.setattr(vision.embedding, "with_embedding_output", counting)
    reader = load_reader(Settings.defaults().with_overrides(reader__model=str(path)), threads=1)
    assert len(asked) == 1
    assert reader.leaning_problem.endswith(f"{reader.classifier.embedding_problem}.")


def test_a_missing_model_file_is_still_refused_in_words(tmp_path):
    with pytest.raises(HardwareError) as missing:
        open_classifier(tmp_path / "gone.onnx")
    assert "gone.onnx" in missing.value.message
    assert "check reader.model in config.toml" in missing.value.message  # a file the setting names: no reinstall mends it


def test_a_damaged_model_file_is_still_refused_in_words(tmp_path):
    path = tmp_path / "damaged.onnx"
    path.write_bytes(b"\x08\x01this is not an onnx graph" * 10)
    with pytest.raises(HardwareError) as damaged:
        open_classifier(path)
    assert "damaged.onnx" in damaged.value.message and "cannot be loaded" in damaged.value.message
    assert "check reader.model in config.toml" in damaged.value.message and "reinstall the companion" not in damaged.value.message


def test_a_detector_file_the_settings_name_says_which_setting_and_a_shipped_one_says_reinstall(tmp_path):
    from vision.classifier import model_fix
    from vision.detector_learned import LearnedDetector, default_model_path

    with pytest.raises(HardwareError) as missing:
        LearnedDetector(tmp_path / "det.onnx")
    assert "det.onnx is missing; check reader.detector_model in config.toml" in missing.value.message
    (tmp_path / "det.onnx").write_text("not a graph")
    with pytest.raises(HardwareError) as damaged:
        LearnedDetector(tmp_path / "det.onnx")
    assert "check reader.detector_model in config.toml" in damaged.value.message
    assert model_fix(default_model_path(), "reader.detector_model") == "reinstall the companion"
    assert model_fix(shipped_model_path(), "reader.model") == "reinstall the companion"


def _taught_head_bytes(base_id: str) -> bytes:
    from vision.adapt import Head

    d = 8
    return Head(base_id, np.zeros(d, np.float32), np.ones(d, np.float32), np.zeros((d, 7), np.float32), np.zeros(7, np.float32), np.zeros(d + 1, np.float32)).to_bytes()


@pytest.mark.parametrize("damage", ["emptied", "cut short", "overwritten", "a member cut"])
def test_a_taught_model_whose_file_is_damaged_is_never_fatal_the_shipped_model_reads_and_says_why(tmp_path, damage):
    """docs/TEACHING.md: a taught model that cannot be loaded is never fatal. An ``.npz`` cut short by a card pulled
    mid-write raised zipfile's and numpy's own errors, which stopped ``read``, ``evaluate``, ``teach`` and ``serve``."""
    import io
    import json
    import zipfile

    from vision.adapt import Head
    from vision.registry import ModelRegistry

    registry = ModelRegistry(tmp_path)
    good = _taught_head_bytes(registry.base_id())
    assert Head.from_bytes(good).base_id == registry.base_id()  # the file as written reads
    if damage == "a member cut":  # the zip's directory whole, one array's data cut: zlib / zip's own errors
        buffer = io.BytesIO()
        with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as z:
            z.writestr("mean.npy", b"\x93NUMPY" + b"\x00" * 40)
        bad = buffer.getvalue()
    else:
        bad = {"emptied": b"", "cut short": good[:500], "overwritten": b"PK\x03\x04" + bytes(range(256)) * 4}[damage]
    (tmp_path / "models").mkdir()
    (tmp_path / "models" / "taught-abc.npz").write_bytes(bad)
    (tmp_path / "models" / "registry.json").write_text(json.dumps({"active": "taught-abc", "previous": registry.base_id(), "models": {"taught-abc": {"head": "taught-abc.npz"}}}))
    loaded = registry.load()
    assert isinstance(loaded.classifier, FaceClassifier) and not hasattr(loaded.classifier, "head")
    assert loaded.problem is not None and "The taught model taught-abc cannot be loaded" in loaded.problem and "the shipped model reads" in loaded.problem
    assert registry.status()["problem"] == loaded.problem  # `model status` says it too
    import subprocess
    import sys

    import cv2

    cv2.imwrite(str(tmp_path / "tray.png"), np.full((240, 320, 3), 128, np.uint8))
    done = subprocess.run([sys.executable, "-m", "companion.app.cli", "read", "--json", "--instance", str(tmp_path), str(tmp_path / "tray.png")],
                          cwd=Path(__file__).resolve().parents[2], capture_output=True, text=True)
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    assert "The taught model taught-abc cannot be loaded" in done.stderr
