"""The detector's training data: rendered frames, augmentation, target maps, loss and export (needs torch)."""

from __future__ import annotations

import math

import cv2
import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="PyTorch is the optional train extra (make test-training installs it and runs these)")

from models.training.detector import labels as L  # noqa: E402
from models.training.detector import samples, synth  # noqa: E402
from vision.detector_learned import NET_SIDE, SIDE_UNIT, STRIDE  # noqa: E402


def test_a_seed_gives_the_same_frame_and_labels_inside_it():
    a, da = synth.render(np.random.default_rng((9, 1)), None)
    b, db = synth.render(np.random.default_rng((9, 1)), None)
    assert np.array_equal(a, b) and np.array_equal(da, db)
    assert a.dtype == np.uint8 and a.ndim == 2 and max(a.shape) == NET_SIDE
    for seed in range(12):
        img, dice = synth.render(np.random.default_rng((9, seed)), None)
        h, w = img.shape
        assert len(dice) <= 25
        for cx, cy, bw, bh, side, angle, exact in dice:
            assert 0 <= cx < w and 0 <= cy < h
            assert exact == 1 and 0 <= angle < 90
            assert 0.02 * w <= side <= 0.75 * w


def test_rendered_dice_are_drawn_where_their_labels_say():
    # A die drawn on a flat backdrop differs from it at its centre, and the backdrop a die away does not.
    rng = np.random.default_rng(3)
    frame = np.full((200, 200, 3), 90, np.float32)
    die = synth.PlacedDie(5, 80.0, 120.0, 50.0, 25.0)
    synth.paste_die(frame, die, synth.DieStyle((240, 240, 240), (10, 10, 10), "pip"), rng, False)
    assert frame[120, 80].mean() < 60 or frame[120, 80].mean() > 200  # centre pip of a five, or the face
    assert frame[125, 91].mean() > 150  # the face between pips (12 px from the centre along an edge's direction)
    assert abs(frame[120, 150].mean() - 90) < 25


def test_turns_and_mirrors_carry_the_labels():
    img = np.zeros((60, 100), np.uint8)
    cv2.rectangle(img, (20, 10), (29, 19), 255, -1)  # a 10 px square at centre (25, 15)
    dice = L.as_array([L.exact_row(25.0, 15.0, 10.0, 20.0)])
    for turn in range(4):
        for flip in (False, True):
            out, moved = samples.turn_flip(img, dice, turn, flip)
            cx, cy = moved[0, :2]
            assert out[int(cy), int(cx)] == 255
            assert moved[0, 4] == pytest.approx(10.0)
            assert moved[0, 5] == pytest.approx(70.0 if flip else 20.0)


def test_real_views_keep_dice_inside_the_window_at_the_chosen_scale():
    rng = np.random.default_rng(0)
    img = np.full((640, 640), 128, np.uint8)
    rows = [L.box_row(100.0 + 40 * i, 320.0, 30.0, 32.0) for i in range(10)]
    for _ in range(20):
        out, dice = samples.real_view(img, L.as_array(rows), rng)
        assert max(out.shape) <= samples.TRAIN_SIDE
        assert ((dice[:, 0] >= 0) & (dice[:, 0] < out.shape[1]) & (dice[:, 1] >= 0) & (dice[:, 1] < out.shape[0])).all()
        if len(dice):
            assert np.all(dice[:, 6] == 0) and np.all(np.isnan(dice[:, 5]))
            assert dice[0, 4] == pytest.approx(min(dice[0, 2], dice[0, 3]))


