"""Shadow-rank dual execution (simd/engine/shadow.py): the engine against the per-step oracle extended with it,
tick-size invariance, and its edges (fraction 0 is the plain job bit for bit, fraction 1 leaves validation
nothing to find, the overhead's time in closed form, a disagreement placed by hand)."""

import math
from dataclasses import replace

import pytest
from specs import spec

from simd.engine import US_PER_SECOND, advance, new_state, run_job
from simd.engine.shadow import Shadow, shadow_ranks, stops
from simd.engine.spec import CommittedSdc, Hyper
from simd.engine.stragglers import BUCKET_FACTORS

S = US_PER_SECOND


def test_stop_kinds_split_hard_failures_and_disagreements_exactly():
    h, s = 0.01, 0.03
    st_ = stops(h, s, (0.6, 1.0), (1, 2), (3, 4), 5, lambda p: math.log1p(-p))
    q = 1 - (1 - h) * (1 - s)
    assert st_.hazard == pytest.approx(q, rel=1e-15)
    share = (1 - h) * s / q  # a disagreement and no hard failure, given a stop
    assert st_.cumulative == pytest.approx((0.6 * (1 - share), 1 - share, 1.0), rel=1e-15)
    assert (st_.detect_us, st_.restart_us, st_.shadow_kind) == ((1, 2, 0), (3, 4, 5), 2)


def test_fraction_zero_is_the_plain_job_bit_for_bit():
    for base in (spec(), spec(ckpt_interval_steps=50, validation_interval_steps=40)):
        plain, plain_events = advance(new_state(base), 400_000 * S, trace=True)
        off = replace(base, shadow=Shadow(0.0, 0.5))  # no rank shadowed: no overhead either
        shadowed, events = advance(new_state(off), 400_000 * S, trace=True)
        assert replace(shadowed, plan=plain.plan) == plain
        assert events == plain_events
        assert shadow_ranks(1024, Shadow(0.0004, 0.5)) == 0  # rounds to no rank: the plain job too


def test_fraction_one_leaves_validation_nothing_to_find():
    s = spec(sdc_per_gpu_hour=1e-3, shadow=Shadow(1.0, 0.0), ckpt_interval_steps=50, validation_interval_steps=40)
    state, _ = advance(new_state(s), 10**6 * S)
    t = state.totals
    assert t.shadow_detected > 20 and t.validations > 0
    assert t.sdc_baked == 0  # no SDC reaches a validation, a checkpoint or the end of a job: each is found at once
    assert t.sdc_onsets == t.sdc_detected == t.shadow_detected


def test_overhead_slows_every_step_and_is_its_own_bucket():
    s = spec(hard_per_gpu_hour=0.0, sdc_per_gpu_hour=0.0, shadow=Shadow(0.5, 0.25))
    job = run_job(s)
    assert job.wall_seconds == 3000 * 60 * 1.25 + 120 * 300 + 120 * 20
    assert job.bucket_seconds["shadow"] == 3000 * 15 and job.bucket_seconds["productive"] == 3000 * 60
    assert job.effective_utilization == 180000 / job.wall_seconds
    assert job.mean_step_seconds == 75.0
    state, _ = advance(new_state(s), 3600 * S)
    # every step lasts 1.25 x the base step time: the bucket le = 1.3 x base
    assert state.totals.step_hist[BUCKET_FACTORS.index(1.3)] == state.totals.steps_executed


def _disagreement_at(s, step):
    """A fresh state whose first element of the hard stream, at executed step ``step``, is a disagreement: no
    hard failures and every rank shadowed, so every stop is one (its kind's share is 1)."""
    s = replace(s, hard_per_gpu_hour=0.0, sdc_per_gpu_hour=1e-15, shadow=Shadow(1.0, 0.0))
    state = new_state(s)
    assert state.plan.stop_cumulative[-2] == 0.0  # the hard failure's share
    return replace(state, hard=(0, step))


def test_disagreement_on_a_validation_step_rolls_back_before_validating():
    s = spec(ckpt_interval_steps=50, validation_interval_steps=25, validation_seconds=20.0)
    state, events = advance(_disagreement_at(s, 25), (25 * 60 + 60) * S, trace=True)
    assert [(e.kind, e.cause) for e in events] == [("sdc_detected", "shadow")]
    assert events[0].t_us == (25 * 60 + 60) * S  # the step and the restart: no validation
    t = state.totals
    assert state.step == 0 and not state.corrupted
    assert (t.sdc_detected, t.shadow_detected, t.validations, t.steps_recomputed) == (1, 1, 0, 25)
    assert sum(t.interruptions) == 0


def test_disagreement_on_a_checkpoint_step_does_not_commit():
    s = spec(ckpt_interval_steps=10, validation_interval_steps=0)
    state, _ = advance(_disagreement_at(s, 20), (20 * 60 + 300 + 60) * S)
    assert state.step == state.last_ckpt == 10
    assert (state.totals.checkpoints, state.totals.steps_recomputed) == (1, 10)


