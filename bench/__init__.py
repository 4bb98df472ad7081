"""The benches: the project's speed, size and accuracy figures, and the load and durability drivers.

They measure the product from outside and use test tools (requests, psutil), so
they live beside ``tests/``, not in the product packages, and are not in the
wheel. Run them with ``make bench`` or ``elephants-bluff bench`` in a source
checkout with the test extra installed.
"""
