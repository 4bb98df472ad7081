"""Where a folder of labelled dice photos keeps them, and which face each of its label classes names.

Photos with YOLO labels come in three layouts, all read alike: the ``shared/datasets`` one (``images/`` beside
``labels/``, an optional ``split.json``); a folder per split inside those, as YOLO trainers write them
(``images/val/``, ``labels/val/``); and a folder per split each holding its own ``images/`` and ``labels/``, as
Roboflow and Ultralytics export a set (``train/``, ``valid/``, ``test/``, beside a ``data.yaml``). Exports call the
validation split ``valid``, so ``val`` finds it (``split_folder``).

A label's class is its face minus one, unless the set names its classes otherwise (an export's ``data.yaml``,
LabelImg's ``classes.txt``: ``NAME_FILES``): an export sorts its class names, so ``['five', 'four', 'one', ...]``
makes class 0 a five. Read with the wrong faces a set gives a
wrong figure without a word, so names that do not name the six faces are refused in words (``class_faces``).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

#: The folder names a split may go by: an export's ``valid`` is the ``val`` split.
SPLIT_SYNONYMS = (("val", "valid", "validation"),)
#: A face named in words.
FACE_WORDS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6}
#: The only other words a face's name may hold (``dice-3``, ``3 pips``, ``face_three``): a name with any other word
#: (``session 1``, ``run 3``) names something else.
DICE_WORDS = frozenset({"dice", "die", "face", "faces", "pip", "pips", "dot", "dots", "side", "value", "class", "label"})
#: Names that number the classes from 0 (``'0'`` to ``'5'``) say what the layout's own rule says: class + 1.
COUNTED_FROM_ZERO = ["0", "1", "2", "3", "4", "5"]


def split_folders(root: Path) -> dict[str, Path]:
    """The folders of ``root`` that each hold an ``images/`` and a ``labels/`` folder, by name (an export's splits).

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as d:
    ...     for f in ("valid/images", "valid/labels", "train/images", "train/labels", "notes/images"):
    ...         (Path(d) / f).mkdir(parents=True)
    ...     sorted(split_folders(Path(d)))
    ['train', 'valid']
    """
    if not root.is_dir():
        return {}
    return {p.name: p for p in sorted(root.iterdir()) if (p / "images").is_dir() and (p / "labels").is_dir()}


def split_folder_name(names: list[str], split: str) -> str | None:
    """Of the folder ``names``, the one holding ``split``: its own name, else a synonym (``valid`` for ``val``).

    >>> split_folder_name(["train", "valid", "test"], "val"), split_folder_name(["val"], "valid"), split_folder_name(["train"], "val")
    ('valid', 'val', None)
    """
    if split in names:
        return split
    for synonyms in SPLIT_SYNONYMS:
        if split in synonyms:
            return next((name for name in synonyms if name in names), None)
    return None


def split_called(folder: str) -> str:
    """The split a folder of that name holds: ``val`` for an export's ``valid``, else its own name.

    >>> split_called("valid"), split_called("train")
    ('val', 'train')
    """
    return next((synonyms[0] for synonyms in SPLIT_SYNONYMS if folder in synonyms), folder)


def data_yaml_names(text: str) -> list[str] | None:
    """The class names a ``data.yaml`` lists under its top-level ``names`` key, as a list (a flow list
    ``['1', '2']``, a block list of ``- name`` lines, or ``0: name`` lines, in the index order), or None where it
    has no such key. ``ValueError`` where the key is there but its value is none of those.

    >>> data_yaml_names("nc: 2\\nnames: ['one', \\"two\\"]\\n")
    ['one', 'two']
    >>> data_yaml_names("names:\\n  1: two\\n  0: one\\n"), data_yaml_names("names:\\n- a\\n- 'b c'\\n"), data_yaml_names("nc: 6")
    (['one', 'two'], ['a', 'b c'], None)
    """
    lines = text.splitlines()
    for i, line in enumerate(lines):
        key = re.match(r"names\s*:(.*)$", line)
        if not key:
            continue
        rest = _uncommented(key.group(1)).strip()
        if rest.startswith(("[", "{")):
            inner = _flow_inside("\n".join([key.group(1)] + lines[i + 1:]).lstrip())
            items = _flow_items(re.sub(r"[ \t]*\n[ \t]*", " ", inner))  # a line break in a flow folds to a space
            if rest[0] == "[":
                return [_unquoted(item) for item in items]
            return _by_index([tuple(item.split(":", 1)) for item in items])
        if rest:
            raise ValueError(f"its names are neither a list nor one name per line: {rest[:40]!r}")
        listed: list[str] = []
        indexed: list[tuple[str, ...]] = []
        for below in lines[i + 1:]:
            item = _uncommented(below).strip()
            if not item:
                continue
            if not below[0].isspace() and not below.startswith("-"):
                break  # the next top-level key
            if item.startswith("-"):
                listed.append(_unquoted(item[1:]))
            elif re.match(r"\d+\s*:", item):
                indexed.append(tuple(item.split(":", 1)))
            else:
                raise ValueError(f"its names hold a line that is not a name: {item[:40]!r}")
        if listed and indexed:
            raise ValueError("its names mix a list with numbered names")
        return listed or _by_index(indexed)
    return None


def face_named(name: str) -> int | None:
    """The face a class or folder name names: one number from 1 to 6 (``'3'``, ``'dice-3'``, ``'3 pips'``) or one
    word (``'three'``, ``'Three'``), with no other words than ``DICE_WORDS``; else None (``'dice'``, ``'d6'``, ``'0'``,
    ``'session 1'``).

    >>> [face_named(n) for n in ("3", "dice-3", "Three", "six pips", "dice", "d6", "0", "1 2", "session 1")]
    [3, 3, 3, 6, None, None, None, None, None]
    """
    text = name.strip().lower()
    numbers = re.findall(r"(?<![a-z])\d+", text)
    every_word = re.findall(r"[a-z]+", text)
    if any(w not in FACE_WORDS and w not in DICE_WORDS and not re.search(rf"{w}\d", text) for w in every_word):
        return None  # another word: the name of something else
    words = [w for w in every_word if w in FACE_WORDS]
    if len(numbers) == 1 and not words and re.search(r"[a-z]\d", text) is None:
        return int(numbers[0]) if 1 <= int(numbers[0]) <= 6 else None
    if not numbers and len(words) == 1:
        return FACE_WORDS[words[0]]
    return None


def class_faces(names: list[str]) -> list[int | None] | None:
    """The face each class names (None for a class naming none, such as ``'unknown'``), or None where the names say
    what the layout says without them: class + 1 (``'1'`` to ``'6'`` in order, or ``'0'`` to ``'5'``). ``ValueError``
    where the names do not name each face from 1 to 6 once: such a set's classes are not faces (a detector's one
    class ``'dice'``), or its faces are ambiguous.

    >>> class_faces(["five", "four", "one", "six", "three", "two"])
    [5, 4, 1, 6, 3, 2]
    >>> class_faces(["1", "2", "3", "4", "5", "6"]), class_faces(["0", "1", "2", "3", "4", "5"])
    (None, None)
    >>> class_faces(["dice"])
    Traceback (most recent call last):
    ...
    ValueError: its class names ('dice') do not name the faces 1 to 6 once each, so which face a box shows cannot be told
    """
    if [n.strip() for n in names] == COUNTED_FROM_ZERO:
        return None
    faces = [face_named(n) for n in names]
    if sorted(f for f in faces if f is not None) != [1, 2, 3, 4, 5, 6]:
        shown = ", ".join(repr(n) for n in names[:8]) + (", ..." if len(names) > 8 else "")
        raise ValueError(f"its class names ({shown}) do not name the faces 1 to 6 once each, so which face a box shows cannot be told")
    return None if faces[:6] == [1, 2, 3, 4, 5, 6] and len(faces) == 6 else faces


def face_of_class(c: int, classes: tuple[list[str], list[int | None]] | None) -> int | None:
    """The face a label's class ``c`` stands for: ``c + 1`` for a set that names no classes (``set_class_faces``
    None), else the face its name names; None where it stands for none.

    >>> face_of_class(2, None), face_of_class(6, None), face_of_class(0, (["five", "x"], [5, None])), face_of_class(1, (["five", "x"], [5, None]))
    (3, None, 5, None)
    """
    if classes is None:
        return c + 1 if 0 <= c <= 5 else None
    faces = classes[1]
    return faces[c] if 0 <= c < len(faces) else None


#: Where a set names its classes, first found first: an export's ``data.yaml``; LabelImg's ``classes.txt`` (in
#: ``labels/`` or beside it) and darknet's ``obj.names``, one name per line.
NAME_FILES = ("data.yaml", "data.yml", "labels/classes.txt", "classes.txt", "obj.names")


def set_class_faces(root: Path) -> tuple[list[str], list[int | None]] | None:
    """The class names of the set at ``root`` (the first of its ``NAME_FILES``) and the face each names, or None
    where the set has none of those files, names no classes there, or names them as its layout counts them
    (class + 1). ``ValueError`` with a sentence naming the file where its names cannot be read or are not the faces.

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as d:
    ...     _ = (Path(d) / "classes.txt").write_text("six\\nfive\\nfour\\nthree\\ntwo\\none\\n")
    ...     set_class_faces(Path(d))[1]
    [6, 5, 4, 3, 2, 1]
    """
    path = next((root / name for name in NAME_FILES if (root / name).is_file()), None)
    if path is None:
        return None
    try:
        text = path.read_text(encoding="utf-8-sig")
        if path.suffix in (".yaml", ".yml"):
            names = data_yaml_names(text)
        else:
            names = [line.strip() for line in text.splitlines() if line.strip()] or None
        faces = class_faces(names) if names is not None else None
    except UnicodeDecodeError:
        raise ValueError(f"{path} is not a text file.") from None
    except ValueError as exc:
        raise ValueError(f"{path}: {exc}.") from None
    return (names, faces) if names is not None and faces is not None else None


def _uncommented(text: str) -> str:
    """``text`` (one line) without a YAML comment: a ``#`` after a space, outside quotes."""
    quote, i = "", 0
    while i < len(text):
        step = _quoted_step(text, i, quote, lambda: i == 0 or text[i - 1] in " \t[{,:-")  # a quote opens a scalar at its start
        if step:
            quote, i = step[0], i + step[1]
            continue
        if text[i] == "#" and (i == 0 or text[i - 1].isspace()):
            return text[:i]
        i += 1
    return text


