"""retarget(): parameter changes at a simulated time (drills), keeping counters and invariances."""

import math
from dataclasses import replace

import pytest
from specs import llama3_causes, spec
from support.partition import assert_partitioned

from simd.engine import US_PER_SECOND, advance, new_state, retarget

S = US_PER_SECOND
HOUR = 3600 * S


def test_counters_carry_over_and_buckets_still_sum():
    base = spec(seed=2)
    state, _ = advance(new_state(base), 30 * HOUR + 17)
    before = state.totals
    storm = retarget(state, replace(base, hard_per_gpu_hour=base.hard_per_gpu_hour * 10))
    assert storm.totals == before and storm.clock == state.clock and storm.epoch == 1
    after, _ = advance(storm, 60 * HOUR)
    assert_partitioned(after)
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
    parts, ev_parts = changed, []
    for t in (21 * HOUR, 21 * HOUR + 1, 33 * HOUR, 50 * HOUR):
        parts, ev = advance(parts, t, trace=True)
        ev_parts += ev
    assert whole == parts and ev_whole == ev_parts and len(ev_whole) > 20


def test_retarget_back_restores_the_parameters():
    base = spec(seed=1)
    s1 = retarget(advance(new_state(base), HOUR)[0], replace(base, ckpt_seconds=3000.0))
    s2 = retarget(advance(s1, 2 * HOUR)[0], base)
    assert s2.plan == new_state(base).plan and s2.epoch == 2


def test_causes_cannot_change():
    state = new_state(spec())
    with pytest.raises(ValueError, match="causes"):
        retarget(state, spec(causes=llama3_causes()))



def _drilled(first, second, cuts=(20 * HOUR, 40 * HOUR, 60 * HOUR)):
    """first until cuts[0], second (a drill) until cuts[1], first again to cuts[2]."""
    state, _ = advance(new_state(first), cuts[0])
    state, _ = advance(retarget(state, second), cuts[1])
    return advance(retarget(state, first), cuts[2])[0]


def test_a_straggler_drill_on_and_off_keeps_the_histogram_equal_to_the_steps():
    """Stragglers switched on by a drill and off at its end (and the reverse): every executed step is in
    exactly one bucket (steps without stragglers in the plan's bucket, drawn ones where they fell), and the
    batch over replicas books them as one replica does."""
    from simd.engine import Stragglers
    from simd.engine.replicas import advance_replicas, retarget_replicas

    base = spec(seed=5)
    on = replace(base, stragglers=Stragglers(0.5, 4, 1.5))
    for first, second in ((base, on), (on, base)):
        one = _drilled(first, second)
        t = one.totals
        assert sum(t.step_hist) == t.steps_executed
        assert sum(t.step_hist[1:]) > 0 and t.step_hist[0] > 0  # both kinds of step are in it
        reps = advance_replicas([new_state(first)], 20 * HOUR)  # many replicas at once (the daemon's lanes)
        reps = advance_replicas(retarget_replicas(reps, second), 40 * HOUR)
        reps = advance_replicas(retarget_replicas(reps, first), 60 * HOUR)
        assert tuple(reps)[0] == one


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


def test_a_committed_plan_changes_its_step_time_only_with_nothing_pending():
    from simd.engine.spec import CommittedSdc

    s = replace(spec(seed=4), validation_interval_steps=0, committed_sdc=CommittedSdc((), 3))
    state, _ = advance(new_state(s), 3 * HOUR + 17)
    assert state.pending_us
    with pytest.raises(ValueError, match="step_seconds"):
        retarget(state, replace(s, step_seconds=s.step_seconds * 1.5))
    assert retarget(state, replace(s, ckpt_seconds=s.ckpt_seconds * 2))  # other parameters still change


