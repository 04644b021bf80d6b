"""Whether a fault log's rate changes over its span (``simd trace stats``; docs/traces.md, "Rates over time"):
the rate per month with exact Poisson intervals, a test of trend and a test of one change point.

- **months** of 365.25 / 12 = 30.44 days from the log's start (time 0), the last one cut at the log's end; a
  month's rate is its faults over its days (per server-day with the cluster's size, else per day of the
  cluster), its 95% interval the exact Poisson one (Garwood 1936: ``chi2(0.025, 2c) / 2`` .. ``chi2(0.975, 2c +
  2) / 2`` faults, c the count), as ``gammaincinv``;
- **Laplace's trend test** (Cox and Lewis 1966, 3.3): for N faults at times t_i over a span T,
  ``U = (sum t_i / T - N / 2) / sqrt(N / 12)`` is standard normal for a constant rate; U > 0 says the faults come
  later (a rate that rises), U < 0 earlier; the p-value is two-sided;
- **one change point**: the likelihood ratio of a Poisson rate that changes once, at tau, against a constant one,
  ``2 [n1 log(n1 / tau) + n2 log(n2 / (T - tau)) - N log(N / T)]`` (n1 faults before tau, n2 after), maximised
  over tau on a grid of :data:`GRID` equal parts of the span; its p-value by Monte Carlo (:data:`SIMULATIONS`
  logs of N faults uniform over the span, the constant rate's law given N: the grid's counts multinomial; a fixed
  seed, so a log's p-value is always the same), ``(1 + #{simulated >= observed}) / (1 + SIMULATIONS)``.

Both tests take the faults as a Poisson process: faults that cluster (bursts of one instant, waves) make any
test find "a change" more often than its p-value says, so a small p-value says the rate is not one constant
Poisson rate, of which a trend or a change is one reading (the months show which).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import special

MONTH_DAYS = 365.25 / 12
GRID = 200  # the change point's candidate times: the span in 200 equal parts (each end at least 1/200 of it)
SIMULATIONS = 999  # the change point test's Monte Carlo logs
SEED = 0


@dataclass(frozen=True)
class Month:
    month: int  # 1, 2, ...
    start_day: float
    days: float
    faults: int
    rate: float  # per server-day with the cluster's size, else per day
    low: float
    high: float


@dataclass(frozen=True)
class Trend:
    laplace_u: float
    laplace_p: float
    change_day: float  # the likeliest change point
    rate_before: float  # (per server-day or per day, as the months')
    rate_after: float
    change_lr: float  # the likelihood ratio statistic (2 log)
    change_p: float
    simulations: int = SIMULATIONS


def poisson_interval(count: int) -> tuple[float, float]:
    """The exact (Garwood) 95% interval of a Poisson mean from one ``count``."""
    low = float(special.gammaincinv(count, 0.025)) if count > 0 else 0.0
    return low, float(special.gammaincinv(count + 1, 0.975))


def months(starts_days: np.ndarray, span_days: float, servers: int | None) -> list[Month]:
    """The faults per month of a log of fault starts (days since its start, sorted) over ``span_days``."""
    if not span_days > 0:
        return []
    n = max(1, math.ceil(span_days / MONTH_DAYS - 1e-9))  # (a span of a few seconds is one month: no 0)
    edges = np.minimum(np.arange(n + 1) * MONTH_DAYS, span_days)
    counts = np.bincount(np.minimum((starts_days // MONTH_DAYS).astype(np.int64), n - 1), minlength=n)
    out = []
    per = servers or 1
    for k in range(n):
        days = float(edges[k + 1] - edges[k])
        c = int(counts[k])
        lo, hi = poisson_interval(c)
        exposure = days * per
        out.append(Month(k + 1, float(edges[k]), days, c, c / exposure, lo / exposure, hi / exposure))
    return out


def _lr(cum: np.ndarray, n: int) -> np.ndarray:
    """The change point's likelihood ratio statistic at each of the grid's inner points, from the cumulative counts
    there (the last axis; GRID - 1 points at k / GRID of the span)."""
    frac = np.arange(1, GRID) / GRID
    n1, n2 = cum, n - cum
    with np.errstate(divide="ignore", invalid="ignore"):
        ll = np.where(n1 > 0, n1 * np.log(n1 / frac), 0.0) + np.where(n2 > 0, n2 * np.log(n2 / (1 - frac)), 0.0)
    return 2 * (ll - n * math.log(n))


def trend(starts_days: np.ndarray, span_days: float, servers: int | None) -> Trend | None:
    """The two tests on a log's fault starts (None: fewer than 2 faults, or no span)."""
    n = len(starts_days)
    if n < 2 or not span_days > 0:
        return None
    x = np.clip(starts_days / span_days, 0.0, 1.0)
    u = (x.sum() - n / 2) / math.sqrt(n / 12)
    grid = np.arange(1, GRID) / GRID
    observed = _lr(np.searchsorted(np.sort(x), grid, "right").astype(float), n)
    best = int(np.argmax(observed))
    rng = np.random.default_rng(SEED)
    simulated = np.cumsum(rng.multinomial(n, np.full(GRID, 1.0 / GRID), size=SIMULATIONS), axis=1)[:, :-1]
    peaks = _lr(simulated.astype(float), n).max(axis=1)
    p = (1 + int((peaks >= observed[best] - 1e-9).sum())) / (1 + SIMULATIONS)
    tau = grid[best] * span_days
    n1 = int(np.searchsorted(np.sort(x), grid[best], "right"))
    per = servers or 1
    return Trend(laplace_u=float(u), laplace_p=float(special.erfc(abs(u) / math.sqrt(2))),
                 change_day=float(tau), rate_before=n1 / (tau * per), rate_after=(n - n1) / ((span_days - tau) * per),
                 change_lr=float(observed[best]), change_p=p)


ROWS = 16  # the text table's rows at most: a longer log's months are shown in periods of several months


def periods(ms: list[Month], servers: int | None) -> list[Month]:
    """The months as the text table shows them: each, or with more than :data:`ROWS`, consecutive months summed
    into periods of ``ceil(months / ROWS)`` (the rate and interval of the period's faults over its days); the
    ``month`` of a period is its first."""
    size = math.ceil(len(ms) / ROWS)
    if size <= 1:
        return ms
    out = []
    per = servers or 1
    for i in range(0, len(ms), size):
        part = ms[i:i + size]
        days, c = sum(m.days for m in part), sum(m.faults for m in part)
        lo, hi = poisson_interval(c)
        out.append(Month(part[0].month, part[0].start_day, days, c, c / (days * per), lo / (days * per),
                         hi / (days * per)))
    return out
