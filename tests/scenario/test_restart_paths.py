"""In-process restarts and crash loops as scenario keys (recovery.in_process, recovery.crash_loop): the causes they
apply to, one clear error for a cause that is not the scenario's, check-config's words, simulate --json's keys only
for the scenarios that have them, and the restart bucket split exactly with their parts (in_process, escalation,
a crash loop's failed attempts as the cause's cold restarts or warm swaps) in simulate --json and in the metrics."""

from __future__ import annotations

import pytest
from support.daemon import FakeClock
from support.scenarios import job, scenario_file

from simd.daemon.process import assemble
from simd.engine import compile_spec
from simd.models.recovery import expected_restarts_us, migrated_first_order
from simd.offline.simulate import simulate
from simd.scenario.errors import ConfigError
from simd.scenario.load import parse_config
from simd.scenario.summary import summary

PHASES = {"stop": 31.2, "reschedule": 90.0, "communicator_init": 96.6, "warmup": 108.0}  # docs/model.md at 16,384
IN_PROCESS = {"causes": ["software", "other"], "seconds": 30, "success_probability": 0.6}
LOOP = {"failure_probability": 0.5, "max_attempts": 3, "escalation_seconds": 3600}
# llama3's causes under the warm strategy (software and other restart cold) with the phases, SDCs found by
# validation, a checkpoint load; an in-process restart for the software causes, crash loops of every cause
BUSY = {"n_gpus": 16384, "failures": {"hard_per_gpu_hour": 1.0e-4, "sdc_per_gpu_hour": 4.0e-5, "causes": "llama3"},
        "recovery": {"strategy": "warm", "phases": PHASES, "in_process": IN_PROCESS, "crash_loop": LOOP},
        "checkpoint": {"interval_steps": 20, "seconds": 60, "load_seconds": 93.6}}


def _one(**keys):
    (s,) = parse_config(scenario_file(job("p", **keys))).scenarios
    return s


def test_the_keys_name_the_causes_and_their_numbers_reach_the_job():
    spec = _one(**BUSY).job_spec()
    assert {c.name for c in spec.causes if c.in_process} == {"software", "other"}
    assert all(c.crash_loop for c in spec.causes)
    assert (spec.in_process_seconds, spec.in_process_success) == (30, 0.6)
    assert (spec.restart_failure, spec.restart_attempts, spec.escalation_seconds) == (0.5, 3, 3600)
    only = _one(recovery={"crash_loop": {**LOOP, "causes": ["hardware"]}}).job_spec()
    assert [c.crash_loop for c in only.causes] == [True]  # without causes the one cause is hardware
    plain = _one().job_spec()
    assert not any(c.in_process or c.crash_loop for c in plain.cause_list)
    assert plain.restart_failure == 0 and plain.in_process_seconds == 0


@pytest.mark.parametrize(("keys", "message"), [
    ({"recovery": {"in_process": {**IN_PROCESS, "causes": ["gpu"]}}},
     "recovery.in_process.causes: gpu not among the failure causes (hardware)"),
    ({"failures": BUSY["failures"], "recovery": {"crash_loop": {**LOOP, "causes": ["disk"]}}},
     "recovery.crash_loop.causes: disk not among the failure causes (gpu, host, network, other, software)"),
    ({"recovery": {"crash_loop": {**LOOP, "failure_probability": 1.5}}},
     "recovery.crash_loop.failure_probability: must be <= 1, got 1.5"),
    ({"recovery": {"crash_loop": {**LOOP, "max_attempts": 0}}},
     "recovery.crash_loop.max_attempts: must be >= 1, got 0"),
    ({"recovery": {"in_process": {"causes": ["hardware"], "seconds": 30}}},
     "recovery.in_process.success_probability: required key is missing"),
])
def test_a_cause_that_is_not_the_scenarios_or_a_number_out_of_range_is_one_clear_error(keys, message):
    with pytest.raises(ConfigError) as e:
        _one(**keys)
    assert message in str(e.value).lower() and "\n" not in str(e.value)


def test_check_config_says_what_the_recovery_tries():
    line = summary(_one(**BUSY))
    assert "in-process restarts for software, other (30 s, 0.6 succeeding)" in line
    assert "crash loops (0.5 of restarts failing, after 3 attempts a 3600 s intervention)" in line
    assert "in-process" not in summary(_one()) and "crash loop" not in summary(_one())


