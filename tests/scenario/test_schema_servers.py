"""The scenario file's `servers`: validated with one clear line per problem, refused where it conflicts,
turned into the engine's Servers, scaled by drills, swept."""

import math

import pytest

from simd.engine import Servers, compile_spec
from simd.scenario import ConfigError, DrillEffects, parse_config, summary

PLAIN = """scenarios:
  - name: s
    n_gpus: 1024
    step_seconds: 60
    target_steps: 300
    failures: {hard_per_gpu_hour: 2.0e-4, sdc_per_gpu_hour: 1.5e-4}
    checkpoint: {interval_steps: 25, seconds: 300}
    validation: {interval_steps: 25, seconds: 20}
"""
SERVERS = PLAIN + ("    servers: {lemons: {fraction: 0.05, multiplier: 10}, "
                   "lifetime: {distribution: weibull, shape: 0.7}}\n")


def errors(text: str) -> list[str]:
    with pytest.raises(ConfigError) as exc:
        parse_config(text)
    return exc.value.errors


def test_servers_reach_the_job_spec():
    s = parse_config(SERVERS).scenarios[0]
    assert s.job_spec().servers == Servers(8, 0.05, 10.0, "weibull", 0.7)
    plan = compile_spec(s.job_spec())
    assert (plan.servers, plan.lemons) == (128, 6)
    lognormal = parse_config(PLAIN + "    servers: {gpus_per_server: 4, lifetime: {distribution: lognormal, "
                                     "sigma: 1.5}}\n").scenarios[0]
    assert lognormal.job_spec().servers == Servers(4, 0.0, 1.0, "lognormal", 1.5)
    assert parse_config(PLAIN + "    servers: {}\n").scenarios[0].job_spec().servers == Servers()
    gamma = parse_config(PLAIN + "    servers: {rates: {gamma_shape: 0.7}}\n").scenarios[0]
    assert gamma.job_spec().servers == Servers(rate_shape=0.7)
    assert compile_spec(gamma.job_spec()).servers == 128  # not the plain process
    assert parse_config(PLAIN).scenarios[0].job_spec().servers is None


@pytest.mark.parametrize("text, expected", [
    (SERVERS.replace("n_gpus: 1024", "n_gpus: 1020"),
     "scenarios[0]: n_gpus must be a multiple of servers.gpus_per_server, got 1020 and 8"),
    (SERVERS.replace("multiplier: 10", "multiplier: 10000").replace("hard_per_gpu_hour: 2.0e-4",
                                                                     "hard_per_gpu_hour: 0.01"),
     "scenarios[0]: failures.hard_per_gpu_hour * servers.lemons.multiplier * step_seconds / 3600 is a lemon GPU's "
     "probability per step and must be <= 1, got 0.01 * 10000.0 * 60.0 / 3600"),
    (SERVERS.replace("n_gpus: 1024", "n_gpus: 2097152"),
     "scenarios[0]: n_gpus / servers.gpus_per_server + warm_standbys + spares is the cluster's servers and must be "
     "<= 131072, got 262144"),
    (PLAIN + "    servers: {warm_standbys: 4}\n",
     "scenarios[0].servers: servers.repair is required with warm_standbys or spares (the pools refill from repair)"),
    (PLAIN + "    servers: {repair: {automatic: {distribution: exponential, mean_seconds: 60}}}\n",
     "scenarios[0].servers: servers.repair needs warm_standbys or spares (without pools a failed server is repaired "
     "at once)"),
    (SERVERS.replace("n_gpus: 1024", "n_gpus: 8192") + "    replicas: 10000\n",
     "scenarios[0]: servers x replicas must be <= 8388608 (each replica keeps every server's lifetime), got 1024 x "
     "10000"),
    (SERVERS + "    shadow: {fraction: 0.5}\n",
     "scenarios[0]: servers and shadow cannot be combined (shadow ranks on servers are not modelled: a disagreement "
     "rides the hard stream)"),
    (PLAIN + "    servers: {lifetime: {distribution: weibull}}\n",
     "scenarios[0].servers.lifetime.weibull.shape: required key is missing"),
    (PLAIN + "    servers: {lifetime: {distribution: exponential, shape: 2}}\n",
     "scenarios[0].servers.lifetime.exponential.shape: unknown key"),
    (PLAIN + "    servers: {lemons: {fraction: 1.5, multiplier: 2}}\n",
     "scenarios[0].servers.lemons.fraction: must be <= 1, got 1.5"),
    (PLAIN + "    servers: {gpus_per_server: 0}\n", "scenarios[0].servers.gpus_per_server: must be >= 1, got 0"),
    (PLAIN + "    servers: {rates: {gamma_shape: 0}}\n",
     "scenarios[0].servers.rates.gamma_shape: must be >= 0.05, got 0"),
])
def test_bad_servers_are_one_clear_line(text, expected):
    assert errors(text) == [expected]


