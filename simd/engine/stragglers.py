"""Step durations under stragglers: a synchronous step lasts as long as its slowest rank (seed 001, scen. 4).

Rank times are ``base + N(0, jitter^2)`` for the ``n - k`` healthy ranks and ``base * slowdown +
N(0, jitter^2)`` for the ``k`` slow ones; the step is the maximum over all ranks, never below ``base``
(the base step time is the fastest a step can be). The maximum of independent normals has the closed-form
CDF ``F(x) = Phi((x - base)/jitter)^(n-k) * Phi((x - base*slowdown)/jitter)^k``, so one random number per
step is enough, with no work proportional to the number of ranks: with ``t ~ Exp(1)`` and ``u = exp(-t)``
uniform, the step is ``F^-1(exp(-t))``.

``x(u) = F^-1(u)`` is tabulated once per configuration on a pseudo-logarithmic grid, in two halves: for
u < 1/2 in v = u, for u >= 1/2 in |v| = 1 - u, each binary octave of |v| in [2^-64, 1/2] split into 2**10
equal cells. A step draws r uniform in [0, 1) and sets v = r - 1/2 (exact): v >= 0 stands for u = v and
v < 0 for u = 1 + v, so the sign of v picks the half and its magnitude is the distance to the tail. The cell
is v's bit pattern shifted right (sign, exponent, top mantissa bits: no logarithm, exponential or branch per
step) and indexes the tables directly (the layout is described at ``_NEG``); linear interpolation inside a
cell is exact to about 1e-7 of the jitter (0.05 us for 0.5 s of jitter), under the engine's 1 us resolution.
Tests compare against the exact ``base + jitter * Phi^-1(u^(1/n))``. The uniforms have 53 bits, so the
distribution is exact down to tail probabilities of 2^-53 per step. The table is built by evaluating
``log(-log F(x))`` on a fine grid of x (F in closed form) and inverting it by interpolation.

Step ``g`` (the g-th executed step since the simulation started) uses uniform number ``g - 1`` of the
"straggler" stream (PCG64DXSM jumps straight to it): durations are a pure function of ``g``, so tick-size
invariance holds.

What a step costs, measured, and what was tried to make it cheaper: docs/engine.md, "Stragglers".
"""

from __future__ import annotations

import math
from functools import lru_cache
from typing import NamedTuple

import numpy as np

from simd.engine.streams import generator_at
from simd.models.straggler import norm_ppf

# Histogram buckets of the simulated step time, as multiples of the base step time.
BUCKET_FACTORS = (1.0, 1.01, 1.02, 1.05, 1.1, 1.15, 1.2, 1.3, 1.5, 2.0)
_STRADDLE = len(BUCKET_FACTORS) + 1  # marks a cell that straddles a bucket bound (one past +Inf)

MANTISSA_BITS = 10  # cells per octave of v: 2**10
_SHIFT = 52 - MANTISSA_BITS
V_LO_EXP = -64  # |v| in [2**-64, 2**-1]: every nonzero |v| (at least 2**-53) falls in the grid
_I_LO = (1023 + V_LO_EXP) << MANTISSA_BITS
_I_HI = (1023 - 1) << MANTISSA_BITS  # the bit pattern of v = 1/2
_CELLS = _I_HI - _I_LO  # per half
BLOCK = 1 << 16  # steps per pass of the table lookup (2**14 .. 2**16 measured: 2**16 fastest)


def _grid_v() -> np.ndarray:
    """v at every cell boundary of one half of the table: 2**-64 .. 1/2."""
    return (np.arange(_I_LO, _I_HI + 1, dtype=np.int64) << _SHIFT).view(np.float64)


def _log_cdf(z: np.ndarray) -> np.ndarray:
    """log Phi(z), accurate in both tails (math.erfc, and log1p where Phi is near 1)."""
    from simd.engine.stepkernel import erfc_into  # compiled: the kernels' module, loaded when tables are built

    half_tail = np.empty(len(z), dtype=np.float64)
    erfc_into(np.abs(z) / math.sqrt(2.0), half_tail)
    half_tail *= 0.5
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


class _Lines(NamedTuple):
    """Per-cell lines ``x = a + b * v`` in the signed v of ``StepTimes.durations``, indexed by v's bit
    pattern shifted right by _SHIFT (see _layout); ``cells``: each cell's histogram bucket or _STRADDLE."""
    a: np.ndarray
    b: np.ndarray
    cells: np.ndarray
    floor: bool  # whether the floor at the base step time can bind


