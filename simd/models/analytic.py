"""Closed-form facts of one configured job, exported beside its simulation (seed 001's models applied).

Inputs are plain numbers (the caller reads them from the engine's compiled plan), so this module, like the
other models, imports nothing of simd's outer layers:

- ``per_hour``: a per-step probability as events per hour of compute (the configured rates' gauges);
- ``mean_recovery``: the cost of one interruption averaged over the causes (the model's R);
- ``optimal_interval_steps``: Young's and Daly's optimum of the checkpoint interval, in steps;
- ``efficiency_at``: the first-order long-run efficiency at the configured interval (checkpoint.efficiency);
- with a memory tier, ``tier_rates``: the failures it absorbs and those that need the persistent checkpoint, whose
  rate alone sets the persistent interval's optimum, and ``tiered_efficiency_at`` (checkpoint.tiered_efficiency).

With asynchronous saves (``write_seconds`` > 0) the save's cost is its compute ``C_eff = b + W (1 - 1/s)``, the
write's latency is added to every loss, and Young's optimum is the asynchronous model's
(checkpoint.async_interval_seconds: ``sqrt(2 C_eff M)`` unless saves would wait there); without a write every
number is the blocking model's, bit for bit.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from simd.models.checkpoint import (
    async_efficiency,
    async_interval_seconds,
    async_save_cost_seconds,
    burst_group_loss,
    daly_interval_seconds,
    domain_group_loss,
    tiered_efficiency,
    young_interval_seconds,
)

SECONDS_PER_HOUR = 3600.0


def per_hour(hazard_per_step: float, step_seconds: float) -> float:
    """Events per hour of compute when each step of ``step_seconds`` has probability ``hazard_per_step``."""
    return hazard_per_step / step_seconds * SECONDS_PER_HOUR


def mtbf_seconds(hazard_per_step: float, step_seconds: float) -> float:
    """Mean compute time between failures: one failure per ``1 / hazard`` steps. Needs ``hazard > 0``."""
    return step_seconds / hazard_per_step


def mean_recovery(shares: Sequence[float], recovery_per_cause: Sequence[float]) -> float:
    """The recovery (detection plus restart) of one interruption, weighted by the causes' shares; in the
    unit of ``recovery_per_cause``. Summed exactly (``math.fsum``)."""
    return math.fsum(s * r for s, r in zip(shares, recovery_per_cause, strict=True))


def optimal_interval_steps(step_seconds: float, checkpoint_seconds: float, hazard_per_step: float,
                           write_seconds: float = 0.0, write_slowdown: float = 1.0) -> tuple[tuple[str, float], ...]:
    """(("young", steps), ("daly", steps)): the optimum interval of each method, not rounded; empty when
    the hard-failure hazard is 0 (no failure, no optimum). With a write: :func:`optima_seconds`."""
    if hazard_per_step <= 0:
        return ()
    young, daly = optima_seconds(checkpoint_seconds, mtbf_seconds(hazard_per_step, step_seconds), write_seconds,
                                 write_slowdown)
    return (("young", young / step_seconds), ("daly", daly / step_seconds))


def optima_seconds(checkpoint_seconds: float, mtbf: float, write_seconds: float = 0.0,
                   write_slowdown: float = 1.0) -> tuple[float, float]:
    """(Young's, Daly's) optimum compute between saves, seconds. With a write, Young's is the asynchronous
    model's (checkpoint.async_interval_seconds) and Daly's formula takes ``C_eff`` (it ignores waits)."""
    if write_seconds == 0:
        young = young_interval_seconds(checkpoint_seconds, mtbf)
    else:
        young = async_interval_seconds(checkpoint_seconds, write_seconds, write_slowdown, mtbf)
    return young, daly_interval_seconds(async_save_cost_seconds(checkpoint_seconds, write_seconds, write_slowdown),
                                        mtbf)


def efficiency_at(interval_steps: int, step_seconds: float, checkpoint_seconds: float, hazard_per_step: float,
                  recovery_seconds: float, write_seconds: float = 0.0, write_slowdown: float = 1.0) -> float | None:
    """Seed 001's first-order efficiency at ``interval_steps`` (with a write, the asynchronous model's);
    None when the hazard is 0."""
    if hazard_per_step <= 0:
        return None
    return async_efficiency(interval_steps, step_seconds, checkpoint_seconds, write_seconds, write_slowdown,
                            mtbf_seconds(hazard_per_step, step_seconds), recovery_seconds)


def tier_rates(hazard_per_step: float, step_seconds: float, copies: int, jump: int, down_share: float,
               servers: int, bursts_per_day: float, burst_q: float, burst_domain: int,
               corrupt: float = 0.0) -> tuple[float, float]:
    """With a memory tier of ``copies`` per shard: (the interruptions it recovers, those that need the persistent
    checkpoint) per second of compute. A local tier (one copy) is lost by every failure whose cause takes a server
    down (``down_share`` of them); a peer tier only by a burst that takes a whole group (checkpoint.burst_group_loss,
    or for domain bursts checkpoint.domain_group_loss), the same causes; two single failures in one step are
    neglected. Of the others, the share ``corrupt`` finds the tier's checkpoint corrupt and goes on to the
    persistent one."""
    rate = hazard_per_step / step_seconds
    if copies == 1:
        lost = rate * down_share
    elif servers and bursts_per_day > 0:
        share = domain_group_loss(servers, copies, jump, burst_domain) if burst_domain else \
            burst_group_loss(servers, copies, burst_q)
        lost = min(rate, bursts_per_day / 86400.0) * share * down_share
    else:
        lost = 0.0
    kept = (rate - lost) * (1.0 - corrupt)
    return kept, rate - kept


def tiered_efficiency_at(interval_steps: int, step_seconds: float, checkpoint_seconds: float, tier_interval_steps: int,
                         tier_seconds: float, rates: tuple[float, float], recovery_seconds: float,
                         load_seconds: float, tier_load_seconds: float, write_seconds: float = 0.0,
                         write_slowdown: float = 1.0) -> float | None:
    """The two-level first-order efficiency at the configured intervals (None without failures); ``rates`` from
    :func:`tier_rates`, ``recovery_seconds`` a failure's detection and restart without a load."""
    if rates[0] + rates[1] <= 0:
        return None
    return tiered_efficiency(tier_seconds, tier_interval_steps * step_seconds, recovery_seconds + tier_load_seconds,
                             async_save_cost_seconds(checkpoint_seconds, write_seconds, write_slowdown),
                             interval_steps * step_seconds, write_seconds, recovery_seconds + load_seconds, *rates)
