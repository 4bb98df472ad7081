"""Fine-tuning starts from an exported model (``train --init``): the net it builds reads exactly as the file does.

These need PyTorch, the ``train`` extra (``make train`` installs it); without it they are skipped.
"""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="PyTorch is the optional train extra (make test-training installs it and runs these)")
pytest.importorskip("onnx", reason="onnx is in the test and train extras (make test-training installs both)")

from models.training.train import FaceNet, load_onnx, predict  # noqa: E402
from tests.vision.face_nets import exported_face_net  # noqa: E402
from vision.classifier import CROP, FaceClassifier  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::UserWarning")


def _exported(tmp_path, widths=(8, 8, 12, 12)):
    path = tmp_path / "net.onnx"
    exported_face_net(path, widths)
    return path


def test_a_net_started_from_a_file_reads_as_the_file_and_trains_on_from_there(tmp_path):
    path = _exported(tmp_path)
    x = np.random.default_rng(1).integers(0, 256, (64, CROP, CROP, 3), dtype=np.uint8)
    net = load_onnx(FaceNet((8, 8, 12, 12)), path, x)
    assert np.abs(predict(net, x) - FaceClassifier(path).probabilities(x)).max() < 1e-4
    # batch norm is live again: in training mode the batch's own statistics give about the same answers
    net.train()
    net.head[1].p = 0.0  # no dropout, to compare
    from vision.classifier import prepare

    with torch.no_grad():
        p = torch.softmax(net(torch.from_numpy(prepare(x))), 1).numpy()
    assert np.abs(p - predict(net, x)).max() < 0.05


def test_a_file_of_another_shape_is_refused(tmp_path):
    path = _exported(tmp_path)
    with pytest.raises(ValueError, match="widths"):
        load_onnx(FaceNet((16, 48, 96, 96)), path, np.zeros((4, CROP, CROP, 3), np.uint8))
