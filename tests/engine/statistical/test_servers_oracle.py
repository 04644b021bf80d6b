"""Servers (simd/engine/servers.py): the engine against the per-step oracle with one Bernoulli per server and
step at its lifetime's conditional hazard, in means and in distribution (interruptions, SDC detections, wall
time per job: engine_stats), for lemons, gamma rate multipliers, Weibull shapes 0.7 and 1.5, lognormal lifetimes
and the servers beside
every mechanism they combine with (stragglers, causes, hyper-checkpointing, committed SDCs); any cut of time
gives the same state.

8 servers of 8 GPUs, each failing every ~500 executed steps on average (0.015 per GPU-hour at 60 s steps): about
60 failures per 3000-step job, lifetimes of every age met."""

from dataclasses import replace

import pytest
from engine_stats import (
    DISTRIBUTIONS,
    agree_with_oracle,
    distributions_differ,
    engine_samples,
    field,
    oracle_samples,
)
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from specs import llama3_causes, spec
from support.examples import examples
from support.partition import check_cuts, horizon_us

from simd.engine import Stragglers
from simd.engine.servers import Servers
from simd.engine.spec import Cause, CommittedSdc, Detector, Hyper

SEEDS = 56  # per configuration: the module has 27 configurations, the suite's largest (its 5-minute limit)
# the checks that the distribution test has the power to tell two models apart: more seeds than SEEDS. At 100 each
# KS p-value is at least 1,000 times below engine_stats.ALPHA (regimes 6.6e-8, Weibull 1.7e-9, the mixture 3e-53; at
# 200: 3e-13, 3.4e-16, 1.6e-108; at SEEDS itself 2.1e-5, 2.1e-5, 5.7e-31), and each model against itself stays far
# above it (p 0.82, 0.11, 0.37)
POWER_SEEDS = 100
# a replayed log: 6 log servers over 100,000 s, ~12 faults each, some at the same instant, for 8 servers
_r = __import__("random").Random(5)
REPLAY = tuple(tuple(sorted(_r.uniform(0, 1e5) for _ in range(_r.randint(6, 18)))) + ((5e4,) if k < 3 else ())
               for k in range(6))