def _quoted_step(text: str, i: int, quote: str, opens: Callable[[], bool]) -> tuple[str, int] | None:
    """The one quote machine of the scanners below: where ``text[i]`` lies inside a ``quote``-quoted scalar, or is a
    quote that ``opens()`` one, the quote after it and how many characters it takes (an escaped pair is two); None
    where it lies outside quotes, for the scanner to read.

    >>> _quoted_step("'a''b'", 2, "'", lambda: False), _quoted_step("a#", 1, "", lambda: True)
    (("'", 2), None)
    """
    if quote:
        return (quote, 2) if _escaped_quote(text, i, quote) else ("" if text[i] == quote else quote, 1)
    return (text[i], 1) if text[i] in "'\"" and opens() else None


def _escaped_quote(text: str, i: int, quote: str) -> bool:
    """Whether ``text[i]`` begins an escaped character inside a ``quote``-quoted scalar (``\\"`` or ``''``)."""
    return text[i] == "\\" and quote == '"' or text[i] == "'" == quote and text[i + 1:i + 2] == "'"


def _at_a_start(item: str) -> bool:
    """Whether a quote after ``item`` (a flow item so far) opens a quoted scalar: only at an item's or a value's start;
    inside a plain scalar (``a 'b``) a quote is a character."""
    return not item.strip() or item.rstrip().endswith(":")


