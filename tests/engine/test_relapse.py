"""Repairs that do not hold (servers.relapse; simd/engine/servers.py, "Relapses"): the short lifetimes they give,
any cut of time and any tick giving the same state, the scenario keys. The kernel against the per-step oracle in
distribution: tests/engine/statistical/test_servers_oracle.py (``relapse_*``)."""

import math
import random
from dataclasses import replace

import pytest
from specs import spec
from support.partition import check_cuts, horizon_us

from simd.engine import US_PER_SECOND, advance, compile_spec, new_state, retarget, run_job
from simd.engine.servers import Servers
from simd.scenario import ConfigError, parse_config

S = US_PER_SECOND
BASE = spec(n_gpus=64, hard_per_gpu_hour=0.015, target_steps=20000, seed=11)
POOLS = Servers(lifetime="weibull", shape=0.7, rate_shape=1.5, warm_standbys=1, spares=1,
                preemption_seconds=300.0, repair=("exponential", 3600.0, 0.0), relapse=(0.5, 0.3))
NO_POOLS = Servers(lifetime="weibull", shape=0.7, rate_shape=1.5, regimes=((0.4, 0.5), (5.0, 0.1)),
                   relapse=(0.5, 0.3))


def test_half_the_renewals_relapse_and_each_relapse_adds_a_short_lifetime():
    """Exponential servers (mean 500 steps) without pools, every renewal a repair: half of them do not hold, each a
    lifetime of 18 steps on average, so the failures are 1 / (1 - p) = 2 times those without (the short lifetimes
    cost 3.6% of the compute) per executed step, and the relapses half the failures."""
    plain = run_job(replace(BASE, servers=Servers(lemon_fraction=0.5, lemon_multiplier=1.0, relapse=(0.0, 0.0))))
    job = replace(BASE, servers=Servers(lemon_fraction=0.5, lemon_multiplier=1.0, relapse=(0.5, 0.3)))
    got = run_job(job)
    n = got.server_failures
    assert n > 500 and abs(got.repairs["relapsed"] - 0.5 * n) < 4 * math.sqrt(0.25 * n)
    rate = n / (got.target_steps + got.recompute_steps)  # per executed step
    plain_rate = plain.interruptions / (plain.target_steps + plain.recompute_steps)
    assert abs(rate / plain_rate - 2 / (1 + 0.036)) < 0.2
    assert "relapsed" not in plain.repairs  # absent: nothing of it


@pytest.mark.parametrize("servers", [POOLS, NO_POOLS], ids=["pools", "no_pools"])
def test_any_cut_of_time_in_thousands_of_calls_gives_the_same_state(servers):
    """A job advanced in one call and in 2,000 calls cut at random: the same state and events (the flags waiting
    in State.srv_relapse across calls, the repair stream's draws resumed)."""
    s = replace(BASE, servers=servers, target_steps=4000)
    rng = random.Random(3)
    check_cuts(s, horizon_us(s, 4000), [rng.random() for _ in range(2000)])


@pytest.mark.parametrize("servers", [POOLS, NO_POOLS], ids=["pools", "no_pools"])
def test_the_tick_size_changes_nothing(servers):
    s = replace(BASE, servers=servers, target_steps=6000)
    whole = run_job(s)
    assert whole.repairs["relapsed"] > 10
    for tick in (60 * S, 3607 * S, 86400 * S):
        assert run_job(s, tick_us=tick) == whole


def test_a_flag_waits_in_the_state_and_a_drill_that_switches_relapses_off_drops_it():
    s = replace(BASE, servers=replace(POOLS, relapse=(1.0, 0.3), repair=("exponential", 36000.0, 0.0)))
    state, _ = advance(new_state(s), 40 * 3600 * S)
    assert state.srv_relapse and any(state.srv_relapse)  # a server in repair, its next lifetime short
    off = retarget(state, replace(s, servers=replace(s.servers, relapse=(0.0, 0.0))))
    assert off.srv_relapse == () and compile_spec(off.plan.spec).relapse_p == 0
    later, _ = advance(off, state.clock + 3600 * S)
    assert later.clock == state.clock + 3600 * S


SCENARIO = """scenarios:
  - name: s
    n_gpus: 64
    step_seconds: 60
    target_steps: 300
    failures: {hard_per_gpu_hour: 2.0e-3, sdc_per_gpu_hour: 0}
    checkpoint: {interval_steps: 25, seconds: 30}
"""


def test_the_scenario_keys_reach_the_engine():
    s = parse_config(SCENARIO + "    servers: {relapse: {probability: 0.07, mean_hours: 0.8}}\n").scenarios[0]
    assert s.job_spec().servers.relapse == (0.07, 0.8)
    plan = compile_spec(s.job_spec())
    assert plan.relapse_p == 0.07 and plan.relapse_scale == pytest.approx(0.8 * 3600 / 60)


@pytest.mark.parametrize("servers,words", [
    ("{relapse: {probability: 0, mean_hours: 1}}", "probability"),
    ("{relapse: {probability: 0.1, mean_hours: -1}}", "mean_hours"),
    ("{relapse: {probability: 0.1}}", "mean_hours"),
    ("{relapse: {probability: 0.1, mean_hours: 1}, replay: {log: LOG}}", "relapse would not apply"),
])
def test_bad_relapse_keys_are_one_clear_line(servers, words, tmp_path):
    log = tmp_path / "log.csv"
    log.write_text("time,server,event,class\n100,a,start,GPU\n400,a,end,GPU\n")
    with pytest.raises(ConfigError) as exc:
        parse_config(SCENARIO + f"    servers: {servers.replace('LOG', str(log))}\n")
    assert len(exc.value.errors) == 1 and words in exc.value.errors[0] and "\n" not in exc.value.errors[0]


def test_relapses_with_elastic_groups_are_refused_by_name():
    text = SCENARIO.replace("sdc_per_gpu_hour: 0}", "sdc_per_gpu_hour: 0, causes: {gpu: 1}}") + (
        "    servers: {relapse: {probability: 0.1, mean_hours: 1}}\n"
        "    recovery: {elastic: {groups: 4, min_groups: 2}}\n")
    with pytest.raises(ConfigError) as exc:
        parse_config(text)
    assert len(exc.value.errors) == 1
    assert "servers.relapse" in exc.value.errors[0] and "recovery.elastic" in exc.value.errors[0]


@pytest.mark.parametrize("servers", [POOLS, NO_POOLS], ids=["pools", "no_pools"])
def test_the_batch_path_over_replicas_is_the_single_replicas_engine(servers):
    from simd.engine.replicas import advance_replicas, retarget_replicas, run_jobs

    specs = [replace(BASE, servers=servers, target_steps=3000, seed=k) for k in range(6)]
    limit = 10**4 * 3000 * 60 * S
    assert run_jobs(specs, limit) == [run_job(x, limit_us=limit) for x in specs]
    states = advance_replicas([new_state(x) for x in specs], 30 * 3600 * S)
    off = replace(specs[0], servers=replace(servers, relapse=(0.0, 0.0)))
    assert retarget_replicas(states, off) == tuple(retarget(x, replace(off, seed=x.plan.spec.seed)) for x in states)