def test_pools_reach_the_job_spec():
    s = parse_config(PLAIN + "    servers: {warm_standbys: 16, spares: {count: 200, preemption_seconds: 1200}, "
                             "repair: {automatic: {distribution: lognormal, median_seconds: 73440, sigma: 1.9}, "
                             "manual: {probability: 0.8, time: {distribution: exponential, mean_seconds: 172800}}, "
                             "false_success: {automatic: 0.4, manual: 0.2}}}\n").scenarios[0]
    assert s.job_spec().servers == Servers(warm_standbys=16, spares=200, preemption_seconds=1200.0,
                                           repair=("lognormal", 73440.0, 1.9), manual_probability=0.8,
                                           manual_repair=("exponential", 172800.0, 0.0), repair_fail=(0.4, 0.2))
    plan = compile_spec(s.job_spec())
    assert (plan.servers, plan.cluster, plan.standbys, plan.preempt_us) == (128, 344, 16, 1200 * 10**6)
    only_spares = parse_config(PLAIN + "    servers: {spares: {count: 3}, repair: {automatic: {distribution: uniform, "
                                       "max_seconds: 600}}}\n").scenarios[0].job_spec().servers
    assert (only_spares.warm_standbys, only_spares.spares, only_spares.repair) == (0, 3, ("uniform", 600.0, 0.0))


def test_a_fleet_with_servers_is_refused():
    text = PLAIN.replace("    n_gpus: 1024\n", "").replace(
        "    failures: {hard_per_gpu_hour: 2.0e-4, sdc_per_gpu_hour: 1.5e-4}\n",
        "    fleet: [{type: a, count: 512, hard_per_gpu_hour: 2.0e-4, sdc_per_gpu_hour: 1.5e-4}]\n") + \
        "    servers: {lifetime: {distribution: weibull, shape: 0.7}}\n"
    assert errors(text) == ["scenarios[0]: servers and fleet cannot be combined (servers of several accelerator "
                            "types are not modelled)"]


def test_a_drill_scales_the_servers_rates_and_renews_their_lifetimes():
    s = parse_config(SERVERS).scenarios[0]
    storm = s.with_effects(DrillEffects(hard_rate_factor=10.0))
    assert storm.servers == s.servers and storm.failures.hard_per_gpu_hour == pytest.approx(2.0e-3)
    a, b = compile_spec(s.job_spec()), compile_spec(storm.job_spec())
    assert b.scale_normal == pytest.approx(a.scale_normal / 10, rel=1e-3)


POOLS = PLAIN + ("    servers: {warm_standbys: 2, spares: {count: 10, preemption_seconds: 600}, "
                 "repair: {automatic: {distribution: exponential, mean_seconds: 7200}, "
                 "manual: {probability: 0.5, time: {distribution: lognormal, median_seconds: 86400, sigma: 1}}}, "
                 "diagnosis: {probability: 0.9, misattribution: 0.1}, "
                 "retirement: {failures: 2, window_seconds: 604800}, price_per_gpu_hour: 2.5}\n")


