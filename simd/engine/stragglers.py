"""Step durations under stragglers: a synchronous step lasts as long as its slowest rank (seed 001, scen. 4).

Rank times are ``base + N(0, jitter^2)`` for the ``n - k`` healthy ranks and ``base * slowdown +
N(0, jitter^2)`` for the ``k`` slow ones; the step is the maximum over all ranks, never below ``base``
(the base step time is the fastest a step can be). The maximum of independent normals has the closed-form
CDF ``F(x) = Phi((x - base)/jitter)^(n-k) * Phi((x - base*slowdown)/jitter)^k``, so one uniform per step is
enough: ``x = F^-1(u)``, with no work proportional to the number of ranks.

``F^-1`` is tabulated once per configuration in the variable ``s = log(-log u)`` (in which it is nearly
linear: the maximum is Gumbel-like), on 65,536 points over s in [-32, 3.7], solved by Newton's method, and
interpolated linearly: the interpolation error is below 0.1 microsecond for jitter up to seconds, under
the engine's 1 us resolution (tests compare against the exact ``base + jitter * Phi^-1(u^(1/n))``). The
table ends at the 1 - 1.3e-14 quantile (s = -32): a step beyond it (probability 1.3e-14) takes that value.

Step ``g`` (the g-th executed step since the simulation started) uses uniform number ``g - 1`` of the
"straggler" stream: durations are a pure function of ``g``, so tick-size invariance holds.
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np

from simd.engine.streams import uniforms
from simd.models.straggler import norm_ppf

S_LO, S_HI, POINTS = -32.0, 3.7, 1 << 16
_H = (S_HI - S_LO) / (POINTS - 1)
_erfc = np.frompyfunc(math.erfc, 1, 1)
_SQRT2 = math.sqrt(2.0)

# Histogram buckets of the simulated step time, as multiples of the base step time.
BUCKET_FACTORS = (1.0, 1.01, 1.02, 1.05, 1.1, 1.15, 1.2, 1.3, 1.5, 2.0)


def _log_cdf(z: np.ndarray) -> np.ndarray:
    """log Phi(z), accurate in both tails (math.erfc, and log1p where Phi is near 1)."""
    half_tail = 0.5 * _erfc(np.abs(z) / _SQRT2).astype(np.float64)  # Phi(-|z|)
    return np.where(z < 0, np.log(half_tail), np.log1p(-half_tail))


@lru_cache(maxsize=64)
def quantile_table(healthy: int, slow: int, shift: float) -> np.ndarray:
    """Standardized F^-1 on the s grid: the max of ``healthy`` N(0,1) and ``slow`` N(shift,1) draws.

    Built by tabulating s(x) = log(-log F(x)) on a fine x grid (F in closed form) and inverting it by
    interpolation onto the s grid.
    """
    def closed(m: int, s: float) -> float:  # quantile of the max of m standard normals at s
        log_p = -math.exp(s) / m  # log of the per-rank probability u^(1/m)
        if log_p < -math.log(2.0):
            return float(norm_ppf(math.exp(log_p)))  # lower half: p itself is accurate
        return float(-norm_ppf(-math.expm1(log_p)))  # upper half: through 1 - p, accurate near 1

    ends = [closed(healthy, S_LO), closed(healthy, S_HI)] if healthy else []
    if slow:
        ends += [shift + closed(slow, S_LO), shift + closed(slow, S_HI)]
    lo, hi = min(ends) - 1.0, max(ends) + 1.0
    x = np.linspace(lo, hi, 1 << 18)
    log_f = np.zeros_like(x)
    if healthy:
        log_f += healthy * _log_cdf(x)
    if slow:
        log_f += slow * _log_cdf(x - shift)
    with np.errstate(divide="ignore"):
        s_of_x = np.log(-log_f)  # strictly decreasing in x
    keep = np.isfinite(s_of_x)
    grid = S_LO + _H * np.arange(POINTS)
    return np.interp(grid, s_of_x[keep][::-1], x[keep][::-1])


class StepTimes:
    """Durations (integer microseconds) of executed steps for one job specification."""

    def __init__(self, n_gpus: int, base_us: int, jitter_us: float, slow_ranks: int, slowdown: float,
                 stream: dict):
        self.base_us, self.stream = base_us, stream
        k = min(slow_ranks, n_gpus) if slowdown > 1.0 else 0
        self.has_slow = k > 0
        if jitter_us > 0:
            healthy = base_us + jitter_us * quantile_table(n_gpus, 0, 0.0)
            slow = base_us + jitter_us * quantile_table(n_gpus - k, k, base_us * (slowdown - 1.0) / jitter_us) \
                if k else healthy
        else:  # no jitter: every step takes exactly the slowest rank's time
            healthy = np.full(POINTS, float(base_us))
            slow = np.full(POINTS, float(round(base_us * slowdown))) if k else healthy
        # tables and their forward differences, for the interpolation
        self.healthy = (healthy, np.append(np.diff(healthy), 0.0))
        self.slow = (slow, np.append(np.diff(slow), 0.0))
        self.bounds = np.array([round(base_us * f) for f in BUCKET_FACTORS], dtype=np.int64)

    def durations(self, g0: int, n: int, slow_steps: int) -> np.ndarray:
        """Durations of executed steps g0+1 .. g0+n; the first ``slow_steps`` of them have the slow ranks."""
        u = uniforms(self.stream, g0, n)
        with np.errstate(divide="ignore"):
            np.log(u, out=u)
            np.negative(u, out=u)
            np.log(u, out=u)
        u -= S_LO
        u *= 1.0 / _H
        np.clip(u, 0.0, POINTS - 1.000001, out=u)
        i = u.astype(np.int64)
        u -= i  # the fraction between grid points
        out = np.empty(n, dtype=np.int64)
        for lo, hi, (table, delta) in ((0, min(slow_steps, n), self.slow),
                                       (min(slow_steps, n), n, self.healthy)):
            if hi > lo:
                ii = i[lo:hi]
                x = delta[ii]
                x *= u[lo:hi]
                x += table[ii]
                np.rint(x, out=x)
                np.maximum(x, self.base_us, out=x)
                out[lo:hi] = x
        return out

    def histogram(self, durations: np.ndarray) -> np.ndarray:
        """Counts per bucket (le = bounds, then +Inf), not cumulative."""
        return np.bincount(np.searchsorted(self.bounds, durations, side="left"), minlength=len(self.bounds) + 1)
