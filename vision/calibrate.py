"""``elephants-bluff calibrate``: check the camera on an empty tray, lock exposure and white balance.

It grabs a frame from the configured camera and says, in words, what to fix:
focus, exposure (too dark, burnt out), glare (reflections of the lights in the
acrylic), dice left on the tray. Then it stores the tray's region and, on the
Pi camera, the exposure, gain and white balance it settled on, so every Bluff
is read under the same light. Other backends are checked but have nothing to
lock. From the command line the frame is grabbed with the tray's LED ring lit, as
at a Bluff (``firmware.lit_tray``); where it cannot be lit, it says so and why.

``calibrate --dice``, run next with the game's dice lying apart on the tray,
measures a die's side in pixels and stores it as ``reader.die_side_px``. The
camera's height under the tray fixes that size, and a reader that knows it
need not guess it from each frame: touching dice are cut at the right size
and the coarse look for close-up photos is skipped.

``calibrate --lens``, with a printed chessboard lying face down on the tray,
measures how much the camera's wide lens bends the picture and stores it as
``camera.lens_distortion`` (and ``camera.lens_distortion_k2``, where the board
shows that one coefficient does not fit): the reader then judges each die's
outline where it would lie without the bend, so a flat die near the tray's edge
is not taken for a leaning one (``vision.pipeline.lens``). Run it before
``--dice``. The set-up page has the same step and links the board to print
(``printable_board``).
"""

from __future__ import annotations

import hashlib
import logging
import math
import re
from dataclasses import dataclass
from html import escape
from pathlib import Path
from typing import TYPE_CHECKING, Callable, TextIO

import cv2
import numpy as np

from companion.core.errors import HardwareError
from companion.core.files import atomic_write
from companion.core.protocols import FrameSource
from companion.core.settings import CONFIG_NAME, Settings, write_config
from vision.pipeline.alike import body_colour, unlike_the_others
from vision.pipeline.lens import FIT_RESIDUAL, Lens, fit_distortion
from vision.pipeline.shape import die_sides, sides_agree
from vision.reader import load_reader
from vision.sources import build_frame_source

if TYPE_CHECKING:  # the classic reader's modules load only where a calibration uses them
    from vision.classic_reader import DiceReader

log = logging.getLogger(__name__)

#: Strongest-edge response (99.9th percentile of |Laplacian|) below which the frame is called blurred...
MIN_SHARPNESS = 12.0
#: ...unless fewer pixels than this share are on an edge at all: nothing to judge focus by.
FEATURELESS = 0.002
#: mean grey level (0-255) of the lit tray below which the dice cannot be read
TOO_DARK_MEAN = 50.0
#: mean grey level above which, or burnt-out share above which, the frame is washed out
TOO_BRIGHT_MEAN = 210.0
TOO_BRIGHT_BURNT = 0.05
#: share of burnt-out pixels (>= 250) from which there is glare on the acrylic
GLARE_BURNT = 0.001


#: The empty tray's photo, in the instance folder (the staged reader's prior of what is not a die), is named from this
#: and its bytes (``empty_tray_name``).
EMPTY_TRAY_STEM = "empty-tray"
#: The one name earlier versions kept the empty tray's photo under (config.toml may still name it).
EMPTY_TRAY = EMPTY_TRAY_STEM + ".png"


#: What can be wrong with a frame of the tray, as codes (the set-up page says each in the players' language,
#: ``cam_hint_<code>``); each ``FrameProblem`` carries its code beside the English sentence ``calibrate`` prints.
DARK, BRIGHT, GLARE, BLUR, NOT_EMPTY = "dark", "bright", "glare", "blur", "not_empty"
PROBLEM_CODES = (DARK, BRIGHT, GLARE, BLUR, NOT_EMPTY)


@dataclass(frozen=True)
class FrameProblem:
    """One thing to fix on the tray's frame: its code, for a page to translate, and the English sentence.

    >>> FrameProblem(DARK, "The image is too dark.").code
    'dark'
    """

    code: str
    message: str


