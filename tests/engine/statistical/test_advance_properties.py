"""The compiled loop for one replica, core.advance: the same states and events,
traces included, under any cut of time, max_jobs stops included.

The statistical and property checks (slow: they live in tests/engine/statistical)."""

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from specs import kernel_specs
from support.examples import examples
from support.partition import assert_partitioned

from simd.engine import (
    US_PER_SECOND,
    advance,
    new_state,
)

S = US_PER_SECOND


@settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(s=kernel_specs(), horizon_steps=st.integers(1, 3000), cuts=st.lists(st.floats(0, 1), max_size=6),
       max_jobs=st.sampled_from([None, None, 1, 2, 5]))
def test_any_cut_of_time_gives_the_one_call(s, horizon_steps, cuts, max_jobs):
    """States and events after an arbitrary partition of time, against the one call; the buckets add up to the
    clock and the histogram to the steps after every call."""
    horizon = min(horizon_steps, 40 * s.target_steps) * 75 * S
    whole, whole_events = advance(new_state(s), horizon, max_jobs=max_jobs, trace=True)
    got, events = new_state(s), []
    for c in sorted(int(c * horizon) for c in cuts) + [horizon]:
        c = max(c, got.clock)  # a max_jobs stop leaves the clock behind
        got, ev = advance(got, c, max_jobs=max_jobs, trace=True)
        assert_partitioned(got)
        assert sum(got.totals.step_hist) == got.totals.steps_executed
        events.extend(ev)
    assert got == whole and events == whole_events
