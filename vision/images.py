"""Loading and checking images from files and cameras, with errors a person understands.

A frame the reader cannot use (missing, not an image, truncated, empty, huge,
odd channels) is refused here with one sentence, before any pixel work, so the
commands print a clear line and the reader never crashes on it.
"""

from __future__ import annotations

import json
import struct
from pathlib import Path

import cv2
import numpy as np

from companion.core.errors import ElephantsBluffError

#: The largest image the reader decodes (pixels): a bigger JPEG is decoded smaller (``jpeg_reduction``), any other
#: bigger image is refused, not read.
MAX_PIXELS = 40_000_000
#: A JPEG bigger than ``MAX_PIXELS`` is decoded at a half, a quarter or an eighth of its size (libjpeg scales while
#: it decodes, in that much memory): a phone's 48- or 108-megapixel photo is read, its dice still hundreds of pixels.
JPEG_REDUCTIONS = {2: cv2.IMREAD_REDUCED_COLOR_2, 4: cv2.IMREAD_REDUCED_COLOR_4, 8: cv2.IMREAD_REDUCED_COLOR_8}
#: The smallest side a frame can have and still show a die.
MIN_SIDE = 16
#: The smallest side of a crop of one die that is still read: enlarged to ``MIN_SIDE`` (``enlarged_to``), a crop of
#: 8-15 px reads mostly unsure and, sure, right (docs/READING.md, "Crops smaller than a frame"); under it, refused.
CROP_MIN_SIDE = 8
#: Colour, 16-bit kept (``check_frame`` brings it to 8), and turned upright as the file's EXIF orientation says:
#: a phone photo is read, and its boxes given, as every viewer shows it (``IMREAD_UNCHANGED`` ignores that tag).
DECODE_FLAGS = cv2.IMREAD_COLOR | cv2.IMREAD_ANYDEPTH


#: The suffixes of the image files a folder of photos may hold, matched in any case: a camera's ``IMG_0001.JPG``
#: is as much a photo as ``a.jpg``. Where two files share a name, the first suffix here wins.
IMAGE_SUFFIXES = (".jpg", ".jpeg", ".png", ".bmp", ".tif", ".tiff", ".webp")


def is_image_name(path: Path) -> bool:
    """Whether ``path``'s suffix, in any case, is one of ``IMAGE_SUFFIXES``."""
    return path.suffix.lower() in IMAGE_SUFFIXES


def images_by_name(folder: Path) -> dict[str, Path]:
    """The image files directly in ``folder``, by their name without the suffix (``IMG_0001`` for ``IMG_0001.JPG``),
    in name order.

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as d:
    ...     for f in ("b.JPG", "a.png", "a.jpg", "notes.txt"):
    ...         _ = (Path(d) / f).write_bytes(b"")
    ...     {k: v.name for k, v in images_by_name(Path(d)).items()}
    {'a': 'a.jpg', 'b': 'b.JPG'}
    """
    images = [path for path in folder.iterdir() if is_image_name(path) and path.is_file()]
    found: dict[str, Path] = {}
    for path in sorted(images, key=lambda q: (IMAGE_SUFFIXES.index(q.suffix.lower()), q.name)):
        found.setdefault(path.stem, path)
    return dict(sorted(found.items()))


def frame_images(images: Path) -> dict[str, Path]:
    """The photos of a dataset's ``images/`` folder by name: its image files (``IMG_1``) and, where it keeps a folder
    per split as YOLO trainers write them (``images/val/IMG_1.jpg`` beside ``labels/val/IMG_1.txt``), each
    subfolder's files named with it (``val/IMG_1``), so that ``labels/NAME.txt`` is the label in either layout.

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as d:
    ...     for f in ("a.jpg", "val/b.JPG", "train/c.png", "train/notes.txt"):
    ...         (Path(d) / f).parent.mkdir(exist_ok=True)
    ...         _ = (Path(d) / f).write_bytes(b"")
    ...     {k: v.name for k, v in frame_images(Path(d)).items()}
    {'a': 'a.jpg', 'train/c': 'c.png', 'val/b': 'b.JPG'}
    """
    found = images_by_name(images)
    for folder in sorted(p for p in images.iterdir() if p.is_dir()):
        found.update({f"{folder.name}/{name}": path for name, path in images_by_name(folder).items()})
    return found


def photo_name(listed: str) -> str:
    """A photo's name as a ``split.json`` lists it, without its image suffix where it has one.

    >>> photo_name("IMG_1.JPG"), photo_name("IMG_1"), photo_name("run.v2")
    ('IMG_1', 'IMG_1', 'run.v2')
    """
    return Path(listed).stem if is_image_name(Path(listed)) else listed


