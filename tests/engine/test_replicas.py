"""The batch path over replicas (simd.engine.replicas): the single-replica engine's states, bit for bit, under
any cut of time into calls."""

from dataclasses import fields, replace

import pytest
from replicas_cases import _replicas
from specs import KERNEL_STRAGGLERS, ORACLE_CONFIGS, SPECS, llama3_causes, spec

from simd.engine import US_PER_SECOND, Stragglers, advance, new_state, retarget, run_job
from simd.engine.replicas import (
    Replicas,
    advance_replicas,
    new_replicas,
    retarget_replicas,
    run_jobs,
    state_columns,
)
from simd.engine.spec import CommittedSdc
from simd.engine.state import State

S = US_PER_SECOND


@pytest.mark.parametrize("name", sorted(ORACLE_CONFIGS))
def test_run_jobs_equals_run_job_on_the_oracle_configurations(name):
    """Bit for bit, so the batch path agrees with the single-replica engine (and through it with seed 000's
    per-step loop, tests/engine/statistical/test_oracle.py) within any number of standard errors."""
    specs = [replace(ORACLE_CONFIGS[name], seed=k) for k in range(40)]
    limit = 10**4 * 3000 * 60 * S
    assert run_jobs(specs, limit) == [run_job(x, limit_us=limit) for x in specs]


def test_run_jobs_reports_a_job_cut_by_the_limit_as_none():
    specs = [spec(seed=k, target_steps=3000) for k in range(3)]
    limit = 2000 * 60 * S  # less than the failure-free job
    assert run_jobs(specs, limit) == [None, None, None] == [run_job(x, limit_us=limit) for x in specs]


def test_retargeted_replicas_stay_equal():
    """A drill changes the parameters of every replica (a new epoch of streams) at a tick boundary."""
    s = spec(stragglers=Stragglers(0.5, 1, 1.2, replace_after_steps=40))
    states = advance_replicas(_replicas(s, 3), 500 * 60 * S)
    hot = [retarget(x, replace(x.plan.spec, hard_per_gpu_hour=2e-3)) for x in states]
    assert advance_replicas(hot, 2000 * 60 * S) == tuple(advance(x, 2000 * 60 * S)[0] for x in hot)


def test_replicas_of_different_configurations_fall_back_to_one_at_a_time():
    states = [new_state(spec(seed=1)), new_state(spec(seed=2, ckpt_interval_steps=50))]
    assert advance_replicas(states, 10**6 * S) == tuple(advance(x, 10**6 * S)[0] for x in states)


def test_cannot_advance_backwards():
    states = advance_replicas(_replicas(spec(), 2), 10**5 * S)
    with pytest.raises(ValueError, match="backwards"):
        advance_replicas(states, 10 * S)


@pytest.mark.parametrize("stragglers", KERNEL_STRAGGLERS[:2])
def test_continued_calls_read_nothing_in_between_and_equal_the_single_replica_engine(stragglers):
    """The daemon's way: each call continues from the previous result's arrays and reads no State in between;
    jobs end in some calls and not others, so a replica's job_start comes from a call before the last one."""
    s = spec(target_steps=120, hard_per_gpu_hour=2e-4, stragglers=stragglers, seed=7)
    states = _replicas(s, 5)
    cuts = [k * 37 * 60 * S for k in range(1, 40)]
    got = advance_replicas(states, cuts[0])
    for c in cuts[1:]:
        got = advance_replicas(got, c)
    ended = got.batch.ended
    assert ended.any() and got.batch.tot[:, got.batch.lay.start["jobs_completed"]].min() >= 1
    assert got == tuple(advance(x, cuts[-1])[0] for x in states)


def test_states_handed_out_keep_their_values_when_the_next_call_continues():
    s = spec(target_steps=50, stragglers=KERNEL_STRAGGLERS[1], seed=3)
    first = advance_replicas(_replicas(s, 3), 100 * 60 * S)
    second = advance_replicas(first, 400 * 60 * S)
    third = advance_replicas(first, 400 * 60 * S)  # the same call again from the same arrays
    assert first == tuple(advance(x, 100 * 60 * S)[0] for x in _replicas(s, 3))
    assert second == third == tuple(advance(x, 400 * 60 * S)[0] for x in _replicas(s, 3))
    assert first[0].clock == 100 * 60 * S and second[0].job_start is not first[0].job_start


def _same(got, expected) -> None:
    """State for state, and plan for plan with its streams (State equality compares the plans' specs only)."""
    from specs import plan_fields

    assert tuple(got) == tuple(expected)
    assert [plan_fields(x.plan) for x in got] == [plan_fields(x.plan) for x in expected]


SEEDS = [3, 4, 5, 2**32 + 9, 40]


