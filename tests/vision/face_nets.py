"""An exported face net with trained-looking weights, for the training tests (``--init``, ``--teacher``, ``--separable``).

A freshly built net has batch norms at identity and nearly even answers, which would let a reader that drops a
folded bias or an exporter alias still pass; these weights are far from both, as after training. It needs PyTorch,
the optional ``train`` extra, only when called (imported inside, so that collecting the tests without it still works):
call it after ``pytest.importorskip("torch")``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any


def exported_face_net(path: Path, widths=(8, 8, 12, 12), separable: int = 0, *, trained_look: bool = True,
                      sure_answers: bool = False) -> Any:
    """Build a seeded ``FaceNet``, make it look trained, export it to ``path`` as ``train`` does (``train.write_onnx``); return the net.

    ``trained_look`` moves every batch norm far from identity; ``sure_answers`` scales the last layer so its answers
    are far from even (a teacher whose answers a student can tell from the labels').
    """
    import torch

    from models.training.train import FaceNet, write_onnx

    torch.manual_seed(0)
    net = FaceNet(widths, separable)
    with torch.no_grad():
        if trained_look:
            for m in net.modules():
                if isinstance(m, torch.nn.BatchNorm2d):
                    m.running_mean.uniform_(-1, 1)
                    m.running_var.uniform_(0.5, 2)
                    m.weight.uniform_(0.5, 1.5)
                    m.bias.uniform_(-0.5, 0.5)
        if sure_answers:
            net.head[2].weight.mul_(20.0)
    net.eval()
    write_onnx(net, path)
    return net
