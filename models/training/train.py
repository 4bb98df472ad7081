"""Train the face classifier on the CPU and export it to ``models/dice-faces-<id>.onnx``.

A GPU machine can search recipes faster (``--device cuda --augment-workers N``); the shipped model's recipe
stays one this machine's CPU runs (models/MODEL_CARD.md).

Run with ``python -m models.training.train`` (``make train``). Needs the
``train`` extra (PyTorch, onnx); the reader itself never imports torch.

Data: synthetic faces and rendered frames (``data.py``) plus the ``train``
split of the real photos; 20 of its photos are held out as the validation set
that picks the confidence threshold. The ``test`` split is never read here.
Bounded: a few minutes on one or two cores.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import multiprocessing
import pickle
import time
from collections.abc import Iterator
from typing import Any
from pathlib import Path

import cv2
import numpy as np
import torch
from torch import nn

from companion.core.files import atomic_write
from models.training import data, real_sets
from models.training.augment import augment
from vision.classifier import CROP, file_model_id, prepare
from vision.model_files import MANIFEST, ship

MODELS = Path(__file__).resolve().parents[1]
#: Where a run keeps its data cache and per-epoch checkpoints (gitignored): ``--resume`` picks up from there.
WORK = MODELS.parent / "build" / "classifier"


def _dice_of_style(style_of):
    """The drawer of ``n`` synthetic die crops of one style (``data.synth_face_crops``)."""
    return lambda n, rng: data.synth_face_crops(n, rng, style_of)


#: The drawn crops a run may add (``--other-bodies``, ``--faint-marks``, ``--numerals``, ``--other-marks`` dice of a
#: style; ``--round-things``, ``--table-things``, things that are not dice): each option's crops come from its own random stream (the seed
#: and this number) and drawer, after the data cache, so the cache, and every other source in it, stay the same with
#: or without them.
DRAWN_SOURCES = {"other_bodies": (26, _dice_of_style(data.other_body_style)), "faint_marks": (27, _dice_of_style(data.faint_mark_style)),
                 "numerals": (28, _dice_of_style(data.numeral_style)), "other_marks": (29, _dice_of_style(data.other_marks_style)),
                 "round_things": (30, data.round_thing_crops), "table_things": (31, data.table_thing_crops)}
#: The drawn looks ``--doubted`` may teach as doubt: dice, not the things that are not dice.
DOUBTABLE = tuple(k for k in DRAWN_SOURCES if k not in ("round_things", "table_things"))
#: The sources a run trains on; ``--real-sets`` adds every shared set's train crops (``real_sets.train_crops``), and
#: each of ``DRAWN_SOURCES`` its drawn dice.
BASE_SOURCES = ("real", "faces", "frames", *DRAWN_SOURCES)


class FaceNet(nn.Module):
    """Four 3×3 conv blocks (16-32-64-64 by default) and one linear layer: about 60 k weights.

    With ``separable`` the last that many blocks are depthwise-separable (a 3×3 convolution of each channel alone,
    then a 1×1 across channels, each with its batch norm): the same widths for far fewer multiply-adds, the lever
    for a face model cheaper a crop that keeps the first blocks, where a small die's marks are a pixel or two.
    """

    def __init__(self, widths: tuple[int, int, int, int] = (16, 32, 64, 64), separable: int = 0) -> None:
        super().__init__()
        if not 0 <= separable <= 3:
            raise ValueError("separable is how many of the last blocks are depthwise-separable: 0 to 3 (the first sees the colours)")
        a, b, c, d = widths

        def block(i: int, o: int, pool: bool, split: bool) -> list[nn.Module]:
            if split:
                layers: list[nn.Module] = [nn.Conv2d(i, i, 3, padding=1, groups=i, bias=False), nn.BatchNorm2d(i), nn.ReLU(inplace=True),
                                           nn.Conv2d(i, o, 1, bias=False), nn.BatchNorm2d(o), nn.ReLU(inplace=True)]
            else:
                layers = [nn.Conv2d(i, o, 3, padding=1, bias=False), nn.BatchNorm2d(o), nn.ReLU(inplace=True)]
            return layers + ([nn.MaxPool2d(2)] if pool else [])

        split = [k >= 4 - separable for k in range(4)]
        self.features = nn.Sequential(*block(3, a, True, split[0]), *block(a, b, True, split[1]), *block(b, c, True, split[2]),
                                      *block(c, d, False, split[3]))
        self.head = nn.Sequential(nn.Flatten(), nn.Dropout(0.3), nn.Linear(d * (CROP // 8) ** 2, 7))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.features(x))


class Ensemble(nn.Module):
    """Several nets read each crop; their probabilities are averaged.

    Nets trained from different starts make partly different mistakes, so their
    mean is surer where they agree and less sure where they do not. Two small
    nets in the time of the shipped wide one read fewer held-out dice right
    (docs/classifier-log.md, "Two small nets"): worth trying again only with a
    bigger speed budget. Its output is the log of the mean
    probability, so the runtime's softmax (``FaceClassifier.probabilities``)
    gives back that mean and reads the file as it reads one net's logits.
    """

    def __init__(self, members: list[nn.Module]) -> None:
        super().__init__()
        self.members = nn.ModuleList(members)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        mean = torch.stack([torch.softmax(m(x), 1) for m in self.members]).mean(0)
        return torch.log(mean.clamp_min(1e-7))


def build(rng: np.random.Generator, quick: bool, all_photos: bool = False, real: bool = False, byler_reps: int = 10,
          faces: int = 12000, frames: int = 220,
          side_range: tuple[float, float] = real_sets.SIDE_RANGE, detector_reps: int = 0, detector_model: str = "",
          detector_closer: bool = False) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """The training and validation crops. With ``all_photos`` the 20 held-out photos are trained on too (the
    final fit of a recipe already chosen on them): their validation figures then measure fit, not reading."""
    names = data.split_names()["train"]
    # The held-out photos are drawn with their own seed (``data.fit_and_held_out``); the training rng still
    # takes the draw it once made for them, so that a seed-3 run makes exactly the data it made before.
    rng.permutation(len(names))
    fit_names, val_names = data.fit_and_held_out(names, all_photos)
    t = time.time()
    sets = {
        "real": data.real_crops(fit_names, rng, 4 if quick else byler_reps),
        "faces": data.synth_face_crops(2000 if quick else faces, rng),
        "frames": data.synth_frame_crops(40 if quick else frames, rng),
        "val_real": data.real_crops(val_names, rng, 1),
        "val_synth": data.synth_frame_crops(20 if quick else 60, rng),
    }
    if real:  # every shared set's train split (Byler's fitted photos only), and every val split to watch
        sets.update({f"set_{k}": v for k, v in real_sets.train_crops(rng, fit_names, quick, side_range).items()})
        sets.update(real_sets.val_crops())
    if detector_reps:  # the shipped detector's own proposals on the same train frames, cut as the reader cuts them
        x, y = real_sets.all_detector_crops(fit_names, quick, detector_model, detector_closer)
        sets["set_detector"] = (np.concatenate([x] * detector_reps), np.concatenate([y] * detector_reps))
    for k, (x, y) in sets.items():
        print(f"data {k}: {len(x)} crops, classes {np.bincount(y, minlength=7).tolist()}", flush=True)
    print(f"data built in {time.time() - t:.0f} s", flush=True)
    sets["_names"] = (np.array(val_names), np.array([]))  # type: ignore[assignment]
    return sets


def load_onnx(model: FaceNet, path: Path, x: np.ndarray) -> FaceNet:
    """Start ``model`` from an exported FaceNet (``--init``): the export folded each batch norm into its convolution
    (weight and bias), so the convolutions take those, and each batch norm is set to give back the same function
    on ``x`` (the training crops): its running mean and variance are its input's over ``x``, its scale their
    standard deviation and its shift the mean plus the folded bias. Training then goes on with batch norm as usual."""
    import onnx
    from onnx import numpy_helper

    g = onnx.load(str(path)).graph
    weights = {i.name: numpy_helper.to_array(i) for i in g.initializer}
    # the exporter writes equal tensors once and names the copies by Identity nodes (untrained batch norms' zeros)
    weights.update({n.output[0]: weights[n.input[0]] for n in g.node if n.op_type == "Identity" and n.input[0] in weights})
    convs = [n for n in g.node if n.op_type == "Conv"]
    layers = [m for m in model.features if isinstance(m, nn.Conv2d)]
    norms = [m for m in model.features if isinstance(m, nn.BatchNorm2d)]
    if len(convs) != len(layers):
        raise ValueError(f"{path} is not a FaceNet of this shape: {len(convs)} convolutions, not {len(layers)} "
                         f"(--widths or --separable? its own: {shape_of(path)})")
    with torch.no_grad():
        for node, conv, bn in zip(convs, layers, norms):
            w, b = weights[node.input[1]], weights[node.input[2]]
            if tuple(w.shape) != tuple(conv.weight.shape):
                raise ValueError(f"{path}: a convolution of {tuple(w.shape)}, not {tuple(conv.weight.shape)} (--widths or --separable?)")
            conv.weight.copy_(torch.from_numpy(w))
            bn.weight.fill_(1.0)
            bn.bias.copy_(torch.from_numpy(b))
            bn.running_mean.zero_()
            bn.running_var.fill_(1.0 - bn.eps)
        model.head[2].weight.copy_(torch.from_numpy(weights["head.2.weight"]))
        model.head[2].bias.copy_(torch.from_numpy(weights["head.2.bias"]))
        stats: dict[nn.Module, list[torch.Tensor]] = {bn: [] for bn in norms}
        hooks = [bn.register_forward_hook(lambda m, i, o: stats[m].append(i[0].transpose(0, 1).reshape(i[0].shape[1], -1)))
                 for bn in norms]
        model.eval()
        for i in range(0, min(len(x), 4096), 512):
            model(torch.from_numpy(prepare(x[i:i + 512])))
        for h in hooks:
            h.remove()
        for bn in norms:
            a = torch.cat(stats[bn], 1)
            mean, var = a.mean(1), a.var(1)
            bn.running_mean.copy_(mean)
            bn.running_var.copy_(var)
            bn.bias.add_(mean)
            bn.weight.copy_(torch.sqrt(var + bn.eps))
    return model


def widths_of(path: Path) -> tuple[int, ...]:
    """The ``--widths`` of an exported FaceNet: each block's output channels, in order."""
    return shape_of(path)[0]


