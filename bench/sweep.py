"""Benchmark: ``simd sweep`` against ``simd simulate`` over the same configurations and seeds.

Both sides run as the real commands, in the same run, one after the other:
  - baseline: ``simd simulate --json`` once per grid point (a scenario file holding that point's variant),
    seeds 0..N-1, as one would script a sweep today;
  - sweep: one ``simd sweep --param KEY=A:B:P --replicas N --seed-base 0`` (all cores by default).
Prints both wall times (and CPU times) and their ratio (the target: >= 10x, and the sweep under 60 s on a 2-core
machine, for 20 intervals x 1000 seeds of the default configuration's llama3-16k), and checks that both give
the same mean effective utilization at every point, bit for bit (the same seeds, the same engine).

Measured with the defaults on the 2-core machine shared with other work, twice (other engines changed in between):
simulate 453.7 s (387.8 s CPU), sweep 18.0 s (31.8 s CPU on 2 workers): 25.2x, load average 2.5 at the start and 1.9
at the end; simulate 354.4 s (354.0 s CPU), sweep 24.7 s (28.8 s CPU): 14.4x, load average 1.4 and 2.2. The same
mean utilization at every point both times. The sweep draws each seed's step durations once for the 20 intervals
(simd.engine.crn); before that it took ~160 s (16.6 s for 100 seeds).

Usage: python bench/sweep.py [--seeds 1000] [--points 20] [--scenario llama3-16k] [--config FILE]
                             [--param-range checkpoint.interval_steps=10:400] [--workers N]
Scaled down for a quick run: python bench/sweep.py --seeds 100 --points 5
"""

from __future__ import annotations

import argparse
import json
import math
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

from simd.executors import cpu_count
from simd.offline.sweep.grid import grid, parse_params
from simd.scenario import default_config, load_config

SIMD = [sys.executable, "-m", "simd"]


CPU = {"seconds": 0.0}  # CPU seconds (user + system) of the commands run so far, their worker processes included


def _children_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def run(cmd: list[str]) -> tuple[float, str]:
    t0, c0 = time.perf_counter(), _children_cpu()
    r = subprocess.run(cmd, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - t0
    CPU["seconds"] += _children_cpu() - c0
    if r.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed ({r.returncode}):\n{r.stderr}")
    return wall, r.stdout


def baseline(points, seeds: int, tmp: Path) -> tuple[float, list[float]]:
    """``simd simulate`` per point; the mean utilization per point (summed in seed order, as the sweep sums)."""
    total, means = 0.0, []
    for i, p in enumerate(points):
        path = tmp / f"point{i}.yaml"
        path.write_text(yaml.safe_dump({"scenarios": [p.scenario.model_dump(mode="json")]}, sort_keys=False))
        wall, out = run([*SIMD, "simulate", "--config", str(path), "--seeds", f"0..{seeds - 1}", "--json"])
        total += wall
        rows = [json.loads(line) for line in out.splitlines()]
        assert [r["seed"] for r in rows] == list(range(seeds))
        done = [r["effective_utilization"] for r in rows if r["completed"]]
        means.append(math.fsum(done) / len(done))
        print(f"  simulate point {i + 1}/{len(points)} ({p.values[0]}): {wall:.1f} s", flush=True)
    return total, means


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=1000, help="replicas per point (seeds 0..N-1)")
    ap.add_argument("--points", type=int, default=20, help="grid points")
    ap.add_argument("--scenario", default="llama3-16k")
    ap.add_argument("--config", help="scenario file (default: the embedded configuration)")
    ap.add_argument("--param-range", default="checkpoint.interval_steps=10:400", help="KEY=A:B (linear)")
    ap.add_argument("--workers", type=int, help="simd sweep --workers (default: one per core)")
    args = ap.parse_args()

    config = load_config(args.config) if args.config else default_config()
    param = f"{args.param_range}:{args.points}"
    points = grid(config.scenario(args.scenario), parse_params([param]))
    workers = args.workers or cpu_count()
    print(f"{args.scenario}: {param}, {len(points)} points x {args.seeds} seeds = {len(points) * args.seeds} jobs; "
          f"{workers} worker(s) on {cpu_count()} core(s), load average {os.getloadavg()[0]:.2f}", flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        t_base, base_means = baseline(points, args.seeds, Path(tmp))
        cpu_base, CPU["seconds"] = CPU["seconds"], 0.0
        cmd = [*SIMD, "sweep", "--scenario", args.scenario, "--param", param, "--replicas", str(args.seeds),
               "--seed-base", "0", "--quiet", "--out", str(Path(tmp) / "out")]
        if args.config:
            cmd[3:3] = ["--config", args.config]
        if args.workers:
            cmd += ["--workers", str(args.workers)]
        t_sweep, _ = run(cmd)
        doc = json.loads((Path(tmp) / "out" / "sweep.json").read_text())
    sweep_means = [p["utilization_mean"] for p in doc["points"]]
    same = sweep_means == base_means
    jobs = len(points) * args.seeds
    print(f"simd simulate, {len(points)} runs: {t_base:.1f} s ({1e3 * t_base / jobs:.1f} ms per job), "
          f"{cpu_base:.1f} s CPU")
    print(f"simd sweep:                {t_sweep:.1f} s ({1e3 * t_sweep / jobs:.1f} ms per job), {CPU['seconds']:.1f} s "
          f"CPU on {workers} worker(s)")
    print(f"ratio simulate / sweep:    {t_base / t_sweep:.2f}x (target: >= 10x; sweep < 60 s for 20 x 1000 "
          "on 2 cores)")
    print(f"same mean utilization at every point: {'yes' if same else 'NO'}; load average at the end "
          f"{os.getloadavg()[0]:.2f} (1 min), {os.getloadavg()[1]:.2f} (5 min)")
    if not same:
        sys.exit(1)


if __name__ == "__main__":
    main()
