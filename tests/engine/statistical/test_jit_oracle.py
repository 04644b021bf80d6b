"""Just-in-time saves (checkpoint.just_in_time; Cause.jit, JobSpec.jit_seconds): the engine against the per-step
oracle (means within 4 standard errors, distributions by KS: engine_stats) after the failures of some causes, with
SDCs baked into them, asynchronous, failing and corrupt persistent saves, servers with pools and bursts, hyper
windows and stragglers; any cut of time giving the same state.

The statistical and property checks (slow: they live in tests/engine/statistical)."""

import random
from dataclasses import replace

import pytest
from engine_stats import agree_with_oracle, field
from extended_specs import mixed_specs
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from specs import llama3_causes, spec
from support.examples import examples
from support.partition import check_cuts, horizon_us

from simd.engine import Cause, advance, new_state
from simd.engine.servers import Servers
from simd.engine.spec import CommittedSdc, Detector, Hyper, MemoryTier, Stragglers, compile_spec

SEEDS = 84  # per configuration, within the suite's 5-minute limit
LOAD = 93.6  # TrainMover's checkpoint load at 8,192 GPUs (simd/models/recovery.py)
HARDWARE = {"gpu", "network", "host"}  # Llama 3's causes with a healthy replica of every shard (docs/model.md)


def _jit(causes, names) -> tuple[Cause, ...]:
    return tuple(replace(c, jit=c.name in names) for c in causes)


POOLS = Servers(warm_standbys=1, spares=1, preemption_seconds=600.0, repair=("exponential", 7200.0, 0.0),
                burst_per_day=2.0, burst_mean_size=3.0)
# one cause saved just in time; llama3's hardware causes with SDCs baked into the saves (validation not dividing
# the checkpoint) beside asynchronous, failing and corrupt persistent saves; servers with pools and bursts, hyper
# windows; stragglers beside a local tier whose writes outlast its interval (every save waits; a failure aborts the
# write in flight, then the survivors save)
CONFIGS = {
    "one_cause": spec(hard_per_gpu_hour=6e-4, ckpt_load_seconds=LOAD, jit_seconds=30.0,
                      causes=(Cause("hardware", 1.0, 0.0, 60.0, jit=True),)),
    "sdc_async_failing_corrupt": spec(hard_per_gpu_hour=2e-4, sdc_per_gpu_hour=3e-4, ckpt_interval_steps=50,
                                      validation_interval_steps=40, ckpt_load_seconds=LOAD, jit_seconds=30.0,
                                      jit_share=0.7,
                                      causes=_jit(llama3_causes("warm"), HARDWARE), ckpt_write_seconds=300.0,
                                      ckpt_write_slowdown=1.2, ckpt_save_failure=0.2, ckpt_corrupt_on_load=0.3,
                                      ckpt_retention=2),
    "servers_hyper": spec(n_gpus=64, hard_per_gpu_hour=0.01, sdc_per_gpu_hour=0.002, validation_interval_steps=20,
                          hyper=Hyper(5, 300), causes=_jit(llama3_causes("warm"), {"gpu", "host"}), jit_seconds=10.0,
                          servers=POOLS, ckpt_load_seconds=LOAD),
    "stragglers_tier_writes": spec(causes=_jit(llama3_causes("warm"), {"gpu"}), jit_seconds=30.0,
                                   hard_per_gpu_hour=4e-4, stragglers=Stragglers(0.5, 1, 1.2, replace_after_steps=40),
                                   ckpt_interval_steps=20, tier=MemoryTier("local", 4, 1.0, 10.0, write_seconds=400.0)),
    # half the failures leave survivors who can save (a draw per failure), beside a peer tier under bursts (the
    # survivors save unless the newest checkpoint that survived is the step before), with SDCs baked into the tier's
    # saves (and 70% of them beside asynchronous, failing and corrupt persistent saves, above)
    "share_peer_bursts": replace(spec(n_gpus=16, hard_per_gpu_hour=0.01, sdc_per_gpu_hour=0.005, ckpt_load_seconds=LOAD,
                                      validation_interval_steps=40, jit_seconds=30.0, jit_share=0.5,
                                      causes=(Cause("hardware", 1.0, 0.0, 60.0, jit=True),),
                                      servers=Servers(gpus_per_server=1, burst_per_day=8.0, burst_mean_size=3.0)),
                                 tier=MemoryTier("peer", 5, 2.0, 10.0, 2)),
    # committed SDCs found late by a detector: a save after a failure takes a present SDC with it (the rollback's
    # target all the same, the SDC kept); beside a peer tier under bursts, with hyper windows
    "committed_detectors": spec(hard_per_gpu_hour=6e-4, sdc_per_gpu_hour=4e-4, validation_interval_steps=0,
                                ckpt_load_seconds=LOAD, jit_seconds=30.0, jit_share=0.8,
                                causes=(Cause("hardware", 1.0, 0.0, 60.0, jit=True),),
                                committed_sdc=CommittedSdc((Detector("loss_spike", "lognormal", 600.0, 1.0, 0.5),
                                                            Detector("scanner", "exponential", 86400.0)), 3)),
    "committed_tier_hyper": replace(spec(n_gpus=16, hard_per_gpu_hour=0.01, sdc_per_gpu_hour=0.01,
                                         validation_interval_steps=0, ckpt_load_seconds=LOAD, jit_seconds=30.0,
                                         hyper=Hyper(5, 200), causes=(Cause("hardware", 1.0, 0.0, 60.0, jit=True),),
                                         servers=Servers(gpus_per_server=1, burst_per_day=8.0, burst_mean_size=3.0),
                                         committed_sdc=CommittedSdc((Detector("scanner", "exponential", 7200.0),),
                                                                    2)),
                                    tier=MemoryTier("peer", 5, 2.0, 10.0, 2)),
}
TIER = {k: (lambda j, k=k: j.tier[k], lambda r, o=o: r[o]) for k, o in (
    ("recoveries_tier", "recoveries_tier"), ("recoveries_persistent", "recoveries_persistent"),
    ("losses", "tier_losses"))}
