"""Benchmarks of ``simd run`` (not a test): prints measured numbers next to their targets.

Default mode: start ``python -m simd run`` with the embedded configuration at speedup 3600 (tick every
1 s, the configuration's own tick), wait for its first tick, then for 30 s scrape ``/metrics`` once a second
(Prometheus' tightest usual interval; the scrapes' CPU is part of the daemon's) and measure

- the daemon's CPU use: its utime + stime from /proc/<pid>/stat over the window / the window's wall time
  (target: under 5% of one core);
- the median wall time of a ``/metrics`` scrape, request to last byte (target: under 20 ms);
- the size of one scrape as served plain and gzipped (``Accept-Encoding: gzip``, as Prometheus asks).

``--replicas N``: the same with a scenario file holding only the default configuration's ``llama3-16k`` with
N replicas (the target: 10,000 at speedup 3600), advanced together on the engine's batch path over replicas;
targets: the 1 s schedule kept (no missed tick), under 50% of one core, a scrape under 50 ms. Also printed: the
ticks' mean and longest duration, slow and missed ticks, and how far the scenario fell behind the shared clock.

``--state-dir``: the same with the state kept in a temporary directory (``simd run --state-dir``, saved every
10 ticks, its default), so that the saves' CPU and their effect on the schedule are part of the measurement.

``--costs``: measure in this process the engine costs the per-tick work limit counts on the batch path over
replicas (simd.live.lane.KERNEL): per replica per call (a call that advances no time), per straggler-drawn step
(--replicas N, default 2,000, of llama3-16k advanced one tick of speedup 3600 in one call), per event (1,000
replicas of a scenario with a failure every ~2 steps and no stragglers, 1,000 simulated s in one call); each the
median of 5 calls, printed next to the values simd.live.lane uses.

``--lane-costs``: measure in this process what a lane of --replicas N (default 10,000) replicas of llama3-16k
costs outside its ticks, per replica: startup (simd.live.lane.new_lane), a drill boundary (with_body: every
replica retargeted), a save (simd.live.persist.encode, after one tick of speedup 3600) and a resume
(decode + resume), each timed once, with the size of the saved document.

``--save-load``: the state file's costs in this process, for a lane of --replicas N (default 10,000) replicas of
llama3-16k after one tick of speedup 3600, each the median (and fastest) of --repeat runs (default 5): encode
(simd.live.persist.encode), write (StateDir.save: temporary file, fsync, rename), load (StateDir.load: read,
parse, checksum), resume (the typed decoding, the plans and the checks), and the typed decoding alone (the
replicas' fields from the document's columns, no plan compiled).

``--sweep-precision``: run the default configuration's checkpoint-interval sweep offline over what the
daemon simulates in one wall hour at the configuration's speedup, and print each point's mean utilization,
its standard error across replicas and the first-order model's value (the figures quoted in default.yaml).

``--bounds-tick``: tests/data/bounds-servers.yaml ticked in this process on the wall clock for --seconds: each
tick's wall time against the tick's budget (simd.scenario.limits.TICK_WORK_US), overruns and lag.

``--memory``: the file-wide memory estimate (simd.scenario.schema.scenario_bytes, summed against MAX_FILE_BYTES)
against measured RSS, each configuration in a fresh process: the default configuration, and a server scenario at
its bounds (a 131,072-server cluster with pools, Weibull lifetimes and gamma rates, with the most replicas a file
admits: the per-scenario cap is 64, the tick's bound fewer; and with retirement after 16 failures, at most 26).
Each lane's replicas are advanced one simulated hour and the state saved as the daemon saves it
(persist.encode_parts, StateDir.save); printed: the estimate, the RSS added between saves and at the save's peak
(sampled every 5 ms; the kernels loaded beforehand, not counted), and the longest the interpreter was held from
another thread during the save (what a scrape waits).

Usage: python bench/daemon.py [--seconds 30] [--speedup 3600] [--scrape-every 1] [--replicas N] [--state-dir]
       | --costs [--replicas N] | --lane-costs [--replicas N] | --save-load [--replicas N] [--repeat R]
       | --sweep-precision | --memory | --bounds-tick [--seconds 30]
"""

from __future__ import annotations

