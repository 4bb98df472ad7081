"""The camera's and the reader's settings (registered with ``companion.core.settings`` when imported)."""

from __future__ import annotations

from typing import Any

from companion.core.dice import STANDARD_OPPOSITE, opposite_map_problem
from companion.core.settings import Setting, int_between, one_of, register_settings


def _faces_map(v: list[Any]) -> str | None:
    return opposite_map_problem(v)


def _region(v: list[Any]) -> str | None:
    if v == []:
        return None
    if len(v) != 4 or not all(isinstance(x, int) and not isinstance(x, bool) and x >= 0 for x in v) or v[2] < 16 or v[3] < 16:
        return "must be [] (the whole frame) or [x, y, width, height] in whole pixels, at least 16×16"
    return None


def _gains(v: list[Any]) -> str | None:
    if v == []:
        return None
    if len(v) != 2 or not all(isinstance(x, (int, float)) and not isinstance(x, bool) and 0.1 <= x <= 16 for x in v):
        return "must be [] (automatic) or [red gain, blue gain], each between 0.1 and 16"
    return None


def _between(low: float, high: float):
    return lambda v: None if low <= v <= high else f"must be between {low} and {high}, not {v}"


SETTINGS: list[Setting] = [
    Setting("camera.backend", "simulated", "Where frames come from: picamera2 (the Pi camera), webcam (OpenCV VideoCapture), files (a folder of images), simulated (the rendered table).", one_of("picamera2", "webcam", "files", "simulated")),
    Setting("camera.camera_view", "below", "Where the camera looks from: below (through the tray: it sees bottom faces) or above (it sees top faces).", one_of("below", "above")),
    Setting("camera.device", 0, "The webcam's OpenCV device number (camera.backend = webcam).", int_between(0, 63)),
    Setting("camera.simulated_seed", 0, "The simulated table's seed (camera.backend = simulated): the same rolls and layouts from every start, for a demonstration or a test (0: new ones each start).", int_between(0, 2**31 - 1)),
    Setting("camera.files_dir", "", "An image file, or a folder of images read in name order and cycled (camera.backend = files).", None),
    Setting("camera.width", 1280, "Frame width the camera is asked for, in pixels. Changed after `calibrate`, the tray region and the empty tray no longer fit the picture: set them again (every reading goes to the table until then).", int_between(160, 4096)),
    Setting("camera.height", 960, "Frame height the camera is asked for, in pixels.", int_between(120, 3072)),
    Setting("camera.exposure_us", 0, "Fixed exposure time in microseconds (0: automatic until `calibrate` locks it).", int_between(0, 1_000_000)),
    Setting("camera.analogue_gain", 0.0, "Fixed analogue gain (0: automatic until `calibrate` locks it).", _between(0.0, 64.0)),
    Setting("camera.colour_gains", [], "Fixed white balance as [red gain, blue gain] ([]: automatic until `calibrate` locks it).", _gains),
    Setting("camera.tray_region", [], "The part of the frame that shows the tray, [x, y, width, height] ([]: the whole frame); `calibrate` stores it.", _region),
    Setting("camera.lens_distortion", 0.0, "How much the camera's lens bends the picture (a wide lens's barrel distortion: a point at r from the centre, a share of the half-diagonal, lies at r·(1 + k·r²) without it; 0: none). `elephants-bluff calibrate --lens` (or the set-up page's lens step) measures it from the camera's picture of a printed chessboard lying on the tray. The reader then judges a die's outline (flat or leaning) where it would lie without the bend.", _between(0.0, 1.0)),
    Setting("camera.lens_distortion_k2", 0.0, "The lens's bend that grows faster towards the picture's edge (a point at r lies at r·(1 + k·r² + k2·r⁴) without it; 0: none). `calibrate --lens` measures it where the chessboard shows that k alone does not fit (a lens nearer a fisheye's), and sets it to 0 otherwise.", _between(0.0, 1.0)),
    Setting("camera.empty_tray", "", "A photo of the empty tray, relative to the instance folder; `calibrate` stores it ('': none). The staged reader takes what looks just like it for the tray, not a die.", None),
    Setting("reader.opposite_faces", list(STANDARD_OPPOSITE), "The face opposite each face 1..6 (the top face when the camera sees that face from below); standard dice: 7 - v.", _faces_map),
    Setting("reader.min_confidence", 0.95, "Below this confidence on any die the reading is `uncertain` and the table confirms the values (RULES.md R14). 0.95, not 0.9: on the train photos shown on seven other tables it leaves 9 dice wrong and unflagged instead of 15, and none instead of 2 on the 20 held-out photos (python -m models.training.robustness --only \"7 other tables\"), for about 2 points more right dice to confirm; see models/MODEL_CARD.md.", _between(0.0, 1.0)),
    Setting("reader.expected_dice", 3, "How many dice a reading must find to be `ok`.", int_between(1, 30)),
    Setting("reader.die_side_px", 0, "A die's side in frame pixels when the table's geometry fixes it: `elephants-bluff calibrate --dice` measures and stores it (0: learn it from the dice in each frame).", int_between(0, 2000)),
    Setting("reader.detector", "learned", "How dice are found: learned (the staged reader with the ONNX detector, models/dice-detector-*.onnx) or classic (the hand-tuned finder and its cascade, kept while it still reads some sets better). See docs/READING.md.", one_of("learned", "classic")),
    Setting("reader.detector_model", "", "Path of an ONNX detector to use instead of the shipped one ('' : the shipped models/dice-detector-*.onnx).", None),
    Setting("reader.model", "", "Path of an ONNX face model to use instead of the shipped one ('' : the shipped models/dice-faces-*.onnx).", None),
    Setting("reader.leaning_cue", "", "Path of a leaning cue fit on the face model in use, for a `reader.model` of your own ('' : the shipped models/leaning-cue.npz, fit on the shipped model; `python -m models.training.leaning_cue --model MODEL --out FILE` fits one).", None),
    Setting("reader.number_cue", "", "Path of a number-dice cue fit on the face model in use, for a `reader.model` of your own ('' : the shipped models/number-cue.npz, fit on the shipped model; `python -m models.training.number_cue MODEL --out FILE` fits one).", None),
    Setting("reader.second_opinion", "on", "A second face model that checks every die of a reading about to be `ok`, so a glass bead read as surely as a die goes to the table; it costs about 1 ms a reading here (docs/READING.md, \"The second opinion\"). on: the shipped models/second-opinion-*.onnx; off: none (a table that never sees beads and wants the millisecond); or the path of another.", None),
    Setting("reader.dice_alike", "on", "In tray mode (a calibrated empty tray), a die whose colour is unlike every other die's makes the reading go to the table: the table plays with one set of dice, so a toy brick or a glass bead read as a die is checked (docs/READING.md, \"The dice of one set\"). off: for a table that rolls dice of different colours.", one_of("on", "off")),
]

register_settings(SETTINGS)