# a mixture of every law: quick resets, part swaps, long replacements (mean 408 + 2160 + 1800 = 4368 s)
MIXTURE = ((0.6, "lognormal", 600.0, 0.5), (0.3, "exponential", 7200.0, 0.0), (0.1, "uniform", 36000.0, 0.0))
BASE = spec(n_gpus=64, hard_per_gpu_hour=0.015, sdc_per_gpu_hour=0.002)
LEMONS = Servers(lemon_fraction=0.25, lemon_multiplier=5.0)
CONFIGS = {
    "lemons": replace(BASE, servers=LEMONS),
    "weibull_0.7": replace(BASE, servers=Servers(lifetime="weibull", shape=0.7)),
    "weibull_1.5": replace(BASE, servers=Servers(lifetime="weibull", shape=1.5)),
    "lognormal_1.0_lemons": replace(BASE, servers=replace(LEMONS, lifetime="lognormal", shape=1.0)),
    "gamma_0.5": replace(BASE, servers=Servers(rate_shape=0.5)),
    "gamma_2_weibull_1.5": replace(BASE, servers=Servers(rate_shape=2.0, lifetime="weibull", shape=1.5)),
    "weibull_0.7_stragglers_llama3": replace(
        BASE, servers=Servers(lifetime="weibull", shape=0.7), causes=llama3_causes("warm"), restart_seconds=388.2,
        stragglers=Stragglers(0.5, 1, 1.2, replace_after_steps=300)),
    "lemons_hyper_committed": replace(
        BASE, servers=LEMONS, validation_interval_steps=0, hyper=Hyper(5, 200),
        committed_sdc=CommittedSdc((Detector("scan", "exponential", 3600.0, 0.0, 0.8),), 3)),
    # issue 22: bursts of 2 + geometric servers (mean 3), and of a failure domain of 4 servers, with lemons
    "bursts_geometric": replace(BASE, servers=Servers(burst_per_day=4.0, burst_mean_size=3.0)),
    "bursts_domain_lemons": replace(BASE, servers=replace(LEMONS, burst_per_day=4.0, burst_domain=4)),
    # faults clustered in time: a calm regime (x0.4, half a day) and a stormy one (x5, 0.1 day) common to the
    # servers, alone and with Weibull lifetimes, gamma rates and a rate schedule (x1, x3 from day 0.5, x0.5 from
    # day 1.2)
    "regimes": replace(BASE, servers=Servers(regimes=((0.4, 0.5), (5.0, 0.1)))),
    "regimes_weibull_gamma_schedule": replace(BASE, servers=Servers(
        lifetime="weibull", shape=0.7, rate_shape=2.0, regimes=((0.4, 0.5), (5.0, 0.1)),
        rate_schedule=((0.0, 1.0), (0.5, 3.0), (1.2, 0.5)))),
    # repairs that do not hold (servers.relapse): without pools, 40% of the renewals a short lifetime of 30 min
    # (divided by the gamma multiplier, in the regimes' operational time)
    "relapse_weibull_gamma_regimes": replace(BASE, servers=Servers(
        lifetime="weibull", shape=0.7, rate_shape=2.0, regimes=((0.4, 0.5), (5.0, 0.1)), relapse=(0.4, 0.5))),
}
# capacity (stage 2): no pools at all (every failure waits for its own server's repair); a standby and a spare
# that run out (lognormal repairs of 2 h median); standbys and spares under Weibull lifetimes, lemons and gamma
CAPACITY = {
    "no_pools": replace(BASE, servers=Servers(warm_standbys=0, repair=("exponential", 3600.0, 0.0))),
    "standby_spare_exhausted": replace(BASE, servers=Servers(warm_standbys=1, spares=1, preemption_seconds=600.0,
                                                             repair=("lognormal", 7200.0, 1.0))),
    "pools_weibull_lemons_gamma": replace(BASE, causes=llama3_causes("warm"), servers=Servers(
        lemon_fraction=0.25, lemon_multiplier=5.0, rate_shape=2.0, lifetime="weibull", shape=0.7, warm_standbys=2,
        spares=4, preemption_seconds=300.0, repair=("uniform", 72000.0, 0.0), manual_probability=0.5,
        manual_repair=("exponential", 30000.0, 0.0), repair_fail=(0.4, 0.2))),
    # stage 3: lemons retired after 2 blames within 6 h (the cluster shrinks to the job's 8 servers); diagnosis that
    # misses a fifth of the failures and pins a quarter of the rest on another server, with Weibull 0.7 lifetimes,
    # lemons and retirement
    # the drill "spares taken": two of three spares withheld
    "bursts_pools_weibull": replace(BASE, servers=Servers(
        lifetime="weibull", shape=0.7, burst_per_day=4.0, burst_mean_size=3.0, warm_standbys=1, spares=2,
        repair=("exponential", 3600.0, 0.0))),
    "replay_pools": replace(BASE, servers=Servers(replay=REPLAY, replay_span_seconds=1e5, warm_standbys=1, spares=1,
                                                  preemption_seconds=300.0, repair=("exponential", 7200.0, 0.0))),
    # a replayed log and bursts together: the bursts strike servers whose next faults come from the log; the log's
    # own repair times (`replay.repairs: log`, 1 to 3 hours each), one left open per log server, which the repair
    # model repairs as it does the bursts' servers (checked to tell them from the model's repairs: 20 standard
    # errors on the standbys' replacements)
    "replay_bursts_pools": replace(BASE, servers=Servers(
        replay=REPLAY, replay_span_seconds=1e5, replay_repairs=tuple(
            tuple(float("nan") if j == 1 else 3600.0 * (1 + (j + k) % 3) for j in range(len(ts)))
            for k, ts in enumerate(REPLAY)), burst_per_day=4.0, burst_mean_size=3.0, warm_standbys=1, spares=1,
        preemption_seconds=300.0, repair=("exponential", 7200.0, 0.0))),
    # re-scheduling on new hosts as a gang (AIReSim's host selection): each interruption beyond the standbys staffs
    # the two standbys too, from the one spare, then from the repairs, then 30 min of host selection (the job
    # policy's host selection: tests/engine/test_servers.py, exactly)
    "gang_host_selection": replace(BASE, servers=Servers(warm_standbys=2, spares=1, preemption_seconds=600.0,
                                                         host_selection_seconds=1800.0, gang=True,
                                                         repair=("exponential", 7200.0, 0.0))),
    # repairs as a mixture of three kinds (a fault log's, simd trace fit): no pools, so the job waits for each
    # failed server's own repair and the waiting time is the sum of the repairs drawn
    "repair_mixture": replace(BASE, servers=Servers(warm_standbys=0, repair_mixture=MIXTURE)),
    # causes that take no server down (software faults, hangs: Cause.server_down False): their failing servers stay
    # in the job, the others' go to repair, with diagnosis imperfect and a standby and a spare that run out
    "causes_servers_stay": replace(BASE, causes=(Cause("gpu", 0.5, 120.0, 300.0), Cause("software", 0.3, 0.0, 300.0,
                                                                                          server_down=False),
                                                 Cause("hang", 0.2, 600.0, 300.0, server_down=False)),
                                   servers=Servers(warm_standbys=1, spares=1, preemption_seconds=600.0,
                                                   repair=("exponential", 7200.0, 0.0), diagnosis=0.9,
                                                   misattribution=0.2)),
    # regimes with pools and bursts: lifetimes restarted by replacements walk the regime path from their step
    "regimes_pools_bursts_lemons": replace(BASE, servers=replace(
        LEMONS, lifetime="lognormal", shape=1.0, regimes=((0.4, 0.5), (5.0, 0.1)), warm_standbys=1, spares=1,
        burst_per_day=4.0, repair=("exponential", 7200.0, 0.0))),
    "spares_withheld": replace(BASE, servers=Servers(warm_standbys=1, spares=3, spares_withheld=2,
                                                     preemption_seconds=600.0, repair=("exponential", 7200.0, 0.0))),
    "lemons_retired": replace(BASE, servers=replace(LEMONS, warm_standbys=2, spares=4, preemption_seconds=300.0,
                                                    repair=("exponential", 3600.0, 0.0), retire_after=2,
                                                    retire_window_seconds=21600.0)),
    # repairs that do not hold with pools: the flag waits through the repair and the pools for the server's next
    # lifetime in the job; beside lemons whose false repairs keep them lemons, a missed diagnosis, a cause that takes
    # no server down
    "relapse_pools_lemons_causes": replace(
        BASE, causes=(Cause("gpu", 0.7, 120.0, 300.0), Cause("software", 0.3, 0.0, 300.0, server_down=False)),
        servers=replace(LEMONS, warm_standbys=1, spares=1, preemption_seconds=600.0,
                        repair=("exponential", 3600.0, 0.0), repair_fail=(0.4, 0.0), diagnosis=0.9,
                        misattribution=0.2, relapse=(0.4, 1.0))),
    "diagnosis_imperfect_weibull_retired": replace(BASE, servers=replace(
        LEMONS, lifetime="weibull", shape=0.7, warm_standbys=1, spares=2, repair=("exponential", 7200.0, 0.0),
        repair_fail=(0.3, 0.0), diagnosis=0.8, misattribution=0.25, retire_after=3, retire_window_seconds=36000.0)),
}
CONFIGS.update(CAPACITY)
WAITING = {"waiting_seconds": (lambda j: j.bucket_seconds["waiting"], lambda r: r["waiting_seconds"]),
           **{f"replacements_{k}": (lambda j, k=k: j.replacements[k], lambda r, k=k: r[f"replacements_{k}"])
              for k in ("standby", "spare", "waited")},
           **{f"repairs_{k}": (lambda j, k=k: j.repairs[k], lambda r, k=k: r[f"repairs_{k}"])
              for k in ("started", "manual", "false", "false_manual", "lemons_fixed")},
           **{f"diagnosis_{k}": (lambda j, k=k: j.diagnosis[k], lambda r, k=k: r[f"diagnosis_{k}"])
              for k in ("missed", "wrong")},
           "retirements": (lambda j: j.retirements, lambda r: r["retirements"]),
           "gpu_hours_pools": (lambda j: j.gpu_hours["pools"], lambda r: r["gpu_hours_pools"])}
