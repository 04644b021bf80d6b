"""Benchmark: what a new user waits for on a fresh machine, and what a second start costs.

Prints, measured in one run, each "cold" on an empty kernel cache (a fresh NUMBA_CACHE_DIR) and "warm" on the
cache the cold run filled:
  1. each kernel unit's compile time alone (simd.engine.kernels; a fresh process and cache each, the units it
     needs compiled first and not counted), and ``simd compile`` (every unit from cold; target under 15 s);
  2. ``simd simulate --seeds 1`` (the embedded configuration: every scenario once), cold and warm
     (target: cold under 10 s on an idle 2-core machine); then, warm, ``simd simulate --seeds 1`` and ``simd
     check-config`` of the embedded configuration as whole processes, ``--repeat`` times each, alternating:
     median and fastest wall seconds and the median CPU seconds (user + system; target: at most 0.7 s wall);
  3. ``simd run``: seconds from the start to the first answer of /metrics and to 200 on /-/ready, cold and
     warm (target: /metrics within 3 s either way, ready within 3 s warm);
  4. the daemon's resident memory (VmRSS, and its peak VmHWM) after ``--rss-seconds`` (default 60) with the
     embedded configuration.
Usage: python bench/startup.py [--rss-seconds S] [--skip-units] [--repeat N] [--only-simulate]
(``--only-simulate``: section 2 alone.)
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

from procs import free_port

from simd.engine.kernels import UNITS

PY = sys.executable
COMPILE_TARGET_SECONDS = 15.0  # every kernel from cold, on this 2-core machine
WARM_TARGET_SECONDS = 0.7  # a warm simd simulate --seeds 1 or simd check-config, as a whole process


def env_with(cache: str) -> dict:
    return {**os.environ, "NUMBA_CACHE_DIR": cache}


def timed(argv: list[str], env: dict) -> float:
    t0 = time.perf_counter()
    subprocess.run(argv, env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - t0


def timed_cpu(argv: list[str], env: dict) -> tuple[float, float]:
    """(wall seconds, CPU seconds: user + system of the process and its children) of one run of ``argv``."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    wall = timed(argv, env)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime


def warm_commands(cache: str, repeat: int) -> None:
    """``simd simulate --seeds 1`` and ``simd check-config`` (the embedded configuration), warm, ``repeat`` times
    each, alternating (a shared machine's speed drifts: both see the same drift). simd's bytecode is compiled
    first, as an installed package has it: under PYTHONDONTWRITEBYTECODE=1 every run would compile simd's sources
    again (~0.1-0.2 s more per run measured here)."""
    import simd

    subprocess.run([PY, "-m", "compileall", "-q", os.path.dirname(simd.__file__)], check=True,
                   stdout=subprocess.DEVNULL)
    config = os.path.join(cache, "default.yaml")
    with open(config, "w") as f:
        subprocess.run([PY, "-m", "simd", "config", "--default"], env=env_with(cache), check=True, stdout=f)
    commands = {"simd simulate --seeds 1": [PY, "-m", "simd", "simulate", "--seeds", "1"],
                "simd check-config <default>": [PY, "-m", "simd", "check-config", config]}
    runs = {name: [] for name in commands}
    for _ in range(repeat):
        for name, argv in commands.items():
            runs[name].append(timed_cpu(argv, env_with(cache)))
    for name, times in runs.items():
        walls, cpus = [w for w, _ in times], [c for _, c in times]
        print(f"   warm {name:28s} wall median {statistics.median(walls):5.2f} s, fastest {min(walls):5.2f} s; "
              f"CPU median {statistics.median(cpus):5.2f} s   (target: <= {WARM_TARGET_SECONDS:g} s)")


def unit_seconds(unit: str) -> float:
    """The unit compiled alone, in a fresh process on an empty cache (the process' own timing of the compile), after
    the units it needs (kernels.NEEDS), which are not counted."""
    cache = tempfile.mkdtemp(prefix="bench-kernels-")
    try:
        code = (f"from simd.engine import kernels; from simd.offline import precompile\n"
                f"for u in kernels.NEEDS.get({unit!r}, ()): precompile.compile_unit(u)\n"
                f"print(precompile.compile_unit({unit!r}))")
        out = subprocess.run([PY, "-c", code], env=env_with(cache), check=True, capture_output=True,
                             text=True).stdout
        return float(out.split()[-1])
    finally:
        shutil.rmtree(cache, ignore_errors=True)


