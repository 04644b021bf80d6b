"""Asynchronous saves (JobSpec.ckpt_write_seconds, ckpt_write_slowdown; checkpoint.write_seconds and
write_slowdown): a save blocks for its snapshot, then writes; the steps that start while it writes last the
slowdown times their compute (checkpoint bucket); it is a rollback target from the start of the first step after
its write ends; a rollback before that aborts it; a save due while one writes waits for it, and so does the job's
end. Hand-placed failures (the statistical checks are in tests/engine/statistical)."""

from dataclasses import replace

import pytest
from specs import spec

from simd.engine import US_PER_SECOND, advance, new_state, run_job

S = US_PER_SECOND
TINY = 1e-15  # a rate whose next events after a placed one lie ~1e14 steps away

# 60 s steps, a checkpoint every 10 steps blocking 30 s, its write 200 s with steps 1.5x slower meanwhile (90 s):
# the write ends in the third step after the save, which starts at 180 s of it and ends at 270 s
JOB = spec(hard_per_gpu_hour=TINY, sdc_per_gpu_hour=0.0, ckpt_interval_steps=10, validation_interval_steps=0,
           step_seconds=60.0, ckpt_seconds=30.0, restart_seconds=60.0, target_steps=40,
           ckpt_write_seconds=200.0, ckpt_write_slowdown=1.5)
SAVE_END = 10 * 60 + 30  # the first save's snapshot ends
DURABLE = SAVE_END + 3 * 90  # the end of the step in which its write ends (job step 13)


def _hard_at(state, g):
    """``state`` with its next hard failure on executed step ``g``."""
    return replace(state, hard=(state.hard[0], g))


def test_a_save_is_a_rollback_target_from_the_end_of_the_step_its_write_ends_in():
    state = new_state(JOB)
    before, _ = advance(state, (DURABLE - 1) * S)
    assert (before.step, before.last_ckpt, before.write_end) == (12, 0, (SAVE_END + 200) * S)
    assert before.totals.checkpoints == 0
    after, _ = advance(state, (DURABLE + 60) * S)  # the next step, at full speed, has started on a durable save
    assert (after.step, after.last_ckpt, after.write_end) == (14, 10, 0)
    assert after.totals.checkpoints == 1 and after.totals.steps_committed == 10
    # the checkpoint bucket: the blocking, and the three slowed steps' extra 30 s each
    assert after.totals.checkpoint_us == (30 + 3 * 30) * S
    assert after.totals.checkpoint_write_us == 3 * 30 * S and after.totals.checkpoint_wait_us == 0


def test_a_failure_while_the_save_writes_aborts_it_one_after_rolls_back_to_it():
    lost, _ = advance(_hard_at(new_state(JOB), 13), (DURABLE + 60) * S)  # in the step the write ends in
    assert (lost.last_ckpt, lost.totals.saves_aborted, lost.totals.steps_recomputed) == (0, 1, 13)
    assert lost.write_end == 0
    kept, _ = advance(_hard_at(new_state(JOB), 14), (DURABLE + 60 + 60) * S)  # in the first step after it
    assert (kept.last_ckpt, kept.totals.saves_aborted, kept.totals.steps_recomputed) == (10, 0, 4)


def test_a_save_due_while_one_writes_waits_for_it_and_so_does_the_jobs_end():
    # the write lasts 1000 s: ten slowed steps (900 s) and the job waits 100 s at the next checkpoint; the job of 20
    # steps ends on that save, and waits for its whole write
    s = replace(JOB, ckpt_write_seconds=1000.0, target_steps=20)
    job = run_job(s)
    assert job.checkpoints == 2 and job.saves == {"aborted": 0, "failed": 0, "write_seconds": 10 * 30.0,
                                     "wait_seconds": 1100.0}
    assert job.bucket_seconds["checkpoint"] == 2 * 30 + 10 * 30 + 100 + 1000
    assert job.wall_seconds == 20 * 60 + 10 * 30 + 2 * 30 + 100 + 1000
    assert job.bucket_seconds["productive"] == 20 * 60


def test_without_a_write_the_job_is_seed_000s_whatever_the_slowdown():
    s = replace(JOB, ckpt_write_seconds=0.0, ckpt_write_slowdown=3.0, hard_per_gpu_hour=2e-4,
                sdc_per_gpu_hour=1.5e-4, validation_interval_steps=5, target_steps=3000)
    plain = replace(s, ckpt_write_slowdown=1.0)
    for seed in range(5):
        a, b = run_job(replace(s, seed=seed)), run_job(replace(plain, seed=seed))
        assert a == b and a.saves == {}


