"""Closed-form facts of one configured job, exported beside its simulation (seed 001's models applied).

Inputs are plain numbers (the caller reads them from the engine's compiled plan), so this module, like the
other models, imports nothing of simd's outer layers:

- ``per_hour``: a per-step probability as events per hour of compute (the configured rates' gauges);
- ``mean_recovery``: the cost of one interruption averaged over the causes (the model's R);
- ``optimal_interval_steps``: Young's and Daly's optimum of the checkpoint interval, in steps;
- ``efficiency_at``: the first-order long-run efficiency at the configured interval (checkpoint.efficiency);
- ``first_order``: the single-level model of a compiled plan (:class:`FirstOrder`: the efficiency at any interval
  and the optima, with live migration and just-in-time saves), the daemon's gauges' and the sweep's;
- with a memory tier, ``tier_rates``: the failures it absorbs and those that need the persistent checkpoint, whose
  rate alone sets the persistent interval's optimum, and ``two_level``: the two-level model (:class:`TwoLevel`:
  checkpoint.tiered_efficiency, the tier's writes and waits, both optima, and the model's reach).

With asynchronous saves (``write_seconds`` > 0) the save's cost is its compute ``C_eff = b + W (1 - 1/s)``, every
loss counts the write's latency (the compute it spans, in whole steps; where every save waits, a failure goes back
two saves: checkpoint.async_loss_seconds), and Young's optimum is the asynchronous model's
(checkpoint.async_interval_seconds: ``sqrt(2 C_eff M)`` unless saves would wait there); without a write every
number is the blocking model's, bit for bit.

With just-in-time saves (``checkpoint.just_in_time``) the failures the survivors save after (a share ``f``) lose
the step in flight, the save's blocking and their recovery, whatever the interval (checkpoint.jit_loss_seconds);
the others roll back as without them, and Young's optimum takes their rate alone, ``(1 - f)`` of the hazard. The
same in the two-level model, beside a memory tier. Without just-in-time saves every number is as without them, bit
for bit.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from simd.models.checkpoint import (
    async_efficiency,
    async_interval_seconds,
    async_loss_seconds,
    async_save_cost_seconds,
    burst_group_loss,
    daly_interval_seconds,
    domain_group_loss,
    jit_abort_seconds,
    jit_loss_seconds,
    tier_fallback_seconds,
    tier_interval_seconds,
    tier_loss_seconds,
    tiered_efficiency,
    unwaited_interval_seconds,
    young_interval_seconds,
)
from simd.models.recovery import migrated_first_order

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


@dataclass(frozen=True)
class FirstOrder:
    """Seed 001's first-order checkpoint model of a scenario without a memory tier (the daemon's gauges and the
    sweep's model, one builder :func:`first_order`): a save blocking ``checkpoint_seconds`` every interval (with
    ``write_seconds`` > 0 the asynchronous model: it costs ``C_eff`` of compute, the write's latency adds to every
    loss, and an interval below ``W / s`` makes every save wait); the failures that roll back to it, one per
    ``mtbf_seconds`` of compute (inf: none), each costing half an interval and more and ``recovery_seconds``; and
    those saved just in time, ``jit_rate`` per second of compute, each costing the step in flight, the save's
    ``jit_seconds`` and ``jit_recovery_seconds`` (checkpoint.jit_loss_seconds; with live migration the pauses are
    charged to them, or without just-in-time saves to the failures that roll back: recovery.migrated_first_order)."""

    step_seconds: float
    checkpoint_seconds: float  # the blocking b
    mtbf_seconds: float  # of compute between the failures that roll back (inf: every failure saved just in time)
    recovery_seconds: float  # their detection, restart and load, averaged over their causes
    write_seconds: float = 0.0  # W
    write_slowdown: float = 1.0  # s
    jit_rate: float = 0.0  # failures saved just in time, per second of compute
    jit_seconds: float = 0.0  # a just-in-time save's blocking
    jit_recovery_seconds: float = 0.0  # their detection, restart and load, averaged over their causes

    def efficiency(self, interval_steps):
        """``1 / (1 + H)`` at ``interval_steps`` (scalars or numpy arrays): checkpoint.async_efficiency, and with
        just-in-time saves their loss rate added to ``H``."""
        eff = async_efficiency(interval_steps, self.step_seconds, self.checkpoint_seconds, self.write_seconds,
                               self.write_slowdown, self.mtbf_seconds, self.recovery_seconds)
        if self.jit_rate == 0:
            return eff
        loss = jit_loss_seconds(self.step_seconds, self.jit_seconds, self.jit_recovery_seconds, interval_steps,
                                self.write_seconds > 0) - jit_abort_seconds(
            np.asarray(interval_steps, dtype=float) * self.step_seconds, self.write_seconds, self.write_slowdown,
            self.step_seconds)
        out = 1.0 / (1.0 / np.asarray(eff) + self.jit_rate * loss)
        return float(out) if out.ndim == 0 else out

    @property
    def save_cost_seconds(self) -> float:
        """``C_eff``: the blocking itself without a write."""
        return async_save_cost_seconds(self.checkpoint_seconds, self.write_seconds, self.write_slowdown)

    @property
    def wait_below_steps(self) -> float:
        """``W / s`` in steps: every save waits for the write before it at a shorter interval (0 without one)."""
        return unwaited_interval_seconds(self.write_seconds, self.write_slowdown) / self.step_seconds

    @property
    def optimal_interval_steps(self) -> tuple[tuple[str, float], ...]:
        """(("young", steps), ("daly", steps)) on the failures that roll back (:func:`optima_seconds`); empty when
        none do (every failure saved just in time: the longer the interval the better)."""
        if math.isinf(self.mtbf_seconds):
            return ()
        young, daly = optima_seconds(self.checkpoint_seconds, self.mtbf_seconds, self.write_seconds,
                                     self.write_slowdown)
        return (("young", young / self.step_seconds), ("daly", daly / self.step_seconds))

    @property
    def young_steps(self) -> float:
        """Young's optimum, steps (inf when no failure rolls back)."""
        return dict(self.optimal_interval_steps).get("young", math.inf)

    @property
    def daly_steps(self) -> float:
        """Daly's optimum, steps (inf when no failure rolls back)."""
        return dict(self.optimal_interval_steps).get("daly", math.inf)


