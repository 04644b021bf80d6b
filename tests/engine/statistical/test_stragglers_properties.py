"""Stragglers in the engine: step = max over ranks, sampled exactly; invariances kept.

The statistical and property checks (slow: they live in tests/engine/statistical)."""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from specs import spec
from support.examples import examples
from support.partition import assert_partitioned

from simd.engine import US_PER_SECOND, Stragglers, advance, new_state
from simd.engine.stragglers import StepTimes
from simd.engine.streams import stream_state

BASE_US = 30 * US_PER_SECOND


STRAGGLERS = [Stragglers(0.5, 0, 1.0), Stragglers(0.5, 1, 1.2), Stragglers(0.5, 1, 1.2, replace_after_steps=40),
              Stragglers(0.0, 2, 1.5)]


@st.composite
def straggler_specs(draw):
    v = draw(st.integers(1, 20))
    return spec(n_gpus=draw(st.sampled_from([8, 1024])), step_seconds=30.0,
                target_steps=draw(st.integers(1, 1500)),
                hard_per_gpu_hour=draw(st.sampled_from([0.0, 2e-4, 3e-3])),
                sdc_per_gpu_hour=draw(st.sampled_from([0.0, 1.5e-4, 3e-3])),
                ckpt_interval_steps=v * draw(st.integers(1, 4)),
                validation_interval_steps=draw(st.sampled_from([0, v, v + 1])),
                stragglers=draw(st.sampled_from(STRAGGLERS)), seed=draw(st.integers(0, 2**32)))


@settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(s=straggler_specs(), horizon_steps=st.integers(1, 4000), cuts=st.lists(st.floats(0, 1), max_size=6))
def test_stragglers_keep_tick_invariance_and_conservation(s, horizon_steps, cuts):
    horizon = int(horizon_steps * 36 * US_PER_SECOND)
    whole, whole_events = advance(new_state(s), horizon, trace=True)
    state, events = new_state(s), []
    for c in sorted(int(c * horizon) for c in cuts) + [horizon]:
        state, ev = advance(state, c, trace=True)
        events.extend(ev)
        assert_partitioned(state)
        assert sum(state.totals.step_hist) == state.totals.steps_executed
    assert state == whole and events == whole_events


KERNEL_CASES = [(16384, 0.1, 1, 1.2), (1024, 0.5, 0, 1.0), (4, 0.0, 2, 1.5), (8, 0.5, 1, 1.2), (1, 0.5, 0, 1.0)]


@pytest.mark.parametrize("n_gpus,jitter,slow,slowdown", KERNEL_CASES)
@given(g0=st.integers(0, 2**40), n=st.integers(0, 3000), slow_steps=st.integers(-5, 3100))
@settings(max_examples=examples(25), deadline=None)
def test_compiled_durations_equal_the_numpy_reference(n_gpus, jitter, slow, slowdown, g0, n, slow_steps):
    times = StepTimes(n_gpus, BASE_US, jitter * US_PER_SECOND, slow, slowdown, stream_state(5, "straggler",
                                                                                              "PCG64DXSM"))
    ref = times.durations_numpy(g0, n, max(slow_steps, 0))
    got = times.durations(g0, n, slow_steps)
    assert np.array_equal(ref[0], got[0]) and np.array_equal(ref[1], got[1])


@pytest.mark.parametrize("n_gpus,jitter,slow,slowdown", KERNEL_CASES)
@given(g0=st.integers(0, 2**40), a=st.integers(0, 500), n=st.integers(0, 2000), budget=st.floats(0, 1.2),
       slow_steps=st.integers(0, 2100), c=st.integers(1, 60), v=st.sampled_from([0, 7, 25]))
@settings(max_examples=examples(25), deadline=None)
def test_compiled_fit_is_the_prefix_of_steps_that_fits(n_gpus, jitter, slow, slowdown, g0, a, n, budget,
                                                       slow_steps, c, v):
    """stepkernel.fit against the numpy definition: the longest prefix of steps (durations + pauses) within the
    budget, its summed durations and its histogram."""
    times = StepTimes(n_gpus, BASE_US, jitter * US_PER_SECOND, slow, slowdown, stream_state(6, "straggler",
                                                                                              "PCG64DXSM"))
    plan = type("P", (), {"ckpt_every": c, "ckpt_us": 300 * US_PER_SECOND, "val_every": v,
                          "val_us": 20 * US_PER_SECOND})
    d, buckets = times.durations_numpy(g0, n, slow_steps)
    q = np.arange(a + 1, a + n + 1)
    cost = d + np.where(q % c == 0, plan.ckpt_us, 0) + (np.where(q % v == 0, plan.val_us, 0) if v else 0)
    limit = int(budget * (cost.sum() if n else 1))
    k = int(np.searchsorted(np.cumsum(cost), limit, side="right"))
    m, total, hist = times.fit(g0, a, a + n, limit, plan, slow_steps)
    assert (m, total) == (a + k, int(d[:k].sum()))
    assert np.array_equal(hist, StepTimes.histogram_of(d, buckets, k))
