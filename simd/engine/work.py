"""The mutable working copy of a State for one ``advance`` call, and the bookkeeping both paths share.

The segment walks (walk.py, xwalk.py) move a ``Work``: its position (t, g, step,
last checkpoint, corruption, pending compute), its counters (``totals``: Totals' fields, the per-cause and
per-bucket tuples as lists), the two event streams' buffers and the events so far. Here live the operations
whose meaning does not depend on the path: what an executed step costs above the base step time under
stragglers (and when the slow ranks are replaced), which cause a hard failure has, a rollback to the last
clean checkpoint, and the end of a job.

Promises: ``Work(state).to_state(state.clock)`` is ``state`` again; integer microseconds throughout; events
are appended in simulated-time order; nothing outside the Work (and its stream buffers) is changed.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from simd.engine.fleet import type_of
from simd.engine.hazard import NEVER
from simd.engine.results import Event, job_result
from simd.engine.state import State, Totals
from simd.engine.streams import Buffer, uniforms

# the Totals fields that are per-cause / per-bucket / per-accelerator-type tuples
_TUPLE_TOTALS = ("interruptions", "step_hist", "interruptions_by_type", "sdc_onsets_by_type",
                 "detector_finds")


class Work:
    """Mutable working copy of a State for one ``advance`` call."""

    def __init__(self, state: State, trace: bool):
        self.origin = state
        p = self.p = state.plan
        self.t, self.g, self.step, self.last = state.t, state.g, state.step, state.last_ckpt
        self.corrupted, self.pending = state.corrupted, state.pending_us
        self.totals = dict(state.totals.__dict__)
        for k in _TUPLE_TOTALS:
            self.totals[k] = list(self.totals[k])
        self.job_start, self.job_start_t, self.job_start_g = state.job_start, state.job_start_t, state.job_start_g
        self.hard = Buffer(p.hard_stream, p.hard_log1m, *state.hard)
        self.sdc = Buffer(p.sdc_stream, p.sdc_log1m, *state.sdc)
        self.events: list[Event] = []
        self.trace = trace
        self._hist_at = state.totals.steps_executed  # executed steps already in the histogram (pack)

    def pack(self) -> Totals:
        if self.p.step_times is None:  # every step takes exactly the base step time: one bucket
            # the steps executed since the last pack go to this plan's bucket (a drill may have switched
            # stragglers off: the steps drawn before stay in their buckets)
            executed = self.totals["steps_executed"]
            self.totals["step_hist"][self.p.step_bucket] += executed - self._hist_at
            self._hist_at = executed
        out = dict(self.totals)
        for k in _TUPLE_TOTALS:
            out[k] = tuple(out[k])
        return Totals(**out)

    def to_state(self, clock: int) -> State:
        """The State this Work has reached, its clock at ``clock`` (>= t: the rest is the unit in progress)."""
        self.hard.next_after(self.g)
        self.sdc.next_after(self.g)
        return replace(self.origin, clock=clock, t=self.t, g=self.g, step=self.step, last_ckpt=self.last,
                       corrupted=self.corrupted, hard=self.hard.saved(), sdc=self.sdc.saved(),
                       pending_us=self.pending, totals=self.pack(), job_start=self.job_start,
                       job_start_t=self.job_start_t, job_start_g=self.job_start_g)

    # -- stragglers: the time of executed steps above the base step time -------------------------------------

    def slow_count(self, g0: int, n: int) -> int:
        """How many of the executed steps g0+1 .. g0+n still have the slow ranks."""
        return max(0, min(n, self.job_start_g + self.p.slow_steps - g0))

    def durations(self, g0: int, n: int):
        return self.p.step_times.durations(g0, n, self.slow_count(g0, n))

    def account_steps(self, g0: int, durations, count: int, total_us: int) -> int:
        """Book the excess and histogram of executed steps g0+1 .. g0+count; returns the excess (us)."""
        T, p = self.totals, self.p
        excess = total_us - count * p.step_us
        T["straggler_us"] += excess
        for i, c in enumerate(p.step_times.histogram_of(*durations, count)):
            T["step_hist"][i] += int(c)
        self.moved(g0, g0 + count)
        return excess

    def moved(self, g_from: int, g_to: int) -> None:
        """The median detector replaces the slow ranks once a job has run ``slow_steps`` steps."""
        limit = self.job_start_g + self.p.slow_steps
        if self.p.slow_ranks and self.p.slow_steps < NEVER and g_from < limit <= g_to:
            self.totals["stragglers_replaced"] += self.p.slow_ranks

    # -- failures, rollbacks, job ends ---------------------------------------------------------------------

    def cause_of(self, index: int) -> int:
        """The kind of element number ``index`` of the epoch's hard stream (its own uniform of the cause
        stream): a cause of hard failure, or with shadow ranks a disagreement (``Plan.shadow_kind``)."""
        p = self.p
        if len(p.stop_cumulative) == 1:
            return 0
        u = uniforms(p.cause_stream, index, 1)
        return min(int(np.searchsorted(p.stop_cumulative, u[0])), len(p.stop_cumulative) - 1)

    def stopped(self, kind: int, index: int) -> None:
        """Count element ``index`` of the hard stream, of kind ``kind``: a hard failure (its cause, its
        accelerator type) or a shadow disagreement (an SDC detected); its recovery time; its event."""
        p, T = self.p, self.totals
        T["detection_us"] += p.stop_detect_us[kind]
        T["restart_us"] += p.stop_restart_us[kind]
        if kind == p.shadow_kind:  # an SDC that set in and was found at once (shadow.py)
            T["shadow_detected"] += 1
            T["sdc_detected"] += 1
            T["sdc_onsets"] += 1
            T["sdc_onsets_by_type"][0] += 1  # shadow ranks run on one accelerator type only (spec.job_hazards)
            if self.trace:
                self.events.append(Event(self.t, "sdc_detected", "shadow"))
            return
        T["interruptions"][kind] += 1
        T["interruptions_by_type"][type_of(p.hard_type_cumulative, p.hard_type_stream, index)] += 1
        if self.trace:
            self.events.append(Event(self.t, "interruption", p.cause_names[kind]))

    def onset(self) -> None:
        """An SDC sets in: the next SDC candidate (the sdc buffer's current element) hit a clean state."""
        p, T = self.p, self.totals
        self.corrupted = True
        T["sdc_onsets"] += 1
        T["sdc_onsets_by_type"][type_of(p.sdc_type_cumulative, p.sdc_type_stream, self.sdc.index())] += 1

    def rollback(self, lost_steps: int) -> None:
        T = self.totals
        T["steps_recomputed"] += lost_steps
        T["rollback_us"] += self.pending
        self.step, self.pending, self.corrupted = self.last, 0, False

    def end_job(self) -> None:
        p, T = self.p, self.totals
        lost = self.step - self.last
        if self.corrupted:  # seed's end-of-job rule: the SDC is baked in, its steps are void
            T["sdc_baked"] += 1
            self.rollback(lost)
            if self.trace:
                self.events.append(Event(self.t, "sdc_baked"))
        else:
            T["steps_committed"] += lost
            T["productive_us"] += self.pending
        T["jobs_completed"] += 1
        now = self.pack()
        self.events.append(Event(self.t, "job_end", job=job_result(p, now.minus(self.job_start),
                                                                    T["jobs_completed"] - 1,
                                                                    self.t - self.job_start_t)))
        self.step = self.last = self.pending = 0
        self.corrupted = False
        self.job_start, self.job_start_t, self.job_start_g = now, self.t, self.g
