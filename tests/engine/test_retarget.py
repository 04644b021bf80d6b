"""retarget(): parameter changes at a simulated time (drills), keeping counters and invariances."""

import math
from dataclasses import replace

import pytest
from specs import llama3_causes, spec

from simd.engine import US_PER_SECOND, advance, new_state, retarget

HOUR = 3600 * US_PER_SECOND


def test_counters_carry_over_and_buckets_still_sum():
    base = spec(seed=2)
    state, _ = advance(new_state(base), 30 * HOUR + 17)
    before = state.totals
    storm = retarget(state, replace(base, hard_per_gpu_hour=base.hard_per_gpu_hour * 10))
    assert storm.totals == before and storm.clock == state.clock and storm.epoch == 1
    after, _ = advance(storm, 60 * HOUR)
    assert sum(after.totals.bucket_us().values()) + after.in_flight_us() == after.clock
    assert after.totals.steps_executed >= before.steps_executed


def test_rate_factor_multiplies_the_interruption_rate():
    base = spec(n_gpus=16384, hard_per_gpu_hour=2e-5, sdc_per_gpu_hour=0.0, ckpt_interval_steps=10,
                validation_interval_steps=0, ckpt_seconds=10.0, step_seconds=10.0, target_steps=10**9)
    state, _ = advance(new_state(base), 1000 * HOUR)
    n0 = sum(state.totals.interruptions)
    storm, _ = advance(retarget(state, replace(base, hard_per_gpu_hour=2e-4)), 1100 * HOUR)
    n1 = sum(storm.totals.interruptions) - n0
    # expected per hour of wall: hazard per step / step seconds, times the fraction of time spent stepping
    assert n0 > 200 and n1 > 200
    ratio = (n1 / 100) / (n0 / 1000)
    se = ratio * math.sqrt(1 / n0 + 1 / n1)
    # ten times the rate, but more of the time is then spent restarting: the ratio is a bit under 10
    assert 7.0 < ratio < 10 + 4 * se


def test_tick_invariance_after_a_retarget():
    base = spec(seed=5, causes=llama3_causes("warm"))
    mid, _ = advance(new_state(base), 20 * HOUR + 12345)
    changed = retarget(mid, replace(base, sdc_per_gpu_hour=5e-3, ckpt_seconds=900.0))
    whole, ev_whole = advance(changed, 50 * HOUR, trace=True)
    walk, _ = advance(changed, 50 * HOUR, trace=True, compiled=False)
    parts, ev_parts = changed, []
    for t in (21 * HOUR, 21 * HOUR + 1, 33 * HOUR, 50 * HOUR):
        parts, ev = advance(parts, t, trace=True)
        ev_parts += ev
    assert whole == walk == parts and ev_whole == ev_parts


def test_retarget_back_restores_the_parameters():
    base = spec(seed=1)
    s1 = retarget(advance(new_state(base), HOUR)[0], replace(base, ckpt_seconds=3000.0))
    s2 = retarget(advance(s1, 2 * HOUR)[0], base)
    assert s2.plan == new_state(base).plan and s2.epoch == 2


def test_causes_cannot_change():
    state = new_state(spec())
    with pytest.raises(ValueError, match="causes"):
        retarget(state, spec(causes=llama3_causes()))



def _drilled(first, second, **path):
    """first for 20 h, second for the next 20 h (a drill), first again to 60 h."""
    state, _ = advance(new_state(first), 20 * HOUR, **path)
    state, _ = advance(retarget(state, second), 40 * HOUR, **path)
    return advance(retarget(state, first), 60 * HOUR, **path)[0]


