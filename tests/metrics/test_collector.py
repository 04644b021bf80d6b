"""simd.metrics.collector, simd.metrics.table and simd.metrics.snapshot: exact sample values from known engine
states, no HTTP, no sleeps."""

from __future__ import annotations

import math

import pytest
from prometheus_client import generate_latest
from prometheus_client.parser import text_string_to_metric_families
from prometheus_client.registry import CollectorRegistry
from support.daemon import FakeClock, small_config

from simd.daemon.process import assemble
from simd.engine import BUCKETS, US_PER_SECOND
from simd.engine.stragglers import BUCKET_FACTORS
from simd.live.ticker import Ticker
from simd.metrics.collector import SimdCollector, new_registry
from simd.metrics.table import METRICS
from simd.models.checkpoint import daly_interval_seconds, efficiency, young_interval_seconds
from simd.scenario import default_config

WALL = 6 * 3600 / 600  # wall seconds for 6 simulated hours at the file's speedup 600


@pytest.fixture(scope="module")
def ticked():
    """The small configuration after one tick at simulated hour 6, with the daemon's registry."""
    clock = FakeClock(0.0)
    config = small_config()
    t, _ = assemble(config, clock=clock, wall=lambda: 1.7e9)
    clock.t = WALL
    t.tick()
    return config, t, t.registry


def value(registry, name, **labels):
    v = registry.get_sample_value(name, labels)
    assert v is not None, f"no sample {name}{labels}"
    return v


def states_of(ticker, name):
    return ticker.states[[i.name for i in ticker.infos].index(name)]


def test_the_collector_lives_on_its_own_registry(ticked):
    from prometheus_client import REGISTRY

    _, _, registry = ticked
    assert isinstance(registry, CollectorRegistry) and registry is not REGISTRY
    assert not any(isinstance(c, SimdCollector) for c in REGISTRY._collector_to_names)


def test_ratios_buckets_and_clock_match_the_states_exactly(ticked):
    config, t, reg = ticked
    clock_us = round(WALL * 600 * US_PER_SECOND)
    assert value(reg, "simd_simulated_seconds_total") == clock_us / 1e6
    assert value(reg, "simd_speedup") == 600
    for s in config.all_scenarios:
        states = states_of(t, s.name)
        elapsed = clock_us * s.replicas
        productive = sum(x.totals.productive_us for x in states)
        assert value(reg, "simd_effective_utilization_ratio", scenario=s.name) == productive / elapsed
        assert value(reg, "simd_rollback_waste_ratio", scenario=s.name) == \
            sum(x.totals.rollback_us for x in states) / elapsed
        assert value(reg, "simd_checkpoint_overhead_ratio", scenario=s.name) == \
            sum(x.totals.checkpoint_us for x in states) / elapsed
        assert value(reg, "simd_scenario_simulated_seconds_total", scenario=s.name) == elapsed / 1e6
        buckets = {b: value(reg, "simd_bucket_seconds_total", scenario=s.name, bucket=b) for b in BUCKETS}
        in_flight = value(reg, "simd_in_flight_seconds", scenario=s.name)
        assert in_flight == sum(x.in_flight_us() for x in states) / 1e6
        # every simulated second is in one bucket or in flight (exact in microseconds)
        assert round(sum(buckets.values()) * 1e6) + round(in_flight * 1e6) == elapsed
        assert value(reg, "simd_scenario_replicas", scenario=s.name) == s.replicas
        assert value(reg, "simd_scenario_info", scenario=s.name, sweep=s.sweep or "") == 1


def test_counters_are_summed_over_replicas(ticked):
    config, t, reg = ticked
    fields = ["sdc_onsets", "sdc_detected", "sdc_baked", "steps_committed", "steps_recomputed", "steps_executed",
              "checkpoints", "validations", "jobs_completed", "stragglers_replaced"]
    for s in config.all_scenarios:
        states = states_of(t, s.name)
        for f in fields:
            assert value(reg, f"simd_{f}_total", scenario=s.name) == sum(getattr(x.totals, f) for x in states)
        names = states[0].plan.cause_names
        for i, cause in enumerate(names):
            assert value(reg, "simd_interruptions_total", scenario=s.name, cause=cause) == \
                sum(x.totals.interruptions[i] for x in states)
    assert states_of(t, "big")[0].plan.cause_names == ("gpu", "network", "host", "software", "other")
    # the fixture's scenarios are busy enough that these sums are not all zero
    assert value(reg, "simd_jobs_completed_total", scenario="calm") > 0
    assert value(reg, "simd_interruptions_total", scenario="plain", cause="hardware") > 0
    assert value(reg, "simd_sdc_detected_total", scenario="plain") > 0
    assert value(reg, "simd_stragglers_replaced_total", scenario="big") == 2  # one per replica's first job


