"""The detector network (PyTorch), its loss, and its export to ONNX.

A grey image goes down five stride-2 steps (to 1/32: a die of 70 % of the frame still lies inside
what one cell sees) with cheap depthwise-separable blocks, and comes back up by nearest upsampling
and 1×1 lateral joins to 1/``STRIDE``, where one small head gives the six maps of
``vision.detector_learned``. Most of the weights sit at the coarse levels, where they cost little
time; the full-resolution levels are thin, so a 1280×960 frame (256×192 at the input) runs in a few
milliseconds on one core.
"""

from __future__ import annotations

import warnings

import torch
import torch.nn.functional as F
from torch import nn

from vision.detector_learned import CHANNELS


def cbr(cin: int, cout: int, stride: int = 1) -> nn.Sequential:
    return nn.Sequential(nn.Conv2d(cin, cout, 3, stride, 1, bias=False), nn.BatchNorm2d(cout), nn.ReLU(inplace=True))


class Separable(nn.Module):
    """A residual depthwise 3×3 (dilated when asked, to see further) and pointwise 1×1 block."""

    def __init__(self, c: int, dilation: int = 1) -> None:
        super().__init__()
        self.dw = nn.Conv2d(c, c, 3, 1, dilation, dilation=dilation, groups=c, bias=False)
        self.bn1 = nn.BatchNorm2d(c)
        self.pw = nn.Conv2d(c, c, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(c)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = F.relu(self.bn1(self.dw(x)))
        return F.relu(x + self.bn2(self.pw(y)))


class DiceDetector(nn.Module):
    def __init__(self, widths: tuple[int, int, int, int, int] = (8, 16, 32, 64, 96), neck: int = 32) -> None:
        super().__init__()
        w1, w2, w3, w4, w5 = widths
        self.s2 = cbr(1, w1, 2)
        self.s4 = nn.Sequential(cbr(w1, w2, 2), Separable(w2))
        self.s8 = nn.Sequential(cbr(w2, w3, 2), Separable(w3), Separable(w3))
        self.s16 = nn.Sequential(cbr(w3, w4, 2), Separable(w4), Separable(w4, 2))
        self.s32 = nn.Sequential(cbr(w4, w5, 2), Separable(w5), Separable(w5, 2), Separable(w5, 4))
        self.lat32 = nn.Conv2d(w5, neck, 1)
        self.lat16 = nn.Conv2d(w4, neck, 1)
        self.lat8 = nn.Conv2d(w3, neck, 1)
        self.lat4 = nn.Conv2d(w2, neck, 1)
        self.up16, self.up8, self.up4 = Separable(neck), Separable(neck), Separable(neck)
        self.head = nn.Sequential(Separable(neck), nn.Conv2d(neck, CHANNELS, 1))
        nn.init.constant_(self.head[1].bias, 0.0)
        with torch.no_grad():
            self.head[1].bias[0] = -4.0  # centres are rare: start the heat near 0.02

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """1×H×W normalised grey (H, W multiples of 32) -> 6×H/4×W/4 raw maps (heat logit first)."""
        c4 = self.s4(self.s2(x))
        c8 = self.s8(c4)
        c16 = self.s16(c8)
        c32 = self.s32(c16)
        p = self.lat32(c32)
        p = self.up16(F.interpolate(p, scale_factor=2.0, mode="nearest") + self.lat16(c16))
        p = self.up8(F.interpolate(p, scale_factor=2.0, mode="nearest") + self.lat8(c8))
        p = self.up4(F.interpolate(p, scale_factor=2.0, mode="nearest") + self.lat4(c4))
        return self.head(p)


class Exported(nn.Module):
    """What the ONNX file computes: heat (sigmoid), its 3×3 maximum (peaks are where they are equal),
    and the geometry maps (log side, cos 4θ, sin 4θ normalised to a unit vector, offsets)."""

    def __init__(self, net: DiceDetector) -> None:
        super().__init__()
        self.net = net

    def forward(self, x: torch.Tensor):
        out = self.net(x)
        heat = torch.sigmoid(out[:, :1])
        peaks = F.max_pool2d(heat, 3, 1, 1)
        return heat, peaks, out[:, 1:]


def loss(out: torch.Tensor, heat: torch.Tensor, reg: torch.Tensor, wt: torch.Tensor) -> tuple[torch.Tensor, dict[str, float]]:
    """CenterNet's focal loss on the heat, L1 on the geometry at the dice's centre cells.

    Side: a rendered die's side is known; a real die's box is, so its predicted square's box
    (side × (|cos θ| + |sin θ|), θ the predicted angle held fixed) is compared with the box's short side
    instead. Angle: rendered dice only."""
    logit = out[:, :1]
    p = torch.sigmoid(logit).clamp(1e-4, 1 - 1e-4)
    pos = heat.eq(1).float()
    neg = 1 - pos
    pos_loss = -(torch.log(p) * (1 - p) ** 2 * pos).sum()
    neg_loss = -(torch.log(1 - p) * p**2 * (1 - heat) ** 4 * neg).sum()
    n = pos.sum().clamp(min=1.0)
    focal = (pos_loss + neg_loss) / n

    exact = reg[:, 5:6]
    wsum = wt.sum().clamp(min=1.0)
    cos4, sin4 = out[:, 2:3], out[:, 3:4]
    theta = torch.atan2(sin4, cos4).detach() / 4
    spread = torch.log(theta.cos().abs() + theta.sin().abs())
    side_err = torch.where(exact > 0, (out[:, 1:2] - reg[:, 0:1]).abs(), (out[:, 1:2] + spread - reg[:, 0:1]).abs())
    side = (side_err * wt).sum() / wsum
    aw = wt * exact
    angle = ((cos4 - reg[:, 1:2]).abs() + (sin4 - reg[:, 2:3]).abs()).mul(aw).sum() / aw.sum().clamp(min=1.0)
    offset = ((out[:, 4:6] - reg[:, 3:5]).abs() * wt).sum() / wsum
    total = focal + side + 0.5 * angle + 0.5 * offset
    return total, {"focal": focal.item(), "side": side.item(), "angle": angle.item(), "offset": offset.item()}


def export(net: DiceDetector, path, metadata: dict[str, str]) -> None:
    """Write the ONNX file (opset 17, any input size a multiple of 32) with ``metadata`` in it."""
    import onnx

    net = net.eval()
    wrapped = Exported(net).eval()
    dummy = torch.zeros(1, 1, 192, 256)
    with warnings.catch_warnings():  # the TorchScript exporter is chosen on purpose: it folds to plain opset-17 ops
        warnings.simplefilter("ignore", DeprecationWarning)
        torch.onnx.export(wrapped, dummy, str(path), dynamo=False, opset_version=17, input_names=["grey"],
                          output_names=["heat", "peaks", "geometry"], do_constant_folding=True,
                          dynamic_axes={"grey": {2: "h", 3: "w"}, "heat": {2: "gh", 3: "gw"}, "peaks": {2: "gh", 3: "gw"}, "geometry": {2: "gh", 3: "gw"}})
    model = onnx.load(str(path))
    for k, v in metadata.items():
        entry = model.metadata_props.add()
        entry.key, entry.value = k, v
    onnx.save(model, str(path))
