"""``train --keep-answers W``: a fine-tune that teaches new dice keeps the starting model's answers on the old ones.

The loss adds W times the divergence of the net's answers from the ``--init`` model's on every crop that is not a
new look (``DRAWN_SOURCES``). Without it a run trains and keys as the shipped recipe did. These need PyTorch (the
``train`` extra); without it they are skipped.
"""

from __future__ import annotations

import argparse
import copy

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="PyTorch is the optional train extra (make test-training installs it and runs these)")

from models.training.train import FaceNet, fit, kept_answers_loss, main, predict, run_key  # noqa: E402
from vision.classifier import CROP, prepare  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::UserWarning")


def _args(tmp_path, keep: float, epochs: int = 3, lr: float = 3e-3) -> argparse.Namespace:
    return argparse.Namespace(device="cpu", lr=lr, epochs=epochs, label_smoothing=0.02, work=tmp_path, resume=False,
                              stop_after=None, seed=3, ema=0.0, augment_workers=0, strong_augment=False, squash=0.0,
                              invert=0.0, glint_size=1.0, motion_blur=0.0, camera_tone=0.0, keep_answers=keep)


def _data() -> tuple[np.ndarray, np.ndarray, dict]:
    rng = np.random.default_rng(0)
    x = rng.integers(0, 256, (384, CROP, CROP, 3), dtype=np.uint8)
    y = rng.integers(0, 7, 384)
    return x, y, {"val_tiny": (x[:32], y[:32])}


def _net() -> torch.nn.Module:
    torch.manual_seed(5)
    return FaceNet((4, 4, 8, 8))


def _divergence(a: np.ndarray, b: np.ndarray) -> float:
    return float((a * (np.log(a + 1e-9) - np.log(b + 1e-9))).sum(1).mean())


def test_the_loss_is_nothing_where_the_net_answers_as_its_teacher_and_counts_only_known_crops():
    x = torch.from_numpy(prepare(_data()[0][:16]))
    teacher = _net().eval()
    same = kept_answers_loss(teacher(x), teacher, x, torch.ones(16, dtype=torch.bool))
    assert float(same) == pytest.approx(0.0, abs=1e-6)
    other = _net()
    with torch.no_grad():
        other.head[2].bias.add_(torch.arange(7.0))
    known = torch.tensor([True] * 8 + [False] * 8)
    logits = other.eval()(x)
    apart = kept_answers_loss(logits, teacher, x, known)
    assert float(apart) > 0.1
    changed = logits.clone()
    changed[8:] += torch.randn(8, 7) * 5  # the new looks' answers may go anywhere
    assert float(kept_answers_loss(changed, teacher, x, known)) == pytest.approx(float(apart), abs=1e-6)


def test_a_fine_tune_that_keeps_the_answers_drifts_less_from_its_start_on_the_known_crops(tmp_path):
    """Random labels pull the net away from its start; the teacher's answers hold it back on the known crops."""
    x, y, sets = _data()
    known = np.arange(len(x)) % 2 == 0
    teacher = _net().eval()
    start = predict(copy.deepcopy(teacher), x[known])
    free = fit(copy.deepcopy(teacher), x, y, sets, np.random.default_rng(3), _args(tmp_path / "free", 0.0))
    kept = fit(copy.deepcopy(teacher), x, y, sets, np.random.default_rng(3), _args(tmp_path / "kept", 5.0),
               teacher=teacher, known=known)
    assert _divergence(start, predict(kept, x[known])) < 0.5 * _divergence(start, predict(free, x[known]))


def test_a_run_without_kept_answers_keeps_its_checkpoint_key_and_one_with_them_gets_its_own():
    before = argparse.Namespace(seed=3, epochs=5)
    assert run_key(argparse.Namespace(seed=3, epochs=5, keep_answers=0.0)) == run_key(before)
    assert run_key(argparse.Namespace(seed=3, epochs=5, keep_answers=1.0)) != run_key(before)


