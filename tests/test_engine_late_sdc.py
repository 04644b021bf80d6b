"""Committed SDCs and late detectors (late.py, xwalk.py): the per-step oracle, tick-size invariance, retention."""

from dataclasses import replace

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from specs import llama3_causes, spec
from xspecs import assert_agree, check_partition, extended_specs

from simd.engine import US_PER_SECOND, Stragglers, advance, new_state, run_job
from simd.engine.hazard import NEVER
from simd.engine.late import latency_us
from simd.engine.spec import CommittedSdc, Detector, Hyper

S = US_PER_SECOND
SEEDS = 300
FIELDS = ("effective_utilization", "interruptions", "sdc_detected", "sdc_baked", "recompute_steps", "wall_seconds",
          "mean_step_seconds", "sdc_late_found", "sdc_unrecoverable", "checkpoints_lost", "hyper_activations",
          "hyper_steps")
GUARD = Detector("loss_spike", "lognormal", 600.0, 1.0, 0.5)  # half the SDCs, after ~10 minutes
RIPPLE = Detector("ripple", "uniform", 2 * 86400.0)  # every host once in 2 days
SCANNER = Detector("fleetscanner", "exponential", 86400.0)
BASE = spec(target_steps=1000, sdc_per_gpu_hour=4.0e-4, ckpt_interval_steps=25, validation_interval_steps=0)
CONFIGS = {
    # no validation: every SDC that reaches a checkpoint is committed; three layers find it, retention 4
    "layers_no_validation": replace(BASE, committed_sdc=CommittedSdc((GUARD, RIPPLE, SCANNER), 4)),
    # validation every 40 does not divide checkpoint every 50: some SDCs slip into checkpoints
    "nondividing_retention1": replace(BASE, ckpt_interval_steps=50, validation_interval_steps=40,
                                      committed_sdc=CommittedSdc((SCANNER,), 1)),
    # with hyper-checkpointing, Llama 3 causes (detection and restart times) and stragglers
    "with_hyper_causes_stragglers": replace(
        BASE, causes=llama3_causes("cold"), restart_seconds=388.2, hyper=Hyper(5, 200),
        stragglers=Stragglers(0.5, 1, 1.2, replace_after_steps=300),
        committed_sdc=CommittedSdc((GUARD, Detector("ripple", "uniform", 6 * 3600.0)), 6)),
}


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_engine_matches_per_step_loop_with_committed_sdcs(name):
    assert_agree(name, CONFIGS[name], SEEDS, FIELDS)


def test_configurations_exercise_what_they_claim():
    jobs = {name: [run_job(replace(s, seed=k)) for k in range(60)] for name, s in CONFIGS.items()}
    for name, js in jobs.items():
        assert sum(j.sdc_late_found for j in js) > 5, name
        assert sum(j.sdc_unrecoverable for j in js) > 0, name
    assert sum(j.checkpoints_lost for j in jobs["layers_no_validation"]) > 5
    assert sum(j.checkpoints_lost for j in jobs["nondividing_retention1"]) == 0  # retention 1: nothing to lose
    assert sum(j.sdc_late_found - j.sdc_unrecoverable for j in jobs["nondividing_retention1"]) == 0
    assert sum(j.hyper_activations for j in jobs["with_hyper_causes_stragglers"]) > 10
    finds = {d: sum(j.sdc_found_by_detector[d] for j in jobs["layers_no_validation"]) for d in
             ("loss_spike", "ripple", "fleetscanner")}
    assert all(v > 0 for v in finds.values()), finds


# budget trimmed for the suite's 5-minute limit (hypothesis draws anew on every run, so coverage adds up)
@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(s=extended_specs(late=True), horizon_steps=st.integers(1, 1500), cuts=st.lists(st.floats(0, 1), max_size=10))
def test_any_partition_gives_identical_state(s, horizon_steps, cuts):
    check_partition(s, int(horizon_steps * s.step_seconds * S * 1.7), cuts)


def test_latency_inverse_transforms():
    assert latency_us("exponential", 100.0, 0.0, 1.0) == 0
    assert latency_us("exponential", 1e6, 0.0, 0.5) == round(1e6 * 0.6931471805599453)
    assert latency_us("lognormal", 1e6, 1.0, 0.5) == 1_000_000  # the median
    assert latency_us("lognormal", 1e6, 0.0, 0.01) == 1_000_000  # sigma 0: a fixed latency
    assert latency_us("uniform", 1e6, 0.0, 0.25) == 250_000
    with pytest.raises(ValueError, match="unknown latency distribution"):
        latency_us("weibull", 1.0, 0.0, 0.5)


# Hand-placed: checkpoints every 25 steps (300 s), no validation, 60 s steps, restart 60 s; one SDC candidate
# on executed step 30; one detector with a fixed latency (lognormal, sigma 0). The onset step ends at
# 30 * 60 + 300 = 2100 s; the checkpoint at 50 commits the SDC (baked in).
def _placed(retention, latency_s, sdc=30, hard=NEVER, **over):
    detector = Detector("fixed", "lognormal", latency_s)
    fields = dict(hard_per_gpu_hour=1e-15 if hard < NEVER else 0.0, sdc_per_gpu_hour=1e-15, target_steps=1000,
                  ckpt_interval_steps=25, validation_interval_steps=0,
                  committed_sdc=CommittedSdc((detector,), retention))
    s = spec(**{**fields, **over})
    return replace(new_state(s), hard=(0, hard), sdc=(0, sdc))