def shape_of(path: Path) -> tuple[tuple[int, ...], int]:
    """The ``--widths`` and ``--separable`` of an exported FaceNet: a depthwise convolution (one group a channel)
    and the 1×1 after it are one block, whose width is the 1×1's output channels."""
    import onnx
    from onnx import numpy_helper

    g = onnx.load(str(path)).graph
    weights = {i.name: i for i in g.initializer}
    widths, separable, after_depthwise = [], 0, False
    for n in (n for n in g.node if n.op_type == "Conv"):
        groups = next((a.i for a in n.attribute if a.name == "group"), 1)
        if groups > 1:
            after_depthwise = True
            continue
        widths.append(int(numpy_helper.to_array(weights[n.input[1]]).shape[0]))
        separable = separable + 1 if after_depthwise else 0
        after_depthwise = False
    return tuple(widths), separable


def predict(model: nn.Module, x: np.ndarray) -> np.ndarray:
    model.eval()
    device = next(model.parameters()).device
    with torch.no_grad():
        out = [torch.softmax(model(torch.from_numpy(prepare(x[i:i + 512])).to(device)), 1).cpu().numpy() for i in range(0, len(x), 512)]
    return np.concatenate(out) if out else np.zeros((0, 7), np.float32)


def validation_accuracy(model: nn.Module, sets: dict) -> dict[str, float]:
    """The share of each validation set's crops ``model`` reads right (Byler's held-out photos, synthetic frames,
    and with ``--real-sets`` every shared set's val split); ``sure_wrong``: val dice read wrong at >= 0.97."""
    out, sure_wrong = {}, 0
    for k in sorted(k for k in sets if k.startswith("val_") and len(sets[k][0])):
        p = predict(model, sets[k][0])
        out[k] = round(float((p.argmax(1) == sets[k][1]).mean()), 4)
        sure_wrong += int(((p.argmax(1) != sets[k][1]) & (p.max(1) >= 0.97)).sum())
    out["sure_wrong"] = sure_wrong
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--epochs", type=int, default=14)
    ap.add_argument("--quick", action="store_true", help="a small run to check the pipeline")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--seed", type=int, default=3)
    ap.add_argument("--strong-augment", action="store_true",
                    help="also glints, perspective, resolution loss, blur, JPEG and colour casts per crop")
    ap.add_argument("--all-photos", action="store_true",
                    help="also train on the 20 held-out photos: the final fit of a recipe chosen on them (docs/classifier-log.md)")
    ap.add_argument("--out", type=Path, default=MODELS, help="folder for the .onnx file and validation.json (compare before shipping)")
    ap.add_argument("--widths", type=lambda t: tuple(int(v) for v in t.split(",")), default=(16, 32, 64, 64),
                    help="channels of the four conv blocks, e.g. 16,32,64,64 (wider only if 3 crops stay <= 1 ms on one thread)")
    ap.add_argument("--separable", type=int, default=0,
                    help="make the last N of the four blocks depthwise-separable (0 to 3; FaceNet): fewer multiply-adds a crop")
    ap.add_argument("--members", type=int, default=1,
                    help="train this many nets on the same data from different starts and ship their mean (one file; "
                         "its speed and size are the members' summed)")
    ap.add_argument("--real-sets", action="store_true",
                    help="also train on every shared real set's train split (models/training/real_sets.py) and watch every val split")
    ap.add_argument("--side-range", type=lambda t: tuple(float(v) for v in t.split(",")), default=real_sets.SIDE_RANGE,
                    help="LO,HI: the real sets' dice cut at their side times a scale drawn from this range (real_sets.jittered)")
    ap.add_argument("--detector-reps", type=int, default=0,
                    help="also train on the shipped detector's proposals on every real train frame, cut as the reader cuts "
                         "them (real_sets.detector_crops), this many times over (augmented afresh each time)")
    ap.add_argument("--detector-model", default="", help="with --detector-reps: this detector's ONNX file instead of the shipped one "
                    "(a classifier for a detector not shipped yet)")
    ap.add_argument("--detector-closer", action="store_true",
                    help="with --detector-reps: its closer look's proposals too, where the reader would take one (small dice)")
    ap.add_argument("--byler-reps", type=int, default=10, help="jittered copies of each fitted Byler die (data.real_crops)")
    ap.add_argument("--faces", type=int, default=12000, help="synthetic single-die crops")
    ap.add_argument("--frames", type=int, default=220, help="synthetic whole frames run through the finder")
    ap.add_argument("--init", type=Path, help="start from this exported FaceNet (.onnx) instead of random weights (fine-tuning)")
    ap.add_argument("--label-smoothing", type=float, default=0.02,
                    help="cross-entropy label smoothing; it caps the model's confidence near 1 - smoothing")
    ap.add_argument("--lr", type=float, default=3e-3, help="the one-cycle schedule's peak learning rate")
    ap.add_argument("--stop-after", type=int, help="export after this epoch of the --epochs schedule (a run cut short; with --resume, "
                                                     "its last checkpoint is exported as it is)")
    ap.add_argument("--repeat", type=parse_repeats, default={},
                    help="SOURCE=N[,SOURCE=N]: show these sources' crops N times an epoch (augmented afresh each time), "
                         "e.g. set_rune55-tray=3; the data cache is shared with runs without it")
    ap.add_argument("--leave-out", type=real_sets.set_names, default=(),
                    help="SET[,SET]: train without any crop of these shared sets (e.g. real-dice-patterson): their train "
                         "crops and the detector's crops of their frames, to see how the recipe reads dice it never saw "
                         "(docs/classifier-log.md, 'Dice never seen'); the data cache is shared with runs without it")
    ap.add_argument("--squash", type=float, default=0.0,
                    help="this share of the training crops is narrowed along one axis turned any way (augment.squash)")
    ap.add_argument("--invert", type=float, default=0.0,
                    help="this share of the training crops is turned to its negative: dark dice with light marks (augment.invert)")
    ap.add_argument("--glint-size", type=float, default=1.0,
                    help="the glints' dots scaled by this (augment.specular): below 1, smaller than a dark die's small light pips")
    ap.add_argument("--motion-blur", type=float, default=0.0,
                    help="this share of the strongly augmented crops is smeared as by a shaken camera (augment.smear)")
    ap.add_argument("--camera-tone", type=float, default=0.0,
                    help="this share of the strongly augmented crops is given a phone's tone curve and sharpening (augment.phone_tone)")
    ap.add_argument("--other-bodies", type=int, default=0,
                    help="also train on this many synthetic crops of swirled and translucent dice (data.other_body_style), "
                         "drawn after the data cache from their own random stream, so the cache is shared with runs without them")
    ap.add_argument("--faint-marks", type=int, default=0,
                    help="also train on this many synthetic crops of dice with one mark faint (data.faint_mark_style), labelled "
                         "with every mark; drawn after the data cache from their own random stream, as --other-bodies")
    ap.add_argument("--numerals", type=int, default=0,
                    help="also train on this many synthetic crops of dice printed with their number (data.numeral_style), "
                         "labelled with it; drawn after the data cache from their own random stream, as --other-bodies")
    ap.add_argument("--other-marks", type=int, default=0,
                    help="also train on this many synthetic crops of dice with shaped marks or a big emblem for the one "
                         "(data.other_marks_style), labelled with their count; drawn as --other-bodies")
    ap.add_argument("--round-things", type=int, default=0,
                    help="also train on this many synthetic crops of round things that are not dice (data.round_thing_crops: "
                         "shiny balls, glass beads, marbles, flat discs), labelled not a die; drawn as --other-bodies")
    ap.add_argument("--table-things", type=int, default=0,
                    help="also train on this many synthetic crops of things on a games table that are not dice "
                         "(data.table_thing_crops: round things, printed tiles and card corners, toy bricks' studded "
                         "tops), labelled not a die; drawn as --other-bodies")
    ap.add_argument("--hard-repeat", type=int, default=0,
                    help="with --init: show the training crops that model reads with their own face under HARD_BELOW "
                         "this many more times an epoch (hard examples; augmented afresh each time)")
    ap.add_argument("--keep-answers", type=float, default=0.0,
                    help="with --init: add this weight times the divergence of the net's answers from the --init model's "
                         "on every crop but the new looks' (--numerals, --other-marks, ...), so a fine-tune that teaches "
                         "new dice keeps the old model's sureness on the dice it knew (0: off, as the shipped recipe)")
    ap.add_argument("--teacher", type=Path,
                    help="with --keep-answers: keep this exported FaceNet's answers (of any widths, read from the file) "
                         "instead of --init's, so a narrower net, from --init or from random weights, learns what a "
                         "wider one reads (distillation; docs/classifier-log.md, 'A narrower net taught by the shipped one')")
    ap.add_argument("--doubted", type=lambda t: tuple(v for v in t.split(",") if v), default=(),
                    help="SOURCE[,SOURCE]: teach these drawn looks (e.g. numerals) as doubt, an even spread over the six "
                         "faces, instead of their value: dice the net cannot tell apart from the game's are read unsure "
                         "(the table confirms them) rather than learned (docs/classifier-log.md, 'Keeping the old answers')")
    ap.add_argument("--ema", type=float, default=0.0,
                    help="keep a moving average of the weights, each step's weight 1 - EMA (e.g. 0.998), and export it "
                         "instead of the last step's weights (0: the last step's, as the shipped recipe)")
    ap.add_argument("--work", type=Path, default=WORK, help="folder for the data cache and the per-epoch checkpoints")
    ap.add_argument("--device", default="cpu", help="where the net trains: cpu, or cuda on a GPU machine (a recipe search; "
                    "the shipped model is made on the CPU; docs/classifier-log.md, 'A recipe search on a GPU machine')")
    ap.add_argument("--augment-workers", type=int, default=0,
                    help="augment the batches in this many processes, each batch from its own seed (seed, epoch, batch): "
                         "another random stream than the default's one, the same for any number of workers")
    ap.add_argument("--resume", action="store_true", help="continue from the last checkpoint in --work of a run with the same arguments")
    args = ap.parse_args(argv)
    if not 0 <= args.separable <= 3:
        ap.error("--separable is how many of the last blocks are depthwise-separable: 0 to 3 (the first block stays whole)")
    if args.augment_workers < 0:
        ap.error("--augment-workers is a number of processes: 0 (augment in this one) or more")
    can_leave_out = sorted(set(real_sets.FRAME_SETS) | set(real_sets.CROP_SETS))
    if set(args.leave_out) - set(can_leave_out):
        ap.error(f"--leave-out names a set training cannot leave out: {', '.join(sorted(set(args.leave_out) - set(can_leave_out)))} "
                 f"(it can: {', '.join(can_leave_out)}; Byler's photos make the base model)")
    if args.leave_out and args.quick:
        ap.error("--leave-out needs the whole run's data, not --quick's sample of frames")
    for name in DRAWN_SOURCES:
        if getattr(args, name) < 0:
            ap.error(f"--{name.replace('_', '-')} is a number of crops: 0 (none) or more")
    if args.hard_repeat < 0 or (args.hard_repeat and not args.init):
        ap.error("--hard-repeat is a number of extra showings (0 or more) of the crops the --init model reads badly: it needs --init")
    if set(args.doubted) - set(DOUBTABLE) or any(not getattr(args, k) for k in args.doubted):
        ap.error(f"--doubted names drawn looks the run adds: one or more of {', '.join(DOUBTABLE)}, each with its count "
                 f"(e.g. --numerals 3000 --doubted numerals)")
    if args.keep_answers < 0 or (args.keep_answers and not (args.init or args.teacher)):
        ap.error("--keep-answers is the weight (0 or more) of the --init model's answers: it needs --init (or a --teacher)")
    if args.teacher and not args.keep_answers:
        ap.error("--teacher's answers are kept with the weight --keep-answers gives (e.g. --keep-answers 1)")
    if args.teacher and not args.teacher.is_file():
        ap.error(f"--teacher {args.teacher} is not a file: give an exported FaceNet (.onnx)")
    if not 0 <= args.ema < 1:
        ap.error("--ema is the average's decay per step: 0 (no average) or more, under 1 (e.g. 0.998)")
    try:
        device = torch.device(args.device)
    except RuntimeError:
        ap.error(f"--device {args.device!r} is not a device torch knows (cpu, cuda, cuda:1, ...)")
    if device.type == "cuda" and not torch.cuda.is_available():
        ap.error(f"--device {args.device} needs a GPU that this torch can use; none is here (train with --device cpu)")
    torch.set_num_threads(args.threads)
    cv2.setNumThreads(1)  # rendering is many small images: OpenCV's thread pool only adds contention
    torch.manual_seed(args.seed)
    rng = np.random.default_rng(args.seed)
    sets = cached_build(rng, args)
    for name, (stream, draw) in DRAWN_SOURCES.items():
        if getattr(args, name):
            sets[name] = draw(getattr(args, name), np.random.default_rng([args.seed, stream]))
    sources = [k for k in sets if k in BASE_SOURCES or k.startswith("set_")]
    unknown = sorted(set(args.repeat) - set(sources))
    if unknown:
        ap.error(f"--repeat names no training source: {', '.join(unknown)} (there are: {', '.join(sources)})")
    if args.leave_out:
        spans = ({name: real_sets.detector_crop_span(name, args.detector_model, args.detector_closer) for name in args.leave_out}
                 if "set_detector" in sets else {})  # without --detector-reps there are no detector crops to find
        sets = without_sets(sets, args.leave_out, spans, max(1, args.detector_reps))
        print(f"left out {', '.join(args.leave_out)}: the detector's crops of their frames at {spans} from the end", flush=True)
        sources = [k for k in sources if k in sets]
    x = np.concatenate([sets[k][0] for k in sources for _ in range(args.repeat.get(k, 1))])
    y = np.concatenate([sets[k][1] for k in sources for _ in range(args.repeat.get(k, 1))])
    origin = np.concatenate([np.full(len(sets[k][1]), k) for k in sources for _ in range(args.repeat.get(k, 1))])  # each crop's source
    if args.hard_repeat:
        hard = hard_examples(args.init, x, y)
        x = np.concatenate([x] + [x[hard]] * args.hard_repeat)
        y = np.concatenate([y] + [y[hard]] * args.hard_repeat)
        origin = np.concatenate([origin] + [origin[hard]] * args.hard_repeat)
        print(f"{int(hard.sum())} hard crops (read under {HARD_BELOW} by {args.init.name}) shown {args.hard_repeat} more times", flush=True)
    known, doubted = ~np.isin(origin, list(DRAWN_SOURCES)), np.isin(origin, list(args.doubted))
    print(f"training on {len(x)} crops, classes {np.bincount(y, minlength=7).tolist()}", flush=True)
    members = []
    # --init's and --teacher's batch norms are set on these
    sample = x[np.random.default_rng(args.seed).permutation(len(x))[:4096]] if args.init or args.teacher else None
    for k in range(args.members):
        torch.manual_seed(args.seed + 1000 * k)  # member 0 starts exactly as a one-net run of this seed
        net = FaceNet(args.widths, args.separable)
        if args.init:
            load_onnx(net, args.init, sample)
            print(f"started from {args.init}: val {validation_accuracy(net, sets)}", flush=True)
        teacher = (load_onnx(FaceNet(*shape_of(args.teacher)), args.teacher, sample) if args.teacher
                   else load_onnx(FaceNet(args.widths, args.separable), args.init, sample) if args.keep_answers else None)
        members.append(fit(net, x, y, sets, rng, args, f"net {k + 1}/{args.members} " if args.members > 1 else "",
                           teacher, known, doubted if doubted.any() else None))
    model = members[0] if args.members == 1 else Ensemble(members)
    if args.members > 1:
        accs = validation_accuracy(model, sets)
        print(f"the {args.members} nets together: val {accs}", flush=True)
    export(model, sets, args.out, args.all_photos)
    return 0


