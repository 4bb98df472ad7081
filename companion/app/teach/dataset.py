"""The instance's own dataset: the dice crops of every Bluff the table confirmed or corrected.

Kept in ``<instance>/owner-dataset/`` in the ``shared/datasets`` crops layout:
``crops/<challenge>-<n>.png`` and ``crops.csv`` (``file,value,split``, then
``challenge,version,added,model`` for this folder's own book-keeping). A label is
the face the camera SAW (the opposite of the agreed top face when the camera
looks from below), as in every shared set. All dice of one Bluff go to the same
split (``val`` for about one Bluff in five, the held-back part a taught model is
measured on; ``train`` otherwise), decided by the Bluff's id, so a photo never
teaches and judges at once.

A Bluff gives crops only when its reading found exactly as many dice as were
agreed: the page's confirm pickers are numbered as the reading's boxes, so die
``i`` of the reading is die ``i`` of the agreed dice. A correction replaces the
Bluff's earlier crops. Past ``teach.max_crops`` the oldest go first. Every file
is written with ``atomic_write``; a damaged row or crop is skipped with a
warning, never a crash.
"""

from __future__ import annotations

import csv
import hashlib
import io
import logging
import queue
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Sequence

import cv2
import numpy as np

from companion.core.dice import STANDARD_OPPOSITE, is_face, opposite_face
from companion.core.errors import ElephantsBluffError
from companion.core.files import atomic_write
from vision.classifier import cut_crop

log = logging.getLogger(__name__)

FOLDER = "owner-dataset"
COLUMNS = ("file", "value", "split", "challenge", "version", "added", "model")
#: One Bluff in this many is held back (split ``val``).
HELD_BACK_ONE_IN = 5


class DatasetError(ElephantsBluffError, ValueError):
    code = "owner_dataset"


@dataclass(frozen=True)
class Row:
    file: str
    value: int
    split: str
    challenge: str
    version: str
    added: str
    model: str

    def as_list(self) -> list[str]:
        return [self.file, str(self.value), self.split, self.challenge, self.version, self.added, self.model]


def split_of(challenge_id: str) -> str:
    """``val`` for about one Bluff in ``HELD_BACK_ONE_IN``, by its id; ``train`` otherwise.

    >>> sorted({split_of(f"c-x-{i}") for i in range(40)})
    ['train', 'val']
    """
    return "val" if int(hashlib.sha256(challenge_id.encode()).hexdigest()[:8], 16) % HELD_BACK_ONE_IN == 0 else "train"


def seen_face(top: int, camera_view: str = "below", opposite: Sequence[int] = STANDARD_OPPOSITE) -> int:
    """The face the camera saw of a die whose agreed top face is ``top``.

    >>> seen_face(6), seen_face(6, "above")
    (1, 6)
    """
    return opposite_face(top, opposite) if camera_view == "below" else top


def die_crop(frame: np.ndarray, box: Sequence[int]) -> np.ndarray:
    """The classifier's 40×40 crop of the die in ``box`` (x, y, w, h: the reading's box around it)."""
    x, y, w, h = (float(v) for v in box)
    return cut_crop(frame, x + w / 2, y + h / 2, max(2.0, min(w, h)))


