"""The replica kernel's side of a plan (replkernel.py): which plans it runs (``batchable``), its integer
constants, streams and step-time tables, and the layout of the Totals as the columns of its ``tot`` array.
Shared by the single-replica path (single.py), the replicas' batch (replicas.py) and the sweeps' common random
numbers (crn.py); a module of its own so that core -> single does not lead back to core through replicas.py."""

from __future__ import annotations

from dataclasses import fields

import numpy as np

from simd.engine.spec import Plan
from simd.engine.state import Totals
from simd.engine.stragglers import BUCKET_FACTORS

_NB = len(BUCKET_FACTORS) + 1  # histogram buckets, +Inf included
# seed 000's extension mechanisms, each at its "off" value: a plan with any of them on runs on core.advance
_OFF = {"hyper": None, "committed_sdc": None, "shadow": None, "fleet": ()}
_TOTALS = tuple(f.name for f in fields(Totals))
# the kernel's counters (replkernel.C_* order) by Totals field
_COUNTERS = ("steps_executed", "steps_committed", "steps_recomputed", "checkpoints", "validations", "sdc_onsets",
             "sdc_detected", "sdc_baked", "productive_us", "rollback_us", "checkpoint_us", "validation_us",
             "restart_us", "detection_us", "straggler_us", "jobs_completed", "stragglers_replaced",
             "interruptions", "step_hist", "interruptions_by_type", "sdc_onsets_by_type")


def batchable(plan: Plan) -> bool:
    """Whether the kernel has every mechanism ``plan`` uses."""
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
    """Everything of a plan the kernel reads except its streams: replicas with equal keys share one call."""
    k = plan.__dict__.get("_replica_key")  # cached on the (immutable) plan, as functools.cached_property does
    if k is None:
        st = plan.step_times
        k = (plan.step_us, plan.ckpt_us, plan.val_us, plan.sdc_restart_us, plan.target, plan.ckpt_every,
             plan.val_every, plan.hard_log1m, plan.sdc_log1m, _stops(plan), plan.slow_steps, plan.slow_ranks,
             plan.cause_names,
             None if st is None else (id(st.healthy), id(st.slow)), batchable(plan))
        plan.__dict__["_replica_key"] = k
    return k


def _words(plan: Plan) -> np.ndarray:
    """The plan's four streams as pcg.words rows (hard, sdc, cause, straggler), cached on the plan."""
    w = plan.__dict__.get("_replica_words")
    if w is None:
        from simd.engine.pcg import words

        st = plan.step_times
        w = np.stack([words(plan.hard_stream), words(plan.sdc_stream), words(plan.cause_stream),
                      words(st.stream) if st is not None else np.zeros(5, dtype=np.uint64)])
        plan.__dict__["_replica_words"] = w
    return w


class _Layout:
    """Columns of the totals array, shaped like ``example`` (Totals' field order, each tuple spread over as many
    columns as it has entries). Fields the kernel does not count are carried through unchanged."""

    def __init__(self, example: Totals):
        self.start: dict[str, int] = {}
        self.width_of: dict[str, int] = {}
        i = 0
        for name in _TOTALS:
            v = getattr(example, name)
            self.start[name] = i
            if isinstance(v, tuple):
                self.width_of[name] = len(v)
                i += len(v)
            else:
                i += 1
        self.width = i
        self.col = np.array([self.start.get(n, -1) for n in _COUNTERS], dtype=np.int64)

    def row(self, t: Totals) -> list[int]:
        out: list[int] = []
        for name in _TOTALS:
            v = getattr(t, name)
            if name in self.width_of:
                out.extend(v)
            else:
                out.append(v)
        return out

    def totals(self, row: list[int]) -> Totals:
        """A Totals from a row (the kernel counts every step in the histogram, with or without stragglers)."""
        d = {}
        for name in _TOTALS:
            i = self.start[name]
            n = self.width_of.get(name)
            d[name] = row[i] if n is None else tuple(row[i:i + n])
        t = Totals.__new__(Totals)  # the fields as Totals(**d) sets them, without the frozen __init__'s cost
        t.__dict__.update(d)
        return t


def _readonly(a: np.ndarray) -> np.ndarray:
    a.flags.writeable = False
    return a


# A plan without stragglers passes placeholder tables, read-only like stragglers.py's real ones: numba compiles
# a kernel once per argument type, and a writable array is another type than a read-only one (one more compile
# of the largest kernels, ~8 s each on a fresh machine).
_NO_TABLES = (_readonly(np.zeros(1)), _readonly(np.zeros(1)), _readonly(np.zeros(1, dtype=np.int8)), False,
              _readonly(np.zeros(1)), _readonly(np.zeros(1)), _readonly(np.zeros(1, dtype=np.int8)), False, 0,
              np.zeros(1, dtype=np.int64))  # the bucket bounds, writable as stragglers.bucket_bounds makes them


def _tables(plan: Plan):
    st = plan.step_times
    if st is None:
        return _NO_TABLES
    return st.kernel_args()[1]


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
