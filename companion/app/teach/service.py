"""Teaching: from labelled crops to a measured, adopted (or refused) model, and switching the running reader.

``teach`` fits a head on the training crops (``vision.adapt.fit_head``), reads
the held-back crops and every evaluation set with the active model and with the
candidate (``vision.evaluate.evaluate`` through ``vision.adapt.measure``), and
adopts the candidate only when ``vision.adapt.compare`` says so. Examples come
from the instance's own dataset (``owner_examples``) or from a folder in the
``shared/datasets`` layout (``folder_examples``: whole photos with YOLO labels,
or crops with a ``crops.csv``); a ``test`` split is never read.
"""

from __future__ import annotations

import hashlib
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from companion.core.dice import STANDARD_OPPOSITE, opposite_face
from companion.core.errors import ElephantsBluffError
from companion.core.files import atomic_write
from vision.adapt import MIN_PER_FACE, AdaptedClassifier, TeachError, compare, fit_head, measure, missing_faces, write_rendered_set
from vision.classifier import CROP, MARGIN, cut_crop
from vision.embedding import EmbeddingClassifier
from vision.images import CROP_MIN_SIDE, MIN_SIDE, ImageError, frame_images, load_image, read_splits
from vision.registry import FOLDER, ModelRegistry

#: The shares of an example image its die is cut at for teaching (the first two that ``classify_crop`` reads).
TEACH_SPANS = (1.0, 0.8)
#: (image, face the camera saw)
Example = tuple[np.ndarray, int]
#: Held back from a folder without a ``val`` split: one photo or crop in this many, by its name.
HELD_BACK_ONE_IN = 5


@dataclass
class Examples:
    train: list[Example]
    held_back: list[Example]
    warnings: list[str]


def _held_back(name: str) -> bool:
    return int(hashlib.sha256(name.encode()).hexdigest()[:8], 16) % HELD_BACK_ONE_IN == 0


def owner_examples(instance: Path, settings: Any) -> Examples:
    """The instance's own dataset: its ``train`` crops teach, its ``val`` crops judge."""
    from companion.app.teach.dataset import OwnerDataset

    ds = OwnerDataset(instance, max_crops=settings.get("teach.max_crops", 3000))
    rows = ds.examples()
    return Examples([(img, v) for img, v, r in rows if r.split == "train"], [(img, v) for img, v, r in rows if r.split == "val"], list(ds.warnings))


def folder_examples(root: Path) -> Examples:
    """Labelled crops or photos of ``root`` (``shared/datasets`` layout); its ``val`` split, or one in five, held back.
    The folder is read as ``evaluate`` reads it (``crop_listing``: a crops.csv, or a folder per face; ``frame_images``: a
    folder per split, as YOLO trainers write them, is that split; ``photo_folders``: an export's split folders, its
    ``valid`` the ``val`` split), each label as the face its class names (``vision.photo_sets``), and refused where
    ``evaluate`` refuses it (``TeachError``): a label whose class is no face or whose box is no box in the photo
    (written in pixels), one box or one crop labelled as two faces. A crop or photo listed again is taught once; one
    listed both to learn from and in ``val`` is learned from and not held back (a taught model is never judged on the
    dice it learned from), one listed in ``test`` too is never read; each said in the warnings."""
    from vision.evaluate import EvaluationError, has_crops, photo_folders

    root = Path(root)
    if not root.is_dir():
        raise TeachError(f"{root} is not a folder.")
    try:
        if has_crops(root):
            return _crop_examples(root)
        if photo_folders(root, None):
            return _photo_examples(root)
    except EvaluationError as exc:
        raise TeachError(exc.message) from None
    raise TeachError(f"{root} holds neither images/ with labels/ (whole photos) nor a crops.csv or folders of crops "
                     "named for their face, 1/ to 6/ (crops).")


