"""Every bad image file the reader may be handed gets one clear sentence, never a traceback."""

from __future__ import annotations

import struct

import cv2
import numpy as np
import pytest

from vision.images import MAX_PIXELS, ImageError, check_frame, decode_image, encode_jpeg, header_size, jpeg_reduction, load_image


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


def test_an_iphones_heic_photo_is_named_as_such_with_what_to_do(tmp_path):
    heic = struct.pack(">I", 24) + b"ftypheic" + b"\0\0\0\0mif1heic" + b"\0" * 64  # the start of an iPhone's HEIC file
    (tmp_path / "IMG_0001.HEIC").write_bytes(heic)
    with pytest.raises(ImageError, match="IMG_0001.HEIC is a HEIC photo .an iPhone's., which OpenCV cannot read: save it as JPEG first"):
        load_image(tmp_path / "IMG_0001.HEIC")


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


def test_a_jpeg_over_the_limit_is_decoded_smaller_and_upright_and_one_too_big_even_so_is_refused():
    """A phone's 48-megapixel photo (8000×6000, turned by its EXIF tag) decodes at a half: 3000 wide, 4000 high."""
    sensor = np.zeros((6000, 8000, 3), np.uint8)
    sensor[:, :2000] = (0, 0, 255)
    shown = decode_image(_with_exif_orientation(encode_jpeg(sensor), 6), "IMG_0002.JPG")
    assert shown.shape == (4000, 3000, 3) and shown[10, 1500, 2] > 200 and shown[-10, 1500, 2] < 50
    ok, buf = cv2.imencode(".jpg", np.zeros((10, 10, 3), np.uint8))
    data = bytearray(buf.tobytes())
    sof = data.index(b"\xff\xc0")
    data[sof + 5:sof + 9] = (60_000).to_bytes(2, "big") * 2  # claims 60 000 × 60 000: an eighth is still 56 megapixels
    assert header_size(bytes(data)) == (60_000, 60_000) and jpeg_reduction(60_000, 60_000) is None
    with pytest.raises(ImageError, match="too large"):
        decode_image(bytes(data), "claim.jpg")


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


def _with_exif_orientation(jpeg: bytes, orientation: int) -> bytes:
    """The JPEG with an EXIF block whose only tag is its orientation (as a phone writes it)."""
    tiff = b"MM\x00\x2a\x00\x00\x00\x08" + struct.pack(">H", 1) + struct.pack(">HHIHH", 0x0112, 3, 1, orientation, 0) + b"\x00" * 4
    app1 = b"Exif\x00\x00" + tiff
    return jpeg[:2] + b"\xff\xe1" + struct.pack(">H", len(app1) + 2) + app1 + jpeg[2:]


def test_a_phone_photo_is_read_upright_as_its_exif_orientation_says():
    """Orientation 6: the sensor's image is shown turned 90 degrees clockwise; its left edge becomes the top."""
    sensor = np.zeros((40, 80, 3), np.uint8)
    sensor[:, :20] = (0, 0, 255)
    shown = decode_image(_with_exif_orientation(encode_jpeg(sensor), 6), "phone.jpg")
    assert shown.shape == (80, 40, 3)
    assert shown[2, 20, 2] > 200 and shown[-2, 20, 2] < 50


def test_16_bit_and_grey_and_transparent_files_still_decode_to_8_bit_colour():
    deep = np.full((30, 30, 3), 40000, np.uint16)
    grey = np.full((30, 30), 90, np.uint8)
    bgra = np.dstack([np.full((30, 30, 3), 200, np.uint8), np.zeros((30, 30), np.uint8)])
    for img, value in ((deep, 40000 >> 8), (grey, 90), (bgra, 200)):
        out = decode_image(cv2.imencode(".png", img)[1].tobytes(), "x.png")
        assert out.dtype == np.uint8 and out.shape == (30, 30, 3) and abs(int(out[5, 5, 0]) - value) <= 1
