"""A recovery's checkpoint load (checkpoint.load_seconds, JobSpec.ckpt_load_seconds): the engine against the
per-step oracle (means within 4 standard errors, distributions by KS: engine_stats) on every rollback path, any
cut of time giving the same state, and a load L with a restart R being a restart of L + R when no rollback goes
to the job's start.

The statistical and property checks (slow: they live in tests/engine/statistical)."""

import random
from dataclasses import replace

import pytest
from engine_stats import agree_with_oracle, field
from extended_specs import mixed_specs
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from late_sdc_cases import CONFIGS as LATE
from specs import llama3_causes, spec
from support.examples import examples
from support.partition import check_cuts, horizon_us

from simd.engine import advance, new_state, retarget, run_job
from simd.engine.servers import Servers
from simd.engine.shadow import Shadow
from simd.engine.spec import CommittedSdc, Detector, to_us

SEEDS = 84  # per configuration, as the newer oracle modules (the suite's 5-minute limit)
LOAD = 93.6  # TrainMover's checkpoint load at 8,192 GPUs (simd/models/recovery.py)
LATE_GUARD = Detector("loss_spike", "lognormal", 600.0, 1.0)  # every SDC, after ~10 minutes
POOLS = Servers(warm_standbys=1, spares=1, preemption_seconds=600.0, repair=("exponential", 7200.0, 0.0))

# Each rollback path with a load: hard failures and validation's detections (optimized); a few failures per job
# and no restart but the load, so the restart bucket counts the loads (the first failure of a job meets the
# checkpoints its quiet steps took); many failures before the first checkpoint, SDCs baked in (stormy, validation
# not dividing the checkpoint); committed SDCs found late and unrecoverable, with hyper windows, causes and
# stragglers, and early in the job with no restart but the load (a find goes back to the job's start, or to a
# checkpoint the quiet steps took); shadow disagreements; servers whose replacements the restart waits for
CONFIGS = {
    "optimized": spec(ckpt_load_seconds=LOAD),
    "first_failures": spec(hard_per_gpu_hour=2.5e-4, sdc_per_gpu_hour=0.0, target_steps=300, ckpt_interval_steps=10,
                           validation_interval_steps=0, restart_seconds=0.0, ckpt_load_seconds=600.0),
    "stormy_baked": spec(n_gpus=4096, hard_per_gpu_hour=1.0e-3, sdc_per_gpu_hour=3.0e-4, target_steps=600,
                         ckpt_interval_steps=50, validation_interval_steps=40, ckpt_load_seconds=600.0),
    "committed_hyper_causes_stragglers": replace(LATE["with_hyper_causes_stragglers"], ckpt_load_seconds=LOAD),
    "committed_early": spec(hard_per_gpu_hour=0.0, sdc_per_gpu_hour=3.0e-3, target_steps=300, ckpt_interval_steps=25,
                            validation_interval_steps=0, restart_seconds=0.0, ckpt_load_seconds=600.0,
                            committed_sdc=CommittedSdc((Detector("scan", "exponential", 7200.0),), 2)),
    "shadow_llama3": spec(causes=llama3_causes("warm"), restart_seconds=388.2, sdc_per_gpu_hour=4e-4,
                          shadow=Shadow(0.5, 0.05), ckpt_load_seconds=LOAD),
    # committed SDCs beside corrupt loads (40% of them, three kept), checkpoints every 10 steps, a loss-spike guard
    # finding every SDC after ~10 minutes (a lognormal of sigma 1: some after the three kept): a hard failure falls
    # back past corrupt checkpoints, holding the SDC or not; a late find past corrupt ones and those holding the SDC,
    # down to the job's start, or (no clean one kept) from the oldest kept one that loads, the SDC accepted
    "committed_corrupt_chains": spec(hard_per_gpu_hour=1e-4, sdc_per_gpu_hour=2e-4, target_steps=1000,
                                     ckpt_interval_steps=10, ckpt_seconds=60.0, validation_interval_steps=0,
                                     ckpt_load_seconds=LOAD, ckpt_corrupt_on_load=0.4,
                                     committed_sdc=CommittedSdc((LATE_GUARD,), 3)),
    "servers_pools": spec(n_gpus=64, hard_per_gpu_hour=0.015, sdc_per_gpu_hour=0.002, servers=POOLS,
                          ckpt_load_seconds=LOAD),
}
READS = {f: field(f) for f in ("effective_utilization", "interruptions", "sdc_detected", "sdc_baked",
                               "recompute_steps", "wall_seconds", "restart_seconds", "load_seconds")}
