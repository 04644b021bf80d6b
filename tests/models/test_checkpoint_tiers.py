"""The two-level model of a memory tier under the persistent checkpoint (simd.models.checkpoint: Gemini's loss of a
peer tier, tiered_efficiency; simd.models.analytic: tier_rates, TwoLevel): the closed forms against
docs/checkpoints.md's values, against counting, and the daemon's gauges for the default tiered scenario."""

import itertools
import math

import pytest

from simd.engine import new_state
from simd.metrics.snapshot import scenario_info
from simd.models import analytic
from simd.models.checkpoint import burst_group_loss, domain_group_loss, group_loss_probability
from simd.scenario import default_config


@pytest.mark.parametrize("n, m, k, want", [(16, 2, 2, 1 / 15), (16, 2, 3, 0.2), (16, 2, 4, 0.3846),
                                           (2048, 2, 2, 4.89e-4), (2048, 2, 8, 0.01363), (16, 2, 1, 0.0)])
def test_group_loss_is_geminis_closed_form(n, m, k, want):
    assert group_loss_probability(n, m, k) == pytest.approx(want, rel=1e-3, abs=1e-12)
    if k < 2 * m and k >= m:  # Gemini's union bound is exact there
        assert group_loss_probability(n, m, k) == pytest.approx(n * math.comb(n - m, k - m) / (m * math.comb(n, k)))


def test_group_loss_counts_every_subset():
    """8 servers in groups of 2 (and of 4 at a jump of 2: any partition gives the same): the share of k-subsets
    holding a whole group, counted."""
    for m, groups in ((2, [(0, 1), (2, 3), (4, 5), (6, 7)]), (4, [(0, 2, 4, 6), (1, 3, 5, 7)])):
        for k in range(9):
            subsets = list(itertools.combinations(range(8), k))
            hit = sum(any(set(g) <= set(s) for g in groups) for s in subsets)
            assert group_loss_probability(8, m, k) == pytest.approx(hit / len(subsets))


def test_bursts_and_domains():
    assert burst_group_loss(16, 2, 1.0) == pytest.approx(1 / 15)  # always 2 servers
    assert burst_group_loss(16, 2, 0.5) == pytest.approx(0.2222, rel=1e-3)  # mean 3 (docs/checkpoints.md)
    assert burst_group_loss(2048, 2, 1 / (85 / 30 - 1)) == pytest.approx(1.64e-3, rel=1e-2)
    # bursts of mean 10 and 100: binomials far beyond a float's range on the way, a probability at the end
    assert 0.03 < burst_group_loss(2048, 2, 1 / 9) < burst_group_loss(2048, 2, 1 / 99) < 1
    assert domain_group_loss(16, 2, 1, 4) == 1.0 and domain_group_loss(16, 2, 4, 4) == 0.0
    assert domain_group_loss(16, 2, 2, 4) == 1.0  # members 2 apart still inside a domain of 4
    # groups {0,2} {1,3} {4,6} {5,7} {8,10} {9,11}, domains of 3: only 0-2 and 9-11 hold a whole group
    assert domain_group_loss(12, 2, 2, 3) == pytest.approx(0.5)


def test_tier_rates_split_the_failures():
    rate = 1e-4 / 6.0
    local = analytic.tier_rates(1e-4, 6.0, 1, 1, 0.8, 2048, 0.44, 0.5, 0)
    assert local == pytest.approx((rate * 0.2, rate * 0.8))
    peer = analytic.tier_rates(1e-4, 6.0, 2, 1, 1.0, 2048, 0.44, 1 / (85 / 30 - 1), 0)
    assert peer[1] == pytest.approx(0.44 / 86400 * 1.64e-3, rel=1e-2) and sum(peer) == pytest.approx(rate)
    assert analytic.tier_rates(1e-4, 6.0, 2, 1, 1.0, 2048, 0.0, 1.0, 0)[1] == 0.0  # no bursts: never lost


def test_the_tiered_scenarios_gauges_are_the_two_level_models():
    """llama3-16k-tiered: the persistent interval's optimum on the bursts that take a peer group (10,450 steps,
    docs/checkpoints.md, section 7), far above the single-level one on every failure; its configured 4,800 steps
    within 3x of it (SimdCheckpointIntervalFarFromOptimum quiet)."""
    c = default_config()
    s = c.scenario("llama3-16k-tiered")
    info = scenario_info(s, s, new_state(s.job_spec()))
    young = dict(info.optimal_interval_steps)["young"]
    assert young == pytest.approx(10_450, rel=0.01)
    assert 1 / 3 < s.checkpoint.interval_steps / young < 3
    assert 0.95 < info.analytic_efficiency < 1.0
    flat = c.scenario("llama3-16k-async")
    assert dict(scenario_info(flat, flat, new_state(flat.job_spec())).optimal_interval_steps)["young"] < 100


def test_a_corrupt_tier_sends_its_share_on_to_the_persistent_checkpoint():
    rate = 1e-4 / 6.0
    kept, persistent = analytic.tier_rates(1e-4, 6.0, 2, 1, 1.0, 2048, 0.0, 1.0, 0, corrupt=1e-3)
    assert persistent == pytest.approx(rate * 1e-3) and kept + persistent == pytest.approx(rate)