def frame_problems(frame: np.ndarray, reader: "DiceReader | None" = None) -> tuple[list[FrameProblem], dict]:
    """Problems seen in a frame of the empty tray (codes and sentences), and the measures behind them; with the
    ``reader`` the table reads with, the dice it finds there too (``dice_left_on``)."""
    grey = cv2.cvtColor(frame, cv2.COLOR_BGR2GRAY)
    # Focus from the strongest edges (the tray's rim, the cup, marks on the acrylic): a
    # featureless tray cannot show focus at all, and is not called blurred for it.
    lap = np.abs(cv2.Laplacian(grey, cv2.CV_32F))
    sharp = float(np.percentile(lap, 99.9))
    mean = float(grey.mean())
    burnt = float((grey >= 250).mean())
    dark = float((grey <= 5).mean())
    problems: list[FrameProblem] = []
    notes: list[str] = []
    if mean < TOO_DARK_MEAN:
        problems.append(FrameProblem(DARK, f"The image is too dark (mean brightness {mean:.0f} of 255): add light under the tray or raise the exposure."))
    if mean > TOO_BRIGHT_MEAN or burnt > TOO_BRIGHT_BURNT:
        problems.append(FrameProblem(BRIGHT, f"The image is too bright ({burnt:.0%} burnt out): lower the light or the exposure."))
    if GLARE_BURNT < burnt <= TOO_BRIGHT_BURNT:
        ys, xs = np.nonzero(grey >= 250)
        problems.append(FrameProblem(GLARE, f"Glare: bright reflections near x={int(xs.mean())}, y={int(ys.mean())}; move or diffuse the lights."))
    edges = float((cv2.Canny(grey, 30, 90) > 0).mean())
    if edges < FEATURELESS:
        notes.append("Focus cannot be judged on a featureless tray; read a die with `read` to check it.")
    elif sharp < MIN_SHARPNESS:
        problems.append(FrameProblem(BLUR, f"The image looks blurred (sharpness {sharp:.0f}, want at least {MIN_SHARPNESS:.0f}): clean the acrylic and check the focus."))
    left = dice_left_on(frame, reader) if reader is not None else []
    if left:
        problems.append(not_empty(left))
    region = tray_region(grey)
    return problems, {"notes": notes, "sharpness": round(sharp, 1), "mean": round(mean, 1), "burnt": round(burnt, 4), "dark": round(dark, 4), "tray_region": region}


#: A "die" wider than this share of the frame's shorter side is the tray or the cup itself: the camera sees the whole
#: cup, in which three dice lie side by side with room to roll.
LARGEST_DIE_SHARE = 0.25


def dice_left_on(frame: np.ndarray, reader: "DiceReader") -> list:
    """The dice ``reader`` finds on a frame meant to show the empty tray: what it takes for dice at a Bluff, looking
    for one (one die left behind is what to find). Not every blob a finder alone would pick: the cup's rim and marks
    on the acrylic look like dice to one, and an empty tray would be refused for them. Looking for one, the reader
    may take the whole tray's disc for a die seen close up (unsure of it); no die is that large (``LARGEST_DIE_SHARE``)."""
    largest = LARGEST_DIE_SHARE * min(frame.shape[:2])
    return [die for die in reader.with_expected(1).read(frame).dice if max(die.box[2], die.box[3]) <= largest]


def not_empty(dice: list) -> FrameProblem:
    """The tray meant to be empty holds ``dice``, in words with where each lies in the picture, so that what the
    reader takes for a die can be found: a die, or a crumb or a reflection to wipe away (``calibrate`` prints it; the
    set-up page's refusal)."""
    n = len(dice)
    where = "; ".join(f"{x + w // 2}, {y + h // 2}" for x, y, w, h in (die.box for die in dice))
    return FrameProblem(NOT_EMPTY, f"The tray is not empty: the reader sees {n} {'die' if n == 1 else 'dice'} on it (at {where} px "
                        "across and down the picture); take every die off, then try again.")


def check_frame_quality(frame: np.ndarray, reader: "DiceReader | None" = None) -> tuple[list[str], dict]:
    """Problems (sentences) seen in a frame of the empty tray, and the measures behind them (``frame_problems`` in words)."""
    problems, measures = frame_problems(frame, reader)
    return [p.message for p in problems], measures


