"""The kernel's trace: the interruptions and SDC verdicts of a run, as rows an optional buffer collects.

``core.advance(..., trace=True)`` hands the compiled loop (loop.advance_all) a buffer, an int64 array of rows
``(t_us, kind, arg)``, and a one-element counter; at each event the loop calls kernel.record.record (this module
stays free of numba: importing the engine does not import the compiler). Without a buffer
(``trace`` None, every other caller) numba prunes the branch at compile time, so a run that is not traced pays
nothing. The counter counts every event, also those that did not fit: the caller sees the buffer was too small
and runs the call again from the same state with a buffer of that size (the loop is a pure function of its
arguments, so the second run is the first one, recorded whole).

``arg``: the cause's index (an interruption), the detector's index (a committed SDC found by a detector),
:data:`SHADOW` (a shadow disagreement), :data:`NONE` (validation, a checkpoint or the job's end).
"""

from __future__ import annotations

import numpy as np

from simd.engine.results import Event
from simd.engine.spec import Plan

# Event.kind by code; the codes are what the kernel writes
KINDS = ("interruption", "sdc_detected", "sdc_late_found", "sdc_unrecoverable", "sdc_baked")
INTERRUPTION, SDC_DETECTED, SDC_LATE_FOUND, SDC_UNRECOVERABLE, SDC_BAKED = range(len(KINDS))
NONE, SHADOW = -1, -2
FIRST_ROWS = 256  # a first buffer's rows: a day of a large job's events; more when a call needs them


def buffer(rows: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """An empty buffer of ``rows`` rows (FIRST_ROWS by default) and its counter."""
    return np.zeros((rows or FIRST_ROWS, 3), dtype=np.int64), np.zeros(1, dtype=np.int64)


def overflowed(trace: tuple[np.ndarray, np.ndarray]) -> bool:
    """Whether events were counted that the rows could not hold."""
    return int(trace[1][0]) > trace[0].shape[0]


def events(plan: Plan, trace: tuple[np.ndarray, np.ndarray]) -> list[Event]:
    """The recorded rows as Events, in order; the buffer is emptied."""
    rows, n = trace
    out = []
    for t, kind, arg in rows[: int(n[0])].tolist():
        if kind == INTERRUPTION:
            cause = plan.cause_names[arg]
        elif arg == SHADOW:
            cause = "shadow"
        elif arg >= 0:
            cause = plan.detector_names[arg]
        else:
            cause = ""
        out.append(Event(t, KINDS[kind], cause))
    n[0] = 0
    return out
