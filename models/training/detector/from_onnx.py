"""A shipped detector's ONNX file back into ``DiceDetector`` weights, so a new schedule can start from it.

The shipped model is kept only as ONNX, where the exporter folded each batch norm into the
convolution before it. Folded back, each such convolution takes the folded weight and its batch norm
becomes the identity plus the folded bias (scale 1, running mean 0, running variance 1 - eps), so the
network computes exactly what the file computes. Fine-tuning such a network must keep its batch-norm
statistics fixed (``freeze_norm_statistics``): batch statistics would differ from the identity ones at
the first step and undo what the file learned.

    python -m models.training.detector.from_onnx models/dice-detector-<id>.onnx build/detector/shipped.pt
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import torch
from torch import nn

from models.training.detector.net import DiceDetector


def _parts(node_name: str) -> list[str]:
    """An exporter node name's module path: ``/net/s4/s4.1/dw/Conv`` -> ``["s4", "1", "dw"]``."""
    return [p.split(".")[-1] for p in node_name.strip("/").split("/")[1:-1]]  # no wrapper, no op name


def _module(net: nn.Module, parts: list[str]) -> nn.Module:
    m = net
    for part in parts:
        m = m[int(part)] if part.isdigit() else getattr(m, part)
    return m


def _norm_after(net: nn.Module, parts: list[str]) -> nn.BatchNorm2d | None:
    """The batch norm that followed the convolution at ``parts`` before the exporter folded it."""
    parent = _module(net, parts[:-1])
    if parts[-1] in ("dw", "pw"):
        return getattr(parent, "bn1" if parts[-1] == "dw" else "bn2")  # Separable
    if parts[-1] == "0" and isinstance(parent, nn.Sequential) and isinstance(parent[1], nn.BatchNorm2d):
        return parent[1]  # cbr(): conv, norm, relu
    return None


def load_onnx(path: Path, widths: tuple[int, int, int, int, int] = (8, 16, 32, 64, 96)) -> DiceDetector:
    """A ``DiceDetector`` computing what the ONNX file at ``path`` computes."""
    import onnx
    from onnx import numpy_helper

    model = onnx.load(str(path))
    inits = {i.name: numpy_helper.to_array(i) for i in model.graph.initializer}
    for node in model.graph.node:  # the exporter may give equal tensors (zero biases) as shared constants
        if node.op_type == "Constant" and node.attribute and node.attribute[0].name == "value":
            inits[node.output[0]] = numpy_helper.to_array(node.attribute[0].t)
    net = DiceDetector(widths)
    loaded = 0
    with torch.no_grad():
        for node in model.graph.node:
            if node.op_type != "Conv":
                continue
            parts = _parts(node.name)
            conv = _module(net, parts)
            if len(node.input) < 3 or any(name not in inits for name in node.input[1:3]):
                raise ValueError(f"{path}: {node.name} has no fixed weights and bias; it is not an exported DiceDetector")
            weight, bias = (torch.from_numpy(np.array(inits[name])) for name in node.input[1:3])
            if tuple(conv.weight.shape) != tuple(weight.shape):
                raise ValueError(f"{path}: {node.name} has weights {tuple(weight.shape)}, the network {tuple(conv.weight.shape)}")
            conv.weight.copy_(weight)
            norm = _norm_after(net, parts)
            if conv.bias is not None:
                conv.bias.copy_(bias)
            elif norm is not None:
                norm.weight.fill_(1.0)
                norm.bias.copy_(bias)
                norm.running_mean.zero_()
                norm.running_var.fill_(1.0 - norm.eps)
            else:
                raise ValueError(f"{path}: {node.name} has a bias but neither its convolution nor a batch norm takes it")
            loaded += 1
    expected = sum(isinstance(m, nn.Conv2d) for m in net.modules())
    if loaded != expected:
        raise ValueError(f"{path}: {loaded} convolutions, the network has {expected}")
    return net.eval()


def freeze_norm_statistics(net: nn.Module) -> None:
    """Batch norms keep their running statistics while the rest trains (call after every ``net.train()``)."""
    for m in net.modules():
        if isinstance(m, nn.BatchNorm2d):
            m.eval()


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("onnx", type=Path)
    ap.add_argument("out", type=Path, help="a checkpoint for train.py --init")
    args = ap.parse_args(argv)
    net = load_onnx(args.onnx)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    torch.save({"model": net.state_dict(), "from_onnx": str(args.onnx), "frozen_norms": True}, args.out)
    print(args.out)


if __name__ == "__main__":
    main()
