"""Camera backends, one module each, chosen once from ``camera.backend``.

>>> from companion.core.settings import Settings
>>> build_frame_source(Settings.defaults()).name
'simulated'
"""

from __future__ import annotations

from typing import Any

import numpy as np

from companion.core.dice import STANDARD_OPPOSITE
from companion.core.errors import SettingsError
from companion.core.protocols import FrameSource


def build_frame_source(settings: Any) -> FrameSource:
    """The frame source ``camera.backend`` names, configured from the settings (not yet opened).

    Backends that need hardware are imported only when chosen, so a machine
    without picamera2 never imports it.
    """
    backend = settings.get("camera.backend", "simulated")
    if backend == "simulated":
        from vision.sources.simulated import SimulatedTableSource

        seed = settings.get("camera.simulated_seed", 0)
        return SimulatedTableSource(rng=np.random.default_rng(seed) if seed else None, view=settings.get("camera.camera_view", "below"),
                                    opposite_faces=settings.get("reader.opposite_faces", list(STANDARD_OPPOSITE)),
                                    width=settings.get("camera.width", 1280), height=settings.get("camera.height", 960))
    if backend == "files":
        from vision.sources.files import FilesSource

        return FilesSource(settings.get("camera.files_dir", ""))
    if backend == "webcam":
        from vision.sources.webcam import WebcamSource

        return WebcamSource(settings.get("camera.device", 0), settings.get("camera.width", 1280), settings.get("camera.height", 960))
    if backend == "picamera2":
        from vision.sources.picamera2 import Picamera2Source

        return Picamera2Source(settings.get("camera.width", 1280), settings.get("camera.height", 960), exposure_us=settings.get("camera.exposure_us", 0),
                               analogue_gain=settings.get("camera.analogue_gain", 0.0), colour_gains=settings.get("camera.colour_gains", []))
    raise SettingsError("config.toml", "camera.backend", f"must be one of picamera2, webcam, files, simulated, not {backend!r}")
