"""The extended walk: the segment walk for plans with hyper-checkpointing (hyper.py) or committed SDCs (late.py).

Like walk.py, it jumps from one *interesting* step to the next and crosses the steps between in closed form, so
its cost grows with failures, SDCs, windows and detections, not with steps. An interesting step is the first of:
the next hard failure, the next SDC onset (clean state), the next validation or checkpoint point of an SDC not yet
in a checkpoint, the step at whose end a detector finds the present SDC, the last step of a hyper window (the
checkpoint lattice changes after it) and the job's target step. Between them every step is quiet: its
validation finds nothing and its checkpoint commits (clean, or holding a committed SDC), so a stretch of them is
a sum of lattice counts (hyper.points) or, under stragglers, of a chunk's step durations.

The interesting step itself runs seed 000's loop body, extended: (a) hard failure -> roll back to the newest
checkpoint; (b) SDC onset (its detectors' latencies drawn); (b') a detector's finding due by the end of the step
-> roll back (late.py); (c) validation: an SDC not yet in a checkpoint is detected; (d) checkpoint: under the
reference semantics an SDC present is baked in and rolled back, under committed SDCs it is committed with the
checkpoint; then the job ends at its target step. Detections (c), (d)-baked and (b') open a hyper window.

Promises: exact (the per-step oracle, oracle.py, runs the same loop body on every step); integer
microseconds; it completes exactly the units that end at or before ``until``, so any cut of time into calls
gives the same state (tick-size invariance); the Work's pending compute is that of the steps after the newest
clean checkpoint (``clean_ckpt``). Without ``trace``, core.advance runs the compiled loop (xkernel.py) instead,
which tests compare with ``segment`` bit for bit.
"""

from __future__ import annotations

import numpy as np

from simd.engine import hyper, late
from simd.engine.hazard import NEVER
from simd.engine.results import Event
from simd.engine.state import State
from simd.engine.walk import CHUNK
from simd.engine.work import Work

FIELDS = ("hyper_end", "hyper_anchor", "sdc_onset", "sdc_deadline", "sdc_detector", "clean_ckpt", "n_corrupt",
          "corrupt_ckpts")
_HARD, _FOUND, _DETECTED, _BAKED, _STEP = range(5)  # how the interesting step's unit ends


class Ext:
    """The extended part of a State (its FIELDS), mutable for one ``advance`` call."""

    __slots__ = (*FIELDS, "committed", "draws")

    def __init__(self, state: State):
        for f in FIELDS:
            setattr(self, f, getattr(state, f))
        self.corrupt_ckpts = list(state.corrupt_ckpts)
        # under the reference semantics the newest clean checkpoint is the last one (the State keeps 0 then)
        self.committed = state.plan.committed
        if not self.committed:
            self.clean_ckpt = state.last_ckpt
        self.draws = late.Draws(state.plan) if self.committed else None  # the detectors' draws, by the block

    def fields(self) -> dict:
        out = {f: getattr(self, f) for f in FIELDS}
        out["corrupt_ckpts"] = tuple(self.corrupt_ckpts)
        if not self.committed:  # kept under committed SDCs only (the plain walk keeps them at their defaults)
            out["clean_ckpt"] = out["sdc_onset"] = 0
        return out

    def clear_sdc(self, at: int) -> None:
        """No SDC present any more; ``at`` is the newest checkpoint, clean."""
        self.sdc_onset, self.sdc_deadline, self.sdc_detector = 0, NEVER, 0
        self.clean_ckpt, self.n_corrupt = at, 0
        self.corrupt_ckpts.clear()