import argparse
import gzip
import os
import statistics
import subprocess
import sys
import textwrap
import time
import urllib.error
import urllib.request
from dataclasses import replace
from pathlib import Path

from procs import cpu_seconds, free_port

ROOT = Path(__file__).resolve().parents[1]
CPU_TARGET = 0.05  # of one core: the daemon's idle-cost target
SCRAPE_TARGET_SECONDS = 0.020  # median /metrics scrape: the target
# The daemon's scale target with --replicas 10000: under half of one core, a median scrape under 50 ms
REPLICAS_CPU_TARGET = 0.50
REPLICAS_SCRAPE_TARGET_SECONDS = 0.050


def get(url: str, timeout: float = 5.0, **headers: str) -> tuple[int, bytes]:
    try:
        with urllib.request.urlopen(urllib.request.Request(url, headers=headers), timeout=timeout) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()


def wait_for_first_tick(base: str, proc: subprocess.Popen, timeout: float = 120.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"simd run exited with {proc.returncode}")
        try:
            status, body = get(base + "/metrics", timeout=1.0)
            if status == 200 and b"\nsimd_ticks_total 0.0\n" not in body:
                return
        except OSError:
            pass
        time.sleep(0.1)
    raise SystemExit("simd run did not complete a tick in time")


def replicas_config(replicas: int, directory: Path, scenario: str = "llama3-16k") -> Path:
    """A scenario file with only the default configuration's ``scenario``, with ``replicas`` replicas."""
    import yaml

    from simd.scenario import default_config

    body = default_config().scenario(scenario).model_dump(mode="json", exclude_defaults=True)
    body["replicas"] = replicas
    path = directory / f"{scenario}-x{replicas}.yaml"
    path.write_text(yaml.safe_dump({"tick_seconds": 1.0, "scenarios": [body]}, sort_keys=False))
    return path


def metric(body: bytes, name: str) -> float:
    """The sum of the samples of ``name`` (exact name, any labels) in an exposition."""
    total = 0.0
    for line in body.decode().splitlines():
        if line.startswith(name) and line[len(name)] in " {":
            total += float(line.rsplit(" ", 1)[1])
    return total