LATE_READS = {f: field(f) for f in ("sdc_late_found", "sdc_unrecoverable", "checkpoints_lost")}
CORRUPT_READS = {k: (lambda j, k=k: j.loads[k], lambda r, o=o: r[o]) for k, o in (
    ("corrupt", "loads_corrupt"), ("fallbacks_to_start", "fallbacks_to_start"))}
WAITING = {"waiting_seconds": (lambda j: j.bucket_seconds["waiting"], lambda r: r["waiting_seconds"])}


def _starts(base):
    """Where the restart bucket holds the loads alone (no restart time): the rollbacks to the job's start per job,
    the rollbacks less the loads (a finer count than the restart bucket's mean: the rollbacks' own spread cancels)."""
    baked = 0 if base.committed_sdc else 1

    def starts(x):
        rollbacks = x["interruptions"] + x["sdc_detected"] + baked * x["sdc_baked"] + x["sdc_late_found"]
        return rollbacks - x["restart_seconds"] / base.ckpt_load_seconds

    def of_job(j):
        return starts({k: getattr(j, k) for k in ("interruptions", "sdc_detected", "sdc_baked", "sdc_late_found",
                                                  "restart_seconds")})

    return {"rollbacks_to_start": (of_job, starts)}


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_engine_matches_the_per_step_loop_with_a_load(name):
    base = CONFIGS[name]
    reads = READS | (LATE_READS if base.committed_sdc else {}) | (WAITING if base.servers else {}) | \
        (CORRUPT_READS if base.ckpt_corrupt_on_load else {})
    if base.restart_seconds == 0 and not base.causes:
        reads |= _starts(base)
    means = agree_with_oracle(name, base, SEEDS, reads, ("corrupt", "sdc_late_found")
                              if base.ckpt_corrupt_on_load else ())
    assert means["restart_seconds"] > 0
    if base.committed_sdc:
        assert means["sdc_late_found"] > 0.2 and means["sdc_unrecoverable"] > 0.05
    if base.ckpt_corrupt_on_load:
        assert means["corrupt"] > 1 and means["fallbacks_to_start"] > 0.02
    if base.servers:
        assert means["waiting_seconds"] > 0


def test_the_configurations_roll_back_to_the_start_and_to_checkpoints():
    """Without a mechanism whose draws depend on time (detectors' latencies, repairs), the steps a job takes do
    not depend on its restarts: the load then adds ``load`` x the rollbacks to a checkpoint at a step > 0 to the
    restart bucket, and on the stormy job some rollbacks go to the job's start (fewer loads than rollbacks)."""
    for name in ("optimized", "stormy_baked"):
        base = CONFIGS[name]
        loaded = [run_job(replace(base, seed=k)) for k in range(40)]
        plain = [run_job(replace(base, seed=k, ckpt_load_seconds=0.0)) for k in range(40)]
        loads = sum(a.restart_seconds - b.restart_seconds for a, b in zip(loaded, plain, strict=True))
        loads /= base.ckpt_load_seconds
        rollbacks = sum(j.interruptions + j.sdc_detected + j.sdc_baked for j in plain)
        assert [a.recompute_steps for a in loaded] == [b.recompute_steps for b in plain]
        assert 0 < round(loads) <= rollbacks
        if name == "stormy_baked":
            assert round(loads) < rollbacks


LOADS = st.sampled_from([0.0, 0.5, 12.25, LOAD, 600.0])
SERVERS = st.sampled_from([None, None, POOLS, Servers(burst_per_day=20.0, burst_mean_size=3.0)])


