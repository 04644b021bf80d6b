"""The extended walk (xwalk.py) compiled: hyper-checkpointing, committed SDCs, shadow ranks and fleets, with or
without stragglers, at 0.1-0.5 us per event.

``advance(w, until)`` moves a Work (no per-event trace) the way xwalk.segment does, segment after segment, in one
numba kernel: the same interesting steps (hard failure or shadow disagreement, SDC onset, validation or
checkpoint point of an SDC in no checkpoint yet, a detector's finding, the end of a hyper window, the job's end),
the same closed-form quiet stretches (hyper.points, xwalk.stretch_us, xwalk.fit_steps), the same cut at ``until``
(a unit is done only if it ends at or before it), and the same draws. Under stragglers there is no closed form:
the kernel draws each executed step's duration once, in order (stepkernel.draw, the slow ranks' table for the
first slow_steps of a job), and decides the unit, a detector's finding and the cut at ``until`` on the drawn
times as xwalk.segment does (its reference then; tests compare them bit for bit over any cut). The draws:

- hard failures and SDC candidates: the geometric gaps of streams.gaps, ``ceil(log(1 - r) / log(1 - p))``
  clipped to [1, 2**50], from the stream's draw number ``index`` (pcg.py's PCG64);
- the kind of hard-stream element ``index`` (a cause, or a shadow disagreement): draw ``index`` of the cause
  stream, ``searchsorted(stop_cumulative, 1 - r, "left")`` (Work.cause_of); its accelerator type and the type of
  an SDC onset: draw ``index`` of "accel-hard" / "accel-sdc" the same way (fleet.type_of), only with several;
- a committed SDC's detectors: draws ``2 * nd * index`` .. of "sdc-detect", two per detector (coverage, latency),
  the latency by late.latency_us's inverse transforms; the lognormal's standard normal quantile is
  statistics.NormalDist.inv_cdf's algorithm (Wichura 1988, AS241), transcribed with its coefficients and its
  order of operations, so it gives the same doubles (tests compare it with the standard library's).

It returns before the unit of a job's last step: the job's end builds a JobResult (Python objects), so
xwalk.run finishes that segment with xwalk.segment, which runs the same trajectory (a test compares them). The
kernel produces no Event objects: with ``trace`` xwalk.run keeps to the Python path. Tests compare states,
totals and job results with xwalk.segment bit for bit, over any cut of time into calls.

Per call: a seek of each stream to its current draw (O(log n)) and the packing of the Work into arrays; per
event a few dozen integer operations, no Python.
"""

from __future__ import annotations

import math
from operator import itemgetter

import numpy as np

from simd.engine import pcg, stepkernel
from simd.engine.hazard import NEVER
from simd.engine.jit import njit
from simd.engine.late import _BELOW_ONE, _LATENCY_CAP_US
from simd.engine.replkernel import gap_of
from simd.engine.replplan import _NO_TABLES  # the placeholder step-time tables: one signature with or without
from simd.engine.stragglers import BUCKET_FACTORS
from simd.engine.streams import Buffer

# ``pos``: the Work's positions (and its Ext's) in and out
# (JOB_START_G: read only, the executed steps before the current job: its first slow_steps have the slow ranks)
(T, G, STEP, LAST, CORRUPTED, CLEAN, HYPER_END, ANCHOR, N_CORRUPT, DEADLINE, ONSET, DETECTOR, HARD_I, HARD_P,
 SDC_I, SDC_P, RING_HEAD, RING_N, JOB_START_G) = range(19)
NPOS = 19
# ``tot``: the Totals' scalar counters the walk changes, then the per-cause interruptions, the interruptions and
# SDC onsets per accelerator type and the finds per detector (their offsets in ``plan_i``)
SCALARS = ("steps_executed", "steps_committed", "steps_recomputed", "checkpoints", "validations", "sdc_onsets",
           "sdc_detected", "sdc_baked", "productive_us", "rollback_us", "checkpoint_us", "validation_us",
           "restart_us", "detection_us", "shadow_detected", "shadow_us", "hyper_activations", "hyper_steps",
           "sdc_late_found", "sdc_unrecoverable", "checkpoints_lost", "straggler_us", "stragglers_replaced")
