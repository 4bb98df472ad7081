"""The reader the settings describe (``load_reader``): the staged reader (``vision.pipeline``, the default) or the
classic one (``vision.classic_reader``, imported only when ``reader.detector = "classic"``), its face model loaded
and warmed up, with the leaning cue and the number-dice cue where the model can give them.

>>> from companion.core.settings import Settings
>>> reader = load_reader(Settings.defaults())
>>> reader.read(np.zeros((480, 640, 3), np.uint8)).status
'uncertain'
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from companion.core.dice import STANDARD_OPPOSITE
from vision.classifier import CROP

log = logging.getLogger(__name__)


def load_reader(settings: Any, threads: int = 1) -> Any:
    """The reader the settings describe, with its model loaded and warmed up.

    Raises ``HardwareError`` when the model file is missing or broken. It also
    keeps OpenCV to one thread: a read is a few milliseconds of small images,
    and OpenCV's thread pool, fighting the web server for the Pi's cores, made
    it ten times slower, not faster.
    """
    from vision.registry import active_classifier

    cv2.setNumThreads(1)
    loaded = active_classifier(settings, threads)  # the instance's taught model, or the shipped one (with why)
    clf = loaded.classifier
    clf.load_problem = loaded.problem  # type: ignore[attr-defined]
    detector = settings.get("reader.detector", "learned")
    if detector != "classic":
        from vision.pipeline.propose import load_detector
        from vision.pipeline.reader import PipelineReader

        detector_model = settings.get("reader.detector_model", "") or None
        options = _reader_settings(settings)
        embedding = _embedding_of(clf)  # one network run: both cues are fit on it
        cue, problem = _leaning_cue(embedding, _path(settings, "reader.leaning_cue"))  # from either view (reconcile.flag_leaning)
        numbers, numbers_problem = _number_cue(embedding, _path(settings, "reader.number_cue"))
        second, second_problem = _second_opinion(settings.get("reader.second_opinion", "on"), threads)
        empty, empty_problem = _empty_tray(settings)
        reader = PipelineReader(clf, load_detector(detector, Path(detector_model) if detector_model else None), **options,
                                empty_tray=empty, empty_tray_problem=empty_problem, leaning_cue=cue, number_cue=numbers,
                                leaning_problem=problem, number_problem=numbers_problem,
                                second_opinion=second, second_opinion_problem=second_problem,
                                dice_alike=settings.get("reader.dice_alike", "on") == "on",
                                lens_distortion=float(settings.get("camera.lens_distortion", 0.0)),
                                lens_distortion_k2=float(settings.get("camera.lens_distortion_k2", 0.0)))
    else:
        from vision.classic_reader import DiceReader

        reader = DiceReader(clf, **_reader_settings(settings))
    if reader.region_problem:  # said as the other problems are (the commands' stderr, serve's log)
        log.warning("reader: %s", reader.region_problem)
    return reader


def _embedding_of(clf: Any) -> tuple[str, int] | str:
    """The id of the model whose embedding the classifier gives (a taught head keeps its shipped model's) and the
    embedding's width, which the cues are fit on; or why it gives none (the registry opens every model that can with
    its embedding; one it opened plainly carries why it cannot, ``embedding_problem``)."""
    from vision.embedding import EmbeddingClassifier

    if not isinstance(clf, EmbeddingClassifier):
        return getattr(clf, "embedding_problem", None) or f"the face model {clf.model_id} gives no embedding"
    width = clf.logits_and_embedding(np.zeros((1, CROP, CROP, 3), np.uint8))[1].shape[1]
    return getattr(getattr(clf, "head", None), "base_id", clf.model_id), width


def _path(settings: Any, key: str) -> Path | None:
    """The file a path setting names, or None for its default ('')."""
    value = settings.get(key, "")
    return Path(value) if value else None


def _cue(embedding: tuple[str, int] | str, load_cue: Any, path: Path | None, without: str) -> tuple[Any, str | None]:
    """The cue ``load_cue`` gives for ``embedding`` (``_embedding_of``) from ``path`` (None: the shipped file), and
    None; or None and the problem ``/api/health`` says: what the reader does ``without`` it, and why."""
    if isinstance(embedding, str):
        why = embedding
    else:
        cue, why = load_cue(*embedding, path=path)
        if cue is not None:
            return cue, None
    problem = f"{without}: {why}."
    log.warning("reader: %s", problem)
    return None, problem


def _leaning_cue(embedding: tuple[str, int] | str, path: Path | None = None) -> tuple[Any, str | None]:
    """The leaning cue fit on the classifier's embedding (``vision.leaning_cue``), from ``path`` (``reader.leaning_cue``;
    None: the shipped file); without it the reader judges a leaning die by its outline alone."""
    from vision.leaning_cue import load_cue

    return _cue(embedding, load_cue, path, "A die leaning on the cup is judged by its outline only")


def _number_cue(embedding: tuple[str, int] | str, path: Path | None = None) -> tuple[Any, str | None]:
    """The number-dice cue fit on the classifier's embedding (``vision.number_cue``), from ``path``
    (``reader.number_cue``; None: the shipped file). Under a taught head it is the
    shipped model's (the head keeps its embedding), and leaves alone the dice the head's gate is sure are the
    owner's (``flag_numbers_by_look``)."""
    from vision.number_cue import load_cue

    return _cue(embedding, load_cue, path, "Dice printed with numbers or signs are not doubted")


def _second_opinion(value: str, threads: int) -> tuple[Any, str | None]:
    """The second opinion (``vision.second_opinion``) the setting ``reader.second_opinion`` names ("on", the default:
    the shipped file; "off": none, and no problem; else a file's path), and None; or None and the problem
    ``/api/health`` says."""
    from vision.second_opinion import SecondOpinion

    if value == "off":
        return None, None
    opinion, why = SecondOpinion.load(None if value == "on" else Path(value), threads)
    if opinion is not None:
        return opinion, None
    problem = f"A bead or a game piece read as surely as a die is not checked again: {why}."
    log.warning("reader: %s", problem)
    return None, problem


def _empty_tray(settings: Any) -> tuple[np.ndarray | None, str | None]:
    """The calibrated empty tray (grey) and None; or None and, where the settings name a photo that is missing or
    cannot be read, why in words for ``/api/health`` (the reader then does without it: tray mode's check of what
    changed on the tray, the dice found beside the expected count)."""
    name = settings.get("camera.empty_tray", "")
    config = getattr(settings, "path", None)
    if not name or config is None:
        return None, None
    path = Path(config).parent / name
    image = cv2.imread(str(path), cv2.IMREAD_GRAYSCALE) if path.is_file() else None
    if image is not None:
        return image, None
    state = "cannot be read" if path.is_file() else "is missing"
    problem = (f"The empty tray's photo ({name}) {state}, so the reader does not compare the tray with it: "
               "calibrate the camera on the empty tray again (the set-up page, or elephants-bluff calibrate).")
    log.warning("reader: %s", problem)
    return None, problem


def _reader_settings(settings: Any) -> dict[str, Any]:
    return dict(
        camera_view=settings.get("camera.camera_view", "below"),
        opposite_faces=settings.get("reader.opposite_faces", list(STANDARD_OPPOSITE)),
        min_confidence=settings.get("reader.min_confidence", 0.95),
        expected_dice=settings.get("reader.expected_dice", 3),
        die_side_px=settings.get("reader.die_side_px", 0),
        tray_region=settings.get("camera.tray_region", []),
    )
