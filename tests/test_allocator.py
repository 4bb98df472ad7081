"""The allocator settings of a long-running ``serve``: freed pages go back to the system after each capture."""

from __future__ import annotations

import os
import platform

import pytest

from companion.app.allocator import give_back_freed_memory
from companion.app.dice_capture import BoundedCapture
from companion.core.capture import Capture, ValuesDiceSource

glibc = pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="malloc_trim is glibc's")

CHUNK = 64 * 1024  # below glibc's smallest mmap threshold: always from a heap
CHUNKS = 1600  # 100 MiB, half of it freed in holes


def resident_mib() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def fragment() -> list[bytearray]:
    """100 MiB of medium buffers with every other one freed: 50 MiB of holes no heap top can give back."""
    buffers = [bytearray(b"\1") * CHUNK for _ in range(CHUNKS)]
    del buffers[::2]
    return buffers


@glibc
def test_freed_holes_in_the_heap_go_back_to_the_system():
    kept = fragment()
    before = resident_mib()
    assert give_back_freed_memory() is True
    assert before - resident_mib() > 25
    assert len(kept) == CHUNKS // 2  # what is still used stays


class FragmentingSource(ValuesDiceSource):
    """A camera whose reading leaves its medium buffers freed behind it, as crops, tensors and JPEGs do."""

    def __init__(self) -> None:
        super().__init__()
        self.resident_at_return: float | None = None
        self.kept: list[bytearray] = []

    def capture(self) -> Capture:
        self.kept = fragment()
        self.resident_at_return = resident_mib()
        return super().capture()


@glibc
def test_each_capture_gives_back_what_the_reading_freed():
    source = FragmentingSource()
    bounded = BoundedCapture(source)
    try:
        assert bounded.capture().reading is not None
        assert source.resident_at_return is not None
        assert source.resident_at_return - resident_mib() > 25
    finally:
        bounded.close()

