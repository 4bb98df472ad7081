"""``python -m firmware.check``: test the table's wiring, before any game.

Lights each light in turn (the Believe and Bluff LEDs, the status LED, the tray's
ring at its capture level, the buzzer), each for a moment and named on the
screen, then prints every press of a button and every lift of the lid until the
time is up. A part that stays dark, or a press that prints the wrong name, is a
wire on the wrong pin (``hardware/PINS.md``). Stop the service first: two
programs cannot hold the same pins.

    sudo systemctl stop elephants-bluff
    sudo -u elephants sh -c 'cd /var/lib/elephants-bluff &&
        exec /opt/elephants-bluff/venv/bin/python -m firmware.check --config config.toml'

(lgpio writes its notification pipes in the working directory, hence the ``cd``.)
"""

from __future__ import annotations

import argparse
import sys
import threading
import time
from pathlib import Path
from typing import Any, Callable, TextIO

from companion.core.errors import ElephantsBluffError
from companion.core.settings import Settings
from firmware.devices import TableDevices, make_pin_factory
from firmware.pins import PIN_FACTORY_ENV, check_pin_map, pin_factory_name


def run_check(
    devices: TableDevices,
    *,
    light_level: float = 0.8,
    show_s: float = 1.0,
    listen_s: float = 30.0,
    out: TextIO = sys.stdout,
    sleep: Callable[[float], None] | None = None,
    stop: threading.Event | None = None,
) -> list[str]:
    """Show each output, then report inputs for ``listen_s`` seconds; returns the inputs seen, in order.

    >>> from companion.core.settings import Settings
    >>> import io
    >>> devices = TableDevices.open(check_pin_map(Settings.defaults()), make_pin_factory("mock"))
    >>> run_check(devices, show_s=0, listen_s=0, out=io.StringIO(), sleep=lambda s: None)
    []
    >>> devices.close()
    """
    sleep = sleep or time.sleep
    outputs: list[tuple[str, Any, float]] = [
        ("Believe button's light", devices.believe_light, 1.0),
        ("Bluff button's light", devices.bluff_light, 1.0),
        ("status light", devices.status_light, 1.0),
        ("tray's LED ring", devices.tray_light, light_level),
    ]
    if devices.buzzer is not None:
        outputs.append(("buzzer", devices.buzzer, 1.0))
    for name, device, level in outputs:
        print(f"on:  {name}", file=out, flush=True)
        device.value = level
        sleep(show_s)
        device.value = 0
    seen: list[str] = []
    lock = threading.Lock()
    listening = threading.Event()
    listening.set()

    def reporter(name: str) -> Callable[[], None]:
        def report() -> None:
            if not listening.is_set():
                return
            with lock:
                seen.append(name)
            print(f"input: {name}", file=out, flush=True)

        return report

    inputs = devices.inputs()
    for name, device in inputs.items():
        if name == "lid":
            device.when_deactivated = reporter("lid lifted")
            device.when_activated = reporter("lid closed")
        else:
            device.when_activated = reporter(f"{name} pressed")
    print(f"Press each button{' and lift the lid' if 'lid' in inputs else ''} now ({listen_s:g} s).", file=out, flush=True)
    (stop or threading.Event()).wait(listen_s)
    listening.clear()  # the callbacks stay set (gpiozero warns on None) but say nothing more
    with lock:
        return list(seen)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m firmware.check", description="Test the table's buttons and lights.")
    parser.add_argument("--config", type=Path, default=Path("instance/config.toml"), help="the companion's config.toml (for the pin map)")
    parser.add_argument("--seconds", type=float, default=30.0, help="how long to listen for presses")
    args = parser.parse_args(argv)
    if not args.config.exists():  # the defaults would check the simulated pins and blame the wires
        print(f"firmware.check: there is no {args.config}: name the companion's config.toml with --config (on the Pi, "
              "run it in /var/lib/elephants-bluff with --config config.toml).", file=sys.stderr)
        return 2
    try:
        # the pin map and the ring's level only: the rest of a config.toml is the app's, whose settings this
        # layer does not know
        settings = Settings.load(args.config, sections=("gpio", "capture"))
        pins = check_pin_map(settings)
        name = pin_factory_name(settings)
        if name == "none":
            print("gpio.pin_factory is none: this table has no buttons to check.", file=sys.stderr)
            return 2
        if name == "mock":
            print(f"firmware.check: gpio.pin_factory is mock ({PIN_FACTORY_ENV} or {args.config}), the simulated pins: nothing "
                  'on the tray would light and no press could arrive. On the Pi, set pin_factory = "lgpio" under [gpio] '
                  "(deploy/install-pi.sh writes it).", file=sys.stderr)
            return 2
        devices = TableDevices.open(pins, make_pin_factory(name))
    except ElephantsBluffError as exc:
        print(f"firmware.check: {exc.message}", file=sys.stderr)
        return 2
    print(f"pins: {name}, from {args.config}", flush=True)
    try:
        seen = run_check(devices, light_level=settings["capture.light_level"], listen_s=args.seconds)
    except KeyboardInterrupt:
        return 130
    finally:
        devices.close()
    missing = [n for n in devices.inputs() if not any(s.startswith(n) for s in seen)]
    if missing:
        print(f"Never seen: {', '.join(missing)}. Check their wires against hardware/PINS.md.")
        return 1
    print("Every input answered.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
