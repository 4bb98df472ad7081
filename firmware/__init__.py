"""The table's devices: buttons and lights through gpiozero, and the capture loop.

- ``settings``: the ``gpio.*`` and ``capture.*`` settings, with the default pin map.
- ``pins``: ``check_pin_map`` (a wrong or double-used pin is a ``SettingsError`` at
  start-up) and the pin factory in force (``GPIOZERO_PIN_FACTORY`` overrides).
- ``debounce``: the project's own debounce, with an injectable clock.
- ``devices``: the gpiozero devices, each opened with an explicit ``pin_factory``.
- ``capture``: ``CaptureLoop``, the ``DiceSource`` that lights the tray, waits for
  still dice, grabs, switches the light off and reads.
- ``peek``: the lid switch's private re-roll check (RULES.md R6, R13).
- ``table``: ``TableController`` and ``build_table``, the entry point for the app.
"""

# The table's settings are registered whenever any of firmware is imported.
from firmware import settings as _settings  # noqa: E402,F401