# Table layout. v = r - 1/2 for a uniform r in [0, 1): v >= 0 stands for u = v (the lower half of F^-1), v < 0
# for u = 1 + v (the upper half; both exact in floating point). The bit pattern of a float64 v, read as an
# unsigned integer and shifted right by _SHIFT, is its exponent and top MANTISSA_BITS mantissa bits, with the
# sign above them: |v| in [2**-64, 1/2] gives indices _I_LO .. _I_HI for v >= 0 and _NEG + (_I_LO .. _I_HI)
# for v < 0, and v = +0.0 (r = 1/2 exactly, u = 0) gives index 0. The tables are indexed by that number
# directly, so the per-step work is one subtraction and one shift: no folding, no offset. Indices in between
# are never produced (r has 53 bits, so a nonzero |v| is at least 2**-53); those entries are zeros that are
# never written or read, so the operating system never backs them with memory (measured: 5.4 MB resident
# of the 53 MB reserved per table set; table sets are shared by every job with the same parameters).
_NEG = 1 << (63 - _SHIFT)
_TABLE_LEN = _NEG + _I_HI + 1


def _layout(values: np.ndarray, at_zero, dtype) -> np.ndarray:
    """One array over the whole index range, from per-half values (lower half, then upper half) and the
    value for v = +0.0 (u = 0, probability 2**-53: the grid's lower end, a constant line)."""
    out = np.zeros(_TABLE_LEN, dtype=dtype)
    out[_I_LO:_I_HI + 1] = values[:_CELLS + 1]
    out[_NEG + _I_LO:] = values[_CELLS + 1:]
    out[0] = at_zero
    out.flags.writeable = False  # shared by every job with the same parameters (_lines is cached)
    return out


@lru_cache(maxsize=32)
def _lines(n_gpus: int, slow: int, base_us: int, jitter_us: float, slowdown: float) -> _Lines:
    """The lines and cell buckets of F^-1 for ``slow`` of ``n_gpus`` ranks slowed by ``slowdown``."""
    if jitter_us > 0:
        x = base_us + jitter_us * quantile_table(n_gpus - slow, slow, base_us * (slowdown - 1.0) / jitter_us)
    else:  # no jitter: every step takes exactly the slowest rank's time
        x = np.full(2 * (_CELLS + 1), float(round(base_us * slowdown)) if slow else float(base_us))
    v = _grid_v()
    halves = (x[:_CELLS + 1], x[_CELLS + 1:])
    # each cell's slope; the last boundary of a half (|v| = 1/2) gets a constant line
    b = np.concatenate([np.append(np.diff(half) / np.diff(v), 0.0) for half in halves])
    a = x - b * np.concatenate((v, v)) + 0.5  # +0.5: truncating to integer microseconds then rounds
    b[_CELLS + 1:] *= -1.0  # the upper half runs in |v| = -v
    bounds = bucket_bounds(base_us)
    buckets = np.concatenate([_cell_buckets(half, base_us, bounds) for half in halves])
    return _Lines(_layout(a, x[0] + 0.5, np.float64), _layout(b, 0.0, np.float64),
                  _layout(buckets, buckets[0], np.int8), bool(x.min() < base_us + 0.5))


def bucket_bounds(base_us: int) -> np.ndarray:
    """The histogram's upper bounds in integer microseconds."""
    return np.array([round(base_us * f) for f in BUCKET_FACTORS], dtype=np.int64)


def bucket_of(bounds: np.ndarray, durations_us: np.ndarray) -> np.ndarray:
    """The histogram bucket (0 .. len(bounds), the last one +Inf) of each duration."""
    return np.searchsorted(bounds, durations_us, side="left")


def _cell_buckets(half: np.ndarray, base_us: int, bounds: np.ndarray) -> np.ndarray:
    """The bucket of every step in cell i of one half, or _STRADDLE when the cell's two ends fall in different
    buckets (those few steps are classified one by one)."""
    ends = bucket_of(bounds, np.maximum(np.floor(half + 0.5), base_us))
    out = ends.astype(np.int8)
    out[:-1][ends[:-1] != ends[1:]] = _STRADDLE
    return out