def bench_daemon(seconds: float, speedup: float, scrape_every: float, config: Path | None = None,
                 state_dir: Path | None = None) -> bool:
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    cmd = [sys.executable, "-m", "simd", "run", "--listen", f"127.0.0.1:{port}", "--speedup", f"{speedup:g}"]
    if config is not None:
        cmd += ["--config", str(config)]
    if state_dir is not None:
        cmd += ["--state-dir", str(state_dir)]
    cpu_target = CPU_TARGET if config is None else REPLICAS_CPU_TARGET
    scrape_target = SCRAPE_TARGET_SECONDS if config is None else REPLICAS_SCRAPE_TARGET_SECONDS
    load0 = os.getloadavg()[0]
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        wait_for_first_tick(base, proc)
        first = get(base + "/metrics")[1]
        scrapes = []
        cpu0, wall0 = cpu_seconds(proc.pid), time.monotonic()
        next_scrape = wall0
        while time.monotonic() - wall0 < seconds:
            t = time.perf_counter()
            status, body = get(base + "/metrics")
            scrapes.append(time.perf_counter() - t)
            assert status == 200 and body
            next_scrape += scrape_every
            time.sleep(max(0.0, next_scrape - time.monotonic()))
        cpu1, wall1 = cpu_seconds(proc.pid), time.monotonic()
        samples = sum(1 for line in body.splitlines() if line and not line.startswith(b"#"))
        zipped = get(base + "/metrics", **{"Accept-Encoding": "gzip"})[1]
        assert gzip.decompress(zipped).count(b"\n") == body.count(b"\n")  # the same scrape, compressed
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    cpu = (cpu1 - cpu0) / (wall1 - wall0)
    median = statistics.median(scrapes)
    what = "embedded default configuration" if config is None else config.name
    if state_dir is not None:
        what += ", --state-dir (saved every 10 ticks)"
    print(f"simd run, {what}, speedup {speedup:g}, {wall1 - wall0:.1f} s window, "
          f"one /metrics scrape every {scrape_every:g} s ({samples} samples per scrape); load average "
          f"{load0:.2f} before, {os.getloadavg()[0]:.2f} after")
    ok_cpu, ok_scrape = cpu < cpu_target, median < scrape_target
    print(f"  daemon CPU:            {cpu * 100:6.2f}% of one core   target < {cpu_target * 100:.0f}%   "
          f"{'ok' if ok_cpu else 'FAIL'}")
    p90 = sorted(scrapes)[int(0.9 * len(scrapes))]
    print(f"  /metrics scrape:       median {median * 1e3:6.2f} ms   target < {scrape_target * 1e3:.0f} ms   "
          f"{'ok' if ok_scrape else 'FAIL'}   (p90 {p90 * 1e3:.2f} ms, max {max(scrapes) * 1e3:.2f} ms, "
          f"n={len(scrapes)})")
    ticks = metric(body, "simd_ticks_total") - metric(first, "simd_ticks_total")
    dur = metric(body, "simd_tick_duration_seconds_sum") - metric(first, "simd_tick_duration_seconds_sum")
    slow = (metric(body, 'simd_tick_overruns_total{kind="slow"}')
            - metric(first, 'simd_tick_overruns_total{kind="slow"}'))
    missed = (metric(body, 'simd_tick_overruns_total{kind="missed"}')
              - metric(first, 'simd_tick_overruns_total{kind="missed"}'))
    behind = metric(body, "simd_scenario_behind_seconds")
    ok_ticks = missed == 0
    print(f"  ticks in the window:   {ticks:.0f}, mean {dur / max(ticks, 1) * 1e3:.0f} ms, {slow:.0f} slow, "
          f"{missed:.0f} missed   {'ok' if ok_ticks else 'FAIL'}   (scenarios behind the shared clock at the end: "
          f"{behind:g} simulated s in all)")
    print(f"  scrape size:           {len(body) / 1e3:.1f} kB plain, {len(zipped) / 1e3:.1f} kB gzip "
          f"({len(body) / len(zipped):.1f}x smaller)")
    print(f"  exit code after SIGTERM: {proc.returncode}")
    return ok_cpu and ok_scrape and ok_ticks and proc.returncode == 0


STORM = """
scenarios:
  - name: storm        # a failure every ~2 steps of 1 s, no stragglers
    seed: 3
    replicas: 1000
    n_gpus: 1000
    step_seconds: 1
    target_steps: 500
    failures: {hard_per_gpu_hour: 1.8, sdc_per_gpu_hour: 0.0}
    checkpoint: {interval_steps: 5, seconds: 1}
    restart_seconds: 0
"""


