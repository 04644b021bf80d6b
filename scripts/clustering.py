"""Where a fault log's clustering in time lives (docs/traces.md, "Where the clustering lives"): fleet-wide storms
(many servers failing in one stormy period) or per-server repeats (one server failing again soon after its
repair: infant mortality, a bad part not fixed), each statistic of the log beside the fitted model's 95% range
over synthetic logs (simd.traces.synth, the fit's own model), so a statistic outside says what the model lacks.

The statistics (a fault's repeat: its server's previous fault ended at most X days before it started):

- ``gap CV``: the cluster's gaps' coefficient of variation (`trace stats`'), every fault;
- ``gap CV, bursts as one``: the same over the distinct start instants (a same-instant burst one fault);
- ``gap CV, repeats within X d out``: every server's repeats within X days removed, then the bursts as one: what
  is left is the clustering across servers;
- ``repeats within X d``: the share of the faults that are repeats within X days of their server's repair;
- ``short gaps on one server``: of the gaps under ``SHORT`` days between consecutive distinct instants, the share
  whose two faults are on the same server (a burst's servers are all counted: any of the later instant's
  servers also in the earlier one's);
- ``daily servers' dispersion``: over days, the number of distinct servers that start a fault, its variance
  over its mean (1 for independent servers at a steady rate; storms across the cluster raise it, a server's
  repeats within a day do not);
- ``weekly servers' dispersion``: the same over weeks;
- ``weekly servers' dispersion, first 30 d out``: the same without the log's first 30 days (a fit that takes
  every server as new there makes them quiet or stormy by its shape).

With ``--relapse`` a third column: the fit with repairs that do not hold (`simd trace fit --relapse`); with
``--both`` one more: the fit with both flags (`simd trace fit --relapse --joint-regimes`, the family its AIC
writes: the relapses inside the joint regimes when lowest).

    python scripts/clustering.py [LOG] [--servers 400] [--replicas 200] [--relapse] [--both]
"""

from __future__ import annotations

import argparse

import numpy as np

from simd.traces.fit import fit
from simd.traces.log import DAY, load
from simd.traces.stats import Columns
from simd.traces.synth import OverBudget, columns

REPEAT_DAYS = (0.1, 1.0, 7.0, 30.0)
SHORT = 0.1  # days (2.4 h): a short gap (the log's gaps' mean is 0.59 days)
WEEK = 7.0


def _cv(t: np.ndarray) -> float:
    g = np.diff(np.sort(t))
    return float(g.std() / g.mean()) if len(g) > 1 and g.mean() > 0 else float("nan")


def _repeat(c: Columns, days: float) -> np.ndarray:
    """Per fault: its server's previous fault ended at most ``days`` before it started."""
    start, end = c.start / DAY, np.where(np.isnan(c.end), np.inf, c.end / DAY)
    out = np.zeros(len(start), dtype=bool)
    order = np.lexsort((start, c.server))
    s, st, en = c.server[order], start[order], end[order]
    prev_end = np.full(len(st), -np.inf)  # the latest end of the server's earlier faults (they may overlap)
    for lo, hi in _groups(s):
        prev_end[lo + 1:hi] = np.maximum.accumulate(en[lo:hi - 1])
    out[order] = st - prev_end <= days
    return out


def _groups(s: np.ndarray):
    edges = np.flatnonzero(np.r_[True, s[1:] != s[:-1], True])
    return zip(edges[:-1].tolist(), edges[1:].tolist(), strict=True)


def statistics(c: Columns) -> dict[str, float]:
    start = c.start / DAY
    out = {"gap CV": _cv(start), "gap CV, bursts as one": _cv(np.unique(start))}
    for x in REPEAT_DAYS:
        r = _repeat(c, x)
        out[f"repeats within {x:g} d"] = float(r.mean())
        out[f"gap CV, repeats within {x:g} d out"] = _cv(np.unique(start[~r]))
    # short gaps between distinct instants: same server on both sides?
    order = np.argsort(start, kind="stable")
    t, s = start[order], c.server[order]
    inst, first = np.unique(t, return_index=True)
    servers_at = np.split(s, first[1:])
    gaps = np.diff(inst)
    short = np.flatnonzero(gaps < SHORT)
    same = [bool(np.intersect1d(servers_at[i], servers_at[i + 1]).size) for i in short]
    out["short gaps on one server"] = float(np.mean(same)) if same else float("nan")
    for name, skip, size in (("daily servers' dispersion", 0.0, 1.0), ("weekly servers' dispersion", 0.0, WEEK),
                             ("weekly servers' dispersion, first 30 d out", 30.0, WEEK)):
        keep = start >= skip
        weeks = ((start[keep] - skip) // size).astype(np.int64)
        n_weeks = int((c.span_days - skip) // size)
        pairs = np.unique(np.stack([weeks, c.server[keep]]), axis=1)
        counts = np.bincount(pairs[0][pairs[0] < n_weeks], minlength=n_weeks)
        out[name] = float(counts.var() / counts.mean()) if counts.mean() > 0 else float("nan")
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("log", nargs="?", default="../shared/traces/infinitehbd/fault_trace.json")
    ap.add_argument("--servers", type=int, default=400)
    ap.add_argument("--replicas", type=int, default=200)
    ap.add_argument("--relapse", action="store_true", help="also the fit with repairs that do not hold")
    ap.add_argument("--both", action="store_true", help="also the fit with --relapse --joint-regimes")
    a = ap.parse_args()
    log = load(a.log)
    f = fit(log, a.servers)
    observed = statistics(Columns.of(log))
    models = {"fitted": f.model()}
    if f.rate_schedule:
        models["without the schedule"] = f.without_schedule().model()
    if a.relapse:
        r = fit(log, a.servers, relapse=True)
        if r.relapse_probability is not None:
            models["with relapses"] = r.model()
            print(f"with relapses: p {r.relapse_probability}, mean days {r.relapse_mean_days}, Weibull shape "
                  f"{r.lifetime_shape}, frailty {r.gamma_shape}")
    if a.both:
        b = fit(log, a.servers, relapse=True, joint_regimes=True)
        models["with both"] = b.model()
        print(f"with both: {b.regimes_family if b.regimes else b.lifetime}")
    ranges = {}
    for name, m in models.items():
        rng = np.random.default_rng(1)
        rows = []
        for _ in range(a.replicas):
            try:
                rows.append(statistics(columns(m, a.servers, f.span_days, rng, 10 * len(log.faults))))
            except OverBudget:
                continue
        ranges[name] = {k: np.nanquantile([r[k] for r in rows], (0.025, 0.975)) for k in observed}
    print(f"{a.log}: {len(log.faults)} faults on {a.servers} servers; the fit: {f.lifetime} shape "
          f"{f.lifetime_shape.value if f.lifetime_shape else 1:.3g}, frailty "
          f"{f.gamma_shape.value if f.gamma_shape else None}, schedule {f.schedule_months} months")
    head = f"{'statistic':<42} {'log':>7}" + "".join(f"  {n + ' 95%':>26}" for n in ranges)
    print(head)
    for k, v in observed.items():
        cells = "".join(f"  {f'{lo:.3g} .. {hi:.3g}':>20} {'in' if lo <= v <= hi else 'OUT':>5}"
                        for lo, hi in (r[k] for r in ranges.values()))
        print(f"{k:<42} {v:>7.3g}{cells}")


if __name__ == "__main__":
    main()