def test_diagnosis_retirement_and_price_reach_the_job_spec():
    s = parse_config(POOLS).scenarios[0]
    sv = s.job_spec().servers
    assert (sv.diagnosis, sv.misattribution, sv.retire_after, sv.retire_window_seconds) == (0.9, 0.1, 2, 604800.0)
    plan = compile_spec(s.job_spec())
    assert plan.diagnosis_stream is not None and plan.retire_window_us == 604800 * 10**6
    assert s.servers.price_per_gpu_hour == 2.5  # simulate's, not the engine's
    assert sv.host_selection_seconds == 0.0 and plan.host_selection_us == 0  # absent: none
    host = parse_config(POOLS.replace("price_per_gpu_hour: 2.5", "host_selection_seconds: 180")).scenarios[0]
    assert compile_spec(host.job_spec()).host_selection_us == 180 * 10**6
    assert not compile_spec(host.job_spec()).gang  # absent: the job policy
    gang = parse_config(POOLS.replace("price_per_gpu_hour: 2.5", "rescheduling: gang")).scenarios[0]
    assert gang.job_spec().servers.gang and compile_spec(gang.job_spec()).gang
    job = parse_config(POOLS.replace("price_per_gpu_hour: 2.5", "rescheduling: job")).scenarios[0]
    assert job.job_spec() == parse_config(POOLS).scenarios[0].job_spec()  # (the price is not the engine's)
    perfect = parse_config(POOLS.replace("diagnosis: {probability: 0.9, misattribution: 0.1}, ", "")).scenarios[0]
    assert compile_spec(perfect.job_spec()).diagnosis_stream is None  # no draws: stage 2's results exactly


@pytest.mark.parametrize("text, expected", [
    (PLAIN + "    servers: {diagnosis: {probability: 0.5}}\n",
     "scenarios[0].servers: servers.diagnosis needs warm_standbys or spares (without pools no server leaves the job)"),
    (PLAIN + "    servers: {retirement: {failures: 2, window_seconds: 60}}\n",
     "scenarios[0].servers: servers.retirement needs warm_standbys or spares (without pools no server leaves the "
     "job)"),
    (POOLS.replace("failures: 2,", "failures: 0,"), "scenarios[0].servers.retirement.failures: must be >= 1, got 0"),
    (PLAIN + "    servers: {host_selection_seconds: 180}\n",
     "scenarios[0].servers: servers.host_selection_seconds needs warm_standbys or spares (without pools no server "
     "leaves the job)"),
    (PLAIN + "    servers: {rescheduling: gang}\n",
     "scenarios[0].servers: servers.rescheduling needs warm_standbys or spares (without pools no server leaves the "
     "job)"),
    (POOLS.replace("price_per_gpu_hour: 2.5", "rescheduling: together"),
     "scenarios[0].servers.rescheduling: input should be 'job' or 'gang', got 'together'"),
    (POOLS.replace("price_per_gpu_hour: 2.5", "host_selection_seconds: -1"),
     "scenarios[0].servers.host_selection_seconds: must be >= 0, got -1"),
    (POOLS.replace("misattribution: 0.1", "misattribution: -1"),
     "scenarios[0].servers.diagnosis.misattribution: must be >= 0, got -1"),
    (POOLS.replace("count: 10,", "count: 10, withheld: 11,"),
     "scenarios[0].servers.spares: spares.withheld must be <= spares.count, got 11 and 10"),
])
def test_bad_diagnosis_and_retirement_are_one_clear_line(text, expected):
    assert errors(text) == [expected]


