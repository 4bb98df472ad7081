"""The examples in the firmware's docstrings run as written."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = ["firmware.pins", "firmware.debounce", "firmware.devices", "firmware.capture", "firmware.peek", "firmware.table", "firmware.check"]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples_run(name):
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0 and result.failed == 0
