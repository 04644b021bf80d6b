"""The batch path over replicas (simd.engine.replicas): the single-replica engine's states, bit for bit, under
any cut of time into calls.

The statistical and property checks (slow: they live in tests/engine/statistical)."""

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from replicas_cases import _replicas
from specs import kernel_specs
from support.examples import examples
from support.partition import assert_partitioned

from simd.engine import US_PER_SECOND, advance
from simd.engine.replicas import (
    advance_replicas,
)

S = US_PER_SECOND


@settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(s=kernel_specs(), n=st.integers(1, 4), horizon_steps=st.integers(1, 3000),
       cuts=st.lists(st.floats(0, 1), max_size=6))
def test_batch_equals_the_single_replica_engine_under_any_cut(s, n, horizon_steps, cuts):
    horizon = horizon_steps * 75 * S
    states = _replicas(s, n)
    whole = tuple(advance(x, horizon)[0] for x in states)  # one by one, in one call each
    got = tuple(states)
    for c in sorted(int(c * horizon) for c in cuts) + [horizon]:
        got = advance_replicas(got, c)
        for x in got:
            assert_partitioned(x)
            assert sum(x.totals.step_hist) == x.totals.steps_executed
    assert got == whole


@settings(max_examples=examples(25), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(s=kernel_specs(), n=st.integers(1, 3), jobs=st.integers(1, 3))
def test_max_jobs_stops_where_the_single_replica_engine_stops(s, n, jobs):
    states = _replicas(s, n)
    until = 10**4 * s.target_steps * 60 * S
    assert advance_replicas(states, until, max_jobs=jobs) == tuple(advance(x, until, max_jobs=jobs)[0]
                                                                     for x in states)