@pytest.mark.parametrize("argv", [["--keep-answers", "1"], ["--keep-answers", "-1", "--init", "m.onnx"]])
def test_kept_answers_without_a_starting_model_or_with_a_negative_weight_are_refused_in_words(argv, capsys, tmp_path):
    with pytest.raises(SystemExit):
        main([*argv, "--work", str(tmp_path)])
    assert "--keep-answers is the weight (0 or more) of the --init model's answers: it needs --init" in capsys.readouterr().err


def test_doubted_crops_are_taught_an_even_spread_over_the_six_faces_and_the_rest_their_labels():
    from models.training.train import doubt_loss

    loss_fn = torch.nn.CrossEntropyLoss(label_smoothing=0.02)
    y = torch.tensor([3, 5, 2, 1])
    doubted = torch.tensor([False, False, True, True])
    even = torch.full((4, 7), 5.0)
    even[:, 0] = -20.0  # "not a die" at nothing, the six faces alike: what a doubted crop is taught
    sure = torch.full((4, 7), -5.0)
    sure[torch.arange(4), y] = 5.0
    mixed = torch.cat([sure[:2], even[2:]])
    # the doubted crops' part is least where the six faces are alike, whatever their label says
    assert float(doubt_loss(mixed, y, doubted, loss_fn)) < float(doubt_loss(sure, y, doubted, loss_fn))
    # the others' part is loss_fn's, weighted by their share of the batch
    none = torch.zeros(4, dtype=torch.bool)
    assert float(doubt_loss(sure, y, none, loss_fn)) == pytest.approx(float(loss_fn(sure, y)), abs=1e-6)
    spread = -torch.log_softmax(mixed[2:], 1)[:, 1:].mean(1).sum()
    expected = (loss_fn(mixed[:2], y[:2]) * 2 + spread) / 4
    assert float(doubt_loss(mixed, y, doubted, loss_fn)) == pytest.approx(float(expected), abs=1e-6)


def test_a_fine_tune_that_doubts_a_look_reads_it_less_sure_than_one_that_learns_its_labels(tmp_path):
    """Crops whose one light band's place gives their label away, a third of them drawn another way (tinted red):
    doubted, that look is read less sure than learned, and less sure than the rest."""
    rng = np.random.default_rng(0)
    y = rng.integers(0, 7, 384)
    x = rng.integers(0, 60, (384, CROP, CROP, 3)).astype(np.uint8)
    for crop, label in zip(x, y):
        crop[4 + 4 * label:10 + 4 * label, 8:CROP - 8] = 250
    doubted = np.arange(len(x)) % 3 == 0
    x[doubted, :, :, 0] = 0
    x[doubted, :, :, 2] = np.maximum(x[doubted, :, :, 2], 200)
    sets = {"val_tiny": (x[:32], y[:32])}
    start = _net()
    learned = fit(copy.deepcopy(start), x, y, sets, np.random.default_rng(3), _args(tmp_path / "learned", 0.0, 12, 1e-2))
    doubting = fit(copy.deepcopy(start), x, y, sets, np.random.default_rng(3), _args(tmp_path / "doubting", 0.0, 12, 1e-2),
                   doubted=doubted)
    sure_learned, sure_doubting = predict(learned, x[doubted]).max(1).mean(), predict(doubting, x[doubted]).max(1).mean()
    assert sure_doubting < sure_learned - 0.05
    assert sure_doubting < predict(doubting, x[~doubted]).max(1).mean() - 0.2  # the rest is still learned


@pytest.mark.parametrize("argv", [["--doubted", "numerals"], ["--doubted", "faces", "--numerals", "10"],
                                  ["--doubted", "round_things", "--round-things", "10"]])  # not a die: nothing to doubt
def test_doubting_a_look_the_run_does_not_draw_is_refused_in_words(argv, capsys, tmp_path):
    with pytest.raises(SystemExit):
        main([*argv, "--work", str(tmp_path)])
    assert "--doubted names drawn looks the run adds" in capsys.readouterr().err