def stretch_us(p, a: int, m: int, period: int, offset: int) -> int:
    """Time of the quiet steps a+1..m of a job (base step time) with their validations and checkpoints."""
    t = (m - a) * (p.step_us + p.shadow_us) + hyper.points(a, m, period, offset) * p.ckpt_us
    if p.val_every:
        t += (m // p.val_every - a // p.val_every) * p.val_us
    return t


def fit_steps(p, a: int, b: int, budget_us: int, period: int, offset: int) -> int:
    """The largest m in [a, b] whose quiet stretch a+1..m takes at most ``budget_us`` (base step time)."""
    if budget_us < 0:
        return a
    mean = p.step_us + p.shadow_us + p.ckpt_us / period + (p.val_us / p.val_every if p.val_every else 0)
    m = min(b, a + int(budget_us // mean))
    for _ in range(8):  # the mean's guess is within a few steps
        if stretch_us(p, a, m, period, offset) > budget_us:
            m -= 1
        elif m < b and stretch_us(p, a, m + 1, period, offset) <= budget_us:
            m += 1
        else:
            return m
    lo, hi = a, b
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if stretch_us(p, a, mid, period, offset) <= budget_us:
            lo = mid
        else:
            hi = mid - 1
    return lo


def _costs(p, step: int, n: int, period: int, offset: int, dur: np.ndarray) -> np.ndarray:
    """Unit times of steps step+1..step+n if quiet, under stragglers (``dur``: their durations)."""
    q = np.arange(step + 1, step + n + 1, dtype=np.int64)
    cost = dur[:n] + p.shadow_us + np.where((q - offset) % period == 0, p.ckpt_us, 0)
    if p.val_every:
        cost = cost + np.where(q % p.val_every == 0, p.val_us, 0)
    return cost


def segment(w: Work, until: int) -> bool:
    """Advance to and through the next interesting step; False if ``until`` came first (then mid-way)."""
    p, x = w.p, w.ext
    g, step, V = w.g, w.step, p.val_every
    if p.hyper_every and g < x.hyper_end:  # hyper.lattice, inlined (it runs once per segment)
        period, offset, piece = p.hyper_every, x.hyper_anchor % p.hyper_every, x.hyper_end
    else:
        period, offset, piece = p.ckpt_every, 0, NEVER
    h = w.hard.next_after(g)
    e = min(h, g + (p.target - step), piece)
    s = NEVER
    if not w.corrupted:
        s = w.sdc.next_after(g)
        e = min(e, s)
    elif x.n_corrupt == 0:  # not in a checkpoint yet: the next validation or checkpoint point meets it
        q = hyper.next_point(step, period, offset)
        if V:
            q = min(q, (step // V + 1) * V)
        e = min(e, g + (q - step))
    n = e - g
    st = p.step_times
    dd = cum = costs = None
    span = n
    if st is not None:
        span = min(n, CHUNK + 1)
        dd = w.durations(g, span)
        costs = _costs(p, step, span, period, offset, dd[0])
        cum = np.cumsum(costs)
    if w.corrupted and x.sdc_deadline < NEVER and n > 1:  # a detector's finding before e?
        budget = x.sdc_deadline - w.t  # the step whose compute ends at or after the deadline
        if st is None:
            first = p.step_us + p.shadow_us  # the compute of a step, its shadow overhead included
            j = 1 if budget <= first else fit_steps(p, step, step + n, budget - first - 1, period, offset) - step + 2
        else:
            j = int(np.searchsorted(cum - costs + dd[0][:span] + p.shadow_us, budget, side="left")) + 1
        if j < min(n, span + 1):
            n, e = j, g + j
    in_hyper = piece < NEVER
    if n > span:  # stragglers, a long quiet stretch: cross it a chunk at a time (memory stays bounded)
        m = int(np.searchsorted(cum, until - w.t, side="right"))
        if m:
            _cross(w, m, period, offset, in_hyper, dd)
        return m == span
    if st is None:
        quiet_us = stretch_us(p, step, step + n - 1, period, offset)
        d = p.step_us
    else:
        quiet_us = int(cum[n - 2]) if n > 1 else 0
        d = int(dd[0][n - 1])  # the step's compute; with its shadow overhead it ends at t0 + d + shadow_us
    kind, cost, info = _outcome(w, h, e, step + n, w.t + quiet_us, d, period, offset, s)
    if w.t + quiet_us + cost > until:
        if st is None:
            m = fit_steps(p, step, step + n - 1, until - w.t, period, offset) - step
        else:
            m = int(np.searchsorted(cum[:n - 1], until - w.t, side="right"))
        if m:
            _cross(w, m, period, offset, in_hyper, dd)
        return False
    if n > 1:
        _cross(w, n - 1, period, offset, in_hyper, dd, quiet_us)
    if dd is not None:
        unit_durations = tuple(a[n - 1:] for a in dd)
        w.account_steps(e - 1, unit_durations, 1, d)
    _apply(w, kind, cost, info, e, period, offset, in_hyper, s)
    return True


def _outcome(w: Work, h: int, e: int, q: int, t0: int, d: int, period: int, offset: int,
             s: int) -> tuple[int, int, tuple]:
    """How the unit of executed step ``e`` (job step ``q``, starting at ``t0``, compute ``d`` us) ends and what it
    costs, without changing anything (``h``, ``s``: the next hard-stream element and SDC candidate)."""
    p, x = w.p, w.ext
    d += p.shadow_us
    if h == e:  # a hard failure, or a shadow disagreement (shadow.py): a kind of stop
        index = w.hard.index()
        kind = w.cause_of(index)
        return _HARD, d + p.stop_detect_us[kind] + p.stop_restart_us[kind], (kind, index)
    onset = not w.corrupted and s == e
    deadline, det = x.sdc_deadline, x.sdc_detector
    if onset and p.committed:
        deadline, det = x.draws.draw(w.sdc.index(), t0 + d)
    corrupted = w.corrupted or onset
    if corrupted and deadline <= t0 + d:
        return _FOUND, d + p.sdc_restart_us, (deadline, det)
    val = bool(p.val_every) and q % p.val_every == 0
    cost = d + (p.val_us if val else 0)
    if val and corrupted and x.n_corrupt == 0:
        return _DETECTED, cost + p.sdc_restart_us, (deadline, det)
    ck = hyper.on_lattice(q, period, offset)
    if ck:
        cost += p.ckpt_us
        if corrupted and not p.committed:
            return _BAKED, cost + p.sdc_restart_us, (deadline, det)
    return _STEP, cost, (deadline, det)


def _cross(w: Work, m: int, period: int, offset: int, in_hyper: bool, dd, known_us: int | None = None) -> None:
    """Run m quiet steps; ``dd``: the durations of (at least) these steps under stragglers (None without);
    ``known_us``: their time, if the caller has it."""
    p, x, T = w.p, w.ext, w.totals
    a, b = w.step, w.step + m
    if dd is None:
        dur = stretch_us(p, a, b, period, offset) if known_us is None else known_us
    else:
        dur = stretch_us(p, a, b, period, offset) + w.account_steps(w.g, dd, m, int(dd[0][:m].sum()))
    T["steps_executed"] += m
    T["shadow_us"] += m * p.shadow_us
    if in_hyper:
        T["hyper_steps"] += m
    nc = hyper.points(a, b, period, offset)
    T["checkpoint_us"] += nc * p.ckpt_us
    T["checkpoints"] += nc
    if p.val_every:
        nv = b // p.val_every - a // p.val_every
        T["validations"] += nv
        T["validation_us"] += nv * p.val_us
    w.pending += m * p.step_us
    if nc:
        newest = offset + ((b - offset) // period) * period
        if not w.corrupted:
            _commit_clean(w, newest)
        else:  # committed SDC (the first checkpoint that took it was an interesting step)
            x.n_corrupt += nc
            x.corrupt_ckpts.extend(hyper.newest_points(a, b, period, offset, p.retention))
            del x.corrupt_ckpts[:-p.retention]
            w.last = newest
    w.t += dur
    w.step, w.g = b, w.g + m


def _commit_clean(w: Work, at: int) -> None:
    T = w.totals
    gained = at - w.last
    T["steps_committed"] += gained
    T["productive_us"] += gained * w.p.step_us
    w.pending -= gained * w.p.step_us
    w.last = w.ext.clean_ckpt = at


def _roll_to(w: Work, target: int) -> None:
    """Roll back to the checkpoint at ``target`` (<= last): the steps after it are recomputed."""
    T, p = w.totals, w.p
    lost = w.step - target
    T["steps_recomputed"] += lost
    T["rollback_us"] += lost * p.step_us
    w.pending -= lost * p.step_us
    w.step = target


def _apply(w: Work, kind: int, cost: int, info: tuple, e: int, period: int, offset: int, in_hyper: bool,
           s: int) -> None:
    p, x, T = w.p, w.ext, w.totals
    T["steps_executed"] += 1
    T["shadow_us"] += p.shadow_us
    if in_hyper:
        T["hyper_steps"] += 1
    q = w.step + 1
    w.g, w.step, w.t = e, q, w.t + cost
    w.pending += p.step_us
    if kind == _HARD:
        stop, index = info
        w.stopped(stop, index)  # counted, its recovery time, its event
        _roll_to(w, w.last)
        if w.corrupted and x.n_corrupt == 0:  # the SDC was not in a checkpoint: it is gone
            w.corrupted = False
            x.clear_sdc(w.last)
        if stop == p.shadow_kind and p.hyper_every:  # a disagreement is an SDC detection
            x.hyper_end, x.hyper_anchor = hyper.open_window(p, T, x.hyper_end, e, w.last)
        return
    if not w.corrupted and s == e:
        w.onset()
        x.sdc_onset = q
    x.sdc_deadline, x.sdc_detector = info
    val = bool(p.val_every) and q % p.val_every == 0
    if kind != _FOUND and val:
        T["validations"] += 1
        T["validation_us"] += p.val_us
    if kind == _FOUND:
        det = x.sdc_detector
        T["detector_finds"][det] += 1
        name = p.detector_names[det]
        if x.n_corrupt == 0:
            T["sdc_detected"] += 1
            target, event = w.last, "sdc_detected"
        else:
            target, lost, unrecoverable = late.rollback_target(p.retention, x.clean_ckpt, x.n_corrupt,
                                                               x.corrupt_ckpts)
            T["sdc_late_found"] += 1
            T["checkpoints_lost"] += lost
            event = "sdc_late_found"
            if unrecoverable:  # carry on from the oldest retained checkpoint, the SDC accepted
                T["sdc_unrecoverable"] += 1
                event = "sdc_unrecoverable"
                _roll_to(w, target)
                w.last = x.clean_ckpt
                _commit_clean(w, target)
            w.last = target
        _detected(w, target, e, Event(w.t, event, name) if w.trace else None)
        return
    if kind == _DETECTED:
        T["sdc_detected"] += 1
        _detected(w, w.last, e, Event(w.t, "sdc_detected") if w.trace else None)
        return
    if kind == _BAKED:
        T["checkpoint_us"] += p.ckpt_us
        T["sdc_baked"] += 1
        _detected(w, w.last, e, Event(w.t, "sdc_baked") if w.trace else None)
        return
    if hyper.on_lattice(q, period, offset):
        T["checkpoint_us"] += p.ckpt_us
        T["checkpoints"] += 1
        if not w.corrupted:
            _commit_clean(w, q)
        else:  # committed SDCs: the checkpoint takes the SDC with it
            if x.n_corrupt == 0:
                T["sdc_baked"] += 1
                if w.trace:
                    w.events.append(Event(w.t, "sdc_baked"))
            x.n_corrupt += 1
            x.corrupt_ckpts.append(q)
            del x.corrupt_ckpts[:-p.retention]
            w.last = q
    if q == p.target:
        _end_job(w)


def _detected(w: Work, target: int, e: int, event: Event | None) -> None:
    """An SDC found (validation, baked in at a checkpoint, a detector): restart from ``target``, open a window."""
    p, x, T = w.p, w.ext, w.totals
    T["restart_us"] += p.sdc_restart_us
    _roll_to(w, target)
    w.last = target
    w.corrupted = False
    x.clear_sdc(target)
    if p.hyper_every:
        x.hyper_end, x.hyper_anchor = hyper.open_window(p, T, x.hyper_end, e, target)
    if event is not None:
        w.events.append(event)


def _end_job(w: Work) -> None:
    x = w.ext
    if w.corrupted and x.n_corrupt:  # committed with checkpoints (counted baked in then): void since the clean one
        _roll_to(w, x.clean_ckpt)
        w.last = x.clean_ckpt
        w.corrupted = False
    w.end_job()  # an SDC in no checkpoint yet: baked in, its steps void (seed 000's end-of-job rule)
    x.clear_sdc(0)
    x.hyper_end = min(x.hyper_end, w.g)  # a job's end closes the hyper window
