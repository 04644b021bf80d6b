"""Step durations under stragglers: a synchronous step lasts as long as its slowest rank (seed 001, scen. 4).

Rank times are ``base + N(0, jitter^2)`` for the ``n - k`` healthy ranks and ``base * slowdown +
N(0, jitter^2)`` for the ``k`` slow ones; the step is the maximum over all ranks, never below ``base``
(the base step time is the fastest a step can be). The maximum of independent normals has the closed-form
CDF ``F(x) = Phi((x - base)/jitter)^(n-k) * Phi((x - base*slowdown)/jitter)^k``, so one random number per
step is enough, with no work proportional to the number of ranks: with ``t ~ Exp(1)`` and ``u = exp(-t)``
uniform, the step is ``F^-1(exp(-t))``.

``x(t) = F^-1(exp(-t))`` is tabulated once per configuration on a pseudo-logarithmic grid in t: every
binary octave of t split into 2**10 equal cells, so that the cell of a float64 ``t`` is its bit pattern
shifted right (no logarithm per step) and linear interpolation inside a cell is exact to
``|x''| (t 2^-10)^2 / 8``; since x is close to linear in log t, that is about 1e-7 of the jitter (0.05 us
for 0.5 s of jitter), under the engine's 1 us resolution (tests compare against the exact
``base + jitter * Phi^-1(u^(1/n))``). The table is built by evaluating ``log(-log F(x))`` on a fine grid
of x (F in closed form) and inverting it by interpolation.

Step ``g`` (the g-th executed step since the simulation started) takes the ``((g-1) % 4096)``-th exponential
of chunk ``(g-1) // 4096`` of the "straggler" stream; each chunk has its own stretch of 2**20 raw draws of
the generator (a chunk needs about 4.2e3), so durations are a pure function of ``g``: tick-size invariance
holds.
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np

from simd.engine.streams import generator_at
from simd.models.straggler import norm_ppf

# Histogram buckets of the simulated step time, as multiples of the base step time.
BUCKET_FACTORS = (1.0, 1.01, 1.02, 1.05, 1.1, 1.15, 1.2, 1.3, 1.5, 2.0)
_STRADDLE = len(BUCKET_FACTORS) + 1  # histogram column of steps in a cell that straddles a bucket bound

MANTISSA_BITS = 10  # cells per octave of t: 2**10
_SHIFT = 52 - MANTISSA_BITS
T_LO_EXP, T_HI_EXP = -64, 7  # t in [2**-64, 2**7): u from 1 - 5e-20 down to e^-128; clamped outside
_I_LO = (1023 + T_LO_EXP) << MANTISSA_BITS
_I_HI = (1023 + T_HI_EXP) << MANTISSA_BITS
CHUNK = 1 << 12  # exponentials per generator chunk
BLOCK = 1 << 14  # steps per in-cache pass of the table lookup (and per histogram row)
_RAW_PER_CHUNK = 1 << 20  # raw 64-bit draws reserved per chunk (ziggurat: ~1.02 per exponential)


def _grid_t() -> np.ndarray:
    """t at every cell boundary of the table (float64 bit patterns _I_LO << _SHIFT, ...)."""
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
    """Standardized x(t) at the grid's cell boundaries: the max of ``healthy`` N(0,1) and ``slow``
    N(shift, 1) draws at the quantile u = exp(-t)."""
    t = _grid_t()
    ends = []
    for m, off in ((healthy, 0.0), (slow, shift)):
        if m:
            ends += [off + _closed_max_quantile(m, t[0]), off + _closed_max_quantile(m, t[-1])]
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
        size = _I_HI - _I_LO + 1
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
        """The table, its forward differences, each cell's histogram bucket, and whether the floor at the
        base step time can bind."""
        floor = bool(table.min() < self.base_us + 0.5)
        return table, np.append(np.diff(table), 0.0), self._cell_buckets(table), floor

    def _bucket(self, durations_us: np.ndarray) -> np.ndarray:
        return np.searchsorted(self.bounds, durations_us, side="left")

    def _cell_buckets(self, table: np.ndarray) -> np.ndarray:
        """The bucket of every step whose t falls in cell i, or _STRADDLE when the cell's two ends fall in
        different buckets (those few steps are classified one by one)."""
        ends = self._bucket(np.maximum(np.rint(table), self.base_us))
        out = ends.astype(np.int8)
        out[:-1][ends[:-1] != ends[1:]] = _STRADDLE
        return out

    def exponentials(self, g0: int, n: int) -> np.ndarray:
        """The Exp(1) draws of executed steps g0+1 .. g0+n."""
        out = np.empty(n)
        first = g0 // CHUNK
        for c in range(first, (g0 + n - 1) // CHUNK + 1):
            gen = generator_at(self.stream, c * _RAW_PER_CHUNK)
            lo = max(g0, c * CHUNK)  # first step index (0-based) of this chunk in the range
            hi = min(g0 + n, (c + 1) * CHUNK)
            if lo == c * CHUNK:
                gen.standard_exponential(out=out[lo - g0: hi - g0])
            else:
                out[lo - g0: hi - g0] = gen.standard_exponential(hi - c * CHUNK)[lo - c * CHUNK:]
        return out

    def durations(self, g0: int, n: int, slow_steps: int) -> tuple[np.ndarray, np.ndarray]:
        """Durations of executed steps g0+1 .. g0+n (the first ``slow_steps`` have the slow ranks), and the
        histogram of each block of BLOCK steps (rows; columns: buckets, then +Inf, then a spare).
        Vectorized in cache-sized chunks: this is the engine's per-step cost."""
        t = self.exponentials(g0, n)
        out = np.empty(n, dtype=np.int64)
        hists = np.zeros((-(-n // BLOCK), _STRADDLE + 1), dtype=np.int64)
        bits = t.view(np.int64)
        for c, lo in enumerate(range(0, n, BLOCK)):
            hi = min(n, lo + BLOCK)
            b = bits[lo:hi]
            cell = b >> _SHIFT
            frac = (b & ((1 << _SHIFT) - 1)).astype(np.float64)
            frac *= 1.0 / (1 << _SHIFT)  # position inside the cell, linear in t
            cell -= _I_LO
            # t outside [2**-64, 2**7) (probability < 1e-19 per step) stays within the end cells
            np.maximum(cell, 0, out=cell)
            np.minimum(cell, _I_HI - _I_LO - 1, out=cell)
            cut = min(max(slow_steps - lo, 0), hi - lo)
            for a, z, (table, delta, cells, floor) in ((0, cut, self.slow), (cut, hi - lo, self.healthy)):
                if z <= a:
                    continue
                ii = cell[a:z]
                x = delta[ii]
                x *= frac[a:z]
                x += table[ii]
                np.rint(x, out=x)
                if floor:
                    np.maximum(x, self.base_us, out=x)
                out[lo + a: lo + z] = x
                bucket = cells[ii]
                hists[c] += np.bincount(bucket, minlength=_STRADDLE + 1)
                straddling = np.flatnonzero(bucket == _STRADDLE)
                if len(straddling):
                    hists[c, _STRADDLE] -= len(straddling)
                    hists[c, :_STRADDLE] += np.bincount(self._bucket(out[lo + a + straddling]),
                                                        minlength=_STRADDLE)
        return out, hists

    def histogram_of(self, durations: np.ndarray, hists: np.ndarray, count: int) -> np.ndarray:
        """Histogram (buckets, then +Inf) of the first ``count`` steps of a ``durations`` result."""
        full = count // BLOCK
        total = hists[:full, :_STRADDLE].sum(axis=0)
        if count % BLOCK:
            total = total + np.bincount(self._bucket(durations[full * BLOCK: count]), minlength=_STRADDLE)
        return total