def test_simulate_splits_the_restart_bucket_exactly_with_in_process_restarts_and_escalations():
    s = _one(**BUSY)
    seen = {"in_process": 0, "escalations": 0, "loops": 0, "sdc": 0}
    for seed in range(4):
        line = simulate(s, seed, None).as_json()
        split, attempts, ip = line["restart_phases"], line["restart_attempts"], line["in_process"]
        cold = attempts["software"] + attempts["other"] + line["sdc_detected"]  # every cold restart
        warm = attempts["gpu"] + attempts["network"] + attempts["host"]
        for k, v in PHASES.items():
            assert split[k] == pytest.approx(cold * v, abs=1e-6)
        assert split["warm_swap"] == pytest.approx(warm * 55.0, abs=1e-6)
        assert split["in_process"] == pytest.approx(30.0 * (ip["succeeded"] + ip["failed"]), abs=1e-6)
        assert split["escalation"] == pytest.approx(3600.0 * line["escalations"], abs=1e-6)
        assert sum(split.values()) == pytest.approx(line["restart_seconds"], abs=1e-6)
        # every interruption is recovered in process, or by one to three attempts of its cause's restart
        done = sum(line["interruptions_by_cause"].values())
        assert done - ip["succeeded"] <= sum(attempts.values()) <= 3 * (done - ip["succeeded"])
        seen = {"in_process": seen["in_process"] + ip["succeeded"], "escalations": seen["escalations"] +
                line["escalations"], "loops": seen["loops"] + sum(attempts.values()) - done + ip["succeeded"],
                "sdc": seen["sdc"] + line["sdc_detected"]}
    assert min(seen.values()) > 0  # every kind of restart met
    plain = simulate(_one(), 0, None).as_json()
    assert not {"in_process", "restart_attempts", "escalations", "restart_phases"} & plain.keys()


def test_the_daemon_exports_the_outcomes_and_the_restart_by_phase_summing_to_the_restart_bucket():
    clock = FakeClock(0.0)
    text = scenario_file(job("both", seed=3, step_seconds=30, target_steps=100000, **BUSY),
                         job("plain", seed=4, step_seconds=30, target_steps=100000,
                             **{**BUSY, "recovery": {"strategy": "warm"}}),
                         speedup=3600)
    ticker, _ = assemble(parse_config(text), clock=clock, wall=lambda: 1.7e9)
    clock.t = 100.0
    ticker.tick()
    r = ticker.registry

    def value(name, **labels):
        return r.get_sample_value(name, labels)

    parts = ("stop", "reschedule", "checkpoint_load", "communicator_init", "warmup", "warm_swap", "in_process",
             "escalation")
    got = {p: value("simd_restart_seconds_total", scenario="both", phase=p) for p in parts}
    assert all(v > 0 for v in got.values()), got
    assert sum(got.values()) == pytest.approx(value("simd_bucket_seconds_total", scenario="both", bucket="restart"),
                                              rel=1e-12)
    outcomes = [value("simd_in_process_restarts_total", scenario="both", outcome=o) for o in ("succeeded", "failed")]
    assert min(outcomes) > 0 and value("simd_restart_escalations_total", scenario="both") > 0
    causes = ("gpu", "network", "host", "software", "other")
    tried = sum(value("simd_restart_attempts_total", scenario="both", cause=c) for c in causes)
    interrupted = sum(value("simd_interruptions_total", scenario="both", cause=c) for c in causes)
    assert tried > interrupted - outcomes[0]  # crash loops tried restarts again
    # without the keys: no part of their own, no outcome, one restart per interruption
    assert value("simd_restart_seconds_total", scenario="plain", phase="in_process") is None
    assert value("simd_in_process_restarts_total", scenario="plain", outcome="failed") == 0
    assert value("simd_restart_escalations_total", scenario="plain") == 0
    for c in causes:
        assert value("simd_restart_attempts_total", scenario="plain", cause=c) == \
            value("simd_interruptions_total", scenario="plain", cause=c)


def test_the_first_order_model_takes_the_mean_restart_the_engine_pays():
    """expected_restart_us against the engine's restart time per interruption (no SDC, no load: the restart bucket
    is the hard failures' restarts), within 4 standard errors, and the analytic gauges take it."""
    keys = {"n_gpus": 1024, "step_seconds": 60, "target_steps": 3000,
            "failures": {"hard_per_gpu_hour": 6.0e-4, "sdc_per_gpu_hour": 0.0, "causes": "llama3"},
            "recovery": {"in_process": IN_PROCESS, "crash_loop": LOOP}, "restart_seconds": 300}
    s = _one(**keys)
    plan = compile_spec(s.job_spec())
    shares = [b - a for a, b in zip((0.0,) + plan.cause_cumulative[:-1], plan.cause_cumulative, strict=True)]
    mean = sum(sh * r for sh, r in zip(shares, expected_restarts_us(plan), strict=True)) / 1e6
    # by hand: every cause loops (1.75 attempts of 300 s, an escalation one time in 8), software and other try 30 s
    # in process first and need the loop 0.4 of the time
    loop = 300 * 1.75 + 3600 / 8
    assert mean == pytest.approx((1 - 0.229) * loop + 0.229 * (30 + 0.4 * loop), rel=1e-3)
    per = [(line["restart_seconds"], line["interruptions"]) for line in
           (simulate(s, seed, None).as_json() for seed in range(60))]
    n = sum(k for _, k in per)
    x = [r / k for r, k in per if k]
    m = sum(r for r, _ in per) / n
    se = (sum((v - m) ** 2 for v in x) / (len(x) - 1) / len(x)) ** 0.5
    assert abs(m - mean) < 4 * se, (m, mean, se)
    assert _efficiency(keys) < _efficiency({**keys, "recovery": {}})


