"""``elephants-bluff evaluate DIR``: how well the reader reads a folder of labelled dice photos or crops.

A folder is either whole frames in the ``shared/datasets`` layout
(``images/NAME.jpg``, ``labels/NAME.txt`` in YOLO format with face value =
class + 1, an optional ``split.json``; or a folder per split as YOLO trainers
write them, ``images/val/NAME.jpg`` beside ``labels/val/NAME.txt``, or as
Roboflow exports them, ``valid/images/`` beside ``valid/labels/``, its classes
named in a ``data.yaml``: ``vision.photo_sets``) or crops
with a ``crops.csv`` of ``file,value[,split]`` (or sorted by hand into a folder
per face, ``3/NAME.jpg``, optionally under a folder per split). A label is always the face visible in the image, so
the reader reads as the camera sees (``with_view("above")``) and faces are
compared as seen.

What counts, per die: *right* (found, and read with the labelled face);
*silently wrong* (wrong, missing or extra in a reading the referee would act
on: status ``ok`` for a frame, sure for a crop), the worst failure; *flagged*
(wrong or missing, but in a reading that asks the table to confirm). Beside
them, how often the table is asked: *right without a doubt* (right, and the die
itself carries no doubt: no confirmation is needed for it) and *doubts*, each
doubt code counted over the found dice (``low_confidence`` for an unsure crop).

A set read with the wrong faces or the wrong boxes must never give a wrong figure without a word: a label whose
class is no face, whose box is no box in the photo (``vision.dataset.box_problem``: labels written in pixels), or
one box labelled as two faces, and a crop listed as two faces, are refused naming the file and line; a photo, a
label or a crop listed again as it was is read once, with a warning in the report (``warnings``).
"""

from __future__ import annotations

import csv
import os
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator, Mapping

import numpy as np

from companion.core.dice import FACES
from companion.core.errors import ElephantsBluffError
from companion.core.reading import OK
from vision.dataset import box_problem, yolo_box
from vision.evaluate_show import MissPictures
from vision.images import CROP_MIN_SIDE, IMAGE_SUFFIXES, frame_images, is_image_name, load_image, read_splits
from vision.photo_sets import face_named, face_of_class, set_class_faces, split_called, split_folder_name, split_folders
from vision.pipeline.decide import sure_confidence


class EvaluationError(ElephantsBluffError, ValueError):
    """A folder ``evaluate`` cannot use; the message says why and what it expects."""

    code = "bad_dataset"


@dataclass
class Tally:
    """The counts ``evaluate`` reports; ``confusion[true][read]``, read 0 meaning "not found"."""

    dice: int = 0
    right: int = 0
    silently_wrong: int = 0
    flagged: int = 0
    extra: int = 0
    photos: int = 0
    photos_all_right: int = 0
    right_without_doubt: int = 0
    doubts: dict[str, int] = field(default_factory=dict)
    unreadable_files: list[str] = field(default_factory=list)
    #: what was read otherwise than listed, in sentences: a photo, label or crop listed again, read once
    warnings: list[str] = field(default_factory=list)
    confusion: list[list[int]] = field(default_factory=lambda: [[0] * 7 for _ in range(7)])
    #: each photo or crop not read all right: where to look first on a set the reader was never tuned on
    misses: list[dict[str, Any]] = field(default_factory=list)

    def add_miss(self, photo: str, labelled: list[int], read: list[int], acted_on: bool, extra: int = 0) -> None:
        """A photo or crop with a die read wrong or missed (0) at its labels, or ``extra`` dice read beside them;
        ``acted_on``: its reading is one the referee would act on, so the miss is silent."""
        self.misses.append({"photo": photo, "labelled": labelled, "read": read, "extra": extra, "silent": acted_on})

    def add_die(self, truth: int, read: int, acted_on: bool, doubts: tuple[str, ...] = ()) -> None:
        """One labelled die: the face read (0: not found), whether its reading is acted on, and the found die's
        own doubts."""
        self.dice += 1
        self.confusion[truth][read] += 1
        for code in doubts:
            self.doubts[code] = self.doubts.get(code, 0) + 1
        if read == truth:
            self.right += 1
            self.right_without_doubt += not doubts
        elif acted_on:
            self.silently_wrong += 1
        else:
            self.flagged += 1

    def as_json(self, kind: str, split: str | None) -> dict[str, Any]:
        per_value = {str(v): {"dice": sum(self.confusion[v]), "right": self.confusion[v][v]} for v in FACES}
        for v in per_value.values():
            v["accuracy"] = round(v["right"] / v["dice"], 4) if v["dice"] else None
        return {
            "kind": kind,
            "split": split,
            "dice": self.dice,
            "right": self.right,
            "accuracy": round(self.right / self.dice, 4) if self.dice else None,
            "silently_wrong": self.silently_wrong,
            "flagged": self.flagged,
            "extra": self.extra,
            "photos": self.photos,
            "photos_all_right": self.photos_all_right,
            "right_without_doubt": self.right_without_doubt,
            "doubts": dict(sorted(self.doubts.items())),
            "per_value": per_value,
            "confusion": self.confusion,
            "unreadable_files": self.unreadable_files,
            "warnings": self.warnings,
            "misses": self.misses,
        }


