"""The relapses-and-regimes fit's estimates, spread three ways on scripts/engine_recovery.py's engine logs of its
family (docs/traces.md, "Relapses and regimes at once", "Why the shape's and the calm days' intervals are narrow"),
each against the fit's own standard errors (simd.traces.joint.fit's covariance, on the fit's scales: log theta in
calm units, log k, log a, logit p, log mu, log(r - 1), log d_c, log d_s):

- ``--seeds S1,S2,..``: the same log fitted with other Monte Carlo seeds (joint.fit's ``seed``): the estimate's
  Monte Carlo spread, and the EM's iterates over the second half of the iterations (what the fit adds as its
  Monte Carlo variance) against it;
- ``--starts``: the EM from its start (the relapse family's optimum, the MMPP's storms) and from the truth, for
  ``--iterations``: whether the estimate depends on where the EM starts (the gap between the two in standard
  errors, by iteration);
- ``--bootstrap R``: R logs of each log's fitted model (simd.traces.synth), each fitted back whole: the spread of
  the estimates (the fit's sampling spread under its own model) against the fit's standard errors, and beside it
  the approximating MMPP's optimum over the regimes (joint.Joint.chain_nll, the lifetimes held at the generating
  model's) against its curvature, the regimes' block of the fit's information; with ``--paths N`` each of those logs
  fitted again with N paths an iteration: whether the joint fit's departure from the MMPP's optimum is the log's (the
  same with more paths) or the EM's Monte Carlo (not).

    python scripts/joint_spread.py --logs 0,1,2,3 [--seed 34] --seeds 20241,1,2,3,4 [--out F.jsonl]
    python scripts/joint_spread.py --logs 19,25 --starts --iterations 48
    python scripts/joint_spread.py --logs 0,1 --bootstrap 15 [--paths 64]
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
from scipy import optimize

sys.path[:0] = [str(Path(__file__).resolve().parent), str(Path(__file__).resolve().parent.parent / "tests")]

import engine_recovery  # noqa: E402
from support.engine_logs import Unreadable, engine_log, spec_of  # noqa: E402

from simd.traces import fit as fit_module  # noqa: E402
from simd.traces import joint  # noqa: E402
from simd.traces.synth import generate  # noqa: E402

NAMES = ("log theta", "log k", "log a", "logit p", "log mu", "log(r-1)", "log d_c", "log d_s")
MODEL, SERVERS, SPAN, _ = engine_recovery.RELAPSE_REGIMES[1]
(_, CALM), (_, STORMY) = MODEL.regimes
MEAN = engine_recovery.JOINT_MEAN  # the regimes' stationary mean multiplier: the calm units' times are E times
RATIO = 8.0
# the truth on the fit's scales (the times in calm units)
TRUTH = np.array([math.log(MODEL.lifetime_scale_days * MEAN), math.log(MODEL.lifetime_shape),
                  math.log(MODEL.gamma_shape), math.log(MODEL.relapse_probability / (1 - MODEL.relapse_probability)),
                  math.log(MODEL.relapse_mean_days * MEAN), math.log(RATIO - 1.0), math.log(CALM), math.log(STORMY)])


class _Captured(Exception):
    pass


def captured(log, fitted: bool = True, relapse: bool = True, servers: int = SERVERS):
    """(joint.fit's arguments for the relapses-and-regimes family on ``log`` (``relapse`` False: the joint family),
    the Fit and that call's JointFit, or None and None): the whole fit as simd.traces.fit runs it on ``servers``
    (`trace fit --joint-regimes`, with ``relapse`` `--relapse` too), or (``fitted`` False) only up to that call."""
    real, got = joint.fit, {}

    def wrapped(*a, **kw):
        if bool(kw.get("relapse")) != relapse:  # (another family's call: run, or skipped when only the call is wanted)
            return real(*a, **kw) if fitted else joint.JointFit(math.inf, 0.0, np.zeros(1), np.zeros(2), np.eye(3),
                                                                1.0, 3)
        got["call"] = (a, kw)
        if not fitted:
            raise _Captured
        got["joint"] = real(*a, **kw)
        return got["joint"]

    joint.fit = wrapped
    try:
        f = fit_module.fit(log, servers, schedules=(), joint_regimes=True, relapse=relapse)
    except _Captured:
        f = None
    finally:
        joint.fit = real
    return got["call"], f, got.get("joint")


def engine_logs(seed: int, wanted: list[int], count: int = 40):
    """engine_recovery's logs ``wanted`` of its relapse_regimes family (``count`` logs a seed: the draws in its
    order, an unreadable log replaced as it replaces one)."""
    spec = spec_of(MODEL, SERVERS, SPAN, False)
    rng = np.random.default_rng(seed)
    skipped = 0
    for i in range(max(wanted) + 1):
        try:
            log = engine_log(spec, SPAN, seed * 100_000 + i, rng)
        except Unreadable:
            log = engine_log(spec, SPAN, seed * 100_000 + count + skipped, rng)
            skipped += 1
        if i in wanted:
            yield i, log


def traced(a, kw, **more):
    """joint.fit with its iterates kept: (JointFit, iterates as a K x params array)."""
    iterates = []
    m_step = joint.Joint.m_step

    def kept(self, x, d, p, omega, bounds):
        x, d = m_step(self, x, d, p, omega, bounds)
        iterates.append(np.concatenate([x, d]))
        return x, d

    joint.Joint.m_step = kept
    try:
        got = joint.fit(*a, **{**kw, **more})
    finally:
        joint.Joint.m_step = m_step
    return got, np.array(iterates)


def _se(cov) -> np.ndarray:
    return np.sqrt(np.diag(np.asarray(cov)))


def _line(label: str, values) -> str:
    return f"  {label:<44}" + " ".join(f"{n} {v:+.2f}" for n, v in zip(NAMES, values, strict=True))


def seeds(logs, seed_list: list[int], out) -> None:
    for i, log in logs:
        (a, kw), _, _ = captured(log, fitted=False)
        runs = [traced(a, kw, seed=s) for s in seed_list]
        est = np.array([np.concatenate([g.x, g.d]) for g, _ in runs])
        se = np.median([_se(g.cov) for g, _ in runs], axis=0)
        cross = est.std(axis=0, ddof=1)
        half = len(runs[0][1]) // 2
        within = np.sqrt(np.mean([it[half:].var(axis=0, ddof=1) for _, it in runs], axis=0))
        print(f"log {i}, {len(seed_list)} seeds:")
        print(_line("Monte Carlo SD / standard error", cross / se))
        print(_line("iterates' second-half SD / standard error", within / se))
        for s, (g, it) in zip(seed_list, runs, strict=True):
            out(dict(mode="seeds", log=i, seed=s, x=g.x.tolist(), d=g.d.tolist(), cov=g.cov.tolist(), ess=g.ess,
                     iterates=it.tolist()))


def starts(logs, iterations: int, out) -> None:
    for i, log in logs:
        (a, kw), _, _ = captured(log, fitted=False)
        at_truth = list(a)
        # the truth as the start: the lifetimes' at the long-run rate (joint.fit puts them in calm units), the regimes'
        lifetimes = TRUTH[:5] - np.array([math.log(MEAN), 0, 0, 0, math.log(MEAN)])
        at_truth[5] = np.concatenate([lifetimes, a[5][5:]])
        at_truth[7] = (RATIO, CALM, STORMY)
        (g0, it0), (_, it1) = traced(a, kw, iterations=iterations), traced(at_truth, kw, iterations=iterations)
        se = _se(g0.cov)
        print(f"log {i}, {iterations} iterations from the fit's start and from the truth:")
        for k in sorted({0, 7, 15, iterations - 1} & set(range(iterations))):
            print(_line(f"iteration {k + 1}: start's (est - truth) / se", (it0[k] - TRUTH) / se))
            print(_line(f"iteration {k + 1}: truth's (est - truth) / se", (it1[k] - TRUTH) / se))
        last = slice(iterations * 2 // 3, iterations)
        print(_line("last third's means: the gap / se", (it0[last].mean(axis=0) - it1[last].mean(axis=0)) / se))
        out(dict(mode="starts", log=i, iterates=it0.tolist(), from_truth=it1.tolist(), cov=g0.cov.tolist()))


def bootstrap(logs, replicates: int, paths: int, out) -> None:
    for i, log in logs:
        _, f, got = captured(log)
        if ", relapse," not in (f.regimes_family or ""):
            print(f"log {i}: the fit did not write the relapses-and-regimes family (its AIC not the lowest)")
            continue
        x, d = got.x, got.d
        r, dc, ds = 1.0 + math.exp(x[5]), math.exp(d[0]), math.exp(d[1])
        e = (dc + r * ds) / (dc + ds)
        m = replace(MODEL, lifetime_scale_days=f.lifetime_scale_days.value, lifetime_shape=f.lifetime_shape.value,
                    gamma_shape=f.gamma_shape.value, relapse_probability=f.relapse_probability.value,
                    relapse_mean_days=f.relapse_mean_days.value, regimes=((1 / e, dc), (r / e, ds)),
                    repair="exponential", repair_mean_days=1e-9)
        truth = np.concatenate([x, d])
        rng = np.random.default_rng(1000 + i)
        est, ses, mmpp, curv, more = [], [], [], [], []
        for _ in range(replicates):
            (b, bkw), _, _ = captured(generate(m, SERVERS, SPAN, rng), fitted=False)
            g = joint.fit(*b, **bkw)
            est.append(np.concatenate([g.x, g.d]))
            ses.append(_se(g.cov))
            j = joint.RelapseJoint(*b[:5])
            j.last_d = d
            nll = j.chain_nll(x)
            v = optimize.minimize(nll, truth[5:], method="Nelder-Mead",
                                  options=dict(xatol=1e-3, fatol=1e-4, maxfev=300)).x
            mmpp.append(v)
            curv.append(_se(joint._inverse(joint._hessian(nll, v))))
            if paths:
                g = joint.fit(*b, **{**bkw, "paths": paths})
                more.append(np.concatenate([g.x, g.d]))
            out(dict(mode="bootstrap", log=i, truth=truth.tolist(), est=est[-1].tolist(), se=ses[-1].tolist(),
                     mmpp=v.tolist(), mmpp_se=curv[-1].tolist(), paths=paths,
                     more=more[-1].tolist() if paths else None))
        est, mmpp = np.array(est), np.array(mmpp)
        print(f"log {i}, {replicates} logs of its fitted model fitted back:")
        print(_line("the fit's SD / its median se", est.std(axis=0, ddof=1) / np.median(ses, axis=0)))
        print(_line("mean (est - generating) / SD", (est - truth).mean(axis=0) / est.std(axis=0, ddof=1)))
        regimes = slice(5, 8)
        print("  the regimes' MMPP optimum, SD / its curvature's median se: " + " ".join(
            f"{n} {v:.2f}" for n, v in zip(NAMES[regimes], mmpp.std(axis=0, ddof=1) / np.nanmedian(curv, axis=0),
                                           strict=True)))
        print("  the fit's regimes less the MMPP's optimum, SD / the fit's median se: " + " ".join(
            f"{n} {v:.2f}" for n, v in zip(NAMES[regimes], (est[:, regimes] - mmpp).std(axis=0, ddof=1)
                                           / np.median(ses, axis=0)[regimes], strict=True)))
        if paths:
            first, second = est[:, regimes] - mmpp, np.array(more)[:, regimes] - mmpp
            print(f"  with {paths} paths an iteration, the departure's correlation with {joint.PATHS} paths' and the "
                  "two fits' SD apart: " + " ".join(
                      f"{n} {np.corrcoef(u, w)[0, 1]:+.2f}, {np.std(w - u, ddof=1):.3f}"
                      for n, u, w in zip(NAMES[regimes], first.T, second.T, strict=True)))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--logs", default="0,1,2,3", help="engine_recovery's logs (their indices) to use")
    ap.add_argument("--seed", type=int, default=34, help="engine_recovery's seed of the logs")
    ap.add_argument("--seeds", help="Monte Carlo seeds to refit each log with")
    ap.add_argument("--starts", action="store_true", help="the EM from its start and from the truth")
    ap.add_argument("--iterations", type=int, default=48)
    ap.add_argument("--bootstrap", type=int, default=0, help="logs of each log's fitted model to fit back")
    ap.add_argument("--paths", type=int, default=0, help="with --bootstrap: each log fitted again with this many "
                    "paths an iteration")
    ap.add_argument("--out", type=Path, help="a JSON line per fit")
    a = ap.parse_args()

    def out(line: dict) -> None:
        if a.out:
            with a.out.open("a") as fh:
                fh.write(json.dumps(line) + "\n")

    wanted = [int(v) for v in a.logs.split(",")]
    if a.seeds:
        seeds(engine_logs(a.seed, wanted), [int(v) for v in a.seeds.split(",")], out)
    if a.starts:
        starts(engine_logs(a.seed, wanted), a.iterations, out)
    if a.bootstrap:
        bootstrap(engine_logs(a.seed, wanted), a.bootstrap, a.paths, out)


if __name__ == "__main__":
    main()
