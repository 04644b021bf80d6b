"""Heterogeneous fleets (simd/engine/fleet.py): the engine against the per-step oracle with one Bernoulli per
accelerator type and step, the attribution of interruptions and SDC onsets to types, tick-size invariance,
and a fleet of one type being the plain job bit for bit."""

import math
from dataclasses import replace

import pytest
from fleet_cases import CONFIGS, STORM, TWO
from specs import llama3_causes, spec

from simd.engine import US_PER_SECOND, advance, new_state, per_step_cluster_hazard, retarget
from simd.engine.fleet import Accelerator, combined_hazard, cumulative_shares
from simd.engine.spec import compile_spec

S = US_PER_SECOND


def test_the_storm_makes_simultaneous_failures_common():
    """P(two or more types fail in one step) is large there: the exact rule and a naive one differ a lot."""
    q = [per_step_cluster_hazard(a.hard_per_gpu_hour, a.count, 60.0) for a in STORM]
    none = math.prod(1 - x for x in q)
    exactly_one = sum(x * none / (1 - x) for x in q)
    assert 1 - none - exactly_one > 0.05
    exact = cumulative_shares(tuple((a.count, a.hard_per_gpu_hour) for a in STORM), 60.0)
    naive = q[0] / sum(q)
    assert exact[0] == pytest.approx(-math.log1p(-q[0]) / -sum(math.log1p(-x) for x in q))
    assert abs(exact[0] - naive) / exact[0] > 0.25


def test_combined_hazard_is_one_minus_the_product():
    groups = ((768, 2e-4), (256, 1e-3), (3, 0.0))
    direct = 1 - (1 - 2e-4 * 60 / 3600) ** 768 * (1 - 1e-3 * 60 / 3600) ** 256
    assert combined_hazard(groups, 60.0) == pytest.approx(direct, rel=1e-12)
    assert combined_hazard(((5, 60.0), (7, 1e-3)), 60.0) == 1.0  # a GPU failing surely each step
    assert cumulative_shares(((5, 60.0), (7, 1e-3), (15, 60.0)), 60.0) == (0.25, 0.25, 1.0)  # by count among those
    assert cumulative_shares(((5, 0.0), (7, 0.0)), 60.0)[-1] == 1.0


def test_a_fleet_of_one_type_is_the_plain_job_bit_for_bit():
    for base in (spec(), spec(ckpt_interval_steps=50, validation_interval_steps=40, causes=llama3_causes("warm"))):
        one = replace(base, fleet=(Accelerator("h100", base.n_gpus, base.hard_per_gpu_hour, base.sdc_per_gpu_hour),))
        assert compile_spec(one).hard_hazard == compile_spec(base).hard_hazard
        for horizon in (1_000 * S, 400_000 * S, 2_000_000 * S):
            plain, plain_events = advance(new_state(base), horizon, trace=True)
            fleet, events = advance(new_state(one), horizon, trace=True)
            assert replace(fleet, plan=plain.plan) == plain
            assert [_as_gpu(e) for e in events] == plain_events
            assert fleet.totals.interruptions_by_type == (sum(plain.totals.interruptions),)
            assert fleet.totals.sdc_onsets_by_type == (plain.totals.sdc_onsets,)


def _as_gpu(event):
    """The event with its job's per-type counts under the plain job's type name, "gpu"."""
    j = event.job
    if j is None:
        return event
    return replace(event, job=replace(j, interruptions_by_type={"gpu": sum(j.interruptions_by_type.values())},
                                      sdc_onsets_by_type={"gpu": sum(j.sdc_onsets_by_type.values())}))


def test_attribution_counts_add_up_to_the_totals():
    state, _ = advance(new_state(replace(CONFIGS["storm"], seed=7)), 10**5 * S)
    t = state.totals
    assert sum(t.interruptions_by_type) == sum(t.interruptions) > 100
    assert sum(t.sdc_onsets_by_type) == t.sdc_onsets > 100


def test_retarget_keeps_the_types():
    state, _ = advance(new_state(CONFIGS["two_types"]), 10**5 * S)
    faster = replace(CONFIGS["two_types"], fleet=tuple(replace(a, hard_per_gpu_hour=10 * a.hard_per_gpu_hour)
                                                       for a in TWO))
    assert retarget(state, faster).totals == state.totals
    with pytest.raises(ValueError, match="accelerator types"):
        retarget(state, replace(faster, fleet=(replace(TWO[0], name="z"), TWO[1])))
