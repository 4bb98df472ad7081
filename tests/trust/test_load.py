"""Viewers and actions together on the real server (short form: 10 viewers x 5 s).

Checks counts only: no failed action, no dropped stream, every viewer got every
event. Delays are figures, reported by ``make bench`` (50 viewers x 60 s).
"""

from __future__ import annotations

import pytest

from companion.load_bench import load_run


@pytest.mark.slow
def test_every_viewer_gets_every_event_while_the_table_plays(tmp_path):
    figures = load_run(viewers=10, rate=20, seconds=5, workdir=tmp_path)
    print(figures)
    assert figures["actions_acknowledged"] == figures["actions_sent"] == 100
    assert figures["deliveries_missing"] == 0
    assert figures["errors"] == 0, figures["error_samples"]