RELAPSED = {"repairs_relapsed": (lambda j: j.repairs["relapsed"], lambda r: r["repairs_relapsed"])}
BURSTS = {"bursts": (lambda j: j.bursts["count"], lambda r: r["bursts"]),
          "burst_servers": (lambda j: j.bursts["servers"], lambda r: r["burst_servers"])}
FIELDS = ("effective_utilization", "interruptions", "server_failures", "sdc_detected", "sdc_baked",
          "recompute_steps", "wall_seconds")


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_engine_matches_the_per_step_loop_with_servers(name):
    reads = {f: field(f) for f in FIELDS} | (WAITING if name in CAPACITY else {}) | \
        (BURSTS if "bursts" in name else {}) | (RELAPSED if "relapse" in name else {})
    # repairs of a mixture: the waiting time, the repairs' sum there, also in distribution (the engine draws one
    # uniform, the component and its quantile; the oracle a draw for the component, then its own sampler)
    means = agree_with_oracle(name, CONFIGS[name], SEEDS, reads,
                              distributions=("waiting_seconds",) if name == "repair_mixture" else ())
    assert means["interruptions"] > 30  # the configuration exercises what it is for
    if name in CAPACITY:
        assert means["waiting_seconds"] > 0 and means["replacements_waited"] > 1
    if name == "pools_weibull_lemons_gamma":
        assert means["repairs_manual"] > 1 and means["repairs_false"] > 1 and means["repairs_lemons_fixed"] > 0.5
    if "bursts" in name:
        assert means["bursts"] > 5 and means["burst_servers"] > 2 * means["bursts"] - 1e-9
    if "relapse" in name:
        assert means["repairs_relapsed"] > 10
    if name == "lemons_retired":
        assert means["retirements"] > 1 and means["repairs_lemons_fixed"] > 0.5
    if name == "diagnosis_imperfect_weibull_retired":
        assert means["diagnosis_missed"] > 5 and means["diagnosis_wrong"] > 5 and means["retirements"] > 0.5
    if name == "gang_host_selection":  # re-schedulings that staffed the standbys, used by later interruptions
        assert means["replacements_standby"] > means["replacements_spare"] + means["replacements_waited"]
    if name == "standby_spare_exhausted":
        assert means["replacements_standby"] > 1 and means["replacements_spare"] > 1