def engine_costs(replicas: int) -> None:
    import tempfile

    from simd.engine import US_PER_SECOND
    from simd.engine.replicas import advance_replicas
    from simd.live.lane import KERNEL, counted, new_lane
    from simd.scenario import default_config, load_config, parse_config

    def timed(states, until: int) -> tuple[float, object]:
        times, out = [], None
        for _ in range(5):
            t = time.perf_counter()
            out = advance_replicas(states, until)
            times.append(time.perf_counter() - t)
        return statistics.median(times), out

    with tempfile.TemporaryDirectory() as tmp:
        scenario = load_config(replicas_config(replicas, Path(tmp))).all_scenarios[0]
    states = advance_replicas(new_lane(scenario, scenario, 0).states, 3600 * US_PER_SECOND)  # compiled, warm
    at = states[0].clock
    idle, _ = timed(states, at)
    per_call = idle / replicas
    tick, out = timed(states, at + 3600 * US_PER_SECOND)
    steps = counted(out)[1] - counted(states)[1]
    per_step = (tick - idle) / steps
    storm = parse_config(STORM).scenarios[0]
    st = advance_replicas(new_lane(storm, storm, 0).states, 10 * US_PER_SECOND)
    at = st[0].clock
    busy, out = timed(st, at + 1000 * US_PER_SECOND)
    n_events = counted(out)[0] - counted(st)[0]
    per_event = (busy - per_call * storm.replicas) / n_events
    print(f"engine costs on the batch path over replicas (load average {os.getloadavg()[0]:.2f}), "
          "simd.live.lane.KERNEL in brackets:")
    print(f"  per replica per call:    {per_call * 1e6:6.3f} us   [{KERNEL.per_call_us:g} us]   "
          f"({replicas} replicas of llama3-16k, no time advanced: {idle * 1e3:.1f} ms)")
    print(f"  per straggler-drawn step: {per_step * 1e9:5.1f} ns   [{KERNEL.per_step_us * 1e3:g} ns]   "
          f"(one tick of speedup 3600: {steps} steps, {tick * 1e3:.1f} ms, events included)")
    print(f"  per event:               {per_event * 1e6:6.3f} us   [{KERNEL.per_event_us:g} us]   "
          f"({storm.replicas} replicas of a stormy scenario, 1,000 s: {n_events} events, {busy * 1e3:.1f} ms)")
    # the same kernel with a mechanism on: shadow ranks
    shadow = default_config().scenario("optimized-shadow").model_copy(update={"replicas": replicas})
    states = advance_replicas(new_lane(shadow, shadow, 0).states, 3600 * US_PER_SECOND)
    idle, _ = timed(states, states[0].clock)
    per_call = idle / replicas
    storm = storm_shadow()
    st = advance_replicas(new_lane(storm, storm, 0).states, 10 * US_PER_SECOND)
    busy, out = timed(st, st[0].clock + 1000 * US_PER_SECOND)
    n_events = counted(out)[0] - counted(st)[0]
    per_event = (busy - per_call * storm.replicas) / n_events
    print("  with shadow ranks (the same kernel, one more mechanism on):")
    print(f"  per replica per call:    {per_call * 1e6:6.3f} us   [{KERNEL.per_call_us:g} us]   "
          f"({replicas} replicas of optimized-shadow, no time advanced: {idle * 1e3:.1f} ms)")
    print(f"  per event:               {per_event * 1e6:6.3f} us   [{KERNEL.per_event_us:g} us]   "
          f"({storm.replicas} replicas of a stormy shadowed scenario, 1,000 s: {n_events} events, "
          f"{busy * 1e3:.1f} ms)")


def storm_shadow():
    """The stormy scenario of engine_costs, 200 replicas, half the ranks shadowed and SDCs on (a disagreement
    every few steps beside the failures)."""
    from simd.scenario import Scenario, parse_config

    base = parse_config(STORM).scenarios[0]
    return Scenario.model_validate({**base.model_dump(), "name": "storm-shadow", "replicas": 200,
                                    "failures": {"hard_per_gpu_hour": 1.8, "sdc_per_gpu_hour": 0.5},
                                    "shadow": {"fraction": 0.5}})


def core_costs(replicas: int) -> None:
    """simd.live.lane.CORE: core.advance one replica at a time (an injected advance; every lane runs on the batch
    over replicas since issue 20, step 10)."""
    from simd.engine import US_PER_SECOND, advance
    from simd.live.lane import CORE, counted, new_lane
    from simd.scenario import default_config

    def timed(states, until: int) -> tuple[float, tuple]:
        times, out = [], ()
        for _ in range(5):
            t = time.perf_counter()
            out = tuple(advance(s, until)[0] for s in states)
            times.append(time.perf_counter() - t)
        return statistics.median(times), out

    shadow = default_config().scenario("optimized-shadow").model_copy(update={"replicas": replicas})
    states = tuple(advance(s, 3600 * US_PER_SECOND)[0] for s in new_lane(shadow, shadow, 0).states)  # warm
    at = states[0].clock
    idle, _ = timed(states, at)
    tick, out = timed(states, at + 3600 * US_PER_SECOND)
    storm = storm_shadow()  # one replica at a time is ~100x slower per call than the batch
    st = tuple(advance(s, 10 * US_PER_SECOND)[0] for s in new_lane(storm, storm, 0).states)
    busy, out2 = timed(st, st[0].clock + 1000 * US_PER_SECOND)
    n_events = counted(out2)[0] - counted(st)[0]
    per_call = idle / replicas
    per_event = (busy - per_call * storm.replicas) / n_events
    print(f"engine costs of core.advance one replica at a time (load average {os.getloadavg()[0]:.2f}), "
          "simd.live.lane.CORE in brackets:")
    print(f"  per replica per call:    {per_call * 1e6:6.1f} us   [{CORE.per_call_us:g} us]   "
          f"({replicas} replicas of optimized-shadow, no time advanced: {idle * 1e3:.1f} ms; one tick of speedup "
          f"3600: {tick / replicas * 1e6:.1f} us per replica)")
    print(f"  per event:               {per_event * 1e6:6.2f} us   [{CORE.per_event_us:g} us]   "
          f"({storm.replicas} replicas of a stormy shadowed scenario, 1,000 s: {n_events} events, "
          f"{busy * 1e3:.1f} ms)")


