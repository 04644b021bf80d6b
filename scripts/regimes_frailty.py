"""Regimes with a gamma frailty on a log, measured (docs/traces.md, "Regimes with the frailty"): whether faults
clustered in time on a cluster whose servers differ explain a log's gaps' CV. The engine runs the two together
(its regimes a time change of every server's age, the frailty dividing each server's lifetime's scale in it);
the fit does not fit them jointly (regimes.py's docstring: given the regime path a server's frailty couples its
faults, so the forward algorithm no longer factors). Here a plug-in: the frailty from the exponential lifetimes'
negative binomial fit of the servers' independent faults over their up-days (rate lambda, shape a), each
server's frailty at its posterior mean ``(a + n_i) / (a + lambda U_i)``, the regimes fitted over the pieces with
the servers up counted by it (regimes.pieces' ``frailty``); then the model of exponential lifetimes, that
frailty, those regimes and the log's fitted bursts and repairs against the log, in the fit's goodness-of-fit
table, beside the fit's own model (`simd trace fit`). With ``--schedule`` the fit's rate schedule too (the
engine multiplies it with the regimes): the servers' up-days in its operational time, the pieces cut at its
edges and the servers up counted by it as well. Estimates only: the plug-in's likelihood is not the model's (its
AIC is not comparable, its intervals not given).

    python scripts/regimes_frailty.py [LOG] [--servers 400] [--replicas 200] [--schedule]
"""

from __future__ import annotations

import argparse
import dataclasses
import math

import numpy as np
from scipy import optimize, special

from simd.traces import regimes
from simd.traces.fit import Estimate, _intervals, fit
from simd.traces.log import DAY, load
from simd.traces.scenario import goodness, goodness_table
from simd.traces.stats import bursts


def _one(v: float) -> Estimate:
    return Estimate(v, v, v)


def plug_in(log, servers: int, schedule: tuple = ()) -> tuple[float, float, regimes.RegimeFit]:
    """(the frailty's shape, the negative binomial's rate, the regimes fitted with the frailties' posterior means
    plugged in) of ``log``; ``schedule``: (from day, Estimate) pieces, the fit's rate schedule, or () none."""
    starts = np.array([x.start for x in log.faults])
    in_burst, _ = bursts(starts, 0.0)
    weight = np.where(in_burst, 0.0, 1.0)  # (the fit's weights at window 0)
    edges = np.array([d for d, _ in schedule] if schedule else [0.0])
    mult = np.array([m.value for _, m in schedule] if schedule else [1.0])
    tau = np.concatenate([[0.0], np.cumsum(np.diff(np.append(edges, math.inf)) * mult)[:-1]])

    def clock(t: float) -> float:  # the schedule's operational time at day t
        j = int(np.searchsorted(edges, t, "right")) - 1
        return float(tau[j] + (t - edges[j]) * mult[j])

    n = np.array([float(w.sum()) for _, w, _ in _intervals(log, servers, weight)])  # independent faults
    up = np.zeros(servers)
    for i in range(servers):  # each server's up-days in operational time (fit._intervals' rule)
        at = 0.0
        for x in (x for x in log.faults if x.server == i):
            if x.start / DAY >= at:
                up[i] += clock(x.start / DAY) - clock(at)
            at = max(at, x.end / DAY if x.end is not None else math.inf)
        if at < log.span_days:
            up[i] += clock(log.span_days) - clock(at)

    def nll(x):  # negative binomial: n_i ~ Poisson(w_i lambda U_i), w_i ~ Gamma(a, 1/a)
        lam, shape = math.exp(x[0]), math.exp(x[1])
        return -float((special.gammaln(shape + n) - special.gammaln(shape) + shape * math.log(shape)
                       - (shape + n) * np.log(shape + lam * up) + n * np.log(lam * up)).sum())

    o = optimize.minimize(nll, [math.log(n.sum() / up.sum()), 0.0], method="Nelder-Mead",
                          options={"xatol": 1e-8, "fatol": 1e-8})
    lam, shape = math.exp(o.x[0]), math.exp(o.x[1])
    frailty = (shape + n) / (shape + lam * up)
    p = regimes.pieces(log, servers, weight, frailty)
    if schedule:  # the pieces cut at the schedule's edges, the servers up counted by its multiplier
        ends = np.cumsum(p.dt)
        dt, on, fault = [], [], []
        for lo, hi, u, w in zip((ends - p.dt).tolist(), ends.tolist(), p.up.tolist(), p.fault.tolist(), strict=True):
            cuts = [lo, *edges[(edges > lo) & (edges < hi)].tolist(), hi]
            for j in range(len(cuts) - 1):
                dt.append(cuts[j + 1] - cuts[j])
                on.append(u * mult[int(np.searchsorted(edges, cuts[j], "right")) - 1])
                fault.append(w if j == len(cuts) - 2 else 0.0)
        p = regimes.Pieces(np.array(dt), np.array(on), np.array(fault), float(np.dot(dt, on)), p.faults)
    r = regimes.fit(p, log.span_days)
    return shape, lam, r


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("log", nargs="?", default="../shared/traces/infinitehbd/fault_trace.json")
    ap.add_argument("--servers", type=int, default=400)
    ap.add_argument("--replicas", type=int, default=200)
    ap.add_argument("--schedule", action="store_true", help="with the fit's rate schedule")
    a = ap.parse_args()
    log = load(a.log)
    f = fit(log, a.servers)
    print(f"the fit's model: {f.lifetime}, frailty shape {f.gamma_shape.value if f.gamma_shape else None}, "
          f"schedule {f.schedule_months} months, regimes {'yes' if f.regimes else 'no'}")
    print(goodness_table(goodness(f, log, a.replicas, seed=1).rows))

    shape, lam, r = plug_in(log, a.servers, f.rate_schedule if a.schedule else ())
    (mc, ms) = r.multipliers
    print(f"\nplug-in{' with the schedule' if a.schedule else ''}: exponential lifetimes, frailty shape"
          f" {shape:.4g} (rate {lam:.4g} per server-day); regimes: "
          f"calm x{mc:.3g} for {r.calm_days:.3g} days, stormy x{ms:.3g} for {r.stormy_days:.3g} days (ratio "
          f"{r.ratio:.3g}), mean rate {r.rate:.4g} per server-day at frailty 1")
    g = dataclasses.replace(f, lifetime="exponential", lifetime_shape=None, lifetime_scale_days=_one(1 / r.rate),
                            rate_per_server_day=_one(r.rate), gamma_shape=_one(shape),
                            **({} if a.schedule else dict(rate_schedule=(), unscheduled=None, schedule_months=0)),
                            regimes=((_one(mc), _one(r.calm_days)), (_one(ms), _one(r.stormy_days))),
                            regime_ratio=_one(r.ratio))
    print(goodness_table(goodness(g, log, a.replicas, seed=1).rows))


if __name__ == "__main__":
    main()
