"""Closed-form facts of one configured job, exported beside its simulation (seed 001's models applied).

Inputs are plain numbers (the caller reads them from the engine's compiled plan), so this module, like the
other models, imports nothing of simd's outer layers:

- ``per_hour``: a per-step probability as events per hour of compute (the configured rates' gauges);
- ``mean_recovery``: the cost of one interruption averaged over the causes (the model's R);
- ``optimal_interval_steps``: Young's and Daly's optimum of the checkpoint interval, in steps;
- ``efficiency_at``: the first-order long-run efficiency at the configured interval (checkpoint.efficiency);
- with a memory tier, ``tier_rates``: the failures it absorbs and those that need the persistent checkpoint, whose
  rate alone sets the persistent interval's optimum, and ``two_level``: the two-level model (:class:`TwoLevel`:
  checkpoint.tiered_efficiency, the tier's writes and waits, both optima, and the model's reach).

With asynchronous saves (``write_seconds`` > 0) the save's cost is its compute ``C_eff = b + W (1 - 1/s)``, every
loss counts the write's latency (the compute it spans, in whole steps; where every save waits, a failure goes back
two saves: checkpoint.async_loss_seconds), and Young's optimum is the asynchronous model's
(checkpoint.async_interval_seconds: ``sqrt(2 C_eff M)`` unless saves would wait there); without a write every
number is the blocking model's, bit for bit.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from simd.models.checkpoint import (
    async_efficiency,
    async_interval_seconds,
    async_loss_seconds,
    async_save_cost_seconds,
    burst_group_loss,
    daly_interval_seconds,
    domain_group_loss,
    tier_interval_seconds,
    tier_loss_seconds,
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
    neglected. Of the others, the share ``corrupt`` finds the tier's copies corrupt and goes on to the persistent
    one."""
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


# The first-order model's reach: its terms count at most one failure per interval of either level and none during
# a recovery or a redone interval, so it holds while a failure's expected loss (recovery included) is a small share
# of the mean time between the failures that cause it. On the grid of docs/checkpoints.md, section 6 (a tier's
# writes from none to 8 of its intervals), the model is within 0.6 point of the simulated mean up to 0.05 and up
# to 1.9 points too high at 0.1: beyond REACH the daemon exports no analytic efficiency rather than a wrong one.
REACH = 0.05


