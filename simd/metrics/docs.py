"""docs/metrics.md, generated: the tables from simd.metrics.table, the prose around them kept here.

    .venv/bin/python -m simd.metrics.docs --write    # rewrite docs/metrics.md
    .venv/bin/python -m simd.metrics.docs            # print it

tests/metrics/test_metric_docs.py checks that the committed file is what this writes.
"""

from __future__ import annotations

import sys
from pathlib import Path

from simd import generated
from simd.metrics.table import METRICS, SECTIONS

DOC = Path(__file__).resolve().parents[2] / "docs" / "metrics.md"

INTRO = """\
<!-- Generated from simd/metrics/table.py and simd/metrics/docs.py: edit those, then run
     `.venv/bin/python -m simd.metrics.docs --write`. -->
# simd metrics reference

`simd run` serves these on `GET /metrics` (default address `127.0.0.1:9109`), written by prometheus-client:
the Prometheus text format 0.0.4, or OpenMetrics 1.0 when the `Accept` header asks for
`application/openmetrics-text` (as Prometheus does), gzipped when `Accept-Encoding` allows it
(`curl --compressed`); `?name[]=NAME` restricts the output to those names. A liveness check is on
`GET /healthz` (`200 ok` while ticks complete; `503` and the reason once no tick has completed for
`3 * tick_seconds + 1` s). Every simulation value comes from one immutable snapshot published at the end of
a tick, so a scrape never mixes two ticks. The live output passes `promtool check metrics` (a test runs it).

Conventions:

- Prefix `simd_`, base units (seconds, ratios in 0..1), counters end in `_total`.
- `scenario` is a scenario's `name` from the scenario file; a sweep expands to one scenario per checkpoint
  interval, named `<sweep>-<interval>` (the default configuration has `ckpt-sweep-5` .. `ckpt-sweep-1000`).
- A scenario with `replicas: N` runs N independent copies (seeds `seed` .. `seed + N - 1`): its counters
  are **summed over the replicas**, and its ratios are over the summed time.
- All simulated time is **simulated** seconds. The daemon runs `speedup` simulated seconds per wall second,
  so Prometheus' `rate()` (per wall second) is rarely what you want: see
  [Rates per simulated hour](#rates-per-simulated-hour).
- Every simulated second of a replica is in exactly one bucket or in flight:
  `sum by (scenario) (simd_bucket_seconds_total) + simd_in_flight_seconds == simd_scenario_simulated_seconds_total`.
"""

DAEMON_NOTE = """\
The daemon-health metrics (`simd_ticks_total`, `simd_tick_duration_seconds`, `simd_tick_overruns_total`,
`simd_last_tick_timestamp_seconds`) are prometheus-client's own counters, histogram and gauge, so they also
carry its `_created` series (`simd_ticks_created`, ...: the Unix time the series started). Beside them,
prometheus-client's process collector exports the daemon process itself: `process_cpu_seconds_total`,
`process_resident_memory_bytes`, `process_virtual_memory_bytes`, `process_open_fds`, `process_max_fds`,
`process_start_time_seconds` (Linux only).
"""

OUTRO = """\
## Rates per simulated hour

The daemon runs `speedup` simulated seconds per wall second, so divide increases by the simulated time
that passed in the same window rather than using `rate()`:

```
increase(x[w]) / increase(simd_scenario_simulated_seconds_total[w]) * 3600
```

`simd_scenario_simulated_seconds_total` sums the replicas, as the counters do, so this is a rate per
simulated hour *of one replica*. For series without a scenario label, `simd_simulated_seconds_total` is the
shared clock.

## Example PromQL

Effective utilization per scenario (since the start; the gauge):

```promql
simd_effective_utilization_ratio
```

Effective utilization per scenario over the last 10 minutes of wall time (productive over elapsed
simulated time in the window; committed work lags by up to a checkpoint interval, so use windows of many
intervals):

```promql
sum by (scenario) (increase(simd_bucket_seconds_total{bucket="productive"}[10m]))
  / sum by (scenario) (increase(simd_scenario_simulated_seconds_total[10m]))
```

Interruptions per simulated hour, by scenario and cause:

```promql
sum by (scenario, cause) (increase(simd_interruptions_total[10m]))
  / on (scenario) group_left
    sum by (scenario) (increase(simd_scenario_simulated_seconds_total[10m]))
  * 3600
```

All causes, for the scenarios that have failures configured (compare with
`simd_expected_interruptions_per_hour`, the configured rate):

```promql
sum by (scenario) (increase(simd_interruptions_total[10m]))
  / sum by (scenario) (increase(simd_scenario_simulated_seconds_total[10m])) * 3600
  and on (scenario) simd_expected_interruptions_per_hour > 0
```

SDCs baked in per simulated day:

```promql
increase(simd_sdc_baked_total[10m]) / increase(simd_scenario_simulated_seconds_total[10m]) * 86400
```

The checkpoint-interval sweep: utilization against the configured interval (chart as x = interval), and the
optimum:

```promql
simd_effective_utilization_ratio * on (scenario) group_left (sweep) simd_scenario_info{sweep="ckpt-sweep"}
simd_checkpoint_interval_steps * on (scenario) group_left (sweep) simd_scenario_info{sweep="ckpt-sweep"}
max by (method) (simd_checkpoint_interval_optimal_steps
  * on (scenario) group_left (sweep) simd_scenario_info{sweep="ckpt-sweep"})
```

Where the time goes (shares of the elapsed simulated time, per bucket):

```promql
sum by (scenario, bucket) (simd_bucket_seconds_total)
  / on (scenario) group_left sum by (scenario) (simd_scenario_simulated_seconds_total)
```

Median and p99 step time (simulated seconds) over the last 10 minutes:

```promql
histogram_quantile(0.5, sum by (scenario, le) (increase(simd_step_duration_seconds_bucket[10m])))
histogram_quantile(0.99, sum by (scenario, le) (increase(simd_step_duration_seconds_bucket[10m])))
```

Daemon health: simulated clock speed (should equal `simd_speedup`), overruns, staleness, CPU:

```promql
rate(simd_simulated_seconds_total[1m])
sum by (kind) (increase(simd_tick_overruns_total[10m]))
time() - simd_last_tick_timestamp_seconds
histogram_quantile(0.99, rate(simd_tick_duration_seconds_bucket[5m]))
rate(process_cpu_seconds_total{job="simd"}[1m])
```
"""


def _table(section: str) -> str:
    rows = ["| name | type | labels | meaning |", "|---|---|---|---|"]
    for m in METRICS:
        if m.section == section:
            exposed = m.name + "_total" if m.type == "counter" else m.name
            cells = [f"`{exposed}`", m.type, ", ".join(m.labels), m.doc]
            rows.append("| " + " | ".join(cells).replace("|  |", "| |") + " |")
    return "\n".join(rows) + "\n"


def render() -> str:
    parts = [INTRO]
    for section in SECTIONS:
        parts.append(f"## {section}\n\n{_table(section)}")
    parts[-1] += "\n" + DAEMON_NOTE
    parts.append(OUTRO)
    return "\n".join(parts)


def main(argv: list[str]) -> int:
    return generated.main(argv, DOC, render, "simd.metrics.docs")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