class OwnerDataset:
    """The crops of one instance.

    >>> import tempfile, pathlib
    >>> ds = OwnerDataset(pathlib.Path(tempfile.mkdtemp()))
    >>> ds.add("c-ab-1", np.zeros((200, 200, 3), np.uint8), [[10, 10, 40, 40]], [6], "v1", "m")
    1
    >>> [(r.value, r.split) for r in ds.rows()]
    [(1, 'train')]
    """

    def __init__(self, instance: Path, *, max_crops: int = 3000, camera_view: str = "below", opposite: Sequence[int] = STANDARD_OPPOSITE) -> None:
        self.folder = Path(instance) / FOLDER
        self.max_crops = int(max_crops)
        self.camera_view = camera_view
        self.opposite = list(opposite)
        self._lock = threading.Lock()
        #: what was wrong with the folder at the last read (rows or files skipped), for the page and the logs
        self.warnings: list[str] = []

    @property
    def csv_path(self) -> Path:
        return self.folder / "crops.csv"

    def rows(self) -> list[Row]:
        """The rows of ``crops.csv`` that make sense; others are skipped and named in ``warnings``. A crop listed again
        (a file copied or edited by hand) is kept once; listed again with another face or split, neither row is
        kept: which face it shows cannot be told, and a crop both learned from and held back would judge a taught
        model on a die it learned from."""
        self.warnings = []
        if not self.csv_path.is_file():
            return []
        try:
            text = self.csv_path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            self._warn(f"{self.csv_path} cannot be read ({exc.__class__.__name__}); it is started again")
            return []
        lines = list(csv.reader(io.StringIO(text)))
        if not lines or [c.strip() for c in lines[0][:3]] != ["file", "value", "split"]:
            self._warn(f"{self.csv_path} has no file,value,split header; its rows are skipped")
            return []
        out = []
        listed_on = []
        for n, cells in enumerate(lines[1:], 2):
            if not cells:
                continue
            cells = [c.strip() for c in cells] + [""] * (len(COLUMNS) - len(cells))
            try:
                value = int(cells[1])
            except ValueError:
                value = 0
            name = cells[0]
            if not is_face(value) or not name.startswith("crops/") or "/" in name[6:] or ".." in name or cells[2] not in ("train", "val"):
                self._warn(f"{self.csv_path.name} line {n} is damaged and skipped")
                continue
            out.append(Row(name, value, cells[2], cells[3], cells[4], cells[5], cells[6]))
            listed_on.append(n)
        return self._once(out, listed_on)

    def _once(self, rows: list[Row], lines: list[int]) -> list[Row]:
        """``rows`` (listed on ``lines``) with each file once: a repeat of a row is dropped, and a file listed with
        another face or split is dropped whole, each said in ``warnings``."""
        first: dict[str, tuple[Row, int]] = {}
        conflicting: set[str] = set()
        for row, n in zip(rows, lines):
            if row.file not in first:
                first[row.file] = (row, n)
                continue
            earlier, m = first[row.file]
            if (earlier.value, earlier.split) == (row.value, row.split):
                self._warn(f"{self.csv_path.name} line {n} lists {row.file} again (as line {m} does); it is kept once")
            else:
                self._warn(f"{self.csv_path.name} lines {m} and {n} list {row.file} as a {earlier.value} ({earlier.split}) and a "
                           f"{row.value} ({row.split}); both are skipped")
                conflicting.add(row.file)
        return [row for row, _ in first.values() if row.file not in conflicting]

    def _warn(self, words: str) -> None:
        log.warning("owner dataset: %s", words)
        self.warnings.append(words)

    def version_of(self, challenge_id: str) -> str | None:
        for row in self.rows():
            if row.challenge == challenge_id:
                return row.version
        return None

    def add(self, challenge_id: str, frame: np.ndarray, boxes: Sequence[Sequence[int]], tops: Sequence[int], version: str, model: str) -> int:
        """Keep the crops of one agreed Bluff (replacing its earlier ones); returns how many were kept."""
        if len(boxes) != len(tops) or not boxes:
            raise DatasetError("The reading found another number of dice than the table agreed, so no die can be labelled.")
        if not all(is_face(t) for t in tops):
            raise DatasetError("The agreed dice must be faces from 1 to 6.")
        with self._lock:
            rows = [r for r in self.rows() if r.challenge != challenge_id]
            dropped = {r.file for r in self.rows() if r.challenge == challenge_id}
            (self.folder / "crops").mkdir(parents=True, exist_ok=True)
            split = split_of(challenge_id)
            added = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
            new = []
            token = hashlib.sha256(version.encode()).hexdigest()[:6]
            try:
                for i, (box, top) in enumerate(zip(boxes, tops)):
                    name = f"crops/{challenge_id}-{i + 1}-{token}.png"
                    ok, png = cv2.imencode(".png", die_crop(frame, box))
                    if not ok:
                        continue
                    atomic_write(self.folder / name, png.tobytes())
                    new.append(Row(name, seen_face(int(top), self.camera_view, self.opposite), split, challenge_id, version, added, model))
                rows += new
                pruned = rows[:-self.max_crops] if len(rows) > self.max_crops else []
                rows = rows[len(pruned):]
                self._write(rows)
            except OSError:
                # a full card: the list was not changed, so the crops written for it go too (no file the list
                # does not name is left behind, where nothing would ever remove it)
                for row in new:
                    if row.file not in dropped:
                        (self.folder / row.file).unlink(missing_ok=True)
                raise
            for name in dropped - {r.file for r in rows} | {r.file for r in pruned}:
                try:
                    (self.folder / name).unlink()
                except OSError:
                    pass
            return len(new)

    def _write(self, rows: list[Row]) -> None:
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(COLUMNS)
        for r in rows:
            writer.writerow(r.as_list())
        atomic_write(self.csv_path, out.getvalue())

    def examples(self, split: str | None = None) -> list[tuple[np.ndarray, int, Row]]:
        """(crop, face seen, row) of each readable crop; an unreadable one is skipped with a warning."""
        rows = self.rows()
        out = []
        for r in rows:
            if split is not None and r.split != split:
                continue
            image = cv2.imread(str(self.folder / r.file), cv2.IMREAD_COLOR)
            if image is None:
                self._warn(f"{r.file} cannot be read and is skipped")
                continue
            out.append((image, r.value, r))
        return out

    def summary(self) -> dict[str, Any]:
        rows = self.rows()
        per_face = {str(v): sum(1 for r in rows if r.value == v) for v in range(1, 7)}
        return {"crops": len(rows), "bluffs": len({r.challenge for r in rows}), "held_back": sum(r.split == "val" for r in rows),
                "per_face_seen": per_face, "max_crops": self.max_crops, "warnings": list(self.warnings)}

    def export(self, out: Path) -> dict[str, Any]:
        """Write the dataset to ``out`` in the ``shared/datasets`` crops layout (``crops/*.jpg``, ``crops.csv``, ``README.md``)."""
        out = Path(out)
        if out.exists() and (not out.is_dir() or any(out.iterdir())):
            raise DatasetError(f"{out} already exists and is not an empty folder: name a new folder to export to.")
        examples = self.examples()
        if not examples:
            raise DatasetError("The table's own dataset is empty: it fills as the table confirms or corrects the dice of Bluffs.")
        (out / "crops").mkdir(parents=True, exist_ok=True)
        lines = ["file,value,split"]
        for image, value, row in examples:
            name = "crops/" + Path(row.file).stem + ".jpg"
            atomic_write(out / name, cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, 95])[1].tobytes())
            lines.append(f"{name},{value},{row.split}")
        atomic_write(out / "crops.csv", "\n".join(lines) + "\n")
        summary = self.summary()
        atomic_write(out / "README.md", (
            "# The table's own dice\n\n"
            f"{len(examples)} crops ({CROP_WORDS}) from {summary['bluffs']} Bluffs whose dice the table confirmed or corrected.\n"
            "`crops.csv` is `file,value,split`; **value is the face visible in the image** (the face the camera under the tray saw, "
            "the opposite of the top face the table agreed), as in every `shared/datasets` set. All dice of one Bluff share a split; "
            "`val` is the part held back to measure a taught model.\n"
            f"Warnings while exporting: {'; '.join(self.warnings) if self.warnings else 'none'}.\n"))
        return {"crops": len(examples), "folder": str(out), "warnings": list(self.warnings)}


