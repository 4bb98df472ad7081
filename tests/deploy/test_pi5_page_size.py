"""A Raspberry Pi 5 runs a kernel with 16 KB pages: a library whose loadable segments are laid out for 4 KB pages
only is refused by the loader there ("ELF load command ... not page-aligned"), though it runs on a Pi 4 and under
qemu here. ``make pi-rehearsal`` checks every compiled library in the installed venv with ``deploy/pi/common.py``'s
reader of ELF program headers; these tests check that reader on made-up headers and on this machine's libraries.
"""

from __future__ import annotations

import struct
import sys
import sysconfig
from pathlib import Path

from tests.deploy.scripts import ROOT, load_script

pi_check = load_script("pi_check_page_size", ROOT / "deploy" / "pi" / "pi_check.py")
common = sys.modules[pi_check.Chroot.__module__]

PT_LOAD, PT_DYNAMIC = 1, 2


def elf(segments: list[tuple[int, int, int, int]]) -> bytes:
    """A 64-bit little-endian ELF header and program headers: (type, offset, address, alignment) per segment."""
    phoff, phentsize = 64, 56
    head = bytearray(64)
    head[:6] = b"\x7fELF\x02\x01"
    struct.pack_into("<Q", head, 0x20, phoff)
    struct.pack_into("<HH", head, 0x36, phentsize, len(segments))
    for p_type, offset, vaddr, align in segments:
        head += struct.pack("<IIQQQQQQ", p_type, 5, offset, vaddr, vaddr, 0x100, 0x100, align)
    return bytes(head)


def test_a_library_laid_out_for_64_kb_pages_loads_with_16_kb_pages():
    header = elf([(PT_LOAD, 0, 0, 0x10000), (PT_LOAD, 0x5A000, 0x6A000, 0x10000), (PT_DYNAMIC, 0x5A100, 0x6A100, 8)])
    assert common.elf_page_misfits(header, 16384) == []
    assert common.elf_page_misfits(header, 4096) == []


def test_a_library_aligned_to_4_kb_is_refused_with_16_kb_pages_but_not_with_4_kb():
    header = elf([(PT_LOAD, 0, 0, 0x1000), (PT_LOAD, 0x3000, 0x4000, 0x1000)])
    assert common.elf_page_misfits(header, 4096) == []
    assert common.elf_page_misfits(header, 16384) == ["segment 0 aligned to 4096 bytes", "segment 1 aligned to 4096 bytes"]


def test_a_segment_whose_address_and_offset_differ_by_part_of_a_page_is_refused():
    header = elf([(PT_LOAD, 0, 0, 0x10000), (PT_LOAD, 0x5A000, 0x6B000, 0x10000)])
    assert common.elf_page_misfits(header, 16384) == ["segment 1 at address 0x6b000, offset 0x5a000"]


def test_what_is_not_a_64_bit_little_endian_elf_is_not_judged():
    assert common.elf_page_misfits(b"/* GNU ld script */ INPUT(libfoo.so.1)") is None
    assert common.elf_page_misfits(b"\x7fELF\x01\x01" + bytes(58)) is None  # 32-bit
    assert common.elf_page_misfits(b"\x7fELF\x02\x02" + bytes(58)) is None  # big-endian
    assert common.elf_page_misfits(b"\x7fELF\x02") is None and common.elf_page_misfits(b"") is None


def test_a_folder_of_libraries_is_counted_and_the_misfits_named(tmp_path):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "good.cpython-311-aarch64-linux-gnu.so").write_bytes(elf([(PT_LOAD, 0, 0, 0x10000)]))
    (tmp_path / "pkg" / "libold.so.1.2").write_bytes(elf([(PT_LOAD, 0, 0, 0x1000)]))
    (tmp_path / "pkg" / "libscript.so").write_text("INPUT(libold.so.1.2)\n", encoding="utf-8")
    (tmp_path / "pkg" / "cut.so").write_bytes(elf([(PT_LOAD, 0, 0, 0x10000)])[:80])  # program headers cut short
    (tmp_path / "pkg" / "libold.so").symlink_to("libold.so.1.2")
    count, misfit = common.libraries_misfit_for_pages(tmp_path, 16384)
    assert count == 3
    assert misfit == {"pkg/libold.so.1.2": ["segment 0 aligned to 4096 bytes"], "pkg/cut.so": ["its program headers are cut short"]}


def test_this_machines_own_libraries_are_read_and_all_load_with_its_own_page_size():
    """The reader on real files: every library of this environment loads here (the machine's own page size)."""
    import mmap

    site = Path(sysconfig.get_paths()["platlib"])
    count, misfit = common.libraries_misfit_for_pages(site / "numpy", mmap.PAGESIZE)
    assert count >= 5 and misfit == {}


def test_make_lock_finds_a_wheel_whose_library_a_pi_5_would_refuse(tmp_path):
    """``make lock`` looks inside the wheels a Pi would install, before it writes the lock."""
    import zipfile

    lock_versions = load_script("lock_versions_pages", ROOT / "deploy" / "lock_versions.py")
    good, old = tmp_path / "good-1.0-cp311-cp311-manylinux_2_28_aarch64.whl", tmp_path / "old-1.0-cp311-cp311-manylinux2014_aarch64.whl"
    with zipfile.ZipFile(good, "w") as z:
        z.writestr("good/_speedups.cpython-311-aarch64-linux-gnu.so", elf([(PT_LOAD, 0, 0, 0x10000)]))
        z.writestr("good/__init__.py", "")
    with zipfile.ZipFile(old, "w") as z:
        z.writestr("old.libs/libold-1a2b3c.so.1.0", elf([(PT_LOAD, 0, 0, 0x1000)]))
        z.writestr("old/core.cpython-311-aarch64-linux-gnu.so", elf([(PT_LOAD, 0, 0, 0x10000)]))
    assert lock_versions.wheels_misfit_for_pages([good]) == {}
    assert lock_versions.wheels_misfit_for_pages([good, old]) == {f"{old.name}: old.libs/libold-1a2b3c.so.1.0": ["segment 0 aligned to 4096 bytes"]}
