"""The scalar path: the segment walk, one segment at a time, for every configuration.

Between two rollbacks the job runs a *segment*: clean steps with their validations and checkpoints
(commits), possibly an SDC onset, and then the event that ends it. A segment's clean stretch is crossed in
closed form (``stretch_us``), so the cost grows with failures and SDCs, not with steps.

Order within a step, as seed 000's loop: (a) hard failure -> roll back to the last clean checkpoint,
detect, restart; (b) SDC onset (silent; not on a step that failed); (c) validation point: pay validation, a
present SDC is *detected* -> roll back, restart; (d) checkpoint point (unless (c) rolled back): pay the
checkpoint, a present SDC is *baked in* -> roll back, restart, else commit. At the target step the job ends;
an SDC still present then is counted baked in and its steps void (the seed's end-of-job rule), and the next
job starts.

Promises: ``segment`` handles every Plan without hyper-checkpointing or committed SDCs and is the definition
the compiled loop (xkernel.py, which core.advance runs through single.py) is tested against; it completes exactly the
units (a step with its validation, checkpoint and recovery) that end at or before ``until``, so any cut of
time into calls gives the same Work.
"""

from __future__ import annotations

import numpy as np

from simd.engine.hazard import NEVER
from simd.engine.results import Event
from simd.engine.spec import Plan
from simd.engine.work import Work

_HARD, _SDC, _END = 0, 1, 2  # what ends a segment
CHUNK = 1 << 16  # steps whose durations are computed at once under stragglers (bounds the memory per call)


def stretch_us(plan: Plan, a: int, m: int) -> int:
    """Time of the clean steps a+1..m of a job with their validations and checkpoints (closed form)."""
    t = (m - a) * (plan.step_us + plan.shadow_us) + (m // plan.ckpt_every - a // plan.ckpt_every) * plan.ckpt_us
    if plan.val_every:
        t += (m // plan.val_every - a // plan.val_every) * plan.val_us
    return t


def fit_steps(plan: Plan, a: int, b: int, budget_us: int) -> int:
    """The largest m in [a, b] whose clean stretch a+1..m takes at most ``budget_us``.

    A first guess from the mean cost of a step (pauses included) is within a few steps; a short walk
    settles it, and a binary search takes over should the walk be long."""
    mean = (plan.step_us + plan.shadow_us + plan.ckpt_us / plan.ckpt_every
            + (plan.val_us / plan.val_every if plan.val_every else 0))
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


def _fit(w: Work, a: int, b: int, budget: int) -> int:
    """The largest m in [a, b] such that job steps a+1..m (from the current g) take <= budget."""
    p = w.p
    if p.step_times is None:
        return fit_steps(p, a, b, budget)
    g, m = w.g, a
    while m < b:
        n = min(b - m, CHUNK)
        q = np.arange(m + 1, m + n + 1)
        cost = w.durations(g + (m - a), n)[0] + np.where(q % p.ckpt_every == 0, p.ckpt_us, 0)
        if p.val_every:
            cost += np.where(q % p.val_every == 0, p.val_us, 0)
        cum = np.cumsum(cost)
        if cum[-1] <= budget:
            budget -= int(cum[-1])
            m += n
            continue
        return m + int(np.searchsorted(cum, budget, side="right"))
    return m


def _quiet(w: Work, m: int, onset_at: int, known=None) -> int:
    """Run m clean steps (their validations and checkpoints); an SDC sets in at g == onset_at.
    ``known``: the durations of (at least) these steps, if the caller has them already."""
    p, T = w.p, w.totals
    a, b = w.step, w.step + m
    dur = stretch_us(p, a, b)
    if known is not None:
        dur += w.account_steps(w.g, known, m, int(known[0][:m].sum()))
    elif p.step_times is not None:
        for g0 in range(w.g, w.g + m, CHUNK):
            n = min(CHUNK, w.g + m - g0)
            d = w.durations(g0, n)
            dur += w.account_steps(g0, d, n, int(d[0].sum()))
    nc = b // p.ckpt_every - a // p.ckpt_every
    T["steps_executed"] += m
    T["shadow_us"] += m * p.shadow_us
    T["checkpoint_us"] += nc * p.ckpt_us
    if p.val_every:
        nv = b // p.val_every - a // p.val_every
        T["validations"] += nv
        T["validation_us"] += nv * p.val_us
    w.pending += m * p.step_us
    if nc:  # every checkpoint before an onset is clean (no point lies between an onset and its detection)
        new_last = (b // p.ckpt_every) * p.ckpt_every
        gained = new_last - w.last
        T["steps_committed"] += gained
        T["productive_us"] += gained * p.step_us
        T["checkpoints"] += nc
        w.pending -= gained * p.step_us
        w.last = new_last
    w.t += dur
    w.step, w.g = b, w.g + m
    if not w.corrupted and onset_at <= w.g:
        w.onset()
    return dur


def segment(w: Work, until: int) -> bool:
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
    if kind == _HARD:  # a hard failure, or a shadow disagreement (shadow.py): a kind of stop
        index = w.hard.index()
        cause = w.cause_of(index)
        unit = p.step_us + p.stop_detect_us[cause] + p.stop_restart_us[cause]
    elif kind == _SDC:
        unit = p.step_us + (p.val_us if caught else p.ckpt_us) + p.sdc_restart_us
    else:
        unit = p.step_us + (p.val_us if V and q_e % V == 0 else 0) + (p.ckpt_us if q_e % C == 0 else 0)

    unit += excess_e + p.shadow_us
    if p.step_times is not None and q_e - 1 - step > CHUNK:
        # a long quiet stretch under stragglers: cross it a chunk at a time (memory stays bounded)
        m = _fit(w, step, step + CHUNK, until - w.t)
        if m > step:
            _quiet(w, m - step, s)
        return m == step + CHUNK
    quiet_us = stretch_us(p, step, q_e - 1)
    known = None
    if p.step_times is not None and q_e - 1 > step:
        known = w.durations(g, q_e - 1 - step)
        quiet_us += int(known[0].sum()) - (q_e - 1 - step) * p.step_us
    if w.t + quiet_us + unit > until:
        m = _fit(w, step, q_e - 1, until - w.t)
        if m > step:
            _quiet(w, m - step, s, known)
        return False
    if q_e - 1 > step:
        _quiet(w, q_e - 1 - step, s, known)
    # the unit of step q_e
    if d_e is not None:
        w.account_steps(e - 1, d_e, 1, int(d_e[0][0]))
    T["steps_executed"] += 1
    T["shadow_us"] += p.shadow_us
    w.g, w.step, w.t = e, q_e, w.t + unit
    w.pending += p.step_us
    if kind == _HARD:
        w.stopped(cause, index)
        w.rollback(q_e - w.last)
        return True
    if not w.corrupted and s == e:
        w.onset()
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
