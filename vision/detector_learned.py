"""The ``learned`` detector plug-in: a small fully convolutional ONNX network proposes every die.

The network sees the frame in grey, shrunk so its long side is ``NET_SIDE`` pixels (padded on the
right and bottom to a multiple of ``PAD_TO``), and answers on a grid ``STRIDE`` times coarser than
its input, CenterNet-style: per cell a die-centre score, the die's side (log scale), the square's
angle as (cos 4θ, sin 4θ) (a square looks the same every quarter turn, so 4θ is what is defined)
and the centre's offset inside the cell. Peaks of the score are the proposals, mapped back to the
caller's frame. Dice cannot overlap, so duplicates are removed by centre distance alone.

The input normalisation (``net_input``) and the output decoding live here, and the training code
(``models/training/detector``) imports them, so training and use cannot disagree. This module never
imports torch: the Pi runs it with onnxruntime, numpy and OpenCV only.

The shipped model is ``models/dice-detector-<id>.onnx`` (the id is the first 12 hex digits of the
file's sha256); its score threshold travels inside the file (metadata ``score_threshold``), picked
on the validation splits by the training code, so a new model brings its own.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Sequence

import cv2
import numpy as np

from companion.core.errors import HardwareError
from companion.core.protocols import Proposal
from vision.classifier import model_fix
from vision.model_files import read_whole, shipped
from vision.onnx_runtime import load_onnxruntime

#: The long side of the network's input, in pixels.
NET_SIDE = 256
#: The network's output grid is this many input pixels per cell.
STRIDE = 4
#: The input is padded to a multiple of this (the network halves its grid five times).
PAD_TO = 32
#: The side head predicts log(side / SIDE_UNIT), side in network-input pixels.
SIDE_UNIT = 16.0
#: Output channels: centre score, log side, cos 4θ, sin 4θ, offset x, offset y.
CHANNELS = 6
#: Contrast floor of the normalisation: a flat frame (all black, all white) stays flat, not amplified noise.
MIN_STD = 8.0
#: Frames smaller than this (either side) hold no readable die.
MIN_FRAME = 8
#: At most this many proposals are decoded (the game has 3 dice; a tray photo up to 25 and some clutter).
MAX_PROPOSALS = 64
#: Two peaks nearer than this share of the larger die's side are one die (dice cannot overlap).
SAME_DIE = 0.6
#: With a die size known: dice are brought to about this many network pixels, within the limits below.
HINT_NET_SIDE = 28.0
HINT_MIN_NET_SIDE, HINT_MAX_NET_SIDE = 14.0, 120.0
#: With a die size known the network's input may grow to this long side (a small die in a big frame).
HINT_MAX_INPUT = 512
#: Without a known die size: when the dice of the first look land under this many network pixels, the
#: part of the frame that holds them can be looked at again, scaled so they land near ``HINT_NET_SIDE``
#: (``propose_closer``: touching small dice merge and small dice go unseen at the first look's scale).
ZOOM_BELOW_NET_SIDE = 20.0
#: Without a known die size, when the first look's dice were not small: a look from farther, the frame's
#: long side at this many pixels, where a die filling most of the frame lands at a size the network knows
#: (at ``NET_SIDE`` its marks can look like dice) ...
FAR_NET_SIDE = 128
#: ... and where that look does not settle the reading either, one from farther still: a die filling most of the
#: frame with big marks (a single mark, a translucent die's pips) is seen whole only at this size.
FARTHEST_NET_SIDE = 64
#: ... offered only when its likelier dice are at least this many network pixels there.
FAR_MIN_NET_SIDE = 40.0
#: Without a known die size, where every look above leaves the reading short: a finer look, the frame's long side at
#: this many pixels (at most ``FINE_MAX_ZOOM`` times the frame's own), where a die 2-3 % of the frame's width lands
#: at 15-23 network pixels instead of 5-8 (at ``NET_SIDE`` it goes unseen, or a patch of the table is taken for it).
FINE_NET_SIDE = 768
FINE_MAX_ZOOM = 2.0
#: ... and where that look leaves the reading short too, in a frame at least this long (a phone's 12-megapixel photo
#: of a table, dice 1-2 % of its width, 6-12 network pixels at ``FINE_NET_SIDE``): the frame at this long side,
#: never enlarged. About 36 first looks, so the camera's own frames (1280 px) never take it.
FINEST_NET_SIDE = 1536
#: The second look's region reaches this many die sides beyond the outermost proposals.
ZOOM_REACH = 1.5
#: ... and is worth it only when it enlarges the frame by at least this factor.
ZOOM_MIN_GAIN = 1.25
#: The closer look is taken in these passes (``join_passes``): as it is, and turned half a turn (a die looks the
#: same either way, but its centre falls elsewhere on the network's 4-px cells and the padding lies on the other
#: side). The small dice it is for get a score, centre, side and angle less bound to one grid: in rune55's tray
#: photos more of them are read sure (docs/READING.md, "The closer look seen twice"). Only there: a tray frame's
#: first look stays one run of the network.
CLOSER_PASSES = (None, cv2.ROTATE_180)
#: Two passes' proposals near one centre are the same die only where their sides agree to within this factor: a
#: die's side varies less than this between passes, while a die and one of its own marks (a pass that saw the
#: die, another that saw a mark) differ by two or more, and a box between them is neither.
JOIN_SIDES = 1.5
#: ``propose_inside``: the look inside a square is zoomed so that a die this share of the square's side lands at
#: ``HINT_NET_SIDE`` network pixels (a die far off, read whole as a one's mark, is a tenth to a third of the square
#: the classifier cut around that "one").
INSIDE_SHARE = 0.15
DEFAULT_THRESHOLD = 0.3


def net_input(small: np.ndarray) -> np.ndarray:
    """A grey uint8 image already at network scale -> the padded, normalised 1×1×H×W float32 input.

    Normalised by the image's own mean and contrast (at least ``MIN_STD``), so exposure and camera gain
    matter little; the padding gets the mean, i.e. zero, so it looks like nothing.
    """
    h, w = small.shape
    mean, std = cv2.meanStdDev(small)
    mean, std = float(mean[0, 0]), max(float(std[0, 0]), MIN_STD)
    ph, pw = -(-h // PAD_TO) * PAD_TO, -(-w // PAD_TO) * PAD_TO
    out = np.zeros((1, 1, ph, pw), np.float32)
    out[0, 0, :h, :w] = (small.astype(np.float32) - mean) / std
    return out


def to_grey(frame: np.ndarray) -> np.ndarray | None:
    """Any image array -> grey uint8 HxW, or None when it cannot be a frame (wrong shape or dtype, empty)."""
    if not isinstance(frame, np.ndarray) or frame.ndim not in (2, 3) or frame.size == 0:
        return None
    if frame.ndim == 3:
        if frame.shape[2] == 1:
            frame = frame[..., 0]
        elif frame.shape[2] in (3, 4):
            frame = np.ascontiguousarray(frame[..., :3])
        else:
            return None
    if frame.dtype != np.uint8:
        if frame.dtype == np.bool_ or not np.issubdtype(frame.dtype, np.number):
            return None
        f = np.nan_to_num(frame.astype(np.float32), nan=0.0, posinf=0.0, neginf=0.0)
        if np.issubdtype(frame.dtype, np.floating) and f.max(initial=0.0) <= 1.0:
            f = f * 255.0  # floats in 0..1
        frame = np.clip(np.rint(f), 0, 255).astype(np.uint8)
    if frame.ndim == 3:
        frame = cv2.cvtColor(frame, cv2.COLOR_BGR2GRAY)
    return np.ascontiguousarray(frame)


def decode(heat: np.ndarray, peaks: np.ndarray, geo: np.ndarray, threshold: float, limit: int = MAX_PROPOSALS) -> list[tuple[float, float, float, float, float]]:
    """The network's maps (heat and its 3×3 max, 1×1×h×w; geometry 1×5×h×w) -> (cx, cy, side, angle, score)
    in network-input pixels, best first, one per die."""
    heat, peaks = heat[0, 0], peaks[0, 0]
    ys, xs = np.nonzero((heat >= peaks) & (heat >= threshold))
    if len(ys) == 0:
        return []
    scores = heat[ys, xs]
    order = np.lexsort((xs, ys, -scores))[: limit * 4]  # ties broken by position: the same frame gives the same list
    ys, xs, scores = ys[order], xs[order], scores[order]
    g = geo[0][:, ys, xs].astype(np.float64)
    side = SIDE_UNIT * np.exp(np.clip(g[0], -6, 6))
    angle = (np.degrees(np.arctan2(g[2], g[1])) / 4.0) % 90.0
    cx = (xs + 0.5 + np.clip(g[3], -1.5, 1.5)) * STRIDE
    cy = (ys + 0.5 + np.clip(g[4], -1.5, 1.5)) * STRIDE
    kept = _apart(cx, cy, side, limit)
    return [(float(cx[i]), float(cy[i]), float(side[i]), float(angle[i]), float(scores[i])) for i in kept]


def _apart(cx: Sequence[float], cy: Sequence[float], side: Sequence[float], limit: int) -> list[int]:
    """The indices of the places (centres and sides, best first) kept in order, each only where no place kept
    before it lies nearer than ``SAME_DIE`` of the larger side (dice cannot overlap); at most ``limit``."""
    kept: list[int] = []
    for i in range(len(cx)):
        if all(math.hypot(cx[i] - cx[j], cy[i] - cy[j]) >= SAME_DIE * max(side[i], side[j]) for j in kept):
            kept.append(i)
            if len(kept) == limit:
                break
    return kept


def join_passes(passes: list[list[tuple[float, float, float, float, float]]], threshold: float,
                limit: int = MAX_PROPOSALS) -> list[tuple[float, float, float, float, float]]:
    """The proposals of several passes over the same picture (``decode``'s (cx, cy, side, angle, score), in the
    same pixels), joined by centre and side (``JOIN_SIDES``): one die per place, its score the mean over every
    pass (a pass that did not propose it counts zero), its centre, side (geometrically) and angle (on the 4θ
    circle, where a square's turn is defined) the means of the passes that did, weighted by their scores. Kept
    where the mean score reaches ``threshold``; best first, at most ``limit``, no two nearer than ``SAME_DIE`` of
    the larger side.

    >>> join_passes([[(10, 10, 8, 1, 0.8)], [(11, 10, 8, 89, 0.6)]], 0.3)  # doctest: +ELLIPSIS
    [(10.4..., 10.0, 8.0..., 0.1..., 0.7)]
    >>> join_passes([[(10, 10, 8, 0, 0.5)], []], 0.3)  # seen by one pass of two: a mean of 0.25
    []
    """
    found = sorted(((p, i) for i, ps in enumerate(passes) for p in ps), key=lambda t: (-t[0][4], t[0][1], t[0][0], t[1]))
    places: list[dict[int, tuple[float, float, float, float, float]]] = []
    for p, i in found:  # each die seeded by its best pass; another pass's proposal joins the first place within reach
        for place in places:
            seed = next(iter(place.values()))
            if (i not in place and math.hypot(p[0] - seed[0], p[1] - seed[1]) < SAME_DIE * max(p[2], seed[2])
                    and max(p[2], seed[2]) <= JOIN_SIDES * min(p[2], seed[2])):
                place[i] = p
                break
        else:
            places.append({i: p})
    joined = []
    for place in places:
        ms = list(place.values())
        weight = sum(m[4] for m in ms)
        score = weight / len(passes)
        if score < threshold:
            continue
        cx = sum(m[0] * m[4] for m in ms) / weight
        cy = sum(m[1] * m[4] for m in ms) / weight
        side = math.exp(sum(math.log(m[2]) * m[4] for m in ms) / weight)
        c4 = sum(math.cos(math.radians(4 * m[3])) * m[4] for m in ms)
        s4 = sum(math.sin(math.radians(4 * m[3])) * m[4] for m in ms)
        joined.append((cx, cy, side, (math.degrees(math.atan2(s4, c4)) / 4.0) % 90.0, score))
    joined.sort(key=lambda p: (-p[4], p[1], p[0]))
    cx, cy, side, _, _ = zip(*joined) if joined else ((),) * 5
    return [joined[i] for i in _apart(cx, cy, side, limit)]


def _known_size(die_side_px: float | None) -> bool:
    """Whether ``die_side_px`` is a die size to go by (positive and finite)."""
    return die_side_px is not None and die_side_px > 0 and math.isfinite(die_side_px)


def _likely(proposals: list[Proposal]) -> list[Proposal]:
    """The likelier of ``proposals`` (best first): those scoring at least half the best."""
    return [p for p in proposals if p.score >= proposals[0].score / 2]


def _likely_side(proposals: list[Proposal]) -> float:
    """The median side of the likelier of ``proposals`` (best first, not empty)."""
    return float(np.median([p.side for p in _likely(proposals)]))


def default_model_path() -> Path:
    """The shipped model: the ``models/dice-detector-*.onnx`` that ``models/shipped.json`` names."""
    path = shipped("detector")
    if path is None:
        raise HardwareError("The dice detector model (the models/dice-detector-*.onnx that models/shipped.json names) is missing; "
                            "reinstall the companion.", code="no_model")
    return path


class LearnedDetector:
    """Proposes dice with the ONNX detector on one onnxruntime thread, deterministically."""

    name = "learned"

    def __init__(self, model_path: str | Path | None = None, *, score_threshold: float | None = None, threads: int = 1) -> None:
        ort = load_onnxruntime()

        self.path = Path(model_path) if model_path is not None else default_model_path()
        if not self.path.is_file():
            raise HardwareError(f"The dice detector model {self.path.name} is missing; {model_fix(self.path, 'reader.detector_model')}.", code="no_model")
        data, found = read_whole(self.path, "dice detector model", model_fix(self.path, "reader.detector_model"))
        self.model_id = "dice-detector-" + found
        opts = ort.SessionOptions()
        opts.intra_op_num_threads = threads
        opts.inter_op_num_threads = 1
        opts.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        opts.enable_cpu_mem_arena = False  # inputs vary in size (the second looks): an arena would keep the largest
        opts.log_severity_level = 3
        try:
            self.session = ort.InferenceSession(data, opts, providers=["CPUExecutionProvider"])
            meta = self.session.get_modelmeta().custom_metadata_map
            outputs = [o.name for o in self.session.get_outputs()]
            if outputs != ["heat", "peaks", "geometry"]:
                raise ValueError(f"unexpected outputs {outputs}")
        except Exception as exc:  # onnxruntime raises its own classes for a corrupt file
            raise HardwareError(f"The dice detector model {self.path.name} cannot be loaded ({exc.__class__.__name__}); "
                                f"{model_fix(self.path, 'reader.detector_model')}.", code="bad_model") from None
        self.input_name = self.session.get_inputs()[0].name
        #: the looks from farther the reader may ask for, nearest first (``propose_farther``'s ``net_side``)
        self.far_net_sides = (FAR_NET_SIDE, FARTHEST_NET_SIDE)
        #: the finer looks the reader may ask for, the cheaper first (``propose_finer``'s ``net_side``)
        self.fine_net_sides = (FINE_NET_SIDE, FINEST_NET_SIDE)
        self.score_threshold = float(score_threshold if score_threshold is not None else meta.get("score_threshold", DEFAULT_THRESHOLD))
        self.propose(np.full((96, 128), 128, np.uint8))  # warm-up: onnxruntime allocates on the first run

    def _scale(self, h: int, w: int, die_side_px: float | None) -> float:
        """Frame pixels -> network pixels: the long side to ``NET_SIDE``; with a known die size, the dice
        brought near ``HINT_NET_SIDE`` instead when they would land too small or too large."""
        scale = NET_SIDE / max(h, w)
        if _known_size(die_side_px):
            net_die = die_side_px * scale
            if not HINT_MIN_NET_SIDE <= net_die <= HINT_MAX_NET_SIDE:
                scale = min(HINT_NET_SIDE / die_side_px, HINT_MAX_INPUT / max(h, w))
        return scale

    def propose(self, grey: np.ndarray, die_side_px: float | None = None) -> list[Proposal]:
        """Every die proposed in ``grey`` (uint8 HxW; a colour or other-typed image is converted), best score
        first. ``die_side_px``: the calibrated die side in this frame's pixels, when known: the frame is
        scaled so dice land at a size the network knows, and proposals far from that size are dropped.
        A frame that cannot hold a die (empty, tiny, not an image) gives no proposals."""
        grey = to_grey(grey)
        if grey is None or min(grey.shape) < MIN_FRAME:
            return []
        h, w = grey.shape
        out = self._look(grey, self._scale(h, w, die_side_px))
        if _known_size(die_side_px):
            return [p for p in out if p.of_die_size(die_side_px)]
        return out

    def propose_closer(self, grey: np.ndarray, first: list[Proposal]) -> list[Proposal] | None:
        """A second look at the part of ``grey`` that holds ``first`` (``propose``'s answer without a die
        size), scaled so its dice land near ``HINT_NET_SIDE`` network pixels, when they came out under
        ``ZOOM_BELOW_NET_SIDE`` (touching small dice merge, small dice go unseen). Its proposals, with the
        first look's outside that part, best first; None when there is nothing to gain."""
        grey = to_grey(grey)
        if grey is None or min(grey.shape) < MIN_FRAME or not first:
            return None
        h, w = grey.shape
        scale = self._scale(h, w, None)
        likely = _likely(first)
        side = _likely_side(first)
        if side * scale >= ZOOM_BELOW_NET_SIDE:
            return None
        reach = ZOOM_REACH * side
        x0 = max(0, int(min(p.cx for p in likely) - reach))
        y0 = max(0, int(min(p.cy for p in likely) - reach))
        x1 = min(w, int(math.ceil(max(p.cx for p in likely) + reach)) + 1)
        y1 = min(h, int(math.ceil(max(p.cy for p in likely) + reach)) + 1)
        zoom = min(HINT_NET_SIDE / side, HINT_MAX_INPUT / max(x1 - x0, y1 - y0))
        if zoom < ZOOM_MIN_GAIN * scale or min(x1 - x0, y1 - y0) < MIN_FRAME:
            return None
        inside = self._look(grey[y0:y1, x0:x1], zoom, (x0, y0), CLOSER_PASSES)
        outside = [p for p in first if not (x0 <= p.cx < x1 and y0 <= p.cy < y1)]
        return sorted(inside + outside, key=lambda p: -p.score)

    def propose_inside(self, grey: np.ndarray, square: Proposal) -> list[Proposal] | None:
        """A look inside ``square`` (in ``grey``'s pixels, upright), zoomed so that a die ``INSIDE_SHARE`` of its side
        lands near ``HINT_NET_SIDE`` network pixels: a small die far off, inside a square the classifier read as a die
        showing one, was that one's mark. Its proposals, best first; None when the square holds too few pixels.

        >>> LearnedDetector().propose_inside(np.full((200, 200), 128, np.uint8), Proposal(100, 100, 120, 0, 0.9))
        []
        """
        grey = to_grey(grey)
        if grey is None:
            return None
        h, w = grey.shape
        half = square.side / 2
        x0, y0 = max(0, int(square.cx - half)), max(0, int(square.cy - half))
        x1, y1 = min(w, int(math.ceil(square.cx + half))), min(h, int(math.ceil(square.cy + half)))
        if min(x1 - x0, y1 - y0) < MIN_FRAME:
            return None
        zoom = min(HINT_NET_SIDE / (INSIDE_SHARE * square.side), HINT_MAX_INPUT / max(x1 - x0, y1 - y0))
        return self._look(grey[y0:y1, x0:x1], zoom, (x0, y0))

    def propose_finer(self, grey: np.ndarray, net_side: int = FINE_NET_SIDE) -> list[Proposal] | None:
        """A finer look at the whole of ``grey``, its long side at ``net_side`` network pixels, for dice a few
        hundredths of a big frame's width, which ``propose`` sees at a few network pixels. At ``FINE_NET_SIDE`` a
        smaller frame is enlarged at most ``FINE_MAX_ZOOM`` times; a finer look (``FINEST_NET_SIDE``) is taken only in
        a frame at least that long. On a big die it also proposes the die's marks: the reader drops those lying on a
        die it read sure. Best first; None when the frame is too small to look at or the look would be no finer than
        the one before. ``FINE_NET_SIDE`` costs about six first looks, so the reader asks for it only where the other
        looks leave the reading short."""
        grey = to_grey(grey)
        if grey is None or min(grey.shape) < MIN_FRAME:
            return None
        h, w = grey.shape
        if net_side > FINE_NET_SIDE:
            before, scale = FINE_NET_SIDE / max(h, w), net_side / max(h, w)
            if scale > 1.0:
                return None
        else:
            before, scale = self._scale(h, w, None), min(FINE_MAX_ZOOM, net_side / max(h, w))
        if scale < ZOOM_MIN_GAIN * before:
            return None
        return self._look(grey, scale)

    def _look(self, grey: np.ndarray, scale: float, origin: tuple[int, int] = (0, 0),
              passes: tuple[int | None, ...] = (None,)) -> list[Proposal]:
        """The network's proposals for ``grey`` seen at ``scale``, in ``grey``'s pixels shifted by ``origin``: one
        run, or one per pass (``None`` as it is, ``cv2.ROTATE_180`` turned half a turn) joined by ``join_passes``."""
        h, w = grey.shape
        nw, nh = max(1, round(w * scale)), max(1, round(h * scale))
        if min(nw, nh) < 2:
            return []
        interp = cv2.INTER_AREA if scale < 1 else cv2.INTER_LINEAR
        small = cv2.resize(grey, (nw, nh), interpolation=interp)
        found = [self._pass(small, turn) for turn in passes]
        sx, sy = w / nw, h / nh
        ox, oy = origin
        return [Proposal(cx * sx + ox, cy * sy + oy, side * (sx + sy) / 2, angle, score)
                for cx, cy, side, angle, score in (found[0] if len(found) == 1 else join_passes(found, self.score_threshold))]

    def _pass(self, small: np.ndarray, turn: int | None) -> list[tuple[float, float, float, float, float]]:
        """One run of the network on ``small`` (at network scale), turned by ``turn`` first (None or
        ``cv2.ROTATE_180``): ``decode``'s proposals inside the picture, in ``small``'s own pixels."""
        nh, nw = small.shape
        picture = small if turn is None else cv2.rotate(small, turn)
        heat, peaks, geo = self.session.run(None, {self.input_name: net_input(picture)})
        found = [p for p in decode(heat, peaks, geo, self.score_threshold) if p[0] < nw and p[1] < nh]
        if turn is None:
            return found
        if turn != cv2.ROTATE_180:
            raise ValueError("a pass is the picture as it is or turned half a turn")
        return [(nw - cx, nh - cy, side, angle, score) for cx, cy, side, angle, score in found]  # a square's angle is the same half a turn on

    def propose_farther(self, grey: np.ndarray, first: list[Proposal], net_side: int = FAR_NET_SIDE) -> list[Proposal] | None:
        """A look from farther (the long side at ``net_side`` pixels) where ``first`` (``propose``'s answer
        without a die size) holds dice that were not small, and that look sees big dice
        (``FAR_MIN_NET_SIDE``): a die filling much of the frame, whose marks the first look may have taken
        for dice. Its proposals, best first; None when there is nothing to gain."""
        grey = to_grey(grey)
        if grey is None or min(grey.shape) < MIN_FRAME or not first:
            return None
        h, w = grey.shape
        scale, far_scale = self._scale(h, w, None), net_side / max(h, w)
        if far_scale >= scale or _likely_side(first) * scale < ZOOM_BELOW_NET_SIDE:
            return None
        far = self._look(grey, far_scale)
        if not far or _likely_side(far) * far_scale < FAR_MIN_NET_SIDE:
            return None
        return far
