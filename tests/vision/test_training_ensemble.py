"""Several nets shipped as one file (``train --members N``): the runtime reads their mean probability.

These need PyTorch, the ``train`` extra (``make train`` installs it); the runtime
never imports it, so without it they are skipped.
"""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="PyTorch is the optional train extra (make test-training installs it and runs these)")
pytest.importorskip("onnx", reason="onnx is in the test and train extras (make test-training installs both)")

from models.training.train import Ensemble, FaceNet, write_onnx  # noqa: E402
from vision.classifier import CROP, FaceClassifier, prepare  # noqa: E402

# The export the project prescribes (dynamo=False, as ``train.export`` does) warns that it is the legacy one, and
# the libraries under it warn of their own deprecations: none of it is this project's code.
pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


def _export(model, path):
    model.eval()
    write_onnx(model, path)
    return FaceClassifier(path)


def _nets(k):
    torch.manual_seed(7)
    nets = [FaceNet((8, 8, 8, 8)) for _ in range(k)]
    for net in nets:  # batch norm's running statistics, so that the nets differ in what they say, not only in weights
        net.train()
        with torch.no_grad():
            net(torch.randn(64, 3, CROP, CROP))
        net.eval()
    return nets


def test_the_runtime_reads_the_mean_of_the_members_probabilities(tmp_path):
    nets = _nets(2)
    crops = np.random.default_rng(0).integers(0, 255, (5, CROP, CROP, 3), dtype=np.uint8)
    with torch.no_grad():
        each = [torch.softmax(net(torch.from_numpy(prepare(crops))), 1).numpy() for net in nets]
    read = _export(Ensemble(nets), tmp_path / "two.onnx").probabilities(crops)
    assert read.shape == (5, 7)
    np.testing.assert_allclose(read.sum(1), 1.0, atol=1e-5)
    np.testing.assert_allclose(read, (each[0] + each[1]) / 2, atol=1e-4)
    assert not np.allclose(each[0], each[1], atol=1e-3)  # two different nets, or the mean proves nothing


def test_one_member_reads_as_that_net_alone(tmp_path):
    net = _nets(1)[0]
    crops = np.random.default_rng(1).integers(0, 255, (3, CROP, CROP, 3), dtype=np.uint8)
    alone = _export(net, tmp_path / "net.onnx").probabilities(crops)
    np.testing.assert_allclose(_export(Ensemble([net]), tmp_path / "one.onnx").probabilities(crops), alone, atol=1e-4)