#: ``--hard-repeat``: a crop is hard where the starting model gives its own face less than this probability.
HARD_BELOW = 0.5


def hard_examples(model_file: Path, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Which of the crops ``x`` (faces ``y``) the exported classifier ``model_file`` reads with their own face under
    ``HARD_BELOW``: the wrong and the nearly wrong, as it reads them in use (onnxruntime, no augmentation)."""
    from vision.classifier import FaceClassifier

    classifier = FaceClassifier(str(model_file))
    p = np.concatenate([classifier.probabilities(x[i:i + 1024]) for i in range(0, len(x), 1024)]) if len(x) else np.zeros((0, 7))
    return p[np.arange(len(y)), y] < HARD_BELOW


def without_sets(sets: dict, names: tuple[str, ...], detector_spans: dict[str, tuple[int, int]], copies: int = 1) -> dict:
    """``sets`` without any crop of the shared sets ``names`` (``real-dice-skovy``): their sources (``set_skovy``,
    ``set_skovy-crops``) and, in each of the ``copies`` of ``set_detector`` (``--detector-reps``), the detector's
    crops of their frames (``detector_spans[name]``: ``real_sets.detector_crop_span``). The val sets stay, to watch.

    >>> import numpy as np
    >>> sets = {"set_skovy": 1, "set_skovy-crops": 2, "set_rune55-tray": 3, "val_skovy": 4,
    ...         "set_detector": (np.arange(10), np.arange(10) % 7)}
    >>> out = without_sets(sets, ("real-dice-skovy",), {"real-dice-skovy": (2, 1)}, copies=2)
    >>> sorted(out), out["set_detector"][0].tolist()
    (['set_detector', 'set_rune55-tray', 'val_skovy'], [0, 1, 2, 4, 5, 6, 7, 9])
    """
    out = dict(sets)
    for name in names:
        short = name.removeprefix("real-dice-")
        for k in [k for k in out if k == f"set_{short}" or k.startswith(f"set_{short}-")]:
            del out[k]
        first, last = detector_spans.get(name, (0, 0))
        if "set_detector" in out and first > last:
            x, y = out["set_detector"]
            n = len(x) // copies
            keep = np.ones(len(x), bool)
            for c in range(copies):
                keep[(c + 1) * n - first:(c + 1) * n - last] = False
            out["set_detector"] = (x[keep], y[keep])
    return out


def parse_repeats(text: str) -> dict[str, int]:
    """``--repeat``'s ``SOURCE=N,SOURCE=N`` as a dict.

    >>> parse_repeats("set_rune55-tray=3,set_skovy=2")
    {'set_rune55-tray': 3, 'set_skovy': 2}
    """
    out = {}
    for part in filter(None, text.split(",")):
        name, _, n = part.partition("=")
        if not n.isdigit() or int(n) < 1:
            raise argparse.ArgumentTypeError(f"{part!r} is not SOURCE=N with N a whole number from 1")
        out[name.strip()] = int(n)
    return out


#: The arguments that decide a run's crops (``build``): runs that share them share the data cache.
DATA_ARGS = ("seed", "quick", "all_photos", "real_sets", "byler_reps", "faces", "frames", "side_range", "detector_reps", "detector_model",
             "detector_closer")


def run_key(args: argparse.Namespace, only: tuple[str, ...] | None = None) -> str:
    """The arguments that decide a run's training (or with ``only``, those named), hashed: a checkpoint of
    another run is never reused."""
    keep = {k: v for k, v in sorted(vars(args).items())
            if k not in ("threads", "out", "work", "resume", "stop_after", "device") and (only is None or k in only)
            and not (k in ("detector_model", "repeat", "squash", "invert", "detector_closer", "augment_workers", "motion_blur", "camera_tone", "ema", "leave_out", *DRAWN_SOURCES, "hard_repeat", "keep_answers", "doubted", "teacher", "separable") and not v)
            and not (k == "glint_size" and v == 1.0)}  # runs from before these options keep their keys
    if keep.get("augment_workers"):
        keep["augment_workers"] = True  # per-batch seeds: the stream is the same for any number of workers
    return hashlib.sha256(repr(keep).encode()).hexdigest()[:10]


def cached_build(rng: np.random.Generator, args: argparse.Namespace) -> dict:
    """``build``'s crops, kept in ``--work`` (with the random state after them) so a resumed run skips making them."""
    path = args.work / f"data-{run_key(args, DATA_ARGS)}.pkl"
    if args.resume and path.exists():
        sets, state = pickle.loads(path.read_bytes())
        rng.bit_generator.state = state
        print(f"data from {path}", flush=True)
        return sets
    sets = build(rng, args.quick, args.all_photos, args.real_sets, args.byler_reps, args.faces, args.frames, args.side_range, args.detector_reps, args.detector_model,
                 args.detector_closer)
    args.work.mkdir(parents=True, exist_ok=True)
    atomic_write(path, pickle.dumps((sets, rng.bit_generator.state), protocol=4))
    return sets


def fit(model: nn.Module, x: np.ndarray, y: np.ndarray, sets: dict, rng: np.random.Generator, args: argparse.Namespace,
        label: str = "", teacher: nn.Module | None = None, known: np.ndarray | None = None,
        doubted: np.ndarray | None = None) -> nn.Module:
    """Train one net on (x, y) with the recipe's optimiser, schedule and augmentation; print validation per epoch.

    With a ``teacher`` (``--keep-answers``) each batch's loss adds the divergence of the net's answers from the
    teacher's on the crops ``known`` marks (the looks the teacher was taught): teaching a new look moves the net's
    answers on the old dice only as far as the new look needs, where plain fine-tuning lets them drift
    (docs/classifier-log.md, "Keeping the old answers"). The crops ``doubted`` marks (``--doubted``) are taught an even
    spread over the six faces instead of their label.

    With ``--ema`` the net returned is the moving average of its weights over the steps (batch-norm statistics
    averaged too), not the last step's: the last step's weights carry the last batches' noise, which is much of
    what makes one seed read a real set better or worse than another."""
    device = torch.device(args.device)
    model.to(device)  # before the optimiser and a resumed checkpoint, so that their state lies where the weights do
    if teacher is not None:
        teacher.to(device)
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=1e-4)
    steps = args.epochs * (len(x) // 128)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=args.lr, total_steps=max(1, steps))
    loss_fn = nn.CrossEntropyLoss(label_smoothing=args.label_smoothing)
    t = time.time()
    ckpt = args.work / f"checkpoint-{run_key(args)}-{label.strip().replace('/', 'of').replace(' ', '') or 'net'}.pt"
    start = 0
    average = (torch.optim.swa_utils.AveragedModel(model, multi_avg_fn=torch.optim.swa_utils.get_ema_multi_avg_fn(args.ema),
                                                   use_buffers=True) if args.ema else None)
    if args.resume and ckpt.exists():
        state = torch.load(ckpt, weights_only=False, map_location=device)
        model.load_state_dict(state["model"])
        opt.load_state_dict(state["opt"])
        sched.load_state_dict(state["sched"])
        if average is not None:
            average.load_state_dict(state["average"])
        rng.bit_generator.state = state["rng"]
        torch.set_rng_state(state["torch_rng"].cpu())  # map_location moved it with the rest; the generator is the CPU's
        start = state["epoch"]
        print(f"{label}resumed after epoch {start} from {ckpt}", flush=True)
    for epoch in range(start, min(args.epochs, args.stop_after or args.epochs)):
        model.train()
        perm = rng.permutation(len(x))
        total = 0.0
        starts = range(0, len(perm) - 127, 128)
        for i, xb in zip(starts, augmented_batches(x, perm, starts, epoch, rng, args)):
            idx = perm[i:i + 128]
            batch = torch.from_numpy(xb).to(device)
            logits = model(batch)
            if doubted is not None and doubted[idx].any():
                loss = doubt_loss(logits, torch.from_numpy(y[idx]).to(device), torch.from_numpy(doubted[idx]).to(device), loss_fn)
            else:
                loss = loss_fn(logits, torch.from_numpy(y[idx]).to(device))
            if teacher is not None and known is not None and known[idx].any():
                loss = loss + args.keep_answers * kept_answers_loss(logits, teacher, batch, torch.from_numpy(known[idx]).to(device))
            opt.zero_grad()
            loss.backward()
            opt.step()
            sched.step()
            if average is not None:
                average.update_parameters(model)
            total += float(loss.detach()) * len(idx)
        accs = validation_accuracy(model if average is None else average.module, sets)
        print(f"{label}epoch {epoch + 1}: loss {total / len(x):.4f} val {accs} ({time.time() - t:.0f} s)", flush=True)
        args.work.mkdir(parents=True, exist_ok=True)
        torch.save({"model": model.state_dict(), "opt": opt.state_dict(), "sched": sched.state_dict(), "epoch": epoch + 1,
                    **({"average": average.state_dict()} if average is not None else {}), "rng": rng.bit_generator.state, "torch_rng": torch.get_rng_state()}, ckpt.with_suffix(".tmp"))
        ckpt.with_suffix(".tmp").replace(ckpt)
    return model if average is None else average.module


def doubt_loss(logits: torch.Tensor, y: torch.Tensor, doubted: torch.Tensor, loss_fn: nn.Module) -> torch.Tensor:
    """The batch's mean loss: ``loss_fn`` on its labels for most crops, and for the ``doubted`` ones the cross-entropy
    to an even spread over the six faces (classes 1-6; "not a die" gets nothing: a doubted crop is a die)."""
    even = torch.zeros(1, logits.shape[1], device=logits.device)
    even[0, 1:] = 1.0 / (logits.shape[1] - 1)
    n = len(y)
    parts = logits.new_zeros(())
    if (~doubted).any():
        parts = parts + loss_fn(logits[~doubted], y[~doubted]) * int((~doubted).sum())
    spread = -(torch.log_softmax(logits[doubted], 1) * even).sum(1).sum()
    return (parts + spread) / n


def kept_answers_loss(logits: torch.Tensor, teacher: nn.Module, batch: torch.Tensor, known: torch.Tensor) -> torch.Tensor:
    """The mean divergence KL(teacher || net) of the net's answers over the ``known`` crops of a batch.

    The teacher reads in evaluation mode (its batch norms fixed, no dropout) and is never trained."""
    teacher.eval()
    with torch.no_grad():
        target = torch.log_softmax(teacher(batch[known]), 1)
    return nn.functional.kl_div(torch.log_softmax(logits[known], 1), target, log_target=True, reduction="batchmean")


#: The crops the augmentation workers read: set before the pool forks, so each worker has them without a copy.
_POOL_CROPS: np.ndarray | None = None


def augment_options(args: argparse.Namespace) -> dict[str, Any]:
    """The augmentation a run asks for, as ``augment``'s keyword arguments."""
    return {"strong": args.strong_augment, "squashed": args.squash, "inverted": args.invert, "glint_size": args.glint_size,
            "motion_blur": args.motion_blur, "camera_tone": args.camera_tone}


def _augment_batch(job: tuple[np.ndarray, int, int, int, dict[str, Any]]) -> np.ndarray:
    idx, seed, epoch, batch, options = job
    assert _POOL_CROPS is not None
    return prepare(augment(_POOL_CROPS[idx], np.random.default_rng((seed, epoch, batch)), **options))


def augmented_batches(x: np.ndarray, perm: np.ndarray, starts: range, epoch: int, rng: np.random.Generator,
                      args: argparse.Namespace) -> Iterator[np.ndarray]:
    """The epoch's batches, augmented and prepared, in order. Without workers they take the run's one random
    stream, as the shipped recipe was made; with ``--augment-workers`` each batch has its own seed, so that a
    GPU, which waits on the augmentation, is kept fed by several processes (a recipe search, not the shipped stream)."""
    options = augment_options(args)
    if not args.augment_workers:
        for i in starts:
            yield prepare(augment(x[perm[i:i + 128]], rng, **options))
        return
    global _POOL_CROPS
    _POOL_CROPS = x
    jobs = ((perm[i:i + 128], args.seed, epoch, n, options) for n, i in enumerate(starts))
    with multiprocessing.get_context("fork").Pool(args.augment_workers) as pool:
        yield from pool.imap(_augment_batch, jobs, chunksize=4)


def write_onnx(model: nn.Module, path: Path) -> None:
    """The net as the reader loads it: one input ``crops`` (any number of 40×40 crops), one output ``logits``."""
    torch.onnx.export(model, torch.zeros(1, 3, CROP, CROP), str(path), dynamo=False, opset_version=17,
                      input_names=["crops"], output_names=["logits"], dynamic_axes={"crops": {0: "n"}, "logits": {0: "n"}})


def export(model: nn.Module, sets: dict, out: Path = MODELS, fit_on_held_out: bool = False) -> Path:
    """Write the ONNX file named by its hash, remove older ones, and save validation figures."""
    model.eval().cpu()
    out.mkdir(parents=True, exist_ok=True)
    (out / "training").mkdir(exist_ok=True)
    tmp = out / "dice-faces-new.onnx.tmp"
    write_onnx(model, tmp)
    model_id = file_model_id(tmp)
    final = out / f"{model_id}.onnx"
    shipping = (out / MANIFEST).is_file()  # into a models folder: the new file is named in its shipped.json
    if not shipping:
        for old in out.glob("dice-faces-*.onnx"):
            old.unlink()
    atomic_write(final, tmp.read_bytes())
    tmp.unlink()
    if shipping:
        ship(final, "faces")
    val = {}
    for k in ("val_real", "val_synth"):
        p = predict(model, sets[k][0])
        val[k] = {"n": int(len(p)), "probabilities": p.round(5).tolist(), "labels": sets[k][1].tolist()}
    (out / "training" / "validation.json").write_text(json.dumps({"model": model_id, "val_names": sets["_names"][0].tolist(),
                                                                        "fit_on_held_out": fit_on_held_out, **val}))
    print(f"wrote {final} ({final.stat().st_size} bytes)")
    return final


if __name__ == "__main__":
    raise SystemExit(main())