@pytest.mark.parametrize("where", ["corrupt_loads", "tier"])
def test_a_plan_that_can_void_committed_work_changes_its_step_time_only_before_its_first_checkpoint(where):
    """With corrupt loads or a memory tier a recovery can go below committed work, whose credit a job's end may take
    back (Totals.voided_us) at the step time then: a step-time change after a checkpoint would make it another
    amount (the kept productive time below 0), so it is refused there, also with nothing pending."""
    from simd.engine.spec import MemoryTier

    over = dict(ckpt_corrupt_on_load=0.3, ckpt_retention=3) if where == "corrupt_loads" else dict(
        tier=MemoryTier("local", 5, 1.0))
    s = replace(spec(seed=4, hard_per_gpu_hour=0.0, sdc_per_gpu_hour=0.0), **over)
    assert retarget(new_state(s), replace(s, step_seconds=s.step_seconds * 2))  # the job's start: allowed
    state = new_state(s)
    while not state.last_ckpt or state.pending_us:  # at a checkpoint, nothing pending
        state, _ = advance(state, state.clock + round(s.step_seconds * US_PER_SECOND))
    with pytest.raises(ValueError, match="before the job's first checkpoint"):
        retarget(state, replace(s, step_seconds=s.step_seconds * 2))
    assert retarget(state, replace(s, ckpt_seconds=s.ckpt_seconds * 2))  # other parameters still change
    # nor can corrupt loads switch on or off there (the ring of kept checkpoints exists only while they are on)
    with pytest.raises(ValueError, match="corrupt loads can switch"):
        retarget(state, replace(s, ckpt_corrupt_on_load=0.0 if where == "corrupt_loads" else 0.5, ckpt_retention=3))


def _conserved(state) -> None:
    assert_partitioned(state)
    assert min(state.totals.bucket_us().values()) >= 0


@pytest.mark.parametrize("kind", ["plain", "shadow", "fleet", "hyper", "hyper-stragglers"])
def test_a_step_time_drill_with_steps_pending(kind):
    """The kernel carries the pending compute step by step (each executed step adds its own step time), so a
    drill may change the step time with steps pending on every plan but committed SDCs: every second stays in
    one bucket, no bucket goes negative, and any cut of time gives the same result."""
    from simd.engine import Accelerator, Shadow, Stragglers
    from simd.engine.spec import Hyper

    extra = {"plain": {}, "shadow": {"shadow": Shadow(0.5, 0.05)},
             "fleet": {"fleet": (Accelerator("a", 768, 2e-4, 1.5e-4), Accelerator("b", 256, 1e-3, 6e-4))},
             "hyper": {"hyper": Hyper(5, 100)},
             "hyper-stragglers": {"hyper": Hyper(5, 100), "stragglers": Stragglers(0.5, 1, 1.2)}}[kind]
    base = spec(seed=4, ckpt_interval_steps=50, validation_interval_steps=25, sdc_per_gpu_hour=1e-3, **extra)
    for start in (3 * HOUR + 5, 7 * HOUR + 11):
        # the first of these times with steps pending at the drill
        state = next(x for x in (advance(new_state(base), start + k * 137 * S)[0] for k in range(40)) if x.pending_us)
        cut = state.clock
        slow = retarget(state, replace(base, step_seconds=base.step_seconds * 1.5))
        ends = (cut + 2 * HOUR, cut + 40 * HOUR)
        one, _ = advance(slow, ends[0])
        _conserved(one)
        back = retarget(one, base)
        one, ev = advance(back, ends[1], trace=True)
        _conserved(one)
        parts, ev_parts = slow, []
        for c in (cut + HOUR + 1, ends[0]):
            parts, e = advance(parts, c, trace=True)
        parts = retarget(parts, base)
        for c in (ends[0] + 5 * HOUR, ends[1]):
            parts, e = advance(parts, c, trace=True)
            ev_parts += e
        assert parts == one and ev_parts == ev and len(ev) > 5


def test_a_checkpoint_interval_drill_off_the_lattice():
    """A drill may change the checkpoint interval whatever the last checkpoint: the next checkpoint is the new
    interval's next multiple, any cut of time gives the same result, every second stays in one bucket, and a
    batch of replicas does what one replica does."""
    from simd.engine.replicas import advance_replicas, new_replicas, retarget_replicas

    base = spec(seed=6, ckpt_interval_steps=25, validation_interval_steps=25)
    state, _ = advance(new_state(base), 2 * HOUR + 11)
    assert state.last_ckpt % 40  # off the new interval's lattice
    wide = replace(base, ckpt_interval_steps=40, validation_interval_steps=40)
    drilled = retarget(state, wide)
    one, _ = advance(drilled, 30 * HOUR)
    _conserved(one)
    parts = drilled
    for c in (2 * HOUR + 12, 3 * HOUR, 30 * HOUR):
        parts, _ = advance(parts, c)
    assert parts == one
    first = advance(drilled, drilled.clock + 60 * 75 * S)[0]  # within 60 steps (and a failure or two)
    assert first.totals.checkpoints > state.totals.checkpoints and first.last_ckpt % 40 == 0
    reps = advance_replicas(new_replicas(base, (6,)), 2 * HOUR + 11)
    reps = advance_replicas(retarget_replicas(reps, wide), 30 * HOUR)
    assert tuple(reps)[0] == one
