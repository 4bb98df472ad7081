"""``train --separable N``: a face net whose last blocks are depthwise-separable, exported, read back and taught.

The speed row's lever: the same widths for far fewer multiply-adds a crop. Its file must be read back as the
shipped shape's is (``--init``, ``--teacher``), or a second stage could not start from it. These need PyTorch and
onnx (the ``train`` extra); without them they are skipped.
"""

from __future__ import annotations

import argparse

import numpy as np
import pytest

pytest.importorskip("torch", reason="PyTorch is the optional train extra (make test-training installs it and runs these)")
pytest.importorskip("onnx", reason="onnx is in the test and train extras (make test-training installs both)")

from models.training.train import FaceNet, load_onnx, main, predict, run_key, shape_of, widths_of  # noqa: E402
from tests.vision.face_nets import exported_face_net  # noqa: E402
from vision.classifier import CROP, FaceClassifier  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::UserWarning")


def _exported(tmp_path, widths=(8, 12, 16, 16), separable=2, trained_look=True):
    path = tmp_path / f"faces-{separable}.onnx"
    return exported_face_net(path, widths, separable, trained_look=trained_look), path


def _crops(n=128):
    return np.random.default_rng(0).integers(0, 256, (n, CROP, CROP, 3), dtype=np.uint8)


@pytest.mark.parametrize("separable", [0, 1, 2, 3])
def test_the_widths_and_separable_blocks_of_an_exported_net_are_read_from_its_file(tmp_path, separable):
    _, path = _exported(tmp_path, (8, 6, 12, 10), separable)
    assert shape_of(path) == ((8, 6, 12, 10), separable)
    assert widths_of(path) == (8, 6, 12, 10)


def test_a_separable_net_has_fewer_weights_than_the_whole_one_of_the_same_widths():
    whole, split = FaceNet((16, 48, 128, 128)), FaceNet((16, 48, 128, 128), 2)
    assert sum(p.numel() for p in split.parameters()) < 0.5 * sum(p.numel() for p in whole.parameters())


@pytest.mark.parametrize("trained_look", [True, False])
def test_a_separable_file_read_back_answers_as_the_net_that_wrote_it(tmp_path, trained_look):
    """Untrained batch norms fold to equal biases, which the exporter writes once and names by Identity nodes."""
    net, path = _exported(tmp_path, trained_look=trained_look)
    back = load_onnx(FaceNet(*shape_of(path)), path, _crops()).eval()
    assert np.abs(predict(net, _crops()) - predict(back, _crops())).max() < 1e-4


def test_the_reader_runs_a_separable_file_as_the_shipped_one(tmp_path):
    net, path = _exported(tmp_path)
    crops = _crops(5)
    assert np.allclose(FaceClassifier(path, threads=1).probabilities(crops), predict(net, crops), atol=1e-4)


def test_a_separable_file_is_refused_where_the_whole_shape_is_asked(tmp_path):
    _, path = _exported(tmp_path)
    with pytest.raises(ValueError, match="--widths or --separable"):
        load_onnx(FaceNet((8, 12, 16, 16)), path, _crops())


def test_a_run_without_separable_blocks_keeps_its_checkpoint_key_and_one_with_them_gets_its_own():
    before = argparse.Namespace(seed=3, epochs=5, widths=(16, 48, 96, 96))
    assert run_key(argparse.Namespace(seed=3, epochs=5, widths=(16, 48, 96, 96), separable=0)) == run_key(before)
    assert run_key(argparse.Namespace(seed=3, epochs=5, widths=(16, 48, 96, 96), separable=2)) != run_key(before)


@pytest.mark.parametrize("value", ["4", "-1"])
def test_a_separable_count_outside_the_blocks_is_refused_in_words(value, capsys, tmp_path):
    with pytest.raises(SystemExit):
        main(["--separable", value, "--work", str(tmp_path)])
    assert "--separable is how many of the last blocks are depthwise-separable: 0 to 3" in capsys.readouterr().err
