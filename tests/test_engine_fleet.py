"""Heterogeneous fleets (simd/engine/fleet.py): the engine against the per-step oracle with one Bernoulli per
accelerator type and step, the attribution of interruptions and SDC onsets to types, tick-size invariance,
and a fleet of one type being the plain job bit for bit."""

import math
from dataclasses import replace

import pytest
from engine_stats import agree_with_oracle, check_partitions, field
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from specs import llama3_causes, spec

from simd.engine import US_PER_SECOND, advance, new_state, per_step_cluster_hazard, retarget
from simd.engine.fleet import Accelerator, combined_hazard, cumulative_shares
from simd.engine.spec import compile_spec

S = US_PER_SECOND
SEEDS = 200


def rate_for(step_hazard: float, n: int, step_seconds: float = 60.0) -> float:
    """The per-GPU-hour rate at which ``n`` GPUs fail (at least one) with probability ``step_hazard`` a step."""
    return (1 - (1 - step_hazard) ** (1 / n)) * 3600 / step_seconds


# Two types with test rates (not figures of real accelerators): 768 GPUs at docs/design.md 5.1's example rates, 256 at
# five and four times them.
TWO = (Accelerator("a", 768, 2e-4, 1.5e-4), Accelerator("b", 256, 1e-3, 6e-4))
# Three small types whose step hazards (2%, 50%, 10% for hard failures; 30%, 5%, 20% for SDCs) make steps in
# which two or more types fail common, so that the attribution rule matters: shares proportional to the step
# hazards would charge type "a" 3.2% of the interruptions instead of the exact 2.5%.
STORM = (Accelerator("a", 40, rate_for(0.02, 40), rate_for(0.3, 40)),
         Accelerator("b", 10, rate_for(0.5, 10), rate_for(0.05, 10)),
         Accelerator("c", 5, rate_for(0.1, 5), rate_for(0.2, 5)))
CONFIGS = {
    "two_types": spec(n_gpus=1024, fleet=TWO),
    "two_types_nondividing_llama3": spec(n_gpus=1024, fleet=TWO, ckpt_interval_steps=50, validation_interval_steps=40,
                                         causes=llama3_causes("warm"), restart_seconds=388.2),
    # a checkpoint and a validation every step: a failure loses one step, so the job gets through the storm
    "storm": spec(n_gpus=55, fleet=STORM, target_steps=150, ckpt_interval_steps=1, validation_interval_steps=1,
                  ckpt_seconds=1.0, validation_seconds=1.0),
}


def _reads(fleet):
    reads = {f: field(f) for f in ("effective_utilization", "interruptions", "sdc_detected", "sdc_baked",
                                   "recompute_steps", "wall_seconds")}
    for a in fleet:
        reads[f"interruptions[{a.name}]"] = (lambda j, n=a.name: j.interruptions_by_type[n],
                                             lambda r, n=a.name: r["interruptions_by_type"][n])
        reads[f"sdc_onsets[{a.name}]"] = (lambda j, n=a.name: j.sdc_onsets_by_type[n],
                                          lambda r, n=a.name: r["sdc_onsets_by_type"][n])
    return reads


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_engine_matches_the_per_step_loop_per_accelerator_type(name):
    base = CONFIGS[name]
    means = agree_with_oracle(name, base, SEEDS, _reads(base.fleet))
    assert all(means[f"interruptions[{a.name}]"] > 1 for a in base.fleet)
    assert all(means[f"sdc_onsets[{a.name}]"] > 1 for a in base.fleet)


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


@st.composite
def fleet_specs(draw):
    k = draw(st.integers(1, 3))
    fleet = tuple(Accelerator(f"t{i}", draw(st.integers(1, 3000)),
                              draw(st.sampled_from([0.0, 1e-4, 1e-3, 3e-2])),
                              draw(st.sampled_from([0.0, 1.5e-4, 1e-3, 3e-2]))) for i in range(k))
    v = draw(st.integers(1, 30))
    return spec(
        n_gpus=sum(a.count for a in fleet), fleet=fleet,
        step_seconds=draw(st.sampled_from([1.0, 30.0, 7.3])),
        target_steps=draw(st.integers(1, 3000)),
        ckpt_interval_steps=v * draw(st.integers(1, 5)) + draw(st.sampled_from([0, 0, 3])),  # some not divisible
        ckpt_seconds=draw(st.sampled_from([0.0, 300.0, 12.25])),
        validation_interval_steps=draw(st.sampled_from([0, v])),
        validation_seconds=draw(st.sampled_from([0.0, 20.0])),
        restart_seconds=draw(st.sampled_from([0.0, 60.0])),
        causes=draw(st.sampled_from([(), llama3_causes("warm")])),
        seed=draw(st.integers(0, 2**32)),
    )


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(s=fleet_specs(), horizon_steps=st.integers(1, 3000), cuts=st.lists(st.floats(0, 1), max_size=10))
def test_any_partition_gives_identical_state_with_a_fleet(s, horizon_steps, cuts):
    check_partitions(s, horizon_steps, cuts)
