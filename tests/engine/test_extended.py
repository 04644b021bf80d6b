"""The compiled loop (loop.py) on every mechanism and combination: the same states, totals, job results and
traces bit for bit under any cut of time into advance calls, over seeds, configurations and edge cases; each
configuration exercises what it is for; its normal quantile and latency draws equal the standard library's and
late.py's."""

from __future__ import annotations

import math
import random
from dataclasses import replace
from statistics import NormalDist
from unittest import mock

import pytest
from extended_cases import EVERY, GUARD, RIPPLE, SCANNER, _cuts, assert_same_paths
from extended_specs import CAUSES
from specs import llama3_causes, spec

from simd.engine import US_PER_SECOND, Accelerator, Shadow, Stragglers, advance, loop, new_state
from simd.engine import late as late_mod
from simd.engine.kernel import late as kernel_late
from simd.engine.spec import CommittedSdc, Detector, Hyper

S = US_PER_SECOND


BASE = spec(target_steps=2000, sdc_per_gpu_hour=4.0e-4)


FLEET = (Accelerator("a", 768, 2.0e-4, 3.0e-4), Accelerator("b", 256, 1.0e-3, 6.0e-4))
STRAGGLERS = Stragglers(jitter_seconds=0.5, slow_ranks=2, slowdown=1.3, replace_after_steps=150)


CONFIGS = {
    "hyper": replace(BASE, hyper=Hyper(5, 200)),
    "hyper_no_validation": replace(BASE, ckpt_interval_steps=50, validation_interval_steps=0, hyper=Hyper(10, 300)),
    "hyper_window_longer_than_job": replace(BASE, target_steps=300, hyper=Hyper(3, 10**6)),
    "hyper_interval_equal_to_normal": replace(BASE, hyper=Hyper(25, 400)),
    "committed_layers": replace(BASE, validation_interval_steps=0, committed_sdc=CommittedSdc(EVERY, 4)),
    "committed_retention1": replace(BASE, ckpt_interval_steps=50, validation_interval_steps=40,
                                    committed_sdc=CommittedSdc((SCANNER,), 1)),
    "committed_no_detector": replace(BASE, validation_interval_steps=0, committed_sdc=CommittedSdc((), 3)),
    "committed_partial_coverage": replace(BASE, validation_interval_steps=0, committed_sdc=CommittedSdc(
        (Detector("guard", "lognormal", 600.0, 1.5, 0.3), Detector("scan", "uniform", 7200.0, 0.0, 0.7)), 2)),
    "both_llama3_causes": replace(BASE, causes=llama3_causes("cold"), restart_seconds=388.2, hyper=Hyper(5, 200),
                                  committed_sdc=CommittedSdc((GUARD, RIPPLE), 6)),
    "both_fleet": replace(BASE, fleet=FLEET, hyper=Hyper(10, 100), committed_sdc=CommittedSdc(EVERY, 3)),
    "hyper_shadow": replace(BASE, shadow=Shadow(0.5, 0.05), hyper=Hyper(5, 150)),
    "committed_shadow_causes": replace(BASE, shadow=Shadow(0.25, 0.1), causes=CAUSES, validation_interval_steps=0,
                                       committed_sdc=CommittedSdc((GUARD, SCANNER), 2)),
    # under stragglers the kernel draws each step's duration (stepkernel.draw): the slow rank replaced after 150
    # steps of each job, a detector's finding meeting drawn steps, the hyper lattice
    "hyper_stragglers": replace(BASE, hyper=Hyper(5, 200), stragglers=STRAGGLERS),
    "committed_stragglers_causes": replace(BASE, causes=CAUSES, validation_interval_steps=0, stragglers=STRAGGLERS,
                                           committed_sdc=CommittedSdc(EVERY, 3)),
    "both_fleet_stragglers": replace(BASE, fleet=FLEET, hyper=Hyper(10, 100), committed_sdc=CommittedSdc(EVERY, 3),
                                     stragglers=Stragglers(0.5, 1, 1.2)),
}


