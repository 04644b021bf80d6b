"""Per-step hazards and the geometric waiting times drawn from them (seed 000, failures.py)."""

from __future__ import annotations

import math

# A waiting time that never ends (rate 0). Far beyond any reachable step count, still an exact int.
NEVER = 1 << 62


def per_step_cluster_hazard(rate_per_gpu_hour: float, n_gpus: int, step_seconds: float) -> float:
    """Probability that a synchronous job of ``n_gpus`` stops during one step.

    Seed 000: ``1 - (1 - rate * step / 3600) ** n_gpus``: any GPU failing stops the whole job, so the cluster
    is as fragile as the n-th power of one GPU. Computed as ``-expm1(n * log1p(-p))``, the same number
    without the cancellation of ``1 - (1 - p) ** n`` when ``p`` is tiny.
    """
    p_gpu = rate_per_gpu_hour * step_seconds / 3600.0
    if not 0.0 <= p_gpu <= 1.0:
        raise ValueError(f"per-GPU failure probability per step must be in [0, 1], got {p_gpu!r}")
    if p_gpu == 1.0:
        return 1.0
    return -math.expm1(n_gpus * math.log1p(-p_gpu))