@st.composite
def loaded_specs(draw, corrupt=True):
    """The kernel's plans (some on servers) and the extended mechanisms', each with a load; with ``corrupt`` a
    third of them with loads found corrupt (beside committed SDCs: the one ring of kept checkpoints)."""
    return replace(draw(mixed_specs(SERVERS)), ckpt_load_seconds=draw(LOADS),
                   ckpt_corrupt_on_load=draw(st.sampled_from([0.0, 0.0, 0.4])) if corrupt else 0.0)


@settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(s=loaded_specs(), horizon_steps=st.integers(1, 2000), cuts=st.lists(st.floats(0, 1), max_size=10))
def test_any_partition_gives_identical_state_with_a_load(s, horizon_steps, cuts):
    check_cuts(s, horizon_us(s, horizon_steps), cuts)


@settings(max_examples=examples(30), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(name=st.sampled_from(sorted(CONFIGS)), seed=st.integers(0, 2**32), horizon_steps=st.integers(1, 4000),
       cuts=st.lists(st.floats(0, 1), max_size=10))
def test_any_partition_gives_identical_state_on_the_oracle_configurations(name, seed, horizon_steps, cuts):
    s = replace(CONFIGS[name], seed=seed)
    check_cuts(s, horizon_us(s, horizon_steps), cuts)


def _restart_plus(s, load: float):
    """``s`` with ``load`` added to every restart (the SDCs' and each cause's) and no load of its own."""
    return replace(s, restart_seconds=s.restart_seconds + load, ckpt_load_seconds=0.0,
                   causes=tuple(replace(c, restart_seconds=c.restart_seconds + load) for c in s.causes))


@settings(max_examples=examples(40), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(s=loaded_specs(corrupt=False), load=LOADS.filter(bool), horizon_steps=st.integers(1, 2000))
def test_a_load_and_a_restart_are_a_restart_of_their_sum_when_every_rollback_is_to_a_checkpoint(s, load,
                                                                                               horizon_steps):
    """The job runs without failures to its first checkpoint, then (a drill's retarget) with its rates, and no job
    ends in the horizon: every rollback goes back to a checkpoint at a step > 0, so a load ``load`` with the
    restarts R gives the state, counter for counter and event for event, of no load and restarts R + ``load``."""
    restarts = [s.restart_seconds] + [c.restart_seconds for c in s.causes]
    assume(all(to_us(r + load) == to_us(r) + to_us(load) for r in restarts))  # no rounding apart
    s = replace(s, target_steps=10**9, ckpt_load_seconds=load)
    state = new_state(replace(s, hard_per_gpu_hour=0.0, sdc_per_gpu_hour=0.0))
    while state.last_ckpt == 0:
        state, _ = advance(state, state.clock + horizon_us(s, s.ckpt_interval_steps))
    until = state.clock + horizon_us(s, horizon_steps)
    a, a_events = advance(retarget(state, s), until, trace=True)
    b, b_events = advance(retarget(state, _restart_plus(s, load)), until, trace=True)
    assert a.totals.jobs_completed == 0
    # (the load's own count, the restart bucket's load part, is all that tells them apart)
    assert replace(b, plan=a.plan) == replace(a, totals=replace(a.totals, load_us=b.totals.load_us))
    # whole loads (``load`` > 0 here) since the retarget (a burst, which a zero hard rate leaves on, may have
    # rolled the job back before it: loads both share)
    before = state.totals.load_us
    assert b.totals.load_us == before and (a.totals.load_us - before) % to_us(load) == 0
    assert b_events == a_events


@pytest.mark.parametrize("ticks", [7, 97])
def test_any_tick_size_gives_identical_state_with_committed_sdcs_and_corrupt_loads(ticks):
    s = replace(CONFIGS["committed_corrupt_chains"], seed=5)
    check_cuts(s, horizon_us(s, s.target_steps), [i / ticks for i in range(1, ticks)])


def test_many_random_cuts_give_the_state_of_one_call_with_committed_sdcs_and_corrupt_loads():
    """1,000 random cuts of a job and a half (every checkpoint a unit, between them every kind of cut)."""
    s = replace(CONFIGS["committed_corrupt_chains"], seed=3)
    rnd = random.Random("committed_corrupt_chains")
    check_cuts(s, horizon_us(s, s.target_steps), [rnd.random() for _ in range(1000)])
