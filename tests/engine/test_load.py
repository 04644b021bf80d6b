"""A recovery's checkpoint load (JobSpec.ckpt_load_seconds, checkpoint.load_seconds): every rollback to a
checkpoint at a step > 0 pays it on top of its restart, in the restart bucket; one to the job's start (step 0)
loads nothing. Hand-placed failures and SDCs (the statistical checks are in tests/engine/statistical)."""

from dataclasses import replace

from specs import spec

from simd.engine import US_PER_SECOND, advance, new_state
from simd.engine.spec import CommittedSdc, Detector

S = US_PER_SECOND
TINY = 1e-15  # a rate whose next events after a placed one lie ~1e14 steps away
LOAD = 93.6  # TrainMover's checkpoint load (simd/models/recovery.py)

# 60 s steps, a checkpoint every 10 steps (300 s), no validation, restart 60 s, load 93.6 s
JOB = spec(hard_per_gpu_hour=TINY, sdc_per_gpu_hour=0.0, ckpt_interval_steps=10, validation_interval_steps=0,
           step_seconds=60.0, ckpt_seconds=300.0, restart_seconds=60.0, ckpt_load_seconds=LOAD)


def _hard_at(state, g):
    """``state`` with its next hard failure on executed step ``g``."""
    return replace(state, hard=(state.hard[0], g))


def test_a_failure_before_the_first_checkpoint_loads_nothing_one_after_it_pays_the_load():
    state = _hard_at(new_state(JOB), 5)  # job step 5: back to the job's start
    first = 5 * 60 + 60
    state, events = advance(state, first * S, trace=True)
    assert [(e.kind, e.t_us) for e in events] == [("interruption", first * S)]
    assert (state.step, state.totals.restart_us) == (0, 60 * S)
    # executed steps 6 .. 20 are job steps 1 .. 15: the checkpoint at 10 among the quiet steps, the failure at 15
    state = _hard_at(state, 20)
    second = first + 15 * 60 + 300 + 60 + LOAD
    cut, _ = advance(state, round(second * S) - 1)  # the unit with its load does not fit: not applied
    assert (cut.step, cut.totals.interruptions) == (14, state.totals.interruptions)
    state, events = advance(state, round(second * S), trace=True)
    assert [(e.kind, e.t_us) for e in events] == [("interruption", round(second * S))]
    assert (state.step, state.last_ckpt) == (10, 10)
    assert state.totals.restart_us == round((60 + 60 + LOAD) * S)
    assert state.totals.steps_recomputed == 5 + 5


def test_the_load_moves_only_the_restart_bucket_and_the_clock():
    # one failure, on job step 15 (back to 10), then the job to its end
    loaded, _ = advance(_hard_at(new_state(JOB), 15), 10**6 * S, max_jobs=1)
    plain, _ = advance(_hard_at(new_state(replace(JOB, ckpt_load_seconds=0.0)), 15), 10**6 * S, max_jobs=1)
    assert loaded.totals.jobs_completed == plain.totals.jobs_completed == 1
    assert loaded.totals.restart_us - plain.totals.restart_us == loaded.clock - plain.clock == round(LOAD * S)
    assert loaded.totals.load_us == round(LOAD * S) and plain.totals.load_us == 0  # the restart bucket's load part
    assert replace(loaded.totals, restart_us=0, load_us=0) == replace(plain.totals, restart_us=0)


def test_an_sdc_detection_pays_the_load_of_the_checkpoint_it_rolls_back_to():
    # validation every 5 steps: an SDC on step 3 is found at 5 (back to 0: no load), one on step 13 at 15 (back
    # to 10: the load)
    s = replace(JOB, hard_per_gpu_hour=0.0, sdc_per_gpu_hour=TINY, validation_interval_steps=5,
                validation_seconds=20.0)
    state = replace(new_state(s), sdc=(0, 3))
    t1 = 5 * 60 + 20 + 60
    state, events = advance(state, t1 * S, trace=True)
    assert [(e.kind, e.t_us) for e in events] == [("sdc_detected", t1 * S)]
    assert state.totals.restart_us == 60 * S
    state = replace(state, sdc=(state.sdc[0], 5 + 13))
    t2 = t1 + 15 * 60 + 3 * 20 + 300 + 60 + LOAD
    state, events = advance(state, round(t2 * S), trace=True)
    assert [(e.kind, e.t_us) for e in events] == [("sdc_detected", round(t2 * S))]
    assert (state.step, state.totals.restart_us) == (10, round((120 + LOAD) * S))


def _committed(onset, retention, latency_s):
    """Committed SDCs (late.py): checkpoints every 25 steps, one SDC candidate on executed step ``onset``, one
    detector with a fixed latency (lognormal, sigma 0)."""
    s = replace(JOB, hard_per_gpu_hour=0.0, sdc_per_gpu_hour=TINY, target_steps=1000, ckpt_interval_steps=25,
                committed_sdc=CommittedSdc((Detector("fixed", "lognormal", latency_s),), retention))
    return replace(new_state(s), sdc=(0, onset))


def test_a_late_find_pays_the_load_unless_it_goes_back_to_the_jobs_start():
    # onset on step 30, committed at 50, found at the end of step 75: back to 25, loaded
    state, events = advance(_committed(30, 3, 3000.0), round((5160 + LOAD) * S), trace=True)
    assert [e.kind for e in events] == ["sdc_baked", "sdc_late_found"]
    assert (state.step, state.totals.restart_us) == (25, round((60 + LOAD) * S))
    # onset on step 10 (ends at 600 s), committed at 25, found 1500 s later at the end of step 30 (30 * 60 + 300):
    # back to the job's start, no load
    state, events = advance(_committed(10, 3, 1500.0), (30 * 60 + 300 + 60) * S, trace=True)
    assert [e.kind for e in events] == ["sdc_baked", "sdc_late_found"]
    assert (state.step, state.totals.restart_us) == (0, 60 * S)


def test_an_unrecoverable_sdc_pays_the_load_of_the_oldest_retained_checkpoint():
    # onset on step 10 (ends at 600 s), committed at 25 and 50 (retention 2: the job's start is gone), found 3300 s
    # later at the end of step 55 (55 * 60 + 2 * 300): on from 25 with the SDC accepted, loaded
    t = 55 * 60 + 2 * 300 + 60 + LOAD
    state, events = advance(_committed(10, 2, 3300.0), round(t * S), trace=True)
    assert [e.kind for e in events] == ["sdc_baked", "sdc_unrecoverable"]
    assert (state.step, state.totals.restart_us) == (25, round((60 + LOAD) * S))


def test_a_failure_with_no_checkpoint_yet_after_a_job_end_loads_nothing():
    s = replace(JOB, target_steps=12)  # one job: 12 steps, checkpoint at 10; the next job's step 3 fails
    state, _ = advance(new_state(s), (12 * 60 + 300) * S, max_jobs=1)
    assert state.totals.jobs_completed == 1 and state.step == 0
    state = _hard_at(state, 15)
    state, events = advance(state, (15 * 60 + 300 + 60) * S, trace=True)
    assert [e.kind for e in events] == ["interruption"]
    assert (state.step, state.totals.restart_us) == (0, 60 * S)
