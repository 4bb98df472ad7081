"""Train the dice detector: seeded, resumable, CPU only.

    python -m models.training.detector.train --epochs 24 --steps 110 --export models

Rendered frames (``synth``) are drawn once into a cache under ``--work`` (gitignored ``build/``) and
reused; real photos (``real``, train splits) are zoomed and cut afresh for every sample. Each epoch
ends with the validation splits (every real set's ``val``, and held-out rendered frames): the epoch
with the best mean F1 over those sets is kept, with the score threshold that gave it. ``--resume``
goes on from the last finished epoch. ``--export DIR`` writes the kept model as
``DIR/dice-detector-<id>.onnx`` with its threshold inside. ``--leave-out real-dice-rune55`` (or ``-skovy``) trains
without one shared set's photos, to read it with a reader that never saw it (``real.sets_without``).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import multiprocessing as mp
import os
import shutil
import sys
import time
from pathlib import Path

import numpy as np
import torch

from models.training.detector import from_onnx, real, samples, synth
from models.training.detector.metrics import Tally
from models.training.detector.net import DiceDetector, Exported, export, loss
from models.training.real_sets import set_names
from vision.detector_learned import NET_SIDE, decode, net_input
from vision.model_files import ship

#: The real sets' shares of the real samples (rune55's cup frames are many but redundant).
REAL_MIX = {"byler": 0.35, "rune55-tray": 0.3, "rune55-cup": 0.2, "skovy": 0.15}
THRESHOLDS = tuple(round(t, 2) for t in np.arange(0.1, 0.75, 0.05))

_CROPS = None


def _init(crops) -> None:
    global _CROPS
    _CROPS = crops


def _render(seed_index: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray]:
    return synth.render(np.random.default_rng(seed_index), _CROPS, clusters=len(seed_index) == 3)


def synth_cache(work: Path, seed: int, n: int, crops, workers: int, clusters: bool = False, tag: str = "") -> dict[str, np.ndarray]:
    """``n`` rendered frames for seed ``seed`` (frame i from the generator seeded (seed, i)), cached.

    ``clusters``: frames of touching small dice (``synth.render(clusters=True)``), seeded (seed, i, 1).
    ``tag`` names the real dice pasted in when they are not every set's (``--leave-out``), so the caches differ.
    """
    path = work / (f"synth-clusters-{seed}-{n}{tag}.npz" if clusters else f"synth-{seed}-{n}{tag}.npz")
    if not path.exists():
        t = time.time()
        with mp.get_context("fork").Pool(workers, _init, (crops,)) as pool:
            out = pool.map(_render, [(seed, i, 1) if clusters else (seed, i) for i in range(n)], chunksize=32)
        imgs = np.zeros((n, NET_SIDE, NET_SIDE), np.uint8)
        hw = np.zeros((n, 2), np.int32)
        for i, (img, _) in enumerate(out):
            imgs[i, : img.shape[0], : img.shape[1]] = img
            hw[i] = img.shape
        offsets = np.cumsum([0] + [len(d) for _, d in out])
        dice = np.concatenate([d for _, d in out]) if n else np.zeros((0, 7), np.float32)
        tmp = path.with_suffix(".tmp.npz")
        np.savez(tmp, imgs=imgs, hw=hw, offsets=offsets, dice=dice)
        tmp.rename(path)
        print(f"rendered {n} frames in {time.time() - t:.0f} s -> {path}", flush=True)
    z = np.load(path)
    return {k: z[k] for k in z.files}


def synth_frame(cache: dict[str, np.ndarray], i: int) -> tuple[np.ndarray, np.ndarray]:
    h, w = cache["hw"][i]
    return cache["imgs"][i, :h, :w], cache["dice"][cache["offsets"][i]: cache["offsets"][i + 1]]


class Stream(torch.utils.data.IterableDataset):
    """Endless training samples for one epoch, from a generator seeded (seed, epoch)."""

    def __init__(self, cache, reals, seed: int, epoch: int, synth_share: float, clusters=None, cluster_share: float = 0.0) -> None:
        self.cache, self.reals, self.seed, self.epoch, self.share = cache, reals, seed, epoch, synth_share
        self.clusters, self.cluster_share = clusters, cluster_share

    def __iter__(self):
        info = torch.utils.data.get_worker_info()
        rng = np.random.default_rng((self.seed, self.epoch, info.id if info else 0))
        keys = [k for k in REAL_MIX if self.reals.get(k)]
        p = np.array([REAL_MIX[k] for k in keys])
        p /= p.sum()
        n = len(self.cache["hw"])
        while True:
            if rng.random() < self.share or not keys:
                if self.clusters is not None and rng.random() < self.cluster_share:
                    img, dice = synth_frame(self.clusters, int(rng.integers(len(self.clusters["hw"]))))
                else:
                    img, dice = synth_frame(self.cache, int(rng.integers(n)))
                yield samples.sample(img, dice, rng, real=False)
            else:
                fs = self.reals[keys[int(rng.choice(len(keys), p=p))]]
                _, img, dice = fs[int(rng.integers(len(fs)))]
                yield samples.sample(img, dice, rng, real=True)


@torch.no_grad()
def propose_all(net: DiceDetector, frames, threshold: float) -> list[list[tuple]]:
    """Proposals in each whole frame's own pixels, as the runtime makes them (letterbox, pad, decode)."""
    wrapped = Exported(net).eval()
    out = []
    for _, img, _ in frames:
        small, _ = samples.letterbox(img, np.zeros((0, 7), np.float32))
        heat, peaks, geo = (t.numpy() for t in wrapped(torch.from_numpy(net_input(small))))
        sx, sy = img.shape[1] / small.shape[1], img.shape[0] / small.shape[0]
        out.append([(cx * sx, cy * sy, s * (sx + sy) / 2, a, sc) for cx, cy, s, a, sc in decode(heat, peaks, geo, threshold)
                    if cx < small.shape[1] and cy < small.shape[0]])
    return out


