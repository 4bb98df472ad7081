"""The face classifier: a small CNN (ONNX, run by onnxruntime on the CPU).

It takes a square crop with one die roughly centred (any rotation, any colour)
and says how many marks the face shows (1-6), or that the crop is not a die
(class 0: the finder is generous, the classifier rejects). The crop geometry
(``cut_crop``) and the pixel normalisation (``prepare``) live here, and the
training code imports them, so training and reading can never disagree.

The shipped model is the ``models/dice-faces-<id>.onnx`` that ``models/shipped.json`` names; its id
(the first 12 hex digits of the file's sha256) goes into every saved reading and ``/api/health``, and a
file that no longer hashes to the id in its name is refused (``vision.model_files``).
"""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np

from companion.core.errors import HardwareError
from vision import model_files
from vision.model_files import file_id, read_whole, shipped
from vision.onnx_runtime import load_onnxruntime

#: Side of the classifier's input, in pixels.
CROP = 40
#: The crop spans this many die sides (the die fills 1/MARGIN of its width).
MARGIN = 1.3
#: Class 0 is "not a die"; classes 1..6 are the face values.
NOT_A_DIE = 0


def cut_crop(frame: np.ndarray, cx: float, cy: float, side: float, angle: float = 0.0, size: int = CROP) -> np.ndarray:
    """The die at (cx, cy) with ``side`` px, turned upright, as a ``size``×``size`` BGR crop."""
    span = max(2.0, side * MARGIN)
    scale = size / span
    m = cv2.getRotationMatrix2D((cx, cy), angle, scale)
    m[0, 2] += size / 2.0 - cx
    m[1, 2] += size / 2.0 - cy
    if scale < 0.5:  # shrinking a lot: halve the die's patch with a Gaussian pyramid first so marks do not alias away
        reach = 0.71 * span + 3.0 / scale  # the turned crop's corners, and room for the pyramid's filter
        x0, y0 = int(max(0, cx - reach)), int(max(0, cy - reach))
        x1, y1 = int(min(frame.shape[1], cx + reach + 1)), int(min(frame.shape[0], cy + reach + 1))
        if x1 - x0 >= 2 and y1 - y0 >= 2:
            patch, f = frame[y0:y1, x0:x1], 1
            while scale * f < 0.5 and min(patch.shape[:2]) >= 2:
                patch, f = cv2.pyrDown(patch), 2 * f  # pixel i of a level lies on pixel 2i of the one before
            m2 = m.copy()
            m2[:, 2] += m[:, :2] @ np.array([x0, y0], np.float64)
            m2[:, :2] *= f
            return cv2.warpAffine(patch, m2, (size, size), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
    return cv2.warpAffine(frame, m, (size, size), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)


#: A crop's symmetric looks: four quarter turns, each also mirrored.
TURNS = 8


def turn(crop: np.ndarray, k: int) -> np.ndarray:
    """Look ``k`` (0..7) of a crop: ``k % 4`` quarter turns, mirrored when ``k >= 4``."""
    out = np.rot90(crop, k % 4)
    return np.ascontiguousarray(out[:, ::-1] if k >= 4 else out)


def prepare(crops: np.ndarray) -> np.ndarray:
    """N×S×S×3 uint8 BGR crops -> N×3×S×S float32, each crop brought to zero mean and unit contrast."""
    x = crops.astype(np.float32)
    mean = x.mean(axis=(1, 2, 3), keepdims=True)
    std = x.std(axis=(1, 2, 3), keepdims=True)
    x = (x - mean) / (std + 8.0)
    return np.ascontiguousarray(x.transpose(0, 3, 1, 2))


def shipped_model_path() -> Path:
    """The ``dice-faces-*.onnx`` that ``models/shipped.json`` names (``vision.model_files``)."""
    path = shipped("faces")
    if path is None:
        raise HardwareError("The dice model file (the models/dice-faces-*.onnx that models/shipped.json names) is missing; "
                            "reinstall the companion.", code="no_model")
    return path


def model_fix(path: Path, setting: str) -> str:
    """What to do about a model file that cannot be used: a shipped one is reinstalled; one that ``setting`` names in
    ``config.toml`` (a model of the owner's choosing) is that setting's to mend, which a reinstall would not touch."""
    folder = model_files.models_folder()
    if folder is not None and Path(path).resolve().parent == folder.resolve():
        return "reinstall the companion"
    return f"check {setting} in config.toml, which names it (a reinstall does not change that file)"


def file_model_id(path: Path) -> str:
    """A model's id: ``dice-faces-`` and the first 12 hex digits of the file's sha256."""
    return "dice-faces-" + file_id(path.read_bytes())


def shipped_model_id() -> str:
    """The shipped model's id without loading it (for ``/api/health`` before the reader is up)."""
    return file_model_id(shipped_model_path())


def open_session(model: str | bytes, name: str, threads: int = 1, fix: str = "reinstall the companion"):  # noqa: ANN201 - onnxruntime's own type
    """An onnxruntime CPU session of a face model (a path or the file's bytes), or ``HardwareError`` in words.

    No memory arena: the reader's batches vary (3 crops a frame, 24 more for each unsure
    die), and the arena kept every size it had seen: ``serve`` grew from 131 to 177 MiB
    under the load bench. Without it 3 crops cost the same and 24 about 3 % more.
    """
    ort = load_onnxruntime()

    opts = ort.SessionOptions()
    opts.intra_op_num_threads = threads
    opts.inter_op_num_threads = 1
    opts.log_severity_level = 3
    opts.enable_cpu_mem_arena = False
    try:
        return ort.InferenceSession(model, opts, providers=["CPUExecutionProvider"])
    except Exception:  # onnxruntime raises its own untyped errors for a bad file
        raise HardwareError(f"The dice model {name} cannot be loaded; {fix}.", code="bad_model") from None


class FaceClassifier:
    """Counts the marks on die crops with the ONNX model.

    >>> clf = FaceClassifier()
    >>> values, conf = clf.classify(np.zeros((1, CROP, CROP, 3), np.uint8))
    >>> values.shape, conf.shape
    ((1,), (1,))
    """

    def __init__(self, path: Path | None = None, threads: int = 1) -> None:
        self.path = Path(path) if path else shipped_model_path()
        fix = model_fix(self.path, "reader.model")
        data, found = read_whole(self.path, "dice model", fix)
        self.model_id = "dice-faces-" + found
        self._session = open_session(data, self.path.name, threads, fix)
        self._input = self._session.get_inputs()[0].name
        self.warm_up()

    def warm_up(self) -> None:
        """Read three blank crops once, at load: onnxruntime allocates on its first run, and a file that loads but
        is no face model (the detector's, or a net for other crops or other answers) is refused here in words,
        ``HardwareError`` as for a damaged file, instead of failing at the first Bluff."""
        name, fix = self.path.name, model_fix(self.path, "reader.model")
        try:
            answers = self.probabilities(np.zeros((3, CROP, CROP, 3), np.uint8))
        except Exception:  # onnxruntime's own untyped errors for inputs the graph does not take
            raise HardwareError(f"The dice model {name} cannot be loaded: it does not read {CROP}×{CROP} colour pictures "
                                f"of a die, so it is not a face model; {fix}.", code="bad_model") from None
        if answers.shape != (3, 7):
            per_die = answers.shape[1] if answers.ndim == 2 and len(answers) == 3 else "not one row of"
            raise HardwareError(f"The dice model {name} cannot be loaded: it gives {per_die} answers a die where a face "
                                f"model gives 7 (not a die, and one to six); {fix}.", code="bad_model")

    def probabilities(self, crops: np.ndarray) -> np.ndarray:
        """N×7 class probabilities (column 0: not a die) for N uint8 BGR crops of CROP×CROP."""
        if len(crops) == 0:
            return np.zeros((0, 7), np.float32)
        if crops.shape[1:] != (CROP, CROP, 3):  # any other size is brought to the model's, never refused
            crops = np.array([cv2.resize(np.ascontiguousarray(c), (CROP, CROP), interpolation=cv2.INTER_AREA) for c in crops], np.uint8)
        logits = self._session.run(None, {self._input: prepare(crops)})[0]
        e = np.exp(logits - logits.max(axis=1, keepdims=True))
        return e / e.sum(axis=1, keepdims=True)

    def probabilities_turned(self, crops: np.ndarray) -> np.ndarray:
        """N×7 probabilities, each the mean over the crop's 8 turns and mirrors (``TURNS``).

        A die's face counts the same turned or mirrored, so the eight answers
        should agree; where the model is unsure they do not, and the mean then
        falls below the reader's threshold instead of one lucky look passing it.
        Decided on the 20 held-out train photos (984 crops, die at 50-100 % of
        the crop, any angle): 24 wrong of 984 with one look, 12 with the four
        turns, 7 with turns and mirrors, none of those unflagged. It costs eight
        looks, so the reader's first look at a frame stays one look a die: only
        ``classify`` and the reader's second look at unsure dice use it.
        """
        if len(crops) == 0:
            return np.zeros((0, 7), np.float32)
        looks = np.array([turn(c, k) for c in crops for k in range(TURNS)], np.uint8)
        return self.probabilities(looks).reshape(len(crops), TURNS, -1).mean(axis=1)

    def classify(self, crops: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Face values (1-6) and their confidences (the probability of that value)."""
        p = self.probabilities(crops)
        values = p[:, 1:].argmax(axis=1) + 1
        return values, p[np.arange(len(p)), values]
