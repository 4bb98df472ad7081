"""Stage 1, normalise: a checked BGR frame, the tray region cut out, and its grey copy.

Whatever the camera or a file gave (grey, BGRA, 16-bit, any size up to the
image limit), the stages after this one get one kind of frame, or the reading
stops here with a reason a player understands: unusable, blank or dark. Blank and dark are judged on the whole
picture: a tray region that shows nothing in a picture that shows something (a plain empty tray, a region set off the
tray) is read, and says it found no dice, not "lights off or the camera covered".
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

from vision.images import MIN_SIDE, ImageError, check_frame

#: A frame whose every channel varies less than this (0-255, on a small sample) shows nothing: blank or dark.
FLAT_STD = 3.0
#: Below this mean grey level a flat frame is "dark" (lights off, camera covered), above it "blank".
DARK_MEAN = 40.0
#: A frame nearly flat on the small sample still shows something where at least ``FLAT_SPOTS`` points of a finer,
#: averaged look (``FLAT_LOOK_WIDTH`` pixels wide at most) lie this far (grey levels, any channel) from its median:
#: small dice in a big, dim photo, which the small sample's spread alone takes for "lights off".
FLAT_PEAK = 16
FLAT_SPOTS = 12
FLAT_LOOK_WIDTH = 1280
#: ``colour_contrast``: grey levels per unit of a*b* distance (OpenCV's 8-bit Lab) from the frame's commonest colour.
COLOUR_GAIN = 3.0


@dataclass(frozen=True)
class Normalised:
    """The frame the stages read: BGR and grey of the tray region, and where that region lies in the whole frame."""

    bgr: np.ndarray
    grey: np.ndarray
    offset: tuple[int, int]
    #: the whole frame's width and height, the region cut from it (None: the region is the whole frame)
    whole_size: tuple[int, int] | None = None

    @property
    def frame_size(self) -> tuple[int, int]:
        """The width and height of the whole frame the camera took (a lens bends it about its centre)."""
        return self.whole_size or (self.grey.shape[1], self.grey.shape[0])


@dataclass(frozen=True)
class Unreadable:
    """Why a frame cannot be read at all: English words, and a reason code for the page (or None)."""

    words: str
    code: dict | None = None


def normalise(frame: object, tray_region: list[int] | None = None) -> Normalised | Unreadable:
    """The frame ready for the detector, or why it cannot be read.

    >>> normalise(np.zeros((2, 2, 3), np.uint8)).words
    'the frame is too small to show a die (2×2 pixels; at least 16 on each side).'
    >>> normalise(np.zeros((40, 40), np.float64)).words
    'the frame has float64 pixels; the reader needs 8-bit images.'
    >>> normalise(np.zeros((480, 640, 3), np.uint8)).code
    {'code': 'dark'}
    >>> n = normalise(np.random.default_rng(0).integers(0, 255, (480, 640, 3), np.uint8), [100, 50, 200, 100])
    >>> n.bgr.shape, n.grey.shape, n.offset
    ((100, 200, 3), (100, 200), (100, 50))
    """
    try:
        whole = check_frame(frame)
    except ImageError as exc:
        return Unreadable(exc.message)
    bgr, offset = cut_tray(whole, tray_region)
    nothing = nothing_seen(bgr, whole)
    if nothing is not None:
        return nothing
    return Normalised(bgr, cv2.cvtColor(bgr, cv2.COLOR_BGR2GRAY), offset, (whole.shape[1], whole.shape[0]))


def cut_tray(bgr: np.ndarray, tray_region: list[int] | None) -> tuple[np.ndarray, tuple[int, int]]:
    """The tray region of a checked frame (contiguous) and where its corner lies; the whole frame when no region is
    set or it leaves under ``MIN_SIDE`` pixels a side (no die fits).

    >>> part, at = cut_tray(np.zeros((480, 640, 3), np.uint8), [100, 50, 200, 100]); part.shape, at
    ((100, 200, 3), (100, 50))
    """
    if tray_region:
        x, y, w, h = tray_region
        sub = bgr[y:y + h, x:x + w]
        if sub.shape[0] >= MIN_SIDE and sub.shape[1] >= MIN_SIDE:
            return np.ascontiguousarray(sub), (x, y)
    return bgr, (0, 0)


def nothing_seen(region: np.ndarray, whole: np.ndarray) -> Unreadable | None:
    """Why nothing can be read (``dark`` or ``blank``) when the tray ``region`` of the frame ``whole`` shows nothing,
    judged on the whole picture where the region alone is flat (a plain empty tray, a region off the tray: read, and
    no dice found); None when there is something to read."""
    flat = _flat(region)
    if flat is not None and region is not whole:
        flat = _flat(whole)
    if flat is None:
        return None
    return Unreadable(flat_in_words(flat["code"]), flat)


def flat_in_words(kind: str) -> str:
    """The English for a frame that shows nothing, ``kind`` ``dark`` or ``blank``: the one sentence the reading's
    reason, the logs and the command line give (``decide.reason_in_words`` says it with these words too).

    >>> flat_in_words("dark")
    'the frame is dark: no dice can be seen (lights off or the camera covered?)'
    """
    return f"the frame is {kind}: no dice can be seen (lights off or the camera covered?)"


def _flat(bgr: np.ndarray) -> dict | None:
    """The reason code ``dark`` or ``blank`` when ``bgr`` shows nothing (every channel nearly flat), else None.

    A small sample's spread says it fast for most frames; one it finds nearly flat is looked at once more, finer and
    averaged (so sensor noise stays small and a die a few pixels wide is not skipped), and shows something where
    enough of that look stands out from its median.

    >>> dim = np.full((1920, 2560, 3), 44, np.uint8); dim[900:930, 1200:1230] = 5  # one small dark die in a dim room
    >>> _flat(dim) is None, _flat(np.full((1920, 2560, 3), 44, np.uint8))
    (True, {'code': 'blank'})
    """
    sample = cv2.resize(bgr, (160, max(1, round(160 * bgr.shape[0] / bgr.shape[1]))), interpolation=cv2.INTER_NEAREST)
    mean, std = cv2.meanStdDev(sample)
    if float(std.max()) >= FLAT_STD:
        return None
    width = min(FLAT_LOOK_WIDTH, bgr.shape[1])
    look = cv2.resize(bgr, (width, max(1, round(width * bgr.shape[0] / bgr.shape[1]))), interpolation=cv2.INTER_AREA)
    away = np.abs(look.astype(np.int16) - np.median(look.reshape(-1, look.shape[-1]), axis=0).astype(np.int16)).max(axis=-1)
    if int(np.count_nonzero(away >= FLAT_PEAK)) >= FLAT_SPOTS:
        return None
    return {"code": "dark" if float(mean.mean()) < DARK_MEAN else "blank"}


def calibration_misfit(frame_size: tuple[int, int], tray_region: list[int] | None = None,
                       empty_tray_size: tuple[int, int] | None = None) -> dict | None:
    """Why a calibration was made for another picture than the camera's (height, width) ``frame_size``, as the reason
    code ``calibration`` {frame: [w, h], and ``region`` or ``empty_tray``: [w, h]}; None when it fits.

    The tray's region must lie wholly inside the picture (as the set-up page asks) and the empty tray's photo be the
    picture's size: a camera switched to another resolution after ``calibrate``, or a region typed by hand, would
    otherwise be cut to what overlaps, or read whole, silently, and the calibrated die size with it (RULES.md R14).

    >>> calibration_misfit((480, 640), [100, 80, 1000, 800])
    {'code': 'calibration', 'frame': [640, 480], 'region': [100, 80, 1000, 800]}
    >>> calibration_misfit((480, 640), [0, 0, 640, 480], (960, 1280))
    {'code': 'calibration', 'frame': [640, 480], 'empty_tray': [1280, 960]}
    >>> calibration_misfit((480, 640), [0, 0, 640, 480], (480, 640)) is None
    True
    """
    h, w = int(frame_size[0]), int(frame_size[1])
    if tray_region:
        x, y, rw, rh = tray_region
        if x < 0 or y < 0 or x + rw > w or y + rh > h:
            return {"code": "calibration", "frame": [w, h], "region": [int(v) for v in tray_region]}
    if empty_tray_size is not None and tuple(empty_tray_size[:2]) != (h, w):
        return {"code": "calibration", "frame": [w, h], "empty_tray": [int(empty_tray_size[1]), int(empty_tray_size[0])]}
    return None


def colour_contrast(bgr: np.ndarray) -> np.ndarray:
    """A grey image of how far each pixel's colour (its a*b* in Lab, brightness left out) lies from the frame's
    median colour: a red die on grey wood, as bright as the wood in grey, stands out here as a light square.

    >>> frame = np.full((60, 60, 3), 120, np.uint8); frame[20:40, 20:40] = (40, 40, 200)  # red on grey
    >>> m = colour_contrast(frame); int(m[30, 30]) > 100 and int(m[5, 5]) == 0
    True
    """
    lab = cv2.cvtColor(bgr, cv2.COLOR_BGR2LAB)
    step = max(1, max(bgr.shape[:2]) // 160)
    sample = lab[::step, ::step].reshape(-1, 3)
    centre = np.median(sample[:, 1:], axis=0).astype(np.float32)
    table = colour_distance_table(centre)
    pixels = lab.reshape(-1, 3)
    pair = pixels[:, 1].astype(np.intp) << 8  # each pixel's (a*, b*) as one index into the table
    pair |= pixels[:, 2]
    return table.ravel().take(pair).reshape(bgr.shape[:2])


def colour_distance_table(centre: np.ndarray) -> np.ndarray:
    """``colour_contrast``'s grey level for every 8-bit (a*, b*) pair, 256×256: the distance from ``centre`` (float32
    a*, b*), times ``COLOUR_GAIN``, clipped and cut to 8 bits. A frame's pixels take only these 65,536 values, so
    looking each up gives the same bytes as computing it per pixel, at a fifth of the time on a 1280×960 frame
    (a look in colour is taken where the grey looks were unsure: the slow readings).

    >>> t = colour_distance_table(np.array([128, 128], np.float32))
    >>> t.shape, int(t[128, 128]), int(t[131, 132])  # 5 levels away, times 3
    ((256, 256), 0, 15)
    """
    levels = np.arange(256, dtype=np.float32)
    da = (levels - centre[0])[:, None]
    db = (levels - centre[1])[None, :]
    return np.clip(np.sqrt(da * da + db * db) * COLOUR_GAIN, 0, 255).astype(np.uint8)