(C_EXEC, C_COMMIT, C_RECOMP, C_CKPTS, C_VALS, C_ONSETS, C_DET, C_BAKED, C_PROD, C_ROLL, C_CKPT_US, C_VAL_US,
 C_RESTART, C_DETECT, C_SHADOW_DET, C_SHADOW_US, C_HYPER_ACT, C_HYPER_STEPS, C_LATE, C_UNREC, C_LOST, C_STRAG,
 C_REPLACED) = range(len(SCALARS))
VECTORS = ("interruptions", "interruptions_by_type", "sdc_onsets_by_type", "detector_finds", "step_hist")
_scalars_of = itemgetter(*SCALARS)
# ``plan_i``: the plan's int64 constants
(P_STEP, P_SHADOW, P_CKPT, P_VAL, P_V, P_C, P_H, P_TARGET, P_RESTART, P_COMMITTED, P_WINDOW, P_RETENTION,
 P_SHADOW_KIND, P_O_INTERR, P_O_INTERR_TYPE, P_O_ONSET_TYPE, P_O_FINDS, P_O_HIST, P_HAS_ST, P_SLOW_STEPS,
 P_SLOW_RANKS) = range(21)
# rows of ``words``: the streams (pcg.words)
W_HARD, W_SDC, W_CAUSE, W_HARD_TYPE, W_SDC_TYPE, W_DETECT, W_STRAG = range(7)
DISTRIBUTIONS = ("exponential", "lognormal", "uniform")  # late.latency_us's, as codes 0, 1, 2
UNTIL, JOB_END = 0, 1  # why the kernel returned
_HARD, _FOUND, _DETECTED, _BAKED, _STEP = range(5)  # xwalk's unit kinds


@njit()
def _next(w, sh, sl):
    """One draw of stream ``w`` (PCG64 or PCG64DXSM) from state (sh, sl): the new state, the uniform in (0, 1]."""
    if w[4] == np.uint64(1):
        sh, sl, x = pcg.dxsm_next(sh, sl, w[2], w[3])
    else:
        sh, sl, x = pcg.pcg64_next(sh, sl, w[2], w[3])
    return sh, sl, 1.0 - pcg.to_double(x)


@njit()
def _gap(w, sh, sl, log1m):
    """streams.gaps for one draw."""
    sh, sl, u = _next(w, sh, sl)
    return sh, sl, gap_of(u, log1m)


@njit()
def _bucket(cum, u):
    """``min(searchsorted(cum, u, "left"), len(cum) - 1)``."""
    k = 0
    while k < len(cum) - 1 and cum[k] < u:
        k += 1
    return k


