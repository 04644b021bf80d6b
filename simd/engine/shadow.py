"""Shadow-rank dual execution (seed 000, exercise 3, "tri-variate computational training").

Model. ``k = round(fraction * n_gpus)`` of the job's ``n_gpus`` ranks (nearest integer, ties to even) run
twice, each on its own GPU and its duplicate, and compare their results at the end of every step. The
duplicates are GPUs like the others: they fail, and they corrupt. Per executed step, independently:

- a hard failure strikes any of the ``n + k`` GPUs (the seed's per-step cluster hazard over ``n + k``);
- a *disagreement*: an SDC on any of the ``2k`` GPUs of shadowed ranks (either copy) makes the pair disagree,
  found at the end of that step; the job rolls back to its last clean checkpoint and restarts, like an SDC a
  validation found: it pays the step, ``restart_seconds``, and neither the step's validation nor its
  checkpoint (the comparison comes first); it counts as an SDC onset (``sdc_onsets``: an SDC set in), an SDC
  detected (``sdc_detected``) and a shadow detection (``shadow_detected``);
- an SDC on one of the ``n - k`` unshadowed ranks is silent and takes seed 000's path (validation point,
  checkpoint point, end of job). A corruption already in the state is not a disagreement: it reached the
  shadowed ranks through the gradient all-reduce, identically on both copies.

Order within a step: hard failure -> disagreement -> SDC onset -> validation -> checkpoint. A hard failure
wins over a disagreement on the same step (seed 000's ``continue``: the step's other draws are void), and an
unshadowed onset on a step that disagrees is void too (the rollback discards the step). ``fraction`` 0 (or a
fraction that rounds to no rank) is the plain job exactly; with ``fraction`` 1 every SDC is a disagreement and
none reaches a validation or a checkpoint.

Overhead. With at least one shadowed rank every executed step lasts ``step_seconds * (1 + overhead)`` (the
comparison, the larger collectives); the extra ``step_seconds * overhead`` of every executed step, kept or
rolled back, is the ``shadow`` bucket, so productive and rollback time stay in base step time and effective
utilization counts the overhead as a cost. What the duplicates cost in GPUs (``n + k`` GPUs for the work of
``n``) is not time: ``utilization * n / (n + k)`` is the goodput per GPU.

Engine. Disagreements are a Bernoulli process over the executed-step index like the hard failures, and both
stop a step the same way (roll back, restart). Their union is a Bernoulli process with per-step hazard
``q = 1 - (1 - h)(1 - s)`` whose points are, independently, a disagreement with probability ``(1 - h) s / q``
and a hard failure otherwise: the hard stream carries both, and each of its points draws its kind with its
cause, from one uniform of the cause stream (``stop_cumulative``: the causes' cumulative shares scaled by
``h / q``, then the disagreement). The kernel then crosses disagreements exactly as
hard failures, with an SDC rollback's cost. Without shadow ranks nothing of this exists and no draw changes.
"""

from __future__ import annotations

import math
from dataclasses import dataclass


@dataclass(frozen=True)
class Shadow:
    """``fraction`` of the ranks duplicated on a GPU each; ``overhead``: each step slower by that factor."""

    fraction: float
    overhead: float = 0.0


def shadow_ranks(n_gpus: int, shadow: Shadow | None) -> int:
    """How many ranks are shadowed: ``round(fraction * n_gpus)``."""
    return 0 if shadow is None else round(shadow.fraction * n_gpus)


@dataclass(frozen=True)
class Stops:
    """What the hard stream carries: its per-step hazard and the kinds of its points (causes, then shadow)."""

    hazard: float
    log1m: float
    cumulative: tuple[float, ...]
    detect_us: tuple[int, ...]
    restart_us: tuple[int, ...]
    shadow_kind: int  # index of the disagreement kind; -1: none


def stops(hard: float, disagree: float, cause_cumulative: tuple[float, ...], detect_us: tuple[int, ...],
          restart_us: tuple[int, ...], sdc_restart_us: int, log1m) -> Stops:
    """Hard failures (per-step hazard ``hard``, causes by ``cause_cumulative``) merged with disagreements
    (``disagree``); ``log1m(p)`` is the plan's log(1 - p). Without disagreements: the hard failures alone."""
    if disagree == 0.0:
        return Stops(hard, log1m(hard), cause_cumulative, detect_us, restart_us, -1)
    lg = log1m(hard) + log1m(disagree)
    q = 1.0 if lg == -math.inf else -math.expm1(lg)
    share = (1.0 - hard) * disagree / q  # P(a disagreement and no hard failure | the step stops)
    cumulative = tuple(c * (1.0 - share) for c in cause_cumulative) + (1.0,)
    return Stops(q, lg, cumulative, detect_us + (0,), restart_us + (sdc_restart_us,), len(cause_cumulative))