def evaluate(root: Path, reader: Any, split: str | None = None, crops: bool = False, show: Path | None = None,
             label_fixes: Mapping[tuple[str, float, float], int] | None = None) -> dict[str, Any]:
    """The report for the folder ``root`` read by ``reader`` (one ``split``, or every image).

    Whole photos are read when the folder has them; its ``crops.csv`` when it
    has only crops, or when ``crops`` asks for them. ``show``: a folder to draw each photo or crop not read all
    right into (``vision.evaluate_show``); the report then names it and the files under ``shown``.
    ``label_fixes``: labels found wrong by eye, (photo, cx, cy as the label file's fractions to four decimals) ->
    the face the photo shows (``vision.dataset.VAL_LABEL_FIXES``), read in place of the published ones (whole
    photos only); the report then counts them under ``labels_fixed``. The command reads labels as published.
    """
    root = Path(root)
    if not root.is_dir():
        raise EvaluationError(f"{root} is not a folder of dice photos.")
    has_frames = bool(photo_folders(root, None))
    reads_crops = has_crops(root) and (crops or not has_frames)
    if crops and not reads_crops:
        raise EvaluationError(f"{root} has no crops.csv and no folders of crops named for their face (1/ to 6/).")
    if not (reads_crops or has_frames):
        raise EvaluationError(f"{root} holds neither images/ with labels/ (whole photos) nor a crops.csv or folders of crops "
                              "named for their face, 1/ to 6/ (crops).")
    pictures = MissPictures(show) if show is not None else None  # a folder it cannot write is refused before any read
    if reads_crops:
        report = _evaluate_crops(root, reader, split, pictures)
    else:
        report = _evaluate_frames(root, reader, split, pictures, label_fixes)
    if pictures is not None:
        report["shown"] = {"folder": str(pictures.folder), "files": pictures.written}
    return report


@dataclass(frozen=True)
class PhotoRead:
    """One labelled photo and its reading: ``matched[i]`` is the index of the die read for label ``i``, or None."""

    name: str
    frame: np.ndarray
    labels: list[tuple[int, float, float, float, float]]
    reading: Any
    matched: list[int | None]

    def values_read(self) -> list[int]:
        """The face read for each label (0: no die read there)."""
        return [self.reading.dice[i].seen if i is not None else 0 for i in self.matched]


def frame_names(root: Path, split: str | None, files: dict[str, Path] | None = None,
                warnings: list[str] | None = None) -> list[str]:
    """The photos' names (without the image suffix), every photo in ``images/`` (``frame_images``; ``files``, where
    it was listed already) or those ``split.json`` lists in ``split`` (``read_splits``); without a ``split.json``, the
    photos of the folder ``images/SPLIT/``. A photo the split lists twice (``IMG_1`` and ``IMG_1.jpg`` too) is read
    once, and said in ``warnings``, as is a photo of the split that another split lists too."""
    split_file = root / "split.json"
    if split is not None and split_file.is_file():
        try:
            splits = read_splits(split_file)
        except ValueError as exc:
            raise EvaluationError(str(exc)) from None
        if split not in splits:
            raise EvaluationError(f"{root} has no split called {split!r} (it has: {', '.join(sorted(splits)) or 'none'}).")
        names = list(dict.fromkeys(splits[split]))
        if warnings is not None:
            warnings += split_overlaps(split_file, splits, split)
        return names
    if files is None:
        files = frame_images(root / "images") if (root / "images").is_dir() else {}
    if split is None:
        if not files:
            heic = any(p.suffix.lower() in (".heic", ".heif") for p in (root / "images").rglob("*"))
            raise EvaluationError(f"{root / 'images'} holds no photos ({', '.join(IMAGE_SUFFIXES)}), nor a folder of them per split"
                                  + (": its HEIC photos (an iPhone's) must first be saved as JPEG, which OpenCV reads." if heic else "."))
        return list(files)
    folders = sorted(p.name for p in (root / "images").iterdir() if p.is_dir()) if (root / "images").is_dir() else []
    folder = split_folder_name(folders, split)
    if folder is not None:
        return [name for name in files if name.startswith(f"{folder}/")]
    raise EvaluationError(f"{root} has no split.json and no folder images/{split}/, so it has no split called {split!r}"
                          + (f" (its images/ has the folders: {', '.join(folders)})" if folders else "; leave out --split to read every photo") + ".")


