"""The compiled segment walk for one replica (simd.engine.single), core.advance's path wherever it ran
walk.segment: the Python walk's states, totals and job-end events bit for bit, under any cut of time."""

from dataclasses import replace

import pytest
from single_cases import STRAGGLERS, _fast, _python_walk_refused, _walk
from specs import ORACLE_CONFIGS, spec

from simd.engine import (
    US_PER_SECOND,
    Accelerator,
    Shadow,
    Stragglers,
    advance,
    core,
    new_state,
    retarget,
    run_job,
)
from simd.engine.spec import Hyper

S = US_PER_SECOND


ODD = {name: replace(s, validation_interval_steps=(s.validation_interval_steps or 25) + 15)
       for name, s in ORACLE_CONFIGS.items()}  # validation not dividing the checkpoint interval


@pytest.mark.parametrize("name", sorted(ORACLE_CONFIGS) + [f"odd-{n}" for n in sorted(ODD)])
def test_run_job_over_seeds_equals_the_python_walk(name):
    """Each seed's JobResult (the job_end event simulate reads), and limit_us cutting some jobs short."""
    base = ODD[name[4:]] if name.startswith("odd-") else ORACLE_CONFIGS[name]
    ideal = base.target_steps * base.step_seconds * S
    for seed in range(25):
        s = replace(base, seed=seed)
        for limit in (None, int(1.3 * ideal)):
            with _python_walk_refused():
                got = run_job(s, limit_us=limit)
            assert got == run_job(s, limit_us=limit, compiled=False)


def test_many_job_ends_in_one_call_come_out_as_events():
    s = spec(target_steps=7, ckpt_interval_steps=5, validation_interval_steps=3, hard_per_gpu_hour=3e-3,
             sdc_per_gpu_hour=3e-3, stragglers=Stragglers(0.5, 1, 1.2, replace_after_steps=4))
    until = 400 * 75 * S
    got, events = _fast(new_state(s), until)
    assert (got, events) == _walk(new_state(s), until)
    assert len(events) > 20 and all(e.kind == "job_end" and e.job is not None for e in events)
    assert [e.job.job for e in events] == list(range(len(events)))


def test_max_jobs_reached_before_the_call_leaves_the_state_at_its_last_job():
    s = spec(target_steps=20, validation_interval_steps=7)
    done, ev = _fast(new_state(s), 10**6 * S, max_jobs=2)
    assert len(ev) == 2 and done.clock == done.t < 10**6 * S
    assert _fast(done, 2 * 10**6 * S, max_jobs=2) == _walk(done, 2 * 10**6 * S, max_jobs=2) == (done, [])


def test_retargeted_state_continues_equal():
    """A drill (a new epoch of streams, a new plan) mid-job, then on."""
    s = spec(validation_interval_steps=40, stragglers=Stragglers(0.5, 1, 1.2, replace_after_steps=40))
    got, ref = _fast(new_state(s), 500 * 60 * S)[0], _walk(new_state(s), 500 * 60 * S)[0]
    assert got == ref
    hot = replace(s, hard_per_gpu_hour=2e-3)
    got, ref = retarget(got, hot), retarget(ref, hot)
    assert _fast(got, 5000 * 60 * S) == _walk(ref, 5000 * 60 * S)


def test_every_mechanism_is_compiled_and_trace_stays_on_the_python_walk():
    odd = spec(validation_interval_steps=40)
    for other in (odd, replace(odd, shadow=Shadow(0.5, 0.05)), replace(odd, hyper=Hyper(5, 100)),
                  replace(odd, fleet=(Accelerator("a", 768, 2.0e-4, 1.5e-4), Accelerator("b", 256, 1e-3, 6e-4)))):
        with _python_walk_refused():
            advance(new_state(other), 3 * 3000 * 75 * S)  # neither Python walk runs
    until = 3 * 3000 * 75 * S  # three jobs or so
    traced, events = advance(new_state(odd), until, trace=True)
    assert {e.kind for e in events} > {"job_end"}  # interruptions and SDC verdicts: the walk's events
    fast, fast_events = advance(new_state(odd), until)
    assert fast == traced and fast_events == [e for e in events if e.kind == "job_end"]


def test_compiled_false_runs_the_python_walk_with_the_same_state():
    """compiled=False runs the Python segment walk (the numpy batch it ran on plans whose validation divides the
    checkpoint interval is retired: the compiled walk was faster per event and drew each step once); the
    compiled walk and the Python one give the same state."""
    for s in (spec(), replace(spec(), stragglers=STRAGGLERS[2])):  # validation 25 divides checkpoint 25
        assert s.validation_interval_steps
        until = 6000 * 75 * S
        with _python_walk_refused():
            fast = advance(new_state(s), until)  # the Python walk may not run
        walked = []
        saved = core.segment

        def spy(*a, walked=walked, saved=saved):
            walked.append(1)
            return saved(*a)

        core.segment = spy
        try:
            python = advance(new_state(s), until, compiled=False)
        finally:
            core.segment = saved
        assert walked, "compiled=False runs the Python walk"
        assert fast == python == _walk(new_state(s), until)