def test_the_servers_drills_slow_repairs_take_spares_and_spread_lemons():
    s = parse_config(POOLS).scenarios[0]
    slow = s.with_effects(DrillEffects(repair_time_factor=10)).job_spec().servers
    assert slow.repair == ("exponential", 72000.0, 0.0) and slow.manual_repair == ("lognormal", 864000.0, 1.0)
    taken = s.with_effects(DrillEffects(spares_withheld=50)).job_spec().servers
    assert taken.spares_withheld == 10 and compile_spec(s.with_effects(DrillEffects(spares_withheld=3)).job_spec(
    )).spares_withheld == 3
    outbreak = s.with_effects(DrillEffects.model_validate({"lemons": {"fraction": 0.1, "multiplier": 20}}))
    assert compile_spec(outbreak.job_spec()).lemons == 13  # of the job's 128 servers
    drill = ("drills:\n  - name: d\n    description: x\n    duration_seconds: 60\n    scenarios: [s]\n"
             "    effects: {repair_time_factor: 10}\n")
    assert errors(PLAIN + drill) == ["drills[0] on scenario s: the drill changes servers (repair_time_factor, lemons, "
                                     "spares_withheld, bursts): the scenario has no servers"]
    assert errors(SERVERS + drill) == ["drills[0] on scenario s: the drill's repair_time_factor needs servers.repair "
                                       "(server pools)"]


def test_bursts_reach_the_job_spec_and_bad_ones_are_one_line():
    s = parse_config(SERVERS + "    # bursts\n").scenarios[0]
    assert s.job_spec().servers.burst_per_day == 0.0
    geo = parse_config(PLAIN + "    servers: {bursts: {per_day: 2, mean_size: 3}}\n").scenarios[0].job_spec()
    assert (geo.servers.burst_per_day, geo.servers.burst_mean_size, geo.servers.burst_domain) == (2.0, 3.0, 0)
    plan = compile_spec(geo)
    assert plan.servers == 128 and plan.burst_q == 0.5 and plan.burst_stream is not None  # not the plain plan
    dom = parse_config(PLAIN + "    servers: {bursts: {per_day: 2, domain_servers: 8}}\n").scenarios[0].job_spec()
    assert (dom.servers.burst_domain, dom.servers.burst_mean_size) == (8, 2.0)
    assert errors(PLAIN + "    servers: {bursts: {per_day: 2, mean_size: 3, domain_servers: 8}}\n") == [
        "scenarios[0].servers.bursts: bursts: mean_size or domain_servers, not both"]
    assert errors(PLAIN + "    servers: {bursts: {per_day: 0}}\n") == [
        "scenarios[0].servers.bursts.per_day: must be > 0, got 0"]
    assert errors(PLAIN + "    servers: {bursts: {per_day: 1, mean_size: 1.5}}\n") == [
        "scenarios[0].servers.bursts.mean_size: must be >= 2, got 1.5"]


def test_regimes_and_a_rate_schedule_reach_the_engine_and_bad_ones_are_one_line():
    job = parse_config(PLAIN + "    servers: {regimes: {calm: {multiplier: 0.5, mean_days: 20}, stormy: "
                       "{multiplier: 6, mean_days: 2}}, rate_schedule: [{from_day: 0, multiplier: 1}, "
                       "{from_day: 30, multiplier: 2}]}\n"
                       ).scenarios[0].job_spec()
    assert job.servers.regimes == ((0.5, 20.0), (6.0, 2.0))
    assert job.servers.rate_schedule == ((0.0, 1.0), (30.0, 2.0))
    plan = compile_spec(job)
    assert plan.servers and plan.regimes and plan.regime_stream is not None and plan.regime_stormy == 6.0
    assert plan.rate_schedule == (0.0, 1.0, float(round(30 * 86400 / job.step_seconds)), 2.0)
    line = summary(parse_config(PLAIN + "    servers: {regimes: {calm: {multiplier: 0.5, mean_days: 20}, stormy: "
                                "{multiplier: 6, mean_days: 2}}, rate_schedule: [{from_day: 0, multiplier: 0.25}, "
                                "{from_day: 30, multiplier: 2}, {from_day: 90, multiplier: 1.5}]}\n").scenarios[0])
    assert "regimes (calm x0.5 for 20 days, stormy x6 for 2 days on average)" in line
    assert "a rate schedule of 3 pieces (x0.25 to x2, the last x1.5 from day 90)" in line
    one = PLAIN + "    servers: {rate_schedule: [{from_day: 0, multiplier: 2}]}\n"
    steady = summary(parse_config(one).scenarios[0])
    assert "rates x2 throughout" in steady and "regimes" not in steady
    assert errors(PLAIN + "    servers: {rate_schedule: [{from_day: 1, multiplier: 1}]}\n") == [
        "scenarios[0].servers: servers.rate_schedule: the first piece's from_day must be 0"]
    assert errors(PLAIN + "    servers: {rate_schedule: [{from_day: 0, multiplier: 1}, {from_day: 0, multiplier: 2}]}"
                  "\n") == ["scenarios[0].servers: servers.rate_schedule: piece 2's from_day is not after piece 1's"]
    assert errors(PLAIN + "    servers: {regimes: {calm: {multiplier: 1, mean_days: 0}, stormy: {multiplier: 2, "
                  "mean_days: 1}}}\n") == ["scenarios[0].servers.regimes.calm.mean_days: must be > 0, got 0"]


