"""The compiled loop's side of a plan: one call of the kernel (loop.py) on rows of replicas (``call``), and
which replicas share a call (``_key``). Shared by core.advance (one replica) and the replicas' batch
(replicas.py); a module of its own so that core does not lead back to core through replicas.py."""

from __future__ import annotations

import numpy as np

from simd.engine.layout import TotalsLayout
from simd.engine.spec import Plan, with_seed
from simd.engine.stragglers import BUCKET_FACTORS

_NB = len(BUCKET_FACTORS) + 1  # histogram buckets, +Inf included


def _key(plan: Plan) -> tuple:
    """Everything of a plan the kernel reads except its streams (all of it is compiled from the spec, the seed
    apart): replicas with equal keys share one call."""
    k = plan.__dict__.get("_replica_key")  # cached on the (immutable) plan, as functools.cached_property does
    if k is None:
        k = plan.__dict__["_replica_key"] = (with_seed(plan.spec, 0),)
    return k


# loop.advance_all's ``budget`` without a limit (loop.BUDGET_FIELDS: the limit, then the weights)
NO_BUDGET = np.array([-1, 0, 0, 0, 0, 0], dtype=np.int64)
# loop.advance_all's ``prefix`` without steps (no window of step durations), of crn.Window.arrays' types (the
# arrays writable, as a window's are: a read-only array is another type for numba); empty, so nothing reads or
# writes them and one serves every call
NO_PREFIX = (np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int8), np.zeros((0, _NB), dtype=np.int64), 0)


def call(plan: Plan, layout: TotalsLayout, pos: np.ndarray, tot: np.ndarray, start: np.ndarray, aux: np.ndarray,
         words: np.ndarray, until: int, max_jobs: int | None, trace: tuple | None = None,
         budget: np.ndarray | None = None) -> np.ndarray:
    """One call of the compiled loop (loop.advance_all) on replicas of ``plan``: rows of the arrays laid out by
    layout.py; with ``trace`` (trace.py's buffer) on one replica, its events recorded; with ``budget``
    (loop.BUDGET_FIELDS) each row stops once its limit of work is spent. Returns each row's work."""
    from simd.engine import loop
    from simd.engine.kernel import plan as kplan

    cut = -1 if max_jobs is None else max_jobs
    arrays = (*kplan.arrays(plan, layout), np.zeros(_NB, dtype=np.int64))
    work = np.zeros(len(pos), dtype=np.int64)
    b = NO_BUDGET if budget is None else budget
    # no window of step durations (NO_PREFIX) and, untraced, a buffer without rows (its counter counts, nothing is
    # written): every call of the loop, this one's and crn.py's, traced or not, is one signature, compiled once
    loop.advance_all(until, cut, pos, tot, start, aux, words, *arrays, b, work, NO_PREFIX,
                     _no_trace() if trace is None else trace)
    return work


def _no_trace() -> tuple[np.ndarray, np.ndarray]:
    """A trace buffer that records nothing: no rows, a counter of its own (calls may run side by side)."""
    return np.zeros((0, 3), dtype=np.int64), np.zeros(1, dtype=np.int64)