def measure_die_side(frame: np.ndarray, reader: DiceReader) -> tuple[int | None, list[str], list[str]]:
    """A die's side in frame pixels, from a frame with the game's dice lying apart on the tray; or what to fix; and
    notes on what is measured but worth knowing.

    The real reader must find exactly the expected dice, none cut off or
    leaning (a low confidence does not matter: only their size is wanted), and
    their sides must agree. Each side is measured by the die's outline
    (``die_sides``). Where the reader checks that a roll's dice are one set
    (``dice_alike``, tray mode), dice of different colours are measured all the
    same, with a note: otherwise the table would learn it only from its first
    roll, which would go to the table to confirm, as would every roll after.
    """
    reading = reader.read(frame)
    codes = {c["code"] for c in reading.reasons}
    want = reader.expected_dice
    if codes & {"dark", "blank"} or (not reading.dice and reading.reason and not reading.reasons):
        return None, [f"The camera shows nothing to measure ({reading.reason}): check the light and the camera, then run calibrate --dice again."], []
    problems = []
    if len(reading.dice) != want:
        problems.append(f"Found {len(reading.dice)} dice, not {want}: lay all {want} dice flat on the tray, apart from each other "
                        "and from the cup's rim, then run calibrate --dice again.")
    if "cut_off" in codes:
        problems.append("A die is cut off by the edge of the picture: move the dice to the middle of the tray.")
    if "leaning" in codes:
        problems.append("A die looks leaning, or two dice touch: lay them flat and apart.")
    if problems:
        return None, problems, []
    from vision.finder import find_dice  # the classic finder, loaded only when a calibration asks

    found = find_dice(frame)
    grey = cv2.cvtColor(frame, cv2.COLOR_BGR2GRAY) if frame.ndim == 3 else frame
    lens = Lens.of_frame(getattr(reader, "lens_distortion", 0.0), grey.shape[1], grey.shape[0],
                         k2=getattr(reader, "lens_distortion_k2", 0.0))  # sides as at the centre
    sides = die_sides(grey, [die.box for die in reading.dice], getattr(reader, "empty_tray", None), found, lens)
    if len(sides) != want or not sides_agree(sides):
        return None, ["The dice do not look the same size (" + ", ".join(f"{s:.0f}" for s in sides) + " px): "
                      "lay them flat and apart, away from glare, then run calibrate --dice again."], []
    notes = dice_unlike_the_others(frame, [die.box for die in reading.dice], sides) if getattr(reader, "dice_alike", False) else []
    return round(float(np.median(sides))), [], notes


def dice_unlike_the_others(frame: np.ndarray, boxes: list, sides: list[float]) -> list[str]:
    """A note for each die (its box ``x, y, w, h`` and measured side) whose colour tray mode would call unlike every
    other's (``pipeline.alike``), the way a roll's dice are judged; none for a grey frame, which has no colours.

    >>> frame = np.full((100, 300, 3), 90, np.uint8)
    >>> frame[30:70, 30:70] = frame[30:70, 130:170] = (232, 240, 246); frame[30:70, 230:270] = (140, 130, 20)
    >>> dice_unlike_the_others(frame, [(30, 30, 40, 40), (130, 30, 40, 40), (230, 30, 40, 40)], [40, 40, 40])[0][:63]
    'The die at 250, 50 px does not look like the others (its colour'
    """
    if frame.ndim != 3:
        return []
    centres = [(x + w / 2, y + h / 2) for x, y, w, h in boxes]
    colours = [body_colour(frame, cx, cy, side) for (cx, cy), side in zip(centres, sides)]
    return [f"The die at {cx:.0f}, {cy:.0f} px does not look like the others (its colour): in tray mode every roll with it "
            "goes to the table to confirm. Play with one set of dice, or, for a table that rolls dice of different "
            'colours, set reader.dice_alike = "off". The size is stored all the same.'
            for (cx, cy), unlike in zip(centres, unlike_the_others(colours)) if unlike]


def tray_region(grey: np.ndarray) -> list[int]:
    """The bounding box of the lit part of the frame (dark borders and vignetting corners cut off)."""
    lit = (grey > max(10.0, 0.25 * float(grey.mean()))).astype(np.uint8)
    pts = cv2.findNonZero(lit)
    h, w = grey.shape
    if pts is None:
        return [0, 0, w, h]
    x, y, bw, bh = cv2.boundingRect(pts)
    return [int(x), int(y), int(bw), int(bh)] if bw >= 16 and bh >= 16 else [0, 0, w, h]


#: ``calibrate --lens``: the chessboard's inner corners, across and down (OpenCV's own pattern, 10 × 7 squares).
BOARD_CORNERS = (9, 6)
#: ... and how far from the frame's centre its farthest corner must lie (a share of the half-diagonal): a board only
#: in the middle of the picture shows too little of the bend to measure it.
BOARD_REACH = 0.45
#: Why a chessboard gave no bend, as codes (the set-up page says each in the players' language, ``cam_err_<code>``).
NO_BOARD, BOARD_SMALL, BOARD_NOT_FLAT = "no_board", "board_small", "board_not_flat"
#: The printed board's square, in millimetres: 10 × 7 squares and a white margin of half a square make a sheet of
#: 220 × 160 mm, the size of the tray's window (``hardware/tray-mount.scad``), printable on A4 at actual size.
BOARD_SQUARE_MM = 20


