"""A memory tier whose saves write after their blocking in the two-level model (simd.models.checkpoint:
tier_save_overhead, tier_loss_seconds, tier_interval_seconds; simd.models.analytic.TwoLevel): the daemon's analytic
efficiency gauge against the simulated mean when the writes outlast the tier's interval (every save waits), and
no gauge where the first-order model does not reach (docs/checkpoints.md, section 6)."""

import math

import numpy as np
import pytest
from support.scenarios import job, scenario_file

from simd.engine import new_state
from simd.metrics.snapshot import scenario_info
from simd.models import analytic
from simd.models import checkpoint as ck
from simd.offline.sweep.run import run_point, two_level
from simd.scenario import parse_config


def _scenario(hard: float, write: float, tier_every: int = 10, persistent_every: int = 400):
    """1,024 GPUs, 30 s steps; a peer tier every ``tier_every`` steps (1 s blocking, ``write`` seconds of write,
    10 s load, its copy found corrupt on a tenth of the loads: those failures go on to the persistent checkpoint)
    under a persistent checkpoint every ``persistent_every`` (60 s, 60 s load); no SDC."""
    tier = {"interval_steps": tier_every, "seconds": 1, "load_seconds": 10, "write_seconds": write,
            "corrupt_on_load": 0.1}
    text = scenario_file(job("w", seed=1, n_gpus=1024, step_seconds=30, target_steps=10_000,
                             failures={"hard_per_gpu_hour": hard, "sdc_per_gpu_hour": 0.0},
                             checkpoint={"interval_steps": persistent_every, "seconds": 60, "load_seconds": 60,
                                         "tiers": {"peer": tier}},
                             validation={"interval_steps": 0, "seconds": 0}, restart_seconds=300))
    return parse_config(text).scenario("w")


def _gauge(s) -> float | None:
    return scenario_info(s, s, new_state(s.job_spec())).analytic_efficiency


def test_the_gauge_counts_a_tier_write_longer_than_its_interval():
    """The review's reproduction: a tier writing for 600 s every 300 s of compute. Every save waits 300 s for the
    write before it, so the job runs at about half its speed; the gauge is within 1 point of the simulated mean
    (24 seeds; the grid in docs/checkpoints.md has it within 0.1 point at 100)."""
    s = _scenario(1e-4, 600.0)
    runs = run_point(s, range(24))
    assert all(r.completed for r in runs)
    simulated = float(np.mean([r.effective_utilization for r in runs]))
    assert 0.45 < simulated < 0.55
    assert _gauge(s) == pytest.approx(simulated, abs=0.01)


def test_the_gauge_counts_a_tier_write_shorter_than_its_interval():
    """A write of half the interval waits for nothing but leaves the newest copy unwritten for 150 s of every
    300: the gauge falls below the blocking tier's by the latency's share (lambda W (1 + b/T)) of the failures that
    load a tier copy: not those in the first tier interval after a persistent save (1 in 40: no copy newer than
    it), nor the tenth of the others whose one copy is found corrupt (both go to the persistent checkpoint)."""
    blocking, writing = _scenario(1e-4, 0.0), _scenario(1e-4, 150.0)
    m = two_level(writing)
    loading = 1 - (1 + 39 * 0.1) / 40
    assert _gauge(blocking) - _gauge(writing) == pytest.approx(
        _gauge(blocking) * _gauge(writing) * m.rate_survived * loading * 150.0 * (1 + 1 / 300), rel=1e-6)


def test_out_of_the_first_order_models_reach_no_gauge():
    """Failures every ~1.8 h of compute with a persistent interval of 3.3 h: a failure's expected loss is more than
    REACH of the time between the failures that cause it, where the model's residuals grow past a point; the gauge
    is absent (None: not exported) rather than wrong, the optimum stays."""
    s = _scenario(2e-3, 600.0)
    m = two_level(s)
    assert m.reach(400, 10) > analytic.REACH
    info = scenario_info(s, s, new_state(s.job_spec()))
    assert info.analytic_efficiency is None and info.optimal_interval_steps


@pytest.mark.parametrize("t, b, w, t2, b2, want", [
    (300.0, 1.0, 0.0, math.inf, 0.0, 1 / 300),  # blocking only
    (300.0, 1.0, 600.0, math.inf, 0.0, 301 / 300),  # a cycle of b + W = 601 s per 300 s of compute
    # 40 points per persistent interval: 39 tier saves, 38 of them waiting 300 s, the first after the persistent
    # save's 60 s none (its tier write started 660 s before it)
    (300.0, 1.0, 600.0, 12_000.0, 60.0, (39 * 1 + 38 * 300) / 12_000),
    (300.0, 1.0, 1200.0, 12_000.0, 60.0, (39 * 1 + 38 * 900 + 540) / 12_000),
    (300.0, 1.0, 600.0, 300.0, 60.0, 0.0),  # the persistent save stands for every tier save
])
def test_the_tiers_saves_and_their_waits(t, b, w, t2, b2, want):
    assert ck.tier_save_overhead(t, b, w, t2, b2) == pytest.approx(want)


def test_the_tiers_loss_per_failure():
    # T >= W: T/2 + W (1 + b/T) + R, Gemini's t_ckpt + 1/(2f) + t_load with the save's blocking redone
    assert ck.tier_loss_seconds(300.0, 1.0, 150.0, 20.0) == pytest.approx(150 + 150 * (1 + 1 / 300) + 20)
    # T < W: the save before the interval is the newest durable one: 3T/2 + b + R, whatever W
    assert ck.tier_loss_seconds(300.0, 1.0, 600.0, 20.0) == ck.tier_loss_seconds(300.0, 1.0, 6000.0, 20.0) \
        == pytest.approx(450 + 1 + 20)
    assert ck.tier_loss_seconds(300.0, 1.0, 0.0, 20.0) == 170.0


@pytest.mark.parametrize("b, w", [(1.0, 0.0), (1.0, 150.0), (1.0, 600.0), (30.0, 60.0), (0.5, 4000.0)])
def test_the_tier_interval_optimum_is_the_models_minimum(b, w):
    rate = 1 / 10_000.0

    def h(t):
        return ck.tier_save_overhead(t, b, w) + rate * ck.tier_loss_seconds(t, b, w, 100.0)
    best = ck.tier_interval_seconds(b, w, rate, 100.0)
    ts = np.geomspace(1.0, 50_000.0, 20_001)
    grid = ts[int(np.argmin([h(t) for t in ts]))]
    assert h(best) <= h(grid) + 1e-12
    assert best == pytest.approx(grid, rel=2e-3)
