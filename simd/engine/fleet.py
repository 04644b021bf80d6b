"""Heterogeneous fleets (seed 000, exercise 4): a job on several accelerator types with their own rates.

A fleet is a list of types, each ``count`` GPUs with a hard-failure and an SDC rate per GPU-hour. Every GPU
fails independently, so the job's per-step hazard combines the types exactly, as seed 000's formula does for
one type: ``1 - prod_i (1 - r_i * step / 3600) ** n_i`` (computed as ``-expm1(sum_i n_i log1p(-p_i))``, the
same floating-point operations as ``hazard.per_step_cluster_hazard`` for a fleet of one type, so that fleet
gives bit-identical hazards and trajectories).

Attribution (which type an interruption or an SDC onset is counted against). In a step in which at least one
GPU fails, the job stops at the *first* failure, so the type charged is the type of the GPU that failed first
within the step. Seed 000's per-step Bernoulli with probability ``p`` is the step-level view of a GPU whose
failure time is exponential with rate ``lambda = -log(1 - p)`` per step (then P(failure within a step) = p
exactly). Of independent exponential clocks, the first to ring is of type i with probability
``n_i lambda_i / sum_j n_j lambda_j``, *independently of when it rings*, hence also given that it rang within
the step: the share of type i is its share of the log-hazard, ``-n_i log1p(-p_i)``, exactly, whatever the
number of GPUs failing in the step. (Shares proportional to the per-type step hazards
``1 - (1 - p_i) ** n_i`` would be wrong by O(p) when two types fail in the same step.) A type whose GPUs fail
surely in a step (p_i = 1, an infinite rate) takes the whole share, split among such types by count.

The engine draws the type of hard failure number ``k`` of an epoch from uniform ``k`` of the stream
"accel-hard" and the type of SDC candidate ``k`` from uniform ``k`` of "accel-sdc" (streams of their own: no
other draw changes), only when there are at least two types. The per-step oracle (oracle.py) draws one
Bernoulli per type and step instead and, when several types fail in one step, the time of each one's first
failure within the step; the two agree in distribution (tests/engine/statistical/test_fleet_oracle.py).
"""

from __future__ import annotations

import math
from dataclasses import dataclass


@dataclass(frozen=True)
class Accelerator:
    """One accelerator type of a fleet: ``count`` GPUs failing at these rates (per GPU-hour)."""

    name: str
    count: int
    hard_per_gpu_hour: float
    sdc_per_gpu_hour: float


def per_gpu_step_probability(rate_per_gpu_hour: float, step_seconds: float) -> float:
    """Seed 000's probability that one GPU fails within one step (checked to be a probability)."""
    p = rate_per_gpu_hour * step_seconds / 3600.0
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"per-GPU failure probability per step must be in [0, 1], got {p!r}")
    return p


def log_hazards(groups: tuple[tuple[int, float], ...], step_seconds: float) -> list[float]:
    """``-n * log1p(-p)`` of each (count, rate per GPU-hour) group: its log-hazard per step (inf when p = 1)."""
    out = []
    for n, rate in groups:
        p = per_gpu_step_probability(rate, step_seconds)
        out.append(0.0 if n == 0 or p == 0.0 else (math.inf if p == 1.0 else -(n * math.log1p(-p))))
    return out


def combined_hazard(groups: tuple[tuple[int, float], ...], step_seconds: float) -> float:
    """``1 - prod (1 - p_i) ** n_i`` over (count, rate per GPU-hour) groups: P(some GPU fails in a step)."""
    total = None
    for n, rate in groups:
        p = per_gpu_step_probability(rate, step_seconds)
        if p == 1.0 and n > 0:
            return 1.0
        term = n * math.log1p(-p)  # as per_step_cluster_hazard: the same operations for one group
        total = term if total is None else total + term
    return 0.0 if total is None else -math.expm1(total)


def cumulative_shares(groups: tuple[tuple[int, float], ...], step_seconds: float) -> tuple[float, ...]:
    """Cumulative attribution shares of the groups (module docstring), the last forced to 1.0."""
    lh = log_hazards(groups, step_seconds)
    if any(math.isinf(x) for x in lh):  # sure failures: only those types, by count
        lh = [float(n) if math.isinf(x) else 0.0 for (n, _), x in zip(groups, lh, strict=True)]
    total = math.fsum(lh)
    if total == 0.0:  # no failures at all: the shares are never used
        lh, total = [1.0] * len(groups), float(len(groups))
    acc, out = 0.0, []
    for x in lh:
        acc += x / total
        out.append(acc)
    out[-1] = 1.0
    return tuple(out)