def read_splits(split_file: Path) -> dict[str, list[str]]:
    """A dataset's ``split.json``: each split's photo names (``photo_name``), as ``evaluate`` and ``teach`` read it.
    ValueError, with a sentence naming the file, where it is not a JSON object of split names to lists of names.

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as d:
    ...     _ = (Path(d) / "split.json").write_text('{"val": ["IMG_1.JPG", "IMG_2"], "test": []}', encoding="utf-8-sig")
    ...     read_splits(Path(d) / "split.json")
    {'val': ['IMG_1', 'IMG_2'], 'test': []}
    """
    try:
        splits = json.loads(split_file.read_text(encoding="utf-8-sig"))
    except (UnicodeDecodeError, json.JSONDecodeError):
        raise ValueError(f"{split_file} is not valid JSON.") from None
    if not isinstance(splits, dict):
        raise ValueError(f"{split_file} is not a JSON object of split names to lists of photo names.")
    for split, members in splits.items():
        if not isinstance(members, list) or not all(isinstance(m, str) for m in members):
            raise ValueError(f"{split_file}: the split {split!r} must be a list of photo names.")
    return {split: [photo_name(m) for m in members] for split, members in splits.items()}


class ImageError(ElephantsBluffError, ValueError):
    """An image file or frame the reader cannot use; the message says why."""

    status = 400
    code = "bad_image"


def header_size(data: bytes) -> tuple[int, int] | None:
    """(width, height) from a PNG or JPEG header without decoding it; None for other formats."""
    if data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) >= 24:
        w, h = struct.unpack(">II", data[16:24])
        return int(w), int(h)
    if data[:2] == b"\xff\xd8":
        i = 2
        while i + 9 < len(data):
            if data[i] != 0xFF:
                i += 1
                continue
            marker = data[i + 1]
            if marker in (0xD8, 0x01) or 0xD0 <= marker <= 0xD7 or marker == 0xFF:
                i += 1 if marker == 0xFF else 2
                continue
            length = struct.unpack(">H", data[i + 2:i + 4])[0]
            if 0xC0 <= marker <= 0xCF and marker not in (0xC4, 0xC8, 0xCC):
                h, w = struct.unpack(">HH", data[i + 5:i + 9])
                return int(w), int(h)
            i += 2 + length
    return None


#: The brands of an HEIF file's ``ftyp`` box (bytes 8-12): what phones save as ``.HEIC``.
HEIF_BRANDS = {b"heic", b"heix", b"hevc", b"hevx", b"heim", b"heis", b"mif1", b"msf1"}


