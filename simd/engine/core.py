"""The event-driven engine: ``advance(state, until) -> (state, events)``, seed 000's loop without the loop.

Hard failures and SDC candidates are Bernoulli point sets over ``g``, the executed-step index (streams.py);
the trajectory is a deterministic function of them. Between two rollbacks the job runs a *segment*: clean
steps with their validations and checkpoints (commits), possibly an SDC onset, and then the event that ends
it. Each segment is crossed in closed form, so the cost grows with failures and SDCs, not with steps.

Order within a step, as the seed's loop: (a) hard failure -> roll back to the last clean checkpoint, detect,
restart; (b) SDC onset (silent; not on a step that failed); (c) validation point: pay validation, a present
SDC is *detected* -> roll back, restart; (d) checkpoint point (unless (c) rolled back): pay the checkpoint, a
present SDC is *baked in* -> roll back, restart, else commit. At the target step the job ends; an SDC still
present then is counted baked in and its steps void (the seed's end-of-job rule), and the next job starts.

Two paths compute the same trajectory: ``_segment`` walks one segment at a time and handles every
configuration; ``_batch`` computes many segments at once with numpy when validation divides the checkpoint
interval (or there is none). Then every detection point lies on a lattice of period V anchored at the last
hard failure, so the SDC detections between two hard failures are the lattice cells holding a candidate,
and the segment boundaries need no sequential walk. Tests check both paths give identical states.

Tick-size invariance: a call completes exactly the units (a step with its validation, checkpoint and
recovery) that end at or before ``until``; all time is integer microseconds.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from simd.engine.hazard import NEVER
from simd.engine.spec import US_PER_SECOND, JobSpec, Plan, compile_spec
from simd.engine.state import State, Totals
from simd.engine.stragglers import BUCKET_FACTORS
from simd.engine.streams import Buffer, first_position, uniforms

_HARD, _SDC, _END = 0, 1, 2
_TUPLE_TOTALS = ("interruptions", "step_hist")  # the Totals fields that are per-cause / per-bucket tuples
_CHUNK = 1 << 16  # steps whose durations are computed at once under stragglers
_WINDOW = 1 << 18  # at most this many steps per numpy batch under stragglers


@dataclass(frozen=True)
class JobResult:
    """One completed job, in seed 000's SimResult vocabulary (seconds)."""

    job: int  # 0-based index of the job in this simulation
    target_steps: int
    step_seconds: float
    recompute_steps: int
    interruptions: int
    interruptions_by_cause: dict[str, int]
    sdc_detected: int
    sdc_baked: int
    checkpoints: int
    wall_seconds: float
    bucket_seconds: dict[str, float]

    @property
    def checkpoint_seconds(self) -> float:
        return self.bucket_seconds["checkpoint"]

    @property
    def validation_seconds(self) -> float:
        return self.bucket_seconds["validation"]

    @property
    def restart_seconds(self) -> float:
        return self.bucket_seconds["restart"]

    @property
    def effective_utilization(self) -> float:
        """Productive (committed, kept) compute over wall time.

        Seed 000 divides ``target * step_seconds`` by wall time. The two agree except when a job ends with
        an SDC present: the seed voids those steps (counts them recomputed) yet still counts them useful in
        the numerator; here void work is never productive, so every second is in exactly one bucket.
        """
        return self.bucket_seconds["productive"] / self.wall_seconds if self.wall_seconds > 0 else 0.0

    @property
    def mean_step_seconds(self) -> float:
        executed = self.target_steps + self.recompute_steps
        compute = self.bucket_seconds["productive"] + self.bucket_seconds["rollback"]
        return (compute + self.bucket_seconds["straggler"]) / executed if executed else 0.0


@dataclass(frozen=True)
class Event:
    """Something that happened at simulated time ``t_us``: an interruption, an SDC verdict, a job end."""

    t_us: int
    kind: str  # "interruption" | "sdc_detected" | "sdc_baked" | "job_end"
    cause: str = ""
    job: JobResult | None = None


