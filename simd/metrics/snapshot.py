"""Immutable snapshots of the simulation, published after each tick and read by the exporter.

A :class:`Snapshot` holds plain numbers only (ints, floats, tuples): once built it never changes, so a
scrape that reads the latest one sees one whole tick, never half of one (docs/design.md 3.6). Counters are
summed over a scenario's replicas, exactly (integer microseconds); ratios are left to the exporter.

What is static per scenario (configured interval, analytic optimum, histogram bounds) is computed once,
in :func:`scenario_info`, from the configuration and the engine's compiled plan; the maths is
simd.models.analytic's. The daemon's own health (ticks, overruns) is not in the snapshot: simd.metrics.health keeps
it in prometheus-client metrics.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields
from typing import TYPE_CHECKING

from simd import engine
from simd.engine import JobSpec, State, Totals, bucket_bounds, job_hazards, shadow_ranks
from simd.models import analytic
from simd.models.recovery import expected_restarts_us
from simd.scenario import translate

if TYPE_CHECKING:
    from simd.scenario import Scenario, ScenarioBody


@dataclass(frozen=True)
class ScenarioInfo:
    """What the parameters say about a scenario: constant, except while a drill changes the parameters."""

    name: str
    sweep: str  # "" for a scenario that is not a sweep point
    replicas: int
    step_seconds: float
    checkpoint_interval_steps: int
    cause_names: tuple[str, ...]
    # upper bounds (seconds) of the step-time histogram's finite buckets; the engine's step_hist has one
    # more entry, the +Inf bucket
    step_bounds_seconds: tuple[float, ...]
    # interruptions per simulated hour of one replica's compute: hard_hazard / step_seconds * 3600, as
    # configured (calibrated): a drill changes the rate, not this
    expected_interruptions_per_hour: float
    # analytic optimum, steps, by method ("young", "daly"); empty when the hard-failure rate is 0
    optimal_interval_steps: tuple[tuple[str, float], ...]
    analytic_efficiency: float | None  # seed 001's first-order model at the configured interval
    slowdown: float | None  # the slow ranks' slowdown; None when the scenario has no stragglers configured
    goodput_target: float | None = None  # the scenario's SLO (slo.goodput_target), if it has one
    expected_sdc_per_hour: float = 0.0  # SDC onsets per simulated hour of one replica's compute, as configured
    # the fleet's accelerator types and their GPUs (empty without a fleet); the shadowed ranks (None
    # without shadow ranks configured)
    accelerator_names: tuple[str, ...] = ()
    accelerator_gpus: tuple[int, ...] = ()
    shadow_ranks: int | None = None
    # the late SDC detectors' names (sdc.detectors; empty without committed SDCs)
    detector_names: tuple[str, ...] = ()
    # checkpoint.hyper's interval and window (None without); the checkpoints kept (sdc.retention_checkpoints or
    # checkpoint.retention_checkpoints; None when only the newest matters)
    hyper_interval_steps: int | None = None
    hyper_window_steps: int | None = None
    retention_checkpoints: int | None = None
    # servers (servers.*; None without): GPUs per server; with pools the cluster's servers (the job's, standbys,
    # spares) and the job's
    gpus_per_server: int | None = None
    cluster_servers: int | None = None
    job_servers: int | None = None
    memory_tier: str = ""  # checkpoint.tiers' kind ("peer", "local"; "": none), the tier label of its metrics
    # with both tiers, the one under it ("local"; "": one tier or none): its series of its own, the peer tier's then
    # the counts summed over both less the local one's (Totals.low_*)
    lower_tier: str = ""
    jit: bool = False  # checkpoint.just_in_time: its saves are a label value of simd_checkpoint_saves_total
    # the memory tier's saves write after their blocking (checkpoint.tiers.*.write_seconds): its writes in flight
    # and aborted saves are series of their own
    tier_writes: bool = False
    # recovery.phases (empty without): each cold restart's phases in integer microseconds, in the timeline's order;
    # per cause its restart (us) and whether it is a warm standby's swap (the restart bucket's split by phase;
    # empty: not known, no split)
    restart_phases_us: tuple[tuple[str, int], ...] = ()
    cause_restart_us: tuple[int, ...] = ()
    cause_warm: tuple[bool, ...] = ()
    # recovery.in_process and recovery.crash_loop (None without): an in-process restart's and an escalation's
    # integer microseconds (the restart bucket's parts of their own)
    in_process_us: int | None = None
    escalation_us: int | None = None
    migration_us: int | None = None  # recovery.migration (None without): a migration's pause
    elastic_groups: int = 0  # recovery.elastic's groups (0 without)


@dataclass(frozen=True)
class ScenarioSnapshot:
    """One scenario at the snapshot's simulated time: counters summed over its replicas."""

    info: ScenarioInfo
    clock_us: int  # each replica's simulated clock (they all share it)
    totals: Totals  # summed over replicas
    in_flight_us: int  # summed over replicas
    slowest_rank_score: float | None  # None when the scenario has no stragglers configured
    failed: bool = False  # quarantined: a tick raised (simd.live.lane); its counters stay where they were
    behind_us: int = 0  # how far its clock is behind the shared simulated clock (work limit, quarantine)
    overruns: int = 0  # ticks in which it reached its work limit
    # with server pools: servers by state (simd.engine's servers.STATES) summed over replicas, and the replicas
    # with neither a standby nor a spare left (engine.server_census); () and 0 without pools
    servers_by_state: tuple[int, ...] = ()
    pools_exhausted: int = 0
    writes_in_flight: int = 0  # replicas with an asynchronous save writing (State.write_end)
    tier_writes_in_flight: int = 0  # ... a memory tier's save writing (State.tier_write_end)
    low_writes_in_flight: int = 0  # ... with two tiers, the local one's (State.low_write_end)
    # the job steps since the newest durable checkpoint at or above each level: the persistent one, the memory tier
    # under it, with two tiers the local one under that (the newest of any), the largest over the replicas
    # (state_checkpoint_age_steps)
    checkpoint_age_steps: tuple[int, int, int] = (0, 0, 0)
    groups_running: int = 0  # elastic replica groups running, summed over replicas (State.rejoin's zeros)

    @property
    def elapsed_us(self) -> int:
        """Simulated time summed over replicas: the buckets plus in flight add up to it exactly."""
        return self.clock_us * self.info.replicas