def test_step_duration_histogram(ticked):
    config, t, reg = ticked
    for s in config.all_scenarios:
        states = states_of(t, s.name)
        step_us = round(s.step_seconds * US_PER_SECOND)
        bounds = [round(step_us * f) / 1e6 for f in BUCKET_FACTORS] + [math.inf]
        hist = [sum(col) for col in zip(*(x.totals.step_hist for x in states), strict=True)]
        executed = sum(x.totals.steps_executed for x in states)
        cumulative = 0
        for le, n in zip(bounds, hist, strict=True):
            cumulative += n
            key = "+Inf" if le == math.inf else repr(le)
            assert value(reg, "simd_step_duration_seconds_bucket", scenario=s.name, le=key) == cumulative
        assert value(reg, "simd_step_duration_seconds_count", scenario=s.name) == executed == cumulative
        assert value(reg, "simd_step_duration_seconds_sum", scenario=s.name) == \
            (executed * step_us + sum(x.totals.straggler_us for x in states)) / 1e6
    # with stragglers, steps are slower than the base step; without, all in the first bucket
    assert value(reg, "simd_step_duration_seconds_bucket", scenario="big", le="6.0") == 0
    assert value(reg, "simd_step_duration_seconds_bucket", scenario="plain", le="60.0") == \
        value(reg, "simd_step_duration_seconds_count", scenario="plain")


def test_analytic_gauges(ticked):
    config, t, reg = ticked
    for s in config.all_scenarios:
        plan = states_of(t, s.name)[0].plan
        assert value(reg, "simd_checkpoint_interval_steps", scenario=s.name) == s.checkpoint.interval_steps
        assert value(reg, "simd_expected_interruptions_per_hour", scenario=s.name) == \
            plan.hard_hazard / s.step_seconds * 3600
        if s.failures.hard_per_gpu_hour == 0:
            for method in ("young", "daly"):
                assert reg.get_sample_value("simd_checkpoint_interval_optimal_steps",
                                            {"scenario": s.name, "method": method}) is None
            assert reg.get_sample_value("simd_analytic_efficiency_ratio", {"scenario": s.name}) is None
            continue
        m = s.step_seconds / plan.hard_hazard
        c = s.checkpoint.seconds
        assert value(reg, "simd_checkpoint_interval_optimal_steps", scenario=s.name, method="young") == \
            young_interval_seconds(c, m) / s.step_seconds
        assert value(reg, "simd_checkpoint_interval_optimal_steps", scenario=s.name, method="daly") == \
            daly_interval_seconds(c, m) / s.step_seconds
        recovery = sum(cause.share * (cause.detection_seconds + cause.restart_seconds)
                       for cause in s.job_spec().cause_list)
        assert value(reg, "simd_analytic_efficiency_ratio", scenario=s.name) == pytest.approx(
            efficiency(s.checkpoint.interval_steps, s.step_seconds, c, m, recovery), rel=1e-12)
    # a seed-000 style scenario: R is the restart; the model is seed 001's function
    plain = config.scenario("plain")
    assert value(reg, "simd_analytic_efficiency_ratio", scenario="plain") == pytest.approx(efficiency(
        25, 60, 300, 60 / states_of(t, "plain")[0].plan.hard_hazard, 60), rel=1e-12)
    assert plain.restart_seconds == 60


def test_seed001_scenario2_optimum_in_the_default_sweep():
    """The default sweep's job is seed 001's scenario 2 (M = 7.9 h, C = 240 s, R = 388.2 s, 30 s steps):
    Young's optimum is its 123 steps, and the model is seed 001's function with its constants."""
    from simd.models import checkpoint

    t = Ticker(default_config(), clock=FakeClock(), wall=lambda: 0.0)
    reg = new_registry(lambda: t.snapshot)
    young = value(reg, "simd_checkpoint_interval_optimal_steps", scenario="ckpt-sweep-125", method="young")
    assert round(young) == 123
    for interval in (5, 125, 1000):
        assert value(reg, "simd_analytic_efficiency_ratio", scenario=f"ckpt-sweep-{interval}") == pytest.approx(
            checkpoint.efficiency(interval, checkpoint.STEP_SECONDS, checkpoint.FULL_CHECKPOINT_SECONDS,
                                  checkpoint.MTBF_SECONDS, checkpoint.RESTART_SECONDS), rel=1e-7)  # 8-digit rate


