"""The instance's face models: which one reads (active), which one read before (previous), and the taught heads.

Kept in ``<instance>/models/``: ``registry.json`` and one ``<model id>.npz`` per
taught model (``vision/adapt.py``). The shipped model needs no file here: its
id is the shipped file's. Every file is written with ``atomic_write``, the head
before the registry, so the switch to a new model is the one atomic rename of
``registry.json``: a power cut during adoption leaves the previous model active
and intact (at worst an unused head file).

A taught model that cannot be loaded (its file damaged, or made for another
shipped model after an update) is never fatal: the shipped model reads, and
``load_problem`` says why (``/api/health`` shows it).
"""

from __future__ import annotations

import json
import logging
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from companion.core.errors import ElephantsBluffError, HardwareError
from companion.core.files import atomic_write
from vision.classifier import FaceClassifier, file_model_id, shipped_model_path
from vision.embedding import EmbeddingClassifier

log = logging.getLogger(__name__)

FOLDER = "models"
REGISTRY = "registry.json"


class RegistryError(ElephantsBluffError, ValueError):
    """A model change that cannot be made now (nothing to roll back to); nothing is changed."""

    status = 409
    code = "model_registry"


@dataclass
class Loaded:
    """The classifier that reads, and why it is not the active one (None when it is)."""

    classifier: FaceClassifier
    problem: str | None = None