def jit_shares(plan) -> list[float]:
    """Per cause of a compiled plan, the share of its failures after which the survivors save just in time
    (``jit_share`` for the causes with jit, else 0)."""
    return [plan.jit_share if j else 0.0 for j in plan.cause_jit]


def first_order(plan, shares: Sequence[float], recovery_us: Sequence[float]) -> FirstOrder | None:
    """The :class:`FirstOrder` model of a compiled plan (simd.engine.spec.Plan) without a memory tier, ``shares`` the
    causes' shares and ``recovery_us`` each cause's detection, restart and load (microseconds); None with a tier,
    without failures, or with every failure migrated live. Per cause ``c`` (share ``s``), of its failures a share
    ``p`` is migrated (a pause ``P``), of the rest a share ``j`` saved just in time (``R_c`` their recovery), the
    others roll back: the hazard ``h`` splits into ``h sum s (1 - p)(1 - j)`` that roll back and ``h sum s (1 - p)
    j`` saved, each with the mean recovery of its own failures."""
    spec = plan.spec
    if spec.tier is not None or plan.hard_hazard <= 0:
        return None
    step, ckpt, write, slow = spec.step_seconds, spec.ckpt_seconds, spec.ckpt_write_seconds, spec.ckpt_write_slowdown
    predicted = plan.cause_predicted or (0.0,) * len(shares)
    jit = jit_shares(plan)
    saved = [s * (1.0 - p) * j for s, p, j in zip(shares, predicted, jit, strict=True)]
    if math.fsum(saved) <= 0.0:
        hazard, mean_us = plan.hard_hazard, mean_recovery(shares, recovery_us)
        if plan.cause_predicted:  # live migration: the failures that stay interruptions, the pauses charged to them
            hazard, mean_us = migrated_first_order(hazard, shares, recovery_us, plan.cause_predicted, plan.migrate_us)
            if hazard <= 0:
                return None
        return FirstOrder(step, ckpt, mtbf_seconds(hazard, step), mean_us / 1e6, write, slow)
    back = [s * (1.0 - p) * (1.0 - j) for s, p, j in zip(shares, predicted, jit, strict=True)]
    rollback, kept = math.fsum(back), math.fsum(saved)
    pauses = math.fsum(s * p for s, p in zip(shares, predicted, strict=True)) * plan.migrate_us
    return FirstOrder(step, ckpt, mtbf_seconds(plan.hard_hazard * rollback, step) if rollback > 0 else math.inf,
                      mean_recovery(back, recovery_us) / rollback / 1e6 if rollback > 0 else 0.0, write, slow,
                      plan.hard_hazard * kept / step, plan.jit_us / 1e6,
                      (mean_recovery(saved, recovery_us) + pauses) / kept / 1e6)


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
    # the failures saved just in time (their rate per second of compute, beside the rates above: those of the
    # others), the share of them the tier survives, the save's blocking and their recovery (its persistent load
    # included: the save is a persistent checkpoint)
    jit_rate: float = 0.0
    jit_survived: float = 1.0
    jit_seconds: float = 0.0
    jit_recovery_seconds: float = 0.0

    def jit_loss_seconds(self, interval_steps: float, tier_interval_steps: float) -> float:
        """What one failure of a cause saved just in time costs on average (checkpoint.jit_loss_seconds): the
        survivors save unless the newest checkpoint that survived is the step before the failure, the tier's (1 in
        its interval, without a write) when the failure spares it, else the persistent one's. A failure the tier
        spares that finds its copy there is the tier's recovery of a failure in the first step of its interval (its
        load, the copies found corrupt before a good one or the persistent checkpoint: checkpoint.
        tier_fallback_seconds). Less what aborting the writes in flight of both levels spares
        (checkpoint.jit_abort_seconds: the tier's without a slowdown)."""
        step = self.step_seconds
        saved = jit_loss_seconds(step, self.jit_seconds, self.jit_recovery_seconds)
        survived = saved
        if self.tier_write_seconds == 0:
            t1 = tier_interval_steps * step
            fallback = tier_fallback_seconds(round(interval_steps / tier_interval_steps), self.tier_kept,
                                             self.tier_corrupt, self.tier_load_seconds, self.load_seconds,
                                             t1 + self.tier_seconds)
            unsaved = step + self.tier_recovery_seconds + fallback
            survived = saved + (unsaved - saved) / tier_interval_steps
        lost = jit_loss_seconds(step, self.jit_seconds, self.jit_recovery_seconds, interval_steps,
                                self.write_seconds > 0)
        spared = jit_abort_seconds(tier_interval_steps * step, self.tier_write_seconds, 1.0) + jit_abort_seconds(
            interval_steps * step, self.write_seconds, self.write_slowdown, step)
        return self.jit_survived * survived + (1.0 - self.jit_survived) * lost - spared

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
        eff = tiered_efficiency(self.tier_seconds, tier_interval_steps * step, self.tier_write_seconds,
                                self.tier_recovery_seconds, self.checkpoint_seconds, interval_steps * step,
                                self.write_seconds, self.write_slowdown, self.recovery_seconds, self.rate_survived,
                                self.rate_lost, self.tier_corrupt, self.tier_kept, self.tier_load_seconds,
                                self.load_seconds, step)
        if self.jit_rate == 0:
            return eff
        return 1.0 / (1.0 / eff + self.jit_rate * self.jit_loss_seconds(interval_steps, tier_interval_steps))

    def reach(self, interval_steps: float, tier_interval_steps: float) -> float:
        """The largest of ``rate x loss`` over the levels and the failures saved just in time: a failure's expected
        loss per mean time between such failures (the first-order model neglects its square)."""
        step = self.step_seconds
        tier = self.rate_tier * tier_loss_seconds(tier_interval_steps * step, self.tier_seconds,
                                                  self.tier_write_seconds, self.tier_recovery_seconds)
        persistent = self.rate_persistent * async_loss_seconds(interval_steps * step, self.checkpoint_seconds,
                                                               self.write_seconds, self.write_slowdown,
                                                               self.recovery_seconds, step)
        return max(tier, persistent, self.jit_rate * self.jit_loss_seconds(interval_steps, tier_interval_steps))

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
    without a tier or without failures, and with two memory tiers (a local tier under the peer one: three levels,
    which the two-level model is not; left out rather than a peer-and-persistent curve that ignores the local tier)."""
    spec = plan.spec
    t, s = spec.tier, spec.servers
    if t is None or spec.lower_tier is not None or plan.hard_hazard <= 0:
        return None
    bursts = s.burst_per_day if s is not None else 0.0
    causes = spec.cause_list
    restarts = [r - plan.load_us for r in recovery_us]  # detection and restart
    jit = jit_shares(plan)
    if not any(jit):
        down = math.fsum(sh for sh, c in zip(shares, causes, strict=True) if c.server_down)
        # the failures the tier survives and those that lose it; of the first, a recovery goes on to the persistent
        # checkpoint when every copy it loads is found corrupt (docs/model.md, "Copies kept"), which TwoLevel counts
        # where each failure falls
        rates = tier_rates(plan.hard_hazard, spec.step_seconds, t.copies, t.jump_servers, down, plan.servers,
                           bursts, plan.burst_q, plan.burst_domain)
        recovery = mean_recovery(shares, restarts) / 1e6
        return TwoLevel(spec.step_seconds, t.seconds, t.write_seconds, recovery + t.load_seconds, spec.ckpt_seconds,
                        spec.ckpt_write_seconds, spec.ckpt_write_slowdown, recovery + spec.ckpt_load_seconds, *rates,
                        t.corrupt_on_load, t.retention_checkpoints, t.load_seconds, spec.ckpt_load_seconds)

    def split(weights: list[float]) -> tuple[float, float, float]:
        """(the failures the tier survives and those that lose it per second of compute (tier_rates: found corrupt
        or not), their mean detection and restart, seconds) of the failures weighted by ``weights``; a burst of their
        causes as often as their share of the failures."""
        total = math.fsum(weights)
        if total <= 0:
            return 0.0, 0.0, 0.0
        down = math.fsum(w for w, c in zip(weights, causes, strict=True) if c.server_down) / total
        kept, lost = tier_rates(plan.hard_hazard * total, spec.step_seconds, t.copies, t.jump_servers, down,
                                plan.servers, bursts * total, plan.burst_q, plan.burst_domain)
        return kept, lost, mean_recovery(weights, restarts) / total / 1e6

    # the failures saved just in time (a persistent save, loaded as one), and the others as without them
    rate_survived, rate_lost, recovery = split([sh * (1.0 - j) for sh, j in zip(shares, jit, strict=True)])
    jit_kept, jit_lost, jit_recovery = split([sh * j for sh, j in zip(shares, jit, strict=True)])
    return TwoLevel(spec.step_seconds, t.seconds, t.write_seconds, recovery + t.load_seconds, spec.ckpt_seconds,
                    spec.ckpt_write_seconds, spec.ckpt_write_slowdown, recovery + spec.ckpt_load_seconds,
                    rate_survived, rate_lost,
                    t.corrupt_on_load, t.retention_checkpoints, t.load_seconds, spec.ckpt_load_seconds,
                    jit_rate=jit_kept + jit_lost, jit_survived=jit_kept / (jit_kept + jit_lost),
                    jit_seconds=plan.jit_us / 1e6, jit_recovery_seconds=jit_recovery + spec.ckpt_load_seconds)
