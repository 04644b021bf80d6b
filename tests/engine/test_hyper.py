"""Hyper-checkpointing (hyper.py, loop.py): the per-step oracle, tick-size invariance, where the checkpoints fall."""

from dataclasses import replace

from hyper_cases import CONFIGS
from specs import spec

from simd.engine import US_PER_SECOND, advance, new_state, run_job
from simd.engine.hazard import NEVER
from simd.engine.spec import Hyper

S = US_PER_SECOND


def test_configurations_exercise_what_they_claim():
    jobs = {name: [run_job(replace(s, seed=k)) for k in range(40)] for name, s in CONFIGS.items()}
    for name, js in jobs.items():
        assert sum(j.hyper_activations for j in js) > 10, name
        assert sum(j.hyper_steps for j in js) > 1000, name
    assert sum(j.sdc_baked for j in jobs["optimized_hyper5"]) > 0
    assert sum(j.sdc_baked for j in jobs["dividing_causes_stragglers"]) == 0
    assert sum(j.sdc_baked for j in jobs["no_validation"]) > 0


def _placed(s, sdc):
    """A fresh state whose only SDC candidate is executed step ``sdc`` (no hard failures)."""
    s = replace(s, hard_per_gpu_hour=0.0, sdc_per_gpu_hour=1e-15)
    return replace(new_state(s), hard=(0, NEVER), sdc=(0, sdc))


def test_hyper_checkpoints_are_anchored_at_the_rollback_point():
    # checkpoint and validate every 25 steps; SDC at step 30, detected by the validation at 50 -> back to 25.
    # The window: executed steps 51..150 (job steps 26..125), checkpoints at 25 + 7k: 32, 39, ..., 123 (14).
    s = spec(target_steps=1000, ckpt_interval_steps=25, validation_interval_steps=25, hyper=Hyper(7, 100))
    state = _placed(s, sdc=30)
    # steps, checkpoints 25 and 32..123, validations 25, 50 and (again) 50, 75, 100, 125, one restart
    t_150 = 150 * 60 + (1 + 14) * 300 + 6 * 20 + 60
    state, events = advance(state, t_150 * S, trace=True)
    assert [e.kind for e in events] == ["sdc_detected"]
    assert (state.g, state.step, state.last_ckpt) == (150, 125, 123)
    t = state.totals
    assert (t.checkpoints, t.hyper_activations, t.hyper_steps, t.validations) == (15, 1, 100, 6)
    assert state.hyper_end == 150 and state.hyper_anchor == 25
    # after the window: the next checkpoint is the next multiple of 25 (150), not 123 + 7
    state, _ = advance(state, (t_150 + 25 * 60 + 300 + 20) * S)
    assert (state.step, state.last_ckpt, state.totals.checkpoints, state.totals.hyper_steps) == (150, 150, 16, 100)


def test_window_longer_than_the_job_closes_at_the_job_end():
    s = spec(target_steps=100, ckpt_interval_steps=25, validation_interval_steps=25, hyper=Hyper(7, 10**6))
    state = _placed(s, sdc=30)
    state, events = advance(state, 10**7 * S, max_jobs=1)
    job = events[-1].job
    # after the detection at 50 (back to 25): checkpoints at 32, 39, ..., 95 (10); the job ends at step 100
    assert job.checkpoints == 1 + 10 and job.hyper_activations == 1
    assert job.hyper_steps == 75  # job steps 26..100, all under hyper
    assert state.hyper_end <= state.g  # closed: the next job starts on the normal interval
    state, events = advance(state, 10**7 * S, max_jobs=2)
    assert events[-1].job.checkpoints == 4 and events[-1].job.hyper_steps == 0


def test_a_detection_inside_the_window_opens_it_again_without_a_second_activation():
    s = spec(target_steps=1000, ckpt_interval_steps=25, validation_interval_steps=25, hyper=Hyper(5, 100),
             hard_per_gpu_hour=0.0, sdc_per_gpu_hour=1e-15)
    state = replace(new_state(s), hard=(0, NEVER), sdc=(0, 30))
    state, _ = advance(state, (50 * 60 + 300 + 2 * 20 + 60) * S)  # detected at 50, window to g = 150
    assert state.hyper_end == 150
    # a second SDC on executed step 60 (job step 35) is baked in at the hyper checkpoint 35, back to 30
    state = replace(state, sdc=(1, 60))
    state, events = advance(state, state.clock + (10 * 60 + 2 * 300 + 60) * S, trace=True)
    assert [e.kind for e in events] == ["sdc_baked"]
    assert state.totals.hyper_activations == 1 and state.hyper_end == 160 and state.hyper_anchor == 30
