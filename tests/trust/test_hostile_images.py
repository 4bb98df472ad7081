"""The reader under hostile images: a clear status, bounded time and memory, never a crash.

Files: random bytes, truncated and empty files, a PNG whose header claims
20 000 × 20 000 pixels, and a real decompression bomb (a 12 000 × 12 000 RGB
TIFF of zeros, deflated to a few hundred KB, that decodes to 432 MB). Frames:
1 × 1, 20 000 × 20 000 (a broadcast view, so the test itself allocates
nothing), odd shapes and types, and absurd but NaN-free colours. Memory is
measured in a fresh process (its peak RSS) so one test's allocations cannot
hide another's; time is never asserted.
"""

from __future__ import annotations

import json
import os
import struct
import subprocess
import sys
import zlib
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from vision.images import MAX_PIXELS, ImageError, check_frame, decode_image, load_image

ROOT = Path(__file__).resolve().parents[2]


def png_claiming(width: int, height: int) -> bytes:
    """A PNG signature and IHDR that claim ``width`` × ``height``, and a tiny IDAT."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", zlib.compress(b"\0" * 1024)) + chunk(b"IEND", b"")


def tiff_bomb(width: int, height: int) -> bytes:
    """A real RGB TIFF of zeros, one deflated strip: a few hundred KB that decode to width × height × 3 bytes."""
    co = zlib.compressobj(9)
    row = b"\0" * (width * 3)
    block = row * max(1, (1 << 22) // len(row))
    rows_per_block = len(block) // len(row)
    parts = [co.compress(block) for _ in range(height // rows_per_block)]
    parts.append(co.compress(row * (height % rows_per_block)))
    parts.append(co.flush())
    data = b"".join(parts)
    ifd_at = 8 + len(data) + (len(data) % 2)
    entries = [(256, 4, 1, width), (257, 4, 1, height), (258, 3, 3, ifd_at + 2 + 12 * 11 + 4), (259, 3, 1, 8), (262, 3, 1, 2),
               (273, 4, 1, 8), (277, 3, 1, 3), (278, 4, 1, height), (279, 4, 1, len(data)), (284, 3, 1, 1), (339, 3, 1, 1)]
    out = b"II*\0" + struct.pack("<I", ifd_at) + data + (b"\0" if len(data) % 2 else b"")
    out += struct.pack("<H", len(entries)) + b"".join(struct.pack("<HHII", *e) for e in entries) + b"\0\0\0\0"
    return out + struct.pack("<HHH", 8, 8, 8)


def _in_fresh_process(code: str, tmp_path: Path) -> dict:
    """Run ``code`` (which sets ``result``) in a new interpreter; returns result and peak RSS (MB)."""
    script = tmp_path / "probe.py"
    script.write_text(
        "import json, resource, sys\n"
        "base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\n"
        f"{code}\n"
        "print(json.dumps({'result': result, 'base_mb': base / 1024, 'peak_mb': resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))\n"
    )
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


# --- files ---------------------------------------------------------------------------------

@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True, database=None)
@given(data=st.one_of(st.binary(max_size=4096), st.builds(lambda b: b"\xff\xd8\xff\xe0" + b, st.binary(max_size=2048)), st.builds(lambda b: b"\x89PNG\r\n\x1a\n" + b, st.binary(max_size=2048))))
def test_random_bytes_are_refused_with_a_sentence(data):
    with pytest.raises(ImageError) as refused:
        decode_image(data, "upload.jpg")
    assert refused.value.message.startswith("upload.jpg") and refused.value.message.endswith(".")


def test_missing_empty_and_folder_paths_are_refused_with_a_sentence(tmp_path):
    (tmp_path / "empty.jpg").write_bytes(b"")
    for path, words in ((tmp_path / "nope.jpg", "no such file"), (tmp_path / "empty.jpg", "empty"), (tmp_path, "folder")):
        with pytest.raises(ImageError) as refused:
            load_image(path)
        assert words in refused.value.message and str(path) in refused.value.message


def test_a_png_claiming_20000_by_20000_is_refused_before_decoding(tmp_path):
    out = _in_fresh_process(
        "from vision.images import decode_image, ImageError\n"
        f"data = {png_claiming(20000, 20000)!r}\n"
        "try:\n    decode_image(data, 'claim.png'); result = 'decoded'\n"
        "except ImageError as exc:\n    result = exc.message\n",
        tmp_path,
    )
    assert "too large" in out["result"] and "20000×20000" in out["result"]
    assert out["peak_mb"] - out["base_mb"] < 150, out


def test_a_tiff_decompression_bomb_is_refused_in_bounded_memory(tmp_path):
    bomb = tmp_path / "bomb.tif"
    bomb.write_bytes(tiff_bomb(12000, 12000))
    assert bomb.stat().st_size < 1_000_000  # 432 MB of pixels in a small file
    out = _in_fresh_process(
        "from vision.images import load_image, ImageError\n"
        f"try:\n    load_image({str(bomb)!r}); result = 'decoded'\n"
        "except ImageError as exc:\n    result = exc.message\n",
        tmp_path,
    )
    assert "too large" in out["result"], out
    assert out["peak_mb"] - out["base_mb"] < 150, f"decoding the bomb took {out['peak_mb'] - out['base_mb']:.0f} MB: {out}"


def test_opencvs_own_decode_limit_is_the_readers_limit():
    assert os.environ["OPENCV_IO_MAX_IMAGE_PIXELS"] == str(MAX_PIXELS)


def test_the_read_command_reports_hostile_files_one_line_each(tmp_path):
    files = {"random.jpg": os.urandom(3000), "claim.png": png_claiming(20000, 20000), "cut.jpg": b"\xff\xd8\xff\xe0" + os.urandom(500), "empty.png": b""}
    for name, data in files.items():
        (tmp_path / name).write_bytes(data)
    args = [sys.executable, "-m", "companion.app.cli", "read", "--json", *[str(tmp_path / n) for n in files]]
    done = subprocess.run(args, capture_output=True, text=True, timeout=300, cwd=ROOT)
    lines = [json.loads(line) for line in done.stdout.splitlines() if line.strip()]
    assert [line["file"] for line in lines] == [str(tmp_path / n) for n in files], done.stderr
    for line in lines:
        assert line["status"] != "ok" and line.get("dice") in ([], None)
        assert (line.get("reason") or line.get("error") or line.get("message")), line


# --- frames --------------------------------------------------------------------------------

@pytest.mark.parametrize(
    "frame,words",
    [
        (np.zeros((1, 1, 3), np.uint8), "too small"),
        (np.broadcast_to(np.zeros((1, 1, 3), np.uint8), (20000, 20000, 3)), "too large"),
        (np.zeros((480, 640, 2), np.uint8), "unusable shape"),
        (np.zeros((480, 640, 3), np.float32), "8-bit"),
        (np.zeros((0, 0, 3), np.uint8), "too small"),
        ("not an array", "not an image array"),
    ],
    ids=["1x1", "20000x20000", "two-channels", "float", "empty", "not-an-array"],
)
def test_unusable_frames_are_refused_with_a_sentence(frame, words):
    with pytest.raises(ImageError) as refused:
        check_frame(frame)
    assert words in refused.value.message


def _reader():
    from companion.app.settings import Settings
    from vision.reader import load_reader

    try:
        return load_reader(Settings.defaults())
    except Exception as exc:  # noqa: BLE001 - the model is not shipped yet
        pytest.skip(f"the reader cannot load: {exc}")


ABSURD = {
    "pure magenta": np.full((480, 640, 3), (255, 0, 255), np.uint8),
    "pure white": np.full((480, 640, 3), 255, np.uint8),
    "saturated noise": np.random.default_rng(1).integers(0, 256, (480, 640, 3), dtype=np.uint8),
    "stripes": np.tile(np.array([[0], [255]], np.uint8), (240, 640))[:, :, None].repeat(3, axis=2),
    "checkerboard": ((np.indices((480, 640)).sum(axis=0) // 8 % 2) * 255).astype(np.uint8)[:, :, None].repeat(3, axis=2),
    "16-bit extremes": np.full((480, 640, 3), 65535, np.uint16),
    "transparent BGRA": np.zeros((480, 640, 4), np.uint8),
    "grey": np.full((480, 640), 128, np.uint8),
}


@pytest.mark.parametrize("name", list(ABSURD))
def test_absurd_colours_give_a_status_not_a_crash(name):
    reading = _reader().read(ABSURD[name])
    # No die is in any of these frames: never "ok", always a reason in words.
    assert reading.status == "uncertain" and reading.reason, reading
    assert all(1 <= d.top <= 6 for d in reading.dice)