def status(url: str) -> int | None:
    try:
        with urllib.request.urlopen(url, timeout=1.0) as r:
            return r.status
    except urllib.error.HTTPError as e:
        return e.code
    except OSError:
        return None


def daemon_start(cache: str, hold_seconds: float = 0.0) -> tuple[float, float, int | None, int | None]:
    """(seconds to the first /metrics answer, seconds to /-/ready 200, VmRSS kB and VmHWM kB after
    ``hold_seconds`` or None)."""
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    t0 = time.perf_counter()
    proc = subprocess.Popen([PY, "-m", "simd", "run", "--listen", f"127.0.0.1:{port}"], env=env_with(cache),
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    first = ready = None
    try:
        while ready is None and time.perf_counter() - t0 < 300:
            if first is None and status(base + "/metrics") == 200:
                first = time.perf_counter() - t0
            if first is not None and status(base + "/-/ready") == 200:
                ready = time.perf_counter() - t0
            time.sleep(0.02)
        rss = hwm = None
        if hold_seconds:
            time.sleep(max(0.0, hold_seconds - (time.perf_counter() - t0)))
            fields = dict(line.split(":", 1) for line in open(f"/proc/{proc.pid}/status"))
            rss, hwm = (int(fields[k].split()[0]) for k in ("VmRSS", "VmHWM"))
        return first, ready, rss, hwm
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=30)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rss-seconds", type=float, default=60.0)
    ap.add_argument("--skip-units", action="store_true", help="skip the per-unit compiles (~30 s)")
    ap.add_argument("--repeat", type=int, default=10, help="warm runs of each command in section 2 (default 10)")
    ap.add_argument("--only-simulate", action="store_true", help="section 2 alone")
    args = ap.parse_args()
    print(f"load average at the start: {os.getloadavg()[0]:.2f} ({os.cpu_count()} cores)")

    if not args.skip_units and not args.only_simulate:
        print("\n1. kernel units, each compiled alone (fresh process, empty cache)")
        for u in UNITS:
            print(f"   {u:10s} {unit_seconds(u):6.1f} s")
        cache = tempfile.mkdtemp(prefix="bench-kernels-")
        every = timed([PY, '-m', 'simd', 'compile'], env_with(cache))
        print(f"   simd compile (every unit from cold): {every:.1f} s   "
              f"(target < {COMPILE_TARGET_SECONDS:g} s)")
        shutil.rmtree(cache, ignore_errors=True)

    print("\n2. simd simulate --seeds 1 (every scenario of the embedded configuration)")
    cache = tempfile.mkdtemp(prefix="bench-kernels-")
    cold = timed([PY, "-m", "simd", "simulate", "--seeds", "1"], env_with(cache))
    warm = timed([PY, "-m", "simd", "simulate", "--seeds", "1"], env_with(cache))
    print(f"   cold {cold:6.1f} s   warm {warm:6.1f} s   (target: cold < 10 s)")
    warm_commands(cache, args.repeat)
    shutil.rmtree(cache, ignore_errors=True)
    if args.only_simulate:
        print(f"\nload average at the end: {os.getloadavg()[0]:.2f}")
        return

    print("\n3. simd run on the embedded configuration: seconds from the start")
    cache = tempfile.mkdtemp(prefix="bench-kernels-")
    for label in ("cold", "warm"):
        first, ready, _, _ = daemon_start(cache)
        print(f"   {label}: first /metrics answer {first:5.2f} s, /-/ready 200 {ready:5.2f} s")
    print("   (targets: /metrics within 3 s, cold or warm; ready within 3 s warm)")

    print(f"\n4. simd run's memory after {args.rss_seconds:g} s (embedded configuration, warm cache)")
    _, _, rss, hwm = daemon_start(cache, hold_seconds=args.rss_seconds)
    print(f"   VmRSS {rss / 1024:.0f} MiB, peak VmHWM {hwm / 1024:.0f} MiB")
    shutil.rmtree(cache, ignore_errors=True)
    print(f"\nload average at the end: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
