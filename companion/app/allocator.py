"""glibc's allocator told how ``serve`` uses memory: a long-running process whose big buffers come and go with each Bluff.

Each function is a no-op off glibc (macOS, musl), where these knobs do not exist.
"""

from __future__ import annotations

import ctypes
import functools
import os

M_ARENA_MAX = -8
M_MMAP_THRESHOLD = -3


@functools.cache
def _libc() -> ctypes.CDLL | None:
    try:
        libc = ctypes.CDLL("libc.so.6")
        libc.mallopt, libc.malloc_trim  # noqa: B018 - both must exist (glibc)
    except (OSError, AttributeError):
        return None
    return libc


def limit_malloc_arenas(arenas: int = 2) -> None:
    """Keep glibc to a few malloc arenas, and big buffers out of the heap.

    Every waitress thread and every capture thread that touches a camera frame
    would otherwise get an arena of its own, and the resident memory of a
    long game crept from 135 MB to over 370 MB in 15 Bluffs, fragmentation,
    not a leak. Must run before the server's threads start. ``MALLOC_ARENA_MAX``
    in the environment (glibc's own setting) wins.
    """
    libc = _libc()
    if libc is None or os.environ.get("MALLOC_ARENA_MAX"):
        return
    libc.mallopt(M_ARENA_MAX, arenas)
    # Frame-sized buffers (a 1280x960 float frame is 15 MB) always come from
    # mmap and go back to the system when freed, instead of raising glibc's
    # dynamic threshold and staying in the heap.
    libc.mallopt(M_MMAP_THRESHOLD, 1 << 20)


def give_back_freed_memory() -> bool:
    """Return the pages freed inside the heap to the system (``malloc_trim(0)``); True if glibc did.

    A reading allocates and frees many medium buffers (crops, grey copies,
    the models' tensors, the photos' JPEGs) below the mmap threshold. glibc
    gives back only the free memory at the top of a heap, so the holes those
    buffers leave stay resident: about 10 MiB after a few hundred Bluffs. Called
    after each capture (a fraction of a millisecond), they go back to the system
    and the next Bluff takes them again.
    """
    libc = _libc()
    if libc is None:
        return False
    libc.malloc_trim(0)
    return True
