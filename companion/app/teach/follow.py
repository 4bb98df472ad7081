"""The running reader follows the instance's models when a terminal changes them.

``elephants-bluff teach DIR`` and ``elephants-bluff model rollback`` change the
instance's ``models/registry.json`` from a terminal, beside a companion that is
running on the same folder; the set-up page switches the running reader itself
(``switch_reader``). Without this, the running companion went on reading with
the model it started with until it was restarted. It looks at the registry
file every few seconds (a ``stat``: the file is replaced whole, by one rename,
so a new write is a new inode or time) and, when the active model named there
is not the one reading, switches the reader as the page does. The app starts
it (``create_app``), above the services it switches: ``check`` and the other
short commands need none.
"""

from __future__ import annotations

import logging
import threading
from typing import Any

from companion.app.teach.service import switch_reader
from vision.registry import ModelRegistry

log = logging.getLogger(__name__)

#: Seconds between two looks at the registry file: a terminal's change reads within this, and a look is one stat.
LOOK_EVERY_S = 5.0


def follow_models(services: Any) -> "ModelFollower | None":
    """A follower for ``services``' reader, or None where there is no face model to switch (a values-only source)."""
    if getattr(getattr(services.dice_source, "reader", None), "classifier", None) is None:
        return None
    return ModelFollower(services)


class ModelFollower:
    """Switches ``services``' reader to the registry's active model when the file changes (on its own thread)."""

    def __init__(self, services: Any, every_s: float = LOOK_EVERY_S) -> None:
        self.services = services
        self.every_s = every_s
        self._path = ModelRegistry(services.instance).file
        self._seen = self._stamp()
        self._looking = threading.Lock()  # the thread's looks and a caller's (tests, a clean stop) one at a time
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="model-follower", daemon=True)
        self._thread.start()

    def _stamp(self) -> tuple[int, int, int] | None:
        try:
            st = self._path.stat()
        except OSError:
            return None
        return st.st_ino, st.st_mtime_ns, st.st_size

    def look(self) -> bool:
        """One look: True when the reader was switched to another model."""
        with self._looking:
            return self._look()

    def _look(self) -> bool:
        stamp = self._stamp()
        if stamp == self._seen:
            return False
        self._seen = stamp
        active = ModelRegistry.for_settings(self.services.instance, self.services.settings).status()["active"]
        if active == self.services.model_id:
            return False  # the page's own switch, or a change that names the model already reading
        before = self.services.model_id
        switched = switch_reader(self.services)
        log.info("models: the registry names %s (changed outside this companion); the reader switched from %s to %s%s",
                 active, before, switched["model"], f" ({switched['problem']})" if switched["problem"] else "")
        return switched["model"] != before

    def _run(self) -> None:
        while not self._stop.wait(self.every_s):
            try:
                self.look()
            except Exception:  # the reader keeps its model; the next change is looked at again
                log.exception("models: the reader could not follow the registry")

    def close(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5)