class StepTimes:
    """Durations (integer microseconds) of executed steps for one job specification."""

    def __init__(self, n_gpus: int, base_us: int, jitter_us: float, slow_ranks: int, slowdown: float,
                 stream: dict):
        self.base_us, self.stream = base_us, stream
        k = min(slow_ranks, n_gpus) if slowdown > 1.0 else 0
        self.bounds = bucket_bounds(base_us)
        self.healthy = _lines(n_gpus, 0, base_us, float(jitter_us), 1.0)
        self.slow = _lines(n_gpus, k, base_us, float(jitter_us), float(slowdown)) if k else self.healthy
        self._kernel_args = None

    def uniforms(self, g0: int, n: int) -> np.ndarray:
        """The u in [0, 1) of executed steps g0+1 .. g0+n (the step is F^-1(u)): r + 1/2 modulo 1."""
        v = generator_at(self.stream, g0).random(n) - 0.5
        return np.where(v >= 0.0, v, 1.0 + v)

    def kernel_args(self) -> tuple:
        """The stream and both tables as the compiled kernels (stepkernel.py) take them."""
        if self._kernel_args is None:
            from simd.engine.pcg import words

            h, s = self.healthy, self.slow
            self._kernel_args = (words(self.stream), (h.a, h.b, h.cells, h.floor, s.a, s.b, s.cells, s.floor,
                                                      self.base_us, self.bounds))
        return self._kernel_args

    def durations(self, g0: int, n: int, slow_steps: int) -> tuple[np.ndarray, np.ndarray]:
        """Durations of executed steps g0+1 .. g0+n (the first ``slow_steps`` have the slow ranks), and each
        step's histogram bucket (0 .. len(BUCKET_FACTORS), the last one +Inf). Compiled (stepkernel.fill),
        equal to ``durations_numpy``."""
        from simd.engine import stepkernel

        w, tables = self.kernel_args()
        out, buckets = np.empty(n, dtype=np.int64), np.empty(n, dtype=np.int8)
        stepkernel.fill(w, g0, n, min(max(slow_steps, 0), n), *tables, out, buckets)
        return out, buckets

    def fit(self, g0: int, a: int, b: int, budget_us: int, plan, slow_steps: int) -> tuple[int, int, np.ndarray]:
        """Job steps a+1 .. b from executed step g0+1 on (each with its checkpoint and validation pause of
        ``plan``) while they take at most ``budget_us``: (m, their summed durations, their histogram).
        Each step is drawn once (stepkernel.fit)."""
        from simd.engine import stepkernel

        w, tables = self.kernel_args()
        hist = np.zeros(_STRADDLE, dtype=np.int64)
        m, total = stepkernel.fit(w, g0, a, b, budget_us, plan.ckpt_every, plan.ckpt_us, plan.val_every,
                                  plan.val_us, min(max(slow_steps, 0), b - a), *tables, hist)
        return int(m), int(total), hist

    def durations_numpy(self, g0: int, n: int, slow_steps: int) -> tuple[np.ndarray, np.ndarray]:
        """``durations`` with numpy alone: the reference the compiled kernels are tested against.
        Vectorized in blocks, every pass writing into preallocated arrays (the module docstring gives the
        parts of its per-step cost)."""
        out = np.empty(n, dtype=np.int64)
        buckets = np.empty(n, dtype=np.int8)  # each step's histogram bucket (histogram_of)
        gen = generator_at(self.stream, g0)
        m = min(n, BLOCK)
        v, cell, x, y = np.empty(m), np.empty(m, dtype=np.int64), np.empty(m), np.empty(m)
        for lo in range(0, n, BLOCK):
            hi = min(n, lo + BLOCK)
            vv, cc = v[: hi - lo], cell[: hi - lo]
            gen.random(out=vv)
            vv -= 0.5  # exact: v >= 0 means u = v, v < 0 means u = 1 + v
            np.right_shift(vv.view(np.uint64), _SHIFT, out=cc.view(np.uint64))  # the table index (_layout)
            cut = min(max(slow_steps - lo, 0), hi - lo)
            for a, z, lines in ((0, cut, self.slow), (cut, hi - lo, self.healthy)):
                if z <= a:
                    continue
                ii, xx, yy = cc[a:z], x[a:z], y[a:z]
                # mode="clip" only selects numpy's unbuffered gather; every index is in range (_layout)
                np.take(lines.b, ii, out=xx, mode="clip")
                xx *= vv[a:z]
                np.take(lines.a, ii, out=yy, mode="clip")
                xx += yy
                if lines.floor:
                    np.maximum(xx, self.base_us, out=xx)
                out[lo + a: lo + z] = xx  # truncates: the table carries +0.5, so this rounds
                bucket = buckets[lo + a: lo + z]
                np.take(lines.cells, ii, out=bucket, mode="clip")
                straddling = np.flatnonzero(bucket == _STRADDLE)
                if len(straddling):
                    bucket[straddling] = bucket_of(self.bounds, out[lo + a + straddling])
        return out, buckets

    @staticmethod
    def histogram_of(durations: np.ndarray, buckets: np.ndarray, count: int) -> np.ndarray:
        """Histogram (buckets, then +Inf) of the first ``count`` steps of a ``durations`` result."""
        return np.bincount(buckets[:count], minlength=_STRADDLE)


def _readonly(a: np.ndarray) -> np.ndarray:
    a.flags.writeable = False
    return a


# A plan without stragglers passes placeholder tables, read-only like the real ones: numba compiles a kernel once
# per argument type, and a writable array is another type than a read-only one (one more compile of the largest
# kernels, ~8 s each on a fresh machine).
_NO_TABLES = (_readonly(np.zeros(1)), _readonly(np.zeros(1)), _readonly(np.zeros(1, dtype=np.int8)), False,
              _readonly(np.zeros(1)), _readonly(np.zeros(1)), _readonly(np.zeros(1, dtype=np.int8)), False, 0,
              np.zeros(1, dtype=np.int64))  # the bucket bounds, writable as bucket_bounds makes them


def kernel_tables(step_times: StepTimes | None) -> tuple:
    """The step-time tables the kernels take (stepkernel.draw's: healthy and slow ranks, base, bucket bounds);
    placeholders of the same types without stragglers (None)."""
    return _NO_TABLES if step_times is None else step_times.kernel_args()[1]