class ModelRegistry:
    """The models of one instance folder.

    >>> import tempfile, pathlib
    >>> reg = ModelRegistry(pathlib.Path(tempfile.mkdtemp()))
    >>> reg.status()["active"] == reg.base_id()
    True
    """

    def __init__(self, instance: Path, model_path: Path | None = None) -> None:
        self.folder = Path(instance) / FOLDER
        #: The registry file: replaced whole by one rename on each change, so its stat tells a change (the follower).
        self.file = self.folder / REGISTRY
        self.model_path = Path(model_path) if model_path else None

    @classmethod
    def for_settings(cls, instance: Path, settings: Any) -> "ModelRegistry":
        """The registry of ``instance`` over the face model the settings name (``reader.model``; empty: the shipped one)."""
        model = settings.get("reader.model", "") or None
        return cls(instance, Path(model) if model else None)

    # --- reading the registry -----------------------------------------------------------------

    def base_path(self) -> Path:
        return self.model_path or shipped_model_path()

    def base_id(self) -> str:
        return file_model_id(self.base_path())

    def _read(self) -> tuple[dict[str, Any], str | None]:
        """The registry (empty when there is none) and why it could not be read, if it could not."""
        path = self.file
        if not path.is_file():
            return {"active": None, "previous": None, "models": {}}, None
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            if not isinstance(data, dict) or not isinstance(data.get("models", {}), dict):
                raise ValueError("not an object")
        except (OSError, ValueError, UnicodeDecodeError) as exc:
            log.warning("the model registry %s cannot be read (%s); the shipped model reads", path, exc)
            return {"active": None, "previous": None, "models": {}}, f"The list of taught models ({path.name}) is damaged, so the shipped model reads; teach the dice again."
        data.setdefault("models", {})
        return data, None

    def status(self) -> dict[str, Any]:
        """The active and previous model ids (the shipped one when none is taught), and what is known of each."""
        data, problem = self._read()
        base = self.base_id()
        active = data.get("active") or base
        previous = data.get("previous")
        if problem is None and active != base and active in data["models"]:  # the head as load() would read it
            try:
                self._head(active, data["models"][active])
            except (OSError, ValueError, KeyError) as exc:
                problem = self._unloadable(active, exc)
        return {
            "active": active,
            "previous": previous,
            "shipped": base,
            "taught": active != base,
            "models": data["models"],
            "problem": problem,
            "can_roll_back": previous is not None and previous != active,
        }

    # --- loading --------------------------------------------------------------------------------

    def load(self, threads: int = 1) -> Loaded:
        """The active model's classifier; the shipped one, with why, when the active one cannot be loaded."""
        from vision.adapt import AdaptedClassifier

        data, problem = self._read()
        active = data.get("active")
        if active and active != self.base_id():
            entry = data["models"].get(active)
            if entry is None:  # a shipped model of an earlier version, rolled back to: it is no longer here
                problem = f"The model {active} is no longer shipped, so the shipped model {self.base_id()} reads."
                log.error("%s", problem)
                return Loaded(open_classifier(self.model_path, threads), problem)
            try:
                return Loaded(AdaptedClassifier(self._head(active, entry), self.model_path, threads=threads))
            except HardwareError as exc:
                problem = f"The taught model {active} cannot be used ({exc.message}), so the shipped model reads."
            except (OSError, ValueError, KeyError) as exc:
                problem = self._unloadable(active, exc)
            log.error("%s", problem)
        return Loaded(open_classifier(self.model_path, threads), problem)

    def _head(self, active: str, entry: Any) -> Any:
        """The taught model's head, as its entry in the list names it; OSError, ValueError or KeyError when it cannot be
        read (its entry damaged, its file missing, cut short or overwritten)."""
        from vision.adapt import Head

        if not isinstance(entry, dict) or not isinstance(entry.get("head"), str):
            raise ValueError("its entry in the list is damaged")
        return Head.from_bytes((self.folder / Path(entry["head"]).name).read_bytes())

    @staticmethod
    def _unloadable(active: str, exc: Exception) -> str:
        return f"The taught model {active} cannot be loaded ({exc.__class__.__name__}: {exc}), so the shipped model reads; roll back or teach the dice again."

    # --- changing ------------------------------------------------------------------------------

    def adopt(self, head_bytes: bytes, model_id: str, facts: dict[str, Any]) -> dict[str, Any]:
        """Make a taught model active; the one active now becomes the previous one."""
        data, _ = self._read()
        base = self.base_id()
        self.folder.mkdir(parents=True, exist_ok=True)
        head_name = f"{model_id}.npz"
        atomic_write(self.folder / head_name, head_bytes)
        data["models"][model_id] = {"head": head_name, "base": base, "adopted_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), **facts}
        data["previous"] = data.get("active") or base
        data["active"] = model_id
        atomic_write(self.file, json.dumps(data, indent=1, sort_keys=True))
        return self.status()

    def rollback(self) -> dict[str, Any]:
        """Make the previous model active again (and the active one previous, so a second rollback undoes the first)."""
        data, problem = self._read()
        if problem:
            raise RegistryError(problem)
        base = self.base_id()
        active = data.get("active") or base
        previous = data.get("previous")
        if not previous or previous == active:
            raise RegistryError("There is no previous model to go back to: the dice have not been taught yet.")
        if previous != base and previous not in data["models"]:
            raise RegistryError(f"The previous model {previous} is no longer kept; the active one stays.")
        data["active"], data["previous"] = previous, active
        self.folder.mkdir(parents=True, exist_ok=True)
        atomic_write(self.file, json.dumps(data, indent=1, sort_keys=True))
        return self.status()


def active_classifier(settings: Any, threads: int = 1) -> Loaded:
    """The classifier the settings' instance folder has active (``reader.model`` names another shipped file)."""
    model = settings.get("reader.model", "") or None
    config = getattr(settings, "path", None)
    if config is None:
        return Loaded(open_classifier(Path(model) if model else None, threads))
    return ModelRegistry(Path(config).parent, Path(model) if model else None).load(threads)


def open_classifier(path: Path | None = None, threads: int = 1) -> FaceClassifier:
    """A face model (default: the shipped one), opened once with its embedding as a second output where it ends in a
    fully connected layer, so the leaning cue and teaching read the same session as the faces (the same logits);
    a model without one is opened plainly (it reads faces; ``embedding_problem`` keeps why it cannot do the rest,
    in words, for the reader to say). A missing or unreadable file raises ``HardwareError`` as ``FaceClassifier``
    does."""
    try:
        return EmbeddingClassifier(path, threads)
    except HardwareError as exc:
        if exc.code != "bad_model":
            raise
        why = exc.message
    plain = FaceClassifier(path, threads=threads)
    plain.embedding_problem = why  # type: ignore[attr-defined]
    return plain
