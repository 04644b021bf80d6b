"""The trace's buffer, as the loop fills it (simd.engine.trace reads it back as Events)."""

from __future__ import annotations

from simd.engine.jit import njit


@njit()
def record(trace, t, kind, arg):
    """Append event ``(t, kind, arg)`` to ``trace`` = (rows, counter), or nothing when it has no rows (the untraced
    calls: loopcall.call's, crn.py's). The counter counts every event, also those the rows could not hold."""
    rows, n = trace
    i = n[0]
    if i < rows.shape[0]:
        rows[i, 0] = t
        rows[i, 1] = kind
        rows[i, 2] = arg
    n[0] = i + 1