def test_targets_put_each_die_at_its_centre_cell():
    dice = L.as_array([L.exact_row(42.0, 90.0, 24.0, 10.0), L.box_row(150.0, 30.0, 40.0, 36.0)])
    heat, reg, wt = samples.targets(dice)
    g = samples.GRID
    assert heat.shape == (1, g, g) and reg.shape == (6, g, g)
    assert heat[0, 90 // STRIDE, 42 // STRIDE] == 1 and heat[0, 30 // STRIDE, 150 // STRIDE] == 1
    assert (heat == 1).sum() == 2
    y, x = 90 // STRIDE, 42 // STRIDE
    assert reg[0, y, x] == pytest.approx(math.log(24 / SIDE_UNIT))
    assert reg[1, y, x] == pytest.approx(math.cos(math.radians(40))) and reg[5, y, x] == 1
    assert reg[3, y, x] == pytest.approx(42 / STRIDE - (x + 0.5))
    assert wt[0, y, x] == 1 and wt[0, y, x + 1] == 0.25
    y2, x2 = 30 // STRIDE, 150 // STRIDE
    assert reg[0, y2, x2] == pytest.approx(math.log(36 / SIDE_UNIT)) and reg[5, y2, x2] == 0


def test_the_loss_is_lowest_for_the_true_maps():
    from models.training.detector.net import loss

    dice = L.as_array([L.exact_row(60.0, 60.0, 30.0, 15.0)])
    heat, reg, wt = (torch.from_numpy(a)[None] for a in samples.targets(dice))
    good = torch.cat([torch.logit(heat.clamp(1e-3, 1 - 1e-3)), reg[:, :5]], 1)
    bad = good.clone()
    bad[:, 1] += 0.5
    bad[:, 2:4] *= -1
    lg, tg = loss(good, heat, reg, wt)
    lb, tb = loss(bad, heat, reg, wt)
    assert tg["side"] < 1e-6 and tg["angle"] < 1e-6 and tg["offset"] < 1e-6
    assert tb["side"] > 0.4 and tb["angle"] > 0.5 and lb > lg


def test_an_exported_net_loads_in_the_runtime(tmp_path):
    from models.training.detector.net import DiceDetector, export
    from vision.detector_learned import LearnedDetector

    torch.manual_seed(0)
    path = tmp_path / "dice-detector-test.onnx"
    export(DiceDetector(), path, {"score_threshold": "0.45"})
    det = LearnedDetector(path)
    assert det.score_threshold == 0.45
    out = det.propose(np.random.default_rng(0).integers(0, 255, (300, 400)).astype(np.uint8))
    assert isinstance(out, list)


def test_cluster_frames_push_small_dice_against_each_other():
    # Touching small dice are where the network boxes two dice as one: cluster frames are mostly that.
    near, pairs = 0, 0
    for seed in range(10):
        img, dice = synth.render(np.random.default_rng((4, seed, 1)), None, clusters=True)
        assert 1 <= len(dice) <= 8
        assert all(synth.CLUSTER_SIDES[0] * 0.9 <= side <= synth.CLUSTER_SIDES[1] * 1.1 for side in dice[:, 4])
        for i in range(1, len(dice)):
            gap = math.dist(dice[i, :2], dice[i - 1, :2]) / max(dice[i, 4], dice[i - 1, 4])
            pairs += 1
            near += gap < 1.25
    assert near >= pairs / 2


def test_a_shipped_onnx_detector_folds_back_into_the_network_exactly():
    import onnxruntime as ort

    from models.training.detector.from_onnx import load_onnx
    from models.training.detector.net import Exported
    from vision.detector_learned import default_model_path

    path = default_model_path()
    net = load_onnx(path)
    x = np.random.default_rng(1).normal(size=(1, 1, 96, 128)).astype(np.float32)
    want = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"]).run(None, {"grey": x})
    with torch.no_grad():
        got = [t.numpy() for t in Exported(net).eval()(torch.from_numpy(x))]
    for w, g in zip(want, got):
        assert np.abs(w - g).max() < 1e-4


def test_a_folded_network_keeps_its_norm_statistics_while_it_trains():
    from models.training.detector.from_onnx import freeze_norm_statistics, load_onnx
    from vision.detector_learned import default_model_path

    net = load_onnx(default_model_path())
    net.train()
    freeze_norm_statistics(net)
    before = net.s8[0][1].running_var.clone()
    net(torch.randn(2, 1, 64, 64)).sum().backward()
    assert torch.equal(net.s8[0][1].running_var, before)
    assert net.s8[0][0].weight.grad is not None  # the weights still learn


def test_an_onnx_file_that_is_not_this_network_is_refused(tmp_path):
    from models.training.detector.from_onnx import load_onnx
    from models.training.detector.net import DiceDetector, export

    path = tmp_path / "dice-detector-wide.onnx"
    export(DiceDetector((8, 16, 32, 64, 128)), path, {})
    with pytest.raises(ValueError, match="weights"):
        load_onnx(path)
