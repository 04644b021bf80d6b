"""The segment walk (walk.py) compiled, for many replicas of one configuration at once (replicas.py drives it).

Every replica's state is one entry of each field's array (``pos``: R x NPOS int64; ``tot``: R x NT int64, the
Totals' columns; ``start``: the Totals at the start of each replica's current job), and its four streams are
pcg.words rows (``words``: R x NSTREAMS x 5 uint64, layout.Stream). The kernel runs walk.segment's
logic, statement for statement, for one replica after another: the same event order (hard failure -> SDC
onset -> validation -> checkpoint), the same geometric gaps (``ceil(log(1 - r) / log(1 - p))``, clipped to
[1, 2**50], as streams.gaps), the same cause draws (the cause stream's draw number = the hard failure's index,
``searchsorted(cumulative, 1 - r, "left")``), the same step durations (stepkernel.draw), and the same cut at
``until``: a unit (a step with its validation, checkpoint and recovery) is done only if it ends at or before
``until``. So each replica's state after a call equals the single-replica engine's (tests compare them bit for
bit), and the states do not depend on how time is cut into calls.

Per-call cost: the jumps to each stream's current draw (O(log n) each), then per event a few dozen integer
operations, per executed step under stragglers one draw (stepkernel.draw); no Python per replica or event.
"""

from __future__ import annotations

import math

import numpy as np

from simd.engine.jit import njit
from simd.engine.layout import Pos, Stream
from simd.engine.pcg import pcg64_next, seek, to_double
from simd.engine.stepkernel import FITTED, draw, run

NEVER = 1 << 62  # hazard.NEVER
GAP_CAP = float(1 << 50)  # streams._GAP_CAP

# columns of ``pos`` (layout.py: named after the State's fields) the kernel reads and writes
CLOCK, T, G, STEP, LAST, CORRUPTED, PENDING, HARD_I, HARD_P, SDC_I, SDC_P, JOB_G, JOB_T = (
    Pos.clock, Pos.t, Pos.g, Pos.step, Pos.last_ckpt, Pos.corrupted, Pos.pending_us, Pos.hard_i, Pos.hard_p, Pos.sdc_i,
    Pos.sdc_p, Pos.job_start_g, Pos.job_start_t)
# entries of ``col``: where each Totals counter sits among the columns of ``tot``
# (-1: the Totals has no such field)
(C_EXEC, C_COMMIT, C_RECOMP, C_CKPTS, C_VALS, C_ONSETS, C_DET, C_BAKED, C_PROD, C_ROLL, C_CKPT_US, C_VAL_US,
 C_RESTART, C_DETECT, C_STRAG, C_JOBS, C_REPLACED, C_INTERR, C_HIST, C_INTERR_TYPE, C_ONSET_TYPE) = range(21)
NCOL = 21
# entries of ``plan_i`` (int64 constants of the shared plan)
# (P_BUCKET: the step-time histogram's bucket of every step without stragglers, spec.Plan.step_bucket)
(P_STEP, P_CKPT, P_VAL, P_SDC_RESTART, P_TARGET, P_C, P_V, P_SLOW_STEPS, P_SLOW_RANKS, P_HAS_ST, P_NCAUSE,
 P_MAX_JOBS, P_BUCKET) = range(13)
NPLAN = 13
HARD, SDC, END = 0, 1, 2
# The prefix path (crn.py): cumulative bucket counts are kept every PREFIX_STRIDE executed steps, the steps in
# between counted from their buckets (at most PREFIX_STRIDE - 1 one-byte reads per end of a stretch, against
# 1.4 bytes per step for the rows of counts: 11 int64 every 64 steps).
PREFIX_STRIDE = 64


@njit()
def gap_of(u, log1m):
    """The geometric gap of uniform ``u`` in (0, 1] (streams.gaps: ``ceil(log(u) / log1m)`` in [1, 2**50])."""
    gap = math.ceil(math.log(u) / log1m)
    if gap < 1.0:
        gap = 1.0
    elif gap > GAP_CAP:
        gap = GAP_CAP
    return np.int64(gap)