def test_what_does_not_combine_is_decided_in_one_place():
    """simd.engine.spec.REFUSED is the one list: the engine refuses a job that switches such a pair on, with the
    words the scenario file uses; every other pair is accepted (and checked against the oracle)."""
    from simd.engine import Accelerator, Cause, Stragglers
    from simd.engine.servers import Servers
    from simd.engine.spec import KEYS, REFUSED, MemoryTier, compile_spec, refused

    base = spec(shadow=Shadow(0.5, 0.05))
    cases = {("shadow", "fleet"): replace(base, fleet=(Accelerator("a", 512, 2e-4, 1e-4),
                                                        Accelerator("b", 512, 2e-4, 1e-4))),
             ("shadow", "stragglers"): replace(base, stragglers=Stragglers(0.5, 1, 1.2)),
             ("servers", "shadow"): replace(base, servers=Servers(lifetime="weibull", shape=0.7)),
             ("servers", "fleet"): replace(spec(), servers=Servers(lemon_fraction=0.1, lemon_multiplier=3.0),
                                           fleet=(Accelerator("a", 512, 2e-4, 1e-4),
                                                  Accelerator("b", 512, 2e-4, 1e-4))),
             ("memory_tier", "migration"): spec(tier=MemoryTier("local", 5, 1.0), migration_seconds=30.0,
                                                causes=(Cause("hardware", 1.0, 0.0, 60.0, predicted=0.5),),
                                                servers=Servers(warm_standbys=1, repair=("exponential", 60.0, 0.0)))}
    elastic = spec(elastic_groups=4)
    cases |= {("elastic", other): replace(elastic, **kw) for other, kw in (
        ("migration", dict(migration_seconds=30.0, causes=(Cause("hardware", 1.0, 0.0, 60.0, predicted=0.5),),
                           servers=Servers(warm_standbys=1, repair=("exponential", 60.0, 0.0)))),
        ("shadow", dict(shadow=Shadow(0.5, 0.05))),
        ("fleet", dict(fleet=(Accelerator("a", 512, 2e-4, 1e-4), Accelerator("b", 512, 2e-4, 1e-4)))),
        ("hyper", dict(hyper=Hyper(5, 100))),
        ("committed_sdc", dict(committed_sdc=CommittedSdc((), 2))),
        ("corrupt_loads", dict(ckpt_corrupt_on_load=0.1, ckpt_retention=2)),
        ("memory_tier", dict(tier=MemoryTier("local", 5, 1.0))),
        ("jit", dict(jit_seconds=5.0, causes=(Cause("hardware", 1.0, 0.0, 60.0, jit=True),))),
        ("async_saves", dict(ckpt_write_seconds=30.0)),
        ("relapse", dict(servers=Servers(relapse=(0.1, 1.0)))))}
    assert set(cases) == set(REFUSED)
    for pair, job in cases.items():
        with pytest.raises(ValueError) as exc:
            compile_spec(job)
        tier = job.tier.kind if job.tier is not None else "peer"
        first, second = (KEYS[m].format(tier=tier) for m in pair)
        assert str(exc.value) == refused(pair, tier)[0] == f"{first} and {second} cannot be combined ({REFUSED[pair]})"
    assert refused({"shadow", "hyper", "committed_sdc", "causes"}) == []
    # two memory tiers beside committed SDCs run (tests/engine/statistical/test_two_tiers_oracle.py)
    two = spec(tier=MemoryTier("peer", 5, 1.0, copies=2), lower_tier=MemoryTier("local", 1, 0.5))
    assert refused({"memory_tier", "peer_tier", "local_tier", "two_tiers", "committed_sdc"}) == []
    assert compile_spec(replace(two, committed_sdc=CommittedSdc((), 2))).low_every == 1
    # ... and committed SDCs beside corrupt persistent loads (tests/engine/statistical/test_load_oracle.py)
    assert refused({"committed_sdc", "corrupt_loads", "memory_tier", "two_tiers"}) == []
    assert compile_spec(spec(committed_sdc=CommittedSdc((), 2), ckpt_corrupt_on_load=0.1)).corrupt_load == 0.1


def compile_error(job) -> ValueError:
    from simd.engine.spec import compile_spec

    with pytest.raises(ValueError) as exc:
        compile_spec(job)
    return exc.value


def test_every_mechanism_a_refusal_names_is_said_in_the_keys_of_the_scenario_file():
    """KEYS gives, for every mechanism the engine or the scenario file switches on, scenario keys that exist."""
    import typing

    from pydantic import BaseModel

    from simd.engine.spec import KEYS, REFUSED
    from simd.scenario.schema import ScenarioBody

    def model_of(annotation):
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            return annotation
        return next((m for a in typing.get_args(annotation) if (m := model_of(a)) is not None), None)

    assert {m for pair in REFUSED for m in pair} <= set(KEYS)
    for mechanism, keys in KEYS.items():
        for path in keys.replace(" (or ", ",").replace(" and ", ",").rstrip(")").split(","):
            path = path.split(":")[0].strip()
            for tier in ("peer", "local"):
                model = ScenarioBody
                for part in path.format(tier=tier).split("."):
                    assert model is not None and part in model.model_fields, (mechanism, path)
                    model = model_of(model.model_fields[part].annotation)
