"""Heterogeneous fleets (simd/engine/fleet.py): the engine against the per-step oracle with one Bernoulli per
accelerator type and step, the attribution of interruptions and SDC onsets to types, tick-size invariance,
and a fleet of one type being the plain job bit for bit.

The statistical and property checks (slow: they live in tests/engine/statistical)."""

import pytest
from engine_stats import agree_with_oracle, field
from fleet_cases import CONFIGS, TWO
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from specs import llama3_causes, spec
from support.examples import examples
from support.partition import check_cuts, horizon_us

from simd.engine import Stragglers
from simd.engine.fleet import Accelerator
from simd.engine.spec import CommittedSdc, Detector, Hyper

SEEDS = 84  # per configuration, as the newer oracle modules (the suite's 5-minute limit)


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


# A fleet with each accepted mechanism beside it (issue 20: every accepted combination against the oracle, in
# distribution): stragglers (each step drawn); hyper-checkpointing and committed SDCs found late, with causes.
EXTENDED = {
    "two_types_stragglers": spec(n_gpus=1024, fleet=TWO, stragglers=Stragglers(0.5, 1, 1.2, replace_after_steps=300)),
    "two_types_hyper_committed_llama3": spec(
        n_gpus=1024, fleet=TWO, validation_interval_steps=0, causes=llama3_causes("warm"), restart_seconds=388.2,
        hyper=Hyper(5, 200), committed_sdc=CommittedSdc((Detector("scan", "exponential", 3600.0, 0.0, 0.8),), 3)),
}
EXTENDED_FIELDS = {"two_types_stragglers": ("mean_step_seconds",),
                   "two_types_hyper_committed_llama3": ("hyper_activations", "hyper_steps", "sdc_late_found",
                                                        "checkpoints_lost", "sdc_unrecoverable")}


@pytest.mark.parametrize("name", sorted(EXTENDED))
def test_engine_matches_the_per_step_loop_with_a_fleet_and_other_mechanisms(name):
    base = EXTENDED[name]
    means = agree_with_oracle(name, base, SEEDS, _reads(base.fleet) | {f: field(f) for f in EXTENDED_FIELDS[name]})
    assert all(means[f"interruptions[{a.name}]"] > 1 for a in base.fleet)
    assert all(means[f"sdc_onsets[{a.name}]"] > 1 for a in base.fleet)
    if base.hyper is not None:  # the configuration exercises what it is for
        assert means["hyper_activations"] > 1 and means["sdc_late_found"] > 0.2


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
        # under stragglers the kernel draws each step: the cuts must meet drawn steps too
        stragglers=draw(st.sampled_from([None, None, Stragglers(0.5, 1, 1.3), Stragglers(0.5, 2, 1.5, 100)])),
        seed=draw(st.integers(0, 2**32)),
    )


# 70 examples, a quarter of them under stragglers (the suite's 5 minutes)
@settings(max_examples=examples(70), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(s=fleet_specs(), horizon_steps=st.integers(1, 3000), cuts=st.lists(st.floats(0, 1), max_size=10))
def test_any_partition_gives_identical_state_with_a_fleet(s, horizon_steps, cuts):
    check_cuts(s, horizon_us(s, horizon_steps), cuts)