@njit()
def _gap(sh, sl, ih, il, log1m):
    sh, sl, x = pcg64_next(sh, sl, ih, il)
    return sh, sl, gap_of(1.0 - to_double(x), log1m)


@njit()
def _ceil_mult(q, m):
    return -(-q // m) * m


@njit()
def _stretch(a, m, step_us, c, ckpt_us, v, val_us):
    t = (m - a) * step_us + (m // c - a // c) * ckpt_us
    if v:
        t += (m // v - a // v) * val_us
    return t


@njit()
def _fit_steps(a, b, budget, step_us, c, ckpt_us, v, val_us):
    """The largest m in [a, b] whose clean stretch a+1..m takes at most ``budget`` (walk.fit_steps)."""
    lo, hi = a, b
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if _stretch(a, mid, step_us, c, ckpt_us, v, val_us) <= budget:
            lo = mid
        else:
            hi = mid - 1
    return lo


@njit()
def _counts(ph, pb, p0, x, sign, hist):
    """Add ``sign`` times the bucket counts of executed steps 1 .. x to ``hist``, from a prefix window that
    starts at executed step ``p0`` (a multiple of PREFIX_STRIDE; crn.py): the row of counts at the last
    multiple of the stride, then the steps after it one by one."""
    j = x // PREFIX_STRIDE
    row = j - p0 // PREFIX_STRIDE
    for k in range(len(hist)):
        hist[k] += sign * ph[row, k]
    for y in range(j * PREFIX_STRIDE + 1, x + 1):
        hist[pb[y - p0]] += sign


@njit(nogil=True)  # nogil: the daemon's HTTP threads answer scrapes while a tick runs
def advance_all(until, pos, tot, start, words, log1m, plan_i, col, cause_cum, cause_det, cause_rst,
                ha, hb, hc, hf, sa, sb, sc, sf, base, bounds, hist_scratch):
    """Advance every replica to ``until`` (or, with plan_i[P_MAX_JOBS] >= 0, until that many jobs are complete
    in total: the clock then stays at the end of the last one, as core.advance's max_jobs)."""
    for r in range(pos.shape[0]):
        _advance_one(r, until, pos, tot, start, words, log1m, plan_i, col, cause_cum, cause_det, cause_rst,
                     ha, hb, hc, hf, sa, sb, sc, sf, base, bounds, hist_scratch)


@njit()
def _advance_one(r, until, pos, tot, start, words, log1m, plan_i, col, cause_cum, cause_det, cause_rst,
                 ha, hb, hc, hf, sa, sb, sc, sf, base, bounds, hist, prefix=None):
    """Replica ``r`` to ``until``. Returns 0, or with ``prefix`` (crn.py's window of step durations: cumulative
    durations ``pd``, buckets ``pb`` and bucket counts ``ph`` of executed steps p0 .. p0 + len(pd) - 1) the
    executed step the next stretch needs when the window ends before it: the replica's state is then written
    as between two calls (its clock untouched) and a call with the window extended carries on from there,
    with the result of one uninterrupted call. The prefix holds one job's durations from g = 0 (the slow
    ranks in its first slow_steps), so it serves a replica's first job only."""
    step_us, ckpt_us, val_us = plan_i[P_STEP], plan_i[P_CKPT], plan_i[P_VAL]
    sdc_restart_us, target, C, V = plan_i[P_SDC_RESTART], plan_i[P_TARGET], plan_i[P_C], plan_i[P_V]
    slow_steps, slow_ranks, has_st = plan_i[P_SLOW_STEPS], plan_i[P_SLOW_RANKS], plan_i[P_HAS_ST] != 0
    bucket = plan_i[P_BUCKET]
    ncause, max_jobs = plan_i[P_NCAUSE], plan_i[P_MAX_JOBS]
    hard_log1m, sdc_log1m = log1m[0], log1m[1]
    tr = tot[r]
    c_exec, c_commit, c_recomp, c_ckpts = col[C_EXEC], col[C_COMMIT], col[C_RECOMP], col[C_CKPTS]
    c_vals, c_onsets, c_det, c_baked = col[C_VALS], col[C_ONSETS], col[C_DET], col[C_BAKED]
    c_prod, c_roll, c_ckpt_us, c_val_us = col[C_PROD], col[C_ROLL], col[C_CKPT_US], col[C_VAL_US]
    c_restart, c_detect, c_strag, c_jobs = col[C_RESTART], col[C_DETECT], col[C_STRAG], col[C_JOBS]
    c_replaced, c_interr, c_hist = col[C_REPLACED], col[C_INTERR], col[C_HIST]
    c_interr_type, c_onset_type = col[C_INTERR_TYPE], col[C_ONSET_TYPE]  # one accelerator type: index 0

    t, g, step, last = pos[r, T], pos[r, G], pos[r, STEP], pos[r, LAST]
    corrupted, pending = pos[r, CORRUPTED] != 0, pos[r, PENDING]
    hi_, hp = pos[r, HARD_I], pos[r, HARD_P]
    si_, sp = pos[r, SDC_I], pos[r, SDC_P]
    job_g, job_t = pos[r, JOB_G], pos[r, JOB_T]
    wh, ws, wc, wst = words[r, Stream.hard], words[r, Stream.sdc], words[r, Stream.cause], words[r, Stream.step_times]
    st_dx = wst[4] == np.uint64(1)
    # each stream's generator, at the draw that gives its next element's gap (index + 1)
    hh, hl = seek(wh, hi_ + 1) if hard_log1m != 0.0 else (np.uint64(0), np.uint64(0))
    sh_, sl_ = seek(ws, si_ + 1) if sdc_log1m != 0.0 else (np.uint64(0), np.uint64(0))
    cause_at = -1
    ch, cl = np.uint64(0), np.uint64(0)
    st_at = -1
    xh, xl = np.uint64(0), np.uint64(0)
    d_e, k_e = 0, 0
    clock = until
    need = 0

    while True:
        if max_jobs >= 0 and tr[c_jobs] >= max_jobs:
            clock = t
            break
        # -- segment(): what ends it --------------------------------------------------------------------
        if hard_log1m != 0.0:
            while hp <= g:
                hh, hl, gap = _gap(hh, hl, wh[2], wh[3], hard_log1m)
                hi_ += 1
                hp += gap
        h = hp
        s = NEVER
        d = NEVER
        if corrupted:
            q0 = step + 1
        else:
            if sdc_log1m != 0.0:
                while sp <= g:
                    sh_, sl_, gap = _gap(sh_, sl_, ws[2], ws[3], sdc_log1m)
                    si_ += 1
                    sp += gap
            s = sp
            q0 = step + (s - g) if s < h else 0
        if q0:
            detect = _ceil_mult(q0, C)
            if V:
                detect = min(detect, _ceil_mult(q0, V))
            d = g + (detect - step)
        g_end = g + (target - step)
        if h <= d and h <= g_end:
            kind, e = HARD, h
        elif d <= g_end:
            kind, e = SDC, d
        else:
            kind, e = END, g_end
        q_e = step + (e - g)
        caught = kind == SDC and V != 0 and q_e % V == 0
        cause = 0
        if kind == HARD:
            if ncause > 1:
                if cause_at != hi_:
                    ch, cl = seek(wc, hi_)
                ch, cl, x = pcg64_next(ch, cl, wc[2], wc[3])
                cause_at = hi_ + 1
                u = 1.0 - to_double(x)
                while cause < ncause and cause_cum[cause] < u:
                    cause += 1
                cause = min(cause, ncause - 1)
            unit = step_us + cause_det[cause] + cause_rst[cause]
        elif kind == SDC:
            unit = step_us + (val_us if caught else ckpt_us) + sdc_restart_us
        else:
            unit = step_us
            if V and q_e % V == 0:
                unit += val_us
            if q_e % C == 0:
                unit += ckpt_us

        # -- the quiet steps step+1 .. q_e-1, then the unit of step q_e, as far as they fit ---------------
        n_q = q_e - 1 - step
        budget = until - t
        excess = 0
        n_done = n_q
        fits = True
        if has_st:
            if prefix is not None:  # a compile-time branch: numba prunes it when prefix is None
                pd, pb, ph, p0 = prefix
                if job_g != 0 or g < p0:
                    raise ValueError("the prefix path runs a replica's first job, from a window that covers it")
                if e - p0 >= len(pd):
                    need = e
                    break
                i0 = g - p0
                # every quiet step if they all fit, else the most that do (their time grows with their number)
                used = pd[i0 + n_q] - pd[i0] + _stretch(step, q_e - 1, 0, C, ckpt_us, V, val_us)
                if used > budget:
                    fits = False
                    lo, hi = 0, n_q - 1
                    while lo < hi:
                        mid = (lo + hi + 1) // 2
                        if pd[i0 + mid] - pd[i0] + _stretch(step, step + mid, 0, C, ckpt_us, V, val_us) <= budget:
                            lo = mid
                        else:
                            hi = mid - 1
                    n_done = lo
                    used = pd[i0 + n_done] - pd[i0] + _stretch(step, step + n_done, 0, C, ckpt_us, V, val_us)
                excess = pd[i0 + n_done] - pd[i0] - n_done * step_us
                for k in range(len(hist)):
                    hist[k] = 0
                _counts(ph, pb, p0, g + n_done, 1, hist)
                _counts(ph, pb, p0, g, -1, hist)
                if fits:  # the event step's own duration
                    d_e = pd[e - p0] - pd[e - p0 - 1]
                    k_e = np.int64(pb[e - p0])
                    unit += d_e - step_us
                    if used + unit > budget:
                        fits = False
            else:
                if st_at != g:
                    xh, xl = seek(wst, g)
                slow = max(0, min(n_q, job_g + slow_steps - g))
                for k in range(len(hist)):
                    hist[k] = 0
                xh, xl, m, used, total, how, _, _ = run(xh, xl, wst[2], wst[3], st_dx, step, q_e - 1, budget, C, 0,
                                                        ckpt_us, V, val_us, slow, 0, NEVER, ha, hb, hc, hf, sa, sb,
                                                        sc, sf, base, bounds, hist)
                fits = how == FITTED
                st_at = g + (m - step) + (0 if fits else 1)
                n_done = m - step
                excess = total - n_done * step_us
                if fits:  # the event step's own duration
                    slow_e = 1 if e - 1 < job_g + slow_steps else 0
                    if slow_e:
                        xh, xl, d_e, k_e = draw(xh, xl, wst[2], wst[3], st_dx, sa, sb, sc, sf, base, bounds)
                    else:
                        xh, xl, d_e, k_e = draw(xh, xl, wst[2], wst[3], st_dx, ha, hb, hc, hf, base, bounds)
                    st_at += 1
                    unit += d_e - step_us
                    if used + unit > budget:
                        fits = False
        else:
            quiet_us = _stretch(step, q_e - 1, step_us, C, ckpt_us, V, val_us)
            if quiet_us + unit > budget:
                fits = False
                n_done = _fit_steps(step, q_e - 1, budget, step_us, C, ckpt_us, V, val_us) - step

        # _quiet(n_done steps), the SDC onset among them (onset_at = s)
        if n_done > 0:
            a, b = step, step + n_done
            dur = _stretch(a, b, step_us, C, ckpt_us, V, val_us)
            if has_st:
                dur += excess
                tr[c_strag] += excess
                for k in range(len(hist)):
                    tr[c_hist + k] += hist[k]
                lim = job_g + slow_steps
                if slow_ranks and slow_steps < NEVER and g < lim <= g + n_done:
                    tr[c_replaced] += slow_ranks
            else:  # every step in one bucket (work.Work.pack)
                tr[c_hist + bucket] += n_done
            nc = b // C - a // C
            tr[c_exec] += n_done
            tr[c_ckpt_us] += nc * ckpt_us
            if V:
                nv = b // V - a // V
                tr[c_vals] += nv
                tr[c_val_us] += nv * val_us
            pending += n_done * step_us
            if nc:
                new_last = (b // C) * C
                gained = new_last - last
                tr[c_commit] += gained
                tr[c_prod] += gained * step_us
                tr[c_ckpts] += nc
                pending -= gained * step_us
                last = new_last
            t += dur
            step = b
            g += n_done
            if not corrupted and s <= g:
                corrupted = True
                tr[c_onsets] += 1
                if c_onset_type >= 0:
                    tr[c_onset_type] += 1
        if not fits:
            break

        # the unit of step q_e
        if has_st:
            tr[c_strag] += d_e - step_us
            tr[c_hist + k_e] += 1
            lim = job_g + slow_steps
            if slow_ranks and slow_steps < NEVER and e - 1 < lim <= e:
                tr[c_replaced] += slow_ranks
        else:
            tr[c_hist + bucket] += 1
        tr[c_exec] += 1
        g, step, t = e, q_e, t + unit
        pending += step_us
        if kind == HARD:
            tr[c_detect] += cause_det[cause]
            tr[c_restart] += cause_rst[cause]
            tr[c_interr + cause] += 1
            if c_interr_type >= 0:
                tr[c_interr_type] += 1
            tr[c_recomp] += q_e - last
            tr[c_roll] += pending
            step, pending, corrupted = last, 0, False
            continue
        if not corrupted and s == e:
            corrupted = True
            tr[c_onsets] += 1
            if c_onset_type >= 0:
                tr[c_onset_type] += 1
        if V and q_e % V == 0:
            tr[c_vals] += 1
            tr[c_val_us] += val_us
        if kind == SDC:
            if not caught:
                tr[c_ckpt_us] += ckpt_us
            if caught:
                tr[c_det] += 1
            else:
                tr[c_baked] += 1
            tr[c_restart] += sdc_restart_us
            tr[c_recomp] += q_e - last
            tr[c_roll] += pending
            step, pending, corrupted = last, 0, False
            continue
        if q_e % C == 0:
            tr[c_ckpt_us] += ckpt_us
            tr[c_ckpts] += 1
            tr[c_commit] += q_e - last
            tr[c_prod] += pending
            last, pending = q_e, 0
        # end_job()
        lost = step - last
        if corrupted:
            tr[c_baked] += 1
            tr[c_recomp] += lost
            tr[c_roll] += pending
            step, pending, corrupted = last, 0, False
        else:
            tr[c_commit] += lost
            tr[c_prod] += pending
        tr[c_jobs] += 1
        # element by element: a slice assignment compiles numba's shape-mismatch error path (simd.engine.kernels)
        for k in range(len(tr)):
            start[r, k] = tr[k]
        job_t, job_g = t, g
        step = last = pending = 0
        corrupted = False

    # to_state(): each stream's next element after g
    if hard_log1m != 0.0:
        while hp <= g:
            hh, hl, gap = _gap(hh, hl, wh[2], wh[3], hard_log1m)
            hi_ += 1
            hp += gap
    if sdc_log1m != 0.0:
        while sp <= g:
            sh_, sl_, gap = _gap(sh_, sl_, ws[2], ws[3], sdc_log1m)
            si_ += 1
            sp += gap
    if need == 0:
        pos[r, CLOCK] = clock
    pos[r, T], pos[r, G], pos[r, STEP], pos[r, LAST] = t, g, step, last
    pos[r, CORRUPTED], pos[r, PENDING] = 1 if corrupted else 0, pending
    pos[r, HARD_I], pos[r, HARD_P], pos[r, SDC_I], pos[r, SDC_P] = hi_, hp, si_, sp
    pos[r, JOB_G], pos[r, JOB_T] = job_g, job_t
    return need
