"""What a process's resident memory is made of: its own (anonymous) pages and the files it maps.

`serve`'s resident figure moves between runs of the same commit: its libraries'
code (OpenCV, onnxruntime, numpy) is file pages, and where the page cache holds a
library in large folios the kernel maps a whole folio when a page of it is run,
so code never run counts too: right after an install the same server can read
tens of MiB more than an hour later (docs/MEMORY.md has the runs). Those pages are
clean and shared with the page cache, and the kernel takes them back under
pressure. The anonymous part (the heap, the arenas, numpy's arrays) is what the
process itself holds, and it does not depend on the page cache. The bench reports
both beside the RSS so that a moved figure can be told apart.

Linux only (``/proc``); the large-folio share needs root (``/proc/kpageflags``).
"""

from __future__ import annotations

import mmap
import struct
from pathlib import Path
from typing import Any

#: pagemap has one entry per page of the system's size (16 kB on a Pi 5's kernel, 4 kB here).
PAGE = mmap.PAGESIZE
#: /proc/kpageflags bits: a page that is the tail of a compound (large) folio.
KPF_COMPOUND_TAIL = 16


def memory_split(pid: int) -> dict[str, Any]:
    """RSS, anonymous and file-backed resident MiB of ``pid``, and the share of its mapped file pages that
    sit in large folios (None where it cannot be read: not Linux, not root). OSError when ``pid`` is gone."""
    if not Path("/proc/self/smaps_rollup").is_file():  # not Linux (or a kernel before 4.14)
        return {"rss": None, "anonymous": None, "file_backed": None, "file_pages_in_large_folios": None}
    kb = {}
    for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines()[1:]:  # OSError when pid is gone
        key, _, rest = line.partition(":")
        parts = rest.split()
        if parts and parts[0].isdigit():
            kb[key] = int(parts[0])
    rss, anon = kb.get("Rss", 0), kb.get("Anonymous", 0)
    return {"rss": round(rss / 1024, 1), "anonymous": round(anon / 1024, 1), "file_backed": round((rss - anon) / 1024, 1),
            "file_pages_in_large_folios": _large_folio_share(pid)}


def _file_mappings(pid: int) -> list[tuple[int, int]]:
    spans = []
    for line in Path(f"/proc/{pid}/maps").read_text().splitlines():
        parts = line.split()
        if len(parts) > 5 and parts[5].startswith("/"):
            start, end = (int(x, 16) for x in parts[0].split("-"))
            spans.append((start, end))
    return spans


def _large_folio_share(pid: int) -> float | None:
    """Of the file pages ``pid`` has mapped, the share that are tails of large folios."""
    try:
        pagemap = open(f"/proc/{pid}/pagemap", "rb")
        flags = open("/proc/kpageflags", "rb")
    except OSError:
        return None
    present = tails = 0
    with pagemap, flags:
        for start, end in _file_mappings(pid):
            pagemap.seek(start // PAGE * 8)
            entries = pagemap.read((end - start) // PAGE * 8)
            for (entry,) in struct.iter_unpack("<Q", entries):
                if not entry >> 63:
                    continue
                pfn = entry & ((1 << 55) - 1)
                if pfn == 0:  # the frame number is hidden: not root after all
                    return None
                flags.seek(pfn * 8)
                present += 1
                tails += struct.unpack("<Q", flags.read(8))[0] >> KPF_COMPOUND_TAIL & 1
    return round(tails / present, 3) if present else None