@njit()
def inv_cdf(p):
    """statistics.NormalDist().inv_cdf(p) for 0 < p < 1 (the standard library's _normal_dist_inv_cdf, mu 0,
    sigma 1: Wichura, M.J. (1988), Algorithm AS241, Applied Statistics 37(3), 477-484), operation for operation."""
    q = p - 0.5
    if math.fabs(q) <= 0.425:
        r = 0.180625 - q * q
        num = (((((((2.5090809287301226727e+3 * r +
                     3.3430575583588128105e+4) * r +
                     6.7265770927008700853e+4) * r +
                     4.5921953931549871457e+4) * r +
                     1.3731693765509461125e+4) * r +
                     1.9715909503065514427e+3) * r +
                     1.3314166789178437745e+2) * r +
                     3.3871328727963666080e+0) * q
        den = (((((((5.2264952788528545610e+3 * r +
                     2.8729085735721942674e+4) * r +
                     3.9307895800092710610e+4) * r +
                     2.1213794301586595867e+4) * r +
                     5.3941960214247511077e+3) * r +
                     6.8718700749205790830e+2) * r +
                     4.2313330701600911252e+1) * r +
                     1.0)
        return 0.0 + (num / den) * 1.0
    r = p if q <= 0.0 else 1.0 - p
    r = math.sqrt(-math.log(r))
    if r <= 5.0:
        r = r - 1.6
        num = (((((((7.74545014278341407640e-4 * r +
                     2.27238449892691845833e-2) * r +
                     2.41780725177450611770e-1) * r +
                     1.27045825245236838258e+0) * r +
                     3.64784832476320460504e+0) * r +
                     5.76949722146069140550e+0) * r +
                     4.63033784615654529590e+0) * r +
                     1.42343711074968357734e+0)
        den = (((((((1.05075007164441684324e-9 * r +
                     5.47593808499534494600e-4) * r +
                     1.51986665636164571966e-2) * r +
                     1.48103976427480074590e-1) * r +
                     6.89767334985100004550e-1) * r +
                     1.67638483018380384940e+0) * r +
                     2.05319162663775882187e+0) * r +
                     1.0)
    else:
        r = r - 5.0
        num = (((((((2.01033439929228813265e-7 * r +
                     2.71155556874348757815e-5) * r +
                     1.24266094738807843860e-3) * r +
                     2.65321895265761230930e-2) * r +
                     2.96560571828504891230e-1) * r +
                     1.78482653991729133580e+0) * r +
                     5.46378491116411436990e+0) * r +
                     6.65790464350110377720e+0)
        den = (((((((2.04426310338993978564e-15 * r +
                     1.42151175831644588870e-7) * r +
                     1.84631831751005468180e-5) * r +
                     7.86869131145613259100e-4) * r +
                     1.48753612908506148525e-2) * r +
                     1.36929880922735805310e-1) * r +
                     5.99832206555887937690e-1) * r +
                     1.0)
    x = num / den
    if q < 0.0:
        x = -x
    return 0.0 + (x * 1.0)


@njit()
def latency_us(kind, scale_us, sigma, u):
    """late.latency_us with the distribution as its code (DISTRIBUTIONS)."""
    if kind == 0:
        x = -scale_us * math.log(u)
    elif kind == 1:
        x = scale_us * math.exp(sigma * inv_cdf(min(u, _BELOW_ONE))) if sigma else scale_us
    else:
        x = scale_us * u
    r = np.rint(x)  # Python's round: half to even
    if r >= float(_LATENCY_CAP_US):
        return np.int64(_LATENCY_CAP_US)
    return np.int64(r)


