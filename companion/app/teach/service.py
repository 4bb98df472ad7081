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
from vision.dataset import yolo_box
from vision.embedding import EmbeddingClassifier
from vision.images import ImageError, frame_images, load_image, read_splits
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
    ``valid`` the ``val`` split), each label as the face its class names (``vision.photo_sets``)."""
    from vision.evaluate import EvaluationError, crop_file, crop_listing, has_crops, photo_folders
    from vision.photo_sets import face_named, face_of_class, set_class_faces, split_called

    root = Path(root)
    if not root.is_dir():
        raise TeachError(f"{root} is not a folder.")
    train: list[Example] = []
    held: list[Example] = []
    warnings: list[str] = []
    if has_crops(root):
        try:
            _, _, rows = crop_listing(root)
        except EvaluationError as exc:
            raise TeachError(exc.message) from None
        has_val = any(len(r) >= 3 and r[2].strip() == "val" for _, r in rows)
        for n, row in rows:
            if len(row) < 2:
                continue
            split = row[2].strip() if len(row) >= 3 else ""
            if split == "test":
                continue  # a test split is for evaluation only, never for teaching
            try:
                value = int(row[1])
            except ValueError:
                value = face_named(row[1]) or 0  # "three", "dice-3": a face in words
            if value not in range(1, 7):
                warnings.append(f"crops.csv line {n}: {row[1]!r} is not a face from 1 to 6; skipped")
                continue
            try:
                image = load_image(crop_file(root, row[0].strip()))
            except ImageError as exc:
                warnings.append(_skipped(exc))
                continue
            back = split == "val" if has_val else _held_back(row[0])
            (held if back else train).append((image, value))
        return Examples(train, held, warnings)
    folders = photo_folders(root, None)
    if folders:
        try:
            classes = set_class_faces(root)
        except ValueError as exc:
            raise TeachError(str(exc)) from None
        photos: list[tuple[str, Path, Path, str]] = []  # name, image, label file, split
        for folder, prefix, _ in folders:
            files = frame_images(folder / "images")
            splits: dict[str, str] = {name: split_called(name.split("/")[0]) for name in files if "/" in name}
            if prefix:
                splits = dict.fromkeys(files, split_called(prefix.rstrip("/")))
            elif (root / "split.json").is_file():
                try:
                    listed = read_splits(root / "split.json")
                except ValueError as exc:
                    raise TeachError(str(exc)) from None
                splits.update({name: split for split, names in listed.items() for name in names})
            photos += [(prefix + name, path, folder / "labels" / f"{name}.txt", splits.get(name, "")) for name, path in files.items()]
        has_val = any(split == "val" for *_, split in photos)
        for name, path, label, split in photos:
            if split == "test":
                continue
            try:
                frame = load_image(path)
            except ImageError as exc:
                warnings.append(_skipped(exc))
                continue
            if not label.is_file():
                warnings.append(f"{name}: no label file; skipped")
                continue
            h, w = frame.shape[:2]
            back = split == "val" if has_val else _held_back(name)
            for line in label.read_text(encoding="utf-8", errors="replace").splitlines():
                try:
                    c, x, y, bw, bh = yolo_box(line)
                except (ValueError, IndexError):
                    if line.strip():
                        warnings.append(f"{label.name}: {line.strip()[:40]!r} is not a YOLO label; skipped")
                    continue
                face = face_of_class(c, classes)
                if face is None:
                    continue
                crop = cut_crop(frame, x * w, y * h, max(2.0, min(bw * w, bh * h)))
                (held if back else train).append((crop, face))
        return Examples(train, held, warnings)
    raise TeachError(f"{root} holds neither images/ with labels/ (whole photos) nor a crops.csv or folders of crops "
                     "named for their face, 1/ to 6/ (crops).")


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
    model = settings.get("reader.model", "") or None
    registry = ModelRegistry(instance, Path(model) if model else None)
    active = registry.load()
    base = EmbeddingClassifier(Path(model) if model else None)
    crops, labels = training_crops(newest_per_face(examples.train))
    fit = fit_head(base, crops, labels)
    candidate = AdaptedClassifier(fit.head, Path(model) if model else None)
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


def switch_reader(services: Any) -> dict[str, Any]:
    """Load the instance's active model into the running reader (after adoption or a rollback); health follows."""
    source = getattr(services, "dice_source", None)
    reader = getattr(source, "reader", None)
    model = services.settings.get("reader.model", "") or None
    loaded = ModelRegistry(services.instance, Path(model) if model else None).load()
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
    model = settings.get("reader.model", "") or None
    return ModelRegistry(instance, Path(model) if model else None).rollback()


__all__ = ["ElephantsBluffError", "Examples", "folder_examples", "owner_examples", "rollback", "summary_lines", "switch_reader", "teach"]