def test_the_kernel_runs_traced_or_not():
    """Every call runs the one kernel (one signature: a trace buffer always, and a window of step durations without
    steps), its buffer with rows when traced and without rows otherwise."""
    calls = []
    real = loop.advance_all

    def counting(*args):
        assert len(args) == 14 and len(args[-2][0]) == 0  # advance_all(..., budget, work, prefix, trace)
        calls.append(args[-1][0].shape[0] > 0)
        return real(*args)

    s = CONFIGS["committed_layers"]
    with mock.patch.object(loop, "advance_all", counting):
        for job in (s, replace(s, stragglers=Stragglers(0.5, 1, 1.2))):
            calls.clear()
            advance(new_state(job), 10**6 * S, trace=True)
            assert calls and all(calls)
            calls.clear()
            advance(new_state(job), 10**6 * S)
            assert calls and not any(calls)


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_kernel_paths_over_seeds_and_cuts(name):
    base = CONFIGS[name]
    horizon = int(base.target_steps * base.step_seconds * S * 4.5)  # several jobs, one cut mid-way
    rng = random.Random(name)
    totals = []
    for seed in range(25):
        s = replace(base, seed=seed)
        assert_same_paths(s, _cuts(horizon, [rng.random() for _ in range(rng.randrange(4))]))
        totals.append(advance(new_state(s), horizon)[0].totals)
    # the configurations exercise what they are for
    assert sum(t.jobs_completed for t in totals) > 25
    if base.hyper is not None:
        assert sum(t.hyper_activations for t in totals) > 10
    if base.committed_sdc is not None and base.committed_sdc.detectors:
        assert sum(t.sdc_late_found for t in totals) > 5
        assert sum(t.sdc_unrecoverable for t in totals) > 0
        assert all(sum(t.detector_finds[k] for t in totals) > 0 for k in range(len(base.committed_sdc.detectors)))
    if base.shadow is not None:
        assert sum(t.shadow_detected for t in totals) > 10
    if base.stragglers is not None:
        assert sum(t.straggler_us for t in totals) > 0
        assert all(sum(t.step_hist) == t.steps_executed for t in totals)  # every executed step in one bucket
        if base.stragglers.replace_after_steps:
            assert sum(t.stragglers_replaced for t in totals) > 0
    if base.fleet:
        assert all(sum(t.interruptions_by_type[k] for t in totals) > 0 for k in range(len(base.fleet)))
        assert all(sum(t.sdc_onsets_by_type[k] for t in totals) > 0 for k in range(len(base.fleet)))


def test_retention_one_loses_no_checkpoint_and_every_late_find_is_unrecoverable():
    base = CONFIGS["committed_retention1"]
    t = advance(new_state(base), 10**8 * S)[0].totals
    assert t.sdc_late_found > 5 and t.checkpoints_lost == 0 and t.sdc_unrecoverable == t.sdc_late_found


def test_max_jobs_and_the_stop_before_a_jobs_end():
    s = CONFIGS["both_llama3_causes"]
    kernel = advance(new_state(s), 10**9 * S, max_jobs=3)
    assert kernel[0].totals.jobs_completed == 3 == len(kernel[1])
    # a cut just before, at and just after the end of the first job's last unit
    end = kernel[1][0].t_us
    for c in (end - 1, end, end + 1):
        assert_same_paths(s, [c, 3 * end])


def test_normal_quantile_equals_the_standard_library_bit_for_bit():
    nd = NormalDist()
    rng = random.Random(11)
    ps = [rng.random() for _ in range(100_000)] + [rng.random() * 1e-12 for _ in range(2000)]
    ps += [1.0 - rng.random() * 1e-12 for _ in range(2000)]
    ps += [2.0**-53, 2.0**-1074, late_mod._BELOW_ONE, 0.075, 0.925, 0.5, math.nextafter(0.075, 0),
           math.nextafter(0.925, 1), math.exp(-25.0), math.nextafter(math.exp(-25.0), 1)]
    for p in ps:
        if 0.0 < p < 1.0:
            assert kernel_late.inv_cdf(p) == nd.inv_cdf(p), p


@pytest.mark.parametrize("distribution", kernel_late.DISTRIBUTIONS)
def test_latencies_equal_late_py_bit_for_bit(distribution):
    rng = random.Random(distribution)
    us = [1.0 - rng.random() for _ in range(20_000)] + [1.0, 0.5, 0.25, 2.0**-53]
    code = kernel_late.DISTRIBUTIONS.index(distribution)
    for scale in (0.0, 3.0, 5.0, 30.0 * S, 86400.0 * S, 4536000.0 * S, 1e30):
        for sigma in (0.0, 0.5, 1.0, 10.0):
            for u in us[:: 1 + 20 * (sigma != 0.5)]:
                assert kernel_late.latency_us(code, scale, sigma, u) == late_mod.latency_us(distribution, scale, sigma,
                                                                                        u), (scale, sigma, u)
    # ties round half to even, as Python's round
    assert kernel_late.latency_us(2, 3.0, 0.0, 0.5) == 2 and kernel_late.latency_us(2, 5.0, 0.0, 0.5) == 2


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_kernel_paths_cut_by_a_work_budget(name):
    """Every mechanism's configuration, its replicas advanced in calls that a work budget cuts (each replica stops
    at the end of a unit once its limit is spent, all at the earliest clock): the uncut call's states bit for
    bit."""
    import numpy as np

    from simd.engine import advance_replicas, new_replicas

    base = CONFIGS[name]
    horizon = int(base.target_steps * base.step_seconds * S * 2.5)
    seeds = list(range(4))
    whole = advance_replicas(new_replicas(base, seeds), horizon)
    for limit in (0, 5_000):
        states, calls = new_replicas(base, seeds), 0
        while states[0].clock < horizon:
            states = advance_replicas(states, horizon, budget=np.array([limit, 1000, 15, 500, 750, 20]))
            calls += 1
        assert tuple(states) == tuple(whole) and calls > 1  # the budget did cut
