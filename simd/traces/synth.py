"""Synthetic fault logs from the server model (``simd trace fit``'s goodness of fit, and the fit's recovery
tests; docs/traces.md).

A cluster of ``servers`` servers over ``span_days``, each an alternating renewal process: up for a lifetime
(Weibull of shape k and scale theta; exponential when k = 1) whose scale is divided by the server's frailty
w ~ Gamma(a, 1/a) (mean 1; a = inf: w = 1), so ``x = theta / w * E ** (1 / k)`` with E standard exponential (the
engine's model: simd.engine.servers multiplies a server's rate by its gamma draw, dividing its lifetime's scale);
then down for a repair time (lognormal: median and sigma; exponential: mean; or a mixture of lognormal kinds
of repair, each drawn by its weight); as good as new after it. Bursts: a Poisson process of ``burst_per_day``
over the cluster, each striking 2 + a geometric number (mean ``burst_mean_size``) of servers drawn uniformly,
those up at that instant failing then (one fault each, the same start time: the engine strikes a burst's servers in
one step). The engine draws them among its running servers; here a server in repair is missed (the servers are
drawn side by side, round by round, and a server's state at a burst is known only when its round reaches it): a
burst is smaller by the share of servers in repair, 2% on InfiniteHBD (rate 0.0042 a day times 5.5 days of repair).
``burst_spread_days`` > 0 spreads a burst's faults uniformly over that long after its instant instead, as a log's
records of one event spread over minutes (tests/traces/test_burst_window.py; a fitted model's bursts are instants,
the engine's). A fault's class is drawn from ``classes`` (shares). A repair that does not hold (the engine's
``servers.relapse``): with ``relapse_probability`` a lifetime after a repair is exponential of mean
``relapse_mean_days`` divided by the frailty instead of the Weibull, as the engine draws it; the first lifetimes are
of the law. With ``regimes`` or a ``rate_schedule`` the
lifetimes are spent in the engine's operational time (the regime's multiplier times the schedule's piece's per
day of the log), the bursts unmoved.

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
from simd.traces.stats import Columns

MAX_FAULTS = MAX_EVENTS // 2  # a start and an end each


class OverBudget(Exception):
    """The log would hold more faults than its budget."""


@dataclass(frozen=True)
class Model:
    """The server model a fit gives (rates per day, times in days)."""

    lifetime_scale_days: float  # theta
    lifetime_shape: float = 1.0  # k
    gamma_shape: float = float("inf")  # a (the frailty dividing a lifetime's scale; inf: none)
    repair: str = "lognormal"  # or "exponential", "mixture"
    repair_median_days: float = 1.0  # lognormal
    repair_sigma: float = 1.0
    repair_mean_days: float = 1.0  # exponential
    repair_mixture: tuple[tuple[float, float, float], ...] = ()  # "mixture": (weight, median days, sigma) each
    burst_per_day: float = 0.0  # over the whole cluster
    burst_mean_size: float = 2.0
    burst_spread_days: float = 0.0  # a burst's faults uniformly within this long (0: at its instant)
    classes: dict[str, float] = field(default_factory=lambda: {"fault": 1.0})
    # faults clustered in time: ((multiplier, mean days) calm, stormy), the engine's regimes (simd.engine.servers,
    # "Operational time") over the log's time: lifetimes in operational time; () none
    regimes: tuple[tuple[float, float], ...] = ()
    # a rate that changes over the log's time: (from day, multiplier) pieces, the first from day 0, the last for
    # good, the engine's rate_schedule (the same time change, its multiplier times the regime's); () none
    rate_schedule: tuple[tuple[float, float], ...] = ()
    # a repair that does not hold (the engine's servers.relapse): with this probability a server's lifetime after a
    # repair is exponential of mean ``relapse_mean_days`` divided by its frailty instead of its Weibull; 0 none
    relapse_probability: float = 0.0
    relapse_mean_days: float = 0.0


def generate(model: Model, servers: int, span_days: float, rng: np.random.Generator,
             budget: int = MAX_FAULTS) -> FaultLog:
    """One synthetic log of ``servers`` servers over ``span_days`` (OverBudget: more than ``budget`` faults)."""
    c = columns(model, servers, span_days, rng, budget)
    faults = tuple(Fault(int(s), float(t), None if np.isnan(e) else float(e), "", c.classes[k], "")
                   for s, t, e, k in zip(c.server.tolist(), c.start.tolist(), c.end.tolist(), c.cls.tolist(),
                                         strict=True))
    return FaultLog(tuple(f"s{i}" for i in range(servers)), faults, span_days * DAY, "synthetic")


def columns(model: Model, servers: int, span_days: float, rng: np.random.Generator,
            budget: int = MAX_FAULTS) -> Columns:
    """:func:`generate`'s log as arrays (simd.traces.stats reads them as they are: the goodness of fit's replicas,
    without a Fault object each). The servers are drawn side by side: each round draws every server's next
    lifetime, repair and class at once (numpy), so a round costs the same for 10 servers or 10,000."""
    m = model
    names, shares = list(m.classes), np.array(list(m.classes.values()), dtype=float)
    shares = shares / shares.sum()
    n_bursts = rng.poisson(m.burst_per_day * span_days) if m.burst_per_day > 0 else 0
    if n_bursts > budget:  # each strikes at least one server
        raise OverBudget
    struck, hit_server, hit_time = 0, [], []
    for t in np.sort(rng.uniform(0.0, span_days, n_bursts)):
        k = 2 + (rng.geometric(1.0 / (m.burst_mean_size - 1.0)) - 1 if m.burst_mean_size > 2 else 0)
        struck += min(k, servers)
        if struck > budget:
            raise OverBudget
        chosen = rng.choice(servers, size=min(k, servers), replace=False)
        hit_server.append(chosen)
        hit_time.append(float(t) + rng.uniform(0.0, m.burst_spread_days, len(chosen)) if m.burst_spread_days > 0
                        else np.full(len(chosen), float(t)))
    # the strikes by server, then time: server s's are hits[lo[s]:hi[s]]
    hs = np.concatenate(hit_server) if hit_server else np.zeros(0, dtype=np.int64)
    ht = np.concatenate(hit_time) if hit_time else np.zeros(0)
    order = np.lexsort((ht, hs))
    hs, hits = hs[order], np.append(ht[order], np.inf)  # (a sentinel: past a server's strikes, no strike)
    nxt, hi = np.searchsorted(hs, np.arange(servers), "left"), np.searchsorted(hs, np.arange(servers), "right")
    w = rng.gamma(m.gamma_shape, 1.0 / m.gamma_shape, servers) if np.isfinite(m.gamma_shape) else np.ones(servers)
    clock = _operational(m, span_days, rng)
    up = np.zeros(servers)  # when each server is next up
    alive = np.arange(servers)  # the servers still up before the span's end
    out: list[tuple[np.ndarray, ...]] = []
    total = rounds = 0
    with np.errstate(over="ignore", divide="ignore"):  # a frailty of 0 (a tiny shape's draw): an endless lifetime
        while len(alive):
            t = up[alive]
            life = m.lifetime_scale_days / w[alive] * rng.exponential(size=len(alive)) ** (1.0 / m.lifetime_shape)
            if m.relapse_probability > 0 and rounds:  # after a repair (every server's first lifetime is of its law)
                short = rng.random(len(alive)) < m.relapse_probability
                life = np.where(short, m.relapse_mean_days / w[alive] * rng.exponential(size=len(alive)), life)
            if clock is not None:  # the lifetime spent in operational time: its end through tau's inverse
                life = np.interp(np.interp(t, *clock) + life, clock[1], clock[0], right=np.inf) - t
            p, end_p = nxt[alive], hi[alive]
            while True:  # strikes while the server was in repair miss it
                missed = (p < end_p) & (hits[np.minimum(p, end_p)] < t)
                if not missed.any():
                    break
                p = p + missed
            hit = np.where(p < end_p, hits[np.minimum(p, end_p)], np.inf)
            start = np.minimum(t + life, hit)
            fails = start < span_days
            nxt[alive] = p + (fails & (start == hit))
            alive, start = alive[fails], start[fails]
            if not len(alive):
                break
            total += len(alive)
            if total > budget:
                raise OverBudget
            repair = _repairs(m, rng, len(alive))
            end = start + repair
            cls = rng.choice(len(names), size=len(alive), p=shares)
            out.append((alive, start, end, cls, np.full(len(alive), rounds)))
            rounds += 1
            up[alive] = end
            alive = alive[end < span_days]
    server, start, end, cls, nth = (np.concatenate([o[i] for o in out]) if out else np.zeros(0, dtype=dtype)
                                    for i, dtype in enumerate((np.int64, float, float, np.int64, np.int64)))
    order = np.lexsort((nth, server, start))  # by start; ties by server, then the server's own order
    server, start, end, cls = server[order], start[order], end[order], cls[order]
    return Columns(server=server, start=start * DAY, end=np.where(end <= span_days, end * DAY, np.nan), cls=cls,
                   classes=tuple(names), level=np.zeros(len(server), dtype=np.int64), levels=("",),
                   servers_named=servers, span_days=span_days * DAY / DAY)  # (as FaultLog.span_days reads it)


def _operational(m: Model, span_days: float, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray] | None:
    """The operational clock over the span, (times, tau at them) (None without regimes or a schedule): tau piecewise
    linear, its slope the regime's multiplier times the schedule's piece's (simd.engine.servers, "Operational
    time"), to past the span. The regime path: the first regime stationary (stormy with probability
    d_s / (d_c + d_s)), stretches exponential of the regimes' means, alternating, to the first stretch past the
    span."""
    if not m.regimes and not m.rate_schedule:
        return None
    times, slope = [0.0], [1.0]  # each stretch's start and the regime's multiplier over it
    if m.regimes:
        (mc, dc), (ms, ds) = m.regimes
        r = int(rng.random() < ds / (dc + ds))
        slope = []
        while times[-1] <= span_days:
            slope.append(ms if r else mc)
            times.append(times[-1] + rng.exponential(ds if r else dc))
            r = 1 - r
        times.pop()
    edges = np.array([d for d, _ in m.rate_schedule] or [0.0])
    factor = np.array([x for _, x in m.rate_schedule] or [1.0])
    cuts = np.union1d(np.array(times), edges[edges > 0])
    end = max(span_days, float(cuts[-1])) + 1.0
    at = np.append(cuts, end)
    # each piece between cuts: the regime's multiplier (the stretch holding it) times the schedule's
    regime = np.array(slope)[np.searchsorted(np.array(times), cuts, "right") - 1]
    sched = factor[np.searchsorted(edges, cuts, "right") - 1]
    taus = np.concatenate([[0.0], np.cumsum(regime * sched * np.diff(at))])
    return at, taus


def _repairs(m: Model, rng: np.random.Generator, n: int) -> np.ndarray:
    """``n`` repair times (days) of the model's law: a mixture's component by its weight, then its lognormal."""
    if m.repair == "mixture":
        weights = np.array([w for w, _, _ in m.repair_mixture], dtype=float)
        j = rng.choice(len(weights), size=n, p=weights / weights.sum())
        medians = np.log(np.array([md for _, md, _ in m.repair_mixture]))
        sigmas = np.array([sg for _, _, sg in m.repair_mixture])
        return np.exp(rng.normal(medians[j], sigmas[j]))
    if m.repair == "lognormal":
        return rng.lognormal(np.log(m.repair_median_days), m.repair_sigma, n)
    return rng.exponential(m.repair_mean_days, n)
