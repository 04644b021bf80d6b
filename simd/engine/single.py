"""The segment walk compiled for one replica: core.advance's fast path where it would run walk.segment.

replkernel.py runs walk.segment's logic statement for statement over arrays of replicas; here one State is
put into its one-row arrays (R = 1), the kernel advances it, and the State comes back out. The job ends the
Python walk reports as events (``Event(t, "job_end", job=JobResult)``, what ``simd simulate`` and the daemon
read) are recovered by letting the kernel stop at each job's end (its ``max_jobs`` cut, which leaves the state
exactly where the walk is then) and building the JobResult from the counters as work.Work.end_job does.

Promises: ``advance(state, until, max_jobs)`` equals ``core.advance(state, until, max_jobs=max_jobs, vectorize=False,
compiled=False)`` (the Python walk, the reference) for every plan ``handles`` accepts, state and events bit
for bit (tests/engine/test_single.py compares them over seeds, plans and cuts of time); it produces no
interruption or SDC events, so core.advance keeps ``trace=True`` on the Python walk.

Cost per call: packing one State into small arrays and back (a few microseconds), one kernel call per job
that ends in the call plus one; no Python per event or per step.
"""

from __future__ import annotations

from dataclasses import fields
from itertools import chain
from operator import attrgetter, itemgetter

import numpy as np

from simd.engine.results import Event, job_result
from simd.engine.spec import Plan
from simd.engine.state import State, Totals

_TOTALS = tuple(f.name for f in fields(Totals))
_KEY = "_single_kernel"  # the plan's kernel arguments, cached on the (immutable) plan as replicas.py does


class _Args:
    """What the kernel reads of a plan, as it takes it, and where each Totals field sits in the totals row."""

    def __init__(self, plan: Plan, example: Totals):
        from simd.engine import replkernel as k
        from simd.engine.replplan import _COUNTERS, _plan_ints, _stops, _tables, _words, batchable

        self.ok = batchable(plan)
        if not self.ok:
            return
        self.kernel = k.advance_all
        self.k = k
        # the totals row: the scalar counters in Totals' field order, then each tuple's entries (any order does:
        # ``col`` tells the kernel where its counters are); getters in C (operator) pack and unpack a row
        scalars = [n for n in _TOTALS if not isinstance(getattr(example, n), tuple)]
        tuples = [n for n in _TOTALS if isinstance(getattr(example, n), tuple)]
        where: dict[str, int | slice] = {n: i for i, n in enumerate(scalars)}
        i = len(scalars)
        for n in tuples:
            width = len(getattr(example, n))
            where[n] = slice(i, i + width)
            i += width
        self.width = i
        self.scalars_of, self.tuples_of = attrgetter(*scalars), attrgetter(*tuples)
        self.fields_of_row = itemgetter(*(where[n] for n in _TOTALS))  # a row (a tuple) -> the fields in order
        start = {n: w if isinstance(w, int) else w.start for n, w in where.items()}
        self.col = np.array([start.get(n, -1) for n in _COUNTERS], dtype=np.int64)
        self.jobs_col = start["jobs_completed"]
        self.exec_col = start["steps_executed"]
        self.hist_width = len(example.step_hist)  # the kernel's per-call histogram scratch: one entry a bucket
        # the kernel's arguments as the batch over replicas builds them (R = 1); plan_i's max_jobs is set per call
        self.words = _words(plan)[None]
        self.log1m = np.array([plan.hard_log1m, plan.sdc_log1m])
        self.plan_i = _plan_ints(plan, None)
        cum, detect, restart = _stops(plan)
        self.stops = (np.asarray(cum, dtype=np.float64), np.asarray(detect, dtype=np.int64),
                      np.asarray(restart, dtype=np.int64))
        self.tables = _tables(plan)

    def row(self, t: Totals) -> list[int]:
        return [*self.scalars_of(t), *chain.from_iterable(self.tuples_of(t))]

    def totals(self, row: tuple[int, ...]) -> Totals:
        d = dict(zip(_TOTALS, self.fields_of_row(row), strict=True))
        t = Totals.__new__(Totals)  # the fields as Totals(**d) sets them, without the frozen __init__'s cost
        t.__dict__.update(d)
        return t


def _args(plan: Plan, example: Totals) -> _Args:
    a = plan.__dict__.get(_KEY)
    if a is None:
        a = plan.__dict__[_KEY] = _Args(plan, example)
    return a


def handles(state: State) -> bool:
    """Whether the kernel has every mechanism the state's plan uses (replicas.batchable)."""
    return _args(state.plan, state.totals).ok


def advance(state: State, until_us: int, max_jobs: int | None) -> tuple[State, list[Event]]:
    """core.advance without trace on the compiled walk (see the module docstring); ``until_us >= state.clock``."""
    plan = state.plan
    a = _args(plan, state.totals)
    k = a.k
    pos = np.array([[state.clock, state.t, state.g, state.step, state.last_ckpt, state.corrupted, state.pending_us,
                     *state.hard, *state.sdc, state.job_start_g, state.job_start_t]], dtype=np.int64)
    tot = np.array([a.row(state.totals)], dtype=np.int64)
    start = np.empty_like(tot)  # the kernel's copy of the totals at a job's end (rebuilt here from ``tot``)
    plan_i = a.plan_i.copy()  # per call: its max_jobs entry is this call's
    hist = np.zeros(a.hist_width, dtype=np.int64)
    cum, det, rst = a.stops
    events: list[Event] = []
    job_start, now = state.job_start, None
    while True:
        jobs = int(tot[0, a.jobs_col])
        # stop at the next job's end (to report it), or at max_jobs in total as core.advance does
        plan_i[k.P_MAX_JOBS] = jobs + 1 if max_jobs is None else min(jobs + 1, max_jobs)
        job_t = int(pos[0, k.JOB_T])
        a.kernel(until_us, pos, tot, start, a.words, a.log1m, plan_i, a.col, cum, det, rst, *a.tables, hist)
        if int(tot[0, a.jobs_col]) == jobs:  # until reached (or max_jobs already complete): done
            now = None
            break
        now = a.totals(tuple(tot[0].tolist()))
        t = int(pos[0, k.T])
        events.append(Event(t, "job_end", job=job_result(plan, now.minus(job_start), jobs, t - job_t)))
        job_start = now
        if max_jobs is not None and jobs + 1 >= max_jobs:  # (a further call would stop at once)
            break
    p = pos[0].tolist()
    d = state.__dict__.copy()  # the fields the kernel moves are all set anew below
    d.update(clock=p[k.CLOCK], t=p[k.T], g=p[k.G], step=p[k.STEP], last_ckpt=p[k.LAST], corrupted=bool(p[k.CORRUPTED]),
             pending_us=p[k.PENDING], hard=(p[k.HARD_I], p[k.HARD_P]), sdc=(p[k.SDC_I], p[k.SDC_P]),
             job_start_g=p[k.JOB_G], job_start_t=p[k.JOB_T],
             totals=now if now is not None else a.totals(tuple(tot[0].tolist())), job_start=job_start)
    out = State.__new__(State)  # as dataclasses.replace builds it, minus the frozen __init__'s cost
    out.__dict__.update(d)
    return out, events