def validate(net: DiceDetector, valsets: dict[str, list]) -> tuple[float, float, dict[str, dict]]:
    """(best mean F1 over the sets, its threshold, per-set summaries at it)."""
    props = {k: propose_all(net, fs, min(THRESHOLDS)) for k, fs in valsets.items()}
    best = (-1.0, THRESHOLDS[0], {})
    for t in THRESHOLDS:
        tallies = {}
        for k, fs in valsets.items():
            tally = Tally()
            for (_, _, dice), ps in zip(fs, props[k]):
                tally.add([p for p in ps if p[4] >= t], dice)
            tallies[k] = tally
        f1 = float(np.mean([tl.f1 for tl in tallies.values()]))
        if f1 > best[0]:
            best = (f1, t, {k: tl.summary() for k, tl in tallies.items()})
    return best


def held_out_synth(seed: int, n: int, clusters: bool = False) -> list[tuple[str, np.ndarray, np.ndarray]]:
    """Rendered frames no training sample comes from (their own seed), all dice rendered (angles known)."""
    return [(f"synth-{i}", *synth.render(np.random.default_rng((seed, 7919 + clusters, i)), None, clusters=clusters)) for i in range(n)]


def export_model(ckpt: dict, out_dir: Path, recipe: str) -> Path:
    net = DiceDetector(tuple(ckpt["args"]["widths"]))
    net.load_state_dict(ckpt["model"])
    tmp = out_dir / "dice-detector-new.onnx"
    meta = {"score_threshold": f"{ckpt['threshold']:.2f}", "epoch": str(ckpt["epoch"]), "val_f1": f"{ckpt['f1']:.4f}", "recipe": recipe}
    export(net, tmp, meta)
    digest = hashlib.sha256(tmp.read_bytes()).hexdigest()[:12]
    final = out_dir / f"dice-detector-{digest}.onnx"
    tmp.rename(final)
    ship(final, "detector")  # exported into models/: named in its shipped.json, the file it replaces removed
    return final


