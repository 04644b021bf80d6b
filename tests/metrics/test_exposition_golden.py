"""The exported samples of a fixed simulated time are those of the golden scrape.

tests/data/golden_scrape_default.prom is the ``/metrics`` text of the embedded default configuration after
the ticks and drill starts of :func:`drive`, written by the hand-written exposition that prometheus-client's
collector replaced: the exported values did not change with it. The injected clock stands still inside a
tick (tick durations are 0) and the wall clock is fixed, so every value is a pure function of the
configuration and the tick times.

Compared: every family's type and HELP, and every sample (name, labels, value): identical, except the
additions (:data:`ADDITIONS`: the process collector's ``process_*``, prometheus-client's ``_created``
samples of the daemon-health counters and histogram, and the metrics added since: quarantine, lag,
overruns, reloads, state saves, simd_compute_seconds, readiness and the kernel cache). ``simd_build_info``'s
label values depend on the installed simd and Python and are compared as label names only.

Regenerate the file only for an intended change of the exported values:
``.venv/bin/python tests/metrics/test_exposition_golden.py --write``.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

from prometheus_client.parser import text_string_to_metric_families
from support.daemon import FakeClock, wsgi_call

from simd.daemon.process import assemble
from simd.scenario import default_config

GOLDEN = Path(__file__).resolve().parents[1] / "data" / "golden_scrape_default.prom"
WALL_UNIX = 1.7e9  # the fixed wall clock (simd_last_tick_timestamp_seconds)
# (wall second of a tick, drills started on demand right after it, with their durations in simulated
# seconds (None: the drill's own)): at speedup 600 the last tick is at simulated hour 10; sdc-burst ends at
# simulated second 9600, inside the run, so a drill's end boundary is part of the history.
DRIVE = (
    (1.0, ()), (2.0, ()), (3.0, (("slow-storage", None), ("straggler", None))),
    (10.0, (("sdc-burst", 3600.0),)), (30.0, ()), (60.0, ()),
)
# families the new code may add: prometheus-client's process collector, and the _created samples of its
# own Counter/Histogram (the daemon-health metrics)
# added since the golden scrape: quarantine, lag and work-limit overruns per scenario, tick errors, reloads,
# state saves;
# then the compute seconds the hazards apply to (denominator of the per-compute-hour rates)
ADDITIONS = re.compile(r"process_[a-z_]+|simd_[a-z_]+_created|simd_scenario_(failed|behind_seconds|overruns(_total)?)"
                       r"|simd_tick_errors(_total)?|simd_config_last_reload_[a-z_]+|simd_state_[a-z_]+"
                       r"|simd_compute_seconds(_total)?"
                       # readiness and the kernel cache
                       r"|simd_ready|simd_engine_[a-z_]+"
                       # servers, pools and repairs (issue 21)
                       r"|simd_servers|simd_pools_exhausted_replicas|simd_server_[a-z_]+|simd_gpus_per_server"
                       # checkpoint saves by tier and outcome, the checkpoint bucket's parts, writes in flight
                       r"|simd_checkpoint_(saves|cost_seconds|corrupt_loads|fallbacks_to_start)(_total)?"
                       # a memory tier's recoveries and losses
                       r"|simd_checkpoint_(recoveries|tier_losses)(_total)?"
                       r"|simd_checkpoint_writes_in_flight|simd_checkpoint_age_steps"
                       # the restart bucket by phase
                       r"|simd_restart_seconds(_total)?"
                       # in-process restarts, restart attempts and escalations
                       r"|simd_in_process_restarts(_total)?|simd_restart_(attempts|escalations)(_total)?"
                       # live migrations
                       r"|simd_migrations(_total)?"
                       # hard failures by recovery path; elastic replica groups (only for scenarios with them)
                       r"|simd_recoveries(_total)?|simd_elastic_[a-z_]+"
                       # the productive credit a job's end voided after it was committed
                       r"|simd_productive_voided_seconds(_total)?")
# label values added since to families of the golden, each with the value it must have on the driven daemon's
# scenarios: the "waiting" bucket (servers with capacity, issue 21), 0 where no scenario has pools
ADDED_LABELS = {("simd_bucket_seconds_total", "bucket", "waiting"): 0.0}
# scenarios added to the default configuration since: every sample of theirs is an addition (the others' values
# do not change: each scenario runs on streams of its own seed)
ADDED_SCENARIOS = {"llama3-16k-servers", "llama3-16k-async", "llama3-16k-tiered",  # servers; checkpoint tiers
                   "llama3-16k-cold", "llama3-16k-hot", "llama3-16k-migrate", "llama3-16k-inprocess",  # recovery paths
                   "llama3-16k-elastic", "llama3-16k-peer-writes"}  # a memory tier that writes
# drills added to the default configuration since (never started in DRIVE: their samples are 0)
ADDED_DRILLS = {"repair-slowdown", "spares-taken", "lemon-outbreak", "storage-outage", "rack-outages",
                "corrupt-checkpoints", "hang-storm", "crash-loop", "elastic-no-rejoin",  # servers; saves; recovery
                "slow-peer-network"}  # a memory tier's writes


def _added(key: tuple) -> bool:
    name, labels = key
    return any(name == n and (label, value) in labels for n, label, value in ADDED_LABELS)


def _new_scenario(key: tuple) -> bool:
    return any((label, value) in (("scenario", v) for v in ADDED_SCENARIOS) or
               (label == "drill" and value in ADDED_DRILLS) for label, value in key[1])


def drive():
    """The daemon's tick loop and WSGI app after the ticks and drill starts of DRIVE."""
    clock = FakeClock(0.0)
    ticker, app = assemble(default_config(), clock=clock, wall=lambda: WALL_UNIX)
    for wall, drills in DRIVE:
        clock.t = wall
        ticker.tick()
        for name, duration in drills:
            ticker.start_drill(name, duration)
    return ticker, app


