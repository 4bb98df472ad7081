"""The capture loop: how a Bluff gets the dice from the camera.

On ``capture()``: the tray's LED ring on → frames until the dice lie still (or
a time-out) → the still frame → ring off (always, even when something failed)
→ the reader → a ``Capture`` with the frame and the annotated frame as JPEG.

It is a ``companion.core.capture.DiceSource``: it never raises for a camera problem.
A camera that fails, hangs, gives a broken frame, or dice that never settle,
all come back as ``Capture(reading=None, problem=<sentence>)`` and the referee
goes to ``confirm`` (RULES.md R14), so a game never hangs on the hardware.
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Any, Callable

import cv2
import numpy as np

from companion.core.capture import Capture
from companion.core.errors import HardwareError, NotFound
from companion.core.reading import Reading

log = logging.getLogger(__name__)

#: Frames are shrunk to this width before comparing, so sensor noise averages out
#: and the comparison costs little on a Pi.
_COMPARE_WIDTH = 160


def frame_change(a: np.ndarray, b: np.ndarray) -> float:
    """Mean absolute grey-level difference (0-255) between two frames, after shrinking both.

    >>> a = np.zeros((120, 160, 3), np.uint8)
    >>> frame_change(a, a), frame_change(a, a + 10)
    (0.0, 10.0)
    """
    ga, gb = _small_grey(a), _small_grey(b)
    if ga.shape != gb.shape:
        return float("inf")
    return float(cv2.absdiff(ga, gb).mean())


def _small_grey(frame: np.ndarray) -> np.ndarray:
    # Take every n-th pixel first: converting and averaging a full 2304-pixel frame
    # costs tens of milliseconds on a Pi, several times per capture (bench/firmware.py).
    step = max(1, frame.shape[1] // (2 * _COMPARE_WIDTH))
    grey = cv2.cvtColor(np.ascontiguousarray(frame[::step, ::step]), cv2.COLOR_BGR2GRAY)
    h, w = grey.shape
    if w > _COMPARE_WIDTH:
        grey = cv2.resize(grey, (_COMPARE_WIDTH, max(1, round(h * _COMPARE_WIDTH / w))), interpolation=cv2.INTER_AREA)
    return grey


#: How long the ring stays lit after the camera set-up's last frame (its preview asks about once a second)
SET_UP_LIGHT_HOLD_S = 5.0


class _NotStill(Exception):
    def __init__(self, last: np.ndarray | None) -> None:
        super().__init__("not still")
        self.last = last


class CaptureLoop:
    """A ``DiceSource`` made of a ``FrameSource``, a ``DiceReader`` and the tray's light.

    ``tray_light`` is anything with a ``value`` (gpiozero's ``PWMLED``), or None
    when there is no light to switch (a webcam on the bench); it may be attached
    later with ``attach_light`` because the table's devices are built after the
    referee that needs this loop.

    >>> from companion.core.protocols import FrameSource
    >>> class Tray(FrameSource):
    ...     name = "still tray"
    ...     def grab(self):
    ...         return np.full((48, 64, 3), 90, np.uint8)
    >>> class Reader:
    ...     model_id = "demo"
    ...     def read(self, frame):
    ...         return Reading("uncertain", (), reason="no dice in this demo")
    ...     def annotate(self, frame, reading):
    ...         return frame
    >>> loop = CaptureLoop(Tray(), Reader(), sleep=lambda s: None)
    >>> capture = loop.capture()
    >>> capture.reading.reason, capture.frame_jpeg[:2]
    ('no dice in this demo', b'\\xff\\xd8')
    """

    def __init__(
        self,
        frame_source: Any,
        reader: Any,
        tray_light: Any = None,
        *,
        light_level: float = 0.8,
        still_timeout_s: float = 3.0,
        still_threshold: float = 2.0,
        still_frames: int = 3,
        grab_timeout_s: float | None = 5.0,
        jpeg_quality: int = 90,
        frame_interval_s: float = 0.03,
        wait_for_still: bool = True,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        if not 0 < light_level <= 1:
            raise ValueError(f"light_level must be above 0 and at most 1, not {light_level}")
        if still_frames < 1:
            raise ValueError(f"still_frames must be at least 1, not {still_frames}")
        self.frame_source = frame_source
        self.reader = reader
        self.tray_light = tray_light
        self.light_level = float(light_level)
        self.still_timeout_s = float(still_timeout_s)
        self.still_threshold = float(still_threshold)
        self.still_frames = int(still_frames)
        self.grab_timeout_s = grab_timeout_s
        self.jpeg_quality = int(jpeg_quality)
        self.frame_interval_s = frame_interval_s
        #: False: one frame, no waiting (a source whose every frame is a new scene, or a still image)
        self.wait_for_still = bool(wait_for_still)
        self._clock = clock
        self._sleep = sleep
        self._lock = threading.Lock()
        self._hung: threading.Event | None = None  # set when a grab that timed out finally returns
        self._busy_listeners: list[Callable[[bool], None]] = []
        self._opened = False
        self.busy = False
        #: the (height, width) of the last frame the camera gave, None before the first (``/api/health`` checks the
        #: reader's calibration against it)
        self.frame_size: tuple[int, int] | None = None
        self._set_up_lit_until: float | None = None  # the ring held lit for the camera set-up (``set_up_frame``)
        self._set_up_timer: threading.Timer | None = None

    @classmethod
    def from_settings(cls, settings: Any, frame_source: Any, reader: Any, tray_light: Any = None, **kw: Any) -> "CaptureLoop":
        """The loop with the ``capture.*`` settings in force."""
        return cls(
            frame_source,
            reader,
            tray_light,
            light_level=settings["capture.light_level"],
            still_timeout_s=settings["capture.still_timeout_s"],
            still_threshold=settings["capture.still_threshold"],
            still_frames=int(settings["capture.still_frames"]),
            grab_timeout_s=settings["capture.grab_timeout_s"],
            jpeg_quality=int(settings["capture.jpeg_quality"]),
            **kw,
        )

    @property
    def name(self) -> str:
        """The camera backend's name, for ``/api/health``."""
        return getattr(self.frame_source, "name", "unknown")

    def add_busy_listener(self, fn: Callable[[bool], None]) -> None:
        """``fn(True)`` when a capture starts and ``fn(False)`` when it ends (the table's status light)."""
        self._busy_listeners.append(fn)

    def remove_busy_listener(self, fn: Callable[[bool], None]) -> None:
        if fn in self._busy_listeners:
            self._busy_listeners.remove(fn)

    def _set_busy(self, busy: bool) -> None:
        self.busy = busy
        for fn in list(self._busy_listeners):
            try:
                fn(busy)
            except Exception:  # a light must never break a capture
                log.exception("a capture busy listener failed")

    def attach_light(self, tray_light: Any) -> None:
        """Use ``tray_light`` (a ``PWMLED``) from the next capture on; None detaches it."""
        with self._lock:
            self.tray_light = tray_light

    # -- the DiceSource protocol -------------------------------------------------

    def capture(self) -> Capture:
        """Light, settle, grab, read. Never raises for the camera: see the module docstring."""
        with self._lock:
            self._set_busy(True)
            try:
                try:
                    frame = self._still_frame()
                    taken = getattr(self.frame_source, "dice_taken", None)
                    if taken is not None:
                        taken()  # a simulated tray rolls anew after a Bluff; a look for the lid's check takes nothing
                except _NotStill as exc:
                    return Capture(
                        reading=None,
                        frame_jpeg=self._jpeg_or_none(exc.last),
                        problem=f"The dice did not lie still within {self.still_timeout_s:g} seconds, so the camera did not read them: type them on the tablet.",
                        problem_codes=({"code": "dice_not_still", "seconds": f"{self.still_timeout_s:g}"},),
                    )
                except HardwareError as exc:
                    log.warning("capture failed: %s", exc.message)
                    return Capture(reading=None, problem=f"{exc.message} Type the dice on the tablet.", problem_codes=({"code": "camera_failed", "detail": exc.message},))
                except Exception as exc:  # a DiceSource never raises: whatever broke, the game goes to confirm
                    log.exception("capture failed unexpectedly")
                    return Capture(reading=None, problem=f"The camera failed ({exc}). Type the dice on the tablet.", problem_codes=({"code": "camera_failed", "detail": str(exc)},))
                return self._read(frame)
            finally:
                self._set_busy(False)

    def health(self) -> str:
        """"ok", or what is wrong with the camera."""
        if self._hung is not None and not self._hung.is_set():
            return f"The camera has not answered for more than {self.grab_timeout_s:g} seconds; check its cable and restart the companion."
        try:
            return self.frame_source.health()
        except Exception as exc:
            return f"The camera cannot report its health ({exc})."

    def set_next_values(self, values: list[int]) -> None:
        """Pass the next top faces to a simulated table (``POST /api/sim/dice``); ``NotFound`` for a real camera."""
        setter = getattr(self.frame_source, "set_next_values", None)
        if setter is None:
            raise NotFound(f"The {self.name} camera shows real dice; only the simulated table takes values.")
        setter(values)

    def open(self) -> None:
        """Open the camera now (at start-up), so a missing camera shows at once; raises ``HardwareError``.

        Optional: a capture opens it itself when needed, and reports a failure as a problem.
        """
        self.frame_source.open()
        self._opened = True

    def close(self) -> None:
        """Switch the light off and release the camera."""
        timer, self._set_up_timer, self._set_up_lit_until = self._set_up_timer, None, None
        if timer is not None:
            timer.cancel()
        self._light(0.0)
        self._opened = False
        self.frame_source.close()

    # -- the camera set-up's frames ---------------------------------------------------

    def set_up_frame(self, hold_s: float = SET_UP_LIGHT_HOLD_S) -> np.ndarray:
        """A frame of the tray as a Bluff sees it, for the camera set-up (its preview, its light check, the empty
        tray, the die's size, the lens, a die's face): the ring lit, as at a capture, so what is measured and kept is
        what play sees (the camera alone would show the tray by the room's light). The ring stays lit while the
        set-up keeps asking, until ``hold_s`` after the last frame, so the page's preview does not flash it; when it
        was off, frames are taken until the picture is still, as at a capture, so the camera's exposure has followed
        the light."""
        with self._lock:
            if not self._opened:
                self.open()
            was_lit = self._set_up_lit_until is not None
            self._light(self.light_level)
            self._set_up_lit_until = self._clock() + hold_s
            if self._set_up_timer is None:
                self._arm_set_up_timer(hold_s)
            try:
                return self._grab() if was_lit or not self.wait_for_still else self._settled()
            except _NotStill as still:  # a hand over the tray: the last frame, as the set-up's own checks judge it
                if still.last is None:
                    raise
                return still.last

    def _arm_set_up_timer(self, after_s: float) -> None:
        timer = threading.Timer(max(0.01, after_s), self._end_set_up_light)
        timer.daemon = True
        self._set_up_timer = timer
        timer.start()

    def _end_set_up_light(self) -> None:
        """The set-up stopped asking for ``hold_s``: the ring off (re-armed while it still asks)."""
        with self._lock:
            self._set_up_timer = None
            until = self._set_up_lit_until
            if until is None:
                return
            left = until - self._clock()
            if left > 0:
                self._arm_set_up_timer(left)
                return
            self._set_up_lit_until = None
            self._light(0.0)

    # -- private reading for the lid's peek check (RULES.md R6, R13) -------------

    def snapshot(self) -> Reading | None:
        """Read the dice for the table's private peek check; None when they cannot be read.

        The result goes to ``firmware.peek.PeekWatch`` only: it is never saved,
        logged with its values, or shown (RULES.md R13).
        """
        with self._lock:
            self._set_busy(True)
            try:
                frame = self._still_frame()
                reading = self.reader.read(frame)
            except _NotStill:
                return None
            except Exception as exc:  # the check is advisory: a failure means "unknown", never a crash
                log.warning("peek check could not read the tray: %s", getattr(exc, "message", exc))
                return None
            finally:
                self._set_busy(False)
        return reading

    # -- the steps ---------------------------------------------------------------

    def _still_frame(self) -> np.ndarray:
        """Light on, grab until ``still_frames`` comparisons in a row are still, light off."""
        if not self._opened:
            self.open()  # a HardwareError here becomes the capture's problem
        self._light(self.light_level)
        self._set_up_lit_until = None  # a capture ends the set-up's hold on the ring: it goes off after this frame
        try:
            return self._settled() if self.wait_for_still else self._grab()
        finally:
            self._light(0.0)

    def _settled(self) -> np.ndarray:
        """Grab until ``still_frames`` comparisons in a row are still; ``_NotStill`` with the last frame at the
        time-out."""
        deadline = self._clock() + self.still_timeout_s
        previous = self._grab()
        calm = 0
        while True:
            if self._clock() >= deadline:
                raise _NotStill(previous)
            self._sleep(self.frame_interval_s)
            frame = self._grab()
            calm = calm + 1 if frame_change(previous, frame) <= self.still_threshold else 0
            previous = frame
            if calm >= self.still_frames:
                return frame

    def _light(self, level: float) -> None:
        light = self.tray_light
        if light is None:
            return
        try:
            light.value = level
        except Exception:  # a light that fails must not stop the capture, nor leave it on
            log.exception("could not set the tray light to %s", level)

    def _grab(self) -> np.ndarray:
        frame = self._grab_guarded() if self.grab_timeout_s else self.frame_source.grab()
        if not isinstance(frame, np.ndarray) or frame.dtype != np.uint8 or frame.ndim != 3 or frame.shape[2] != 3 or frame.size == 0:
            shape = getattr(frame, "shape", type(frame).__name__)
            raise HardwareError(f"The camera gave a frame the reader cannot use ({shape}; it needs colour BGR pixels).")
        self.frame_size = (int(frame.shape[0]), int(frame.shape[1]))
        return frame

    def _grab_guarded(self) -> np.ndarray:
        """``grab`` on a helper thread, so a camera that hangs cannot hang the game."""
        if self._hung is not None:
            if not self._hung.is_set():
                raise HardwareError(f"The camera has not answered for more than {self.grab_timeout_s:g} seconds.")
            self._hung = None
        box: dict[str, Any] = {}
        done = threading.Event()

        def run() -> None:
            try:
                box["frame"] = self.frame_source.grab()
            except BaseException as exc:  # handed to the caller's thread below
                box["error"] = exc
            finally:
                done.set()

        threading.Thread(target=run, name="camera-grab", daemon=True).start()
        if not done.wait(self.grab_timeout_s):
            self._hung = done
            raise HardwareError(f"The camera did not answer within {self.grab_timeout_s:g} seconds.")
        if "error" in box:
            exc = box["error"]
            if isinstance(exc, HardwareError):
                raise exc
            raise HardwareError(f"The camera failed ({exc}).") from exc
        return box["frame"]

    def _read(self, frame: np.ndarray) -> Capture:
        frame_jpeg = self._jpeg_or_none(frame)
        try:
            reading = self.reader.read(frame)
        except Exception as exc:
            log.exception("the dice reader failed on a frame")
            return Capture(reading=None, frame_jpeg=frame_jpeg, problem=f"The dice reader failed on this frame ({exc}): type the dice on the tablet.",
                           problem_codes=({"code": "reader_failed", "detail": str(exc)},))
        annotated = None
        try:
            annotated = self._jpeg_or_none(self.reader.annotate(frame, reading))
        except Exception:  # the verdict does not need the drawing; keep the reading
            log.exception("drawing the reading on the frame failed")
        return Capture(reading=reading, frame_jpeg=frame_jpeg, annotated_jpeg=annotated)

    def _jpeg_or_none(self, frame: np.ndarray | None) -> bytes | None:
        if frame is None:
            return None
        ok, buf = cv2.imencode(".jpg", frame, [cv2.IMWRITE_JPEG_QUALITY, self.jpeg_quality])
        return buf.tobytes() if ok else None