def split_overlaps(split_file: Path, splits: dict[str, list[str]], split: str) -> list[str]:
    """Sentences for the photos ``split`` lists more than once, and for those another split lists too (a model
    taught on that split has seen them), for ``warnings``.

    >>> split_overlaps(Path("split.json"), {"val": ["a", "b", "a"], "train": ["b", "c"]}, "val")
    ["split.json lists 1 photo twice in the split 'val' (a); it is read once.", "split.json lists 1 photo of the split 'val' in the split 'train' too (b): a model taught on 'train' has seen it."]
    """
    out = []
    twice = [name for name, times in Counter(splits[split]).items() if times > 1]
    if twice:
        out.append(f"{split_file} lists {_counted(len(twice))} twice in the split {split!r} ({_names(twice)}); "
                   f"{'it is' if len(twice) == 1 else 'each is'} read once.")
    mine = set(splits[split])
    for other, members in splits.items():
        shared = list(dict.fromkeys(m for m in members if m in mine)) if other != split else []
        if shared:
            out.append(f"{split_file} lists {_counted(len(shared))} of the split {split!r} in the split {other!r} too ({_names(shared)}): "
                       f"a model taught on {other!r} has seen {'it' if len(shared) == 1 else 'them'}.")
    return out


def _counted(n: int, what: str = "photo") -> str:
    """``1 photo``, ``2 photos``."""
    return f"{n} {what}{'' if n == 1 else 's'}"


def _names(names: list[str], most: int = 5) -> str:
    """The first ``most`` of ``names``, and how many more.

    >>> _names(["a", "b", "c"], 2)
    'a, b and 1 more'
    """
    return ", ".join(names[:most]) + (f" and {len(names) - most} more" if len(names) > most else "")


def yolo_labels(path: Path, width: int, height: int, classes: tuple[list[str], list[int | None]] | None = None,
                warnings: list[str] | None = None, broken: list[str] | None = None
                ) -> list[tuple[int, float, float, float, float]]:
    """(face, cx, cy, w, h) in pixels of each line of a YOLO label file (``vision.dataset.yolo_box``: a box, or a
    polygon or turned box taken as the box around it), or ``EvaluationError`` naming the line that is neither. A
    class is its face minus one, or where the set names its classes (``classes``: the names and the face each
    names, ``vision.photo_sets.set_class_faces``) the face its name names.

    Refused too, naming the file and line: a box that is no box in the photo (``vision.dataset.box_problem``: a centre
    outside it, a size of 0 or past it, as labels written in pixels give), and one box labelled as two faces. A line
    that repeats an earlier one (the same face in the same box) is read once and said in ``warnings``. ``broken``:
    where given, a line that is no YOLO label at all is said there and skipped (``teach``), not refused."""
    try:
        text = path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError:
        raise EvaluationError(f"{path} is not a text file of YOLO labels (class cx cy w h per line).") from None
    out = []
    boxes: dict[tuple[float, float, float, float], tuple[int, int]] = {}  # box -> (its first line, its face)
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            c, x, y, w, h = yolo_box(line)
        except (ValueError, IndexError):
            if broken is not None:
                broken.append(f"{path} line {n}: {line.strip()[:40]!r} is not a YOLO label; skipped")
                continue
            raise EvaluationError(f"{path} line {n} is not a YOLO label (class cx cy w h).") from None
        face = _face_of_class(path, n, c, classes)
        problem = box_problem(x, y, w, h)
        if problem is not None:
            raise EvaluationError(f"{path} line {n}: {problem}.")
        if (x, y, w, h) in boxes:
            first, first_face = boxes[(x, y, w, h)]
            if first_face != face:
                raise EvaluationError(f"{path} lines {first} and {n} label the same box as two faces, a {first_face} and a {face}: "
                                      "which one the die shows cannot be told.")
            if warnings is not None:
                warnings.append(f"{path} line {n} repeats line {first} (a {face} in the same box); the die is counted once.")
            continue
        boxes[(x, y, w, h)] = (n, face)
        out.append((face, x * width, y * height, w * width, h * height))
    return out


def _face_of_class(path: Path, line: int, c: int, classes: tuple[list[str], list[int | None]] | None) -> int:
    """``face_of_class``, or ``EvaluationError`` naming the file and line where the class stands for no face."""
    face = face_of_class(c, classes)
    if face is not None:
        return face
    if classes is None:
        raise EvaluationError(f"{path} line {line}: class {c} is not a face (classes 0-5 are faces 1-6).")
    names = classes[0]
    if not 0 <= c < len(names):
        raise EvaluationError(f"{path} line {line}: class {c} is not among the {len(names)} classes the set names.")
    raise EvaluationError(f"{path} line {line}: class {c} is named {names[c]!r}, not a face.")


