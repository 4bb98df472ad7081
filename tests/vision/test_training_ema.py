"""``train --ema DECAY``: the net a run returns is the moving average of its weights over the steps.

Without it a run returns its last step's weights and keeps its checkpoint key, as the shipped recipe was made;
with it a resumed run picks the average up where it was. These need PyTorch (the ``train`` extra); without it
they are skipped.
"""

from __future__ import annotations

import argparse
import copy

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="PyTorch is the optional train extra (make test-training installs it and runs these)")

from models.training.train import FaceNet, fit, run_key  # noqa: E402
from vision.classifier import CROP  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::UserWarning")


def _args(tmp_path, ema: float, epochs: int = 2, stop_after: int | None = None, resume: bool = False) -> argparse.Namespace:
    return argparse.Namespace(device="cpu", lr=3e-3, epochs=epochs, label_smoothing=0.02, work=tmp_path, resume=resume,
                              stop_after=stop_after, seed=3, ema=ema, augment_workers=0, strong_augment=False, squash=0.0,
                              invert=0.0, glint_size=1.0, motion_blur=0.0, camera_tone=0.0)


def _data() -> tuple[np.ndarray, np.ndarray, dict]:
    rng = np.random.default_rng(0)
    x = rng.integers(0, 256, (256, CROP, CROP, 3), dtype=np.uint8)
    y = rng.integers(0, 7, 256)
    return x, y, {"val_tiny": (x[:32], y[:32])}


def _fit(tmp_path, ema: float, **kw) -> tuple[torch.nn.Module, torch.nn.Module]:
    """(the net fit returns, the net it trained)."""
    x, y, sets = _data()
    torch.manual_seed(3)
    net = FaceNet((4, 4, 8, 8))
    out = fit(net, x, y, sets, np.random.default_rng(3), _args(tmp_path, ema, **kw))
    return out, net


def _weights(net: torch.nn.Module) -> list[torch.Tensor]:
    return [t.detach().clone() for t in net.state_dict().values()]


def test_without_an_average_the_last_steps_weights_are_returned(tmp_path):
    out, net = _fit(tmp_path, 0.0)
    assert out is net


def test_with_an_average_the_returned_net_is_the_steps_moving_average(tmp_path):
    """Replayed by hand: each step's weights folded in with weight 1 - decay, batch-norm statistics too."""
    x, y, sets = _data()
    torch.manual_seed(3)
    net = FaceNet((4, 4, 8, 8))
    start = copy.deepcopy(net)
    steps: list[list[torch.Tensor]] = []
    original_step = torch.optim.AdamW.step

    def recording_step(self, *a, **k):  # the weights after each optimiser step, as the average sees them
        result = original_step(self, *a, **k)
        steps.append(_weights(net))
        return result

    torch.optim.AdamW.step = recording_step
    try:
        out = fit(net, x, y, sets, np.random.default_rng(3), _args(tmp_path, 0.5))
    finally:
        torch.optim.AdamW.step = original_step
    assert out is not net and len(steps) == 4  # 2 epochs of 2 batches
    names = list(net.state_dict())
    expected = steps[0]
    for later in steps[1:]:
        expected = [e if not torch.is_floating_point(e) else 0.5 * e + 0.5 * w for e, w in zip(expected, later)]
    averaged = out.state_dict()
    for name, e in zip(names, expected):
        if name.endswith("num_batches_tracked"):
            continue
        assert torch.allclose(averaged[name], e, atol=1e-6), name
    assert not all(torch.equal(a, b) for a, b in zip(_weights(out), steps[-1]))  # not the last step's
    assert not all(torch.equal(a, b) for a, b in zip(_weights(out), _weights(start)))  # nor the start


def test_a_run_cut_short_and_resumed_gives_the_same_average_as_one_run_through(tmp_path):
    through, _ = _fit(tmp_path / "through", 0.9)
    _fit(tmp_path / "cut", 0.9, stop_after=1)
    resumed, _ = _fit(tmp_path / "cut", 0.9, resume=True)
    for a, b in zip(_weights(through), _weights(resumed)):
        assert torch.allclose(a, b, atol=1e-6)


def test_a_run_without_an_average_keeps_its_checkpoint_key_and_one_with_it_gets_its_own():
    before = argparse.Namespace(seed=3, epochs=5)
    assert run_key(argparse.Namespace(seed=3, epochs=5, ema=0.0)) == run_key(before)
    assert run_key(argparse.Namespace(seed=3, epochs=5, ema=0.998)) != run_key(before)


@pytest.mark.parametrize("decay", ["1", "1.5", "-0.1"])
def test_a_decay_that_is_not_under_one_is_refused_in_words_before_any_data_is_made(decay, capsys, tmp_path):
    from models.training.train import main

    with pytest.raises(SystemExit):
        main(["--ema", decay, "--work", str(tmp_path)])
    assert "under 1" in capsys.readouterr().err
    assert not any(tmp_path.iterdir())
