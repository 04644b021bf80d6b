"""Elastic replica groups (recovery.elastic; Cause.elastic, JobSpec.elastic_*): the engine against the per-step
oracle (means within 4 standard errors, distributions by KS: engine_stats) with groups dropped and rejoining, the
minimum reached (the cause's ordinary path, every group back), SDCs, loads, stragglers, in-process restarts and crash
loops on the ordinary path, and on servers (pools of standbys and spares, repairs, bursts, misdiagnosis, the gang
policy with host selection); any cut of time, and any tick size, giving the same state.

The statistical and property checks (slow: they live in tests/engine/statistical)."""

from dataclasses import replace

import pytest
from engine_stats import agree_with_oracle, field
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from specs import llama3_causes, spec
from support.examples import examples
from support.partition import check_cuts, horizon_us

from simd.engine.servers import Servers
from simd.engine.spec import Stragglers

SEEDS = 84
SERVER_SEEDS = 100  # (the suite's 5-minute limit)
LOAD = 93.6  # TrainMover's checkpoint load at 8,192 GPUs (simd/models/recovery.py)
HARDWARE = {"gpu", "network", "host"}  # Llama 3's causes that take a server down
EVERY = HARDWARE | {"software", "other"}


def _elastic(causes, names=HARDWARE, **kw):
    return tuple(replace(c, elastic=c.name in names, **{k: c.name in v for k, v in kw.items()}) for c in causes)


# four groups, two must run: the hardware causes drop a group, a rejoin after an hour (replacement and heal), so
# three failures within it reach the minimum; SDCs baked in and found, loads, the mode's 3% overhead, stragglers
# (each step drawn: a rejoin ends the drawn segment)
# eight groups, seven must run (one out at a time): every cause drops a group, the failure that finds one out takes
# the ordinary path (an in-process restart first for software, crash loops of every cause), under the warm strategy
CONFIGS = {
    "rejoin_and_minimum": spec(target_steps=1500, hard_per_gpu_hour=1e-3, sdc_per_gpu_hour=2e-4,
                               ckpt_interval_steps=50, validation_interval_steps=40, ckpt_load_seconds=LOAD,
                               causes=_elastic(llama3_causes()), elastic_groups=4, elastic_min_groups=2,
                               elastic_replace_seconds=1800.0, elastic_heal_seconds=1800.0, elastic_overhead=0.03,
                               stragglers=Stragglers(0.5, 1, 1.2, replace_after_steps=40)),
    "one_out_at_a_time": spec(target_steps=1500, hard_per_gpu_hour=1e-3, ckpt_load_seconds=LOAD,
                              causes=_elastic(llama3_causes("warm"), EVERY, in_process={"software"},
                                              crash_loop=EVERY),
                              in_process_seconds=20.0, in_process_success=0.5, restart_failure=0.4,
                              restart_attempts=3, escalation_seconds=1800.0, elastic_groups=8, elastic_min_groups=7,
                              elastic_replace_seconds=600.0, elastic_heal_seconds=1200.0, elastic_overhead=0.01),
}
# on servers (docs/model.md, "Elastic replica groups"): 8 servers of 8 GPUs in four groups of two, each server
# failing every ~500 executed steps, two groups must run; two warm standbys and a spare (10 min preemption) that
# run out under lognormal repairs of 2 h median, so dropped groups wait for repairs; bursts (4 a day, mean 3
# servers) that drop several groups at once or find the minimum; a tenth of the failures missed by diagnosis, a
# fifth of the rest pinned on the other server of the group
SERVERS = spec(n_gpus=64, target_steps=1500, hard_per_gpu_hour=0.015, sdc_per_gpu_hour=0.002, ckpt_load_seconds=LOAD,
               causes=_elastic(llama3_causes("warm")), restart_seconds=388.2, elastic_groups=4,
               elastic_min_groups=2, elastic_replace_seconds=300.0, elastic_heal_seconds=900.0, elastic_overhead=0.02,
               servers=Servers(warm_standbys=2, spares=1, preemption_seconds=600.0, repair=("lognormal", 7200.0, 1.0),
                               burst_per_day=4.0, burst_mean_size=3.0, diagnosis=0.9, misattribution=0.2))