def image_of(root: Path, name: str) -> Path | None:
    """The image file of the photo ``name`` in ``root/images`` (``val/IMG_1`` in a folder per split), its suffix in
    any case, or None."""
    for suffix in IMAGE_SUFFIXES:  # the common case, a suffix in lower case, without listing the folder
        p = root / "images" / f"{name}{suffix}"
        if p.is_file():
            return p
    return frame_images(root / "images").get(name)


def read_photos(root: Path, reader: Any, split: str | None, unreadable: list[str],
                label_fixes: Mapping[tuple[str, float, float], int] | None = None,
                fixed: list[str] | None = None, warnings: list[str] | None = None) -> Iterator[PhotoRead]:
    """Each photo of ``split`` read as the camera saw it, told how many dice it holds, its labels matched to the
    dice read. A photo without a label file is one of no dice, as YOLO's layout has it (a background photo: every
    die read on it is invented), said once in ``warnings``. A photo ``split.json`` lists without its image, or an
    image that cannot be opened, is skipped with a sentence in ``unreadable``. ``label_fixes`` (``evaluate``'s)
    replace the published faces they name; each label replaced is appended to ``fixed`` as ``photo@cx,cy``.
    ``warnings``: a photo or label listed twice, read once (``frame_names``, ``yolo_labels``).

    Every label file of the split is read before the first photo: a label refused (``yolo_labels``) stops the run
    before any photo is read or drawn (``--show``), not half-way through."""
    seen_reader = reader.with_view("above")
    try:
        classes = set_class_faces(root)
    except ValueError as exc:
        raise EvaluationError(str(exc)) from None
    photos: list[tuple[str, Path | None, Path]] = []  # name, image (None where missing), label file
    for folder, prefix, inner_split in photo_folders(root, split):
        files = frame_images(folder / "images")
        photos += [(prefix + name, files.get(name), folder / "labels" / f"{name}.txt")
                   for name in frame_names(folder, inner_split, files, warnings)]
    shares: dict[str, list] = {}  # each photo's labels as shares of the photo, its size not yet known
    backgrounds = []  # the photos without a label file
    for name, path, label_path in photos:
        if path is None:
            continue
        if label_path.is_file():
            shares[name] = yolo_labels(label_path, 1, 1, classes, warnings)
        else:
            shares[name] = []
            backgrounds.append(name)
    if backgrounds and warnings is not None:
        warnings.append(_background_warning(backgrounds))
    for name, path, _ in photos:
        if path is None:
            unreadable.append(f"{name}: the split lists it, but images/ holds no photo of that name")
            continue
        try:
            frame = load_image(path)
        except ElephantsBluffError as exc:
            unreadable.append(exc.message)
            continue
        height, width = frame.shape[:2]
        labels = [(face, x * width, y * height, w * width, h * height) for face, x, y, w, h in shares[name]]
        if label_fixes:
            labels = _fixed_labels(name, labels, width, height, label_fixes, fixed)
        reading = reader_for(seen_reader, len(labels)).read(frame)
        yield PhotoRead(name, frame, labels, reading, match_boxes([d.box for d in reading.dice], labels))


def _background_warning(names: list[str]) -> str:
    """The one warning for the photos without a label file, read as photos of no dice.

    >>> _background_warning(["a", "b"])
    '2 photos have no label file (a, b): each is read as a photo of no dice, where any die read is invented'
    """
    return (f"{_counted(len(names), 'photo')} {'has' if len(names) == 1 else 'have'} no label file ({_names(names)}): "
            f"each is read as a photo of no dice, where any die read is invented")


def photo_folders(root: Path, split: str | None) -> list[tuple[Path, str, str | None]]:
    """Where the photos of ``split`` (every photo where None) lie: per folder in the ``shared/datasets`` layout, the
    folder, the prefix its photos' names take, and the split to read inside it. ``root`` itself where it holds
    ``images/`` and ``labels/``; else its split folders (``vision.photo_sets.split_folders``), that split's alone."""
    if (root / "images").is_dir() and (root / "labels").is_dir():
        return [(root, "", split)]
    folders = split_folders(root)
    if split is None:
        return [(folder, f"{name}/", None) for name, folder in folders.items()]
    name = split_folder_name(list(folders), split)
    if name is None:
        raise EvaluationError(f"{root} has no folder for the split {split!r} (it has: {', '.join(folders)}).")
    return [(folders[name], f"{name}/", None)]