def measure_lens(frame: np.ndarray, corners: tuple[int, int] = BOARD_CORNERS) -> tuple[tuple[float, float] | None, list[FrameProblem]]:
    """The bend ``(k, k2)`` of the lens that took ``frame`` (a chessboard of ``corners`` inner corners lying flat on
    the tray, the camera square on to it; ``vision.pipeline.lens.fit_distortion``), or None and what to fix (its
    code, and the English sentence)."""
    grey = cv2.cvtColor(frame, cv2.COLOR_BGR2GRAY) if frame.ndim == 3 else frame
    across, down = corners
    found, points = cv2.findChessboardCornersSB(grey, (across, down))
    if not found:
        found, points = cv2.findChessboardCornersSB(grey, (down, across))
        across, down = down, across
    if not found:
        return None, [FrameProblem(NO_BOARD, f"No chessboard of {corners[0] + 1} × {corners[1] + 1} squares found in the picture: "
                                   "lay one, printed flat, face down on the tray so that it fills most of the picture with every "
                                   "square inside it, light it evenly, then try again.")]
    points = points.reshape(-1, 2).astype(np.float64)
    h, w = grey.shape
    reach = float(np.hypot(points[:, 0] - (w - 1) / 2, points[:, 1] - (h - 1) / 2).max()) / (math.hypot(w, h) / 2)
    if reach < BOARD_REACH:
        return None, [FrameProblem(BOARD_SMALL, "The chessboard covers too little of the picture to measure the lens's bend: "
                                   "use a bigger one, filling the tray, then try again.")]
    grid = np.array([(x, y) for y in range(down) for x in range(across)], np.float64)
    k, k2, off = fit_distortion(points, grid, w, h)
    if off > FIT_RESIDUAL:
        return None, [FrameProblem(BOARD_NOT_FLAT, f"The chessboard's corners do not lie on a flat grid (off by {off:.2f} of a square): "
                                   "lay it flat on the tray, not curled or tilted, then try again.")]
    return (k, k2), []


def printable_board(corners: tuple[int, int] = BOARD_CORNERS, square_mm: int = BOARD_SQUARE_MM, note: str | None = None) -> str:
    """The chessboard ``calibrate --lens`` looks for, as an SVG drawn in millimetres on an A4 sheet lying across:
    printed at actual size it fits the tray's window. Any scale serves (the bend is fitted to a grid turned, scaled
    and moved), so a printer that shrinks the page changes nothing. ``note``: the line under the board, in the reader's
    language (the set-up page's; English by default).

    >>> svg = printable_board(); svg.count("<rect") - 2, 'width="297mm"' in svg
    (35, True)
    """
    across, down = corners[0] + 1, corners[1] + 1
    page_w, page_h = 297, 210
    x0, y0 = (page_w - across * square_mm) / 2, (page_h - down * square_mm) / 2
    squares = "".join(f'<rect x="{x0 + col * square_mm:g}" y="{y0 + row * square_mm:g}" width="{square_mm}" height="{square_mm}"/>'
                      for row in range(down) for col in range(across) if (row + col) % 2 == 0)
    margin = square_mm / 2
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{page_w}mm" height="{page_h}mm" viewBox="0 0 {page_w} {page_h}">'
            f'<title>Elephants Bluff: the lens chessboard ({across} × {down} squares)</title>'
            f'<rect width="{page_w}" height="{page_h}" fill="#fff"/>'
            f'<rect x="{x0 - margin:g}" y="{y0 - margin:g}" width="{across * square_mm + 2 * margin:g}" '
            f'height="{down * square_mm + 2 * margin:g}" fill="#fff" stroke="#bbb" stroke-width="0.3" stroke-dasharray="2 2"/>'
            f'<g fill="#000">{squares}</g>'
            f'<text x="{page_w / 2:g}" y="{page_h - 6:g}" font-family="sans-serif" font-size="3.5" fill="#777" text-anchor="middle">'
            f'{escape(note or BOARD_NOTE.format(mm=square_mm))}</text></svg>')


#: The line under the printed chessboard (the set-up page gives it in the player's language, ``cam_board_note``).
BOARD_NOTE = "Print at actual size (100 %), cut along the dashed line, lay it face down and flat on the tray. Each square {mm} mm."