@dataclass(frozen=True)
class DrillSnapshot:
    name: str
    active: bool
    starts: int  # runs started so far (scheduled and on demand)
    last_start_seconds: float | None = None  # the latest run started by the snapshot's time (simulated s)
    last_end_seconds: float | None = None
    # the definition, as the control API lists it (from the configuration in force)
    description: str = ""
    scenarios: tuple[str, ...] = ()
    duration_seconds: float = 0.0
    start_at_seconds: float | None = None


@dataclass(frozen=True)
class Snapshot:
    simulated_us: int  # the shared simulated clock
    speedup: float
    scenarios: tuple[ScenarioSnapshot, ...]
    drills: tuple[DrillSnapshot, ...] = ()


def sum_totals(totals: list[Totals]) -> Totals:
    """Field-wise sum (tuples element-wise) of equally shaped Totals."""
    first = totals[0]
    if len(totals) == 1:
        return first
    values = {}
    for f in fields(Totals):
        column = [getattr(t, f.name) for t in totals]
        if isinstance(column[0], tuple):
            values[f.name] = tuple(map(sum, zip(*column, strict=True)))
        else:
            values[f.name] = sum(column)
    return Totals(**values)


def scenario_info(scenario: Scenario, body: ScenarioBody, state: State) -> ScenarioInfo:
    """Facts of ``scenario`` that change only with its parameters ``body`` (as configured, or changed by the
    drills that run), from replica 0's ``state`` (its compiled plan). The expected rates are the configured
    ones: alerts compare what happens against the calibrated rates, also while a drill runs."""
    p, spec = state.plan, state.plan.spec
    step = spec.step_seconds
    configured = scenario.job_spec()
    shares = [b - a for a, b in zip((0.0,) + p.cause_cumulative[:-1], p.cause_cumulative, strict=True)]
    # a recovery: detection, restart (its mean, with in-process restarts or crash loops) and the checkpoint's load
    # (paid by every rollback but those to the job's start)
    recovery_us = [d + r + p.load_us for d, r in zip(p.cause_detect_us, expected_restarts_us(p), strict=True)]
    return ScenarioInfo(
        name=scenario.name,
        sweep=scenario.sweep or "",
        replicas=scenario.replicas,
        step_seconds=step,
        checkpoint_interval_steps=spec.ckpt_interval_steps,
        cause_names=p.cause_names,
        step_bounds_seconds=tuple(int(b) / 1e6 for b in bucket_bounds(p.step_us)),  # the engine's bounds
        expected_interruptions_per_hour=_expected_per_hour(configured)[0],
        expected_sdc_per_hour=_expected_per_hour(configured)[1],
        **_optimum(spec, p, shares, recovery_us),
        slowdown=spec.stragglers.slowdown if body.stragglers is not None and spec.stragglers is not None else None,
        goodput_target=scenario.slo.goodput_target if scenario.slo else None,
        accelerator_names=tuple(a.type for a in scenario.fleet) if scenario.fleet is not None else (),
        accelerator_gpus=tuple(a.count for a in scenario.fleet) if scenario.fleet is not None else (),
        shadow_ranks=shadow_ranks(configured.n_gpus, configured.shadow) if scenario.shadow is not None else None,
        detector_names=p.detector_names,
        hyper_interval_steps=p.hyper_every or None,
        hyper_window_steps=p.hyper_window or None,
        retention_checkpoints=p.retention or None,
        gpus_per_server=spec.servers.gpus_per_server if spec.servers is not None else None,
        cluster_servers=p.cluster or None,
        job_servers=p.servers if p.cluster else None,
        memory_tier=spec.tier.kind if spec.tier is not None else "",
        jit=any(c.jit for c in spec.causes),
        lower_tier=spec.lower_tier.kind if spec.lower_tier is not None else "",
        tier_writes=any(t is not None and t.write_seconds > 0 for t in (spec.tier, spec.lower_tier)),
        elastic_groups=p.elastic_groups,
        **_phases(body, p),
    )