def refuse_other_runs(args: argparse.Namespace, work: Path) -> tuple[dict | None, dict | None]:
    """Stop, in words and before any data is made, where the checkpoint a run would go on from left out other sets.

    A resumed ``last.pt``, or an ``--init`` checkpoint, of a run with another ``--leave-out`` would mix dice the
    run must never see into its weights. Returns the checkpoints read for it, so the run reads each file once: the
    ``last.pt`` a resumed run goes on from and the ``--init`` checkpoint a new schedule starts from (None where not
    used, or where ``--init`` is a shipped ``.onnx`` file, which ``from_onnx`` folds back).
    """
    resumed = torch.load(work / "last.pt", weights_only=False) if args.resume and (work / "last.pt").exists() else None
    started = torch.load(Path(args.init), weights_only=False) if resumed is None and args.init and not args.init.endswith(".onnx") else None
    theirs = {name: ckpt for name, ckpt in ((f"{work}/last.pt", resumed), (args.init, started)) if ckpt is not None}
    for name, ckpt in theirs.items():
        left_out = tuple(ckpt.get("args", {}).get("leave_out", ()))
        if left_out != args.leave_out:
            sys.exit(f"{name} is from a run that left out {', '.join(left_out) or 'no set'}, not "
                     f"{', '.join(args.leave_out) or 'no set'}: go on from a checkpoint of the same run, or give another --work")
    return resumed, started


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--work", default="build/detector")
    ap.add_argument("--seed", type=int, default=26)
    ap.add_argument("--epochs", type=int, default=24)
    ap.add_argument("--steps", type=int, default=110, help="batches per epoch")
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--lr", type=float, default=3e-3)
    ap.add_argument("--synth", type=int, default=8000, help="rendered frames in the cache")
    ap.add_argument("--synth-share", type=float, default=0.55)
    ap.add_argument("--clusters", type=int, default=0, help="rendered frames of touching small dice in a second cache")
    ap.add_argument("--cluster-share", type=float, default=0.3, help="share of the rendered samples drawn from --clusters")
    ap.add_argument("--val-synth", type=int, default=150)
    ap.add_argument("--widths", default="8,16,32,64,96")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--resume", action="store_true")
    ap.add_argument("--init", default=None, help="start from this checkpoint's weights (a new schedule); "
                    "a shipped .onnx file is folded back into the network and its batch-norm statistics kept fixed")
    ap.add_argument("--export", default=None, help="folder to write the kept model to (models)")
    ap.add_argument("--export-only", action="store_true", help="export the kept checkpoint and stop")
    ap.add_argument("--export-epoch", type=int, default=None, help="with --export-only: that epoch's checkpoint instead of the kept one")
    ap.add_argument("--leave-out", type=set_names, default=(),
                    help="SET[,SET]: train without any photo of these shared sets (real-dice-rune55, real-dice-skovy), "
                         "nor pick the epoch on their val split, to see how the recipe finds dice it never saw "
                         "(models/DETECTOR_CARD.md, 'dice never seen by the detector either'); the others share the real samples in proportion")
    args = ap.parse_args(argv)
    try:
        kept = real.sets_without(args.leave_out)
    except ValueError as e:
        ap.error(str(e))
    recipe = "python -m models.training.detector.train " + " ".join(argv if argv is not None else sys.argv[1:])
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    torch.set_num_threads(args.threads)
    if args.export_only:
        ckpt = torch.load(work / (f"epoch-{args.export_epoch:02d}.pt" if args.export_epoch is not None else "best.pt"), weights_only=False)
        print(export_model(ckpt, Path(args.export or "models"), ckpt.get("recipe", recipe)))
        return

    resumed, started = refuse_other_runs(args, work)
    torch.manual_seed(args.seed)
    reals = {k: real.frames(k, "train") for k in REAL_MIX if k in kept}
    crops = real.DieCrops.from_frames(list(reals.values()))
    print("real train frames:", {k: len(v) for k, v in reals.items()}, "die crops:", len(crops.crops), flush=True)
    tag = "".join(f"-without-{f.removeprefix('real-dice-')}" for f in sorted(args.leave_out))  # their dice are pasted in
    cache = synth_cache(work, args.seed, args.synth, crops, max(1, args.threads), tag=tag)
    clusters = synth_cache(work, args.seed, args.clusters, crops, max(1, args.threads), clusters=True, tag=tag) if args.clusters else None
    valsets = {k: real.frames(k, "val") for k in REAL_MIX if k in kept}
    valsets["rendered"] = held_out_synth(args.seed, args.val_synth)
    if args.clusters:
        valsets["clusters"] = held_out_synth(args.seed, max(20, args.val_synth // 2), clusters=True)

    widths = tuple(int(v) for v in args.widths.split(","))
    net = DiceDetector(widths)
    opt = torch.optim.AdamW(net.parameters(), lr=args.lr, weight_decay=1e-4)
    total = args.epochs * args.steps
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: min(1.0, (s + 1) / 100) * 0.5 * (1 + math.cos(math.pi * min(s, total) / total)))
    start, best = 0, {"f1": -1.0}
    frozen_norms = bool(args.init and args.init.endswith(".onnx"))
    if args.init and resumed is None:  # a resumed schedule has its own weights; --init starts it the first time only
        net.load_state_dict(from_onnx.load_onnx(Path(args.init), widths).state_dict() if frozen_norms
                            else started["model"])
        print(f"weights from {args.init}" + (" (batch-norm statistics kept fixed)" if frozen_norms else ""), flush=True)
    if resumed is not None:
        ck = resumed
        net.load_state_dict(ck["model"])
        opt.load_state_dict(ck["opt"])
        sched.load_state_dict(ck["sched"])
        torch.set_rng_state(ck["torch_rng"])
        start = ck["epoch"] + 1
        if (work / "best.pt").exists():
            best = torch.load(work / "best.pt", weights_only=False)
        print(f"resumed after epoch {ck['epoch']}", flush=True)
    print(f"{sum(p.numel() for p in net.parameters())} weights; epochs {start}..{args.epochs - 1}", flush=True)

    for epoch in range(start, args.epochs):
        net.train()
        if frozen_norms:
            from_onnx.freeze_norm_statistics(net)
        t0 = time.time()
        loader = torch.utils.data.DataLoader(Stream(cache, reals, args.seed, epoch, args.synth_share, clusters, args.cluster_share), batch_size=args.batch, num_workers=1,
                                             collate_fn=lambda b: [torch.from_numpy(np.stack(x)) for x in zip(*b)])
        parts: dict[str, float] = {}
        for step, (x, heat, reg, wt) in enumerate(loader):
            if step == args.steps:
                break
            out = net(x)
            total_loss, terms = loss(out, heat, reg, wt)
            opt.zero_grad()
            total_loss.backward()
            torch.nn.utils.clip_grad_norm_(net.parameters(), 5.0)
            opt.step()
            sched.step()
            for k, v in terms.items():
                parts[k] = parts.get(k, 0.0) + v / args.steps
            if step % 20 == 19:
                print(f"  epoch {epoch} step {step + 1}: loss {total_loss.item():.3f}, {time.time() - t0:.0f} s", flush=True)
        del loader
        net.eval()
        f1, threshold, per_set = validate(net, valsets)
        print(json.dumps({"epoch": epoch, "seconds": round(time.time() - t0), "lr": round(sched.get_last_lr()[0], 6),
                          "loss": {k: round(v, 4) for k, v in parts.items()}, "val_f1": round(f1, 4), "threshold": threshold,
                          "val": {k: {m: s[m] for m in ("recall", "precision", "side_error", "angle_error_deg")} for k, s in per_set.items()}}), flush=True)
        ck = {"model": net.state_dict(), "opt": opt.state_dict(), "sched": sched.state_dict(), "torch_rng": torch.get_rng_state(),
              "epoch": epoch, "f1": f1, "threshold": threshold, "val": per_set, "args": {**vars(args), "widths": widths}, "recipe": recipe}
        torch.save(ck, work / "last.tmp")
        os.replace(work / "last.tmp", work / "last.pt")
        shutil.copyfile(work / "last.pt", work / f"epoch-{epoch:02d}.pt")  # any epoch can be exported and read end to end
        if f1 > best["f1"]:
            best = ck
            shutil.copyfile(work / "last.pt", work / "best.pt")
    if args.export:
        print(export_model(torch.load(work / "best.pt", weights_only=False), Path(args.export), recipe), flush=True)


if __name__ == "__main__":
    main()