@dataclass(frozen=True)
class TwoLevel:
    """The two-level first-order model of a scenario with a memory tier (docs/checkpoints.md, section 6; Benoit,
    Cavelan, Le Fevre, Robert, Sun, IEEE TC 66(7), 2017), its inputs read from the engine's compiled plan by
    :func:`two_level`: the tier's save (blocking ``tier_seconds``, write ``tier_write_seconds``), load and recovery
    (``tier_recovery_seconds``, its load included), its loads found corrupt (``tier_corrupt``) and the copies it keeps
    (``tier_kept``), the persistent save (blocking, write, slowdown), load and recovery (its load included), and the
    rates per second of compute of the failures the tier survives and of those that lose it (:func:`tier_rates`)."""

    step_seconds: float
    tier_seconds: float
    tier_write_seconds: float
    tier_recovery_seconds: float
    checkpoint_seconds: float
    write_seconds: float
    write_slowdown: float
    recovery_seconds: float
    rate_survived: float
    rate_lost: float
    tier_corrupt: float = 0.0
    tier_kept: int = 1
    tier_load_seconds: float = 0.0
    load_seconds: float = 0.0

    @property
    def rate_tier(self) -> float:
        """The failures the tier recovers: those it survives, but for the share ``p^k`` whose ``k`` copies kept are
        all found corrupt (taken to be newer than the persistent checkpoint: many tier points to a persistent one)."""
        return self.rate_survived * (1.0 - self.tier_corrupt ** self.tier_kept)

    @property
    def rate_persistent(self) -> float:
        """The failures that need the persistent checkpoint: those that lose the tier, and those whose copies are
        all found corrupt (:attr:`rate_tier`'s complement); their rate alone sets the persistent optimum."""
        return self.rate_lost + self.rate_survived * self.tier_corrupt ** self.tier_kept

    def efficiency(self, interval_steps: float, tier_interval_steps: float) -> float:
        """``1 / (1 + H)`` at the two intervals (steps), whether or not in reach (:meth:`in_reach`): the copies found
        corrupt before a good one and the copies older than the persistent checkpoint (never loaded) counted where
        each failure falls (checkpoint.tier_fallback_seconds)."""
        step = self.step_seconds
        return tiered_efficiency(self.tier_seconds, tier_interval_steps * step, self.tier_write_seconds,
                                 self.tier_recovery_seconds, self.checkpoint_seconds, interval_steps * step,
                                 self.write_seconds, self.write_slowdown, self.recovery_seconds, self.rate_survived,
                                 self.rate_lost, self.tier_corrupt, self.tier_kept, self.tier_load_seconds,
                                 self.load_seconds, step)

    def reach(self, interval_steps: float, tier_interval_steps: float) -> float:
        """The largest of ``rate x loss`` over the levels: a failure's expected loss per mean time between such
        failures (the first-order model neglects its square)."""
        step = self.step_seconds
        tier = self.rate_tier * tier_loss_seconds(tier_interval_steps * step, self.tier_seconds,
                                                  self.tier_write_seconds, self.tier_recovery_seconds)
        persistent = self.rate_persistent * async_loss_seconds(interval_steps * step, self.checkpoint_seconds,
                                                               self.write_seconds, self.write_slowdown,
                                                               self.recovery_seconds, step)
        return max(tier, persistent)

    def in_reach(self, interval_steps: float, tier_interval_steps: float) -> bool:
        return self.reach(interval_steps, tier_interval_steps) <= REACH

    @property
    def optimal_interval_steps(self) -> tuple[tuple[str, float], ...]:
        """The persistent interval's Young and Daly optima on the failures that lose the tier (empty when none do):
        :func:`optimal_interval_steps` on their rate."""
        return optimal_interval_steps(self.step_seconds, self.checkpoint_seconds,
                                      self.rate_persistent * self.step_seconds, self.write_seconds,
                                      self.write_slowdown)

    @property
    def tier_optimum_steps(self) -> float | None:
        """The tier interval's optimum (checkpoint.tier_interval_seconds), steps; None when the tier recovers no
        failure."""
        if self.rate_tier <= 0:
            return None
        return tier_interval_seconds(self.tier_seconds, self.tier_write_seconds, self.rate_tier,
                                     self.tier_recovery_seconds) / self.step_seconds


def two_level(plan, shares: Sequence[float], recovery_us: Sequence[float]) -> TwoLevel | None:
    """The :class:`TwoLevel` model of a compiled plan (simd.engine.spec.Plan) with a memory tier, ``shares`` the
    causes' shares and ``recovery_us`` each cause's detection, restart and persistent load (microseconds); None
    without a tier or without failures."""
    spec = plan.spec
    t, s = spec.tier, spec.servers
    if t is None or plan.hard_hazard <= 0:
        return None
    down = math.fsum(sh for sh, c in zip(shares, spec.cause_list, strict=True) if c.server_down)
    # the failures the tier survives and those that lose it; of the first, a recovery goes on to the persistent
    # checkpoint when every copy it loads is found corrupt (docs/model.md, "Copies kept"), which TwoLevel counts where
    # each failure falls
    rates = tier_rates(plan.hard_hazard, spec.step_seconds, t.copies, t.jump_servers, down, plan.servers,
                       s.burst_per_day if s is not None else 0.0, plan.burst_q, plan.burst_domain)
    recovery = mean_recovery(shares, [r - plan.load_us for r in recovery_us]) / 1e6
    return TwoLevel(spec.step_seconds, t.seconds, t.write_seconds, recovery + t.load_seconds, spec.ckpt_seconds,
                    spec.ckpt_write_seconds, spec.ckpt_write_slowdown, recovery + spec.ckpt_load_seconds, *rates,
                    t.corrupt_on_load, t.retention_checkpoints, t.load_seconds, spec.ckpt_load_seconds)
