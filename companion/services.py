"""Builds the running companion from its settings: store, dice source, referee, table.

This is the one place that knows which camera, reader and GPIO backend are in
use; the referee and the web layer only see the small interfaces.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from companion.dice import DiceSource, ValuesDiceSource
from companion.errors import HardwareError
from companion.referee import Referee
from companion.settings import Settings
from companion.store import GameStore

log = logging.getLogger(__name__)


@dataclass
class Services:
    """Everything a request may need, built once per app."""

    settings: Settings
    instance: Path
    referee: Referee
    dice_source: DiceSource
    simulate: bool
    sim_table: Any = None  # has set_next_values(values) in simulation
    table: Any = None  # firmware TableController (buttons and lights), None without GPIO
    gpio_name: str = "none"
    model_id: str = "none"
    problems: list[str] = field(default_factory=list)  # start-up problems shown by /api/health

    def close(self) -> None:
        for part in (self.table, self.dice_source):
            close = getattr(part, "close", None)
            if close is not None:
                try:
                    close()
                except Exception:  # closing must not stop the others from closing
                    log.exception("closing %r failed", part)
        self.referee.store.close()


def build_services(instance: Path, settings: Settings, *, simulate: bool) -> Services:
    instance.mkdir(parents=True, exist_ok=True)
    store = GameStore(instance / settings["storage.database"])
    frames_dir = instance / settings["storage.frames_dir"]
    dice_source: DiceSource = ValuesDiceSource()
    referee = Referee(store, dice_source, frames_dir=frames_dir, default_path_length=settings["game.path_length"])
    problems: list[str] = []
    table = _build_table(settings, referee, dice_source, simulate, problems)
    if table is not None:
        table.add_warning_listener(lambda warning: referee.notify("warning", warning))
    return Services(
        settings=settings,
        instance=instance,
        referee=referee,
        dice_source=dice_source,
        simulate=simulate,
        sim_table=dice_source if simulate else None,
        table=table,
        gpio_name=table.pin_factory_name if table is not None else "none",
        problems=problems,
    )


def _build_table(settings: Settings, referee: Referee, capture: Any, simulate: bool, problems: list[str]) -> Any:
    """The buttons and lights; a bad pin map stops start-up, missing GPIO hardware does not."""
    from firmware.pins import check_pin_map
    from firmware.table import build_table

    check_pin_map(settings)  # SettingsError naming the key: refuse to start
    try:
        return build_table(settings, referee, simulate=simulate, capture=capture)
    except HardwareError as exc:
        log.error("no table buttons: %s", exc.message)
        problems.append(exc.message)
        return None