def _efficiency(keys) -> float:
    clock = FakeClock(0.0)
    ticker, _ = assemble(parse_config(scenario_file(job("e", **keys))), clock=clock, wall=lambda: 1.7e9)
    ticker.tick()
    return ticker.registry.get_sample_value("simd_analytic_efficiency_ratio", {"scenario": "e"})


# live migration: 64 servers of 8 GPUs with 2 warm standbys, llama3's gpu and host failures flagged ahead
POOLS = {"gpus_per_server": 8, "warm_standbys": 2,
         "repair": {"automatic": {"distribution": "exponential", "mean_seconds": 7200}}}
MIGRATING = {"n_gpus": 512, "step_seconds": 30, "target_steps": 3000,
             "failures": {"hard_per_gpu_hour": 1.0e-3, "sdc_per_gpu_hour": 2.0e-4, "causes": "llama3"},
             "checkpoint": {"interval_steps": 100, "seconds": 30, "load_seconds": 93.6}, "servers": POOLS,
             "recovery": {"migration": {"seconds": 30, "causes": {"gpu": 0.3, "host": 0.5}},
                          "crash_loop": LOOP}}


def test_live_migration_names_its_causes_needs_warm_standbys_and_says_so():
    spec = _one(**MIGRATING).job_spec()
    assert {c.name: c.predicted for c in spec.causes} == {"gpu": 0.3, "network": 0.0, "host": 0.5, "software": 0.0,
                                                          "other": 0.0}
    assert spec.migration_seconds == 30
    assert "live migration to a warm standby in 30 s of 0.3 of gpu, 0.5 of host failures" in \
        summary(_one(**MIGRATING))
    for keys, message in (
            ({**MIGRATING, "servers": {**POOLS, "warm_standbys": None, "spares": {"count": 2}}},
             "recovery.migration needs servers.warm_standbys"),
            ({**MIGRATING, "recovery": {"migration": {"seconds": 30, "causes": {"disk": 0.5}}}},
             "recovery.migration.causes: disk not among the failure causes"),
            ({**MIGRATING, "checkpoint": {**MIGRATING["checkpoint"],
                                          "tiers": {"local": {"interval_steps": 20, "seconds": 1}}}},
             "checkpoint.tiers and recovery.migration cannot be combined")):
        with pytest.raises(ConfigError) as e:
            _one(**keys)
        assert message in str(e.value) and "\n" not in str(e.value)


def test_simulate_and_the_metrics_split_the_restart_bucket_exactly_with_live_migrations():
    s = _one(**MIGRATING)
    moved = 0
    for seed in range(4):
        line = simulate(s, seed, None).as_json()
        split, mig = line["restart_phases"], line["migrations"]
        assert split["migration"] == pytest.approx(30.0 * mig["migrated"], abs=1e-6)
        sdc = split["restart"] / s.restart_seconds - sum(line["restart_attempts"].values())  # the SDC rollbacks'
        # restarts
        assert abs(sdc - round(sdc)) < 1e-6 and 0 <= round(sdc) <= line["sdc_detected"] + line["sdc_baked"]
        assert sum(split.values()) == pytest.approx(line["restart_seconds"], abs=1e-6)
        moved += mig["migrated"]
    assert moved > 0
    clock = FakeClock(0.0)
    ticker, _ = assemble(parse_config(scenario_file(job("m", seed=5, **MIGRATING), speedup=3600)), clock=clock,
                         wall=lambda: 1.7e9)
    clock.t = 60.0
    ticker.tick()
    r = ticker.registry
    migrated = r.get_sample_value("simd_migrations_total", {"scenario": "m", "outcome": "migrated"})
    assert migrated > 0
    assert r.get_sample_value("simd_restart_seconds_total", {"scenario": "m", "phase": "migration"}) == \
        pytest.approx(30.0 * migrated)


def test_the_first_order_model_charges_migrations_a_pause_and_no_rollback():
    """migrated_first_order: the loss rate h sum s (1 - p)(R + rollback) + h sum s p P as the model's hazard and
    mean recovery; the analytic gauge of a scenario whose failures migrate is above the same one's without."""
    hazard, mean = migrated_first_order(0.01, [0.5, 0.5], [300.0, 100.0], [0.5, 0.0], 30.0)
    assert hazard == pytest.approx(0.0075) and mean == pytest.approx((0.25 * 300 + 0.5 * 100 + 0.25 * 30) / 0.75)
    assert migrated_first_order(0.01, [1.0], [300.0], [1.0], 30.0) == (0.0, 0.0)
    plain = {**MIGRATING, "recovery": {}}
    assert _efficiency(MIGRATING | {"recovery": {"migration": MIGRATING["recovery"]["migration"]}}) > \
        _efficiency(plain)
