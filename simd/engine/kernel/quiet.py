"""The quiet steps before the loop's next event: their time and how many fit a budget.

Quiet steps (no failure, no onset, no SDC met) step + 1 .. m each take the step time (shadow overhead included),
plus a checkpoint on every point of the lattice (period, offset), a memory tier's save on every multiple of M
that is not one (a persistent checkpoint stands for it there) and a validation on every multiple of V among them.
The lattice's points that are multiples of M: all of them on the persistent checkpoint's own lattice (M divides
the period, the offset 0), else those of one residue r modulo L = lcm(period, M) (``coinciding``: a hyper window's
lattice, hyper.py). Under stragglers their durations are drawn (stepkernel.run); on a sweep's
shared window (crn.py) they are read from prefix sums (``counts``: their histogram buckets).
"""

from __future__ import annotations

import numpy as np

from simd.engine.jit import njit

# The prefix path (crn.py): cumulative bucket counts are kept every PREFIX_STRIDE executed steps, the steps in
# between counted from their buckets (at most PREFIX_STRIDE - 1 one-byte reads per end of a stretch, against
# 1.4 bytes per step for the rows of counts: 11 int64 every 64 steps).
PREFIX_STRIDE = 64


@njit()
def coinciding(period, offset, M):
    """(L, r) for the lattice (period, offset) against the multiples of M: L 0 when every point of the lattice is
    one (the persistent lattice: offset 0, M divides the period); else L = lcm(period, M) and r the least k >= 0
    that is both (-1: none), so the points that are multiples of M are those of residue r modulo L."""
    if offset % M == 0 and period % M == 0:
        return 0, 0
    g, x = period, M
    while x:
        g, x = x, g % x
    L = period // g * M
    for k in range(0, L, M):
        if (k - offset) % period == 0:
            return L, k
    return L, -1


@njit()
def on_both(a, m, nc, L, r):
    """How many of the lattice's nc points in a+1 .. m are multiples of M (``coinciding``'s L, r)."""
    if L == 0:
        return nc
    if r < 0:
        return 0
    return (m - r) // L - (a - r) // L


@njit()
def stretch(a, m, su, ckpt_us, V, val_us, period, offset, M=0, mem_us=0, L=0, r=0):
    """The time of quiet steps a+1 .. m: compute, the checkpoints on the lattice (period, offset), the memory
    tier's saves (every M steps, not on the lattice; M 0: none; L, r: ``coinciding``), validations."""
    nc = (m - offset) // period - (a - offset) // period
    t = (m - a) * su + nc * ckpt_us
    if V:
        t += (m // V - a // V) * val_us
    if M:
        t += (m // M - a // M - on_both(a, m, nc, L, r)) * mem_us
    return t


@njit()
def fit(a, b, budget, su, ckpt_us, V, val_us, period, offset, M=0, mem_us=0, L=0, r=0):
    """The largest m in [a, b] whose quiet stretch a+1..m takes at most ``budget`` (the stretch grows with m, so
    the answer is unique: a guess from the mean step, a short walk, a binary search if long)."""
    if budget < 0:
        return a
    mean = su + ckpt_us / period + (val_us / V if V else 0.0) + (mem_us / M if M else 0.0)
    m = min(b, a + np.int64(budget // mean))
    for _ in range(8):
        if stretch(a, m, su, ckpt_us, V, val_us, period, offset, M, mem_us, L, r) > budget:
            m -= 1
        elif m < b and stretch(a, m + 1, su, ckpt_us, V, val_us, period, offset, M, mem_us, L, r) <= budget:
            m += 1
        else:
            return m
    lo, hi = a, b
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if stretch(a, mid, su, ckpt_us, V, val_us, period, offset, M, mem_us, L, r) <= budget:
            lo = mid
        else:
            hi = mid - 1
    return lo


@njit()
def counts(ph, pb, p0, x, sign, hist):
    """Add ``sign`` times the bucket counts of executed steps 1 .. x to ``hist``, from a prefix window that
    starts at executed step ``p0`` (a multiple of PREFIX_STRIDE; crn.py): the row of counts at the last
    multiple of the stride, then the steps after it one by one."""
    j = x // PREFIX_STRIDE
    row = j - p0 // PREFIX_STRIDE
    for k in range(len(hist)):
        hist[k] += sign * ph[row, k]
    for y in range(j * PREFIX_STRIDE + 1, x + 1):
        hist[pb[y - p0]] += sign
