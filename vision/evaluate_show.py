"""What ``evaluate DIR --show FOLDER`` draws: each photo or crop not read all right, as a person checks it.

A figure says how often; the photos say why. On a set the reader was never tuned on, these are where a maintainer
looks first: an "extra" die that is a die the labels left out, a die seen at a slant and boxed loosely, a face
misread, a thing on the table taken for a die. A photo is the reader's own annotated frame (``annotate``: a sure
die green, a doubted one orange, the reading's status on top), with each label's box drawn over it in cyan and its
face in the box's lower left corner; a crop is shown enlarged with its label and what was read above it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import cv2
import numpy as np

from companion.core.errors import ElephantsBluffError
from vision.glyphs import draw_text
from vision.images import IMAGE_SUFFIXES, encode_jpeg, enlarged_to

#: The labels' boxes and faces (BGR cyan: neither of ``annotate``'s green and orange).
LABEL_COLOUR = (255, 255, 0)
#: A crop is enlarged to at least this side, so its marks and the words above it can be read.
CROP_SHOWN_SIDE = 256
#: The band above a crop that holds its label and reading, in pixels.
CROP_BAND = 28


class ShowFolderError(ElephantsBluffError, OSError):
    """The folder ``--show`` names cannot hold the photos (a file by that name, no permission, a full disk)."""

    code = "show_folder"


class MissPictures:
    """Writes the pictures of the misses into ``folder`` (made if missing), one JPEG each, named after the photo.

    ``written``: the files' names, in the order written. A name holding a split folder (``val/IMG_1``) is flattened
    (``val--IMG_1.jpg``); two photos whose flattened names meet get ``-2``, ``-3`` after the second.
    """

    def __init__(self, folder: Path) -> None:
        self.folder = Path(folder)
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
        except FileExistsError:
            raise ShowFolderError(f"{self.folder} is a file: --show needs a folder to draw the photos read wrong into.") from None
        except OSError as exc:
            raise ShowFolderError(f"{self.folder} cannot be made for the photos read wrong ({exc.strerror or exc}).") from None
        self.written: list[str] = []

    def photo(self, name: str, frame: np.ndarray, labels: list[tuple[int, float, float, float, float]], reading: Any, reader: Any) -> str:
        """The annotated ``frame`` of ``reading`` with ``labels`` (face, centre x, y, width, height) drawn over it."""
        out = reader.annotate(frame, reading)
        scale = max(0.5, max(out.shape[:2]) / 1280)
        thick = max(1, int(round(scale)))
        height, width = out.shape[:2]
        for face, cx, cy, w, h in labels:  # a label far outside the photo is drawn at its edge
            x0, x1 = (int(round(min(max(v, -1.0), width))) for v in (cx - w / 2, cx + w / 2))
            y0, y1 = (int(round(min(max(v, -1.0), height))) for v in (cy - h / 2, cy + h / 2))
            cv2.rectangle(out, (x0, y0), (x1, y1), LABEL_COLOUR, thick, cv2.LINE_AA)
            draw_text(out, str(face), (x0 + thick + 1, max(0, y1 - thick - 2)), max(7, int(round(13 * scale))), LABEL_COLOUR)
        return self._write(name, out)

    def crop(self, name: str, image: np.ndarray, truth: int, value: int, confidence: float, sure: bool) -> str:
        """``image`` (BGR, as ``load_image`` gives a crop) enlarged, its label and the face read (0: not a die) above it."""
        big = enlarged_to(image, CROP_SHOWN_SIDE)
        out = np.zeros((big.shape[0] + CROP_BAND, max(big.shape[1], CROP_SHOWN_SIDE), 3), np.uint8)
        out[CROP_BAND:, :big.shape[1]] = big
        read = f"read {value}" if value else "read: not a die"
        draw_text(out, f"label {truth}, {read} {confidence:.2f} {'sure' if sure else 'unsure'}", (6, CROP_BAND - 8), 14,
                  (60, 200, 60) if value == truth else (0, 140, 255))
        return self._write(name, out)

    def _write(self, name: str, img: np.ndarray) -> str:
        name = name.replace("\\", "/")
        stem = name[: -len(Path(name).suffix)] if Path(name).suffix.lower() in IMAGE_SUFFIXES else name
        stem = stem.strip("/").replace("/", "--") or "photo"
        file, n = f"{stem}.jpg", 1
        while file in self.written:
            n += 1
            file = f"{stem}-{n}.jpg"
        try:
            (self.folder / file).write_bytes(encode_jpeg(img))
        except OSError as exc:
            raise ShowFolderError(f"{self.folder / file} cannot be written ({exc.strerror or exc}).") from None
        self.written.append(file)
        return file
