"""Which model files the companion ships, and whether a model file is whole.

``models/shipped.json`` names the one file each part reads (the detector, the face model, the second opinion). The
choice is written down rather than taken from the folder: with two ``dice-faces-*.onnx`` beside each other (a candidate
copied in to try, a withdrawn one an update left behind) the part read whichever name sorted last, and the ids are
hashes, so that was chance.

A model named by its id (``dice-faces-<the first 12 hex digits of its sha256>.onnx``, as every shipped and trained
model is) must hash to that id. A file a card fault or a copy cut short has changed may still load, and a face model
with changed weights reads dice wrongly and sure of it: the worst failure this product has. It is refused at load, in
words, and the reader falls back as it does for any model it cannot load.
"""

from __future__ import annotations

import hashlib
import json
import re
from importlib import resources
from pathlib import Path

from companion.core.errors import HardwareError
from companion.core.files import atomic_write

#: the parts that read a shipped model, with the start of their files' names
PARTS = {"detector": "dice-detector-", "faces": "dice-faces-", "second_opinion": "second-opinion-"}
MANIFEST = "shipped.json"
#: a model file named by its id
ID_NAME = re.compile(r"^(?P<kind>[a-z-]+?)-(?P<id>[0-9a-f]{12})\.onnx$")


def models_folder() -> Path | None:
    """The ``models`` package's folder, or None where it is not installed."""
    try:
        return Path(str(resources.files("models")))
    except (ModuleNotFoundError, FileNotFoundError):
        return None


def shipped(part: str) -> Path | None:
    """The model file ``models/shipped.json`` names for ``part`` (one of ``PARTS``); None when it names none or the
    file is not there (the caller says which is missing, in its own words)."""
    if part not in PARTS:
        raise ValueError(f"no shipped model part {part!r}; the parts are {', '.join(PARTS)}")
    folder = models_folder()
    if folder is None:
        return None
    try:
        named = json.loads((folder / MANIFEST).read_text(encoding="utf-8")).get(part)
    except (OSError, ValueError, AttributeError):
        return None
    if not isinstance(named, str) or Path(named).name != named or not named.startswith(PARTS[part]):
        return None
    path = folder / named
    return path if path.is_file() else None


def file_id(data: bytes) -> str:
    """The first 12 hex digits of ``data``'s sha256: a model's id."""
    return hashlib.sha256(data).hexdigest()[:12]


def read_whole(path: Path, what: str, fix: str) -> tuple[bytes, str]:
    """The model file at ``path`` and its id (``file_id``), every loader's one read of it; ``HardwareError`` in words
    where it cannot be read (``no_model``) or is named by an id its contents do not hash to (``bad_model``).

    ``what`` names the model in the message ("dice model"); ``fix`` says what to do (reinstall, or the setting that
    names the file). A file not named by an id (an owner's own model, named as they like) has nothing to be checked by.
    """
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise HardwareError(f"The {what} {path.name} cannot be read ({exc.strerror or exc}); {fix}.", code="no_model") from None
    found = file_id(data)
    named = ID_NAME.match(path.name)
    if named is None or found == named.group("id"):
        return data, found
    folder = models_folder()
    if folder is not None and path.resolve().parent == folder.resolve():
        raise HardwareError(f"The {what} {path.name} is damaged: its contents are no longer those of the file of that name "
                            f"(a card fault, or a copy cut short), and a damaged model can read dice wrongly; {fix}.", code="bad_model")
    # a file of the owner's choosing: damaged, or named by hand with 12 hex digits that are no hash (a date, say)
    raise HardwareError(f"The {what} {path.name} does not hash to the id in its name (it hashes to {found}): a damaged "
                        f"copy reads dice wrongly, so it is not used; if you named it yourself, rename it without those 12 "
                        f"digits; otherwise copy it again, or {fix}.", code="bad_model")


def ship(path: Path, part: str) -> bool:
    """Name ``path`` (a model just written into a models folder) as ``part``'s in that folder's ``shipped.json`` and
    remove the file of that part it replaces; a folder without a ``shipped.json`` (a candidate's) is left as it is.
    True where it shipped. Training's exports call it, so a model exported into ``models/`` is the one read."""
    manifest = path.parent / MANIFEST
    if not manifest.is_file():
        return False
    named = json.loads(manifest.read_text(encoding="utf-8"))
    old = named.get(part)
    named[part] = path.name
    atomic_write(manifest, json.dumps(named, indent=2, sort_keys=True) + "\n")
    if isinstance(old, str) and old != path.name and Path(old).name == old:
        (path.parent / old).unlink(missing_ok=True)
    return True


def main(argv: list[str] | None = None) -> int:
    """``python -m vision.model_files ship PATH PART``: name a model copied into ``models/`` as ``PART``'s (the
    Makefile's recipes that copy a model in call it)."""
    import argparse
    import sys

    ap = argparse.ArgumentParser(prog="python -m vision.model_files", description=main.__doc__)
    ap.add_argument("action", choices=["ship"])
    ap.add_argument("path", type=Path, help="the model file, in a models folder that has a shipped.json")
    ap.add_argument("part", choices=sorted(PARTS))
    args = ap.parse_args(argv)
    if not args.path.is_file() or not args.path.name.startswith(PARTS[args.part]):
        print(f"model_files: {args.path} is no {PARTS[args.part]}*.onnx file", file=sys.stderr)
        return 2
    if not ship(args.path, args.part):
        print(f"model_files: {args.path.parent} holds no {MANIFEST}: nothing was shipped", file=sys.stderr)
        return 1
    print(f"{args.path.name} is the shipped {args.part.replace('_', ' ')} model ({args.path.parent / MANIFEST})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