def _evaluate_frames(root: Path, reader: Any, split: str | None, pictures: MissPictures | None = None,
                     label_fixes: Mapping[tuple[str, float, float], int] | None = None) -> dict[str, Any]:
    tally = Tally()
    fixed: list[str] = []
    for photo in read_photos(root, reader, split, tally.unreadable_files, label_fixes, fixed, tally.warnings):
        reading, labels, matched = photo.reading, photo.labels, photo.matched
        acted_on = reading.status == OK
        tally.photos += 1
        all_right = True
        for (truth, *_), read, found in zip(labels, photo.values_read(), matched):
            tally.add_die(truth, read, acted_on, reading.dice[found].doubts if found is not None else ())
            all_right &= read == truth
        extra = len(reading.dice) - sum(m is not None for m in matched)
        tally.extra += extra
        if acted_on:
            tally.silently_wrong += extra
        tally.photos_all_right += all_right and extra == 0
        if not (all_right and extra == 0):
            tally.add_miss(photo.name, [truth for truth, *_ in labels], photo.values_read(), acted_on, extra)
            if pictures is not None:
                pictures.photo(photo.name, photo.frame, labels, reading, reader)
    report = tally.as_json("frames", split)
    if label_fixes is not None:
        report["labels_fixed"] = fixed
    return report


def _fixed_labels(name: str, labels: list[tuple[int, float, float, float, float]], width: int, height: int,
                  label_fixes: Mapping[tuple[str, float, float], int], fixed: list[str] | None
                  ) -> list[tuple[int, float, float, float, float]]:
    """``labels`` (in pixels) of the photo ``name``, each face ``label_fixes`` names for its centre in its frame's
    fractions (to four decimals, as ``vision.dataset.LABEL_FIXES`` keys them) replaced, and noted in ``fixed``.

    >>> fixed = []
    >>> _fixed_labels("a", [(4, 64.0, 32.0, 10, 10), (2, 10.0, 10.0, 8, 8)], 640, 320, {("a", 0.1, 0.1): 3}, fixed), fixed
    ([(3, 64.0, 32.0, 10, 10), (2, 10.0, 10.0, 8, 8)], ['a@0.1,0.1'])
    """
    out = []
    for face, cx, cy, w, h in labels:
        key = (name, round(cx / width, 4), round(cy / height, 4))
        if key in label_fixes:
            face = label_fixes[key]
            if fixed is not None:
                fixed.append(f"{name}@{key[1]},{key[2]}")
        out.append((face, cx, cy, w, h))
    return out


def reader_for(reader: Any, count: int) -> Any:
    """The reader told how many dice the photo holds, as a table knows it plays with three."""
    return reader if reader.expected_dice == count else reader.with_expected(max(1, count))


def match_boxes(boxes: list[tuple[int, int, int, int]], labels: list[tuple[int, float, float, float, float]]) -> list[int | None]:
    """For each label, the index of the read die whose centre lies in its box (nearest first), each die used once."""
    used: set[int] = set()
    out: list[int | None] = []
    for _, cx, cy, w, h in labels:
        best, best_d = None, None
        for i, (x, y, bw, bh) in enumerate(boxes):
            if i in used:
                continue
            dx, dy = x + bw / 2 - cx, y + bh / 2 - cy
            if abs(dx) <= w / 2 and abs(dy) <= h / 2:
                d = dx * dx + dy * dy
                if best_d is None or d < best_d:
                    best, best_d = i, d
        if best is not None:
            used.add(best)
        out.append(best)
    return out


def crops_table(path: Path) -> tuple[list[str], list[tuple[int, list[str]]]]:
    """A ``crops.csv`` (``file,value[,split]``): its header in lower case and its other rows with their line
    numbers, or ``EvaluationError`` in words. As a spreadsheet may save it, the header may be in capitals or missing (a first
    row whose value is a face is a crop), the file may begin with a byte-order mark, and the columns may be split
    by semicolons or tabs."""
    try:
        text = path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError:
        raise EvaluationError(f"{path} is not a UTF-8 text file.") from None
    first = text.split("\n", 1)[0]
    delimiter = next((d for d in (",", ";", "\t") if d in first), ",")
    rows = list(csv.reader(text.splitlines(), delimiter=delimiter))
    header = [c.strip().lower() for c in rows[0]] if rows else []
    if header[:2] == ["file", "value"]:
        return header, list(enumerate(rows[1:], 2))
    if len(header) >= 2 and header[1].strip() in {str(v) for v in FACES}:  # no header: the first row is a crop
        return ["file", "value", "split"][:len(header)], list(enumerate(rows, 1))
    raise EvaluationError(f"{path} must start with the header file,value[,split].")