@pytest.mark.parametrize("path", [{"compiled": False}, {}], ids=["python", "compiled"])
def test_a_straggler_drill_on_and_off_keeps_the_histogram_equal_to_the_steps(path):
    """Stragglers switched on by a drill and off at its end (and the reverse): every executed step is in
    exactly one bucket (steps without stragglers in the plan's bucket, drawn ones where they fell), and every
    path books them as the Python walk does."""
    from simd.engine import Stragglers
    from simd.engine.replicas import advance_replicas, retarget_replicas

    base = spec(seed=5)
    on = replace(base, stragglers=Stragglers(0.5, 4, 1.5))
    for first, second in ((base, on), (on, base)):
        walked = _drilled(first, second, compiled=False)
        t = walked.totals
        assert sum(t.step_hist) == t.steps_executed
        assert sum(t.step_hist[1:]) > 0 and t.step_hist[0] > 0  # both kinds of step are in it
        assert _drilled(first, second, **path) == walked
        if path == {}:  # many replicas at once (the daemon's lanes) book them the same way
            reps = advance_replicas([new_state(first)], 20 * HOUR)
            reps = advance_replicas(retarget_replicas(reps, second), 40 * HOUR)
            reps = advance_replicas(retarget_replicas(reps, first), 60 * HOUR)
            assert tuple(reps)[0] == walked


def test_retarget_refuses_to_change_the_sdc_detectors():
    from simd.engine.spec import CommittedSdc, Detector

    s = spec(target_steps=20)
    state, _ = advance(new_state(s), 5 * 60 * US_PER_SECOND)
    layers = CommittedSdc((Detector("guard", "exponential", 600.0),), 3)
    with pytest.raises(ValueError, match="SDC detectors"):
        retarget(state, replace(s, committed_sdc=layers))
    committed = replace(s, committed_sdc=layers, validation_interval_steps=0)
    state, _ = advance(new_state(committed), 5 * 60 * US_PER_SECOND)
    renamed = CommittedSdc((Detector("scanner", "exponential", 600.0),), 3)
    with pytest.raises(ValueError, match="SDC detectors"):
        retarget(state, replace(committed, committed_sdc=renamed))
    longer = CommittedSdc((Detector("guard", "exponential", 60.0),), 5)  # same names: latency and retention change
    assert retarget(state, replace(committed, committed_sdc=longer)).plan.spec.committed_sdc == longer


def test_an_extended_plan_changes_its_step_time_only_with_nothing_pending():
    from simd.engine.spec import Hyper

    s = replace(spec(seed=4), hyper=Hyper(5, 100))
    state, _ = advance(new_state(s), 3 * HOUR + 17)
    assert state.pending_us
    with pytest.raises(ValueError, match="step_seconds"):
        retarget(state, replace(s, step_seconds=s.step_seconds * 1.5))
    assert retarget(state, replace(s, ckpt_seconds=s.ckpt_seconds * 2))  # other parameters still change


@pytest.mark.parametrize("kind", ["shadow", "fleet"])
def test_a_step_time_drill_with_steps_pending_on_shadow_ranks_and_fleets(kind):
    """Shadow ranks and fleets run on the one kernel, which carries the pending compute as the segment walk
    does (each step adds its own step time): after a drill changed the step time with steps pending, the kernel's
    result is the segment walk's."""
    from simd.engine import Accelerator, Shadow

    extra = {"shadow": Shadow(0.5, 0.05)} if kind == "shadow" else {
        "fleet": (Accelerator("a", 768, 2e-4, 1.5e-4), Accelerator("b", 256, 1e-3, 6e-4))}
    base = spec(seed=4, ckpt_interval_steps=50, validation_interval_steps=25, **extra)
    for cut in (3 * HOUR + 5, 7 * HOUR + 11, 11 * HOUR):
        paths = []
        for compiled in (True, False):  # the kernel, the segment walk
            state, _ = advance(new_state(base), cut, compiled=compiled)
            assert state.pending_us > 0 or cut == 11 * HOUR  # steps pending at the drill (a cut chosen so)
            slow = retarget(state, replace(base, step_seconds=base.step_seconds * 1.5))
            slow, _ = advance(slow, cut + 2 * HOUR, compiled=compiled)
            back = retarget(slow, base)
            paths.append(advance(back, cut + 40 * HOUR, compiled=compiled)[0])
        assert paths[0] == paths[1]