def store(instance: Path, updates: dict) -> Path:
    """Write ``updates`` into the instance's config.toml (all settings kept, with their docs)."""
    path = instance / CONFIG_NAME
    values = Settings.load(path).as_dict()
    values.update(updates)
    return write_config(instance, values)


def empty_tray_name(png: bytes) -> str:
    """The file name the empty tray's photo ``png`` is kept under: one of its own for each photo (from its bytes), so
    a new photo never overwrites the one config.toml names until config.toml names the new one.

    >>> empty_tray_name(b"a photo") == empty_tray_name(b"a photo") != empty_tray_name(b"another")
    True
    """
    return f"{EMPTY_TRAY_STEM}-{hashlib.sha256(png).hexdigest()[:12]}.png"


def store_with_empty_tray(instance: Path, png: bytes, updates: dict) -> Path:
    """The empty tray's photo (``png``) and the settings taken with it (its region, the camera's locked exposure), both
    or neither: ``updates`` name the photo as ``empty_tray_name`` does. The reader compares each Bluff's frame with
    that photo inside that region at that exposure, so a new photo beside the old settings would misread the tray.

    The new photo is written under its own name first, beside the old one; config.toml's write (all at once) is the
    one step that switches from the old pair to the new; only then is the old photo taken away. A card too full for
    either write, or a power cut at any moment, leaves config.toml naming a whole photo taken with its settings."""
    name = empty_tray_name(png)
    if updates.get("camera.empty_tray") != name:
        raise ValueError(f"updates must name the empty tray's photo {name!r}, not {updates.get('camera.empty_tray')!r}")
    photo = instance / name
    kept = photo.is_file()  # the same photo stored again: it is the one config.toml may name now
    atomic_write(photo, png)
    try:
        path = store(instance, updates)
    except BaseException:  # a full card, or the owner's Ctrl-C, which may come after config.toml names the photo
        if not kept and not _named(instance, name):
            photo.unlink(missing_ok=True)
        raise
    _take_away_old_photos(instance, name)
    return path


def _named(instance: Path, name: str) -> bool:
    """Whether config.toml names ``name`` as the empty tray's photo; where it cannot be read, taken as yes (a photo
    kept for nothing is taken away by the next store; one taken away from under config.toml would be missing)."""
    try:
        return Settings.load(instance / CONFIG_NAME, environ={}).get("camera.empty_tray", "") == name
    except Exception:
        return True


#: The names ``empty_tray_name`` gives (and ``atomic_write``'s unfinished ``.part`` of one).
_OURS = re.compile(re.escape(EMPTY_TRAY_STEM) + r"-[0-9a-f]{12}\.png(\.part)?")


def _take_away_old_photos(instance: Path, keep: str) -> None:
    """The empty tray's photos config.toml no longer names (the earlier ones, one a power cut left behind), and the
    photo waiting as ``empty-tray.png.new`` that earlier versions wrote. Only names this module gives are touched: a
    photo an owner named by hand stays. Tidying only; a photo that cannot be taken away is left for the next time."""
    for entry in instance.iterdir():
        ours = entry.name in (EMPTY_TRAY, EMPTY_TRAY + ".new") or _OURS.fullmatch(entry.name)
        if ours and entry.name != keep and entry.is_file():
            try:
                entry.unlink()
            except OSError as exc:
                log.warning("calibrate: an old photo of the empty tray (%s) was left: %s", entry.name, exc)