def test_the_distribution_check_tells_a_mixture_from_its_components_reweighted():
    """The check sees a mixture whose weights are wrong: the same three kinds of repair weighted 0.1, 0.3, 0.6
    (mean 14,661 s where the mixture's is 4,368 s)."""
    reads = {"waiting_seconds": WAITING["waiting_seconds"]}
    ours = engine_samples(CONFIGS["repair_mixture"], POWER_SEEDS, reads)
    swapped = tuple((w, *rest) for w, (_, *rest) in zip((0.1, 0.3, 0.6), MIXTURE, strict=True))
    theirs = oracle_samples(replace(BASE, servers=Servers(warm_standbys=0, repair_mixture=swapped)), POWER_SEEDS, reads)
    assert distributions_differ(ours, theirs)


def test_the_distribution_check_tells_regimes_from_their_mean_rate():
    """The check has the power to see faults clustered in time: regimes (x0.4 and x5) against servers failing
    steadily at the regimes' long-run mean rate (x1.17: the stormy regime holds 0.1 / (0.5 + 0.1) of the steps),
    whose interruptions per job are far less dispersed."""
    reads = {f: field(f) for f in DISTRIBUTIONS}
    ours = engine_samples(CONFIGS["regimes"], POWER_SEEDS, reads)
    steady = Servers(lifetime="weibull", shape=1.0, rate_schedule=((0.0, 0.4 * 5 / 6 + 5.0 / 6),))
    theirs = oracle_samples(replace(BASE, servers=steady), POWER_SEEDS, reads)
    assert any(d.startswith("interruptions") for d in distributions_differ(ours, theirs))