READS = {f: field(f) for f in ("effective_utilization", "interruptions", "sdc_detected", "sdc_baked",
                               "recompute_steps", "wall_seconds", "checkpoints", "jit_saves", "sdc_late_found",
                               "sdc_unrecoverable", "checkpoints_lost")}


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_engine_matches_the_per_step_loop_with_just_in_time_saves(name):
    means = agree_with_oracle(name, CONFIGS[name], SEEDS, READS | TIER if CONFIGS[name].tier else READS)
    assert means["jit_saves"] > 0.3 * means["interruptions"] * (1.0 if name == "one_cause" else 0.5)
    if name.startswith("share"):
        assert means["jit_saves"] < means["interruptions"] * CONFIGS[name].jit_share
    if name.startswith("committed"):  # late finds past saves that took the SDC
        assert means["sdc_late_found"] > 0.5 and means["sdc_baked"] > 0.5


@st.composite
def jit_specs(draw):
    """The kernel's plans and the extended mechanisms' jobs (not committed SDCs), on servers or not, with some of
    their causes saved just in time."""
    s = draw(mixed_specs(st.sampled_from([None, None, POOLS, Servers(burst_per_day=20.0, burst_domain=2)])))
    causes = s.cause_list
    keep = draw(st.lists(st.booleans(), min_size=len(causes), max_size=len(causes)))
    assume(any(keep))
    s = replace(s, causes=tuple(replace(c, jit=k) for c, k in zip(causes, keep, strict=True)),
                jit_seconds=draw(st.sampled_from([0.0, 1.0, 30.0, 600.0])), jit_share=draw(st.sampled_from([1.0, 0.5])),
                ckpt_load_seconds=draw(st.sampled_from([0.0, LOAD])))
    n = compile_spec(s).servers
    if s.hyper is None and s.ckpt_interval_steps % 5 == 0 and s.ckpt_interval_steps > 5 and draw(st.booleans()):
        copies = 2 if n and n % 2 == 0 else 1  # a memory tier (a peer tier when its groups tile the servers)
        s = replace(s, tier=MemoryTier("peer" if copies == 2 else "local", 5, 1.0, 10.0, copies,
                                       # (a tier's writes beside committed SDCs are refused: spec.REFUSED)
                                       write_seconds=draw(st.sampled_from([0.0, 0.0, 50.0, 700.0]))
                                       if s.committed_sdc is None else 0.0))
    return s


@settings(max_examples=examples(40), deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                           HealthCheck.filter_too_much])
@given(s=jit_specs(), horizon_steps=st.integers(1, 2000), cuts=st.lists(st.floats(0, 1), max_size=10))
def test_any_partition_gives_identical_state_with_just_in_time_saves(s, horizon_steps, cuts):
    check_cuts(s, horizon_us(s, horizon_steps), cuts)


@settings(max_examples=examples(20), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(name=st.sampled_from(sorted(CONFIGS)), seed=st.integers(0, 2**32), horizon_steps=st.integers(1, 3000),
       cuts=st.lists(st.floats(0, 1), max_size=10))
def test_any_partition_gives_identical_state_on_the_oracle_configurations(name, seed, horizon_steps, cuts):
    s = replace(CONFIGS[name], seed=seed)
    check_cuts(s, horizon_us(s, horizon_steps), cuts)


def test_a_thousand_cuts_give_the_one_calls_state_beside_a_tier_under_hyper_windows():
    """Committed SDCs beside a peer tier under hyper windows: a late find's load depends on whether the quiet steps
    before it held a tier save (which overwrites the tier's clean copy), counted on the hyper window's lattice; a
    cut of time at every step boundary or so must not change it (this seed's late find, cut 3,000 times, once
    loaded the tier's copy that a save had overwritten)."""
    s = replace(CONFIGS["committed_tier_hyper"], seed=0)
    until = horizon_us(s, 3000)
    whole, _ = advance(new_state(s), until)
    rng = random.Random(0)
    state = new_state(s)
    for cut in sorted(int(rng.random() * until) for _ in range(3000)) + [until]:
        state, _ = advance(state, cut)
    assert state == whole and whole.totals.sdc_unrecoverable > 0