LANE_DRILL = """
drills:
  - name: storm
    description: failures x10
    duration_seconds: 3600
    scenarios: [llama3-16k]
    effects: {hard_rate_factor: 10}
"""


def lane_costs(replicas: int) -> None:
    import tempfile

    from simd.engine import US_PER_SECOND
    from simd.engine.replicas import advance_replicas
    from simd.live.drills import DrillRunner
    from simd.live.lane import new_lane, with_body
    from simd.live.persist import decode, encode, resume
    from simd.scenario import load_config

    with tempfile.TemporaryDirectory() as tmp:
        path = replicas_config(replicas, Path(tmp))
        path.write_text(path.read_text() + LANE_DRILL)
        config = load_config(path)
    scenario = config.all_scenarios[0]
    drills = DrillRunner(config)
    warm = new_lane(scenario, scenario, 0)  # a first, small lane: the kernels compiled, tables built
    with_body(warm, scenario.with_effects(config.drills[0].effects))
    t = time.perf_counter()
    lane = new_lane(scenario, scenario, 0)
    startup = time.perf_counter() - t
    lane = replace(lane, states=advance_replicas(lane.states, 3600 * US_PER_SECOND))
    drills.start("storm", 3600.0, None, 0.0)
    t = time.perf_counter()
    storm = with_body(lane, drills.body(scenario, 3600.0))
    boundary = time.perf_counter() - t
    t = time.perf_counter()
    raw = encode(3600 * US_PER_SECOND, (storm,), drills, 0.0)
    save = time.perf_counter() - t
    t = time.perf_counter()
    back = resume(decode(raw), config)
    again = time.perf_counter() - t
    assert back.lanes[0].states == storm.states  # resumed, not started fresh
    print(f"a lane of {replicas} replicas of llama3-16k outside its ticks (load average {os.getloadavg()[0]:.2f}),"
          " per replica:")
    for what, s in (("startup (new_lane)", startup), ("drill boundary (with_body)", boundary),
                    ("save (persist.encode)", save), ("resume (decode + resume)", again)):
        print(f"  {what:<28} {s / replicas * 1e6:9.2f} us   ({s:.3f} s for the lane)")
    print(f"  saved document: {len(raw) / 1e6:.2f} MB, {len(raw) / replicas:.0f} bytes per replica")


def save_load(replicas: int, repeat: int) -> None:
    import copy
    import tempfile

    from simd.engine import US_PER_SECOND, State
    from simd.engine.replicas import advance_replicas
    from simd.live import persist
    from simd.live.drills import DrillRunner
    from simd.live.lane import new_lane
    from simd.scenario import load_config

    with tempfile.TemporaryDirectory() as tmp:
        config = load_config(replicas_config(replicas, Path(tmp)))
        scenario = config.all_scenarios[0]
        lane = new_lane(scenario, scenario, 0)
        lane = replace(lane, states=advance_replicas(lane.states, 3600 * US_PER_SECOND))
        drills = DrillRunner(config)
        d = persist.StateDir(Path(tmp) / "state").open()
        times: dict[str, list[float]] = {k: [] for k in ("encode", "write", "load", "resume", "typed decoding")}
        try:
            for _ in range(repeat):
                t = time.perf_counter()
                raw = persist.encode(3600 * US_PER_SECOND, (lane,), drills, 0.0)
                times["encode"].append(time.perf_counter() - t)
                t = time.perf_counter()
                d.save(raw)
                times["write"].append(time.perf_counter() - t)
                t = time.perf_counter()
                payload = d.load()
                times["load"].append(time.perf_counter() - t)
                cols = copy.deepcopy(payload["lanes"][0]["state"])
                t = time.perf_counter()
                persist._columns(State, cols, replicas)
                times["typed decoding"].append(time.perf_counter() - t)
                t = time.perf_counter()
                back = persist.resume(payload, config)
                times["resume"].append(time.perf_counter() - t)
                assert back.lanes[0].states == lane.states  # resumed, not started fresh
        finally:
            d.close()
    print(f"the state file of {replicas} replicas of llama3-16k ({len(raw) / 1e6:.2f} MB; load average "
          f"{os.getloadavg()[0]:.2f}), median (fastest) of {repeat}:")
    for what, ts in times.items():
        print(f"  {what:<15} {statistics.median(ts):7.3f} s ({min(ts):.3f} s)")