CROP_WORDS = "40×40 px, the die upright-ish and centred, cut as the reader cuts it"


def _agreed_dice(view: dict[str, Any]) -> list[int] | None:
    """The dice the table agreed for a Bluff view: confirmed (source ``table``) or corrected; None otherwise."""
    if view.get("source") not in ("table", "correction") or not view.get("dice"):
        return None
    return [int(v) for v in view["dice"]]


class Collector:
    """Feeds the dataset from the referee: each agreed Bluff's crops are cut on a worker thread, off the referee's lock.

    ``attach`` registers it as a listener of the referee's announced states; on
    each it looks at the game's Bluffs, and one newly confirmed or corrected
    (``version``: its source and number of corrections) is queued.
    """

    def __init__(self, dataset: OwnerDataset, challenges: Callable[[str], list[dict[str, Any]]], frame_of: Callable[[str], bytes | None], enabled: Callable[[], bool]) -> None:
        self.dataset = dataset
        self._challenges = challenges
        self._frame_of = frame_of
        self._enabled = enabled
        self._seen: dict[str, str] = {}
        self._queue: queue.Queue = queue.Queue(maxsize=256)
        self._thread = threading.Thread(target=self._work, name="owner-dataset", daemon=True)
        self._thread.start()

    @staticmethod
    def version(view: dict[str, Any]) -> str:
        return f"{view.get('source')}:{len(view.get('corrections') or [])}:{','.join(map(str, view.get('dice') or []))}"

    def on_state(self, public: dict[str, Any]) -> None:
        """A referee listener (``Referee.add_listener``): queue the Bluffs of this game newly agreed by the table."""
        if not self._enabled() or not public.get("last_challenge"):
            return
        for view in self._challenges(public["id"]):
            dice = _agreed_dice(view)
            if dice is None:
                continue
            version = self.version(view)
            if self._seen.get(view["id"]) == version:
                continue
            self._seen[view["id"]] = version
            try:
                self._queue.put_nowait((view, dice, version))
            except queue.Full:
                log.warning("owner dataset: too many Bluffs waiting; %s is not kept", view["id"])

    def _work(self) -> None:
        while True:
            item = self._queue.get()
            try:
                if item is not None:
                    self._keep(*item)
            except Exception:
                log.exception("owner dataset: the crops of a Bluff could not be kept")
            finally:
                self._queue.task_done()
            if item is None:
                return

    def _keep(self, view: dict[str, Any], dice: list[int], version: str) -> None:
        reading = view.get("reading") or {}
        boxes = [d.get("box") for d in reading.get("dice") or []]
        if len(boxes) != len(dice) or not all(isinstance(b, list) and len(b) == 4 for b in boxes):
            return  # the reading's dice cannot be matched to the agreed ones: nothing is guessed
        if self.dataset.version_of(view["id"]) == version:
            return
        photo = self._frame_of(view["id"]) if view.get("has_images") else None
        frame = cv2.imdecode(np.frombuffer(photo, np.uint8), cv2.IMREAD_COLOR) if photo else None
        if frame is None:
            return
        self.dataset.add(view["id"], frame, boxes, dice, version, str(reading.get("model", "")))

    def wait_idle(self) -> None:
        """Until every queued Bluff is kept (tests, and a clean stop)."""
        self._queue.join()

    def close(self) -> None:
        self._queue.put(None)
        self._thread.join(timeout=5)


def attach(referee: Any, instance: Path, settings: Any) -> Collector:
    """The dataset of ``instance`` fed from ``referee`` (``teach.collect`` switches it on and off)."""
    dataset = OwnerDataset(instance, max_crops=settings.get("teach.max_crops", 3000), camera_view=settings.get("camera.camera_view", "below"),
                           opposite=settings.get("reader.opposite_faces", list(STANDARD_OPPOSITE)))

    def frame_of(challenge_id: str) -> bytes | None:
        try:
            return referee.frame_photo(challenge_id, "frame").data
        except ElephantsBluffError:
            return None

    collector = Collector(dataset, referee.challenges, frame_of, lambda: bool(settings.get("teach.collect", True)))
    referee.add_listener(collector.on_state)
    return collector
