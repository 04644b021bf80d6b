"""The trace's buffer, as the loop fills it (simd.engine.trace reads it back as Events)."""

from __future__ import annotations

from simd.engine.jit import njit


@njit()
def record(trace, t, kind, arg):
    """Append event ``(t, kind, arg)`` to ``trace`` = (rows, counter), or nothing when ``trace`` is None (a branch
    numba prunes at compile time: crn.py's calls) or has no rows (loopcall's untraced calls). The counter counts
    every event, also those the rows could not hold."""
    if trace is not None:
        rows, n = trace
        i = n[0]
        if i < rows.shape[0]:
            rows[i, 0] = t
            rows[i, 1] = kind
            rows[i, 2] = arg
        n[0] = i + 1
