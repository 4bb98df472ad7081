"""The camera's frames with the tray's LED ring lit, for ``calibrate`` run from a terminal.

What ``calibrate`` locks (exposure, gain, white balance) and keeps (the empty tray, a die's size, the lens's bend)
must be the tray as a Bluff sees it: lit by the ring. The companion lights it at each capture and for its set-up
page (``CaptureLoop.set_up_frame``); a command run from a terminal has no companion behind it, so this opens the
ring's pin itself for as long as the command runs, and lets the camera settle under the light as a capture does.

Where it cannot (``gpio.pin_factory`` ``none``, the simulated ``mock`` pins that light nothing, or pins a running
companion holds), the frames are the room's light and ``unlit_because`` says why, so ``calibrate`` can say so
rather than lock a picture that is not what play sees.
"""

from __future__ import annotations

import logging
import os
from typing import Any, Mapping

import numpy as np

from companion.core.errors import HardwareError
from companion.core.protocols import FrameSource
from firmware.capture import CaptureLoop
from firmware.devices import TableDevices, make_pin_factory
from firmware.pins import check_pin_map, pin_factory_name

log = logging.getLogger(__name__)


class LitTraySource(FrameSource):
    """``frame_source`` whose frames are grabbed with the tray's LED ring lit (``capture.light_level``).

    The ring is lit from ``open`` to ``close``; every other attribute (``metadata``, a simulated tray's
    ``set_next_values``) is the wrapped source's.

    >>> from companion.core.settings import Settings
    >>> import firmware.settings  # noqa: F401 - registers the gpio and capture settings
    >>> class Tray(FrameSource):
    ...     name = "still tray"
    ...     def grab(self):
    ...         return np.full((48, 64, 3), 90, np.uint8)
    >>> lit = LitTraySource(Settings.defaults(), Tray(), environ={})
    >>> lit.open(); lit.grab().shape, lit.lights_tray, lit.unlit_because
    ((48, 64, 3), False, 'gpio.pin_factory is mock, the simulated pins: there is no ring to light')
    >>> lit.close()
    """

    def __init__(self, settings: Any, frame_source: FrameSource, *, environ: Mapping[str, str] | None = None, pin_factory: Any = None, **loop_kw: Any) -> None:
        self.frame_source = frame_source
        self.settings = settings
        self.name = getattr(frame_source, "name", "unknown")
        self._environ = os.environ if environ is None else environ
        self._pin_factory = pin_factory
        self._loop_kw = loop_kw
        self._devices: TableDevices | None = None
        self._loop: CaptureLoop | None = None
        #: True once the ring's pin is open and lit for the frames
        self.lights_tray = False
        #: why the frames are by the room's light, or None while the ring lights them
        self.unlit_because: str | None = None

    def __getattr__(self, attr: str) -> Any:
        # only called for what this class lacks: the wrapped camera's own extras (``metadata`` for the locks)
        if attr.startswith("__") or "frame_source" not in self.__dict__:
            raise AttributeError(attr)
        return getattr(self.__dict__["frame_source"], attr)

    def open(self) -> None:
        if self._loop is not None:
            return
        ring = self._open_ring()
        loop = CaptureLoop.from_settings(self.settings, self.frame_source, None, ring, **self._loop_kw)
        try:
            loop.open()
        except BaseException:
            self._close_ring()
            raise
        self._loop = loop

    def grab(self) -> np.ndarray:
        """A frame with the ring lit and the picture settled under it (the last one, if the tray never stills)."""
        if self._loop is None:
            self.open()
        assert self._loop is not None
        return self._loop.set_up_frame()

    def close(self) -> None:
        loop, self._loop = self._loop, None
        try:
            if loop is not None:
                loop.close()  # the ring off, the camera released
            else:
                self.frame_source.close()
        finally:
            self._close_ring()

    def health(self) -> str:
        return self.frame_source.health()

    def _open_ring(self) -> Any:
        name = pin_factory_name(self.settings, self._environ)
        if self._pin_factory is None and name in ("none", "mock"):
            self.unlit_because = {
                "none": "gpio.pin_factory is none: this table has no pins to light it",
                "mock": "gpio.pin_factory is mock, the simulated pins: there is no ring to light",
            }[name]
            return None
        try:
            factory = self._pin_factory if self._pin_factory is not None else make_pin_factory(name)
            self._devices = TableDevices.open(check_pin_map(self.settings), factory)
        except HardwareError as exc:
            self.unlit_because = (f"its pin could not be opened ({exc.message}); a companion running on this table holds "
                                  "it: stop it first (sudo systemctl stop elephants-bluff)")
            return None
        self.lights_tray = True
        return self._devices.tray_light

    def _close_ring(self) -> None:
        devices, self._devices = self._devices, None
        if devices is not None:
            try:
                devices.close()
            except Exception:  # the frames are taken; a pin that will not close must not hide them
                log.exception("could not close the table's pins")