def _flow_inside(text: str) -> str:
    """The inside of the flow collection ``text`` opens with (``[`` or ``{``), up to its closing bracket, its comments
    left out; ``ValueError`` where it never closes."""
    close = "]" if text[0] == "[" else "}"
    out: list[str] = []
    quote, i = "", 1
    while i < len(text):
        step = _quoted_step(text, i, quote, lambda: _at_a_start("".join(out).rsplit(",", 1)[-1]))
        if step:
            out.append(text[i:i + step[1]])
            quote, i = step[0], i + step[1]
            continue
        if text[i] == "#" and text[i - 1].isspace():
            end = text.find("\n", i)
            i = len(text) if end < 0 else end
            continue
        if text[i] == close:
            return "".join(out)
        out.append(text[i])
        i += 1
    raise ValueError("its names list is never closed")


def _flow_items(inner: str) -> list[str]:
    """The comma-separated items of a YAML flow list's inside, commas in quotes kept."""
    items: list[str] = []
    quote, current, i = "", "", 0
    while i < len(inner):
        step = _quoted_step(inner, i, quote, lambda: _at_a_start(current))
        if step:
            current += inner[i:i + step[1]]
            quote, i = step[0], i + step[1]
            continue
        if inner[i] == ",":
            items.append(current)
            current = ""
        else:
            current += inner[i]
        i += 1
    items.append(current)
    return [item.strip() for item in items if item.strip()]


def _unquoted(item: str) -> str:
    item = item.strip()
    if len(item) >= 2 and item[0] == item[-1] and item[0] in "'\"":
        inner = item[1:-1]
        return inner.replace("''", "'") if item[0] == "'" else inner.replace('\\"', '"')
    return item


def _by_index(pairs: list[tuple[str, ...]]) -> list[str]:
    """Names given as ``index: name`` pairs, in the indices' order; ``ValueError`` where the indices are not 0 to N-1."""
    try:
        named = {int(k.strip()): _unquoted(v) for k, v in pairs}
    except ValueError:
        raise ValueError("its numbered names are not numbered 0, 1, 2, ...") from None
    if sorted(named) != list(range(len(named))):
        raise ValueError("its numbered names are not numbered 0, 1, 2, ...")
    return [named[k] for k in range(len(named))]
