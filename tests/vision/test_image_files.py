"""Every bad image file the reader may be handed gets one clear sentence, never a traceback."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from vision.images import MAX_PIXELS, ImageError, check_frame, decode_image, encode_jpeg, header_size, load_image


def test_missing_file_and_folder_are_named(tmp_path):
    with pytest.raises(ImageError, match="no such file"):
        load_image(tmp_path / "nope.jpg")
    with pytest.raises(ImageError, match="is a folder"):
        load_image(tmp_path)


def test_empty_file_and_non_image_are_refused(tmp_path):
    (tmp_path / "empty.jpg").write_bytes(b"")
    with pytest.raises(ImageError, match="empty"):
        load_image(tmp_path / "empty.jpg")
    (tmp_path / "text.png").write_text("not an image at all")
    with pytest.raises(ImageError, match="not an image"):
        load_image(tmp_path / "text.png")


def test_truncated_jpeg_is_refused():
    data = encode_jpeg(np.random.default_rng(0).integers(0, 255, (200, 200, 3)).astype(np.uint8))
    with pytest.raises(ImageError, match="truncated"):
        decode_image(data[: len(data) // 2], "half.jpg")


def test_one_pixel_image_is_too_small():
    ok, buf = cv2.imencode(".png", np.zeros((1, 1, 3), np.uint8))
    with pytest.raises(ImageError, match="too small"):
        decode_image(buf.tobytes(), "dot.png")


def test_huge_image_is_refused_from_its_header_before_decoding():
    ok, buf = cv2.imencode(".png", np.zeros((10, 10), np.uint8))
    data = bytearray(buf.tobytes())
    data[16:24] = (10_000).to_bytes(4, "big") + (10_000).to_bytes(4, "big")  # claims 10 000 × 10 000
    assert header_size(bytes(data)) == (10_000, 10_000)
    with pytest.raises(ImageError, match="too large"):
        decode_image(bytes(data), "huge.png")


def test_jpeg_header_size_is_read_without_decoding():
    data = encode_jpeg(np.zeros((123, 321, 3), np.uint8))
    assert header_size(data) == (321, 123)


def test_wide_10000_pixel_strip_is_read_not_refused(reader):
    strip = np.full((60, 10_000, 3), 128, np.uint8)
    assert 60 * 10_000 < MAX_PIXELS
    r = reader.read(decode_image(encode_jpeg(strip), "strip.jpg"))
    assert r.status == "uncertain" and r.dice == ()


def test_frames_with_odd_channels_are_converted_or_refused():
    assert check_frame(np.zeros((20, 20), np.uint8)).shape == (20, 20, 3)
    assert check_frame(np.zeros((20, 20, 1), np.uint8)).shape == (20, 20, 3)
    assert check_frame(np.zeros((20, 20, 4), np.uint8)).shape == (20, 20, 3)
    assert check_frame(np.full((20, 20, 3), 65535, np.uint16)).max() == 255
    with pytest.raises(ImageError, match="unusable shape"):
        check_frame(np.zeros((20, 20, 5), np.uint8))
    with pytest.raises(ImageError, match="8-bit"):
        check_frame(np.zeros((20, 20, 3), np.float64))