def _phases(body: ScenarioBody, p) -> dict:
    """ScenarioInfo's restart phases (none without ``recovery.phases``) and its causes' restarts."""
    phases = body.restart_phases_us()
    ip, cl, mig = body.recovery.in_process, body.recovery.crash_loop, body.recovery.migration
    return dict(restart_phases_us=tuple(phases.items()) if phases is not None else (),
                cause_restart_us=p.cause_restart_us, cause_warm=translate.warm_swapped(body),
                in_process_us=p.inproc_us if ip is not None else None,
                escalation_us=p.escalation_us if cl is not None else None,
                migration_us=p.migrate_us if mig is not None else None)


def _optimum(spec: JobSpec, p, shares: list[float], recovery_us: list[int]) -> dict:
    """The analytic optimum of the checkpoint interval and the efficiency at the configured one: seed 001's model
    (the asynchronous one with a write; live migration and just-in-time saves in it: analytic.first_order, the
    sweep's model too); with a memory tier, the persistent interval's optimum on the failures that lose the tier
    alone and the two-level efficiency, the tier's writes included, where the first-order model reaches
    (docs/checkpoints.md, section 6)."""
    if spec.tier is None:
        single = analytic.first_order(p, shares, recovery_us)
        if single is None:
            return dict(optimal_interval_steps=(), analytic_efficiency=None)
        return dict(optimal_interval_steps=single.optimal_interval_steps,
                    analytic_efficiency=single.efficiency(spec.ckpt_interval_steps))
    model = analytic.two_level(p, shares, recovery_us)
    if model is None:
        return dict(optimal_interval_steps=(), analytic_efficiency=None)
    # beyond the first-order model's reach no efficiency rather than a wrong one (analytic.REACH)
    return dict(optimal_interval_steps=model.optimal_interval_steps,
                analytic_efficiency=model.efficiency(spec.ckpt_interval_steps, spec.tier.interval_steps)
                if model.in_reach(spec.ckpt_interval_steps, spec.tier.interval_steps) else None)