def scrape() -> bytes:
    """GET /metrics of the driven daemon, as Prometheus' text format 0.0.4."""
    status, _, body = wsgi_call(drive()[1])
    assert status == 200
    return body


def parse(text: str) -> tuple[dict[str, tuple[str, str]], dict[tuple, float]]:
    """(family name -> (type, help), (sample name, sorted labels) -> value)."""
    families, samples = {}, {}
    for f in text_string_to_metric_families(text):
        families[f.name] = (f.type, f.documentation)
        for s in f.samples:
            labels = dict(s.labels)
            if s.name == "simd_build_info":
                labels = dict.fromkeys(labels, "*")
            key = (s.name, tuple(sorted(labels.items())))
            assert key not in samples, f"duplicate sample {key}"
            samples[key] = s.value
    return families, samples


def test_the_golden_file_is_a_busy_scrape():
    families, samples = parse(GOLDEN.read_text())
    assert len(samples) > 700  # 740 samples (812 lines with HELP and TYPE)
    assert samples[("simd_drill_starts_total", (("drill", "sdc-burst"),))] == 1
    assert samples[("simd_drill_active", (("drill", "sdc-burst"),))] == 0  # it ended
    assert samples[("simd_drill_active", (("drill", "slow-storage"),))] == 1
    assert samples[("simd_ticks_total", ())] == len(DRIVE)
    assert samples[("simd_interruptions_total", (("cause", "gpu"), ("scenario", "llama3-16k")))] > 0


def test_exported_samples_equal_the_golden_scrape_except_the_additions():
    gold_families, gold = parse(GOLDEN.read_text())
    families, now = parse(scrape().decode())
    assert not {k for k in now.keys() - gold.keys()
                if not ADDITIONS.fullmatch(k[0]) and not _added(k) and not _new_scenario(k)}, \
        "samples not in the golden"
    assert any(_new_scenario(k) for k in now), "the added scenarios are exported"
    assert all(now[k] == v for k in now.keys() - gold.keys() if _added(k) and not _new_scenario(k)
               for (n, label, value), v in ADDED_LABELS.items() if k[0] == n and (label, value) in k[1])
    assert not gold.keys() - now.keys(), "samples of the golden scrape missing"
    changed = {k: (gold[k], now[k]) for k in gold if now[k] != gold[k]}
    assert not changed
    assert {n: families[n] for n in gold_families} == gold_families  # types and HELP
    assert all(ADDITIONS.fullmatch(n) for n in families.keys() - gold_families.keys())


if __name__ == "__main__":
    if sys.argv[1:] != ["--write"]:
        sys.exit(f"usage: {sys.argv[0]} --write")
    # without what changes from run to run: the process collector's families and the _created samples
    volatile = re.compile(r"(# (HELP|TYPE) )?(process_[a-z_]+|simd_[a-z_]+_created)[ {]")
    text = scrape().decode()
    GOLDEN.write_text("".join(line for line in text.splitlines(keepends=True) if not volatile.match(line)))
    print(f"wrote {GOLDEN}")
