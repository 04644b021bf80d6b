"""The daemon's analytic efficiency gauge for asynchronous saves (simd.models.checkpoint.async_efficiency) against
the simulated mean where the first-order model reaches (a failure's expected loss a small share of the MTBF): saves
that all wait for the write before them, and a write spanning a few steps (docs/checkpoints.md, section 6)."""

import numpy as np
import pytest
from support.scenarios import job, scenario_file

from simd.engine import new_state
from simd.metrics.snapshot import scenario_info
from simd.offline.sweep.run import run_point
from simd.scenario import parse_config


def _scenario(hard: float, interval: int, write: float, slowdown: float):
    """1,024 GPUs, 30 s steps, 20,000 steps, a 300 s restart, no SDC; a save every ``interval`` steps blocking 5 s
    and writing ``write`` seconds with steps ``slowdown`` times slower meanwhile."""
    text = scenario_file(job("a", seed=1, n_gpus=1024, step_seconds=30, target_steps=20_000, restart_seconds=300,
                             failures={"hard_per_gpu_hour": hard, "sdc_per_gpu_hour": 0.0},
                             checkpoint={"interval_steps": interval, "seconds": 5, "write_seconds": write,
                                         "write_slowdown": slowdown},
                             validation={"interval_steps": 0, "seconds": 0}))
    return parse_config(text).scenario("a")


@pytest.mark.parametrize("hard, interval, write, slowdown, within", [
    # every save waits (W / s = 40 steps): a failure goes back two saves, 3T/2-like; T/2 + W puts the gauge 0.2 low
    (5e-5, 30, 2400.0, 2.0, 0.1),
    # a 150 s write at 1.2x spans 4.17 steps of compute but slows 5 and is durable after them: 1.7 points high
    # with the write counted in seconds
    (2e-4, 8, 150.0, 1.2, 0.3),
])
def test_the_gauge_is_the_simulated_mean_within_the_models_reach(hard, interval, write, slowdown, within):
    s = _scenario(hard, interval, write, slowdown)
    runs = run_point(s, range(40))
    assert all(r.completed for r in runs)
    simulated = float(np.mean([r.effective_utilization for r in runs]))
    gauge = scenario_info(s, s, new_state(s.job_spec())).analytic_efficiency
    assert abs(gauge - simulated) < within / 100, (gauge, simulated)
