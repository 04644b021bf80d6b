"""The random streams inside the loop (the draws are specified in simd.engine.loop's docstring).

A stream is a row of ``words`` (pcg.py: its state and increment, and which generator); a generator's state is a
pair of uint64 (high, low) the loop carries.
"""

from __future__ import annotations

import math

import numpy as np

from simd.engine import pcg
from simd.engine.jit import njit

GAP_CAP = float(1 << 50)  # streams._GAP_CAP


@njit()
def uniform(w, sh, sl):
    """One draw of stream ``w`` (PCG64 or PCG64DXSM) from state (sh, sl): the new state, the uniform in (0, 1]."""
    if w[4] == np.uint64(1):
        sh, sl, x = pcg.dxsm_next(sh, sl, w[2], w[3])
    else:
        sh, sl, x = pcg.pcg64_next(sh, sl, w[2], w[3])
    return sh, sl, 1.0 - pcg.to_double(x)


@njit()
def gap_of(u, log1m):
    """The geometric gap of uniform ``u`` in (0, 1] (streams.gaps: ``ceil(log(u) / log1m)`` in [1, 2**50])."""
    gap = math.ceil(math.log(u) / log1m)
    if gap < 1.0:
        gap = 1.0
    elif gap > GAP_CAP:
        gap = GAP_CAP
    return np.int64(gap)


@njit()
def gap(w, sh, sl, log1m):
    """The stream's next geometric gap (streams.gaps for one draw)."""
    sh, sl, u = uniform(w, sh, sl)
    return sh, sl, gap_of(u, log1m)


@njit(inline="always")  # (a call on the loop's path of every event: +15-20% per event, bench/README.md)
def past(w, sh, sl, index, at, g, log1m):
    """A point set's stream (``w`` at (sh, sl); its element ``index`` at executed step ``at``) advanced to its first
    element after step ``g``: (sh, sl, index, at) then."""
    while at <= g:
        sh, sl, d = gap(w, sh, sl, log1m)
        index += 1
        at += d
    return sh, sl, index, at


@njit()
def bucket(cum, u):
    """``min(searchsorted(cum, u, "left"), len(cum) - 1)``."""
    k = 0
    while k < len(cum) - 1 and cum[k] < u:
        k += 1
    return k
