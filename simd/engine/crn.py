"""Common random numbers over configurations: one seed's step durations drawn once, shared by every
configuration whose durations are the same (a sweep's grid points).

A step's duration is a pure function of the seed's straggler stream and ``g``, the executed-step index
(stragglers.py), and a replica's first job has the slow ranks in its executed steps 1 .. slow_steps. So for one
seed, every configuration with the same straggler parameters (n_gpus, the base step time, jitter, slow ranks,
slowdown, mitigation) sees the same duration at the same ``g``, whatever its checkpoint interval, recovery or
failure rates: only how far in ``g`` each one goes differs. :class:`Shared` draws the durations once into a
window of prefix sums (:class:`Window`: cumulative durations, each step's histogram bucket and the cumulative
bucket counts every kernel.quiet.PREFIX_STRIDE steps) and runs each configuration's first job against it on the
engine's kernel (loop.advance_all's prefix path): a stretch of quiet steps then costs O(1) instead of one draw per
step, and fitting steps into what is left of the time limit is a binary search.

Promises: ``Shared(specs).run(seed, limits)`` equals ``[core.run_job(replace(s, seed=seed), limit_us=l) for s, l
in zip(specs, limits)]``, bit for bit (the same draws, sums of the same integers; tests compare them), and
``replicas.run_jobs`` too; :meth:`Shared.counters` equals core.advance's state (every counter) at the job's end.
Configurations that do not share their durations, or that have committed SDCs (a detector's finding is not on
the prefix path) or servers (their lifetimes are not on it either), are refused (:func:`shared` says which can be
grouped), so the caller runs them one by one.

Memory: the window moves forward. All configurations of a seed advance together through ``g``: each runs until
it needs a step beyond the window, then the window drops what lies behind the slowest of them and is extended
by WINDOW_STEPS. It holds about WINDOW_STEPS plus twice the longest stretch between two events (quiet steps
between failures) of steps, ~10.4 bytes each, whatever the job's length (measured on llama3-16k: 5.4 MB), and
never more than MAX_WINDOW_STEPS: a configuration whose stretch is longer runs alone, step by step.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import numpy as np

from simd.engine import loop
from simd.engine.core import new_state
from simd.engine.jit import njit
from simd.engine.kernel import plan as kplan
from simd.engine.kernel.plan import PF
from simd.engine.kernel.quiet import PREFIX_STRIDE
from simd.engine.layout import Aux, Pos, Stream, TotalsLayout, pos_row, words
from simd.engine.pcg import seek
from simd.engine.replicas import advance_replicas
from simd.engine.results import JobResult, job_result
from simd.engine.spec import STREAMS, JobSpec, Plan, to_us
from simd.engine.state import Totals
from simd.engine.stepkernel import draw
from simd.engine.stragglers import BUCKET_FACTORS, kernel_tables
from simd.engine.streams import first_position

STRIDE = PREFIX_STRIDE
_NB = len(BUCKET_FACTORS) + 1  # histogram buckets, +Inf included
# Steps the window grows by when a configuration needs more. 2**18 steps are ~2.7 MB of window and 3-4 ms of drawing
# (_fill: 15-16 ns per step measured here, 11-12 of them stepkernel.draw), so the ~1.2e6 steps of a llama3-16k job
# take 5 windows, each a kernel call per configuration (a few us) and a copy of what is kept. Memory bound: one
# window per worker, whatever the job's length; measured on llama3-16k's 20 checkpoint intervals over 40 seeds, a
# peak of 5.4 MB of buffers (reserved by doubling: 2**19 steps, 10.4 bytes each) in a worker of ~200 MB resident.
WINDOW_STEPS = 1 << 18
# The most steps a window may span (~44 MB; buffers reserved by doubling up to twice that). A configuration whose
# next stretch does not fit (quiet steps between two events: a job without failures is one stretch of target_steps,
# up to 10**12 in a scenario file) runs its job on the step-by-step kernel instead (replicas.advance_replicas, the
# same result), so memory stays bounded whatever the scenario.
MAX_WINDOW_STEPS = 1 << 22


def duration_key(spec: JobSpec) -> tuple | None:
    """What a job's step durations depend on besides the seed; None when every step takes the base step time
    (no stragglers: nothing to share). Configurations with equal keys may be run by one :class:`Shared`."""
    st = spec.stragglers
    if st is None or (st.jitter_seconds == 0 and (st.slow_ranks == 0 or st.slowdown == 1.0)):
        return None
    return spec.n_gpus, to_us(spec.step_seconds), st


@njit()
def _fill(w, g_from, g_to, p0, slow_steps, ha, hb, hc, hf, sa, sb, sc, sf, base, bounds, pd, pb, ph):
    """Executed steps g_from+1 .. g_to (both multiples of STRIDE) into a window that starts at step p0: their
    cumulative durations ``pd``, buckets ``pb`` and, at every multiple of STRIDE, the cumulative bucket counts
    ``ph`` (stepkernel.draw: the same values as the kernels that draw step by step; the steps up to
    ``slow_steps`` with the slow ranks' table)."""
    sh, sl = seek(w, g_from)
    ih, il, dx = w[2], w[3], w[4] == np.uint64(1)
    row0 = p0 // STRIDE
    counts = ph[g_from // STRIDE - row0].copy()
    acc = pd[g_from - p0]
    for block in range(g_from // STRIDE, g_to // STRIDE):
        # a block's counts in two registers, one byte per bucket (at most STRIDE = 64 < 256 each): an array
        # of counts in memory would cost a store-to-load round trip per step (measured 21.7 against 15 ns)
        lo8 = np.uint64(0)
        hi8 = np.uint64(0)
        for g in range(block * STRIDE + 1, (block + 1) * STRIDE + 1):
            if g <= slow_steps:
                sh, sl, d, k = draw(sh, sl, ih, il, dx, sa, sb, sc, sf, base, bounds)
            else:
                sh, sl, d, k = draw(sh, sl, ih, il, dx, ha, hb, hc, hf, base, bounds)
            acc += d
            pd[g - p0] = acc
            pb[g - p0] = k
            if k < 8:
                lo8 += np.uint64(1) << np.uint64(8 * k)
            else:
                hi8 += np.uint64(1) << np.uint64(8 * (k - 8))
        for k in range(len(counts)):
            if k < 8:
                counts[k] += np.int64((lo8 >> np.uint64(8 * k)) & np.uint64(255))
            else:
                counts[k] += np.int64((hi8 >> np.uint64(8 * (k - 8))) & np.uint64(255))
        # element by element: a slice assignment compiles numba's shape-mismatch error path (simd.engine.kernels)
        for k in range(len(counts)):
            ph[block + 1 - row0, k] = counts[k]


class Window:
    """Executed steps p0 .. end of one straggler stream: ``pd[i]`` the summed durations of steps 1 .. p0 + i
    (us), ``pb[i]`` the bucket of step p0 + i, ``ph[j]`` the bucket counts of steps 1 .. p0 + j * STRIDE. The
    buffers are kept from seed to seed (allocated once per worker task, grown when a window needs more)."""

    def __init__(self):
        self._pd = np.zeros(0, dtype=np.int64)
        self._pb = np.zeros(0, dtype=np.int8)
        self._ph = np.zeros((0, _NB), dtype=np.int64)
        self.p0 = self.end = 0
        self._draw: tuple = ()

    def start(self, plan: Plan) -> None:
        """An empty window (step 0 only) on ``plan``'s stream, for its first job."""
        self._draw = (words(plan)[Stream.step_times], plan.slow_steps, *kernel_tables(plan.step_times))
        self._reserve(1)
        self.p0 = self.end = 0
        self._pd[0] = 0
        self._ph[0] = 0

    @property
    def nbytes(self) -> int:
        return self._pd.nbytes + self._pb.nbytes + self._ph.nbytes

    def arrays(self) -> tuple:
        """The window as loop.advance_all's ``prefix``."""
        n = self.end - self.p0
        return self._pd[:n + 1], self._pb[:n + 1], self._ph[:n // STRIDE + 1], self.p0

    def _reserve(self, steps: int) -> None:
        if len(self._pd) >= steps + 1:
            return
        n = max(steps + 1, 2 * len(self._pd))  # doubling: a few reallocations per worker task at most
        keep = self.end - self.p0 + 1 if len(self._pd) else 0
        pd, pb, ph = np.empty(n, dtype=np.int64), np.empty(n, dtype=np.int8), np.empty((n // STRIDE + 1, _NB),
                                                                                        dtype=np.int64)
        pd[:keep], pb[:keep], ph[:(keep - 1) // STRIDE + 1 if keep else 0] = \
            self._pd[:keep], self._pb[:keep], self._ph[:(keep - 1) // STRIDE + 1 if keep else 0]
        self._pd, self._pb, self._ph = pd, pb, ph

    def cover(self, lo: int, need: int) -> bool:
        """Drop the steps before ``lo`` (no configuration is behind it) and extend the window to step ``need``
        at least (by WINDOW_STEPS if it can); False, with the window unchanged, if it would span more than
        MAX_WINDOW_STEPS."""
        p0 = lo // STRIDE * STRIDE
        if p0 < self.p0 or need <= self.end:
            raise ValueError(f"window [{self.p0}, {self.end}] cannot move to [{lo}, {need}]")
        cap = p0 + MAX_WINDOW_STEPS // STRIDE * STRIDE
        end = -(-need // STRIDE) * STRIDE
        if end > cap:
            return False
        end = max(end, min(cap, -(-(self.end + WINDOW_STEPS) // STRIDE) * STRIDE))
        shift, kept = p0 - self.p0, self.end - p0
        if shift:  # the kept steps to the front (numpy copies overlapping slices correctly)
            self._pd[:kept + 1] = self._pd[shift:shift + kept + 1]
            self._pb[:kept + 1] = self._pb[shift:shift + kept + 1]
            rows = kept // STRIDE + 1
            self._ph[:rows] = self._ph[shift // STRIDE:shift // STRIDE + rows]
        self.p0 = p0
        self._reserve(end - p0)
        w, slow_steps, *tables = self._draw
        _fill(w, self.end, end, p0, slow_steps, *tables, self._pd, self._pb, self._ph)
        self.end = end
        return True


@njit()
def _run(which, until, max_jobs, pos, tot, start, aux, words, plans, tables, hq, prefix, needs):
    """Configurations ``which`` (one replica each; ``plans``: their kernel.plan.arrays stacked, one row each) on
    the window ``prefix``: ``needs[p]`` = 0 when p is done, else the executed step it waits for (loop.advance_all).
    ``max_jobs`` an argument, not the literal 1, and an untraced buffer rather than no trace: either would be
    another signature of advance_all than the engine's other calls (loopcall.call), a second compile of it."""
    budget = np.full(6, 0, dtype=np.int64)  # no limit (loopcall.NO_BUDGET)
    budget[0] = -1
    work = np.zeros(1, dtype=np.int64)
    trace = (np.zeros((0, 3), dtype=np.int64), np.zeros(1, dtype=np.int64))  # records nothing (loopcall._no_trace)
    for j in range(len(which)):
        p = which[j]
        plan = (plans[0][p], plans[1][p], plans[2][p], plans[3][p])  # kernel.plan.arrays' four arrays
        needs[p] = loop.advance_all(until[p], max_jobs, pos[p:p + 1], tot[p:p + 1], start[p:p + 1], aux[p:p + 1],
                                       words[p:p + 1], plan, tables, hq, budget, work, prefix, trace)


def shared(plans: Sequence[Plan]) -> bool:
    """Whether ``plans`` (compiled for one seed) can run on one :class:`Shared`: all with the same step durations
    (the same tables, base step time and slow steps), the same shape of counters and the same streams (one plan's
    words serve them all: a point whose mechanism is off has no stream where another's has one), and no committed
    SDCs (a detector's finding is not on the prefix path), servers (nor their lifetimes), asynchronous saves (a
    write's slowdown is not in the prefix sums), a memory tier (its saves are not in the prefix's stretches) or
    elastic groups (a rejoin ends a segment at a step the prefix path does not look for)."""
    if not plans or not all(p.step_times is not None and not p.committed and not p.servers and not p.write_us
                            and not p.mem_every and not p.elastic_groups for p in plans):
        return False
    first = plans[0]

    def same(p: Plan) -> bool:
        a, b = p.step_times, first.step_times
        return (a.healthy is b.healthy and a.slow is b.slow and a.base_us == b.base_us and a.stream == b.stream
                and p.slow_steps == first.slow_steps and len(p.stop_cumulative) == len(first.stop_cumulative)
                and (p.cause_names, p.type_names, p.detector_names)
                == (first.cause_names, first.type_names, first.detector_names)
                and _streams_of(p) == _streams_of(first))

    return all(same(p) for p in plans)


def _streams_of(p: Plan) -> tuple[str, ...]:
    """The streams a plan has (its stream fields that are not None: spec.STREAMS)."""
    return tuple(f for f in STREAMS if getattr(p, f) is not None)


class Shared:
    """Configurations that share their step durations (:func:`shared`), compiled once; :meth:`run` runs each
    one's first job for a seed on one window of durations."""

    def __init__(self, specs: Sequence[JobSpec]):
        # compiled once, for seed 0: nothing of a plan but its streams depends on the seed, and run() takes
        # those from the seed's own plan
        states = [new_state(replace(s, seed=0)) for s in specs]
        self.plans = [s.plan for s in states]
        if not shared(self.plans):
            raise ValueError("these configurations do not share their step durations (crn.shared)")
        self.specs = list(specs)
        lay = self.layout = TotalsLayout(states[0].totals)
        self._row = np.array(lay.row(states[0].totals), dtype=np.int64)
        self._pos = np.array(pos_row(states[0]), dtype=np.int64)
        arrays = [kplan.arrays(p, lay) for p in self.plans]
        self._plans = tuple(np.stack([a[0][i] for a in arrays]) for i in range(len(arrays[0][0])))
        self._tables = arrays[0][1]
        self.window = Window()
        self.peak_window_bytes = 0

    def run(self, seed: int, limits_us: Sequence[int]) -> list[JobResult | None]:
        """Each configuration's first job with ``seed``, None where its ``limits_us`` entry passes first
        (core.run_job)."""
        return [job_result(p, totals, 0, t) if totals.jobs_completed else None
                for p, (totals, t) in zip(self.plans, self.counters(seed, limits_us), strict=True)]

    def counters(self, seed: int, limits_us: Sequence[int]) -> list[tuple[Totals, int]]:
        """Each configuration's counters and simulated time (us) at the end of its first job with ``seed``, or
        where its ``limits_us`` entry stopped it: the Totals and ``t`` of ``core.advance(new_state(spec), limit,
        max_jobs=1)``, step-time histogram included."""
        k = len(self.plans)
        plan = new_state(replace(self.specs[0], seed=seed)).plan  # the seed's streams, the same for every
        words_ = np.repeat(words(plan)[None], k, axis=0)  # configuration (their names do not depend on it)
        pos = np.repeat(self._pos[None], k, axis=0)  # a fresh state's, its first failure and SDC this seed's:
        firsts: dict[tuple, int] = {}
        floats = self._plans[1]
        for i, (hard, sdc) in enumerate(zip(floats[:, PF.hard_log1m].tolist(), floats[:, PF.sdc_log1m].tolist(),
                                            strict=True)):
            for col, stream, log1m in ((Pos.hard_p, plan.hard_stream, hard), (Pos.sdc_p, plan.sdc_stream, sdc)):
                key = (col, log1m)
                if key not in firsts:
                    firsts[key] = first_position(stream, log1m)
                pos[i, col] = firsts[key]
        tot = np.repeat(self._row[None], k, axis=0)
        start = np.zeros_like(tot)
        until = np.asarray(limits_us, dtype=np.int64)
        needs = np.zeros(k, dtype=np.int64)
        aux = Aux.of(self.plans[0]).rows(k)  # (no committed SDCs or servers here: an unused column)
        hist = np.zeros(_NB, dtype=np.int64)
        win = self.window
        win.start(plan)
        which = np.arange(k)
        alone: dict[int, tuple[Totals, int]] = {}  # configurations with a stretch longer than a window may be
        while True:
            _run(which, until, 1, pos, tot, start, aux, words_, self._plans, self._tables, hist, win.arrays(), needs)
            waiting = np.flatnonzero(needs)
            if not len(waiting):
                break
            lo, need = int(pos[waiting, Pos.g].min()), int(needs[waiting].min())
            if not win.cover(lo, need):  # the one furthest behind (its stretch is too long): alone, from the start
                for p in waiting[pos[waiting, Pos.g] == lo].tolist():
                    (state,) = advance_replicas([new_state(replace(self.specs[p], seed=seed))], int(until[p]),
                                                max_jobs=1)
                    alone[p] = state.totals, state.t
                    needs[p] = 0
                which = waiting[:0]
                continue
            self.peak_window_bytes = max(self.peak_window_bytes, win.nbytes)
            which = waiting[needs[waiting] <= win.end]
        return [alone[i] if i in alone else (self.layout.totals(row), t)
                for i, (row, t) in enumerate(zip(tot.tolist(), pos[:, Pos.t].tolist(), strict=True))]
