"""``train --teacher FILE --keep-answers W``: a net learns another exported net's answers, whatever its widths.

A narrower face model costs less a crop; taught the shipped model's answers (distillation) it may keep more of its
reading than one taught the labels alone. These need PyTorch and onnx (the ``train`` extra); without them they are
skipped.
"""

from __future__ import annotations

import argparse

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="PyTorch is the optional train extra (make test-training installs it and runs these)")
pytest.importorskip("onnx", reason="onnx is in the test and train extras (make test-training installs both)")

from models.training.train import FaceNet, fit, load_onnx, main, predict, run_key, widths_of  # noqa: E402
from tests.vision.face_nets import exported_face_net  # noqa: E402
from vision.classifier import CROP  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::UserWarning")


def _exported(tmp_path, widths=(8, 8, 12, 12)):
    path = tmp_path / "teacher.onnx"
    exported_face_net(path, widths, sure_answers=True)
    return path


def _args(tmp_path, keep: float) -> argparse.Namespace:
    return argparse.Namespace(device="cpu", lr=1e-2, epochs=6, label_smoothing=0.02, work=tmp_path, resume=False,
                              stop_after=None, seed=3, ema=0.0, augment_workers=0, strong_augment=False, squash=0.0,
                              invert=0.0, glint_size=1.0, motion_blur=0.0, camera_tone=0.0, keep_answers=keep)


def _divergence(a: np.ndarray, b: np.ndarray) -> float:
    return float((a * (np.log(a + 1e-9) - np.log(b + 1e-9))).sum(1).mean())


def test_the_widths_of_an_exported_net_are_read_from_its_file(tmp_path):
    assert widths_of(_exported(tmp_path, (8, 6, 12, 10))) == (8, 6, 12, 10)


def test_a_narrower_net_taught_by_a_wider_file_answers_nearer_it_than_one_taught_the_labels_alone(tmp_path):
    rng = np.random.default_rng(0)
    x = rng.integers(0, 256, (384, CROP, CROP, 3), dtype=np.uint8)
    y = rng.integers(0, 7, 384)  # labels that say nothing: only the teacher's answers can be learned
    path = _exported(tmp_path)
    teacher = load_onnx(FaceNet(widths_of(path)), path, x).eval()
    target = predict(teacher, x)
    known = np.ones(len(x), bool)
    torch.manual_seed(5)
    free = fit(FaceNet((4, 4, 8, 8)), x, y, {}, np.random.default_rng(3), _args(tmp_path / "free", 0.0))
    torch.manual_seed(5)
    taught = fit(FaceNet((4, 4, 8, 8)), x, y, {}, np.random.default_rng(3), _args(tmp_path / "taught", 5.0),
                 teacher=teacher, known=known)
    assert _divergence(target, predict(taught, x)) < 0.5 * _divergence(target, predict(free, x))


def test_a_run_without_a_teacher_keeps_its_checkpoint_key_and_one_with_a_teacher_gets_its_own():
    before = argparse.Namespace(seed=3, epochs=5, keep_answers=1.0)
    assert run_key(argparse.Namespace(seed=3, epochs=5, keep_answers=1.0, teacher=None)) == run_key(before)
    assert run_key(argparse.Namespace(seed=3, epochs=5, keep_answers=1.0, teacher="t.onnx")) != run_key(before)


@pytest.mark.parametrize("argv, words", [
    (["--teacher", "{t}"], "--teacher's answers are kept with the weight --keep-answers gives"),
    (["--teacher", "{missing}", "--keep-answers", "1"], "is not a file: give an exported FaceNet (.onnx)"),
])
def test_a_teacher_without_a_weight_or_that_is_not_a_file_is_refused_in_words(argv, words, capsys, tmp_path):
    path = _exported(tmp_path)
    argv = [a.format(t=path, missing=tmp_path / "none.onnx") for a in argv]
    with pytest.raises(SystemExit):
        main([*argv, "--work", str(tmp_path)])
    assert words in capsys.readouterr().err
