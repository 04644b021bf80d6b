"""The kernels' side of a plan: which compiled loop runs it (``batchable``: the replica kernel, replkernel.py;
the others: the extended kernel, xkernel.py), one call of it on rows of replicas (``call``), the replica
kernel's integer constants and step-time tables, and which replicas share a call (``_key``). Shared by the
single-replica path (single.py), the replicas' batch (replicas.py) and the sweeps' common random numbers
(crn.py); a module of its own so that core -> single does not lead back to core through replicas.py."""

from __future__ import annotations

import numpy as np

from simd.engine.layout import TotalsLayout
from simd.engine.spec import Plan, with_seed
from simd.engine.stragglers import BUCKET_FACTORS, kernel_tables

_NB = len(BUCKET_FACTORS) + 1  # histogram buckets, +Inf included
# seed 000's extension mechanisms, each at its "off" value: a plan with any of them on runs on the extended kernel
_OFF = {"hyper": None, "committed_sdc": None, "shadow": None, "fleet": ()}
# the kernel's counters (replkernel.C_* order) by Totals field
_COUNTERS = ("steps_executed", "steps_committed", "steps_recomputed", "checkpoints", "validations", "sdc_onsets",
             "sdc_detected", "sdc_baked", "productive_us", "rollback_us", "checkpoint_us", "validation_us",
             "restart_us", "detection_us", "straggler_us", "jobs_completed", "stragglers_replaced",
             "interruptions", "step_hist", "interruptions_by_type", "sdc_onsets_by_type")


def batchable(plan: Plan) -> bool:
    """Whether the replica kernel has every mechanism ``plan`` uses."""
    spec = plan.spec
    return (all(getattr(spec, k, off) == off for k, off in _OFF.items())
            and getattr(plan, "shadow_kind", -1) == -1 and getattr(plan, "shadow_us", 0) == 0
            and len(getattr(plan, "type_names", ("gpu",))) == 1 and not getattr(plan, "extended", False))


def _stops(plan: Plan) -> tuple:
    """The kinds of hard-stream element (shadow.py's stops; without shadow ranks, the causes): cumulative
    shares, detection and restart times."""
    return (getattr(plan, "stop_cumulative", plan.cause_cumulative),
            getattr(plan, "stop_detect_us", plan.cause_detect_us),
            getattr(plan, "stop_restart_us", plan.cause_restart_us))


def _key(plan: Plan) -> tuple:
    """Everything of a plan the kernels read except its streams: replicas with equal keys share one call."""
    k = plan.__dict__.get("_replica_key")  # cached on the (immutable) plan, as functools.cached_property does
    if k is None:
        if batchable(plan):
            st = plan.step_times
            k = (plan.step_us, plan.ckpt_us, plan.val_us, plan.sdc_restart_us, plan.target, plan.ckpt_every,
                 plan.val_every, plan.hard_log1m, plan.sdc_log1m, _stops(plan), plan.slow_steps, plan.slow_ranks,
                 plan.cause_names, None if st is None else (id(st.healthy), id(st.slow)))
        else:  # the extended kernel: everything it reads is compiled from the spec (its seed apart)
            k = ("extended", with_seed(plan.spec, 0))
        plan.__dict__["_replica_key"] = k
    return k


def _col(layout: TotalsLayout) -> np.ndarray:
    """Where replkernel's counters (replkernel.C_* order) sit in a ``tot`` row of ``layout`` (-1: absent)."""
    return np.array([layout.start.get(n, -1) for n in _COUNTERS], dtype=np.int64)


def _tables(plan: Plan):
    """The step-time tables the kernels take (stragglers.kernel_tables)."""
    return kernel_tables(plan.step_times)


def _plan_ints(plan: Plan, max_jobs: int | None) -> np.ndarray:
    from simd.engine import replkernel as k

    v = np.zeros(k.NPLAN, dtype=np.int64)
    v[k.P_STEP], v[k.P_CKPT], v[k.P_VAL], v[k.P_SDC_RESTART] = plan.step_us, plan.ckpt_us, plan.val_us, \
        plan.sdc_restart_us
    v[k.P_TARGET], v[k.P_C], v[k.P_V] = plan.target, plan.ckpt_every, plan.val_every
    v[k.P_SLOW_STEPS], v[k.P_SLOW_RANKS] = plan.slow_steps, plan.slow_ranks
    v[k.P_HAS_ST], v[k.P_NCAUSE] = plan.step_times is not None, len(_stops(plan)[0])
    v[k.P_MAX_JOBS] = -1 if max_jobs is None else max_jobs
    v[k.P_BUCKET] = plan.step_bucket  # the kernel books steps without stragglers there (work.Work.pack)
    return v


def call(plan: Plan, layout: TotalsLayout, pos: np.ndarray, tot: np.ndarray, start: np.ndarray, ring: np.ndarray,
         words: np.ndarray, until: int, max_jobs: int | None) -> None:
    """One call of the compiled loop on replicas of ``plan`` (rows of the arrays laid out by layout.py): the replica
    kernel (replkernel.py) if it has every mechanism the plan uses, else the extended one (xkernel.py)."""
    if batchable(plan):
        from simd.engine import replkernel

        cum, detect, restart = _stops(plan)
        replkernel.advance_all(until, pos, tot, start, words, np.array([plan.hard_log1m, plan.sdc_log1m]),
                               _plan_ints(plan, max_jobs), _col(layout), np.asarray(cum, dtype=np.float64),
                               np.asarray(detect, dtype=np.int64), np.asarray(restart, dtype=np.int64),
                               *_tables(plan), np.zeros(_NB, dtype=np.int64))
        return
    from simd.engine import xkernel

    xkernel.advance_all(until, -1 if max_jobs is None else max_jobs, pos, tot, start, ring, words,
                        *xkernel.plan_arrays(plan, layout), np.zeros(_NB, dtype=np.int64))
