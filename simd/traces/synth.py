"""Synthetic fault logs from the server model (``simd trace fit``'s goodness of fit, and the fit's recovery
tests; docs/traces.md).

A cluster of ``servers`` servers over ``span_days``, each an alternating renewal process: up for a lifetime
(Weibull of shape k and scale theta; exponential when k = 1) whose cumulative hazard is multiplied by the
server's frailty w ~ Gamma(a, 1/a) (mean 1; a = inf: w = 1), so ``x = theta (E / w) ** (1 / k)`` with E
standard exponential; then down for a repair time (lognormal: median and sigma, or exponential: mean); as good
as new after it. Bursts: a Poisson process of ``burst_per_day`` over the cluster, each striking 2 + a geometric
number (mean ``burst_mean_size``) of servers drawn uniformly, those up at that instant failing then (one fault
each, the same start time). A fault's class is drawn from ``classes`` (shares).

A log holds at most ``budget`` faults (default: as many as a log simd reads may hold, half its MAX_EVENTS):
a model that would make more stops there with :class:`OverBudget` (a fitted model far from its log, a server
failing every second over a year, would otherwise grow a log without bound).

This is a log generator, not the engine: a log runs in wall time with repairs and no job, where the engine's
lifetimes count a job's executed steps. It exists to compare a fitted model's statistics with the log's.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from simd.traces.log import DAY, MAX_EVENTS, Fault, FaultLog

MAX_FAULTS = MAX_EVENTS // 2  # a start and an end each


class OverBudget(Exception):
    """The log would hold more faults than its budget."""


@dataclass(frozen=True)
class Model:
    """The server model a fit gives (rates per day, times in days)."""

    lifetime_scale_days: float  # theta
    lifetime_shape: float = 1.0  # k
    gamma_shape: float = float("inf")  # a (frailty on the cumulative hazard; inf: none)
    repair: str = "lognormal"  # or "exponential"
    repair_median_days: float = 1.0  # lognormal
    repair_sigma: float = 1.0
    repair_mean_days: float = 1.0  # exponential
    burst_per_day: float = 0.0  # over the whole cluster
    burst_mean_size: float = 2.0
    classes: dict[str, float] = field(default_factory=lambda: {"fault": 1.0})


def generate(model: Model, servers: int, span_days: float, rng: np.random.Generator,
             budget: int = MAX_FAULTS) -> FaultLog:
    """One synthetic log of ``servers`` servers over ``span_days`` (OverBudget: more than ``budget`` faults)."""
    m = model
    names, shares = list(m.classes), np.array(list(m.classes.values()), dtype=float)
    shares = shares / shares.sum()
    strikes: list[list[float]] = [[] for _ in range(servers)]
    n_bursts = rng.poisson(m.burst_per_day * span_days) if m.burst_per_day > 0 else 0
    if n_bursts > budget:  # each strikes at least one server
        raise OverBudget
    struck = 0
    for t in np.sort(rng.uniform(0.0, span_days, n_bursts)):
        k = 2 + (rng.geometric(1.0 / (m.burst_mean_size - 1.0)) - 1 if m.burst_mean_size > 2 else 0)
        struck += min(k, servers)
        if struck > budget:
            raise OverBudget
        for s in rng.choice(servers, size=min(k, servers), replace=False):
            strikes[s].append(float(t))
    faults = []
    w = rng.gamma(m.gamma_shape, 1.0 / m.gamma_shape, servers) if np.isfinite(m.gamma_shape) else np.ones(servers)
    with np.errstate(over="ignore", divide="ignore"):  # a frailty of 0 (a tiny shape's draw): an endless lifetime
        for s in range(servers):
            t, hits = 0.0, iter(strikes[s])
            hit = next(hits, np.inf)
            while t < span_days:
                life = m.lifetime_scale_days * (rng.exponential() / w[s]) ** (1.0 / m.lifetime_shape)
                while hit < t:  # strikes while the server was in repair miss it
                    hit = next(hits, np.inf)
                start = min(t + life, hit)
                if start >= span_days:
                    break
                if start == hit:
                    hit = next(hits, np.inf)
                repair = (rng.lognormal(np.log(m.repair_median_days), m.repair_sigma) if m.repair == "lognormal"
                          else rng.exponential(m.repair_mean_days))
                end = start + repair
                cls = names[rng.choice(len(names), p=shares)]
                faults.append(Fault(s, start * DAY, end * DAY if end <= span_days else None, "", cls, ""))
                if len(faults) > budget:
                    raise OverBudget
                t = end
    faults.sort(key=lambda f: f.start)
    return FaultLog(tuple(f"s{i}" for i in range(servers)), tuple(faults), span_days * DAY, "synthetic")
