"""kill -9 and restart, 10 times: the daemon always comes back, the state file is never corrupt,
the simulated clock never goes back by more than one save interval, and the saved states equal an
uninterrupted run's at the same simulated time.

Real ``simd run`` processes on tests/support/daemon.py's small configuration (replicas, a sweep, causes, warm
recovery; without its stragglers, whose first use costs each new process a second and a half of imports)
with a scheduled drill, at speedup 36000, a tick every 0.1 s and a save after every tick. A cycle costs the
interpreter's start-up (1-4 s on the shared cores, most of the test's CPU) and about a second of life. Odd
cycles kill at a random moment; even ones poll the directory and kill the moment a temporary file exists, i.e.
during a save (between its creation and the rename), so writes are hit every time, not by chance: five of each
check what the cycles are for (a kill during a write, a kill anywhere else, a resume from either), and the lives
are long enough that the saved states span the drill and days of simulated time.
"""

from __future__ import annotations

import os
import random
import re
import signal
import time

import pytest
from support.promstack import SimdDaemon, http_get
from support.scenarios import SMALL_YAML

from simd.engine import US_PER_SECOND
from simd.live.drills import DrillRunner
from simd.live.lane import advance_lane, new_lane
from simd.live.persist import decode, resume
from simd.scenario import parse_config

CYCLES = 10
SPEEDUP, TICK_SECONDS, SAVE_EVERY = 36000, 0.1, 1
# a save interval: SAVE_EVERY ticks, each stretched by the save itself (encoding and fsync) and by the load
# of the shared cores; the test measures it, and bounds it here
MAX_SAVE_INTERVAL_SECONDS = 2.0
DRILL = """drills:
  - name: storm
    description: plain's failures x10 from simulated day 1 for a day
    duration_seconds: 86400
    start_at_seconds: 86400
    scenarios: [plain]
    effects: {hard_rate_factor: 10}
"""
STRAGGLERS = ("    stragglers: {jitter_seconds: 0.5, slow_ranks: 1, slowdown: 1.25, "
              "mitigation: {detect_after_steps: 50}}\n")
assert STRAGGLERS in SMALL_YAML
CONFIG = SMALL_YAML.replace(STRAGGLERS, "") + DRILL


def clocks(url: str) -> tuple[float, float]:
    """(simulated seconds, wall seconds since the last completed save) as the daemon reports them."""
    body = http_get(url + "/metrics?name[]=simd_simulated_seconds_total"
                          "&name[]=simd_state_last_save_timestamp_seconds")[1].decode()
    sim = float(re.search(r"^simd_simulated_seconds_total (\S+)$", body, re.M).group(1))
    saved = float(re.search(r"^simd_state_last_save_timestamp_seconds (\S+)$", body, re.M).group(1))
    return sim, time.time() - saved


def kill_during_a_save(state_dir, proc, timeout: float = 5.0) -> bool:
    """SIGKILL as soon as a save's temporary file exists; True if it did (else killed at the timeout)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if any(name.startswith(".state.json.tmp-") for name in os.listdir(state_dir)):
            proc.send_signal(signal.SIGKILL)
            return True
    proc.send_signal(signal.SIGKILL)
    return False


@pytest.mark.integration
def test_kill_9_ten_times(tmp_path):
    rng = random.Random(13)
    state_dir = tmp_path / "state"
    config_file = tmp_path / "scenarios.yaml"
    config_file.write_text(CONFIG)
    args = ["--config", str(config_file), "--speedup", str(SPEEDUP), "--tick-seconds", str(TICK_SECONDS),
            "--state-dir", str(state_dir), "--save-every-ticks", str(SAVE_EVERY)]
    allowed, during_writes, logs = 0.0, 0, []
    for cycle in range(CYCLES):
        daemon = SimdDaemon(args).start(timeout=60)  # always comes back (start raises otherwise)
        try:
            resumed_at, since_save = clocks(daemon.url)
            while since_save > 1e6:  # no save yet in this life: its first tick is still running
                time.sleep(0.05)
                since_save = clocks(daemon.url)[1]
            # back by at most the simulated time since the last save before the kill, one tick of slack
            assert resumed_at >= allowed, (cycle, resumed_at, allowed)
            time.sleep(rng.uniform(0.3, 1.1))
            seen, since_save = clocks(daemon.url)
            assert since_save < MAX_SAVE_INTERVAL_SECONDS  # saves are regular: that is the interval lost at most
            allowed = seen - SPEEDUP * (since_save + TICK_SECONDS)
            if cycle % 2:
                daemon.proc.send_signal(signal.SIGKILL)
            else:
                during_writes += kill_during_a_save(state_dir, daemon.proc)
            daemon.proc.wait(10)
        finally:
            logs.append(daemon.stop())
        # never corrupt: the file parses and checks out after every kill (a temporary file may be left over)
        decode((state_dir / "state.json").read_bytes())
        assert not list(state_dir.glob("state.json.bad-*"))
    assert during_writes == CYCLES // 2, "the even cycles are to kill during a save"
    assert all("Traceback" not in log and "cannot be used" not in log for log in logs)
    assert sum("state: resumed from" in log for log in logs) == CYCLES - 1

    # the last saved states equal an uninterrupted run's to the same simulated time
    config = parse_config(CONFIG)
    saved = resume(decode((state_dir / "state.json").read_bytes()), config)
    assert saved.at_us > 3 * 86400 * US_PER_SECOND  # days of simulated time over the lives, the drill in it
    drills = DrillRunner(config)
    for lane in saved.lanes:
        assert lane.origin_us == 0 and lane.failed is None
        fresh = new_lane(lane.scenario, drills.body(lane.scenario, 0.0), 0)
        uninterrupted = advance_lane(fresh, lane.at_us, lambda t, s=lane.scenario: drills.body(s, t),
                                     drills.boundaries, limit=10**12).lane
        assert uninterrupted.states == lane.states, lane.scenario.name