def face_folders_table(root: Path) -> tuple[list[str], list[tuple[int, list[str]]]]:
    """The crops of a set sorted by hand into a folder per face (``3/a.jpg``, in ``root`` or ``root/crops``, and under
    a folder per split, ``val/3/a.jpg``), as ``crops_table`` gives a ``crops.csv``'s header and rows (numbered from 1;
    the split column only where there are split folders). A folder is a face's where its name names one
    (``vision.photo_sets.face_named``: ``3``, ``three``, ``dice-3``, as a classification export names its classes),
    and an export's ``valid`` folder is the ``val`` split. No rows where there is no such folder.

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as d:
    ...     for f in ("crops/val/3/a.jpg", "crops/val/3/notes.txt", "crops/train/6/b.PNG"):
    ...         (Path(d) / f).parent.mkdir(parents=True, exist_ok=True)
    ...         _ = (Path(d) / f).write_bytes(b"")
    ...     face_folders_table(Path(d))
    (['file', 'value', 'split'], [(1, ['crops/train/6/b.PNG', '6', 'train']), (2, ['crops/val/3/a.jpg', '3', 'val'])])
    """
    found: list[list[str]] = []
    for base in (root, root / "crops"):
        if not base.is_dir():
            continue
        folders = sorted(p for p in base.iterdir() if p.is_dir())
        groups = [(base, None)] + [(p, split_called(p.name)) for p in folders if face_named(p.name) is None and p != root / "crops"]
        for parent, split in groups:
            named = sorted((face, p.name) for p in parent.iterdir() if p.is_dir() and (face := face_named(p.name)) is not None)
            for face, folder in named:
                found += [[path.relative_to(root).as_posix(), str(face)] + ([split] if split else [])
                          for path in sorted((parent / folder).iterdir()) if is_image_name(path) and path.is_file()]
    if any(len(row) == 3 for row in found):
        return ["file", "value", "split"], list(enumerate((row + [""] * (3 - len(row)) for row in found), 1))
    return ["file", "value"], list(enumerate(found, 1))


def has_crops(root: Path) -> bool:
    """Whether ``root`` holds crops: a ``crops.csv``, or folders of crops named for their face."""
    return (root / "crops.csv").is_file() or bool(face_folders_table(root)[1])


def crop_listing(root: Path) -> tuple[str, list[str], list[tuple[int, list[str]]]]:
    """Where ``root``'s crops are listed (for its sentences), the header and the numbered rows: its ``crops.csv``
    (``crops_table``), or else its folders per face (``face_folders_table``)."""
    if (root / "crops.csv").is_file():
        return str(root / "crops.csv"), *crops_table(root / "crops.csv")
    return f"{root} (its folders per face)", *face_folders_table(root)


def row_face(row: list[str]) -> int | None:
    """The face a listing's row gives in its value column (``3``, or in words, ``three``, ``dice-3``), or None where it
    gives none (a number that is no face, another word, no value column).

    >>> row_face(["a.jpg", " 3"]), row_face(["a.jpg", "three"]), row_face(["a.jpg", "9"]), row_face(["a.jpg"])
    (3, 3, None, None)
    """
    if len(row) < 2:
        return None
    try:
        value = int(row[1])
    except ValueError:
        return face_named(row[1])
    return value if value in FACES else None


@dataclass(frozen=True)
class ListedCrop:
    """One crop file as a listing gives it: its name (as first listed), its face, and each line listing it with the
    split that line puts it in (``""`` where there is no split column)."""

    file: str
    face: int
    listed: tuple[tuple[int, str], ...]

    @property
    def splits(self) -> list[str]:
        """The splits its lines put it in, each once, in the listing's order."""
        return list(dict.fromkeys(split for _, split in self.listed))

    def lines(self, split: str | None = None) -> str:
        """``line 3`` or ``lines 3 and 9``: where it is listed (in ``split``, where given)."""
        numbers = [str(n) for n, s in self.listed if split is None or s == split]
        return f"line {numbers[0]}" if len(numbers) == 1 else f"lines {', '.join(numbers[:-1])} and {numbers[-1]}"


def crops_once(root: Path, source: str, rows: list[tuple[int, str, int, str]]) -> list[ListedCrop]:
    """Each crop file of the rows ``(line, file, face, split)`` of ``root``'s listing ``source`` once, in the order
    first listed: a file named twice (``a.jpg`` and ``crops/a.jpg``, or a row copied) is one crop, each of its lines
    kept. ``EvaluationError`` naming the file and both lines where it is listed as two faces: which one it shows
    cannot be told, and either way one of the two counts would be wrong without a word."""
    found: dict[str, ListedCrop] = {}
    for n, file, face, split in rows:
        key = os.path.normpath(crop_file(root, file))
        crop = found.get(key)
        if crop is None:
            found[key] = ListedCrop(file, face, ((n, split),))
            continue
        if crop.face != face:
            raise EvaluationError(f"{source} lists {file} as two faces, a {crop.face} on line {crop.listed[0][0]} and a {face} on line {n}: "
                                  "which one the crop shows cannot be told.")
        found[key] = ListedCrop(crop.file, face, crop.listed + ((n, split),))
    return list(found.values())


