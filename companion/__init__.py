"""The Elephants Bluff table companion.

Layers, bottom to top (each imports only those below it; ``lint-imports`` checks):
``companion.core`` (errors, value types, protocols, the settings registry) →
``companion.rules`` (the game, pure) → ``vision`` (reading dice) → ``firmware``
(buttons, lights, the capture loop) → ``companion.app`` (referee, store, web, CLI).
Importing this package loads nothing: ``companion.core`` stays the bottom layer.
"""

__version__ = "0.1.0"
