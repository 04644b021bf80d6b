"""simd trace fit's speed (target: under 10 s), measured in one run on the InfiniteHBD trace and on a synthetic
log of about 10,000 faults on 1,000 servers (simd.traces.synth, a fixed seed: Weibull 0.7 lifetimes of scale 30
days, gamma frailty 1.5, bursts, lognormal repairs, over 350 days): the fit alone, the goodness of fit's 200
synthetic logs, and the whole command as a user runs it (a fresh process); and a replayed job against a job of
the fitted model (target: at most 2x), the same job (400 servers of 8 GPUs, a year of 60 s steps), best of 3 side
by side. With ``--large``: a log of an HPC system's size (18,688 servers, about 16,000 faults: Weibull 0.7 of
scale 520 days, the same frailty, bursts and repairs), the fit's CPU time with the frailty's quadrature compiled
(simd.traces.fit.log_frailty) against the same quadrature in numpy (log_frailty_numpy), alternating, best of 2;
and on InfiniteHBD the fit without the regimes joined with the lifetimes (simd.traces.joint) and with them, with
the relapses (simd.traces.relapse) and with both flags (the relapses inside the regimes too).

    .venv/bin/python bench/trace.py [--trace PATH] [--large]
"""

from __future__ import annotations

import argparse
import math
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

# the fit in this process as the `simd` command runs it: OpenBLAS on one thread (simd/cli/__init__.py)
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402  (after the variable: OpenBLAS reads it when it loads)

from simd.engine import Servers, run_job
from simd.scenario import parse_config
from simd.traces.fit import fit
from simd.traces.log import FaultLog, load
from simd.traces.scenario import Job, goodness, scenario_text
from simd.traces.synth import Model, generate

ROOT = Path(__file__).resolve().parents[1]
TRACE = ROOT.parent / "shared" / "traces" / "infinitehbd" / "fault_trace.json"


SYNTHETIC = Model(lifetime_scale_days=30.0, lifetime_shape=0.7, gamma_shape=1.5, repair_median_days=0.5,
                  repair_sigma=1.5, burst_per_day=0.5, burst_mean_size=3.0, classes={"gpu": 0.5, "nic": 0.5})


def csv_text(log: FaultLog) -> str:
    """``log`` as simd's event CSV (time,server,event,class; times in seconds, exact)."""
    rows = sorted([(f.start, 0, f.server, "start", f.cls) for f in log.faults]
                  + [(f.end, 1, f.server, "end", f.cls) for f in log.faults if f.end is not None])
    return "time,server,event,class\n" + "".join(f"{t!r},s{s},{e},{c}\n" for t, _, s, e, c in rows)


def timed_fit(name: str, path: Path, servers: int) -> FaultLog:
    t0 = time.perf_counter()
    log = load(path)
    t1 = time.perf_counter()
    f = fit(log, servers)
    t2 = time.perf_counter()
    goodness(f, log, 200)
    t3 = time.perf_counter()
    subprocess.run([sys.executable, "-m", "simd", "trace", "fit", str(path), "--servers", str(servers)],
                   check=True, capture_output=True)
    t4 = time.perf_counter()
    print(f"{name} ({len(log.faults)} faults on {servers} servers): read {t1 - t0:.3f} s, fit {t2 - t1:.3f} s, "
          f"goodness of fit (200 logs) {t3 - t2:.2f} s; `simd trace fit` in a fresh process {t4 - t3:.2f} s   "
          "(target < 10 s)")
    return log


LARGE = replace(SYNTHETIC, lifetime_scale_days=520.0)


def large(trace: Path) -> None:
    """The quadrature compiled against numpy on a cluster of 18,688 servers; the joint regimes' cost."""
    from simd.traces import fit as module

    log = generate(LARGE, 18_688, 350.0, np.random.default_rng(1))
    compiled = module.log_frailty
    module.fit(log, 18_688, joint_regimes=False)  # (the compiled functions loaded)
    best: dict[str, float] = {}
    try:
        for _ in range(2):
            for name, quadrature in (("numpy", module.log_frailty_numpy), ("compiled", compiled)):
                module.log_frailty = quadrature
                t = time.process_time()
                module.fit(log, 18_688, joint_regimes=False)
                best[name] = min(best.get(name, math.inf), time.process_time() - t)
    finally:
        module.log_frailty = compiled
    print(f"{len(log.faults)} faults on 18,688 servers, the fit (CPU s, best of 2): the frailty's quadrature in numpy "
          f"{best['numpy']:.2f} s, compiled {best['compiled']:.2f} s ({best['numpy'] / best['compiled']:.2f}x)")
    hbd = load(trace)
    fit(hbd, 400, joint_regimes=True, relapse=True)  # (the relapses' compiled quadrature loaded)
    for joint, relapse, what in ((False, False, "without the regimes joined with the lifetimes"),
                                 (True, False, "with the regimes joined with the lifetimes"),
                                 (False, True, "with relapses (--relapse)"),
                                 (True, True, "with relapses, regimes and both at once (--relapse --joint-regimes)")):
        t = time.process_time()
        f = fit(hbd, 400, joint_regimes=joint, relapse=relapse)
        print(f"InfiniteHBD, the fit {what}: {time.process_time() - t:.2f} CPU s (written: "
              f"{f.regimes_family if f.regimes else f.lifetime})")
    t = time.process_time()
    f = fit(log, 18_688, joint_regimes=True)
    print(f"18,688 servers, the whole fit (the joint regimes tried): {time.process_time() - t:.2f} CPU s (written: "
          f"{f.regimes_family if f.regimes else f.lifetime})")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trace", type=Path, default=TRACE)
    ap.add_argument("--large", action="store_true", help="the fit at 18,688 servers, compiled against numpy")
    args = ap.parse_args()
    if args.large:
        large(args.trace)
        return
    log = timed_fit("InfiniteHBD", args.trace, 400)
    f = fit(log, 400)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "synthetic.csv"
        path.write_text(csv_text(generate(SYNTHETIC, 1000, 350.0, np.random.default_rng(1))))
        timed_fit("synthetic", path, 1000)
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
