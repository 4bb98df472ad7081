"""Kill -9 the real server during scripted play: nothing acknowledged is lost (short form).

The full form (5 seeds x 200 actions x 10 kills) runs in ``make bench``.
"""

from __future__ import annotations

import pytest

from bench.durability import kill_run


@pytest.mark.slow
@pytest.mark.parametrize("seed", [20261121])
def test_killed_server_keeps_every_acknowledged_action_and_the_game_goes_on(seed, tmp_path):
    print(f"kill run seed {seed}")  # rerun a failure with this seed
    run = kill_run(seed, actions=60, kills=4, workdir=tmp_path, log=print)
    assert run["ok"], f"seed {seed}: {run.get('error')}\n{run.get('server_log_tail', '')}"
    assert run["kills"] == 4
    assert run["acknowledged"] > 30  # the script played, it was not all refusals
