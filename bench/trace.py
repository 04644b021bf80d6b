"""simd trace fit's speed (issue 22's target: under 10 s on the InfiniteHBD trace), measured in one run: the fit
alone, the goodness of fit's 200 synthetic logs, and the whole command as a user runs it (a fresh process); and a
replayed job against a job of the fitted model (target: at most 2x), the same job (400 servers of 8 GPUs, a
year of 60 s steps), best of 3 side by side.

    .venv/bin/python bench/trace.py [--trace PATH]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

from simd.engine import Servers, run_job
from simd.scenario import parse_config
from simd.traces.fit import fit
from simd.traces.log import load
from simd.traces.scenario import Job, goodness, scenario_text

ROOT = Path(__file__).resolve().parents[1]
TRACE = ROOT.parent / "shared" / "traces" / "infinitehbd" / "fault_trace.json"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trace", type=Path, default=TRACE)
    args = ap.parse_args()
    t0 = time.perf_counter()
    log = load(args.trace)
    t1 = time.perf_counter()
    f = fit(log, 400)
    t2 = time.perf_counter()
    goodness(f, log, 200)
    t3 = time.perf_counter()
    subprocess.run([sys.executable, "-m", "simd", "trace", "fit", str(args.trace), "--servers", "400"],
                   check=True, capture_output=True)
    t4 = time.perf_counter()
    print(f"read {t1 - t0:.3f} s, fit {t2 - t1:.3f} s, goodness of fit (200 logs) {t3 - t2:.2f} s; "
          f"`simd trace fit` in a fresh process {t4 - t3:.2f} s   (target < 10 s)")
    fitted = parse_config(scenario_text(f, Job(target_steps=525_600), args.trace.name)).scenarios[0].job_spec()
    replayed = replace(fitted, servers=Servers(replay=tuple(
        tuple(x.start for x in log.faults if x.server == s) for s in range(400)), replay_span_seconds=log.span_seconds,
        warm_standbys=fitted.servers.warm_standbys, repair=fitted.servers.repair))
    best = {}
    for _ in range(3):
        for name, spec in (("fitted", fitted), ("replayed", replayed)):
            t = time.perf_counter()
            job = run_job(spec)
            best[name] = min(best.get(name, (1e9, None))[0], time.perf_counter() - t), job
    (tf, jf), (tr, jr) = best["fitted"], best["replayed"]
    print(f"a year of compute on 400 servers: fitted model {tf * 1e3:.1f} ms ({jf.interruptions} interruptions), "
          f"replayed log {tr * 1e3:.1f} ms ({jr.interruptions}): {tr / tf:.2f}x   (target <= 2x)")


if __name__ == "__main__":
    main()