CONFIGS["servers_pools_bursts"] = SERVERS
# the gang policy (a group re-scheduled beyond the standbys waits for the standby staffed again and 30 min of host
# selection), failure domains of 4 servers (two groups) struck whole, Weibull 0.7 lifetimes, lemons retired after
# two blames in 6 h, every cause dropping its groups (software keeps its server: no repair), stragglers
CONFIGS["servers_gang_domains"] = replace(
    SERVERS, causes=_elastic(llama3_causes("warm"), EVERY), stragglers=Stragglers(0.5, 1, 1.2, replace_after_steps=300),
    servers=Servers(warm_standbys=1, spares=2, preemption_seconds=600.0, repair=("exponential", 7200.0, 0.0),
                    host_selection_seconds=1800.0, gang=True, burst_per_day=4.0, burst_domain=4, lifetime="weibull",
                    shape=0.7, lemon_fraction=0.25, lemon_multiplier=5.0, retire_after=2,
                    retire_window_seconds=21600.0))
SERVER_READS = {
    "waiting_seconds": (lambda j: j.bucket_seconds["waiting"], lambda r: r["waiting_seconds"]),
    "server_failures": (lambda j: j.server_failures, lambda r: r["server_failures"]),
    "standby": (lambda j: j.replacements["standby"], lambda r: r["replacements_standby"]),
    "spare": (lambda j: j.replacements["spare"], lambda r: r["replacements_spare"]),
    "waited": (lambda j: j.replacements["waited"], lambda r: r["replacements_waited"]),
    "bursts": (lambda j: j.bursts["count"], lambda r: r["bursts"]),
    "wrong": (lambda j: j.diagnosis["wrong"], lambda r: r["diagnosis_wrong"]),
    "retirements": (lambda j: j.retirements, lambda r: r["retirements"])}
READS = {f: field(f) for f in ("effective_utilization", "interruptions", "recompute_steps", "wall_seconds",
                               "restart_seconds", "mean_step_seconds", "escalations")} | {
    "degraded_seconds": (lambda j: j.bucket_seconds["degraded"], lambda r: r["degraded_seconds"]),
    "detection_seconds": (lambda j: j.bucket_seconds["detection"], lambda r: r["detection_seconds"]),
    "drops": (lambda j: j.elastic["drops"], lambda r: r["elastic_drops"]),
    "rejoins": (lambda j: j.elastic["rejoins"], lambda r: r["elastic_rejoins"]),
    # failures of elastic causes that found the minimum: the ordinary path
    "at_minimum": (lambda j: sum(v for k, v in j.interruptions_by_cause.items() if k in HARDWARE),
                   lambda r: sum(v for k, v in r["interruptions_by_cause"].items() if k in HARDWARE))}


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_engine_matches_the_per_step_loop_with_elastic_groups(name):
    on_servers = CONFIGS[name].servers is not None
    compared = ("degraded_seconds", "drops") + (("waiting_seconds",) if on_servers else ())
    means = agree_with_oracle(name, CONFIGS[name], SERVER_SEEDS if on_servers else SEEDS,
                              READS | (SERVER_READS if on_servers else {}), distributions=compared)
    # the mechanism ran: groups dropped and rejoined, and failures of elastic causes found the minimum
    assert means["drops"] > 1 and means["rejoins"] > 1 and means["at_minimum"] > 0.1
    if on_servers:  # dropped groups took standbys, spares, and waited for repairs; bursts struck
        assert min(means["standby"], means["spare"], means["waited"], means["bursts"]) > 0.5