def new_state(spec: JobSpec) -> State:
    """The state at simulated time 0: a fresh job."""
    plan = compile_spec(spec)
    totals = Totals(interruptions=(0,) * len(plan.cause_names), step_hist=(0,) * (len(BUCKET_FACTORS) + 1))
    return State(plan=plan, clock=0, t=0, g=0, step=0, last_ckpt=0, corrupted=False,
                 hard=(0, first_position(plan.hard_stream, plan.hard_log1m)),
                 sdc=(0, first_position(plan.sdc_stream, plan.sdc_log1m)),
                 pending_us=0, totals=totals, job_start=totals, job_start_t=0, job_start_g=0)


def stretch_us(plan: Plan, a: int, m: int) -> int:
    """Time of the clean steps a+1..m of a job with their validations and checkpoints (closed form)."""
    t = (m - a) * plan.step_us + (m // plan.ckpt_every - a // plan.ckpt_every) * plan.ckpt_us
    if plan.val_every:
        t += (m // plan.val_every - a // plan.val_every) * plan.val_us
    return t


def fit_steps(plan: Plan, a: int, b: int, budget_us: int) -> int:
    """The largest m in [a, b] whose clean stretch a+1..m takes at most ``budget_us``.

    A first guess from the mean cost of a step (pauses included) is within a few steps; a short walk
    settles it, and a binary search takes over should the walk be long."""
    mean = plan.step_us + plan.ckpt_us / plan.ckpt_every + (plan.val_us / plan.val_every if plan.val_every else 0)
    m = min(b, a + int(budget_us // mean))
    for _ in range(8):
        if stretch_us(plan, a, m) > budget_us:
            m -= 1
        elif m < b and stretch_us(plan, a, m + 1) <= budget_us:
            m += 1
        else:
            return m
    lo, hi = a, b
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if stretch_us(plan, a, mid) <= budget_us:
            lo = mid
        else:
            hi = mid - 1
    return lo


def _ceil_mult(q: int, m: int) -> int:
    return -(-q // m) * m


class _Work:
    """Mutable working copy of a State for one ``advance`` call."""

    def __init__(self, state: State, trace: bool):
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

    def pack(self) -> Totals:
        if self.p.step_times is None:  # every step takes exactly the base step time: the first bucket
            self.totals["step_hist"][0] = self.totals["steps_executed"]
        out = dict(self.totals)
        for k in _TUPLE_TOTALS:
            out[k] = tuple(out[k])
        return Totals(**out)

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

    def fit(self, a: int, b: int, budget: int) -> int:
        """The largest m in [a, b] such that job steps a+1..m (from the current g) take <= budget."""
        p = self.p
        if p.step_times is None:
            return fit_steps(p, a, b, budget)
        g, m = self.g, a
        while m < b:
            n = min(b - m, _CHUNK)
            q = np.arange(m + 1, m + n + 1)
            cost = self.durations(g + (m - a), n)[0] + np.where(q % p.ckpt_every == 0, p.ckpt_us, 0)
            if p.val_every:
                cost += np.where(q % p.val_every == 0, p.val_us, 0)
            cum = np.cumsum(cost)
            if cum[-1] <= budget:
                budget -= int(cum[-1])
                m += n
                continue
            return m + int(np.searchsorted(cum, budget, side="right"))
        return m

    def cause_of(self, index: int) -> int:
        p = self.p
        if len(p.cause_names) == 1:
            return 0
        u = uniforms(p.cause_stream, index, 1)
        return min(int(np.searchsorted(p.cause_cumulative, u[0])), len(p.cause_names) - 1)

    def quiet(self, m: int, onset_at: int, known=None) -> int:
        """Run m clean steps (their validations and checkpoints); an SDC sets in at g == onset_at.
        ``known``: the durations of (at least) these steps, if the caller has them already."""
        p, T = self.p, self.totals
        a, b = self.step, self.step + m
        dur = stretch_us(p, a, b)
        if known is not None:
            dur += self.account_steps(self.g, known, m, int(known[0][:m].sum()))
        elif p.step_times is not None:
            for g0 in range(self.g, self.g + m, _CHUNK):
                n = min(_CHUNK, self.g + m - g0)
                d = self.durations(g0, n)
                dur += self.account_steps(g0, d, n, int(d[0].sum()))
        nc = b // p.ckpt_every - a // p.ckpt_every
        T["steps_executed"] += m
        T["checkpoint_us"] += nc * p.ckpt_us
        if p.val_every:
            nv = b // p.val_every - a // p.val_every
            T["validations"] += nv
            T["validation_us"] += nv * p.val_us
        self.pending += m * p.step_us
        if nc:  # every checkpoint before an onset is clean (no point lies between an onset and its detection)
            new_last = (b // p.ckpt_every) * p.ckpt_every
            gained = new_last - self.last
            T["steps_committed"] += gained
            T["productive_us"] += gained * p.step_us
            T["checkpoints"] += nc
            self.pending -= gained * p.step_us
            self.last = new_last
        self.t += dur
        self.step, self.g = b, self.g + m
        if not self.corrupted and onset_at <= self.g:
            self.corrupted = True
            T["sdc_onsets"] += 1
        return dur

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
        self.events.append(Event(self.t, "job_end", job=_job_result(p, now.minus(self.job_start),
                                                                     T["jobs_completed"] - 1,
                                                                     self.t - self.job_start_t)))
        self.step = self.last = self.pending = 0
        self.corrupted = False
        self.job_start, self.job_start_t, self.job_start_g = now, self.t, self.g


def _segment(w: _Work, until: int) -> bool:
    """Advance through the current segment; False if ``until`` came first (the state is then mid-way)."""
    p, T = w.p, w.totals
    C, V = p.ckpt_every, p.val_every
    g, step = w.g, w.step
    h = w.hard.next_after(g)
    s = NEVER
    d = NEVER
    if w.corrupted:
        q0 = step + 1  # no validation or checkpoint point lies between the onset and here
    else:
        s = w.sdc.next_after(g)
        q0 = step + (s - g) if s < h else 0
    if q0:
        detect = _ceil_mult(q0, C)
        if V:
            detect = min(detect, _ceil_mult(q0, V))
        d = g + (detect - step)
    g_end = g + (p.target - step)
    if h <= d and h <= g_end:
        kind, e = _HARD, h
    elif d <= g_end:
        kind, e = _SDC, d
    else:
        kind, e = _END, g_end
    q_e = step + (e - g)
    caught = kind == _SDC and bool(V) and q_e % V == 0
    d_e = w.durations(e - 1, 1) if p.step_times is not None else None
    excess_e = int(d_e[0][0]) - p.step_us if d_e is not None else 0
    cause = 0
    if kind == _HARD:
        cause = w.cause_of(w.hard.index())
        unit = p.step_us + p.cause_detect_us[cause] + p.cause_restart_us[cause]
    elif kind == _SDC:
        unit = p.step_us + (p.val_us if caught else p.ckpt_us) + p.sdc_restart_us
    else:
        unit = p.step_us + (p.val_us if V and q_e % V == 0 else 0) + (p.ckpt_us if q_e % C == 0 else 0)

    unit += excess_e
    if p.step_times is not None and q_e - 1 - step > _CHUNK:
        # a long quiet stretch under stragglers: cross it a chunk at a time (memory stays bounded)
        m = w.fit(step, step + _CHUNK, until - w.t)
        if m > step:
            w.quiet(m - step, s)
        return m == step + _CHUNK
    quiet_us = stretch_us(p, step, q_e - 1)
    known = None
    if p.step_times is not None and q_e - 1 > step:
        known = w.durations(g, q_e - 1 - step)
        quiet_us += int(known[0].sum()) - (q_e - 1 - step) * p.step_us
    if w.t + quiet_us + unit > until:
        m = w.fit(step, q_e - 1, until - w.t)
        if m > step:
            w.quiet(m - step, s, known)
        return False
    if q_e - 1 > step:
        w.quiet(q_e - 1 - step, s, known)
    # the unit of step q_e
    if d_e is not None:
        w.account_steps(e - 1, d_e, 1, int(d_e[0][0]))
    T["steps_executed"] += 1
    w.g, w.step, w.t = e, q_e, w.t + unit
    w.pending += p.step_us
    if kind == _HARD:
        T["detection_us"] += p.cause_detect_us[cause]
        T["restart_us"] += p.cause_restart_us[cause]
        T["interruptions"][cause] += 1
        w.rollback(q_e - w.last)
        if w.trace:
            w.events.append(Event(w.t, "interruption", p.cause_names[cause]))
        return True
    if not w.corrupted and s == e:
        w.corrupted = True
        T["sdc_onsets"] += 1
    if V and q_e % V == 0:
        T["validations"] += 1
        T["validation_us"] += p.val_us
    if kind == _SDC:
        if not caught:
            T["checkpoint_us"] += p.ckpt_us
        T["sdc_detected" if caught else "sdc_baked"] += 1
        T["restart_us"] += p.sdc_restart_us
        w.rollback(q_e - w.last)
        if w.trace:
            w.events.append(Event(w.t, "sdc_detected" if caught else "sdc_baked"))
        return True
    if q_e % C == 0:  # the target step is a checkpoint point, clean (a corrupted one would be _SDC)
        T["checkpoint_us"] += p.ckpt_us
        T["checkpoints"] += 1
        T["steps_committed"] += q_e - w.last
        T["productive_us"] += w.pending
        w.last, w.pending = q_e, 0
    w.end_job()
    return True


def _batch(w: _Work, until: int) -> int:
    """Complete many whole segments at once (numpy); returns how many. Needs a clean segment start and
    validation dividing the checkpoint interval. Stops before a job's end, at ``until``, or at the end of
    the generated stretch of the streams."""
    p, T = w.p, w.totals
    C, V = p.ckpt_every, p.val_every
    lattice = V or C
    r0, k0 = w.g, w.step
    remaining = min(p.target - k0, (until - w.t) // p.step_us + 1)
    w.hard.next_after(r0)
    w.sdc.next_after(r0)
    for buf, hz in ((w.hard, p.hard_hazard), (w.sdc, p.sdc_hazard)):
        buf.ensure(int(min(65536, max(16, 2.0 * remaining * hz + 16))))
    H = w.hard.pos[w.hard.ptr:] if not w.hard.empty else np.array([NEVER], dtype=np.int64)
    S = w.sdc.pos[w.sdc.ptr:] if not w.sdc.empty else np.empty(0, dtype=np.int64)
    horizon = min(int(H[-1]), int(S[-1]) if len(S) else NEVER)
    st = p.step_times
    if st is not None:  # step durations are computed for the whole window: keep it to what can be reached
        horizon = min(horizon, r0 + min(_WINDOW, (until - w.t) // p.step_us + 1))
    if horizon >= NEVER:
        return 0

    # SDC detections: the lattice cells (anchored at the last hard failure) that hold a candidate.
    Sv = S[S <= horizon]
    j = np.searchsorted(H, Sv, side="left")
    nxt = H[j]
    anchor = np.where(j == 0, r0, H[np.maximum(j - 1, 0)])
    d = anchor + (Sv - anchor + lattice - 1) // lattice * lattice
    # sorted already: a detection lies before the next hard failure and the next gap's after it
    D = d[(Sv != nxt) & (d < nxt) & (d <= horizon)]
    if len(D) > 1:
        D = D[np.concatenate(([True], D[1:] != D[:-1]))]  # one detection per cell: the first onset's
    He = H[H <= horizon]
    E = np.concatenate((He, D))
    if not len(E):
        return 0
    order = np.argsort(E, kind="stable")
    E = E[order]
    is_sdc = order >= len(He)
    r = np.empty_like(E)
    r[0] = r0
    r[1:] = E[:-1]
    n = E - r
    ncommit = (n - 1) // C
    nval = np.where(is_sdc, n // V, (n - 1) // V) if V else np.zeros_like(n)
    nckpt = ncommit + (is_sdc if not V else 0)
    hard_pos = np.cumsum(~is_sdc) - 1  # index among this batch's hard failures
    if len(p.cause_names) > 1 and len(He):
        u = uniforms(p.cause_stream, w.hard.index(), len(He))
        causes = np.minimum(np.searchsorted(p.cause_cumulative, u), len(p.cause_names) - 1)
    else:
        causes = np.zeros(len(He), dtype=np.int64)
    seg_cause = causes[np.maximum(hard_pos, 0)] if len(He) else np.zeros(len(E), dtype=np.int64)
    hard_extra = (np.asarray(p.cause_detect_us) + np.asarray(p.cause_restart_us))[seg_cause]
    extra = np.where(is_sdc, p.sdc_restart_us, hard_extra)
    dur = n * p.step_us + nval * p.val_us + nckpt * p.ckpt_us + extra
    if st is not None:
        steps = w.durations(r0, int(E[-1]) - r0)
        seg_steps_us = np.add.reduceat(steps[0], r - r0)  # segments are contiguous and cover the window
        dur += seg_steps_us - n * p.step_us
    k = k0 + C * (np.cumsum(ncommit) - ncommit)
    ends = (p.target - k) < n
    t_end = w.t + np.cumsum(dur)
    cnt = int(np.searchsorted(t_end, until, side="right"))
    if ends.any():
        cnt = min(cnt, int(np.argmax(ends)))
    if cnt == 0:
        return 0

    sl = slice(0, cnt)
    n_, is_sdc_, ncommit_ = n[sl], is_sdc[sl], ncommit[sl]
    recompute = n_ - C * ncommit_
    hard_n = int(cnt - is_sdc_.sum())
    sdc_n = cnt - hard_n
    # onsets that vanished with a hard failure: a candidate inside the hard failure's segment
    lo = np.searchsorted(S, r[sl], side="right")
    hi = np.searchsorted(S, E[sl], side="left")
    vanished = int(((hi > lo) & ~is_sdc_).sum())

    T["steps_executed"] += int(n_.sum())
    T["steps_committed"] += C * int(ncommit_.sum())
    T["steps_recomputed"] += int(recompute.sum())
    T["checkpoints"] += int(ncommit_.sum())
    T["validations"] += int(nval[sl].sum())
    T["sdc_onsets"] += sdc_n + vanished
    if V:
        T["sdc_detected"] += sdc_n
    else:
        T["sdc_baked"] += sdc_n
    counts = np.bincount(causes[:hard_n], minlength=len(p.cause_names))
    for i, c in enumerate(counts):
        T["interruptions"][i] += int(c)
    T["productive_us"] += C * int(ncommit_.sum()) * p.step_us
    T["rollback_us"] += int(recompute.sum()) * p.step_us
    T["checkpoint_us"] += int(nckpt[sl].sum()) * p.ckpt_us
    T["validation_us"] += int(nval[sl].sum()) * p.val_us
    T["restart_us"] += sdc_n * p.sdc_restart_us + int(np.asarray(p.cause_restart_us)[causes[:hard_n]].sum())
    T["detection_us"] += int(np.asarray(p.cause_detect_us)[causes[:hard_n]].sum())
    if w.trace:
        for i in range(cnt):
            if is_sdc[i]:
                w.events.append(Event(int(t_end[i]), "sdc_detected" if V else "sdc_baked"))
            else:
                w.events.append(Event(int(t_end[i]), "interruption", p.cause_names[int(seg_cause[i])]))
    if st is not None:
        w.account_steps(r0, steps, int(E[cnt - 1]) - r0, int(seg_steps_us[:cnt].sum()))
    w.g = int(E[cnt - 1])
    w.step = w.last = int(k[cnt - 1] + C * ncommit[cnt - 1])
    w.t = int(t_end[cnt - 1])
    return cnt


def _worth_a_batch(w: _Work, until_us: int) -> bool:
    """Whether a failure or SDC can happen before ``until`` (else the segment walk crosses it in O(1))."""
    reach = w.g + (until_us - w.t) // w.p.step_us + 1  # no more steps than this fit before until
    return min(w.hard.next_after(w.g), w.sdc.next_after(w.g)) <= reach


def advance(state: State, until_us: int, *, max_jobs: int | None = None,
            trace: bool = False, vectorize: bool = True) -> tuple[State, list[Event]]:
    """Advance to simulated time ``until_us`` (microseconds). Pure: same inputs, same outputs.

    Returns the new state and the events that happened: every job end, and with ``trace`` also every
    interruption and SDC verdict. ``vectorize=False`` forces the one-segment-at-a-time path (the result is
    identical; tests compare the two). With ``max_jobs`` it stops as soon as that many jobs have completed in
    total; the clock then stays at the end of the last job (offline simulation), otherwise it is ``until_us``.
    """
    if until_us < state.clock:
        raise ValueError(f"cannot advance backwards: at {state.clock} us, asked for {until_us} us")
    w = _Work(state, trace)
    vectorize = vectorize and state.plan.vectorizable
    halted = False
    while True:
        if max_jobs is not None and w.totals["jobs_completed"] >= max_jobs:
            halted = True
            break
        if vectorize and not w.corrupted and w.step == w.last and _worth_a_batch(w, until_us) \
                and _batch(w, until_us):
            continue
        if not _segment(w, until_us):
            break
    w.hard.next_after(w.g)
    w.sdc.next_after(w.g)
    new = replace(state, clock=w.t if halted else until_us, t=w.t, g=w.g, step=w.step, last_ckpt=w.last,
                  corrupted=w.corrupted, hard=w.hard.saved(), sdc=w.sdc.saved(), pending_us=w.pending,
                  totals=w.pack(), job_start=w.job_start, job_start_t=w.job_start_t, job_start_g=w.job_start_g)
    return new, w.events


def retarget(state: State, spec: JobSpec) -> State:
    """The same job from ``state.clock`` on, under new parameters (a drill starting or ending).

    Counters, position, pending work and the unit in progress carry over; the unit in progress finishes under
    the new parameters. Hard failures and SDCs are redrawn from the current step on, from streams of the new
    epoch: both are memoryless, so this is exactly the process with the new rates. Step durations stay a pure
    function of the executed-step index. The causes must keep their names (their counters carry over), and
    the target and intervals may change only at a job boundary-safe value: the position must stay valid.
    """
    old = state.plan.spec
    if tuple(c.name for c in spec.cause_list) != tuple(c.name for c in old.cause_list):
        raise ValueError("retarget cannot change the failure causes")
    if spec.target_steps < state.step:
        raise ValueError(f"retarget: target_steps {spec.target_steps} is behind the job's step {state.step}")
    if state.last_ckpt % spec.ckpt_interval_steps:
        raise ValueError("retarget: the last checkpoint must be on the new checkpoint lattice")
    epoch = state.epoch + 1
    plan = compile_spec(spec, epoch)
    g = state.g
    hard = (0, g + first_position(plan.hard_stream, plan.hard_log1m)) if plan.hard_log1m else (0, NEVER)
    sdc = (0, g + first_position(plan.sdc_stream, plan.sdc_log1m)) if plan.sdc_log1m else (0, NEVER)
    return replace(state, plan=plan, hard=hard, sdc=sdc, epoch=epoch)


def _job_result(p: Plan, d: Totals, index: int, wall_us: int) -> JobResult:
    return JobResult(
        job=index,
        target_steps=p.target,
        step_seconds=p.spec.step_seconds,
        recompute_steps=d.steps_recomputed,
        interruptions=sum(d.interruptions),
        interruptions_by_cause=dict(zip(p.cause_names, d.interruptions, strict=True)),
        sdc_detected=d.sdc_detected,
        sdc_baked=d.sdc_baked,
        checkpoints=d.checkpoints,
        wall_seconds=wall_us / US_PER_SECOND,
        bucket_seconds={b: us / US_PER_SECOND for b, us in d.bucket_us().items()},
    )


def bucket_seconds(state: State) -> dict[str, float]:
    """Seconds per bucket since the start, plus ``in_flight``; they sum to ``state.clock_seconds``."""
    out = {b: us / US_PER_SECOND for b, us in state.totals.bucket_us().items()}
    out["in_flight"] = state.in_flight_us() / US_PER_SECOND
    return out


def run_job(spec: JobSpec, *, tick_us: int | None = None, limit_us: int | None = None,
            vectorize: bool = True) -> JobResult | None:
    """Run one job from a fresh state to completion; None if ``limit_us`` of simulated time pass first.

    With ``tick_us`` the job advances in ticks of that size (the result is the same, by construction).
    """
    state = new_state(spec)
    limit = limit_us if limit_us is not None else NEVER
    while True:
        until = limit if tick_us is None else min(limit, state.clock + tick_us)
        state, events = advance(state, until, max_jobs=1, vectorize=vectorize)
        for ev in events:
            if ev.kind == "job_end":
                return ev.job
        if state.clock >= limit:
            return None
