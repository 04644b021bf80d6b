"""Hyper-checkpointing (hyper.py, loop.py): the per-step oracle, tick-size invariance, where the checkpoints fall.

The statistical and property checks (slow: they live in tests/engine/statistical)."""

from dataclasses import replace

import pytest
from engine_stats import assert_agree
from extended_specs import extended_specs
from hyper_cases import CONFIGS
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.examples import examples
from support.partition import check_cuts, horizon_us

from simd.engine import US_PER_SECOND, advance, new_state
from simd.engine.spec import Hyper

S = US_PER_SECOND


SEEDS = 84  # per configuration, as the newer oracle modules (the suite's 5-minute limit)


FIELDS = ("effective_utilization", "interruptions", "sdc_detected", "sdc_baked", "recompute_steps", "wall_seconds",
          "mean_step_seconds", "hyper_activations", "hyper_steps")


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_engine_matches_per_step_loop_with_hyper(name):
    assert_agree(name, CONFIGS[name], SEEDS, FIELDS)


# budget trimmed for the suite's 5-minute limit (hypothesis draws anew on every run, so coverage adds up)
@settings(max_examples=examples(50), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(s=extended_specs(hyper=True, late=False), horizon_steps=st.integers(1, 2000),
       cuts=st.lists(st.floats(0, 1), max_size=10))
def test_any_partition_gives_identical_state(s, horizon_steps, cuts):
    check_cuts(s, horizon_us(s, horizon_steps), cuts)


def _without_hyper(state):
    t = replace(state.totals, hyper_activations=0, hyper_steps=0)
    j = replace(state.job_start, hyper_activations=0, hyper_steps=0)
    return replace(state, hyper_end=0, hyper_anchor=0, totals=t, job_start=j)


# budget trimmed for the suite's 5-minute limit (hypothesis draws anew on every run, so coverage adds up)
@settings(max_examples=examples(40), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(s=extended_specs(), window=st.integers(1, 1000), horizon_steps=st.integers(1, 1500))
def test_hyper_interval_equal_to_the_normal_one_is_the_plain_scenario(s, window, horizon_steps):
    """Every rollback point is then on the normal lattice, so the hyper lattice is the normal one: the same
    trajectory, counter for counter and event for event (with or without committed SDCs)."""
    plain = replace(s, hyper=None)
    same = replace(s, hyper=Hyper(s.ckpt_interval_steps, window))
    horizon = horizon_us(s, horizon_steps)
    a, a_events = advance(new_state(plain), horizon, trace=True)
    b, b_events = advance(new_state(same), horizon, trace=True)
    assert _without_hyper(replace(b, plan=a.plan)) == a
    assert [_event_without_hyper(e) for e in b_events] == a_events


def _event_without_hyper(e):
    return e if e.job is None else replace(e, job=replace(e.job, hyper_activations=0, hyper_steps=0))
