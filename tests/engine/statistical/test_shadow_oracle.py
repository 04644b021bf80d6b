"""Shadow-rank dual execution (simd/engine/shadow.py): the engine against the per-step oracle extended with it,
tick-size invariance, and its edges (fraction 0 is the plain job bit for bit, fraction 1 leaves validation
nothing to find, the overhead's time in closed form, a disagreement placed by hand).

The statistical and property checks (slow: they live in tests/engine/statistical)."""

from dataclasses import replace

import pytest
from engine_stats import agree_with_oracle, field
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from specs import llama3_causes, spec
from support.examples import examples
from support.partition import check_cuts, horizon_us

from simd.engine.shadow import Shadow
from simd.engine.spec import CommittedSdc, Detector, Hyper

SEEDS = 84  # per configuration, as the newer oracle modules (the suite's 5-minute limit)


READS = {f: field(f) for f in ("effective_utilization", "interruptions", "sdc_detected", "sdc_baked",
                               "shadow_detected", "recompute_steps", "wall_seconds", "mean_step_seconds")}
READS["sdc_onsets"] = (lambda j: sum(j.sdc_onsets_by_type.values()), lambda r: r["sdc_onsets"])
READS["shadow_seconds"] = (lambda j: j.bucket_seconds["shadow"], lambda r: r["shadow_seconds"])


# SDC rate 4e-4 per GPU-hour (a few times docs/design.md 5.1's 1.5e-4) so that each job sees tens of disagreements
CONFIGS = {
    # half the ranks shadowed, validation at every checkpoint
    "half": spec(sdc_per_gpu_hour=4e-4, shadow=Shadow(0.5, 0.05)),
    # validation (every 40) does not divide the checkpoint (every 50): some SDCs baked in
    "quarter_nondividing": spec(ckpt_interval_steps=50, validation_interval_steps=40, sdc_per_gpu_hour=4e-4,
                                shadow=Shadow(0.25, 0.1)),
    # every rank shadowed, no validation at all
    "full_no_validation": spec(validation_interval_steps=0, sdc_per_gpu_hour=4e-4, shadow=Shadow(1.0, 0.02)),
    # several causes of hard failure: a disagreement is one more kind drawn with the cause
    "half_llama3": spec(causes=llama3_causes("warm"), restart_seconds=388.2, sdc_per_gpu_hour=4e-4,
                        shadow=Shadow(0.5, 0.05)),
}
# Shadow ranks with the extended mechanisms (accepted since the oracle models them together): a disagreement is
# an SDC detection that opens a hyper window, and rolls back like a hard failure, so a committed SDC survives it
EXTENDED = {
    "half_hyper": (spec(sdc_per_gpu_hour=4e-4, shadow=Shadow(0.5, 0.05), hyper=Hyper(5, 200)),
                   ("hyper_activations", "hyper_steps")),
    "quarter_committed": (spec(sdc_per_gpu_hour=4e-4, validation_interval_steps=0, shadow=Shadow(0.25, 0.05),
                               committed_sdc=CommittedSdc((Detector("scan", "exponential", 3600.0, 0.0, 0.8),), 3)),
                          ("sdc_late_found", "checkpoints_lost", "sdc_unrecoverable")),
}


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_engine_matches_the_per_step_loop_with_shadow_ranks(name):
    means = agree_with_oracle(name, CONFIGS[name], SEEDS, READS)
    assert means["shadow_detected"] > 5  # the configuration exercises the mechanism
    if name == "quarter_nondividing":
        assert means["sdc_baked"] > 1  # ... and the unshadowed ranks' ordinary path


@pytest.mark.parametrize("name", sorted(EXTENDED))
def test_engine_matches_the_per_step_loop_with_shadow_ranks_and_extended_mechanisms(name):
    base, extra = EXTENDED[name]
    means = agree_with_oracle(name, base, SEEDS, READS | {f: field(f) for f in extra})
    assert means["shadow_detected"] > 5 and means[extra[0]] > 1  # both mechanisms exercised


shadow_specs = st.builds(
    spec,
    n_gpus=st.integers(1, 5000),
    step_seconds=st.sampled_from([1.0, 30.0, 7.3]),
    target_steps=st.integers(1, 2000),
    hard_per_gpu_hour=st.sampled_from([0.0, 1e-4, 1e-3, 3e-2]),
    sdc_per_gpu_hour=st.sampled_from([0.0, 1.5e-4, 1e-3, 3e-2]),
    ckpt_interval_steps=st.sampled_from([1, 5, 20, 40, 60]),
    ckpt_seconds=st.sampled_from([0.0, 300.0, 12.25]),
    validation_interval_steps=st.sampled_from([0, 1, 5, 7, 20]),
    validation_seconds=st.sampled_from([0.0, 20.0]),
    restart_seconds=st.sampled_from([0.0, 60.0]),
    causes=st.sampled_from([(), llama3_causes("warm")]),
    shadow=st.builds(Shadow, st.sampled_from([0.0, 0.1, 0.5, 1.0]), st.sampled_from([0.0, 0.05, 1.0])),
    seed=st.integers(0, 2**32),
)


# budget trimmed for the suite's 5-minute limit (hypothesis draws anew on every run, so coverage adds up)
@settings(max_examples=examples(50), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(s=shadow_specs, horizon_steps=st.integers(1, 3000), cuts=st.lists(st.floats(0, 1), max_size=10))
def test_any_partition_gives_identical_state_with_shadow_ranks(s, horizon_steps, cuts):
    check_cuts(s, horizon_us(s, horizon_steps), cuts)


@settings(max_examples=examples(30), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(s=shadow_specs, extended=st.sampled_from(sorted(EXTENDED)), horizon_steps=st.integers(1, 3000),
       cuts=st.lists(st.floats(0, 1), max_size=10))
def test_any_partition_gives_identical_state_with_shadow_ranks_and_extended_mechanisms(s, extended, horizon_steps,
                                                                                      cuts):
    base = EXTENDED[extended][0]
    check_cuts(replace(s, hyper=base.hyper, committed_sdc=base.committed_sdc), horizon_us(s, horizon_steps), cuts)
