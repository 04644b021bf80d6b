"""A real ``simd run`` scraped every second by a real Prometheus; checks through PromQL over the HTTP API.

Also runs ``promtool check metrics`` on the live /metrics, and every example query of docs/metrics.md.
Needs the prometheus and promtool binaries (scripts/fetch-tools.sh): skipped without them, failed in CI.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest
from support.promstack import Prometheus, SimdDaemon, http_get, require_tool

from simd.engine import BUCKETS
from simd.scenario import default_config

# one daemon and Prometheus for the module: on one pytest-xdist worker (scripts/test.sh)
pytestmark = [pytest.mark.integration, pytest.mark.xdist_group("prometheus-stack")]

SPEEDUP = 36000.0  # 10 simulated hours per wall second: failures, SDCs and job ends happen within seconds
TICK_SECONDS = 0.2
SAMPLES = 6  # scrapes of the clock to wait for (one a second)
DOC = Path(__file__).resolve().parents[2] / "docs" / "metrics.md"


@pytest.fixture(scope="module")
def stack(tmp_path_factory):
    require_tool("prometheus")
    with SimdDaemon(["--speedup", f"{SPEEDUP:g}", "--tick-seconds", f"{TICK_SECONDS:g}"]) as simd, \
            Prometheus(tmp_path_factory.mktemp("prometheus"), [simd.target], scrape_interval="1s") as prom:
        prom.wait_for(f"count_over_time(simd_simulated_seconds_total[1m]) >= {SAMPLES}", timeout=60)
        yield simd, prom


def scenarios_of(prom: Prometheus, expr: str) -> dict[str, float]:
    """scenario -> value of ``count by (scenario) (expr)``."""
    return {r["metric"]["scenario"]: float(r["value"][1]) for r in prom.query(f"count by (scenario) ({expr})")}


def test_the_target_is_up(stack):
    _, prom = stack
    up = prom.query('up{job="simd"}')
    assert [r["value"][1] for r in up] == ["1"]


def test_mission_series_exist_for_every_scenario_of_the_default_configuration(stack):
    _, prom = stack
    config = default_config()
    every = {s.name: 1.0 for s in config.all_scenarios}
    with_failures = {s.name: 2.0 for s in config.all_scenarios if s.job_spec().hard_per_gpu_hour > 0}
    causes = {s.name: float(len(s.job_spec().cause_list)) for s in config.all_scenarios}
    assert causes["llama3-16k"] == 5 and causes["naive"] == 1
    assert scenarios_of(prom, "simd_effective_utilization_ratio") == every
    assert scenarios_of(prom, "simd_rollback_waste_ratio") == every
    assert scenarios_of(prom, "simd_checkpoint_overhead_ratio") == every
    # (the degraded bucket only for scenarios with elastic replica groups: recovery.elastic)
    assert scenarios_of(prom, "simd_bucket_seconds_total") == {
        s.name: float(len(BUCKETS) + (s.job_spec().elastic_groups > 0)) for s in config.all_scenarios}
    assert scenarios_of(prom, "simd_interruptions_total") == causes
    assert scenarios_of(prom, "simd_sdc_detected_total") == every
    assert scenarios_of(prom, "simd_sdc_baked_total") == every
    assert scenarios_of(prom, "simd_checkpoint_interval_steps") == every
    assert scenarios_of(prom, "simd_checkpoint_interval_optimal_steps") == with_failures
    assert scenarios_of(prom, "simd_step_duration_seconds_bucket") == {k: 11.0 for k in every}
    assert scenarios_of(prom, "simd_step_duration_seconds_count") == every
    # and they carry data: the simulation ran for tens of simulated hours
    util = {r["metric"]["scenario"]: float(r["value"][1]) for r in prom.query("simd_effective_utilization_ratio")}
    assert all(0 < u < 1 for u in util.values()), util
    assert util["ideal"] > util["optimized"] > util["naive"]
    interrupted = prom.query('sum by (scenario) (simd_interruptions_total{scenario="llama3-16k"}) > 0')
    assert len(interrupted) == 1
    sweep = prom.query('simd_checkpoint_interval_steps * on (scenario) group_left (sweep) '
                       'simd_scenario_info{sweep="ckpt-sweep"}')
    assert len(sweep) >= 10


def test_the_simulated_clock_runs_at_the_speedup(stack):
    """The clock's increase between two scrapes over the wall time between them equals the speedup.

    Each scrape reports the clock of the last tick completed before it, which is behind the scrape's wall
    time by between 0 and one tick interval plus the tick's own duration and scheduling latency (tens of ms,
    see simd_tick_duration_seconds). Over a span of D wall seconds between the first and last sample the
    measured rate is therefore within speedup * (TICK_SECONDS + 0.15 s) / D of the speedup (about 4% over
    6 s of samples); a wrong factor (a tick counted twice, a clock in ms) would be off by far more."""
    _, prom = stack
    assert float(prom.query("simd_speedup")[0]["value"][1]) == SPEEDUP
    samples = prom.query("simd_simulated_seconds_total[1m]")[0]["values"]
    assert len(samples) >= SAMPLES
    (t0, v0), (t1, v1) = samples[0], samples[-1]
    span = float(t1) - float(t0)
    measured = (float(v1) - float(v0)) / span
    tolerance = SPEEDUP * (TICK_SECONDS + 0.15) / span
    assert abs(measured - SPEEDUP) <= tolerance, (measured, tolerance, samples)
    # the per-scenario clocks are the shared clock times the replicas
    sim = float(prom.query("simd_simulated_seconds_total")[0]["value"][1])
    per = {r["metric"]["scenario"]: float(r["value"][1])
           for r in prom.query("simd_scenario_simulated_seconds_total")}
    replicas = {s.name: s.replicas for s in default_config().all_scenarios}
    # the two series come from the same scrape, so they are exact multiples
    assert all(per[name] == pytest.approx(sim * n, rel=1e-12) for name, n in replicas.items())


def test_promtool_check_metrics_reports_nothing_on_the_live_endpoint(stack):
    simd, _ = stack
    promtool = require_tool("promtool")
    status, body = http_get(simd.url + "/metrics")
    assert status == 200
    r = subprocess.run([promtool, "check", "metrics"], input=body, capture_output=True, timeout=30)
    assert (r.returncode, r.stdout, r.stderr) == (0, b"", b"")


def doc_queries() -> list[str]:
    """Every query in the ```promql blocks of docs/metrics.md; an indented line continues the previous one."""
    queries = []
    for block in re.findall(r"```promql\n(.*?)```", DOC.read_text(), flags=re.S):
        for line in block.splitlines():
            if not line.strip():
                continue
            if line[0].isspace() and queries:
                queries[-1] += " " + line.strip()
            else:
                queries.append(line.strip())
    return queries


def test_docs_example_queries_return_data(stack):
    _, prom = stack
    queries = doc_queries()
    assert len(queries) >= 10
    empty = [q for q in queries if not prom.query(q)]
    assert not empty, empty


def test_interruptions_per_simulated_hour_by_cause(stack):
    """The docs' query gives one series per scenario and cause, with the llama3 causes."""
    _, prom = stack
    q = ("sum by (scenario, cause) (increase(simd_interruptions_total[1m])) / on (scenario) group_left "
         "sum by (scenario) (increase(simd_scenario_simulated_seconds_total[1m])) * 3600")
    result = prom.query(q)
    llama = {r["metric"]["cause"] for r in result if r["metric"]["scenario"] == "llama3-16k"}
    assert llama == {"gpu", "network", "host", "software", "other"}
    assert all(float(r["value"][1]) >= 0 for r in result)


def test_healthz_is_ok_while_ticking(stack):
    simd, prom = stack
    assert http_get(simd.url + "/healthz") == (200, b"ok\n")
    assert float(prom.query("simd_ticks_total")[0]["value"][1]) > 0
