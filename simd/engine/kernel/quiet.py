"""The quiet steps before the loop's next event: their time and how many fit a budget.

Quiet steps (no failure, no onset, no SDC met) step + 1 .. m each take the step time (shadow overhead included),
plus a checkpoint on every point of the lattice (period, offset), a memory tier's save on every multiple of M
that is not one (a persistent checkpoint stands for it there: M divides the period, the offset 0) and a validation
on every multiple of V among them. Under stragglers their durations are drawn (stepkernel.run); on a sweep's
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
def stretch(a, m, su, ckpt_us, V, val_us, period, offset, M=0, mem_us=0):
    """The time of quiet steps a+1 .. m: compute, the checkpoints on the lattice (period, offset), the memory
    tier's saves (every M steps, not on the lattice; M 0: none), validations."""
    nc = (m - offset) // period - (a - offset) // period
    t = (m - a) * su + nc * ckpt_us
    if V:
        t += (m // V - a // V) * val_us
    if M:
        t += (m // M - a // M - nc) * mem_us
    return t


@njit()
def fit(a, b, budget, su, ckpt_us, V, val_us, period, offset, M=0, mem_us=0):
    """The largest m in [a, b] whose quiet stretch a+1..m takes at most ``budget`` (the stretch grows with m, so
    the answer is unique: a guess from the mean step, a short walk, a binary search if long)."""
    if budget < 0:
        return a
    mean = su + ckpt_us / period + (val_us / V if V else 0.0) + (mem_us / M if M else 0.0)
    m = min(b, a + np.int64(budget // mean))
    for _ in range(8):
        if stretch(a, m, su, ckpt_us, V, val_us, period, offset, M, mem_us) > budget:
            m -= 1
        elif m < b and stretch(a, m + 1, su, ckpt_us, V, val_us, period, offset, M, mem_us) <= budget:
            m += 1
        else:
            return m
    lo, hi = a, b
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if stretch(a, mid, su, ckpt_us, V, val_us, period, offset, M, mem_us) <= budget:
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