@pytest.mark.parametrize("name", sorted(SPECS))
def test_new_replicas_are_new_states(name):
    s = SPECS[name]
    got = new_replicas(replace(s, seed=1), SEEDS)
    expected = tuple(new_state(replace(s, seed=k)) for k in SEEDS)
    _same(got, expected)
    assert isinstance(got, Replicas)  # every plan on a kernel's arrays
    until = 1500 * 60 * S
    _same(advance_replicas(got, until), tuple(advance(x, until)[0] for x in expected))
    assert new_replicas(s, []) == ()


HOT = dict(hard_per_gpu_hour=2e-3, sdc_per_gpu_hour=1e-3, ckpt_seconds=100.0)


@pytest.mark.parametrize("name", sorted(SPECS))
@pytest.mark.parametrize("packed", [True, False])
def test_retarget_replicas_is_retarget(name, packed):
    s = SPECS[name]
    states = advance_replicas(new_replicas(s, SEEDS), 400 * 60 * S)
    if not packed:
        states = tuple(states)
    hot = replace(s, **HOT)
    got = retarget_replicas(states, hot)
    expected = tuple(retarget(x, replace(hot, seed=x.plan.spec.seed)) for x in states)
    _same(got, expected)
    assert isinstance(got, Replicas) == packed
    again = retarget_replicas(got, s)  # and back (epoch 2)
    expected = tuple(retarget(x, replace(s, seed=x.plan.spec.seed)) for x in expected)
    _same(again, expected)
    until = 1500 * 60 * S
    _same(advance_replicas(again, until), tuple(advance(x, until)[0] for x in expected))


def test_retarget_replicas_switching_stragglers_books_the_histogram_as_core():
    s = spec(target_steps=200, hard_per_gpu_hour=5e-4)
    states = advance_replicas(new_replicas(s, SEEDS), 300 * 60 * S)
    for target in (replace(s, stragglers=KERNEL_STRAGGLERS[2]), s):
        expected = tuple(retarget(x, replace(target, seed=x.plan.spec.seed)) for x in states)
        states = retarget_replicas(states, target)
        _same(states, expected)
        states = advance_replicas(states, states[0].clock + 200 * 60 * S)
        _same(states, tuple(advance(x, states[0].clock)[0] for x in expected))
        assert sum(states[0].totals.step_hist) >= states[0].totals.steps_executed // 2


def test_retarget_replicas_checks_every_replica_as_core_does():
    s = spec(target_steps=3000, ckpt_interval_steps=25, validation_interval_steps=25)
    until = 300 * 60 * S
    at = {x.plan.spec.seed: x for x in advance_replicas(new_replicas(s, SEEDS), until)}
    seeds = sorted(SEEDS, key=lambda k: (at[k].step, at[k].last_ckpt))  # the first replica passes core's checks
    states = advance_replicas(new_replicas(s, seeds), until)
    steps = [x.step for x in states]
    assert steps[0] < max(steps)  # so the failing check is another replica's
    with pytest.raises(ValueError, match=f"target_steps {steps[0]} is behind the job's step {max(steps)}"):
        retarget_replicas(states, replace(s, target_steps=steps[0]))
    committed = replace(s, validation_interval_steps=0, committed_sdc=CommittedSdc((), 2))
    states = advance_replicas(new_replicas(committed, seeds), until + 7)
    assert max(x.pending_us for x in states) > 0
    with pytest.raises(ValueError, match="step_seconds can change on a plan with committed SDCs only"):
        retarget_replicas(states, replace(committed, step_seconds=90.0))
    with pytest.raises(ValueError, match="cannot change the failure causes"):
        retarget_replicas(states, replace(s, causes=llama3_causes()))


def test_retarget_replicas_of_mixed_epochs_is_core_one_by_one():
    s = spec()
    states = list(new_replicas(s, SEEDS))
    states[1] = retarget(states[1], replace(s, seed=SEEDS[1]))
    hot = replace(s, **HOT)
    _same(retarget_replicas(states, hot), tuple(retarget(x, replace(hot, seed=x.plan.spec.seed)) for x in states))


@pytest.mark.parametrize("stragglers", KERNEL_STRAGGLERS[:3])
def test_state_columns_of_the_arrays_are_the_states_fields(stragglers):
    """Replicas' columns (read from its arrays: jobs ended in a call or not, the histogram booked without
    stragglers) equal those of the same States as a tuple."""
    s = spec(target_steps=60, hard_per_gpu_hour=1e-3, stragglers=stragglers, seed=5)
    got = advance_replicas(new_replicas(s, list(range(5, 13))), 90 * 60 * S)
    ended = got.batch.ended
    assert ended.any() and not ended.all()
    cols = state_columns(got)
    assert cols == state_columns(tuple(got))
    assert cols["hard"][2] == list(got[2].hard) and cols["totals"]["step_hist"][3] == list(got[3].totals.step_hist)
    assert set(cols) == {f.name for f in fields(State)} - {"plan"}
