"""The straggler step sampler (stragglers.py), compiled: each executed step's duration and histogram bucket in
one pass over the steps, with no array per step unless one is asked for.

Bit for bit the numpy path (``StepTimes.durations_numpy``, the reference the tests compare against): the
same PCG64DXSM stream (pcg.py), ``v = r - 1/2``, the table index from v's bit pattern, ``x = b[i] * v + a[i]``
as two separate float64 operations (numba does not fuse them into an FMA without fastmath), the floor at the
base step time, truncation to integer microseconds, and the bucket from the cell or, for a cell that
straddles a bound, by counting the bounds below the duration (``searchsorted(side="left")``).

A table is ``(a, b, cells, floor)`` as in stragglers._Lines; ``slow`` steps at the start of a range use the
slow ranks' table. Kernels take the stream as pcg.words and find step ``g0 + 1``'s draw (number ``g0``) by
jumping ahead: O(log g0), about 0.1 us, instead of numpy's per-call generator set-up.
"""

from __future__ import annotations

import math

import numpy as np

from simd.engine.hazard import NEVER
from simd.engine.jit import njit
from simd.engine.pcg import dxsm_next, float_bits, pcg64_next, seek, to_double

SHIFT = np.uint64(42)  # stragglers._SHIFT: 52 - MANTISSA_BITS
STRADDLE = 11  # stragglers._STRADDLE: len(BUCKET_FACTORS) + 1


@njit()
def draw(sh, sl, ih, il, dx, a, b, cells, floor, base, bounds):
    """One step from state (sh, sl) of a PCG64DXSM (``dx``, the engine's straggler streams) or PCG64 stream:
    (new state, duration in us, histogram bucket)."""
    if dx:
        sh, sl, x = dxsm_next(sh, sl, ih, il)
    else:
        sh, sl, x = pcg64_next(sh, sl, ih, il)
    v = to_double(x) - 0.5
    i = float_bits(v) >> SHIFT
    y = b[i] * v
    y = y + a[i]
    if floor and y < base:
        y = np.float64(base)
    d = np.int64(y)
    k = np.int64(cells[i])
    if k == STRADDLE:
        k = 0
        while k < len(bounds) and bounds[k] < d:
            k += 1
    return sh, sl, d, k


@njit()
def fill(w, g0, n, slow, ha, hb, hc, hf, sa, sb, sc, sf, base, bounds, out, buckets):
    """Durations and buckets of steps g0+1 .. g0+n into ``out`` and ``buckets`` (the first ``slow`` steps with
    the slow table)."""
    sh, sl = seek(w, g0)
    ih, il, dx = w[2], w[3], w[4] == np.uint64(1)
    for j in range(n):
        if j < slow:
            sh, sl, d, k = draw(sh, sl, ih, il, dx, sa, sb, sc, sf, base, bounds)
        else:
            sh, sl, d, k = draw(sh, sl, ih, il, dx, ha, hb, hc, hf, base, bounds)
        out[j] = d
        buckets[j] = k


FITTED, CUT, DUE = 0, 1, 2  # how ``run`` ended


@njit()
def run(sh, sl, ih, il, dx, a, b, budget, period, offset, ckpt_us, val_every, val_us, slow, extra_us, due,
        ha, hb, hc, hf, sa, sb, sc, sf, base, bounds, hist, slow_ppm=0, write_left=NEVER, mem_every=0, mem_us=0):
    """From generator state (sh, sl), job steps a+1 .. b, each with its checkpoint (on the lattice offset + k *
    period) and validation pause and ``extra_us`` (shadow ranks' overhead), while their time stays within
    ``budget`` (us), the first ``slow`` with the slow table; each step of compute d also lasts
    ``d * slow_ppm // 10**6`` more (a save's write it overlaps). Returns (state after the last draw, m, the time
    used, the summed durations of steps a+1 .. m, how it ended, the duration and bucket of the step drawn last,
    the summed slowdowns of steps a+1 .. m, the time used by the end of the newest memory tier's save among steps
    a+1 .. m: -1 if none) and adds the counted steps to ``hist``. It ends FITTED at m = b; CUT
    when step m+1 does not fit (drawn, not counted); DUE when step m+1's compute ends at or after ``due`` (us from
    the start: a detector's finding comes with it, loop.py) or when its end, its validation included, reaches
    ``write_left`` (a save's write ends in it): drawn, not counted. A memory tier's save (every ``mem_every``
    steps, 0: none) adds ``mem_us`` to a step that is not a checkpoint point (quiet.stretch)."""
    # the state as uint64 whoever calls: a Python int below 2**63 would be typed int64, and the generator's
    # shifts would then be arithmetic (wrong draws, table indices out of range)
    sh, sl, ih, il = np.uint64(sh), np.uint64(sl), np.uint64(ih), np.uint64(il)
    used = 0
    total = 0
    xsum = 0
    tsave = -1
    m = a
    how = FITTED
    d, k = 0, 0
    # the next checkpoint and validation points after a (counters: a 64-bit division per step costs more
    # than the rest of the step)
    next_c = offset + ((a - offset) // period + 1) * period
    next_v = (a // val_every + 1) * val_every if val_every else -1
    next_m = (a // mem_every + 1) * mem_every if mem_every else -1
    while m < b:
        if m - a < slow:
            sh, sl, d, k = draw(sh, sl, ih, il, dx, sa, sb, sc, sf, base, bounds)
        else:
            sh, sl, d, k = draw(sh, sl, ih, il, dx, ha, hb, hc, hf, base, bounds)
        x = d * slow_ppm // 1000000 if slow_ppm else 0  # (no division per step without a write)
        if used + d + x + extra_us >= due:
            how = DUE
            break
        q = m + 1
        cost = d + x + extra_us
        saves = False  # the step ends with a memory tier's save
        if q == next_c:
            cost += ckpt_us
            next_c += period
        elif q == next_m:
            cost += mem_us
            saves = True
        if q == next_m:
            next_m += mem_every
        if q == next_v:
            cost += val_us
            next_v += val_every
        if used + cost >= write_left:
            how = DUE
            break
        if used + cost > budget:
            how = CUT
            break
        used += cost
        total += d
        xsum += x
        hist[k] += 1
        m = q
        if saves:
            tsave = used
    return sh, sl, m, used, total, how, d, k, xsum, tsave


@njit()
def fit(w, g0, a, b, budget, ckpt_every, ckpt_us, val_every, val_us, slow,
        ha, hb, hc, hf, sa, sb, sc, sf, base, bounds, hist):
    """``run`` from executed step g0+1 on (stream ``w``): (m, the summed durations of steps a+1 .. m)."""
    sh, sl = seek(w, g0)
    sh, sl, m, used, total, how, d, k, x, _ = run(sh, sl, w[2], w[3], w[4] == np.uint64(1), a, b, budget, ckpt_every, 0,
                                            ckpt_us, val_every, val_us, slow, 0, NEVER, ha, hb, hc, hf, sa, sb, sc,
                                            sf, base, bounds, hist)
    return m, total


@njit()
def erfc_into(x, out):
    """``out[i] = math.erfc(x[i])``: the straggler tables' tails (stragglers._log_cdf), the same doubles as the
    standard library's (both libm's erfc; tests compare them) ~10x faster than calling it from numpy."""
    for i in range(x.shape[0]):
        out[i] = math.erfc(x[i])
