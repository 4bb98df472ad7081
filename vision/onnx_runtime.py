"""onnxruntime for the reader, loaded with Microsoft's usage telemetry off.

Since version 1.2x the PyPI builds of onnxruntime for Linux and macOS report usage to Microsoft
(1DS: a ProcessInfo event with the CPU, the OS, the memory and whether it runs in a container, then
session and model events), keep a device identifier and an offline queue of events under
``~/.cache/Microsoft/DeveloperTools/.onnxruntime`` (on the Pi, the instance folder: the service
user's home), and upload them when the network allows. A game box on a family table has no business
doing that, nor writing that queue to its SD card. ``ORT_DISABLE_TELEMETRY=1`` turns all of it off
(no identifier, no queue, no upload) only when it is set before onnxruntime is first imported in
the process, so every part of the companion takes onnxruntime from here. An owner who sets the
variable otherwise is obeyed. The Pi's unit sets it too (``deploy/elephants-bluff.service``).
"""

from __future__ import annotations

import os
from types import ModuleType

#: The variable onnxruntime reads once, when it is first imported, and the value that turns its telemetry off.
TELEMETRY_SWITCH, OFF = "ORT_DISABLE_TELEMETRY", "1"


def load_onnxruntime() -> ModuleType:
    """The ``onnxruntime`` module, its telemetry switched off unless the environment says otherwise."""
    os.environ.setdefault(TELEMETRY_SWITCH, OFF)
    import onnxruntime

    return onnxruntime