def sweep_precision() -> None:
    import numpy as np

    from simd.engine import US_PER_SECOND, advance, new_state
    from simd.metrics.snapshot import scenario_info
    from simd.scenario import default_config

    config = default_config()
    hours = config.speedup  # simulated hours per replica in one wall hour
    until = round(3600 * config.speedup * US_PER_SECOND)
    print(f"checkpoint-interval sweep: {hours:g} simulated hours per replica (one wall hour at speedup "
          f"{config.speedup:g})")
    print(f"{'scenario':<18} {'interval':>8} {'replicas':>8} {'utilization':>12} {'std err':>8} {'model':>7} "
          f"{'cpu s':>6}")
    for s in config.all_scenarios:
        if s.sweep is None:
            continue
        t = time.process_time()
        states = [advance(new_state(s.job_spec(seed)), until)[0] for seed in s.replica_seeds()]
        u = np.array([st.totals.productive_us / st.clock for st in states])
        info = scenario_info(s, s, states[0])
        se = u.std(ddof=1) / np.sqrt(len(u))
        print(f"{s.name:<18} {s.checkpoint.interval_steps:>8} {len(u):>8} {u.mean():>12.4f} {se:>8.4f} "
              f"{info.analytic_efficiency:>7.4f} {time.process_time() - t:>6.2f}")


def replica_memory(replicas: int) -> None:
    """Resident memory per replica (the cap simd.scenario.limits.MAX_TOTAL_REPLICAS is derived from): a lane of
    ``replicas`` replicas of each of three default scenarios, between ticks and while a tick advances it by a
    simulated day (the old and the new states both alive, as in a tick), and its state file's bytes. Each
    scenario in a fresh process, so that what one leaves behind is not counted for the next."""
    code = textwrap.dedent("""
        import sys, time
        from dataclasses import replace
        from simd.engine.replicas import advance_replicas
        from simd.live import persist
        from simd.live.drills import DrillRunner
        from simd.live.lane import new_lane
        from simd.scenario import default_config

        def rss():
            for line in open("/proc/self/status"):
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) * 1024

        config, n = default_config(), int(sys.argv[2])
        s = config.scenario(sys.argv[1]).model_copy(update={"replicas": n, "name": "x"})
        r0 = rss()
        lane = new_lane(s, s, 0)
        r1 = rss()
        states = advance_replicas(lane.states, 86_400 * 10**6)
        r2 = rss()
        raw = persist.encode(0, (replace(lane, states=states),), DrillRunner(config), time.time())
        print(f"{sys.argv[1]:<22} {n:>8} {(r1 - r0) / n:>10.0f} {(r2 - r0) / n:>10.0f} {len(raw) / n:>10.0f}")
    """)
    print(f"{'scenario':<22} {'replicas':>8} {'B/replica':>10} {'in a tick':>10} {'state B':>10}")
    for name in ("llama3-16k", "optimized", "optimized-layered-sdc"):
        subprocess.run([sys.executable, "-c", code, name, str(replicas)], check=True)