def crops_in_words(crops: list[ListedCrop], split: str | None = None, most: int = 5) -> str:
    """The first ``most`` of ``crops`` with the lines listing them (in ``split``, where given), and how many more.

    >>> crops_in_words([ListedCrop("a.jpg", 3, ((2, "val"), (9, "val")))])
    'a.jpg on lines 2 and 9'
    """
    return _names([f"{c.file} on {c.lines(split)}" for c in crops], most)


def crop_rows(root: Path, split: str | None, warnings: list[str] | None = None) -> Iterator[tuple[str, int]]:
    """(file, face) for each crop of ``root`` (``crop_listing``) in ``split`` (every row when None), or
    ``EvaluationError`` in words where a value is not a face 1-6, there is no such split, or a crop is listed as two
    faces (``crops_once``). A crop listed again is read once and said in ``warnings``, as is a crop of ``split`` that
    another split lists too (a model taught on that split has seen it)."""
    source, header, rows = crop_listing(root)
    has_split = len(header) >= 3 and header[2] == "split"
    if split is not None and not has_split:
        what = "no split column" if (root / "crops.csv").is_file() else "no folder per split"
        raise EvaluationError(f"{source} has {what}, so it has no split called {split!r}.")
    splits = {row[2].strip() for _, row in rows if len(row) >= 3}
    if split is not None and split not in splits:
        raise EvaluationError(f"{source} has no split called {split!r} (it has: {', '.join(sorted(splits)) or 'none'}).")
    listed = []
    for n, row in rows:
        if not row:
            continue
        row_split = row[2].strip() if len(row) >= 3 else ""
        face = row_face(row)
        if face is None:
            if split is not None and row_split != split:
                continue  # another split's row: not read, so not refused
            if len(row) > 1 and row[1].strip().lstrip("+-").isdigit():
                raise EvaluationError(f"{source} line {n}: {int(row[1])} is not a face from 1 to 6.")
            raise EvaluationError(f"{source} line {n}: the value must be a face from 1 to 6.")
        listed.append((n, row[0].strip(), face, row_split))
    crops = [c for c in crops_once(root, source, listed) if split is None or split in c.splits]
    if warnings is not None:
        again = [c for c in crops if len([s for _, s in c.listed if split is None or s == split]) > 1]
        if again:
            warnings.append(f"{source} lists {_counted(len(again), 'crop')} more than once ({crops_in_words(again, split)}); "
                            f"{'it is' if len(again) == 1 else 'each is'} read once.")
        for other in sorted({s for c in crops for s in c.splits} - {split, ""}) if split is not None else ():
            shared = [c for c in crops if other in c.splits]
            warnings.append(f"{source} lists {_counted(len(shared), 'crop')} of the split {split!r} in the split {other!r} too "
                            f"({crops_in_words(shared)}): a model taught on {other!r} has seen {'it' if len(shared) == 1 else 'them'}.")
    for crop in crops:
        yield crop.file, crop.face


def crop_file(root: Path, file: str) -> Path:
    """Where the crop a ``crops.csv`` row names lies: ``root/file``, its path written with either slash, or, where
    the row gives the bare name, in ``root/crops``.

    >>> crop_file(Path("set"), "crops\\\\a.jpg").as_posix()
    'set/crops/a.jpg'
    """
    path = root / file.replace("\\", "/")
    if not path.exists() and len(path.relative_to(root).parts) == 1 and (root / "crops" / path.name).exists():
        return root / "crops" / path.name
    return path


def _evaluate_crops(root: Path, reader: Any, split: str | None, pictures: MissPictures | None = None) -> dict[str, Any]:
    tally = Tally()
    sure_at = sure_confidence(reader.min_confidence)
    for file, truth in crop_rows(root, split, tally.warnings):
        try:
            image = load_image(crop_file(root, file), CROP_MIN_SIDE)
        except ElephantsBluffError as exc:
            tally.unreadable_files.append(exc.message)
            continue
        value, confidence = reader.classify_crop(image)
        tally.photos += 1
        sure = confidence >= sure_at
        tally.add_die(truth, value, sure, () if sure else ("low_confidence",))
        tally.photos_all_right += value == truth
        if value != truth:
            tally.add_miss(file, [truth], [value], sure)
            if pictures is not None:
                pictures.crop(file, image, truth, value, confidence, sure)
    return tally.as_json("crops", split)