def _crop_examples(root: Path) -> Examples:
    """``folder_examples`` of a folder of crops (``crop_listing``); ``EvaluationError`` where ``evaluate`` refuses it."""
    from vision.evaluate import crop_file, crop_listing, crops_in_words, crops_once, row_face

    source, _, rows = crop_listing(root)
    warnings: list[str] = []
    listed = []
    for n, row in rows:
        if len(row) < 2:
            continue
        face = row_face(row)
        if face is None:
            warnings.append(f"crops.csv line {n}: {row[1]!r} is not a face from 1 to 6; skipped")
            continue
        listed.append((n, row[0].strip(), face, row[2].strip() if len(row) >= 3 else ""))
    crops = crops_once(root, source, listed)
    has_val = any("val" in c.splits for c in crops)
    again = [c for c in crops if len(c.listed) > len(c.splits)]
    if again:
        warnings.append(f"{source} lists {len(again)} crop{'s' if len(again) > 1 else ''} again in the same split ({crops_in_words(again)}); "
                        "each is taught once")
    tested = [c for c in crops if "test" in c.splits and len(c.splits) > 1]
    if tested:
        warnings.append(f"{source} lists {len(tested)} crop{'s' if len(tested) > 1 else ''} in the split 'test' and in another "
                        f"({crops_in_words(tested)}): a test crop is never taught from; skipped")
    both = [c for c in crops if "val" in c.splits and "test" not in c.splits and len(c.splits) > 1]
    if both:
        warnings.append(f"{source} lists {len(both)} crop{'s' if len(both) > 1 else ''} in the split 'val' and in another ({crops_in_words(both)}): "
                        "taught from and not held back, since a taught model is never judged on the dice it learned from")
    train: list[Example] = []
    held: list[Example] = []
    small: list[tuple[str, tuple[int, int]]] = []
    for crop in crops:
        if "test" in crop.splits:
            continue  # a test split is for evaluation only, never for teaching
        try:
            image = load_image(crop_file(root, crop.file), CROP_MIN_SIDE)
        except ImageError as exc:
            warnings.append(_skipped(exc))
            continue
        if min(image.shape[:2]) < MIN_SIDE:
            small.append((crop.file, image.shape[:2]))
            continue
        back = crop.splits == ["val"] if has_val else _held_back(crop.file)
        (held if back else train).append((image, crop.face))
    if small:
        h, w = min(shape for _, shape in small)
        warnings.append(f"{len(small)} crop{'s' if len(small) > 1 else ''} smaller than {MIN_SIDE} pixels a side (the smallest {w}×{h}, "
                        f"{small[0][0]}) {'are' if len(small) > 1 else 'is'} not taught from: too few pixels to learn a die's look from "
                        f"(evaluate reads crops from {CROP_MIN_SIDE} pixels, enlarged, and most of them go to the table); skipped")
    return Examples(train, held, warnings)


def _photo_examples(root: Path) -> Examples:
    """``folder_examples`` of a folder of labelled photos (``photo_folders``); ``EvaluationError`` where ``evaluate``
    refuses it."""
    from vision.evaluate import EvaluationError, photo_folders, yolo_labels
    from vision.photo_sets import set_class_faces, split_called

    try:
        classes = set_class_faces(root)
    except ValueError as exc:
        raise EvaluationError(str(exc)) from None
    listed: dict[str, list[str]] = {}  # photo -> the splits split.json lists it in
    if (root / "split.json").is_file():
        try:
            splits_listed = read_splits(root / "split.json")
        except ValueError as exc:
            raise EvaluationError(str(exc)) from None
        for split, names in splits_listed.items():
            for name in names:
                listed.setdefault(name, [])
                if split not in listed[name]:
                    listed[name].append(split)
    photos: list[tuple[str, Path, Path, list[str]]] = []  # name, image, label file, splits
    for folder, prefix, _ in photo_folders(root, None):
        for name, path in frame_images(folder / "images").items():
            if prefix:
                splits = [split_called(prefix.rstrip("/"))]
            elif name in listed:
                splits = listed[name]
            else:
                splits = [split_called(name.split("/")[0])] if "/" in name else []
            photos.append((prefix + name, path, folder / "labels" / f"{name}.txt", splits))
    warnings: list[str] = []
    tested = [name for name, *_, splits in photos if "test" in splits and len(splits) > 1]
    if tested:
        warnings.append(f"{root / 'split.json'} lists {len(tested)} photo{'s' if len(tested) > 1 else ''} in the split 'test' and in another "
                        f"({', '.join(tested[:5])}{' and more' if len(tested) > 5 else ''}): a test photo is never taught from; skipped")
    both = [name for name, *_, splits in photos if "val" in splits and "test" not in splits and len(splits) > 1]
    if both:
        warnings.append(f"{root / 'split.json'} lists {len(both)} photo{'s' if len(both) > 1 else ''} in the split 'val' and in another "
                        f"({', '.join(both[:5])}{' and more' if len(both) > 5 else ''}): taught from and not held back, since a taught "
                        "model is never judged on the dice it learned from")
    has_val = any("val" in splits for *_, splits in photos)
    train: list[Example] = []
    held: list[Example] = []
    for name, path, label, splits in photos:
        if "test" in splits:
            continue  # a test split is for evaluation only, never for teaching
        try:
            frame = load_image(path)
        except ImageError as exc:
            warnings.append(_skipped(exc))
            continue
        if not label.is_file():
            warnings.append(f"{name}: no label file; skipped")
            continue
        back = splits == ["val"] if has_val else _held_back(name)
        for face, x, y, w, h in yolo_labels(label, frame.shape[1], frame.shape[0], classes, warnings, broken=warnings):
            crop = cut_crop(frame, x, y, max(2.0, min(w, h)))
            (held if back else train).append((crop, face))
    return Examples(train, held, warnings)