MEMORY = textwrap.dedent("""
    import gc, sys, threading, time
    from dataclasses import replace
    from simd.engine.replicas import advance_replicas
    from simd.live import persist
    from simd.live.drills import DrillRunner
    from simd.live.lane import new_lane
    from simd.scenario import default_config, parse_config
    from simd.scenario.schema import MAX_FILE_BYTES, scenario_bytes

    def rss():
        for line in open("/proc/self/status"):
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024

    peak, held, sampling = [0], [0.0], [True]

    def sample():
        while sampling[0]:
            t = time.perf_counter()
            peak[0] = max(peak[0], rss())
            time.sleep(0.005)
            held[0] = max(held[0], time.perf_counter() - t - 0.005)

    config = default_config() if sys.argv[1] == "default" else parse_config(open(sys.argv[1]).read())
    scenarios = config.all_scenarios

    def lanes(replicas=None):
        out = []
        for s in scenarios:
            s = s if replicas is None else s.model_copy(update={"replicas": replicas})
            lane = new_lane(s, s, 0)
            out.append(replace(lane, states=advance_replicas(lane.states, 3600 * 10**6)))
        return tuple(out)

    persist.encode(0, lanes(1), DrillRunner(config), 0.0)  # the kernels loaded, the caches warm: not counted
    gc.collect()
    r0 = rss()
    built = lanes()
    gc.collect()
    r1 = rss()
    threading.Thread(target=sample, daemon=True).start()
    peak[0], held[0] = r1, 0.0
    import tempfile
    t = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        state = persist.StateDir(tmp).open()
        state.save(persist.encode_parts(0, built, DrillRunner(config), time.time()))  # as the daemon's Saver
        size = state.file.stat().st_size
        state.close()
    took = time.perf_counter() - t
    time.sleep(0.02)
    sampling[0] = False
    estimate = sum(scenario_bytes(s) for s in scenarios)
    print(f"{sys.argv[2]:<34} {sum(s.replicas for s in scenarios):>8} {estimate / 1e6:>9.1f} {(r1 - r0) / 1e6:>9.1f} "
          f"{(peak[0] - r0) / 1e6:>9.1f} {(peak[0] - r0) / estimate:>6.2f} {size / 1e6:>8.1f} {took:>6.2f} "
          f"{held[0] * 1e3:>7.1f}")
""")


def memory() -> None:
    """``--memory`` (module docstring): the estimate against RSS, each configuration in a fresh process."""
    import tempfile

    from simd.scenario.schema import MAX_FILE_BYTES

    servers = {"warm_standbys": 32768, "spares": {"count": 32768},
               "lifetime": {"distribution": "weibull", "shape": 0.7}, "rates": {"gamma_shape": 0.8},
               "repair": {"automatic": {"distribution": "exponential", "mean_seconds": 20000}}}

    def at_bounds(replicas: int, **more) -> str:
        return textwrap.dedent(f"""
            speedup: 1
            scenarios:
              - name: bounds
                replicas: {replicas}
                n_gpus: {8 * 65536}
                step_seconds: 10
                target_steps: 1000000
                failures: {{hard_per_gpu_hour: 1.0e-4, sdc_per_gpu_hour: 0.0}}
                checkpoint: {{interval_steps: 100, seconds: 30}}
                servers: {json_inline({**servers, **more})}
            """)

    print(f"the budget: {MAX_FILE_BYTES / 1e6:.0f} MB of estimate per file")
    print(f"{'configuration':<34} {'replicas':>8} {'est. MB':>9} {'RSS MB':>9} {'peak MB':>9} {'peak/e':>6} "
          f"{'state MB':>8} {'save s':>6} {'held ms':>7}")
    def most(start: int, **more) -> int:
        """The most replicas (from ``start`` down) a file admits: the per-scenario cap, or the tick's bound (the
        calls alone over a 131,072-server cluster cost ~4 ms per replica: simd.engine.work)."""
        from simd.scenario import ConfigError, parse_config

        for replicas in range(start, 0, -1):
            try:
                parse_config(at_bounds(replicas, **more))
                return replicas
            except ConfigError:
                continue
        raise SystemExit("no replica count of the bounds scenario is admitted")

    retire = {"retirement": {"failures": 16, "window_seconds": 86400}}
    with tempfile.TemporaryDirectory() as tmp:
        runs = [("default", "the default configuration")]
        for name, more in (("bounds.yaml", {}), ("retire.yaml", retire)):
            n = most(64 if not more else 26, **more)
            (Path(tmp) / name).write_text(at_bounds(n, **more))
            runs.append((str(Path(tmp) / name), f"131,072 servers x {n}" + (" (retire 16)" if more else "")))
        for source, label in runs:
            subprocess.run([sys.executable, "-c", MEMORY, source, label], check=True, cwd=ROOT)


