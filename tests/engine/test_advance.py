"""The compiled loop for one replica, core.advance: job-end events with their
JobResults, max_jobs stops and drills, the same under any cut of time; every mechanism on it."""

from dataclasses import replace

import pytest
from specs import ORACLE_CONFIGS, spec

from simd.engine import (
    US_PER_SECOND,
    Stragglers,
    advance,
    new_state,
    retarget,
    run_job,
)

S = US_PER_SECOND


ODD = {name: replace(s, validation_interval_steps=(s.validation_interval_steps or 25) + 15)
       for name, s in ORACLE_CONFIGS.items()}  # validation not dividing the checkpoint interval


def _in_calls(state, cuts, **kw):
    events = []
    for c in cuts:
        state, ev = advance(state, max(c, state.clock), **kw)
        events += ev
    return state, events


@pytest.mark.parametrize("name", sorted(ORACLE_CONFIGS) + [f"odd-{n}" for n in sorted(ODD)])
def test_run_job_over_seeds_is_its_first_job_end_in_any_ticks(name):
    """Each seed's JobResult (the job_end event simulate reads), and limit_us cutting some jobs short."""
    base = ODD[name[4:]] if name.startswith("odd-") else ORACLE_CONFIGS[name]
    ideal = int(base.target_steps * base.step_seconds * S)
    for seed in range(25):
        s = replace(base, seed=seed)
        for limit in (None, int(1.3 * ideal)):
            got = run_job(s, limit_us=limit)
            assert got == run_job(s, limit_us=limit, tick_us=ideal // 7 + seed)
            _, events = advance(new_state(s), limit if limit is not None else 50 * ideal, max_jobs=1)
            assert got == (events[0].job if events else None)


def test_many_job_ends_in_one_call_come_out_as_events():
    s = spec(target_steps=7, ckpt_interval_steps=5, validation_interval_steps=3, hard_per_gpu_hour=3e-3,
             sdc_per_gpu_hour=3e-3, stragglers=Stragglers(0.5, 1, 1.2, replace_after_steps=4))
    until = 400 * 75 * S
    got, events = advance(new_state(s), until)
    assert (got, events) == _in_calls(new_state(s), [until // 3, until // 3 + 1, until])
    assert len(events) > 20 and all(e.kind == "job_end" and e.job is not None for e in events)
    assert [e.job.job for e in events] == list(range(len(events)))
    assert sum(e.job.wall_seconds for e in events) * S == got.job_start_t  # the jobs end to end
    assert sum(e.job.interruptions for e in events) == sum(got.job_start.interruptions)


def test_max_jobs_reached_before_the_call_leaves_the_state_at_its_last_job():
    s = spec(target_steps=20, validation_interval_steps=7)
    done, ev = advance(new_state(s), 10**6 * S, max_jobs=2)
    assert len(ev) == 2 and done.clock == done.t < 10**6 * S
    assert advance(done, 2 * 10**6 * S, max_jobs=2) == (done, [])
    assert _in_calls(new_state(s), [10**5 * S, 10**6 * S], max_jobs=2) == (done, ev)


def test_retargeted_state_continues_equal_in_any_cut():
    """A drill (a new epoch of streams, a new plan) mid-job, then on: one call or many."""
    s = spec(validation_interval_steps=40, stragglers=Stragglers(0.5, 1, 1.2, replace_after_steps=40))
    hot = replace(s, hard_per_gpu_hour=2e-3)
    got = retarget(advance(new_state(s), 500 * 60 * S)[0], hot)
    cut = retarget(_in_calls(new_state(s), [77 * 60 * S, 500 * 60 * S])[0], hot)
    assert got == cut
    assert advance(got, 5000 * 60 * S) == _in_calls(cut, [600 * 60 * S, 4000 * 60 * S + 3, 5000 * 60 * S])
    assert got.epoch == 1 and sum(advance(got, 5000 * 60 * S)[0].totals.interruptions) > 0
