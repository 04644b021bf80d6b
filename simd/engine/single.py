"""The compiled loop for one replica: core.advance's compiled path.

One State is put into one-row arrays (layout.py), the compiled loop advances it (replplan.call: xkernel.py), and
the State comes back out. The job ends are reported as events (``Event(t, "job_end", job=JobResult)``, what
``simd simulate`` and the daemon read): the kernel stops at each job's end (its ``max_jobs`` cut) and the
JobResult is built from the counters' growth over the job (results.job_result). With ``traced`` the kernel also
records the interruptions and SDC verdicts (trace.py), which come before the job's end in the events.

Cost per call: packing one State into small arrays and back (a few microseconds), one kernel call per job
that ends in the call plus one; no Python per event or per step.
"""

from __future__ import annotations

import numpy as np

from simd.engine import trace
from simd.engine.frozen import built
from simd.engine.layout import Pos, TotalsLayout, pack, state_fields, words
from simd.engine.replplan import call
from simd.engine.results import Event, job_result
from simd.engine.state import State

_KEY = "_single_layout"  # the Totals layout of the plan's states, cached on the (immutable) plan


def _layout(state: State) -> TotalsLayout:
    lay = state.plan.__dict__.get(_KEY)
    if lay is None:
        lay = state.plan.__dict__[_KEY] = TotalsLayout(state.totals)
    return lay


def advance(state: State, until_us: int, max_jobs: int | None,
            traced: bool = False) -> tuple[State, list[Event]]:
    """core.advance on the compiled loop (see the module docstring); ``until_us >= state.clock``."""
    plan = state.plan
    lay, pos, tot, ring = pack((state,), _layout(state))
    start = np.empty_like(tot)  # the kernel's copy of the totals at a job's end (rebuilt here from ``tot``)
    w = words(plan)[None]
    jobs_col = int(lay.start["jobs_completed"])
    events: list[Event] = []
    job_start, now = state.job_start, None
    rows = trace.buffer() if traced else None
    while True:
        jobs = int(tot[0, jobs_col])
        job_t = int(pos[0, Pos.job_start_t])
        # stop at the next job's end (to report it), or at max_jobs in total as core.advance does
        cut = jobs + 1 if max_jobs is None else min(jobs + 1, max_jobs)
        if rows is None:
            call(plan, lay, pos, tot, start, ring, w, until_us, cut)
        else:
            rows = _traced(plan, lay, pos, tot, start, ring, w, until_us, cut, rows)
            events += trace.events(plan, rows)
        if int(tot[0, jobs_col]) == jobs:  # until reached (or max_jobs already complete): done
            now = None
            break
        now = lay.totals(tot[0].tolist())
        t = int(pos[0, Pos.t])
        events.append(Event(t, "job_end", job=job_result(plan, now.minus(job_start), jobs, t - job_t)))
        job_start = now
        if max_jobs is not None and jobs + 1 >= max_jobs:  # (a further call would stop at once)
            break
    d = state.__dict__.copy()  # the fields the kernel moves are all set anew below
    d.update(state_fields(pos[0].tolist(), ring[0]))
    d.update(totals=now if now is not None else lay.totals(tot[0].tolist()), job_start=job_start)
    return built(State, d), events


def _traced(plan, lay, pos, tot, start, ring, w, until_us, max_jobs, rows):
    """One call with its events recorded in ``rows`` (trace.py); run again from the same state with rows enough
    when they were too few. Returns the buffer that holds them."""
    before = pos.copy(), tot.copy(), ring.copy()
    while True:
        call(plan, lay, pos, tot, start, ring, w, until_us, max_jobs, rows)
        if not trace.overflowed(rows):
            return rows
        rows = trace.buffer(int(rows[1][0]))
        for a, b in zip((pos, tot, ring), before, strict=True):
            a[...] = b