def jpeg_reduction(width: int, height: int) -> int | None:
    """How many times smaller a JPEG of ``width``×``height`` is decoded: 1 within ``MAX_PIXELS``, else the least of
    ``JPEG_REDUCTIONS`` that brings it within; None where even the least size is too large.

    >>> jpeg_reduction(4032, 3024), jpeg_reduction(8160, 6120), jpeg_reduction(12000, 9000), jpeg_reduction(65000, 65000)
    (1, 2, 2, None)
    """
    if width * height <= MAX_PIXELS:
        return 1
    return next((f for f in JPEG_REDUCTIONS if -(-width // f) * -(-height // f) <= MAX_PIXELS), None)  # libjpeg rounds up


def decode_image(data: bytes, name: str = "the image", smallest: int = MIN_SIDE) -> np.ndarray:
    """Decode image bytes to a BGR uint8 frame, or raise ``ImageError`` saying why not. A JPEG over ``MAX_PIXELS`` is
    decoded smaller (``jpeg_reduction``); any other image over it is refused from its header, before decoding. Its
    sides must be at least ``smallest`` (``CROP_MIN_SIDE`` for a crop of one die)."""
    if not data:
        raise ImageError(f"{name} is empty (0 bytes).")
    size = header_size(data)
    is_jpeg = data[:2] == b"\xff\xd8"
    flags = DECODE_FLAGS
    if size is not None:
        w, h = size
        factor = jpeg_reduction(w, h) if is_jpeg else (1 if w * h <= MAX_PIXELS else None)
        if factor is None:
            raise ImageError(f"{name} is too large to read ({w}×{h} pixels; the limit is {MAX_PIXELS // 1_000_000} megapixels).")
        flags = JPEG_REDUCTIONS.get(factor, DECODE_FLAGS)
    if is_jpeg and b"\xff\xd9" not in data[-1024:]:  # some cameras pad after the end marker
        raise ImageError(f"{name} is a truncated JPEG (the file ends before the image does).")
    try:
        img = cv2.imdecode(np.frombuffer(data, np.uint8), flags)
    except cv2.error as exc:
        if "MAX_IMAGE_PIXELS" in str(exc):  # the limit set in vision/__init__.py: refused before decoding
            raise ImageError(f"{name} is too large to read (over {MAX_PIXELS // 1_000_000} megapixels).") from None
        raise ImageError(f"{name} is a damaged image that OpenCV cannot decode.") from None
    if img is None:
        if data[4:8] == b"ftyp" and data[8:12] in HEIF_BRANDS:
            raise ImageError(f"{name} is a HEIC photo (an iPhone's), which OpenCV cannot read: save it as JPEG first.")
        raise ImageError(f"{name} is not an image OpenCV can read (JPEG, PNG, BMP, TIFF, WebP...).")
    return check_frame(img, name, smallest)


def check_frame(img: object, name: str = "the frame", smallest: int = MIN_SIDE) -> np.ndarray:
    """A usable BGR uint8 frame from ``img`` (grey, BGRA and 16-bit are converted), its sides at least ``smallest``,
    or ``ImageError``."""
    if not isinstance(img, np.ndarray):
        raise ImageError(f"{name} is not an image array.")
    if img.ndim == 3 and img.shape[2] == 1:
        img = img[:, :, 0]
    if img.ndim not in (2, 3) or (img.ndim == 3 and img.shape[2] not in (3, 4)):
        raise ImageError(f"{name} has an unusable shape {tuple(img.shape)} (expected height × width × 3 colour channels).")
    h, w = img.shape[:2]
    if h * w > MAX_PIXELS:
        raise ImageError(f"{name} is too large to read ({w}×{h} pixels; the limit is {MAX_PIXELS // 1_000_000} megapixels).")
    if h < smallest or w < smallest:
        raise ImageError(f"{name} is too small to show a die ({w}×{h} pixels; at least {smallest} on each side).")
    if img.dtype == np.uint16:
        img = (img >> 8).astype(np.uint8)
    elif img.dtype != np.uint8:
        raise ImageError(f"{name} has {img.dtype} pixels; the reader needs 8-bit images.")
    if img.ndim == 2:
        img = cv2.cvtColor(img, cv2.COLOR_GRAY2BGR)
    elif img.shape[2] == 4:
        img = cv2.cvtColor(img, cv2.COLOR_BGRA2BGR)
    return np.ascontiguousarray(img)


def _image_bytes(path: str | Path) -> bytes:
    """The bytes of an image file, or ``ImageError`` naming the file: missing, a folder, unreadable."""
    p = Path(path)
    if not p.exists():
        raise ImageError(f"{path}: no such file.")
    if p.is_dir():
        raise ImageError(f"{path} is a folder, not an image file.")
    try:
        return p.read_bytes()
    except OSError as exc:
        raise ImageError(f"{path} cannot be read ({exc.strerror or exc}).") from None


def load_image(path: str | Path, smallest: int = MIN_SIDE) -> np.ndarray:
    """Read an image file as a BGR frame, its sides at least ``smallest`` (``CROP_MIN_SIDE`` for a crop of one die);
    ``ImageError`` names the file and the problem."""
    return decode_image(_image_bytes(path), str(path), smallest)


def enlarged_to(img: np.ndarray, side: int) -> np.ndarray:
    """``img`` enlarged (bicubic) so that its short side is ``side``, where it is shorter; else ``img`` itself.

    >>> enlarged_to(np.zeros((10, 12, 3), np.uint8), 16).shape, enlarged_to(np.zeros((20, 30, 3), np.uint8), 16).shape
    ((16, 19, 3), (20, 30, 3))
    """
    h, w = img.shape[:2]
    if min(h, w) >= side:
        return img
    k = side / min(h, w)
    return cv2.resize(img, (max(side, round(w * k)), max(side, round(h * k))), interpolation=cv2.INTER_CUBIC)


def load_image_with_scale(path: str | Path) -> tuple[np.ndarray, float]:
    """``load_image``'s frame, and how many of the file's pixels one of the frame's spans: 1.0, or the factor a big
    JPEG was decoded smaller by (``jpeg_reduction``), so that boxes read in the frame can be given in the file's own
    pixels. The file is read once."""
    data = _image_bytes(path)
    frame = decode_image(data, str(path))
    size = header_size(data)
    return frame, 1.0 if size is None else max(1.0, max(size) / max(frame.shape[:2]))


def encode_jpeg(img: np.ndarray, quality: int = 90) -> bytes:
    """JPEG bytes of a BGR frame (for saved Bluff images)."""
    ok, buf = cv2.imencode(".jpg", img, [cv2.IMWRITE_JPEG_QUALITY, quality])
    if not ok:
        raise ImageError("the frame could not be encoded as JPEG.")
    return buf.tobytes()
