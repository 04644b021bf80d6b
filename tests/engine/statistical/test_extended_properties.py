"""The compiled loop (loop.py) with hyper-checkpointing and committed SDCs: identical states, totals, job
results and traces under any cut of time into advance calls, at scale and over random configurations.

The statistical and property checks (slow: they live in tests/engine/statistical)."""

from __future__ import annotations

from dataclasses import replace

import pytest
from extended_cases import EVERY, _cuts, assert_same_paths
from extended_specs import extended_specs
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from specs import spec
from support.examples import examples

from simd.engine import US_PER_SECOND, Shadow
from simd.engine.spec import CommittedSdc, Hyper

S = US_PER_SECOND


@pytest.mark.parametrize("name", ["committed_layers", "hyper"])
def test_the_benchmark_jobs_at_scale(name):
    """Seed-000-like jobs of 10^6 steps (bench/engine.py's, ten times shorter), a few seeds, in ticks."""
    bench = spec(n_gpus=1024, step_seconds=30.0, target_steps=10**6, ckpt_interval_steps=100,
                 validation_interval_steps=50, validation_seconds=20.0)
    variant = replace(bench, hyper=Hyper(50, 1000)) if name == "hyper" else replace(
        bench, validation_interval_steps=0, committed_sdc=CommittedSdc(EVERY, 10))
    horizon = 40 * 10**6 * S
    for seed in range(3):
        assert_same_paths(replace(variant, seed=seed), _cuts(horizon, [0.013, 0.5, 0.77]))


# both mechanisms, edge sizes, with and without stragglers; slow as the engine's hypothesis checks (conftest.py)
@settings(max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(s=extended_specs(), horizon_steps=st.integers(1, 3000), cuts=st.lists(st.floats(0, 1), max_size=8))
def test_any_partition_gives_the_one_calls_state(s, horizon_steps, cuts):
    assert_same_paths(s, _cuts(int(horizon_steps * s.step_seconds * S * 1.7), cuts))


@settings(max_examples=examples(40), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(s=extended_specs(), fraction=st.sampled_from([0.0, 0.3, 1.0]), cuts=st.lists(st.floats(0, 1), max_size=5))
def test_with_shadow_ranks(s, fraction, cuts):
    s = replace(s, stragglers=None, shadow=Shadow(fraction, 0.05))
    assert_same_paths(s, _cuts(int(s.target_steps * s.step_seconds * S * 3.1), cuts))
