"""The joint fit against the exact likelihood, on logs where both are the model (docs/traces.md, "Why the ratio
leaned high"): simd.traces.synth's logs of exponential lifetimes (scale 150 days at the stationary mean), no
frailty, and the joint family's regimes (a storm 8 times the calm rate, calm 5 days, stormy 0.3 days), 300
servers over SPAN days; on each the regimes' exact maximum likelihood (simd.traces.regimes, the forward
algorithm: the MMPP is the model here) and, with ``--joint``, the joint fit's (simd.traces.joint by `trace fit
--joint-regimes`, its Weibull shape and frailty free) on the same log. Per log one JSON line: the MMPP's optimum
(log rate, log(r - 1), log d_c, log d_s) and standard errors, the joint fit's log(r - 1), log d_c, log d_s and
theirs; ``--read`` prints each one's mean error against the truth and, with both, the joint's less the MMPP's on
the same logs (what the Monte Carlo EM leaves of the exact optimum). With ``--weibull`` the logs are of the joint
family's lifetimes (Weibull 0.7, a frailty of shape 1.5), where the MMPP is not the model but the joint fit's
start: the joint's less the MMPP's is then how far the EM moves from its start.

    python scripts/joint_vs_mmpp.py [--span 350] [--logs 40] [--seed 7] [--part K/N] [--joint] [--weibull] > F.jsonl
    python scripts/joint_vs_mmpp.py --read F.jsonl [F2.jsonl ...]
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path

import numpy as np
from engine_recovery import part

from simd.traces import fit as fit_module
from simd.traces import joint, regimes, synth

Z = 1.959963984540054  # the normal's 97.5% quantile
MEAN = (5.0 + 8.0 * 0.3) / 5.3  # the regimes' stationary mean multiplier (scripts/engine_recovery.py's JOINT_MEAN)
MODEL = synth.Model(lifetime_scale_days=150.0, repair="exponential", repair_mean_days=1e-9,
                    regimes=((1.0 / MEAN, 5.0), (8.0 / MEAN, 0.3)))
# ``--weibull``: the joint family's lifetimes instead (Weibull 0.7, a frailty of shape 1.5): the MMPP no longer the
# model, its optimum the joint fit's start
WEIBULL = synth.Model(lifetime_scale_days=150.0, lifetime_shape=0.7, gamma_shape=1.5, repair="exponential",
                      repair_mean_days=1e-9, regimes=MODEL.regimes)
TRUTH = (math.log(7.0), math.log(5.0), math.log(0.3))  # log(r - 1), log d_c, log d_s
SERVERS = 300


def run(span: float, logs: int, seed: int, parts: tuple[int, int], with_joint: bool, model: synth.Model) -> None:
    kept: dict = {}
    real = joint.fit

    def keep(*a, **kw):
        got = real(*a, **kw)
        kept.update(x=got.x.tolist(), d=got.d.tolist(), cov=got.cov.tolist())
        return got

    joint.fit = keep
    rng = np.random.default_rng(seed)
    for i in range(logs):
        log = synth.generate(model, SERVERS, span, rng)
        if i % parts[1] != parts[0]:
            continue
        p = regimes.pieces(log, SERVERS, np.ones(len(log.faults)))
        r = regimes.fit(p, span)
        se = fit_module._wald(regimes.nll_gradient(p), r.x)
        line = dict(log=i, faults=len(log.faults), mmpp=[r.x[1:].tolist(), se[1:].tolist()])
        if with_joint:
            kept.clear()
            fit_module.fit(log, SERVERS, schedules=(), joint_regimes=True)
            if kept:
                nb = len(kept["x"]) - 1  # log(r - 1): the last of x without a schedule
                cov = np.array(kept["cov"])
                line["joint"] = [[kept["x"][nb], *kept["d"]],
                                 np.sqrt(np.clip(np.diag(cov)[[nb, -2, -1]], 0, None)).tolist()]
        print(json.dumps(line), flush=True)


def read(files: list[str]) -> None:
    lines = [json.loads(s) for f in files for s in Path(f).read_text().splitlines() if s.strip()]
    names = ("log(r - 1)", "log d_c", "log d_s")
    for key in ("mmpp", "joint"):
        rows = [x[key] for x in lines if key in x]
        if not rows:
            continue
        est, se = np.array([r[0] for r in rows]), np.array([r[1] for r in rows])
        err = est - np.array(TRUTH)
        z = -err / se
        print(f"{key}: {len(rows)} logs")
        for q, name in enumerate(names):
            e = err[:, q]
            print(f"  {name:<11} mean error {e.mean():+.3f} (+- {e.std(ddof=1) / math.sqrt(len(e)):.3f}), "
                  f"z mean {z[:, q].mean():+.2f} SD {z[:, q].std(ddof=1):.2f}, covered "
                  f"{(abs(z[:, q]) <= Z).sum()}/{len(z)}")
    both = [x for x in lines if "joint" in x]
    if both:
        d = np.array([np.array(x["joint"][0]) - np.array(x["mmpp"][0]) for x in both])
        print(f"joint less MMPP, the same {len(d)} logs: " + ", ".join(
            f"{name} {d[:, q].mean():+.3f} (+- {d[:, q].std(ddof=1) / math.sqrt(len(d)):.3f})"
            for q, name in enumerate(names)))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--span", type=float, default=350.0)
    ap.add_argument("--logs", type=int, default=40)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--part", type=part, default=(0, 1))
    ap.add_argument("--joint", action="store_true")
    ap.add_argument("--weibull", action="store_true")
    ap.add_argument("--read", nargs="*")
    a = ap.parse_args()
    if a.read:
        read(a.read)
        return
    run(a.span, a.logs, a.seed, a.part, a.joint, WEIBULL if a.weibull else MODEL)


if __name__ == "__main__":
    main()