def test_a_replayed_log_reaches_the_engine_and_bad_ones_are_one_line(tmp_path):
    log = tmp_path / "log.csv"
    log.write_text("time,server,event,class\n100,a,start,GPU\n400,a,end,GPU\n100,b,start,NIC\n3000,c,start,GPU\n")
    s = parse_config(PLAIN + f"    servers: {{replay: {{log: {log}, servers: 5}}}}\n").scenarios[0]
    sv = s.job_spec().servers
    assert sv.replay == ((100.0,), (100.0,), (3000.0,), (), ()) and sv.replay_span_seconds == 3000.0
    assert compile_spec(s.job_spec()).replay_servers == 5
    assert errors(PLAIN + f"    servers: {{replay: {{log: {tmp_path / 'none.csv'}}}}}\n") == [
        f"scenarios[0].servers.replay: replay.log {tmp_path / 'none.csv'}: No such file or directory"]
    assert errors(PLAIN + f"    servers: {{replay: {{log: {log}, servers: 2}}}}\n") == [
        "scenarios[0].servers.replay: replay.servers 2 is fewer than the 3 servers the log names"]
    assert errors(PLAIN + f"    servers: {{replay: {{log: {log}}}, lemons: {{fraction: 0.1, multiplier: 3}}}}\n") == [
        "scenarios[0].servers: servers.replay replays a log's faults: lemons would not apply"]
    log.write_text("time,server,event,class\n100,a,end,GPU\n")
    assert errors(PLAIN + f"    servers: {{replay: {{log: {log}}}}}\n") == [
        f"scenarios[0].servers.replay: replay.log {log}: line 2: server 'a' ends a fault of type '/GPU/' that is "
        "not open"]


def test_a_replayed_logs_own_repair_times_reach_the_engine(tmp_path):
    """`replay.repairs: log`: each fault's repair time (its end less its start, nan when still open) beside its
    start, in the engine's table (microseconds per fault step) with pools; `model` (the default): none."""
    log = tmp_path / "log.csv"
    log.write_text("time,server,event,class\n100,a,start,GPU\n400,a,end,GPU\n100,b,start,NIC\n3000,c,start,GPU\n"
                   "5000,b,end,NIC\n")
    pools = "warm_standbys: 1, repair: {automatic: {distribution: exponential, mean_seconds: 600}}"
    s = parse_config(PLAIN + f"    servers: {{replay: {{log: {log}, servers: 4, repairs: log}}, {pools}}}\n")
    sv = s.scenarios[0].job_spec().servers
    assert sv.replay == ((100.0,), (100.0,), (3000.0,), ())
    assert sv.replay_repairs[:2] == ((300.0,), (4900.0,)) and math.isnan(sv.replay_repairs[2][0])
    assert sv.replay_repairs[3] == ()
    assert compile_spec(s.scenarios[0].job_spec()).replay_repair_us == (3e8, 4.9e9, -1.0)
    assert f"replaying {log} (4 servers; its repair times)" in summary(s.scenarios[0])
    plain = parse_config(PLAIN + f"    servers: {{replay: {{log: {log}}}, {pools}}}\n").scenarios[0].job_spec()
    assert plain.servers.replay_repairs == () and compile_spec(plain).replay_repair_us == ()
    assert errors(PLAIN + f"    servers: {{replay: {{log: {log}, repairs: log}}}}\n") == [
        "scenarios[0].servers: servers.replay.repairs: log needs warm_standbys or spares (without pools a failed "
        "server is repaired at once)"]
    assert errors(PLAIN + f"    servers: {{replay: {{log: {log}, repairs: fitted}}}}\n") == [
        "scenarios[0].servers.replay.repairs: input should be 'model' or 'log', got 'fitted'"]