def test_a_failed_save_costs_its_blocking_and_write_and_is_no_rollback_target():
    # every save fails: nothing is durable, the failure on job step 25 goes back to the job's start (the saves
    # at 10 and 20 failed), which then saves at 10, 20, 30 and 40 (its end) in vain
    s = replace(JOB, ckpt_save_failure=1.0)
    state, _ = advance(_hard_at(new_state(s), 25), 10**6 * S, max_jobs=1)
    assert (state.totals.saves_failed, state.totals.checkpoints, state.totals.steps_recomputed) == (6, 0, 25)
    # blocking saves that fail: the same, with no write
    b, _ = advance(_hard_at(new_state(replace(s, ckpt_write_seconds=0.0, ckpt_write_slowdown=1.0)), 25), 10**6 * S,
                   max_jobs=1)
    assert (b.totals.saves_failed, b.totals.checkpoints, b.totals.steps_recomputed) == (6, 0, 25)
    # a job whose every save fails still ends (its end commits the work) and counts every save
    job = run_job(replace(s, hard_per_gpu_hour=0.0))
    assert job.checkpoints == 0 and job.saves["failed"] == 4
    assert job.bucket_seconds["productive"] == 40 * 60


def test_save_failures_are_drawn_per_save_about_their_probability():
    s = replace(JOB, hard_per_gpu_hour=0.0, target_steps=10_000, ckpt_save_failure=0.25)
    job = run_job(s)
    assert job.checkpoints + job.saves["failed"] == 1000
    assert abs(job.saves["failed"] - 250) < 4 * (1000 * 0.25 * 0.75) ** 0.5


# corrupt loads (JobSpec.ckpt_corrupt_on_load, ckpt_retention): blocking saves every 10 steps, 3 kept, a load
# of 93.6 s
CORRUPT = replace(JOB, ckpt_write_seconds=0.0, ckpt_write_slowdown=1.0, ckpt_load_seconds=93.6, ckpt_retention=3)


def test_every_load_corrupt_falls_back_through_the_kept_checkpoints_to_the_start_paying_each_load():
    # the failure on job step 45 finds the checkpoints at 40, 30 and 20 corrupt (10 is no longer kept): three loads,
    # then the job's start; the steps committed before are recomputed, so each job step is productive once
    s = replace(CORRUPT, ckpt_corrupt_on_load=1.0, target_steps=60)
    state, _ = advance(_hard_at(new_state(s), 45), 10**6 * S, max_jobs=1)
    t = state.totals
    assert (t.loads_corrupt, t.fallbacks_to_start, t.steps_recomputed) == (3, 1, 45)
    assert t.restart_us == round((60 + 3 * 93.6) * S)
    assert t.steps_committed == 60 and t.productive_us == 60 * 60 * S
    assert t.rollback_us == 45 * 60 * S  # the 5 uncommitted steps and the 40 committed ones, recomputed


def test_a_corrupt_newest_checkpoint_falls_back_to_the_one_before():
    # loads found corrupt with probability 1/2: the recovery goes to the newest kept checkpoint that loads; the
    # stream's draws decide which, and the counts agree with where it went
    s = replace(CORRUPT, ckpt_corrupt_on_load=0.5, target_steps=60)
    for seed in range(20):
        state, _ = advance(_hard_at(new_state(replace(s, seed=seed)), 45), round((45 * 60 + 4 * 30 + 60) * S))
        state, _ = advance(state, state.clock + round((3 * 93.6 + 1) * S))
        t = state.totals
        assert state.last_ckpt == {0: 40, 1: 30, 2: 20, 3: 0}[t.loads_corrupt]
        assert t.restart_us == round((60 + min(t.loads_corrupt + 1, 3) * 93.6) * S)
        assert t.fallbacks_to_start == (t.loads_corrupt == 3)


def test_loads_that_are_never_corrupt_give_the_plain_jobs_results():
    """The fallback's machinery (every checkpoint a unit, the ring of kept checkpoints, one draw per load) with a
    corruption that never happens changes no result."""
    base = spec(hard_per_gpu_hour=4e-4, ckpt_load_seconds=93.6, ckpt_write_seconds=700.0, ckpt_write_slowdown=1.2)
    for seed in range(6):
        plain = run_job(replace(base, seed=seed))
        kept = run_job(replace(base, seed=seed, ckpt_corrupt_on_load=1e-300, ckpt_retention=3))
        assert kept.loads == {"corrupt": 0, "fallbacks_to_start": 0}
        assert replace(kept, loads={}) == plain


def test_a_new_step_time_waits_for_the_write_in_flight():
    """A save's commit counts its steps times the step time: a retarget to another step time is refused while a
    write is in flight, accepted once it is durable."""
    from simd.engine import retarget

    writing, _ = advance(new_state(JOB), (SAVE_END + 60) * S)
    assert writing.write_end
    with pytest.raises(ValueError, match="step_seconds can change only with no save writing"):
        retarget(writing, replace(JOB, step_seconds=30.0))
    durable, _ = advance(writing, (DURABLE + 60) * S)
    assert retarget(durable, replace(JOB, step_seconds=30.0)).plan.step_us == 30 * S
