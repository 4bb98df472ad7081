"""Dice small in a big frame (a photo from another camera) are looked for again on a finer working copy."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

import vision.classic_reader
from vision.classic_tunables import CLASSIC
from vision.simtable import render_table

TOPS = [2, 4, 6]


def _small_dice_frames(side: float, n: int = 8):
    """1280×960 frames whose dice are ``side`` px: 28 px is 7 working pixels of the default look."""
    return [render_table([7 - t for t in TOPS], np.random.default_rng(seed), touching=0.0, glare=0, die_side=side)[0] for seed in range(n)]


def _read_right(reader, frames) -> int:
    return sum(r.status == "ok" and sorted(r.tops()) == TOPS for r in map(reader.read, frames))


def test_small_dice_in_a_big_frame_are_read_by_the_finer_look(reader, monkeypatch):
    frames = _small_dice_frames(28)
    assert _read_right(reader, frames) >= 6
    monkeypatch.setattr(vision.classic_reader, "CLASSIC", replace(CLASSIC, small_die_side=0.0))  # the finer look switched off
    assert _read_right(reader, frames) <= 1


def test_the_finer_look_makes_the_dice_about_fourteen_working_pixels(reader, work_sides):
    reader.read(_small_dice_frames(28, 1)[0])
    fine = [w for w in work_sides if w > CLASSIC.work_side]
    assert len(fine) == 1 and 540 <= fine[0] <= 720, work_sides  # 7 px dice at 320 -> about 14 at 640


def test_a_tray_frame_and_a_table_that_knows_its_die_size_never_pay_for_the_finer_look(reader, work_sides):
    frame, placed = render_table([1, 3, 5], np.random.default_rng(3), touching=0.0, glare=0)
    reader.read(frame)
    assert max(work_sides) == CLASSIC.work_side  # 64 px dice: the default look (and the coarse one for close-ups)
    work_sides.clear()
    small = _small_dice_frames(28, 1)[0]
    reader.with_die_side(28).read(small)
    assert work_sides == [CLASSIC.work_side]


def test_the_finer_look_is_not_taken_when_it_reads_fewer_dice_sure(reader, monkeypatch):
    """Its rules are in working pixels: what the default look opened away may glue to a die in it."""
    real = vision.classic_reader.find_dice

    def finer_finds_nothing(frame, die_side=None, work_side=CLASSIC.work_side, smallest=0.0):
        return [] if work_side > CLASSIC.work_side else real(frame, die_side, work_side=work_side, smallest=smallest)

    monkeypatch.setattr(vision.classic_reader, "find_dice", finer_finds_nothing)
    monkeypatch.setattr(vision.classic_reader, "CLASSIC", replace(CLASSIC, small_die_side=100.0))  # every frame takes the finer look
    frame, _ = render_table([1, 3, 5], np.random.default_rng(3), touching=0.0, glare=0)
    r = reader.read(frame)
    assert r.status == "ok" and len(r.dice) == 3  # the default look's dice kept


def test_a_lone_unsure_speck_is_no_reason_for_a_finer_look(reader, work_sides):
    """Half a die at the frame's edge, read unsure: it says nothing about the dice's size."""
    frame, placed = render_table([4, 4, 4], np.random.default_rng(41), touching=0.0, glare=0)
    r = reader.read(np.ascontiguousarray(frame[:, int(placed[0].cx - placed[0].side * 0.1):]))
    assert max(work_sides) == CLASSIC.work_side
    assert r.status == "uncertain" and r.dice