def test_slowest_rank_score_follows_the_slow_ranks():
    clock = FakeClock(0.0)
    t = Ticker(small_config(), clock=clock, wall=lambda: 0.0)
    reg = new_registry(lambda: t.snapshot)
    assert value(reg, "simd_slowest_rank_score", scenario="big") == 1 / 1.25  # the job starts with them
    clock.t = 10 * 6 / 600  # 10 steps of 6 s: still there
    t.tick()
    assert value(reg, "simd_slowest_rank_score", scenario="big") == 1 / 1.25
    clock.t = 200 * 8 / 600  # 200 steps later the detector (50 steps) has replaced them
    t.tick()
    assert value(reg, "simd_slowest_rank_score", scenario="big") == 1.0
    for name in ("plain", "calm", "sw-10"):  # no stragglers configured: no series
        assert reg.get_sample_value("simd_slowest_rank_score", {"scenario": name}) is None


def test_daemon_self_metrics(ticked):
    _, t, reg = ticked
    assert value(reg, "simd_ticks_total") == 1
    assert value(reg, "simd_tick_overruns_total", kind="slow") == 0
    assert value(reg, "simd_tick_overruns_total", kind="missed") == WALL - 1  # slots 1 .. 35 had no tick
    assert value(reg, "simd_tick_duration_seconds_count") == 1
    assert value(reg, "simd_tick_duration_seconds_bucket", le="+Inf") == 1
    assert value(reg, "simd_tick_duration_seconds_sum") == 0.0  # the fake clock stood still
    assert value(reg, "simd_last_tick_timestamp_seconds") == 1.7e9
    build = [s for f in reg.collect() if f.name == "simd_build_info" for s in f.samples]
    assert len(build) == 1 and build[0].value == 1 and set(build[0].labels) == {"version", "python"}
    # the daemon's process, from prometheus_client's process collector on the same registry
    assert value(reg, "process_resident_memory_bytes") > 0 and value(reg, "process_cpu_seconds_total") > 0


def test_counters_never_decrease_between_ticks():
    clock = FakeClock(0.0)
    t = Ticker(small_config(), clock=clock, wall=lambda: 0.0)
    reg = new_registry(lambda: t.snapshot, process=False)

    def counters():
        return {(s.name, tuple(sorted(s.labels.items()))): s.value for f in reg.collect()
                if f.type in ("counter", "histogram") for s in f.samples}

    before = counters()
    for w in (1, 2, 3.5, 10, 60):
        clock.t = w
        t.tick()
        now = counters()
        assert now.keys() == before.keys()
        assert all(now[k] >= before[k] for k in now), [k for k in now if now[k] < before[k]]
        before = now


def test_the_exposition_has_exactly_the_tables_families():
    """Every row of the metric table is exported with its type, HELP and labels, and nothing else under simd_."""
    clock = FakeClock(0.0)
    t, _ = assemble(default_config(), clock=clock, wall=lambda: 1.7e9)
    clock.t = 30.0
    t.tick()
    exported = {}
    for f in t.registry.collect():
        if f.name.startswith("simd_"):
            labels = {k for s in f.samples for k in s.labels if k != "le"}
            exported[f.name] = (f.type, f.documentation, labels)
    assert exported == {m.name: (m.type, m.help, set(m.labels)) for m in METRICS}


def test_exposition_has_help_and_parses(ticked):
    _, _, reg = ticked
    families = list(text_string_to_metric_families(generate_latest(reg).decode()))
    assert {f.name for f in families if f.name.startswith("process_")} >= {"process_cpu_seconds"}
    for f in families:
        assert f.name.startswith(("simd_", "process_")) and f.documentation.strip(), f.name
        assert f.type in ("counter", "gauge", "histogram")


def test_default_configuration_exports_every_scenario():
    config = default_config()
    t = Ticker(config, clock=FakeClock(), wall=lambda: 0.0)
    reg = new_registry(lambda: t.snapshot)
    names = {s.name for s in config.all_scenarios}
    assert {"ideal", "naive", "optimized", "llama3-16k"} <= names
    sweep = [s for s in config.all_scenarios if s.sweep == "ckpt-sweep"]
    assert len(sweep) >= 10
    for name in names:
        assert reg.get_sample_value("simd_effective_utilization_ratio", {"scenario": name}) == 0.0
    assert value(reg, "simd_scenario_info", scenario="ckpt-sweep-125", sweep="ckpt-sweep") == 1
    assert value(reg, "simd_scenario_info", scenario="llama3-16k", sweep="") == 1
