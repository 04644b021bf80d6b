"""The rate schedule's selection criterion, measured (docs/traces.md, "Rates over the log's span"): synthetic logs
of simd.traces.synth (the engine's model: Weibull 0.8 lifetimes, a gamma frailty of shape 2, bursts; 200 servers
over 350 days) without a schedule and with one by three months, each fitted once; from each fit's likelihoods the
schedule each criterion would write: AIC, BIC (log of the independent faults per parameter), and the likelihood
ratio test against the fit without a schedule at 5%, with and without Bonferroni over the candidates tried (the
trend by month among them: its pieces log-linear, one parameter).

    python scripts/schedule_selection.py [--logs 200] [--seed 34]
"""

from __future__ import annotations

import argparse
import math

import numpy as np
from scipy import stats

from simd.traces.fit import fit, schedule_edges
from simd.traces.synth import Model, generate

SERVERS, SPAN = 200, 350.0
EDGES = schedule_edges(SPAN, 3)
BASE = dict(lifetime_scale_days=120.0, lifetime_shape=0.8, gamma_shape=2.0, repair="exponential",
            repair_mean_days=2.0, burst_per_day=0.05, burst_mean_size=3.0)
CASES = {
    "steady": (),
    "x0.5/x1.5 by 3 months": (0.5, 1.5, 1.0, 1.5),
    "x0.8/x1.2 by 3 months": (0.8, 1.2, 1.0, 1.2),
}


def decisions(f) -> dict[str, int]:
    """The schedule (its months, negative for the trend by so many months; 0 none) each criterion writes, from the
    fit's AIC table."""
    family = min(("exponential", "weibull"), key=f.aic.get)
    k0 = 2 if family == "exponential" else 3
    nll0 = (f.aic[family] - 2 * k0) / 2
    n = max(f.independent_faults, 2)
    cands = []
    for name, a in f.aic.items():
        trend = name.startswith(family + ", trend by")
        if not (trend or name.startswith(family + ", by")):
            continue
        months = 1 if name.endswith("by month") else int(name.split()[-2])
        extra = 1 if trend else len(schedule_edges(f.span_days, months)) - 2
        nll = (a - 2 * (k0 + extra)) / 2
        p = float(stats.chi2.sf(max(2 * (nll0 - nll), 0.0), extra))
        cands.append((-months if trend else months, a, 2 * nll + (k0 + extra) * math.log(n), p))
    out = {}
    rival = min(f.aic[family], f.aic.get("regimes", math.inf))
    best = min(cands, key=lambda c: c[1], default=None)
    out["AIC"] = best[0] if best and best[1] < rival else 0
    bic0 = 2 * nll0 + k0 * math.log(n)
    best = min(cands, key=lambda c: c[2], default=None)
    out["BIC"] = best[0] if best and best[2] < bic0 else 0
    best = min(cands, key=lambda c: c[3], default=None)
    out["LRT 5%"] = best[0] if best and best[3] < 0.05 else 0
    out["LRT 5%/K"] = best[0] if best and best[3] < 0.05 / len(cands) else 0
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--logs", type=int, default=200)
    ap.add_argument("--seed", type=int, default=34)
    args = ap.parse_args()
    for case, raw in CASES.items():
        sched = tuple(zip(EDGES[:-1].tolist(), raw, strict=True)) if raw else ()
        model = Model(**BASE, rate_schedule=sched)
        rng = np.random.default_rng(args.seed)
        counts: dict[str, dict[int, int]] = {}
        for _ in range(args.logs):
            for crit, months in decisions(fit(generate(model, SERVERS, SPAN, rng), SERVERS)).items():
                counts.setdefault(crit, {}).setdefault(months, 0)
                counts[crit][months] += 1
        print(f"{case} ({args.logs} logs):")
        for crit, c in counts.items():
            wrote = sum(v for m, v in c.items() if m)
            compatible = sum(v for m, v in c.items() if m in (1, 3))
            by = ", ".join(f"{'none' if m == 0 else f'{m} mo' if m > 0 else f'trend {-m} mo'} {v}"
                           for m, v in sorted(c.items()))
            print(f"  {crit:9s} a schedule on {wrote:4d} ({100 * wrote / args.logs:5.1f}%), its pieces holding the "
                  f"truth's on {compatible:4d}; {by}", flush=True)


if __name__ == "__main__":
    main()
