"""The joint fits' intervals, diagnosed (docs/traces.md, "Regimes with the lifetimes", "Relapses and regimes at
once"): scripts/engine_recovery.py's logs of a joint family (``joint``: the regimes joined with the lifetimes;
``relapse_regimes``: with the relapses too) fitted back as it fits them, and per log one JSON line: each written
parameter's truth, estimate and interval, and what the joint fit's intervals are made of (simd.traces.joint.fit:
the estimate (x, d), Louis' observed information, the approximating MMPP's curvature in the regimes, the
covariance, the final importance weights and every final path's complete-data score at the estimate), so that
the z-scores and other ways of making the covariance can be read off the same fits (``--read``).

    python scripts/joint_intervals.py --families relapse_regimes --logs 40 [--seed 34] [--part K/N] --out F.jsonl
    python scripts/joint_intervals.py --read F.jsonl [F2.jsonl ...]
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

import numpy as np

sys.path[:0] = [str(Path(__file__).resolve().parent)]

import engine_recovery  # noqa: E402

from simd.traces import fit as fit_module  # noqa: E402
from simd.traces import joint  # noqa: E402

Z = 1.959963984540054  # the normal's 97.5% quantile


def scores(j, x: np.ndarray, d: np.ndarray, p) -> np.ndarray:
    """Every path's complete-data score at (x, d): the lifetimes' (minus nll's gradient) and the path prior's in
    log d (central differences, as joint._louis)."""
    out = []
    step = 1e-5
    for i in range(len(p.faults_stormy)):
        _, g = j.nll(x, p, i, grad=True)
        out.append(-g)
    gd = np.stack([(j.path_prior(d + step * np.eye(2)[q], p.counts) - j.path_prior(d - step * np.eye(2)[q],
                                                                                      p.counts)) / (2 * step)
                   for q in range(2)], axis=1)
    return np.concatenate([np.array(out), gd], axis=1)


def capture(cls):
    """Wraps joint._louis and joint.covariance to keep what a fit of ``cls`` (Joint, RelapseJoint) makes."""
    kept: dict = {}
    louis, covariance = joint._louis, joint.covariance

    def _louis(j, x, d, p, omega):
        info = louis(j, x, d, p, omega)
        if type(j) is cls:
            kept.update(x=x.tolist(), d=d.tolist(), info=info.tolist(), omega=omega.tolist(),
                        scores=scores(j, x, d, p).tolist(), base=j.base)
            kept["_mine"] = True
        return info

    def _covariance(info, curvature, b):
        cov = covariance(info, curvature, b)
        if kept.pop("_mine", False):
            kept.update(curvature=curvature.tolist(), cov=cov.tolist())
        return cov

    joint._louis, joint.covariance = _louis, _covariance
    return kept


def run(family: str, logs: int, seed: int, parts: tuple[int, int], out: Path) -> None:
    m, servers, span, pools = {**engine_recovery.FAMILIES, engine_recovery.RELAPSE[0]: engine_recovery.RELAPSE[1],
                               engine_recovery.RELAPSE_REGIMES[0]: engine_recovery.RELAPSE_REGIMES[1]}[family]
    kept = capture(joint.RelapseJoint if family == "relapse_regimes" else joint.Joint)
    real = fit_module.fit
    count = iter(range(parts[0], logs, parts[1]))

    def fitted(log, servers, **kw):
        kept.clear()
        f = real(log, servers, **kw)
        ok, est = engine_recovery.truths_and_estimates(family, m, f)
        line = dict(family=family, seed=seed, log=next(count), chosen=bool(ok), ess=f.regimes_ess,
                    params={k: [t, e.value, e.low, e.high] if e is not None else [t, None, None, None]
                            for k, (t, e) in est.items()}, **kept)
        with out.open("a") as fh:
            fh.write(json.dumps(line) + "\n")
        return f

    engine_recovery.fit = fitted
    engine_recovery.run(family, logs, seed, "engine", parts, each=True)


# each written parameter's Wald scale (fit._joint): the log's, the logit's for p, log(r - 1)'s for the ratio
SCALE = {"p": lambda v: math.log(v / (1 - v)), "ratio": lambda v: math.log(v - 1)}


def z_scores(line: dict) -> dict[str, float]:
    """Per written parameter, (truth - estimate) over its standard error on its Wald scale."""
    out = {}
    for k, (t, v, lo, hi) in line["params"].items():
        if v is None or not lo or not math.isfinite(hi):
            continue
        g = SCALE.get(k, math.log)
        out[k] = (g(t) - g(v)) / ((g(hi) - g(lo)) / (2 * Z))
    return out


def written(line: dict, cov: np.ndarray) -> dict[str, tuple[float, float]]:
    """Per written parameter, (estimate, standard error) on its Wald scale from the fit's (x, d) and a covariance
    ``cov`` over them (fit._joint's delta method for the times written over the regimes' stationary mean)."""
    x, d, nb = np.array(line["x"]), np.array(line["d"]), line["base"]
    relapse = line["family"] == "relapse_regimes"
    r, dc, ds = 1.0 + math.exp(x[nb]), math.exp(d[0]), math.exp(d[1])
    e = (dc + r * ds) / (dc + ds)
    var = np.diag(cov)
    out = {}
    names = ["scale", "shape", "gamma"] + (["p", "mu"] if relapse else [])
    for i, k in enumerate(names):
        v, s2 = x[i], var[i]
        if k in ("scale", "mu"):
            grad = np.zeros(len(cov))
            grad[i] = 1.0
            grad[nb] = -ds * (r - 1.0) / (dc + r * ds)
            grad[-2] = -(dc / (dc + r * ds) - dc / (dc + ds))
            grad[-1] = -(r * ds / (dc + r * ds) - ds / (dc + ds))
            v, s2 = v - math.log(e), float(grad @ cov @ grad)
        out[k] = (v, s2)
    out["ratio"] = (x[nb], var[nb])
    out["calm_days"], out["stormy_days"] = (d[0], var[-2]), (d[1], var[-1])
    return {k: (v, math.sqrt(s2) if s2 > 0 else math.nan) for k, (v, s2) in out.items()}


def variants(line: dict) -> dict[str, np.ndarray]:
    """The covariances compared: joint.covariance's (the fit's, without the Monte Carlo variance that joint.fit
    adds with the relapses: the z-scores above are the written intervals'); Louis' with the missing information
    (the complete-data scores' covariance) over all the final paths unweighted (the proposal's spread of them),
    the regimes' block the MMPP's curvature (joint.covariance) or Louis' own; the complete-data information
    alone."""
    info, s, omega = np.array(line["info"]), np.array(line["scores"]), np.array(line["omega"])
    curv, b = np.array(line["curvature"]), line["base"]
    order = np.argsort(-omega)
    rows = order[:min(int(np.searchsorted(np.cumsum(omega[order]), 0.99)) + 1, joint.HESSIAN_PATHS)]
    w = omega[rows] / omega[rows].sum()
    sr = s[rows] - w @ s[rows]
    complete = info + (sr * w[:, None]).T @ sr  # the weighted complete-data information
    missing = np.cov(s, rowvar=False)
    unweighted = complete - missing
    return {"fit": np.array(line["cov"]), "q-missing": joint.covariance(unweighted, curv, b),
            "q-missing, Louis' regimes": joint._inverse(unweighted),
            "complete only": joint.covariance(complete, curv, b)}


def read(files: list[str]) -> None:
    lines = [json.loads(s) for f in files for s in Path(f).read_text().splitlines() if s.strip()]
    lines = [x for x in lines if x["chosen"]]
    zs = [z_scores(x) for x in lines]
    names = list(lines[0]["params"])
    print(f"{len(lines)} logs (the family written); ESS of the final 256 paths: median "
          f"{np.median([x['ess'] for x in lines]):.1f}")
    print(f"{'parameter':<12} {'covered':>8} {'z mean':>7} {'z SD':>6}")
    for k in names:
        z = np.array([d[k] for d in zs if k in d])
        print(f"{k:<12} {int((abs(z) <= Z).sum()):>4}/{len(z):<3} {z.mean():>7.2f} {z.std(ddof=1):>6.2f}")
    scale = {"p": lambda v: math.log(v / (1 - v)), "ratio": lambda v: math.log(v - 1)}
    for name in variants(lines[0]):
        print(f"\n{name}: covered, z mean, z SD")
        got = {k: [] for k in names}
        for x in lines:
            est = written(x, variants(x)[name])
            for k in names:
                t = x["params"][k][0]
                v, se = est[k]
                got[k].append((scale.get(k, math.log)(t) - v) / se)
        for k in names:
            z = np.array(got[k])
            ok = np.isfinite(z)
            print(f"{k:<12} {int((abs(z[ok]) <= Z).sum()):>4}/{len(z):<3} {z[ok].mean():>7.2f} "
                  f"{z[ok].std(ddof=1):>6.2f}" + (f" ({(~ok).sum()} without)" if (~ok).any() else ""))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--families", default="relapse_regimes")
    ap.add_argument("--logs", type=int, default=40)
    ap.add_argument("--seed", type=int, default=34)
    ap.add_argument("--part", type=engine_recovery.part, default=(0, 1))
    ap.add_argument("--out", type=Path)
    ap.add_argument("--read", nargs="*")
    a = ap.parse_args()
    if a.read:
        read(a.read)
        return
    for family in a.families.split(","):
        run(family, a.logs, a.seed, a.part, a.out)


if __name__ == "__main__":
    main()