def bounds_tick(seconds: float) -> None:
    """``--bounds-tick``: tests/data/bounds-servers.yaml (servers at their bounds: 131,072-server clusters, bursts
    of ~10,000 servers, retirement after one failure; 2 replicas at speedup 600, the most a file admits at that
    pace) ticked in this process on the wall clock, as the daemon ticks it, for ``seconds``: each tick's wall
    time and the scenario's estimated work (simd.live.lane's count, the kernel's own), against the tick's budget
    (simd.scenario.limits.TICK_WORK_US). The first tick loads the kernels (printed apart)."""
    import time

    from simd.live.ticker import Ticker
    from simd.scenario import parse_config
    from simd.scenario.limits import TICK_WORK_US

    text = (ROOT / "tests" / "data" / "bounds-servers.yaml").read_text()
    ticker = Ticker(parse_config(text), clock=time.monotonic, wall=time.time)
    took = []
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        t0 = time.monotonic()
        ticker.tick()
        took.append(time.monotonic() - t0)
        time.sleep(max(0.0, ticker.tick_seconds - took[-1]))
    snap = ticker.snapshot.scenarios[0]
    rest = took[1:] or took
    print(f"bounds-servers.yaml, {len(took)} ticks of {ticker.tick_seconds:g} s at speedup {ticker.speedup:g}: "
          f"first {took[0]:.3f} s (kernels loaded), then median {statistics.median(rest):.3f} s, worst "
          f"{max(rest):.3f} s; budget {TICK_WORK_US / 1e6:g} s of engine work per scenario per tick; overruns "
          f"{snap.overruns}, behind {snap.behind_us / 1e6:.1f} simulated s")


def json_inline(value) -> str:
    import json

    return json.dumps(value)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--seconds", type=float, default=30.0)
    p.add_argument("--speedup", type=float, default=3600.0)
    p.add_argument("--scrape-every", type=float, default=1.0)
    p.add_argument("--replicas", type=int, help="one scenario alone with this many replicas (the target: 10000)")
    p.add_argument("--scenario", default="llama3-16k", help="with --replicas: which scenario of the default "
                   "configuration (optimized-shadow and optimized-fleet have the same target)")
    p.add_argument("--state-dir", action="store_true", help="keep the state in a temporary directory (saves measured)")
    p.add_argument("--costs", action="store_true", help="the engine costs simd.live.lane's work limit counts "
                   "(KERNEL and CORE)")
    p.add_argument("--lane-costs", action="store_true", help="startup, drill boundary, save, resume per replica")
    p.add_argument("--save-load", action="store_true", help="the state file's encode, write, load and resume")
    p.add_argument("--repeat", type=int, default=5, help="with --save-load: runs (the median is printed)")
    p.add_argument("--sweep-precision", action="store_true")
    p.add_argument("--replica-memory", action="store_true", help="resident bytes per replica, between and in ticks")
    p.add_argument("--memory", action="store_true", help="the file's memory estimate against RSS (default "
                   "configuration, a server scenario at its bounds)")
    p.add_argument("--bounds-tick", action="store_true", help="the worst tick of servers at their bounds "
                   "(tests/data/bounds-servers.yaml) against the tick's budget, for --seconds")
    args = p.parse_args()
    if args.bounds_tick:
        bounds_tick(args.seconds)
        return 0
    if args.memory:
        memory()
        return 0
    if args.replica_memory:
        replica_memory(args.replicas or 10_000)
        return 0
    if args.costs:
        engine_costs(args.replicas or 2000)
        core_costs(min(args.replicas or 1000, 1000))
        return 0
    if args.lane_costs:
        lane_costs(args.replicas or 10_000)
        return 0
    if args.save_load:
        save_load(args.replicas or 10_000, args.repeat)
        return 0
    if args.sweep_precision:
        sweep_precision()
        return 0
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        config = replicas_config(args.replicas, Path(tmp), args.scenario) if args.replicas else None
        state_dir = Path(tmp) / "state" if args.state_dir else None
        ok = bench_daemon(args.seconds, args.speedup, args.scrape_every, config, state_dir)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
