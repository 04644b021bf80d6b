"""Step durations under stragglers: a synchronous step lasts as long as its slowest rank (seed 001, scen. 4).

Rank times are ``base + N(0, jitter^2)`` for the ``n - k`` healthy ranks and ``base * slowdown +
N(0, jitter^2)`` for the ``k`` slow ones; the step is the maximum over all ranks, never below ``base``
(the base step time is the fastest a step can be). The maximum of independent normals has the closed-form
CDF ``F(x) = Phi((x - base)/jitter)^(n-k) * Phi((x - base*slowdown)/jitter)^k``, so one random number per
step is enough, with no work proportional to the number of ranks: with ``t ~ Exp(1)`` and ``u = exp(-t)``
uniform, the step is ``F^-1(exp(-t))``.

``x(u) = F^-1(u)`` is tabulated once per configuration on a pseudo-logarithmic grid, in two halves: for
u < 1/2 in v = u, for u >= 1/2 in v = 1 - u (exact in floating point there), each binary octave of v in
[2^-64, 1/2] split into 2**10 equal cells. The cell of a float64 v is its bit pattern shifted right (no
logarithm or exponential per step) and linear interpolation inside a cell is exact to about 1e-7 of the
jitter (0.05 us for 0.5 s of jitter), under the engine's 1 us resolution; tests compare against the exact
``base + jitter * Phi^-1(u^(1/n))``. The uniforms have 53 bits, so the distribution is exact down to tail
probabilities of 2^-53 per step. The table is built by evaluating ``log(-log F(x))`` on a fine grid of x
(F in closed form) and inverting it by interpolation.

Step ``g`` (the g-th executed step since the simulation started) uses uniform number ``g - 1`` of the
"straggler" stream (PCG64 jumps straight to it): durations are a pure function of ``g``, so tick-size
invariance holds.

Cost (measured on the project's 2-core machine, `python bench/engine.py`): about 22 ns per step for
the sampler on its own (the uniform ~5 ns, the table lookup and interpolation ~10 ns, the histogram bucket
~4 ns) and 25-31 ns per executed step in the engine, against about 0.2-0.3 us per step for seed 000's
per-step loop without stragglers: 6-9x, short of the 10x issue 5 asks for. Faster exact sampling would need
compiled code (the engine is numpy + stdlib only) or fewer random numbers per step, which exactness rules
out; an approximate sampler (e.g. 24-bit uniforms) would be faster but truncate the tails.
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np

from simd.engine.streams import generator_at
from simd.models.straggler import norm_ppf

# Histogram buckets of the simulated step time, as multiples of the base step time.
BUCKET_FACTORS = (1.0, 1.01, 1.02, 1.05, 1.1, 1.15, 1.2, 1.3, 1.5, 2.0)
_STRADDLE = len(BUCKET_FACTORS) + 1  # marks a cell that straddles a bucket bound (one past +Inf)

MANTISSA_BITS = 10  # cells per octave of v: 2**10
_SHIFT = 52 - MANTISSA_BITS
V_LO_EXP = -64  # v in [2**-64, 2**-1]; below 2**-64 (probability 5e-20) the end cell is used
_I_LO = (1023 + V_LO_EXP) << MANTISSA_BITS
_I_HI = (1023 - 1) << MANTISSA_BITS  # the bit pattern of v = 1/2
_CELLS = _I_HI - _I_LO  # per half
_V_MIN = 2.0 ** V_LO_EXP
BLOCK = 1 << 14  # steps per in-cache pass of the table lookup


def _grid_v() -> np.ndarray:
    """v at every cell boundary of one half of the table: 2**-64 .. 1/2."""
    return (np.arange(_I_LO, _I_HI + 1, dtype=np.int64) << _SHIFT).view(np.float64)


def _log_cdf(z: np.ndarray) -> np.ndarray:
    """log Phi(z), accurate in both tails (math.erfc, and log1p where Phi is near 1)."""
    half_tail = 0.5 * np.frompyfunc(math.erfc, 1, 1)(np.abs(z) / math.sqrt(2.0)).astype(np.float64)
    return np.where(z < 0, np.log(half_tail), np.log1p(-half_tail))


def _closed_max_quantile(m: int, t: float) -> float:
    """Quantile of the max of m standard normals at u = exp(-t): Phi^-1(u^(1/m))."""
    log_p = -t / m
    if log_p < -math.log(2.0):
        return float(norm_ppf(math.exp(log_p)))  # lower half: p itself is accurate
    return float(-norm_ppf(-math.expm1(log_p)))  # upper half: through 1 - p, accurate near 1


@lru_cache(maxsize=64)
def quantile_table(healthy: int, slow: int, shift: float) -> np.ndarray:
    """Standardized F^-1 (the max of ``healthy`` N(0,1) and ``slow`` N(shift, 1) draws) at the cell
    boundaries of both halves: u = v (lower half), then u = 1 - v (upper half)."""
    v = _grid_v()
    t = np.concatenate((-np.log(v), -np.log1p(-v)))  # u = exp(-t): t of the lower half, then the upper
    ends = []
    for m, off in ((healthy, 0.0), (slow, shift)):
        if m:
            ends += [off + _closed_max_quantile(m, t.min()), off + _closed_max_quantile(m, t.max())]
    lo, hi = min(ends) - 1.0, max(ends) + 1.0
    x = np.linspace(lo, hi, 1 << 19)
    log_f = np.zeros_like(x)
    if healthy:
        log_f += healthy * _log_cdf(x)
    if slow:
        log_f += slow * _log_cdf(x - shift)
    with np.errstate(divide="ignore"):
        log_t = np.log(-log_f)  # log t(x): strictly decreasing in x
    keep = np.isfinite(log_t)
    return np.interp(np.log(t), log_t[keep][::-1], x[keep][::-1])


class StepTimes:
    """Durations (integer microseconds) of executed steps for one job specification."""

    def __init__(self, n_gpus: int, base_us: int, jitter_us: float, slow_ranks: int, slowdown: float,
                 stream: dict):
        self.base_us, self.stream = base_us, stream
        k = min(slow_ranks, n_gpus) if slowdown > 1.0 else 0
        size = 2 * (_CELLS + 1)
        if jitter_us > 0:
            healthy = base_us + jitter_us * quantile_table(n_gpus, 0, 0.0)
            slow = base_us + jitter_us * quantile_table(n_gpus - k, k, base_us * (slowdown - 1.0) / jitter_us) \
                if k else healthy
        else:  # no jitter: every step takes exactly the slowest rank's time
            healthy = np.full(size, float(base_us))
            slow = np.full(size, float(round(base_us * slowdown))) if k else healthy
        self.bounds = np.array([round(base_us * f) for f in BUCKET_FACTORS], dtype=np.int64)
        self.healthy = self._prepare(healthy)
        self.slow = self._prepare(slow)

    def _prepare(self, table: np.ndarray):
        """Each cell's line ``x = a + b * v`` through its two boundary values (a carries +0.5: truncating
        then rounds to the microsecond), each cell's histogram bucket, and whether the floor at the base
        step time can bind. Index i < _CELLS: lower half; _CELLS + 1 + j: upper half; the two boundaries
        at v = 1/2 (indices _CELLS and 2 * _CELLS + 1) are constant lines through their value."""
        v = np.concatenate((_grid_v(), _grid_v()))
        slope = np.append(np.diff(table) / np.diff(v), 0.0)
        slope[_CELLS] = 0.0
        floor = bool(table.min() < self.base_us + 0.5)
        return table - slope * v + 0.5, slope, self._cell_buckets(table), floor

    def _bucket(self, durations_us: np.ndarray) -> np.ndarray:
        return np.searchsorted(self.bounds, durations_us, side="left")

    def _cell_buckets(self, table: np.ndarray) -> np.ndarray:
        """The bucket of every step whose t falls in cell i, or _STRADDLE when the cell's two ends fall in
        different buckets (those few steps are classified one by one)."""
        ends = self._bucket(np.maximum(np.floor(table + 0.5), self.base_us))
        out = ends.astype(np.int8)
        out[:-1][ends[:-1] != ends[1:]] = _STRADDLE
        return out

    def uniforms(self, g0: int, n: int) -> np.ndarray:
        """The uniforms u in [0, 1) of executed steps g0+1 .. g0+n (the step is F^-1(u))."""
        return generator_at(self.stream, g0).random(n)

    def durations(self, g0: int, n: int, slow_steps: int) -> tuple[np.ndarray, np.ndarray]:
        """Durations of executed steps g0+1 .. g0+n (the first ``slow_steps`` have the slow ranks), and each
        step's histogram bucket (0 .. len(BUCKET_FACTORS), the last one +Inf).
        Vectorized in cache-sized blocks: this is the engine's per-step cost."""
        out = np.empty(n, dtype=np.int64)
        buckets = np.empty(n, dtype=np.int8)  # each step's histogram bucket (histogram_of)
        gen = generator_at(self.stream, g0)
        u = np.empty(min(n, BLOCK))
        v = np.empty(min(n, BLOCK))
        for lo in range(0, n, BLOCK):
            hi = min(n, lo + BLOCK)
            uu, vv = u[: hi - lo], v[: hi - lo]
            gen.random(out=uu)
            np.subtract(1.0, uu, out=vv)
            upper = uu >= 0.5
            np.minimum(uu, vv, out=vv)  # v = u below 1/2, 1 - u (exact) above
            np.maximum(vv, _V_MIN, out=vv)  # u = 0 (probability 2**-53): the grid's end
            cell = vv.view(np.int64) >> _SHIFT
            cell -= _I_LO
            np.add(cell, _CELLS + 1, out=cell, where=upper)  # the upper half follows the lower half
            cut = min(max(slow_steps - lo, 0), hi - lo)
            for a, z, (table, delta, cells, floor) in ((0, cut, self.slow), (cut, hi - lo, self.healthy)):
                if z <= a:
                    continue
                ii = cell[a:z]
                x = delta[ii]
                x *= vv[a:z]
                x += table[ii]
                if floor:
                    np.maximum(x, self.base_us, out=x)
                out[lo + a: lo + z] = x  # truncates: the table carries +0.5, so this rounds
                bucket = buckets[lo + a: lo + z]
                np.take(cells, ii, out=bucket)
                straddling = np.flatnonzero(bucket == _STRADDLE)
                if len(straddling):
                    bucket[straddling] = self._bucket(out[lo + a + straddling])
        return out, buckets

    @staticmethod
    def histogram_of(durations: np.ndarray, buckets: np.ndarray, count: int) -> np.ndarray:
        """Histogram (buckets, then +Inf) of the first ``count`` steps of a ``durations`` result."""
        return np.bincount(buckets[:count], minlength=_STRADDLE)
