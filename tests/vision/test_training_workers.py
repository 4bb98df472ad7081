"""``train --augment-workers N --device cuda``: the recipe search on a GPU machine (docs/classifier-log.md).

Its batches come from per-batch seeds, so the same run gives the same batches with any number of workers;
the default (no workers) keeps the run's one random stream and its checkpoint keys. These need PyTorch
(the ``train`` extra); without it they are skipped.
"""

from __future__ import annotations

import argparse

import numpy as np
import pytest

pytest.importorskip("torch", reason="PyTorch is the optional train extra (make test-training installs it and runs these)")

from models.training.train import augmented_batches, run_key  # noqa: E402


def _args(workers: int) -> argparse.Namespace:
    return argparse.Namespace(augment_workers=workers, seed=3, strong_augment=True, squash=0.0, invert=0.0, glint_size=1.0, motion_blur=0.0,
                              camera_tone=0.0)


def _batches(workers: int, epoch: int = 0) -> list[np.ndarray]:
    x = np.random.default_rng(0).integers(0, 256, (640, 40, 40, 3), dtype=np.uint8)
    perm = np.random.default_rng(1).permutation(len(x))
    return list(augmented_batches(x, perm, range(0, len(perm) - 127, 128), epoch, np.random.default_rng(2), _args(workers)))


def test_workers_give_the_same_batches_for_any_number_of_workers():
    one, two = _batches(1), _batches(2)
    assert len(one) == len(two) == 5
    assert all(np.array_equal(a, b) for a, b in zip(one, two))


def test_each_epoch_augments_afresh():
    assert not np.array_equal(_batches(1, epoch=0)[0], _batches(1, epoch=1)[0])


def test_without_workers_the_run_keeps_its_one_stream():
    """No workers: the batches follow the run's random generator, as the shipped model's recipe made them."""
    assert len(_batches(0)) == 5
    assert not np.array_equal(_batches(0)[0], _batches(1)[0])


def test_the_device_and_the_worker_count_do_not_change_a_runs_keys():
    before = argparse.Namespace(seed=3, epochs=5)
    assert run_key(argparse.Namespace(seed=3, epochs=5, device="cpu", augment_workers=0)) == run_key(before)
    assert run_key(argparse.Namespace(seed=3, epochs=5, device="cuda", augment_workers=0)) == run_key(before)
    three = run_key(argparse.Namespace(seed=3, epochs=5, device="cuda", augment_workers=3))
    assert three != run_key(before)
    assert three == run_key(argparse.Namespace(seed=3, epochs=5, device="cpu", augment_workers=1))


@pytest.mark.parametrize("argv, words", [
    (["--augment-workers", "-1"], "number of processes"),
    (["--device", "toaster"], "not a device torch knows"),
])
def test_a_bad_device_or_worker_count_is_refused_in_words_before_any_data_is_made(argv, words, capsys, tmp_path):
    from models.training.train import main

    with pytest.raises(SystemExit):
        main(argv + ["--work", str(tmp_path)])
    assert words in capsys.readouterr().err
    assert not any(tmp_path.iterdir())  # refused before the data cache


@pytest.mark.skipif(__import__("torch").cuda.is_available(), reason="this machine has a GPU")
def test_asking_for_a_gpu_where_there_is_none_says_so(capsys, tmp_path):
    from models.training.train import main

    with pytest.raises(SystemExit):
        main(["--device", "cuda", "--work", str(tmp_path)])
    assert "needs a GPU" in capsys.readouterr().err


def test_the_usual_glint_size_keeps_a_runs_key_and_another_makes_a_new_one():
    before = argparse.Namespace(seed=3, epochs=5)
    assert run_key(argparse.Namespace(seed=3, epochs=5, glint_size=1.0)) == run_key(before)
    assert run_key(argparse.Namespace(seed=3, epochs=5, glint_size=0.6)) != run_key(before)


def test_no_motion_blur_keeps_a_runs_key_and_some_makes_a_new_one():
    before = argparse.Namespace(seed=3, epochs=5)
    assert run_key(argparse.Namespace(seed=3, epochs=5, motion_blur=0.0)) == run_key(before)
    assert run_key(argparse.Namespace(seed=3, epochs=5, motion_blur=0.3)) != run_key(before)


def test_no_camera_tone_keeps_a_runs_key_and_some_makes_a_new_one():
    before = argparse.Namespace(seed=3, epochs=5)
    assert run_key(argparse.Namespace(seed=3, epochs=5, camera_tone=0.0)) == run_key(before)
    assert run_key(argparse.Namespace(seed=3, epochs=5, camera_tone=0.3)) != run_key(before)
