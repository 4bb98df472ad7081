"""Teaching the reader the table's own dice: the owner's dataset, adaptation, the model registry's commands.

Importing this package registers its settings (``teach.*``); ``companion.app.settings`` imports it.
"""

from __future__ import annotations

from typing import Any

from companion.core.settings import Setting, int_between, register_settings


def _folders(v: list[Any]) -> str | None:
    if not all(isinstance(x, str) and x.strip() for x in v):
        return "must be a list of folder paths in quotes"
    return None


TEACH_SETTINGS: list[Setting] = [
    Setting("teach.collect", True, "Keep the dice crops of every Bluff the table confirms or corrects, labelled with the agreed faces, in the instance's own dataset (owner-dataset/); false: keep none.", None),
    Setting("teach.max_crops", 3000, "The most dice crops the instance's own dataset keeps; the oldest go first.", int_between(30, 200_000)),
    Setting("teach.rendered_dice", 240, "How many of the renderer's own dice (the game's and other looks) a taught model must read no worse than the active one; made once in models/eval-rendered/.", int_between(30, 5000)),
    Setting("teach.eval_sets", [], "Folders of labelled crops (a crops.csv) that a taught model must read no worse than the active one before it is adopted, besides the renderer's own dice.", _folders),
]

register_settings(TEACH_SETTINGS)
