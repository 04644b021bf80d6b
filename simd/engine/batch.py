"""The numpy path: many whole segments at once, when validation divides the checkpoint interval.

When validation divides the checkpoint interval (or there is none: ``Plan.vectorizable``), every detection
point lies on a lattice of period V (or C) anchored at the last hard failure, so the SDC detections between
two hard failures are the lattice cells holding a candidate, and the segment boundaries need no sequential
walk: they are computed for a whole window of the event streams at once.

Promises: ``batch`` starts only from a clean segment start (no SDC present, nothing uncommitted) and leaves
the Work exactly where the segment walk (walk.py) would after the same segments, counters and events
included (tests compare the two); it never crosses a job's end or ``until``, and returns 0 when it cannot
complete a segment, so the caller falls back to the walk.
"""

from __future__ import annotations

import numpy as np

from simd.engine.hazard import NEVER
from simd.engine.results import Event
from simd.engine.streams import uniforms
from simd.engine.work import Work

WINDOW = 1 << 18  # at most this many steps per batch under stragglers (their durations are computed at once)


def worth_a_batch(w: Work, until_us: int) -> bool:
    """Whether a failure or SDC can happen before ``until`` (else the segment walk crosses it in O(1))."""
    reach = w.g + (until_us - w.t) // w.p.step_us + 1  # no more steps than this fit before until
    return min(w.hard.next_after(w.g), w.sdc.next_after(w.g)) <= reach


def batch(w: Work, until: int) -> int:
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
        horizon = min(horizon, r0 + min(WINDOW, (until - w.t) // p.step_us + 1))
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
    hard_pos = np.cumsum(~is_sdc) - 1  # index among this batch's hard failures (and shadow disagreements)
    if len(p.stop_cumulative) > 1 and len(He):  # the kind of each: its cause, or a disagreement (shadow.py)
        u = uniforms(p.cause_stream, w.hard.index(), len(He))
        causes = np.minimum(np.searchsorted(p.stop_cumulative, u), len(p.stop_cumulative) - 1)
    else:
        causes = np.zeros(len(He), dtype=np.int64)
    seg_cause = causes[np.maximum(hard_pos, 0)] if len(He) else np.zeros(len(E), dtype=np.int64)
    hard_extra = (np.asarray(p.stop_detect_us) + np.asarray(p.stop_restart_us))[seg_cause]
    extra = np.where(is_sdc, p.sdc_restart_us, hard_extra)
    dur = n * (p.step_us + p.shadow_us) + nval * p.val_us + nckpt * p.ckpt_us + extra
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
    onset_segments = is_sdc_ | (hi > lo)  # each segment's onset is its first candidate (it starts clean)

    T["steps_executed"] += int(n_.sum())
    T["shadow_us"] += int(n_.sum()) * p.shadow_us
    T["steps_committed"] += C * int(ncommit_.sum())
    T["steps_recomputed"] += int(recompute.sum())
    T["checkpoints"] += int(ncommit_.sum())
    T["validations"] += int(nval[sl].sum())
    w.onsets_counted(w.sdc.index() + lo[onset_segments])
    if V:
        T["sdc_detected"] += sdc_n
    else:
        T["sdc_baked"] += sdc_n
    w.stops_counted(causes[:hard_n], w.hard.index())  # interruptions or disagreements, their recovery time
    T["productive_us"] += C * int(ncommit_.sum()) * p.step_us
    T["rollback_us"] += int(recompute.sum()) * p.step_us
    T["checkpoint_us"] += int(nckpt[sl].sum()) * p.ckpt_us
    T["validation_us"] += int(nval[sl].sum()) * p.val_us
    T["restart_us"] += sdc_n * p.sdc_restart_us
    if w.trace:
        for i in range(cnt):
            if is_sdc[i]:
                w.events.append(Event(int(t_end[i]), "sdc_detected" if V else "sdc_baked"))
            elif int(seg_cause[i]) == p.shadow_kind:
                w.events.append(Event(int(t_end[i]), "sdc_detected", "shadow"))
            else:
                w.events.append(Event(int(t_end[i]), "interruption", p.cause_names[int(seg_cause[i])]))
    if st is not None:
        w.account_steps(r0, steps, int(E[cnt - 1]) - r0, int(seg_steps_us[:cnt].sum()))
    w.g = int(E[cnt - 1])
    w.step = w.last = int(k[cnt - 1] + C * ncommit[cnt - 1])
    w.t = int(t_end[cnt - 1])
    return cnt