def calibrate(
    instance: Path,
    dry_run: bool = False,
    out: TextIO | None = None,
    dice: bool = False,
    lens: bool = False,
    light: Callable[[Settings, FrameSource], FrameSource] | None = None,
) -> int:
    """Run the checks and store the locks (``dice``: measure the dice instead; ``lens``: the lens's bend from a
    chessboard); 0 when stored or fit, 1 otherwise.

    ``light`` wraps the camera in what lights the tray as a Bluff does (the command line passes
    ``firmware.lit_tray.LitTraySource``, a layer above this one); a source that says it ``lights_tray`` is measured
    lit, any other is said to be the room's light, with its ``unlit_because`` where it has one."""
    say = (lambda s: print(s, file=out)) if out else (lambda s: None)
    settings = Settings.load(instance / CONFIG_NAME)
    source = build_frame_source(settings)
    if light is not None:
        source = light(settings, source)
    try:
        source.open()
        frame = source.grab()
        reader = load_reader(settings.with_overrides(reader__die_side_px=0)) if dice else None
    except HardwareError as exc:
        source.close()
        say(f"camera: {exc.message}")
        return 1
    _say_light(source, say)
    if reader is not None:
        source.close()
        return _store_die_side(instance, frame, reader, dry_run, say)
    if lens:
        source.close()
        return _store_lens(instance, frame, dry_run, say)
    try:
        problems, measures = check_frame_quality(frame, load_reader(settings))  # the dice on it as a Bluff reads them
    except BaseException:
        source.close()
        raise
    say(f"camera: {source.name}, frame {frame.shape[1]}×{frame.shape[0]}; " + ", ".join(f"{k} {v}" for k, v in measures.items() if k != "notes"))
    for n in measures.pop("notes"):
        say(f"note: {n}")
    for p in problems:
        say(f"fix: {p}")
    ok, png = cv2.imencode(".png", cv2.cvtColor(frame, cv2.COLOR_BGR2GRAY))
    updates: dict = {"camera.tray_region": measures["tray_region"], "camera.empty_tray": empty_tray_name(png.tobytes())}
    meta_fn = getattr(source, "metadata", None)
    if meta_fn is not None:
        meta = meta_fn()
        if "ExposureTime" in meta:
            updates["camera.exposure_us"] = int(meta["ExposureTime"])
        if "AnalogueGain" in meta:
            updates["camera.analogue_gain"] = round(float(meta["AnalogueGain"]), 3)
        if "ColourGains" in meta:
            updates["camera.colour_gains"] = [round(float(g), 3) for g in meta["ColourGains"]]
    else:
        say(f"lock: the {source.name} camera has no exposure or white balance to lock; only the tray's region is stored.")
    source.close()
    if problems:
        say("Nothing stored: fix the above and run calibrate again.")
        return 1
    if dry_run:
        say("dry run: would store " + ", ".join(f"{k} = {v}" for k, v in updates.items()))
        return 0
    instance.mkdir(parents=True, exist_ok=True)
    path = store_with_empty_tray(instance, png.tobytes(), updates)
    say(f"stored in {path}: " + ", ".join(f"{k} = {v}" for k, v in updates.items()))
    return 0


def _say_light(source: FrameSource, say: Callable[[str], None]) -> None:
    """Say whether the frame measured was lit as a Bluff's is: a lock taken by the room's light is not play's."""
    if getattr(source, "lights_tray", False):
        say("light: the tray's LED ring was lit, as at each Bluff.")
        return
    because = getattr(source, "unlit_because", None)
    say("light: the tray's LED ring was not lit" + (f" ({because})" if because else "") + ": what is measured and kept "
        "is the tray by the room's light, not as a Bluff sees it. On the table, prefer the set-up page (/setup), which "
        "lights the ring as a Bluff does.")


def _store_die_side(instance: Path, frame: np.ndarray, reader: DiceReader, dry_run: bool, say) -> int:
    side, problems, notes = measure_die_side(frame, reader)
    for p in problems:
        say(f"fix: {p}")
    for n in notes:
        say(f"note: {n}")
    if side is None:
        say("Nothing stored: fix the above and run calibrate --dice again.")
        return 1
    updates = {"reader.die_side_px": side}
    if dry_run:
        say(f"dry run: a die is {side} px wide; would store reader.die_side_px = {side}")
        return 0
    path = store(instance, updates)
    say(f"a die is {side} px wide; stored in {path}: reader.die_side_px = {side}")
    return 0


def _store_lens(instance: Path, frame: np.ndarray, dry_run: bool, say) -> int:
    bend, problems = measure_lens(frame)
    for p in problems:
        say(f"fix: {p.message}")
    if bend is None:
        say("Nothing stored: fix the above and run calibrate --lens again.")
        return 1
    k, k2 = bend
    said = f"camera.lens_distortion = {k}, camera.lens_distortion_k2 = {k2}"
    if dry_run:
        say(f"dry run: the lens bends the picture by {k}" + (f" and {k2}·r⁴" if k2 else "") + f"; would store {said}")
        return 0
    path = store(instance, {"camera.lens_distortion": k, "camera.lens_distortion_k2": k2})
    say(f"the lens bends the picture by {k}" + (f" and {k2}·r⁴" if k2 else "") + f"; stored in {path}: {said}. "
        "Run calibrate --dice again: the dice are measured as they would lie without the bend.")
    return 0
