"""In-process restarts and crash loops (recovery.in_process, recovery.crash_loop; Cause.in_process, Cause.crash_loop,
JobSpec.in_process_*, restart_*, escalation_seconds): the engine against the per-step oracle (means within 4
standard errors, distributions by KS: engine_stats) with SDCs and loads, crash loops up to their escalation, both on
servers with pools (a cleared fault keeps its server) and beside a memory tier (a cleared fault keeps its memory);
any cut of time giving the same state.

The statistical and property checks (slow: they live in tests/engine/statistical)."""

from dataclasses import replace

import pytest
from engine_stats import agree_with_oracle, field
from extended_specs import mixed_specs
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from specs import llama3_causes, spec
from support.examples import examples
from support.partition import check_cuts, horizon_us

from simd.engine import Cause
from simd.engine.servers import Servers
from simd.engine.spec import MemoryTier

SEEDS = 84
LOAD = 93.6  # TrainMover's checkpoint load at 8,192 GPUs (simd/models/recovery.py)
SOFTWARE = {"software", "other"}  # Llama 3's causes a restart within the job's processes may clear


def _with(causes, in_process=(), crash_loop=()) -> tuple[Cause, ...]:
    return tuple(replace(c, in_process=c.name in in_process, crash_loop=c.name in crash_loop) for c in causes)


def _job(**kw):
    """Seed 000's optimized job, half as long (1,500 steps of 60 s, a checkpoint every 25), with the loads."""
    return spec(target_steps=1500, ckpt_load_seconds=LOAD, **kw)


POOLS = Servers(gpus_per_server=8, warm_standbys=1, spares=1, preemption_seconds=600.0,
                repair=("exponential", 7200.0, 0.0))
EVERY = {"gpu", "network", "host", "software", "other"}
# in-process restarts of llama3's software causes beside SDCs found and baked in; crash loops of every cause, half
# of the attempts failing, escalated after 3 (one interruption in 8); both on servers with pools, the in-process
# restart tried on every cause (one that succeeds keeps its server, one that fails is replaced); both beside a local
# memory tier (a cleared fault keeps its holder's memory)
CONFIGS = {
    "in_process_sdc": _job(hard_per_gpu_hour=4e-4, sdc_per_gpu_hour=3e-4, ckpt_interval_steps=50,
                           validation_interval_steps=40, causes=_with(llama3_causes(), SOFTWARE),
                           in_process_seconds=30.0, in_process_success=0.6),
    "crash_loop_escalation": _job(hard_per_gpu_hour=4e-4, causes=_with(llama3_causes("warm"), (), EVERY),
                                  restart_failure=0.5, restart_attempts=3, escalation_seconds=3600.0),
    "pools_both": _job(n_gpus=64, hard_per_gpu_hour=0.01, sdc_per_gpu_hour=0.0, servers=POOLS,
                       causes=_with(llama3_causes(), EVERY, {"gpu", "host"}), in_process_seconds=20.0,
                       in_process_success=0.5, restart_failure=0.3, restart_attempts=2, escalation_seconds=1800.0),
    "memory_tier_both": replace(_job(hard_per_gpu_hour=6e-4, causes=_with(llama3_causes(), {"gpu", "software"},
                                                                          {"software"}),
                                     in_process_seconds=20.0, in_process_success=0.7, restart_failure=0.4,
                                     restart_attempts=4, escalation_seconds=900.0),
                                tier=MemoryTier("local", 5, 2.0, 10.0)),
}
READS = {f: field(f) for f in ("effective_utilization", "interruptions", "recompute_steps", "wall_seconds",
                               "restart_seconds", "escalations")} | {
    "in_process_succeeded": (lambda j: j.in_process.get("succeeded", 0), lambda r: r["in_process"]["succeeded"]),
    "in_process_failed": (lambda j: j.in_process.get("failed", 0), lambda r: r["in_process"]["failed"]),
    "attempts": (lambda j: sum(j.restart_attempts_by_cause.values()),
                 lambda r: sum(r["restart_attempts_by_cause"].values())),
    "waiting_seconds": (lambda j: j.bucket_seconds["waiting"], lambda r: r["waiting_seconds"])}


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_engine_matches_the_per_step_loop_with_in_process_restarts_and_crash_loops(name):
    means = agree_with_oracle(name, CONFIGS[name], SEEDS, READS, distributions=("restart_seconds",))
    c = CONFIGS[name]
    if any(x.in_process for x in c.causes):  # the mechanism ran: both outcomes, in the proportion asked
        tried = means["in_process_succeeded"] + means["in_process_failed"]
        assert means["in_process_succeeded"] > 0.5 * c.in_process_success * tried > 0
    if any(x.crash_loop for x in c.causes):  # restarts failed and were tried again, some escalated
        assert means["attempts"] > means["interruptions"] - means["in_process_succeeded"]
        assert means["escalations"] > 0


@st.composite
def restart_specs(draw):
    """The kernel's plans and the extended mechanisms' jobs, on servers or not, with some of their causes restarted
    in process first and some in crash loops."""
    s = draw(mixed_specs(st.sampled_from([None, None, POOLS, Servers(burst_per_day=20.0, burst_domain=2)])))
    causes = s.cause_list
    n = len(causes)
    ip = draw(st.lists(st.booleans(), min_size=n, max_size=n))
    cl = draw(st.lists(st.booleans(), min_size=n, max_size=n))
    return replace(s, causes=tuple(replace(c, in_process=a, crash_loop=b) for c, a, b in zip(causes, ip, cl,
                                                                                                strict=True)),
                   in_process_seconds=draw(st.sampled_from([0.0, 1.0, 30.0])),
                   in_process_success=draw(st.sampled_from([0.0, 0.5, 1.0])),
                   restart_failure=draw(st.sampled_from([0.0, 0.5, 0.9, 1.0])),
                   restart_attempts=draw(st.integers(1, 5)),
                   escalation_seconds=draw(st.sampled_from([0.0, 600.0, 7200.0])))


@settings(max_examples=examples(40), deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                           HealthCheck.filter_too_much])
@given(s=restart_specs(), horizon_steps=st.integers(1, 2000), cuts=st.lists(st.floats(0, 1), max_size=10))
def test_any_partition_gives_identical_state_with_in_process_restarts_and_crash_loops(s, horizon_steps, cuts):
    check_cuts(s, horizon_us(s, horizon_steps), cuts)
