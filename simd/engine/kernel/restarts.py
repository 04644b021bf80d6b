"""A hard failure's restart path in the loop: an in-process restart tried first, a crash loop's attempts and its
escalation (docs/model.md, "In-process restarts" and "Crash loops"; spec.Plan's ``cause_recovery`` bits).

The draws are a pure function of the interruption's index in the hard stream (its element, as the cause's draw),
so a unit decided twice (once cut at ``until``, then in the next call) draws the same: draw ``index`` of
"in-process" for the in-process restart, draws ``limit * index`` .. ``limit * index + limit - 1`` of "restart-fail"
for the attempts (one each, as far as they go).
"""

from __future__ import annotations

from simd.engine import pcg
from simd.engine.jit import njit
from simd.engine.kernel import draws

IN_PROCESS, CRASH_LOOP = 1, 2  # spec.IN_PROCESS, spec.CRASH_LOOP
NOT_TRIED, SUCCEEDED, FAILED = 0, 1, 2  # an in-process restart's outcome


@njit()
def path(bits, index, w_ip, p_ok, ip_us, w_rf, p_fail, limit, restart_us, escalation_us):
    """The restart of hard-stream element ``index`` of a cause with ``bits``: with IN_PROCESS an in-process restart
    of ``ip_us`` that succeeds when its draw is <= ``p_ok``; unless it succeeded, the cause's restart
    ``restart_us``, which with CRASH_LOOP fails when its draw is <= ``p_fail`` and is tried again, at most ``limit``
    attempts, then escalated (``escalation_us``). Returns (the restart time in us, the in-process outcome, the
    cause's restarts attempted, 1 if escalated else 0)."""
    spent, outcome = 0, NOT_TRIED
    if bits & IN_PROCESS:
        sh, sl = pcg.seek(w_ip, index)
        sh, sl, u = draws.uniform(w_ip, sh, sl)
        spent = ip_us
        if u <= p_ok:
            return spent, SUCCEEDED, 0, 0
        outcome = FAILED
    if not bits & CRASH_LOOP or p_fail == 0.0:
        return spent + restart_us, outcome, 1, 0
    sh, sl = pcg.seek(w_rf, limit * index)
    for j in range(limit):
        sh, sl, u = draws.uniform(w_rf, sh, sl)
        if u > p_fail:
            return spent + (j + 1) * restart_us, outcome, j + 1, 0
    return spent + limit * restart_us + escalation_us, outcome, limit, 1


@njit()
def flagged(index, w_cause, stop_cum, w_pred, predicted, shadow_kind):
    """Whether hard-stream element ``index`` is a failure flagged ahead (docs/model.md, "Predicted failures migrated
    live"): its kind (draw ``index`` of the cause stream, as the loop draws it) is a cause with a share
    ``predicted`` > 0, and draw ``index`` of "predict" is <= that share."""
    stop = 0
    if len(stop_cum) > 1:
        sh, sl = pcg.seek(w_cause, index)
        sh, sl, u = draws.uniform(w_cause, sh, sl)
        stop = draws.bucket(stop_cum, u)
    if stop == shadow_kind or predicted[stop] == 0.0:
        return False
    sh, sl = pcg.seek(w_pred, index)
    sh, sl, u = draws.uniform(w_pred, sh, sl)
    return u <= predicted[stop]