def test_check_config_gives_a_replayed_scenarios_mtbf_from_its_log(tmp_path):
    """The summary's job MTBF of a replayed log is the log's (its faults on the job's servers per period), not the
    failure rate the scenario would draw from: 128 servers replaying a log of 2 servers with 3 faults in 3000 s
    (50 steps of 60 s) meet 64 x 3 faults per 50 steps: an MTBF of 60 x 50 / 192 s."""
    log = tmp_path / "log.csv"
    log.write_text("time,server,event,class\n100,a,start,GPU\n400,a,end,GPU\n100,b,start,NIC\n3000,b,start,GPU\n")
    s = parse_config(PLAIN + f"    servers: {{replay: {{log: {log}}}}}\n").scenarios[0]
    assert f"job MTBF {60 * 50 / 192 / 3600:.3g} h" in summary(s)


MIXTURE = ("    servers: {warm_standbys: 2, repair: {automatic: {distribution: mixture, components: ["
           "{weight: 0.25, time: {distribution: lognormal, median_seconds: 1800, sigma: 1.3}}, "
           "{weight: 0.75, time: {distribution: exponential, mean_seconds: 172800}}]}}}\n")


def test_a_mixture_of_repairs_reaches_the_engine_and_a_drill_scales_each_component():
    s = parse_config(PLAIN + MIXTURE).scenarios[0]
    servers = s.job_spec().servers
    assert servers.repair_mixture == ((0.25, "lognormal", 1800.0, 1.3), (0.75, "exponential", 172800.0, 0.0))
    plan = compile_spec(s.job_spec())
    assert plan.repair_mix_cum == (0.25, 1.0) and plan.repair_mix_kind == (1, 0)
    assert plan.repair_mix_scale_us == (1.8e9, 1.728e11) and plan.repair_mix_sigma == (1.3, 0.0)
    slow = s.with_effects(DrillEffects(repair_time_factor=10)).job_spec().servers
    assert slow.repair_mixture == ((0.25, "lognormal", 18000.0, 1.3), (0.75, "exponential", 1728000.0, 0.0))


@pytest.mark.parametrize("text, expected", [
    (MIXTURE.replace("0.75", "0.7"),
     "scenarios[0].servers.repair.automatic.mixture: the components' weights sum to 0.95, not 1"),
    (MIXTURE.replace("{weight: 0.25, time: {distribution: lognormal, median_seconds: 1800, sigma: 1.3}}, ", ""),
     "scenarios[0].servers.repair.automatic.mixture.components: must have at least 2 item(s), got [{'time': "
     "{'distribution': 'exponential', 'mean_seconds': 17 ..."),
    (MIXTURE.replace("weight: 0.25", "weight: 0"),
     "scenarios[0].servers.repair.automatic.mixture.components[0].weight: must be > 0, got 0"),
    (MIXTURE.replace("mean_seconds: 172800}", "mean_seconds: 172800}, sigma: 1"),
     "scenarios[0].servers.repair.automatic.mixture.components[1].sigma: unknown key"),
])
def test_a_bad_mixture_of_repairs_is_one_clear_line(text, expected):
    assert errors(PLAIN + text) == [expected]