def test_a_late_find_rolls_back_to_the_newest_checkpoint_older_than_the_onset():
    # found 3000 s after the onset step's end (5100 s): at the end of step 75 (75 * 60 + 2 * 300 = 5100 s)
    state, events = advance(_placed(retention=3, latency_s=3000.0), 5160 * S, trace=True)
    assert [(e.kind, e.t_us) for e in events] == [("sdc_baked", 3600 * S), ("sdc_late_found", 5160 * S)]
    assert events[1].cause == "fixed"
    t = state.totals
    assert (state.step, state.last_ckpt, state.corrupted) == (25, 25, False)
    assert (t.sdc_baked, t.sdc_late_found, t.sdc_unrecoverable, t.checkpoints_lost, t.detector_finds) == \
        (1, 1, 0, 1, (1,))
    assert (t.checkpoints, t.steps_committed, t.steps_recomputed) == (2, 25, 50)
    assert t.productive_us == 25 * 60 * S and t.rollback_us == 50 * 60 * S and state.pending_us == 0


def test_an_sdc_that_outlives_retention_is_unrecoverable():
    # retention 1: the only retained checkpoint (50) holds the SDC: back to it, the SDC accepted
    state, events = advance(_placed(retention=1, latency_s=3000.0), 5160 * S, trace=True)
    assert [e.kind for e in events] == ["sdc_baked", "sdc_unrecoverable"]
    t = state.totals
    assert (state.step, state.last_ckpt, state.corrupted) == (50, 50, False)
    assert (t.sdc_late_found, t.sdc_unrecoverable, t.checkpoints_lost) == (1, 1, 0)
    assert (t.steps_committed, t.steps_recomputed) == (50, 25)  # steps 26..50 kept, 51..75 lost
    # retention 2 with the SDC in checkpoints 50, 75, 100: back to 75, the oldest retained; 100 is lost
    # (found at the end of step 101: 2100 s + 5000 s = 7100 s falls in it, 6900 .. 7260 s with checkpoint 100)
    state, _ = advance(_placed(retention=2, latency_s=5000.0), 7320 * S)
    t = state.totals
    assert (t.sdc_unrecoverable, t.checkpoints_lost, t.steps_committed) == (1, 1, 75)


def test_validation_still_catches_an_sdc_before_a_checkpoint():
    state, events = advance(_placed(retention=3, latency_s=10**6, validation_interval_steps=10), 10**5 * S,
                            trace=True)
    assert [e.kind for e in events][:1] == ["sdc_detected"]  # at the validation of step 30
    assert state.totals.sdc_baked == 0 and state.totals.sdc_late_found == 0


def test_a_committed_sdc_survives_a_hard_failure():
    state = _placed(retention=3, latency_s=3000.0, hard=60)  # fails on step 60, after checkpoint 50
    # back to 50 (the SDC in it) at 4260 s; the deadline 5100 s is the end of job step 64: back to 25
    state, events = advance(state, 5160 * S, trace=True)
    assert [e.kind for e in events] == ["sdc_baked", "interruption", "sdc_late_found"]
    assert (state.step, state.last_ckpt, state.totals.steps_recomputed) == (25, 25, 10 + 39)


def test_an_sdc_present_at_the_end_of_the_job_is_baked_in_once_and_void_since_the_clean_checkpoint():
    state, events = advance(_placed(retention=3, latency_s=10**7, target_steps=60), 10**5 * S, max_jobs=1)
    job = events[-1].job
    assert job.sdc_baked == 1 and job.recompute_steps == 35 and job.checkpoints == 2
    assert job.bucket_seconds["productive"] == 25 * 60


# budget trimmed for the suite's 5-minute limit (hypothesis draws anew on every run, so coverage adds up)
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(s=extended_specs(), horizon_steps=st.integers(1, 3000), cuts=st.lists(st.floats(0, 1), max_size=6))
def test_fast_loop_equals_the_segment_walk(s, horizon_steps, cuts):
    """xwalk.run (locals, many segments per call; plans without stragglers) and xwalk.segment (one at a time,
    forced by vectorize=False) compute the identical trajectory, events included."""
    horizon = int(horizon_steps * s.step_seconds * S * 1.7)
    fast, slow = new_state(s), new_state(s)
    for c in sorted(int(c * horizon) for c in cuts) + [horizon]:
        fast, fast_events = advance(fast, c, trace=True)
        slow, slow_events = advance(slow, c, trace=True, vectorize=False)
        assert fast == slow
        assert fast_events == slow_events


def test_block_draws_equal_the_single_draws():
    """late.Draws (a block of candidates at a time, what the walk uses) gives late.draw's values for any
    increasing sequence of SDC candidates, across block boundaries."""
    from simd.engine.late import Draws, draw
    from simd.engine.spec import compile_spec

    p = compile_spec(CONFIGS["layers_no_validation"])
    cache = Draws(p)
    for i in (0, 1, 5, 63, 64, 65, 200, 201, 1000, 10**6):
        assert cache.draw(i, 12345 * S) == draw(p, i, 12345 * S), i
    assert Draws(compile_spec(replace(BASE, committed_sdc=CommittedSdc((), 3)))).draw(7, 0) == (NEVER, 0)