@st.composite
def elastic_specs(draw):
    """Short jobs with elastic groups: any groups and minimum, some causes elastic, rejoins short and long, SDCs,
    validations, loads, in-process restarts and crash loops on the ordinary path, a quarter under stragglers, a third
    on servers."""
    causes = llama3_causes(draw(st.sampled_from(["cold", "warm"])))
    n = len(causes)
    el = draw(st.lists(st.booleans(), min_size=n, max_size=n))
    ip = draw(st.lists(st.booleans(), min_size=n, max_size=n))
    cl = draw(st.lists(st.booleans(), min_size=n, max_size=n))
    groups = draw(st.integers(1, 9))
    on = {}
    if draw(st.integers(0, 2)) == 0:  # a third on servers: 1 to 3 servers of 8 GPUs a group, pools or none, bursts
        # (of a geometric size or of failure domains of 2), misdiagnosis, retirement, the gang policy, Weibull
        pools = draw(st.booleans())
        on = dict(n_gpus=8 * groups * draw(st.integers(1, 3)), servers=Servers(
            warm_standbys=draw(st.integers(0, 2)) if pools else None, spares=draw(st.integers(0, 2)),
            preemption_seconds=draw(st.sampled_from([0.0, 600.0])),
            repair=(draw(st.sampled_from(["exponential", "lognormal"])), draw(st.sampled_from([60.0, 7200.0])), 1.0),
            burst_per_day=draw(st.sampled_from([0.0, 30.0])), burst_mean_size=3.0,
            burst_domain=draw(st.sampled_from([0, 2])), diagnosis=draw(st.sampled_from([1.0, 0.8])) if pools else 1.0,
            misattribution=draw(st.sampled_from([0.0, 0.4])) if pools else 0.0,
            retire_after=draw(st.sampled_from([0, 2])) if pools else 0, retire_window_seconds=36000.0,
            gang=draw(st.booleans()), host_selection_seconds=draw(st.sampled_from([0.0, 900.0])),
            lifetime=draw(st.sampled_from(["exponential", "weibull"])), shape=0.7))
    return spec(**on, target_steps=draw(st.integers(1, 400)), step_seconds=draw(st.sampled_from([1.0, 60.0, 7.3])),
                hard_per_gpu_hour=draw(st.sampled_from([0.0, 1e-3, 2e-2])),
                sdc_per_gpu_hour=draw(st.sampled_from([0.0, 1e-3])),
                ckpt_interval_steps=draw(st.integers(1, 60)), validation_interval_steps=draw(st.integers(0, 40)),
                ckpt_load_seconds=draw(st.sampled_from([0.0, 30.0])),
                causes=tuple(replace(c, elastic=a, in_process=b, crash_loop=d)
                             for c, a, b, d in zip(causes, el, ip, cl, strict=True)),
                in_process_seconds=20.0, in_process_success=0.5, restart_failure=draw(st.sampled_from([0.0, 0.5])),
                restart_attempts=2, escalation_seconds=600.0, elastic_groups=groups,
                elastic_min_groups=draw(st.integers(1, groups)),
                elastic_replace_seconds=draw(st.sampled_from([0.0, 55.0, 3600.0])),
                elastic_heal_seconds=draw(st.sampled_from([0.0, 7.0, 900.0])),
                elastic_overhead=draw(st.sampled_from([0.0, 0.013, 0.5])),
                stragglers=draw(st.sampled_from([None, None, None, Stragglers(0.5, 2, 1.5, 100)])))


@settings(max_examples=examples(80), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(s=elastic_specs(), horizon_steps=st.integers(1, 600), cuts=st.lists(st.floats(0, 1), max_size=10))
def test_any_partition_gives_identical_state_with_elastic_groups(s, horizon_steps, cuts):
    check_cuts(s, horizon_us(s, horizon_steps), cuts)


@pytest.mark.parametrize("ticks", [7, 97])
def test_any_tick_size_gives_identical_state_with_elastic_groups(ticks):
    s = CONFIGS["rejoin_and_minimum"]
    check_cuts(s, horizon_us(s, 1500), [i / ticks for i in range(1, ticks)])