def test_the_sweeps_single_level_curve_is_not_drawn_for_a_tiered_scenario():
    """simd sweep's model curve and optimum marker are the single-level model's: none for a tiered scenario (its
    optimum is the two-level model's, which the gauges give), one for the others."""
    from simd.offline.sweep.run import first_order

    c = default_config()
    assert first_order(c.scenario("llama3-16k-tiered")) is None
    assert first_order(c.scenario("llama3-16k-async")) is not None


@pytest.mark.parametrize("keep", [1, 3])
def test_a_tier_keeping_copies_sends_on_the_recoveries_whose_copies_are_all_corrupt(keep):
    """A recovery goes on to the persistent checkpoint only when every copy it loads is found corrupt (docs/model.md,
    "Copies kept"): with k copies, the share p^k of the failures the tier would recover (its copies newer than the
    persistent checkpoint taken to be k: many tier points to a persistent one); p in place of p^k puts the gauge 1.2
    points below the simulated mean at k = 3 (docs/model.md) and the persistent optimum 3x short."""
    from support.scenarios import job, scenario_file

    from simd.offline.sweep.run import two_level
    from simd.scenario import parse_config

    tier = {"interval_steps": 10, "seconds": 1, "load_seconds": 10, "corrupt_on_load": 0.3,
            "retention_checkpoints": keep}
    s = parse_config(scenario_file(job("k", n_gpus=1024, step_seconds=30, target_steps=20_000,
                                       failures={"hard_per_gpu_hour": 3e-5, "sdc_per_gpu_hour": 0.0},
                                       checkpoint={"interval_steps": 400, "seconds": 60, "load_seconds": 60,
                                                   "tiers": {"peer": tier}},
                                       validation={"interval_steps": 0, "seconds": 0}))).scenarios[0]
    m = two_level(s)
    rate = m.rate_tier + m.rate_persistent
    assert rate == pytest.approx(1024 * 3e-5 / 3600, rel=1e-3)
    assert m.rate_persistent == pytest.approx(rate * 0.3 ** keep)


def _enumerated_fallback(n, k, p, l1, l2, r, lat=0.0):
    """tier_fallback_seconds by walking each failure's chain: in tier interval i of n after a persistent save, the
    min(i, k) copies newer than it loaded newest first, each corrupt with probability p."""
    total = 0.0
    for i in range(n):
        j = min(i, k)
        for c in range(1, j + 1):  # the c-th copy is the first good one
            total += p ** (c - 1) * (1 - p) * (c - 1) * (l1 + r)
        total += p ** j * (j * l1 + l2 - l1 + i * r - lat)  # none good: the persistent checkpoint, i intervals back
    return total / n


@pytest.mark.parametrize("n, k, p", [(40, 3, 0.3), (4, 3, 0.3), (4, 10, 0.5), (1, 1, 0.3), (40, 1, 0.0), (7, 2, 1.0)])
def test_the_copies_loaded_before_a_good_one_and_those_older_than_the_persistent_checkpoint(n, k, p):
    """What the corrupt copies a recovery loads cost (a load and a tier interval each) and the recoveries with no
    copy newer than the persistent checkpoint (docs/model.md, "Copies kept": older copies are never loaded), counted
    where each failure falls; 0 without corrupt loads when the two loads are the same and no copy is ever older."""
    from simd.models.checkpoint import tier_fallback_seconds

    got = tier_fallback_seconds(n, k, p, 10.0, 60.0, 301.0, 3.0)
    assert got == pytest.approx(_enumerated_fallback(n, k, p, 10.0, 60.0, 301.0, 3.0), rel=1e-12)
    assert tier_fallback_seconds(1, 3, 0.0, 10.0, 10.0, 301.0) == 0.0


@pytest.mark.parametrize("persistent_every, within", [(400, 0.002), (40, 0.0012)])
def test_the_gauge_counts_the_corrupt_copies_loaded_before_a_good_one(persistent_every, within):
    """A peer tier every 10 steps of 30 s keeping 3 copies, found corrupt on 30% of loads, under a persistent
    checkpoint every ``persistent_every`` steps: the gauge is the simulated mean (100 seeds) within ``within``; the
    model without the loads of the corrupt copies and with all 3 copies taken to be newer than the persistent
    checkpoint is 0.35 point above it at 400 steps and 0.25 at 40 (docs/checkpoints.md, section 6)."""
    import numpy as np
    from support.scenarios import job, scenario_file

    from simd.offline.sweep.run import analytic_efficiency, run_point
    from simd.scenario import parse_config

    tier = {"interval_steps": 10, "seconds": 1, "load_seconds": 10, "corrupt_on_load": 0.3,
            "retention_checkpoints": 3}
    s = parse_config(scenario_file(job("k", seed=1, n_gpus=1024, step_seconds=30, target_steps=20_000,
                                       restart_seconds=300,
                                       failures={"hard_per_gpu_hour": 1e-4, "sdc_per_gpu_hour": 0.0},
                                       checkpoint={"interval_steps": persistent_every, "seconds": 60,
                                                   "load_seconds": 60, "tiers": {"peer": tier}},
                                       validation={"interval_steps": 0, "seconds": 0},
                                       acknowledge=["peer-no-servers"]))).scenarios[0]
    runs = run_point(s, range(1, 101))
    simulated = float(np.mean([r.effective_utilization for r in runs]))
    assert abs(analytic_efficiency(s) - simulated) < within, (analytic_efficiency(s), simulated)