def _expected_per_hour(spec: JobSpec) -> tuple[float, float]:
    """(interruptions, SDC onsets) per hour of compute: over every GPU, the fleet's types and the shadow ranks'
    duplicates included (an SDC on a shadowed rank is an onset found at once)."""
    hard, sdc, disagree = job_hazards(spec)
    if disagree:
        sdc = -math.expm1(math.log1p(-sdc) + math.log1p(-disagree))
    return analytic.per_hour(hard, spec.step_seconds), analytic.per_hour(sdc, spec.step_seconds)


def slowest_rank_score(info: ScenarioInfo, state: State) -> float | None:
    """NVIDIA nvidia-resiliency-ext style relative score of the slowest rank, in [0, 1]: its performance
    relative to the best rank. 1/slowdown while the slow ranks are in ``state``'s current job, else 1."""
    if info.slowdown is None:
        return None
    p = state.plan
    present = p.slow_ranks > 0 and state.g - state.job_start_g < p.slow_steps
    return 1.0 / info.slowdown if present else 1.0


def scenario_snapshot(info: ScenarioInfo, states: tuple[State, ...]) -> ScenarioSnapshot:
    """Sum a scenario's replicas (all at the same simulated clock); the score is replica 0's."""
    batch = getattr(states, "batch", None)  # states from the engine's batch path: the sums from its arrays
    if batch is not None:
        clock = states[0].clock
        if (batch.pos[:, 0] != clock).any():
            raise ValueError("replicas of a scenario must share the simulated clock")
        by_state, exhausted = engine.server_census(states) if info.cluster_servers else ((), 0)
        return ScenarioSnapshot(info=info, clock_us=clock, totals=batch.summed_totals(),
                                in_flight_us=batch.in_flight_us(),
                                slowest_rank_score=slowest_rank_score(info, states[0]),
                                servers_by_state=by_state, pools_exhausted=exhausted,
                                writes_in_flight=batch.writes_in_flight(),
                                tier_writes_in_flight=batch.writes_in_flight(tier=True),
                                low_writes_in_flight=batch.writes_in_flight(low=True),
                                groups_running=batch.groups_running(),
                                checkpoint_age_steps=batch.checkpoint_age_steps())
    clock = states[0].clock
    if any(s.clock != clock for s in states):
        raise ValueError("replicas of a scenario must share the simulated clock")
    by_state, exhausted = engine.server_census(states) if info.cluster_servers else ((), 0)
    return ScenarioSnapshot(
        info=info,
        clock_us=clock,
        totals=sum_totals([s.totals for s in states]),
        in_flight_us=sum(s.in_flight_us() for s in states),
        slowest_rank_score=slowest_rank_score(info, states[0]),
        servers_by_state=by_state,
        pools_exhausted=exhausted,
        writes_in_flight=sum(s.write_end > 0 for s in states),
        tier_writes_in_flight=sum(s.tier_write_end > 0 for s in states),
        low_writes_in_flight=sum(s.low_write_end > 0 for s in states),
        groups_running=sum(r == 0 for s in states for r in s.rejoin),
        checkpoint_age_steps=tuple(max(a) for a in zip(*(state_checkpoint_age_steps(s) for s in states),
                                                       strict=True)),
    )


def state_checkpoint_age_steps(s: State) -> tuple[int, int, int]:
    """A replica's job steps since its newest durable checkpoint at or above each level: persistent
    (State.persist_last with a memory tier, else last_ckpt); the tier under it (with two tiers the peer tier's newest
    copy, State.tier_ckpts, or the persistent checkpoint when newer: it stands for the tier's saves; with one,
    last_ckpt); the newest of any (last_ckpt). What a recovery that finds that level whole and the ones below it lost
    would redo; 0 at the job's start and right after a rollback."""
    newest = s.step - s.last_ckpt
    if not s.plan.mem_every:
        return newest, newest, newest
    if not s.plan.low_every:
        return s.step - s.persist_last, newest, newest
    return s.step - s.persist_last, s.step - max(s.persist_last, *s.tier_ckpts[-1:]), newest
