"""Dice the finder lost, found again by their marks.

A white die on a pale tray can differ from the tray by a dozen grey levels,
at its outline too: too little for the finder's clear pass, and at the faint
pass's own threshold (``CLASSIC.weak_min``), which cannot go lower without
losing other dice. Its marks still differ clearly: small dark blobs in the
finder's clear mask, lying apart from every die found.

``lost_dice`` groups such orphan marks into the faces they may be, and gives a
square of the frame's die size around each group. It only proposes: the face
classifier decides whether the square holds a die and what it shows, and the
reader treats each as a guess (``DiceReader._by_marks``).

It never proposes a die for a lone mark: a speck of the tray (a hole, dust)
reads as a die showing one, often far above the first look's bar. Crumbs smaller than
``CLASSIC.mark_pixels`` are not marks: the cup's thin rim dips under the
threshold in crumbs, which would group into faces that each cost a classifier
call. How these were measured: docs/CLASSIC-READER.md.
"""

from __future__ import annotations

import cv2
import numpy as np

from vision.classic_tunables import CLASSIC
from vision.finder import Candidate, Look

def lost_dice(look: Look, dice: list[Candidate], side: float) -> list[Candidate]:
    """Dice of ``side`` frame pixels whose marks show in the look's clear mask apart from every die in
    ``dice`` (frame pixels): a square around each group of orphan marks, turned as the marks show it."""
    scale = look.scale
    side *= scale
    if side <= 0:
        return []
    # outlines, not connectedComponentsWithStats: a tenth of its cost on a working copy (0.06 against 0.5 ms)
    outlines, _ = cv2.findContours(look.raw, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
    boxes = np.array([cv2.boundingRect(c) for c in outlines], float).reshape(-1, 4)
    pixels = np.array([cv2.contourArea(c) + cv2.arcLength(c, True) / 2 + 1 for c in outlines]).reshape(-1)
    keep = (pixels >= CLASSIC.mark_pixels) & (boxes[:, 2:].max(1) <= CLASSIC.mark_length * side) & (pixels <= CLASSIC.mark_area * side * side)
    boxes = boxes[keep]
    marks = [c for c, k in zip(outlines, keep) if k]
    points = boxes[:, :2] + (boxes[:, 2:] - 1) / 2
    alone = np.ones(len(marks), bool)
    if dice and len(marks):  # each mark against every die at once, in the die's own axes (numpy's overhead, not its work, counts here)
        d = np.array([(c.cx, c.cy, c.w, c.h) for c in dice]) * scale
        a = np.radians([c.angle for c in dice])
        dx, dy = points[:, None, 0] - d[:, 0], points[:, None, 1] - d[:, 1]
        u, v = np.abs(dx * np.cos(a) + dy * np.sin(a)), np.abs(dy * np.cos(a) - dx * np.sin(a))
        alone = ~((u <= CLASSIC.marks_clear_of * d[:, 2] / 2) & (v <= CLASSIC.marks_clear_of * d[:, 3] / 2)).any(1)
    if not CLASSIC.min_marks <= np.count_nonzero(alone) <= CLASSIC.max_orphans:
        return []
    marks, points = [c for c, a in zip(marks, alone) if a], points[alone]
    h, w = look.raw.shape
    out = []
    for group in _groups(points, CLASSIC.same_face * side):
        if len(group) < CLASSIC.min_marks:
            continue
        pts = np.concatenate([marks[i].reshape(-1, 2) for i in group]).astype(np.float32)
        lo, hi = pts.min(0), pts.max(0)
        if (hi - lo + 1).max() > CLASSIC.face_span * side:
            continue  # marks of two dice, or a scatter of specks
        (_, _), (rw, rh), angle = cv2.minAreaRect(pts)
        if max(rw, rh) > CLASSIC.diagonal_aspect * max(1.0, min(rw, rh)):
            angle += 45.0  # a two or a three: its marks lie along the face's diagonal
        cx, cy = (lo + hi) / 2
        cut = min(cx, cy) < side / 2 or cx > w - side / 2 or cy > h - side / 2
        out.append(Candidate.square(float(cx) / scale, float(cy) / scale, side / scale, angle, cut_off=bool(cut), guessed=True))
    return out


def _groups(points: np.ndarray, reach: float) -> list[list[int]]:
    """The points joined into groups by chains of steps no longer than ``reach``."""
    near = np.hypot(*(points[:, None, :] - points[None, :, :]).transpose(2, 0, 1)) <= reach
    group = -np.ones(len(points), int)
    for start in range(len(points)):
        if group[start] >= 0:
            continue
        group[start] = start
        todo = [start]
        while todo:
            i = todo.pop()
            for j in np.nonzero(near[i] & (group < 0))[0]:
                group[j] = start
                todo.append(int(j))
    return [list(np.nonzero(group == g)[0]) for g in np.unique(group)]
