"""The teaching subcommands: ``dataset export``, ``teach``, ``model status`` and ``model rollback``.

``dataset export --instance I OUT`` writes the instance's own dataset in the
``shared/datasets`` crops layout. ``teach DIR --instance I`` teaches from a
folder of labelled photos or crops (``--from-table``: from the instance's own
dataset) and prints before → after and whether it adopted. ``model status
[--json]`` names the active and previous models; ``model rollback`` makes the
previous one active again. A running companion picks the change up at its
next start (the page's buttons switch it at once).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from companion.core.errors import ElephantsBluffError


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("dataset", help="the table's own dataset of confirmed dice")
    actions = p.add_subparsers(dest="action", required=True, metavar="ACTION")
    q = actions.add_parser("export", help="write it in the shared/datasets crops layout")
    q.add_argument("out", type=Path, metavar="OUT", help="a new (or empty) folder to write to")
    q.add_argument("--instance", type=Path, default=Path("instance"))
    q.set_defaults(func=_dataset)
    q = actions.add_parser("status", help="how many crops of each face it holds, as JSON")
    q.add_argument("--instance", type=Path, default=Path("instance"))
    q.set_defaults(func=_dataset, out=None)

    p = sub.add_parser("teach", help="teach the reader the table's dice from labelled photos or crops (shared/datasets layout)")
    p.add_argument("folder", type=Path, nargs="?", metavar="DIR")
    p.add_argument("--from-table", action="store_true", help="teach from the instance's own dataset (the confirmed Bluffs) instead of DIR")
    p.add_argument("--instance", type=Path, default=Path("instance"))
    p.add_argument("--dry-run", action="store_true", help="measure, but adopt nothing")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=_teach)

    p = sub.add_parser("model", help="the face model in use: status, or roll back to the previous one")
    p.add_argument("action", choices=["status", "rollback"])
    p.add_argument("--instance", type=Path, default=Path("instance"))
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=_model)


def _settings(instance: Path):
    """The instance's settings; a folder that is not a table's instance (a mistyped ``--instance``) is refused, so
    nothing taught or rolled back lands where the table never reads it."""
    from companion.app.settings import CONFIG_NAME, Settings
    from companion.core.settings import require_instance

    require_instance(instance)
    return Settings.load(instance / CONFIG_NAME)


def _dataset(args: argparse.Namespace) -> int:
    from companion.app.teach.dataset import OwnerDataset

    settings = _settings(args.instance)
    ds = OwnerDataset(args.instance, max_crops=settings["teach.max_crops"])
    if args.action == "status":
        print(json.dumps(ds.summary()))
        return 0
    done = ds.export(args.out)
    print(f"Wrote {done['crops']} crops to {done['folder']} (crops/ and crops.csv: file,value,split; value = the face the camera saw).")
    for w in done["warnings"]:
        print(f"warning: {w}")
    return 0


def _teach(args: argparse.Namespace) -> int:
    from companion.app.teach.service import folder_examples, owner_examples, summary_lines, teach

    if args.from_table == (args.folder is not None):
        raise ElephantsBluffError("Give either a folder of labelled photos or crops (DIR), or --from-table.")
    settings = _settings(args.instance)
    examples = owner_examples(args.instance, settings) if args.from_table else folder_examples(args.folder)
    result = teach(args.instance, settings, examples, adopt=not args.dry_run)
    if args.json:
        print(json.dumps(result))
    else:
        print("\n".join(summary_lines(result) + ([RUNNING_READER] if result["adopted"] else [])))
    return 0


#: A command changes the instance's models; a companion already running on it follows within a few seconds
#: (``companion.app.teach.follow``).
RUNNING_READER = ("A companion already running on this instance switches to it within a few seconds; "
                  "its /api/health names the model that reads.")


def _model(args: argparse.Namespace) -> int:
    from vision.registry import ModelRegistry

    registry = ModelRegistry.for_settings(args.instance, _settings(args.instance))
    status = registry.rollback() if args.action == "rollback" else registry.status()
    if args.json:
        print(json.dumps(status))
        return 0
    if args.action == "rollback":
        print(f"Back to {status['active']} (the model before it, {status['previous']}, is kept: roll back again to return to it).")
        print(RUNNING_READER)
        return 0
    print(f"active: {status['active']}{' (taught on this table)' if status['taught'] else ' (shipped)'}")
    print(f"previous: {status['previous'] or 'none'}")
    if status["problem"]:
        print(f"problem: {status['problem']}")
    return 0
