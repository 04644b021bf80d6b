"""The tick logic at its edges, with the failure and SDC draws placed by hand."""

import subprocess
import sys
from dataclasses import replace

from specs import spec

from simd.engine import US_PER_SECOND, advance, new_state, run_job
from simd.engine.hazard import NEVER

S = US_PER_SECOND
TINY = 1e-15  # a rate whose next events after a placed one lie ~1e14 steps away


def _placed(s, hard=NEVER, sdc=NEVER):
    """A fresh state whose next hard failure / SDC candidate is the hard-th / sdc-th executed step."""
    s = replace(s, hard_per_gpu_hour=TINY if hard < NEVER else 0.0, sdc_per_gpu_hour=TINY if sdc < NEVER else 0.0)
    return replace(new_state(s), hard=(0, hard), sdc=(0, sdc))


def test_failure_on_a_checkpoint_step_rolls_back_without_committing():
    s = spec(hard_per_gpu_hour=0.0, sdc_per_gpu_hour=0.0, ckpt_interval_steps=10, validation_interval_steps=0,
             step_seconds=60.0, ckpt_seconds=300.0, restart_seconds=60.0)
    state = _placed(s, hard=20)  # the failure strikes on step 20, a checkpoint step
    state, events = advance(state, (20 * 60 + 300 + 60) * S, trace=True)
    assert [e.kind for e in events] == ["interruption"]
    assert events[0].t_us == (20 * 60 + 300 + 60) * S  # step 10's checkpoint paid, step 20's not
    assert state.step == state.last_ckpt == 10
    t = state.totals
    assert (t.checkpoints, t.steps_committed, t.steps_recomputed) == (1, 10, 10)
    assert t.bucket_us() == {"productive": 600 * S, "rollback": 600 * S, "checkpoint": 300 * S,
                             "validation": 0, "restart": 60 * S, "detection": 0, "straggler": 0,
                             "shadow": 0, "waiting": 0}


def test_sdc_on_a_validation_step_is_detected_at_once():
    s = spec(hard_per_gpu_hour=0.0, sdc_per_gpu_hour=0.0, ckpt_interval_steps=50, validation_interval_steps=25)
    state = _placed(s, sdc=25)
    state, events = advance(state, (25 * 60 + 20 + 60) * S, trace=True)
    assert [e.kind for e in events] == ["sdc_detected"]
    assert state.step == 0 and not state.corrupted
    assert state.totals.steps_recomputed == 25 and state.totals.sdc_baked == 0


def test_sdc_between_validations_is_baked_in_when_validation_does_not_divide_checkpoint():
    s = spec(hard_per_gpu_hour=0.0, sdc_per_gpu_hour=0.0, ckpt_interval_steps=50, validation_interval_steps=40)
    state = _placed(s, sdc=45)  # onset at step 45: the validation at 40 is past, the checkpoint at 50 bakes
    state, events = advance(state, 3600 * S, trace=True)
    assert [e.kind for e in events] == ["sdc_baked"]
    assert state.totals.steps_recomputed == 50 and state.totals.checkpoints == 0


def test_hard_failure_and_sdc_on_the_same_step_is_a_hard_failure():
    s = spec(hard_per_gpu_hour=0.0, sdc_per_gpu_hour=0.0, ckpt_interval_steps=50, validation_interval_steps=25)
    state = _placed(s, hard=7, sdc=7)
    state, events = advance(state, (7 * 60 + 60) * S, trace=True)
    assert [e.kind for e in events] == ["interruption"]
    assert not state.corrupted
    assert state.totals.sdc_onsets == 0  # the failed step's SDC draw is void (seed: `continue` before it)


def test_tick_ending_exactly_on_a_step_boundary_completes_that_step():
    s = spec(hard_per_gpu_hour=0.0, sdc_per_gpu_hour=0.0, validation_interval_steps=0, ckpt_interval_steps=100)
    state, _ = advance(new_state(s), 7 * 60 * S)
    assert state.step == 7 and state.t == state.clock
    state, _ = advance(new_state(s), 7 * 60 * S - 1)
    assert state.step == 6 and state.clock - state.t == 60 * S - 1  # step 7 in flight


def test_job_finishing_inside_a_tick_starts_the_next_job():
    s = spec(hard_per_gpu_hour=0.0, sdc_per_gpu_hour=0.0, target_steps=10, ckpt_interval_steps=5,
             validation_interval_steps=0, ckpt_seconds=30.0)
    job_us = (10 * 60 + 2 * 30) * S
    state, events = advance(new_state(s), job_us + 3 * 60 * S)
    assert [e.kind for e in events] == ["job_end"]
    assert events[0].t_us == job_us
    assert events[0].job.wall_seconds == 660.0 and events[0].job.effective_utilization == 600 / 660
    assert state.totals.jobs_completed == 1 and state.step == 3 and state.last_ckpt == 0


def test_zero_rates_give_the_closed_form_ideal():
    s = spec(hard_per_gpu_hour=0.0, sdc_per_gpu_hour=0.0)  # 3000 steps, ckpt 25/300 s, validation 25/20 s
    job = run_job(s)
    assert job.interruptions == job.sdc_detected == job.sdc_baked == job.recompute_steps == 0
    assert job.wall_seconds == 3000 * 60 + 120 * 300 + 120 * 20
    assert job.effective_utilization == 180000 / job.wall_seconds


def test_rates_so_high_that_nothing_commits_still_advance_time_and_terminate():
    # per-GPU probability 1 per step: every step fails
    s = spec(hard_per_gpu_hour=3600 / 60.0, n_gpus=8)
    state, events = advance(new_state(s), 10**6 * S, trace=True)
    assert state.clock == 10**6 * S
    assert state.totals.checkpoints == 0 and state.step == 0
    assert len(events) == state.totals.interruptions[0] > 0
    assert run_job(s, limit_us=10**5 * S) is None


def test_end_of_job_sdc_is_baked_in_and_void():
    s = spec(hard_per_gpu_hour=0.0, sdc_per_gpu_hour=0.0, target_steps=30, ckpt_interval_steps=25,
             validation_interval_steps=0)
    state = _placed(s, sdc=27)
    state, events = advance(state, 10**5 * S, max_jobs=1)
    job = events[-1].job
    assert job.sdc_baked == 1 and job.recompute_steps == 5
    assert job.bucket_seconds["productive"] == 25 * 60 and job.bucket_seconds["rollback"] == 5 * 60


def test_engine_imports_neither_prometheus_nor_apscheduler():
    code = ("import sys, simd.engine, simd.engine.oracle; "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in "
            "('prometheus_client', 'apscheduler', 'yaml', 'pydantic') or "
            "m in ('simd.daemon.process', 'simd.scenario')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_engine_reads_no_clock_environment_or_global_random():
    """Source check: the engine never imports a clock, os, or uses the global random generator."""
    import re
    from pathlib import Path

    import simd.engine

    forbidden = re.compile(r"^\s*(import|from)\s+(time|datetime|os|sys|socket)\b|np\.random\.(rand|random|seed)\(|"
                           r"random\.(random|seed|randint)\(", re.M)
    for path in Path(simd.engine.__file__).parent.glob("*.py"):
        assert not forbidden.search(path.read_text()), path