def test_the_distribution_check_tells_weibull_from_exponential():
    """The check has the power to see a lifetime of the wrong shape: Weibull 0.5 (infant mortality: a server
    fails early in its lifetime more often; by renewal theory ~2 more failures per server over the job than at
    the same mean rate) against exponential servers of the same mean."""
    reads = {f: field(f) for f in DISTRIBUTIONS}
    ours = engine_samples(replace(BASE, servers=Servers(lifetime="weibull", shape=0.5)), POWER_SEEDS, reads)
    theirs = oracle_samples(replace(BASE, servers=Servers(lemon_fraction=0.5, lemon_multiplier=1.0)), POWER_SEEDS,
                            reads)
    assert any(d.startswith("interruptions") for d in distributions_differ(ours, theirs))


@st.composite
def server_specs(draw):
    servers = Servers(gpus_per_server=draw(st.sampled_from([1, 4, 8])),
                      lemon_fraction=draw(st.sampled_from([0.0, 0.1, 0.5])),
                      lemon_multiplier=draw(st.sampled_from([1.0, 3.0, 20.0])),
                      lifetime=draw(st.sampled_from(["exponential", "weibull", "lognormal"])),
                      shape=draw(st.sampled_from([0.5, 1.0, 2.5])),
                      rate_shape=draw(st.sampled_from([0.0, 0.0, 0.4, 3.0])),
                      warm_standbys=draw(st.sampled_from([None, None, 0, 2])), spares=draw(st.sampled_from([0, 3])),
                      spares_withheld=draw(st.sampled_from([0, 0, 2])),
                      preemption_seconds=draw(st.sampled_from([0.0, 600.0])),
                      host_selection_seconds=draw(st.sampled_from([0.0, 180.0])),
                      gang=draw(st.sampled_from([False, True])),
                      repair=draw(st.sampled_from([("exponential", 3600.0, 0.0), ("lognormal", 600.0, 2.0)])),
                      repair_mixture=draw(st.sampled_from([(), (), MIXTURE])),
                      diagnosis=draw(st.sampled_from([1.0, 1.0, 0.7])),
                      misattribution=draw(st.sampled_from([0.0, 0.0, 0.3])),
                      retire_after=draw(st.sampled_from([0, 0, 1, 3])),
                      retire_window_seconds=draw(st.sampled_from([3600.0, 1e6])),
                      burst_per_day=draw(st.sampled_from([0.0, 0.0, 20.0])),
                      burst_mean_size=draw(st.sampled_from([2.0, 4.0])), burst_domain=draw(st.sampled_from([0, 0, 3])),
                      regimes=draw(st.sampled_from([(), (), ((0.2, 0.3), (8.0, 0.05)), ((0.0, 0.2), (3.0, 0.4))])),
                      rate_schedule=draw(st.sampled_from([(), (), ((0.0, 2.0), (0.01, 0.0), (0.03, 5.0))])),
                      relapse=draw(st.sampled_from([(0.0, 0.0), (0.0, 0.0), (0.5, 0.01), (1.0, 0.2)])))
    v = draw(st.integers(1, 30))
    return spec(
        n_gpus=servers.gpus_per_server * draw(st.integers(1, 200)), servers=servers,
        step_seconds=draw(st.sampled_from([1.0, 30.0, 7.3])),
        hard_per_gpu_hour=draw(st.sampled_from([0.0, 1e-3, 3e-2])),
        target_steps=draw(st.integers(1, 3000)),
        ckpt_interval_steps=v * draw(st.integers(1, 5)) + draw(st.sampled_from([0, 0, 3])),
        validation_interval_steps=draw(st.sampled_from([0, v])),
        causes=draw(st.sampled_from([(), llama3_causes("warm")])),
        stragglers=draw(st.sampled_from([None, None, Stragglers(0.5, 1, 1.3)])),
        hyper=draw(st.sampled_from([None, Hyper(5, 100)])),
        seed=draw(st.integers(0, 2**32)),
    )


@settings(max_examples=examples(40), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(s=server_specs(), horizon_steps=st.integers(1, 3000), cuts=st.lists(st.floats(0, 1), max_size=10))
def test_any_partition_gives_identical_state_with_servers(s, horizon_steps, cuts):
    check_cuts(s, horizon_us(s, horizon_steps), cuts)