@njit()
def _stretch(a, m, su, ckpt_us, V, val_us, period, offset):
    """xwalk.stretch_us."""
    t = (m - a) * su + ((m - offset) // period - (a - offset) // period) * ckpt_us
    if V:
        t += (m // V - a // V) * val_us
    return t


@njit()
def _fit(a, b, budget, su, ckpt_us, V, val_us, period, offset):
    """xwalk.fit_steps: the largest m in [a, b] whose quiet stretch a+1..m takes at most ``budget`` (the stretch
    grows with m, so the answer is unique: a guess from the mean step, a short walk, a binary search if long)."""
    if budget < 0:
        return a
    mean = su + ckpt_us / period + (val_us / V if V else 0.0)
    m = min(b, a + np.int64(budget // mean))
    for _ in range(8):
        if _stretch(a, m, su, ckpt_us, V, val_us, period, offset) > budget:
            m -= 1
        elif m < b and _stretch(a, m + 1, su, ckpt_us, V, val_us, period, offset) <= budget:
            m += 1
        else:
            return m
    lo, hi = a, b
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if _stretch(a, mid, su, ckpt_us, V, val_us, period, offset) <= budget:
            lo = mid
        else:
            hi = mid - 1
    return lo


@njit()
def _ring_add(ring, head, cnt, x):
    """Append job step x to the ring of the newest corrupt checkpoints (oldest first, at most len(ring))."""
    k = len(ring)
    if cnt < k:
        ring[(head + cnt) % k] = x
        return head, cnt + 1
    ring[head] = x
    return (head + 1) % k, cnt


@njit(nogil=True)  # nogil: the daemon's HTTP threads answer scrapes while a tick runs
def walk(until, pos, tot, ring, plan_i, log1m, words, stop_cum, stop_det, stop_rst, hard_type_cum, sdc_type_cum,
         det_kind, det_scale, det_sigma, det_cov, ha, hb, hc, hf, sa, sb, sc, sf, base, bounds, hq):
    """xwalk.segment over and over on the arrays: advance to ``until``, or to the start of the segment whose unit is a
    job's last step (then returns JOB_END, else UNTIL). Under stragglers (``ha`` .. ``bounds``: the step-time
    tables, stepkernel.draw's) each executed step's duration is drawn once, in order, as xwalk.segment draws
    them: the quiet steps one by one up to the unit, a detector's finding or ``until`` (``hq``: scratch, the
    histogram of a stretch's quiet steps)."""
    step_us, shadow_us, ckpt_us, val_us = plan_i[P_STEP], plan_i[P_SHADOW], plan_i[P_CKPT], plan_i[P_VAL]
    V, C, H, target, restart = plan_i[P_V], plan_i[P_C], plan_i[P_H], plan_i[P_TARGET], plan_i[P_RESTART]
    committed, window, retention = plan_i[P_COMMITTED] != 0, plan_i[P_WINDOW], plan_i[P_RETENTION]
    shadow_kind = plan_i[P_SHADOW_KIND]
    o_interr, o_interr_type = plan_i[P_O_INTERR], plan_i[P_O_INTERR_TYPE]
    o_onset_type, o_finds = plan_i[P_O_ONSET_TYPE], plan_i[P_O_FINDS]
    su = step_us + shadow_us
    hard_log1m, sdc_log1m = log1m[0], log1m[1]
    nd = len(det_kind)
    wh, ws, wc, wht, wst, wd = (words[W_HARD], words[W_SDC], words[W_CAUSE], words[W_HARD_TYPE], words[W_SDC_TYPE],
                                words[W_DETECT])

    t, g, step, last, corrupted = pos[T], pos[G], pos[STEP], pos[LAST], pos[CORRUPTED] != 0
    clean, hyper_end, anchor, n_corrupt = pos[CLEAN], pos[HYPER_END], pos[ANCHOR], pos[N_CORRUPT]
    deadline, onset_step, detector = pos[DEADLINE], pos[ONSET], pos[DETECTOR]
    hi, hp, si, sp = pos[HARD_I], pos[HARD_P], pos[SDC_I], pos[SDC_P]
    head, cnt = pos[RING_HEAD], pos[RING_N]
    zero = np.uint64(0)
    # each stream's generator at the draw of its next element's gap (index + 1); the others at no draw yet (-1)
    hh, hl = pcg.seek(wh, hi + 1) if hard_log1m != 0.0 else (zero, zero)
    sh, sl = pcg.seek(ws, si + 1) if sdc_log1m != 0.0 else (zero, zero)
    c_at, ch, cl = -1, zero, zero
    ht_at, hth, htl = -1, zero, zero
    st_at, sth, stl = -1, zero, zero
    d_at, dh, dl_ = -1, zero, zero
    has_st, slow_steps, slow_ranks = plan_i[P_HAS_ST] != 0, plan_i[P_SLOW_STEPS], plan_i[P_SLOW_RANKS]
    o_hist = plan_i[P_O_HIST]
    wx = words[W_STRAG]
    xdx = wx[4] == np.uint64(1)
    # executed steps up to this one have the slow ranks (Work.slow_count); NEVER: always
    slow_limit = pos[JOB_START_G] + slow_steps if slow_steps < NEVER else NEVER
    x_at, xh, xl = -1, zero, zero  # the straggler stream: draws made (= the executed step drawn last)
    status = UNTIL

    while True:
        if H and g < hyper_end:  # hyper.lattice
            P, off, piece = H, anchor % H, hyper_end
        else:
            P, off, piece = C, 0, NEVER
        h = NEVER
        if hard_log1m != 0.0:
            while hp <= g:
                hh, hl, gap = _gap(wh, hh, hl, hard_log1m)
                hi += 1
                hp += gap
            h = hp
        e = g + (target - step)
        if h < e:
            e = h
        if piece < e:
            e = piece
        s = NEVER
        if not corrupted:
            if sdc_log1m != 0.0:
                while sp <= g:
                    sh, sl, gap = _gap(ws, sh, sl, sdc_log1m)
                    si += 1
                    sp += gap
                s = sp
            if s < e:
                e = s
        elif n_corrupt == 0:  # not in a checkpoint yet: the next validation or checkpoint point meets it
            q = off + ((step - off) // P + 1) * P
            if V and (step // V + 1) * V < q:
                q = (step // V + 1) * V
            if g + (q - step) < e:
                e = g + (q - step)
        n = e - g
        du, unit_b = su, 0  # the unit's step: its compute (shadow overhead included), its histogram bucket
        cut_quiet, k, acc, dsum = False, 0, 0, 0
        if has_st:  # the steps drawn one by one: quiet ones while they fit, up to the unit
            if x_at != g:
                xh, xl = pcg.seek(wx, g)
            for b_ in range(len(hq)):
                hq[b_] = 0
            while True:
                k += 1
                if g + k <= slow_limit:
                    xh, xl, d, bk = stepkernel.draw(xh, xl, wx[2], wx[3], xdx, sa, sb, sc, sf, base, bounds)
                else:
                    xh, xl, d, bk = stepkernel.draw(xh, xl, wx[2], wx[3], xdx, ha, hb, hc, hf, base, bounds)
                x_at = g + k
                # the unit: the segment's end, or a detector's finding due by the end of this step's compute
                if k == n or (corrupted and deadline < NEVER and t + acc + d + shadow_us >= deadline):
                    n, e = k, g + k
                    du, unit_b = d + shadow_us, bk
                    break
                qk = step + k
                c = d + shadow_us
                if (qk - off) % P == 0:
                    c += ckpt_us
                if V and qk % V == 0:
                    c += val_us
                if t + acc + c > until:  # this quiet step does not fit: the steps before it are crossed
                    cut_quiet = True
                    break
                acc += c
                dsum += d
                hq[bk] += 1
        elif corrupted and deadline < NEVER and n > 1:  # a detector's finding before e?
            budget = deadline - t
            if budget <= su:
                j = 1
            else:
                j = _fit(step, step + n, budget - su - 1, su, ckpt_us, V, val_us, P, off) - step + 2
            if j < n:
                n, e = j, g + j
        m = step + n - 1  # the quiet steps are step + 1 .. m, the unit's is q = m + 1
        if has_st:
            quiet = acc
        else:
            nc = (m - off) // P - (step - off) // P
            nv = m // V - step // V if V else 0
            quiet = (n - 1) * su + nc * ckpt_us + nv * val_us
        q = m + 1
        t1 = t + quiet + du  # the end of the unit's step
        onset = val = ck = False
        dl, det = deadline, detector
        stop, index = 0, 0
        kind, cost = _STEP, 0
        if cut_quiet:
            pass  # ``until`` comes within the quiet steps: the unit is not reached
        elif h == e:  # a hard failure or a shadow disagreement: its kind (Work.cause_of)
            kind, index = _HARD, hi
            if len(stop_cum) > 1:
                if c_at != index:
                    ch, cl = pcg.seek(wc, index)
                ch, cl, u = _next(wc, ch, cl)
                c_at = index + 1
                stop = _bucket(stop_cum, u)
            cost = du + stop_det[stop] + stop_rst[stop]
        else:
            corr = corrupted
            if s == e:  # an onset (on a hard failure's step it is void)
                onset = corr = True
                dl, det = NEVER, 0
                if committed and nd:  # late.draw: the first detector to find it
                    first = 2 * nd * si
                    if d_at != first:
                        dh, dl_ = pcg.seek(wd, first)
                    for k in range(nd):
                        dh, dl_, u_cov = _next(wd, dh, dl_)
                        dh, dl_, u_lat = _next(wd, dh, dl_)
                        if u_cov > det_cov[k]:
                            continue
                        at = t1 + latency_us(det_kind[k], det_scale[k], det_sigma[k], u_lat)
                        if at < dl:
                            dl, det = at, k
                    d_at = first + 2 * nd
            val = V != 0 and q % V == 0
            if corr and dl <= t1:
                kind, cost = _FOUND, du + restart
            elif val and corr and n_corrupt == 0:
                kind, cost = _DETECTED, du + val_us + restart
            else:
                ck = (q - off) % P == 0
                kind, cost = _STEP, du + (val_us if val else 0) + (ckpt_us if ck else 0)
                if ck and corr and not committed:
                    kind, cost = _BAKED, cost + restart
                elif q == target:  # the job's end: xwalk.segment runs this segment
                    status = JOB_END
                    break
        in_hyper = piece < NEVER
        cut = cut_quiet or t + quiet + cost > until
        mm = k - 1 if cut_quiet else n - 1  # under stragglers every quiet step drawn before the unit fitted
        if cut and not has_st:
            mm = _fit(step, m, until - t, su, ckpt_us, V, val_us, P, off) - step
        if mm:  # the quiet steps step + 1 .. step + mm, as xwalk._cross
            b = step + mm
            nq = (b - off) // P - (step - off) // P
            tot[C_EXEC] += mm
            tot[C_SHADOW_US] += mm * shadow_us
            if in_hyper:
                tot[C_HYPER_STEPS] += mm
            tot[C_CKPTS] += nq
            tot[C_CKPT_US] += nq * ckpt_us
            if V:
                nvq = b // V - step // V
                tot[C_VALS] += nvq
                tot[C_VAL_US] += nvq * val_us
            if nq:
                newest = off + ((b - off) // P) * P
                if not corrupted:
                    tot[C_COMMIT] += newest - last
                    tot[C_PROD] += (newest - last) * step_us
                    last = clean = newest
                else:  # a committed SDC (the first checkpoint that took it was a unit): hyper.newest_points
                    n_corrupt += nq
                    for i in range(min(nq, len(ring)) - 1, -1, -1):
                        head, cnt = _ring_add(ring, head, cnt, newest - i * P)
                    last = newest
            if has_st:  # Work.account_steps: their time above the base step time, their buckets
                t += acc
                tot[C_STRAG] += dsum - mm * step_us
                for b_ in range(len(hq)):
                    tot[o_hist + b_] += hq[b_]
                if slow_ranks and slow_steps < NEVER and g < slow_limit <= g + mm:  # Work.moved
                    tot[C_REPLACED] += slow_ranks
            else:
                t += quiet if not cut else _stretch(step, b, su, ckpt_us, V, val_us, P, off)
            step, g = b, g + mm
        if cut:
            break
        # the unit, as xwalk._apply
        tot[C_EXEC] += 1
        tot[C_SHADOW_US] += shadow_us
        if has_st:
            tot[C_STRAG] += du - shadow_us - step_us
            tot[o_hist + unit_b] += 1
            if slow_ranks and slow_steps < NEVER and e - 1 < slow_limit <= e:
                tot[C_REPLACED] += slow_ranks
        if in_hyper:
            tot[C_HYPER_STEPS] += 1
        t += cost
        g, step = e, q
        if kind == _HARD:  # Work.stopped, then the rollback
            tot[C_DETECT] += stop_det[stop]
            tot[C_RESTART] += stop_rst[stop]
            if stop == shadow_kind:  # a disagreement: an SDC that set in and was found at once
                tot[C_SHADOW_DET] += 1
                tot[C_DET] += 1
                tot[C_ONSETS] += 1
                tot[o_onset_type] += 1
            else:
                tot[o_interr + stop] += 1
                ty = 0
                if len(hard_type_cum) > 1:  # fleet.type_of
                    if ht_at != index:
                        hth, htl = pcg.seek(wht, index)
                    hth, htl, u = _next(wht, hth, htl)
                    ht_at = index + 1
                    ty = _bucket(hard_type_cum, u)
                tot[o_interr_type + ty] += 1
            tot[C_RECOMP] += step - last
            tot[C_ROLL] += (step - last) * step_us
            step = last
            if corrupted and n_corrupt == 0:  # the SDC was not in a checkpoint: it is gone
                corrupted, deadline, onset_step, detector, clean, head, cnt = False, NEVER, 0, 0, last, 0, 0
            if stop == shadow_kind and H:  # a disagreement is an SDC detection
                if g >= hyper_end:
                    tot[C_HYPER_ACT] += 1
                hyper_end, anchor = g + window, last
            continue
        if onset:  # Work.onset
            corrupted = True
            tot[C_ONSETS] += 1
            ty = 0
            if len(sdc_type_cum) > 1:
                if st_at != si:
                    sth, stl = pcg.seek(wst, si)
                sth, stl, u = _next(wst, sth, stl)
                st_at = si + 1
                ty = _bucket(sdc_type_cum, u)
            tot[o_onset_type + ty] += 1
            onset_step = q
        deadline, detector = dl, det
        if kind == _FOUND:
            tot[o_finds + detector] += 1
            if n_corrupt == 0:
                tot[C_DET] += 1
                back = last
            else:  # late.rollback_target
                tot[C_LATE] += 1
                if n_corrupt < retention:
                    back = clean
                    tot[C_LOST] += n_corrupt
                else:  # unrecoverable: on from the oldest retained checkpoint, the SDC accepted
                    back = ring[head]
                    tot[C_LOST] += retention - 1
                    tot[C_UNREC] += 1
                    tot[C_RECOMP] += step - back
                    tot[C_ROLL] += (step - back) * step_us
                    step = back
                    tot[C_COMMIT] += back - clean
                    tot[C_PROD] += (back - clean) * step_us
        else:
            if val:
                tot[C_VALS] += 1
                tot[C_VAL_US] += val_us
            if kind == _STEP:
                if ck:
                    tot[C_CKPTS] += 1
                    tot[C_CKPT_US] += ckpt_us
                    if not corrupted:
                        tot[C_COMMIT] += q - last
                        tot[C_PROD] += (q - last) * step_us
                        last = clean = q
                        continue
                    if n_corrupt == 0:  # committed SDCs: the checkpoint takes the SDC with it
                        tot[C_BAKED] += 1
                    n_corrupt += 1
                    head, cnt = _ring_add(ring, head, cnt, q)
                    last = q
                continue
            if kind == _BAKED:
                tot[C_CKPT_US] += ckpt_us
                tot[C_BAKED] += 1
            else:
                tot[C_DET] += 1
            back = last
        # xwalk._detected: restart from ``back``, open a hyper window
        tot[C_RESTART] += restart
        tot[C_RECOMP] += step - back
        tot[C_ROLL] += (step - back) * step_us
        step = last = clean = back
        corrupted, deadline, onset_step, detector, n_corrupt, head, cnt = False, NEVER, 0, 0, 0, 0, 0
        if H:
            if g >= hyper_end:
                tot[C_HYPER_ACT] += 1
            hyper_end, anchor = g + window, back

    # to_state(): each stream's next element after g
    if hard_log1m != 0.0:
        while hp <= g:
            hh, hl, gap = _gap(wh, hh, hl, hard_log1m)
            hi += 1
            hp += gap
    if sdc_log1m != 0.0:
        while sp <= g:
            sh, sl, gap = _gap(ws, sh, sl, sdc_log1m)
            si += 1
            sp += gap
    pos[T], pos[G], pos[STEP], pos[LAST], pos[CORRUPTED] = t, g, step, last, 1 if corrupted else 0
    pos[CLEAN], pos[HYPER_END], pos[ANCHOR], pos[N_CORRUPT] = clean, hyper_end, anchor, n_corrupt
    pos[DEADLINE], pos[ONSET], pos[DETECTOR] = deadline, onset_step, detector
    pos[HARD_I], pos[HARD_P], pos[SDC_I], pos[SDC_P] = hi, hp, si, sp
    pos[RING_HEAD], pos[RING_N] = head, cnt
    return status


# -- the Python side: the plan's arrays (cached per plan), a Work in and out ---------------------------------------

_KEY = "_xkernel"  # the plan's kernel arguments, cached on the (immutable) plan as replicas.py does


def _words(state: dict | None) -> np.ndarray:
    return pcg.words(state) if state is not None else np.zeros(5, dtype=np.uint64)


def plan_arrays(p) -> tuple:
    """The kernel's arguments that depend on the plan only."""
    hit = p.__dict__.get(_KEY)
    if hit is not None:
        return hit
    ncause, ntype, ndet = len(p.cause_names), len(p.type_names), len(p.detector_names)
    st = p.step_times
    plan_i = np.array([p.step_us, p.shadow_us, p.ckpt_us, p.val_us, p.val_every, p.ckpt_every, p.hyper_every,
                       p.target, p.sdc_restart_us, int(p.committed), p.hyper_window, p.retention, p.shadow_kind,
                       len(SCALARS), len(SCALARS) + ncause, len(SCALARS) + ncause + ntype,
                       len(SCALARS) + ncause + 2 * ntype, len(SCALARS) + ncause + 2 * ntype + ndet,
                       int(st is not None), p.slow_steps, p.slow_ranks], dtype=np.int64)
    words = np.stack([_words(s) for s in (p.hard_stream, p.sdc_stream, p.cause_stream, p.hard_type_stream,
                                          p.sdc_type_stream, p.detect_stream, st.stream if st is not None else None)])
    dets = p.detectors
    arrays = (plan_i, np.array([p.hard_log1m, p.sdc_log1m]), words,
              np.array(p.stop_cumulative, dtype=np.float64), np.array(p.stop_detect_us, dtype=np.int64),
              np.array(p.stop_restart_us, dtype=np.int64), np.array(p.hard_type_cumulative, dtype=np.float64),
              np.array(p.sdc_type_cumulative, dtype=np.float64),
              np.array([DISTRIBUTIONS.index(d[0]) for d in dets], dtype=np.int64),
              np.array([d[1] for d in dets], dtype=np.float64), np.array([d[2] for d in dets], dtype=np.float64),
              np.array([d[3] for d in dets], dtype=np.float64),
              *(st.kernel_args()[1] if st is not None else _NO_TABLES))
    p.__dict__[_KEY] = arrays
    return arrays


def advance(w, until: int) -> bool:
    """Run the kernel on Work ``w`` (its ``ext`` set, no trace). True if it stopped before the unit of a job's last
    step (the caller runs that segment), False if ``until`` came first."""
    p, x, T = w.p, w.ext, w.totals
    arrays = plan_arrays(p)
    hp, sp = w.hard.next_after(w.g), w.sdc.next_after(w.g)  # (then the index is the next element's)
    hi, si = w.hard.index(), w.sdc.index()
    ring = np.zeros(max(p.retention, 1), dtype=np.int64)
    ring[:len(x.corrupt_ckpts)] = x.corrupt_ckpts
    pos = np.array([w.t, w.g, w.step, w.last, int(w.corrupted), x.clean_ckpt, x.hyper_end, x.hyper_anchor,
                    x.n_corrupt, x.sdc_deadline, x.sdc_onset, x.sdc_detector, hi, hp, si, sp, 0,
                    len(x.corrupt_ckpts), w.job_start_g], dtype=np.int64)
    tot = np.array([*_scalars_of(T), *(v for k in VECTORS for v in T[k])], dtype=np.int64)
    status = walk(until, pos, tot, ring, *arrays, np.zeros(len(BUCKET_FACTORS) + 1, dtype=np.int64))
    (w.t, w.g, w.step, w.last, corrupted, x.clean_ckpt, x.hyper_end, x.hyper_anchor, x.n_corrupt, x.sdc_deadline,
     x.sdc_onset, x.sdc_detector, hi, hp, si, sp, head, cnt, _) = pos.tolist()
    w.corrupted = bool(corrupted)
    w.pending = (w.step - x.clean_ckpt) * p.step_us
    x.corrupt_ckpts = [int(ring[(head + i) % len(ring)]) for i in range(cnt)]
    values = tot.tolist()
    T.update(zip(SCALARS, values, strict=False))  # values: the scalars, then the vectors
    at = len(SCALARS)
    for k in VECTORS:
        n = len(T[k])
        T[k] = values[at:at + n]
        at += n
    if p.hard_log1m != 0.0:
        w.hard = Buffer(p.hard_stream, p.hard_log1m, hi, hp)
    if p.sdc_log1m != 0.0:
        w.sdc = Buffer(p.sdc_stream, p.sdc_log1m, si, sp)
    return status == JOB_END