def _skipped(exc: ImageError) -> str:
    """The warning for an example image that cannot be read: its sentence, and that it was skipped."""
    return f"{exc.message.rstrip('.')}; skipped"


#: The most examples of one face a fit learns from (the newest): keeps a fit on the Pi within a minute with a full dataset.
MAX_PER_FACE = 100


def newest_per_face(examples: list[Example], limit: int = MAX_PER_FACE) -> list[Example]:
    """At most ``limit`` examples of each face, the last ones of the list (the dataset lists the oldest first).

    >>> [v for _, v in newest_per_face([(None, 1), (None, 1), (None, 2), (None, 1)], 2)]
    [1, 2, 1]
    """
    kept: list[Example] = []
    seen: dict[int, int] = {}
    for example in reversed(examples):
        if seen.get(example[1], 0) < limit:
            seen[example[1]] = seen.get(example[1], 0) + 1
            kept.append(example)
    return kept[::-1]


def training_crops(examples: list[Example]) -> tuple[np.ndarray, np.ndarray]:
    """Each example cut as ``classify_crop`` reads it (the die at a few shares of the image), labels repeated."""
    crops, labels = [], []
    for image, value in examples:
        h, w = image.shape[:2]
        side = min(h, w)
        for s in TEACH_SPANS:
            crops.append(cut_crop(image, w / 2, h / 2, side * s / MARGIN))
            labels.append(value)
    return np.array(crops, np.uint8).reshape(-1, CROP, CROP, 3), np.array(labels, int)


def _write_crops(folder: Path, examples: list[Example]) -> Path:
    (folder / "crops").mkdir(parents=True, exist_ok=True)
    lines = ["file,value,split"]
    for i, (image, value) in enumerate(examples):
        name = f"crops/h{i:05d}.png"
        atomic_write(folder / name, cv2.imencode(".png", image)[1].tobytes())
        lines.append(f"{name},{value},val")
    atomic_write(folder / "crops.csv", "\n".join(lines) + "\n")
    return folder


def _skipped_in_words(warnings: list[str], most: int = 3) -> str:
    """What the folder's reading skipped, for a refusal: a player whose examples were all skipped (a bad label column,
    unreadable pictures) learns why there were too few, not only that there were.

    >>> _skipped_in_words([])
    ''
    >>> _skipped_in_words(["a; skipped", "b; skipped", "c; skipped", "d; skipped"])
    ' Skipped on the way: a; b; c; and 1 more.'
    """
    if not warnings:
        return ""
    shown = "; ".join(w.removesuffix("; skipped") for w in warnings[:most])
    more = f"; and {len(warnings) - most} more" if len(warnings) > most else ""
    return f" Skipped on the way: {shown}{more}."


def _faces_in_words(seen: list[int], camera_view: str, opposite: list[int]) -> str:
    if camera_view != "below":
        return ", ".join(map(str, seen))
    tops = sorted(opposite_face(v, opposite) for v in seen)
    return ", ".join(map(str, tops)) + f" on top (the camera sees {', '.join(str(opposite_face(t, opposite)) for t in tops)})"