def summary(report: dict[str, Any]) -> str:
    """The report in a few lines for a person."""
    acc = report["accuracy"]
    kind = f"{report['kind']}{' (' + report['split'] + ')' if report['split'] else ''}"
    if acc is not None:
        headline = f"{kind}: {report['right']} of {report['dice']} dice right ({acc * 100:.2f} %)"
    elif report["photos"]:  # photos of no dice (YOLO's background photos): what they measure is the dice invented
        headline = f"{kind}: no dice labelled; {report['extra']} {'die' if report['extra'] == 1 else 'dice'} invented on its {_counted(report['photos'])}"
    else:
        headline = f"{kind}: no dice"
    lines = [
        headline,
        f"silently wrong: {report['silently_wrong']}; flagged for the table: {report['flagged']}; extra dice found: {report['extra']}",
        f"photos all right: {report['photos_all_right']} of {report['photos']}",
        f"right without a doubt (no confirmation needed): {report['right_without_doubt']}"
        + (f"; doubts: {', '.join(f'{k} {v}' for k, v in report['doubts'].items())}" if report["doubts"] else ""),
        "per face: " + ", ".join(f"{v}: {d['right']}/{d['dice']}" for v, d in report["per_value"].items()),
    ]
    lines += [f"unreadable: {u}" for u in report["unreadable_files"]]
    lines += [f"warning: {w}" for w in report.get("warnings", [])]
    if report.get("model"):
        lines.append(f"read by the face model {report['model']}")
    if "shown" in report:
        n = len(report["shown"]["files"])
        how = "the labels in cyan" if report["kind"] == "frames" else "each with its label and what was read"
        lines.append(f"drawn in {report['shown']['folder']}: {n} {'photo' if n == 1 else 'photos'} not read all right ({how})")
    misses = report["misses"]
    if misses:
        lines.append(f"read wrong or missed (labelled -> read, 0 not found), {len(misses)} {'photo' if len(misses) == 1 else 'photos'}"
                     + (f", the first {MISSES_SHOWN} (--json lists every one):" if len(misses) > MISSES_SHOWN else ":"))
        lines += [f"  {m['photo']}: {' '.join(map(str, m['labelled']))} -> {' '.join(map(str, m['read']))}"
                  + (f", {m['extra']} extra" if m["extra"] else "") + (" SILENTLY WRONG" if m["silent"] else ", flagged")
                  for m in misses[:MISSES_SHOWN]]
    return "\n".join(lines)


#: ``summary`` lists this many of the photos or crops read wrong or missed.
MISSES_SHOWN = 20


def why_part_measured(report: dict[str, Any]) -> str | None:
    """Where some of the set could not be read but the rest was counted: a sentence saying the figures are of part of
    it (``evaluate`` then ends with status 1, as ``read`` and ``classify`` do for a file they cannot read: a figure
    for the whole set it is not), or None where every photo or crop was read.

    >>> print(why_part_measured({"dice": 30, "kind": "frames", "split": "val", "photos": 10, "unreadable_files": ["a"]}))
    Part of the split 'val' was measured: 1 photo could not be read (named under "unreadable"); the figures are of the 10 photos read.
    >>> why_part_measured({"dice": 30, "kind": "crops", "split": None, "photos": 0, "unreadable_files": []}) is None
    True
    """
    n = len(report["unreadable_files"])
    if not n or why_nothing_measured(report) is not None:
        return None
    where = f"the split {report['split']!r}" if report["split"] else "the folder"
    if report["kind"] == "frames":
        what, rest = _counted(n, "photo"), f"the {_counted(report['photos'], 'photo')} read"
    else:
        what, rest = _counted(n, "crop"), f"the {_counted(report['dice'], 'crop')} read"
    return (f"Part of {where} was measured: {what} could not be read (named under \"unreadable\"); "
            f"the figures are of {rest}.")


def why_nothing_measured(report: dict[str, Any]) -> str | None:
    """Why a report counts no die, in a sentence for a person (``evaluate`` then ends with status 1: a run that
    measured nothing is no figure), or None where it counts some. Whole photos read with no die labelled on any (a
    set of YOLO background photos) measure the dice invented on them: a figure too.

    >>> why_nothing_measured({"dice": 0, "kind": "crops", "split": None, "photos": 0, "unreadable_files": []})
    'Nothing was measured: the folder lists no crops.'
    >>> print(why_nothing_measured({"dice": 0, "kind": "frames", "split": "val", "photos": 0, "unreadable_files": ["a", "b"]}))
    Nothing was measured: none of the 2 photos of the split 'val' could be read (each is named under "unreadable").
    """
    if report["dice"] or (report["kind"] == "frames" and report["photos"]):
        return None
    what = "photos" if report["kind"] == "frames" else "crops"
    where = f"of the split {report['split']!r}" if report["split"] else "of the folder"
    if report["unreadable_files"]:
        n = len(report["unreadable_files"])
        which = f"the one {what[:-1]} {where} could not be read" if n == 1 else f"none of the {n} {what} {where} could be read"
        return f"Nothing was measured: {which} (each is named under \"unreadable\")."
    return f"Nothing was measured: {'the split ' + repr(report['split']) if report['split'] else 'the folder'} lists no {what}."

