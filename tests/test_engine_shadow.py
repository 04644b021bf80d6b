"""Shadow-rank dual execution (simd/engine/shadow.py): the engine against the per-step oracle extended with it,
tick-size invariance, and its edges (fraction 0 is the plain job bit for bit, fraction 1 leaves validation
nothing to find, the overhead's time in closed form, a disagreement placed by hand)."""

import math
from dataclasses import replace

import pytest
from engine_stats import agree_with_oracle, check_partitions, field
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from specs import llama3_causes, spec

from simd.engine import US_PER_SECOND, advance, new_state, run_job
from simd.engine.shadow import Shadow, shadow_ranks, stops
from simd.engine.stragglers import BUCKET_FACTORS

S = US_PER_SECOND
SEEDS = 200
READS = {f: field(f) for f in ("effective_utilization", "interruptions", "sdc_detected", "sdc_baked",
                               "shadow_detected", "recompute_steps", "wall_seconds", "mean_step_seconds")}
READS["sdc_onsets"] = (lambda j: sum(j.sdc_onsets_by_type.values()), lambda r: r["sdc_onsets"])
READS["shadow_seconds"] = (lambda j: j.bucket_seconds["shadow"], lambda r: r["shadow_seconds"])

# SDC rate 4e-4 per GPU-hour (a few times docs/design.md 5.1's 1.5e-4) so that each job sees tens of disagreements
CONFIGS = {
    # half the ranks shadowed, validation at every checkpoint: the batch path
    "half": spec(sdc_per_gpu_hour=4e-4, shadow=Shadow(0.5, 0.05)),
    # validation (every 40) does not divide the checkpoint (every 50): the segment walk; some SDCs baked in
    "quarter_nondividing": spec(ckpt_interval_steps=50, validation_interval_steps=40, sdc_per_gpu_hour=4e-4,
                                shadow=Shadow(0.25, 0.1)),
    # every rank shadowed, no validation at all
    "full_no_validation": spec(validation_interval_steps=0, sdc_per_gpu_hour=4e-4, shadow=Shadow(1.0, 0.02)),
    # several causes of hard failure: a disagreement is one more kind drawn with the cause
    "half_llama3": spec(causes=llama3_causes("warm"), restart_seconds=388.2, sdc_per_gpu_hour=4e-4,
                        shadow=Shadow(0.5, 0.05)),
}


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_engine_matches_the_per_step_loop_with_shadow_ranks(name):
    means = agree_with_oracle(name, CONFIGS[name], SEEDS, READS)
    assert means["shadow_detected"] > 5  # the configuration exercises the mechanism
    if name == "quarter_nondividing":
        assert means["sdc_baked"] > 1  # ... and the unshadowed ranks' ordinary path


def test_stop_kinds_split_hard_failures_and_disagreements_exactly():
    h, s = 0.01, 0.03
    st_ = stops(h, s, (0.6, 1.0), (1, 2), (3, 4), 5, lambda p: math.log1p(-p))
    q = 1 - (1 - h) * (1 - s)
    assert st_.hazard == pytest.approx(q, rel=1e-15)
    share = (1 - h) * s / q  # a disagreement and no hard failure, given a stop
    assert st_.cumulative == pytest.approx((0.6 * (1 - share), 1 - share, 1.0), rel=1e-15)
    assert (st_.detect_us, st_.restart_us, st_.shadow_kind) == ((1, 2, 0), (3, 4, 5), 2)


def test_fraction_zero_is_the_plain_job_bit_for_bit():
    for base in (spec(), spec(ckpt_interval_steps=50, validation_interval_steps=40)):
        plain, plain_events = advance(new_state(base), 400_000 * S, trace=True)
        off = replace(base, shadow=Shadow(0.0, 0.5))  # no rank shadowed: no overhead either
        shadowed, events = advance(new_state(off), 400_000 * S, trace=True)
        assert replace(shadowed, plan=plain.plan) == plain
        assert events == plain_events
        assert shadow_ranks(1024, Shadow(0.0004, 0.5)) == 0  # rounds to no rank: the plain job too


def test_fraction_one_leaves_validation_nothing_to_find():
    s = spec(sdc_per_gpu_hour=1e-3, shadow=Shadow(1.0, 0.0), ckpt_interval_steps=50, validation_interval_steps=40)
    state, _ = advance(new_state(s), 10**6 * S)
    t = state.totals
    assert t.shadow_detected > 20 and t.validations > 0
    assert t.sdc_baked == 0  # no SDC reaches a validation, a checkpoint or the end of a job: each is found at once
    assert t.sdc_onsets == t.sdc_detected == t.shadow_detected


def test_overhead_slows_every_step_and_is_its_own_bucket():
    s = spec(hard_per_gpu_hour=0.0, sdc_per_gpu_hour=0.0, shadow=Shadow(0.5, 0.25))
    job = run_job(s)
    assert job.wall_seconds == 3000 * 60 * 1.25 + 120 * 300 + 120 * 20
    assert job.bucket_seconds["shadow"] == 3000 * 15 and job.bucket_seconds["productive"] == 3000 * 60
    assert job.effective_utilization == 180000 / job.wall_seconds
    assert job.mean_step_seconds == 75.0
    state, _ = advance(new_state(s), 3600 * S)
    # every step lasts 1.25 x the base step time: the bucket le = 1.3 x base
    assert state.totals.step_hist[BUCKET_FACTORS.index(1.3)] == state.totals.steps_executed


def _disagreement_at(s, step):
    """A fresh state whose first element of the hard stream, at executed step ``step``, is a disagreement: no
    hard failures and every rank shadowed, so every stop is one (its kind's share is 1)."""
    s = replace(s, hard_per_gpu_hour=0.0, sdc_per_gpu_hour=1e-15, shadow=Shadow(1.0, 0.0))
    state = new_state(s)
    assert state.plan.stop_cumulative[-2] == 0.0  # the hard failure's share
    return replace(state, hard=(0, step))


def test_disagreement_on_a_validation_step_rolls_back_before_validating():
    s = spec(ckpt_interval_steps=50, validation_interval_steps=25, validation_seconds=20.0)
    state, events = advance(_disagreement_at(s, 25), (25 * 60 + 60) * S, trace=True)
    assert [(e.kind, e.cause) for e in events] == [("sdc_detected", "shadow")]
    assert events[0].t_us == (25 * 60 + 60) * S  # the step and the restart: no validation
    t = state.totals
    assert state.step == 0 and not state.corrupted
    assert (t.sdc_detected, t.shadow_detected, t.validations, t.steps_recomputed) == (1, 1, 0, 25)
    assert sum(t.interruptions) == 0


def test_disagreement_on_a_checkpoint_step_does_not_commit():
    s = spec(ckpt_interval_steps=10, validation_interval_steps=0)
    state, _ = advance(_disagreement_at(s, 20), (20 * 60 + 300 + 60) * S)
    assert state.step == state.last_ckpt == 10
    assert (state.totals.checkpoints, state.totals.steps_recomputed) == (1, 10)


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
@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(s=shadow_specs, horizon_steps=st.integers(1, 3000), cuts=st.lists(st.floats(0, 1), max_size=10))
def test_any_partition_gives_identical_state_with_shadow_ranks(s, horizon_steps, cuts):
    check_partitions(s, horizon_steps, cuts)