def teach(instance: Path, settings: Any, examples: Examples, *, adopt: bool = True) -> dict[str, Any]:
    """Fit, measure, and adopt when better: the before → after figures, the verdict and the model ids."""
    instance = Path(instance)
    view = settings.get("camera.camera_view", "below")
    opposite = list(settings.get("reader.opposite_faces", list(STANDARD_OPPOSITE)))
    short = missing_faces([v for _, v in examples.train])
    if short:
        raise TeachError(f"Too few examples to teach: at least {MIN_PER_FACE} of each face are needed, and these faces have fewer: "
                         f"{_faces_in_words(short, view, opposite)}. Show those faces (or confirm more Bluffs) and teach again."
                         + _skipped_in_words(examples.warnings))
    if len(examples.held_back) < 6:
        raise TeachError(f"Too few examples held back to measure a taught model ({len(examples.held_back)}; at least 6): "
                         "add more photos or confirm more Bluffs." + _skipped_in_words(examples.warnings))
    registry = ModelRegistry.for_settings(instance, settings)
    active = registry.load()
    base = EmbeddingClassifier(registry.model_path)
    crops, labels = training_crops(newest_per_face(examples.train))
    fit = fit_head(base, crops, labels)
    candidate = AdaptedClassifier(fit.head, registry.model_path)
    sets: dict[str, Path] = {}
    with tempfile.TemporaryDirectory(prefix="teach-") as tmp:
        sets["owner"] = _write_crops(Path(tmp) / "owner", examples.held_back)
        sets["rendered"] = write_rendered_set(instance / FOLDER / "eval-rendered", dice=settings.get("teach.rendered_dice", 240))
        for folder in settings.get("teach.eval_sets", []) or []:
            path = Path(folder)
            if not (path / "crops.csv").is_file():
                raise TeachError(f"The evaluation set {folder} (teach.eval_sets) has no crops.csv.")
            sets[path.name] = path
        min_conf = settings.get("reader.min_confidence", 0.95)
        before = measure(active.classifier, sets, min_conf)
        after = measure(candidate, sets, min_conf)
    verdict = compare(before, after)
    result: dict[str, Any] = {
        "adopted": False,
        "why": verdict.why,
        "before_model": active.classifier.model_id,
        "candidate": candidate.model_id,
        "before": before,
        "after": after,
        "examples": {"train": len(examples.train), "held_back": len(examples.held_back)},
        "fit_seconds": round(fit.seconds, 2),
        "warnings": examples.warnings + ([active.problem] if active.problem else []),
        "dry_run": not adopt,
    }
    if verdict.adopt and adopt:
        registry.adopt(fit.head.to_bytes(), candidate.model_id, {"before": before, "after": after, "examples": result["examples"], "fit_seconds": result["fit_seconds"]})
        result["adopted"] = True
    result["status"] = registry.status()
    return result


def summary_lines(result: dict[str, Any]) -> list[str]:
    """A teaching's result for a person: before → after per set, and whether it was adopted."""
    lines = [f"examples: {result['examples']['train']} to learn from, {result['examples']['held_back']} held back; fitted in {result['fit_seconds']} s"]
    for name, b in result["before"].items():
        a = result["after"][name]
        label = "your held-back dice" if name == "owner" else name
        lines.append(f"{label}: {b['right']}/{b['dice']} right → {a['right']}/{a['dice']}; read wrong without a doubt: {b['silently_wrong']} → {a['silently_wrong']}")
    if result["adopted"]:
        lines.append(f"adopted: {result['candidate']} ({result['why']})")
    else:
        lines.append(f"not adopted: {result['before_model']} stays ({result['why']}{'; a dry run adopts nothing' if result.get('dry_run') else ''})")
    lines += [f"warning: {w}" for w in result["warnings"]]
    return lines


#: One switch at a time: the page's and the model follower's (a terminal's change) may come together.
_SWITCHING = threading.Lock()


def switch_reader(services: Any) -> dict[str, Any]:
    """Load the instance's active model into the running reader (after adoption or a rollback); health follows."""
    with _SWITCHING:
        return _switch_reader(services)


def _switch_reader(services: Any) -> dict[str, Any]:
    source = getattr(services, "dice_source", None)
    reader = getattr(source, "reader", None)
    loaded = ModelRegistry.for_settings(services.instance, services.settings).load()
    if reader is not None and hasattr(reader, "classifier"):
        reader.classifier = loaded.classifier
        reader.model_id = loaded.classifier.model_id
        services.model_id = loaded.classifier.model_id
    from companion.app.services import problem

    services.problems[:] = [p for p in services.problems if p.params.get("reader_part") != "taught_model"]
    if loaded.problem:
        services.problems.append(problem("reader", "reader", loaded.problem, reader_part="taught_model"))
    return {"model": services.model_id, "problem": loaded.problem}


def rollback(instance: Path, settings: Any) -> dict[str, Any]:
    return ModelRegistry.for_settings(instance, settings).rollback()


__all__ = ["ElephantsBluffError", "Examples", "folder_examples", "owner_examples", "rollback", "summary_lines", "switch_reader", "teach"]
