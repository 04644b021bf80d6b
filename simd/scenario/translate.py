"""A validated scenario -> the engine's JobSpec: causes with their detection and restart, the fleet's types,
stragglers, shadow ranks, hyper-checkpointing and committed SDCs with their detectors."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from simd.engine import (
    Accelerator,
    Cause,
    CommittedSdc,
    Detector,
    Hyper,
    JobSpec,
    MemoryTier,
    Servers,
    Shadow,
    Stragglers,
)
from simd.models import recovery

if TYPE_CHECKING:
    from simd.scenario.schema import ScenarioBody, SdcDetector, SdcModel, ServersConfig


def causes(body: ScenarioBody) -> tuple[Cause, ...]:
    """Each cause with its detection latency and its restart under the recovery strategy."""
    shares = body.failures.cause_shares() if body.failures is not None else None
    warm = body.recovery.strategy == "warm"
    jit = set() if body.checkpoint.just_in_time is None else set(body.checkpoint.just_in_time.causes or shares or
                                                                 {"hardware"})
    ip, loops = restart_paths(body)
    flagged = body.recovery.migration.causes if body.recovery.migration is not None else {}
    el = body.recovery.elastic
    if shares is None:  # seed 000: one kind of failure, detected at once
        restart = recovery.WARM_SWAP_SECONDS if warm else body.cold_restart_seconds
        drops = el is not None and (el.causes is None or "hardware" in el.causes)
        return (Cause("hardware", 1.0, 0.0, restart, jit="hardware" in jit, in_process="hardware" in ip,
                      crash_loop="hardware" in loops, predicted=flagged.get("hardware", 0.0), elastic=drops),) \
            if jit or ip or loops or flagged or drops else (Cause("hardware", 1.0, 0.0, restart),)
    out = []
    for name, share in shares.items():
        given = body.failures.cause_spec(name)  # a cause given as data: its own detection, restart, warm swap
        detect = given.detection_seconds if given and given.detection_seconds is not None else \
            recovery.DETECTION_SECONDS.get(name, 0.0)
        swaps = given.warm if given and given.warm is not None else name in recovery.WARM_CAPABLE_CAUSES
        cold = given.restart_seconds if given and given.restart_seconds is not None else body.cold_restart_seconds
        down = given.server_down if given else True
        out.append(Cause(name, share, detect, recovery.WARM_SWAP_SECONDS if warm and swaps else cold,
                         down, name in jit, name in ip, name in loops, flagged.get(name, 0.0),
                         el is not None and (name in el.causes if el.causes is not None else down)))
    return tuple(out)


def restart_paths(body: ScenarioBody) -> tuple[set[str], set[str]]:
    """The causes an in-process restart is tried for, and those whose restarts may loop (recovery.in_process,
    recovery.crash_loop: a crash loop without causes is every cause's)."""
    ip, cl = body.recovery.in_process, body.recovery.crash_loop
    shares = body.failures.cause_shares() if body.failures is not None else None
    every = set(shares) if shares is not None else {"hardware"}
    return (set(ip.causes) if ip is not None else set(),
            set() if cl is None else every if cl.causes is None else set(cl.causes))

def warm_swapped(body: ScenarioBody) -> tuple[bool, ...]:
    """Per cause (causes' order): whether its restart is the warm standby's swap (recovery.strategy warm and a
    cause a swap recovers), not the cold restart."""
    if body.recovery.strategy != "warm":
        return tuple(False for _ in causes(body))
    shares = body.failures.cause_shares() if body.failures is not None else None
    if shares is None:
        return (True,)
    out = []
    for name in shares:
        given = body.failures.cause_spec(name)
        out.append(given.warm if given and given.warm is not None else name in recovery.WARM_CAPABLE_CAUSES)
    return tuple(out)


def job_spec(body: ScenarioBody, seed: int | None = None) -> JobSpec:
    """The engine's job for one replica (``seed``; default: the scenario's own)."""
    fleet = tuple(Accelerator(a.type, a.count, a.hard_per_gpu_hour, a.sdc_per_gpu_hour) for a in body.fleet or ())
    n = body.gpus
    if fleet:  # the fleet's count-weighted mean rates, for display (the engine uses the types)
        hard = math.fsum(a.count * a.hard_per_gpu_hour for a in fleet) / n
        sdc = math.fsum(a.count * a.sdc_per_gpu_hour for a in fleet) / n
    else:
        hard, sdc = body.failures.hard_per_gpu_hour, body.failures.sdc_per_gpu_hour
    return JobSpec(
        n_gpus=n,
        step_seconds=body.step_seconds,
        target_steps=body.target_steps,
        hard_per_gpu_hour=hard,
        sdc_per_gpu_hour=sdc,
        ckpt_interval_steps=body.checkpoint.interval_steps,
        ckpt_seconds=body.checkpoint.seconds,
        ckpt_load_seconds=body.checkpoint.load_seconds,
        ckpt_write_seconds=body.checkpoint.write_seconds,
        ckpt_write_slowdown=body.checkpoint.write_slowdown,
        ckpt_save_failure=body.checkpoint.save_failure.probability if body.checkpoint.save_failure else 0.0,
        ckpt_corrupt_on_load=body.checkpoint.corrupt_on_load,
        # the one retention: with committed SDCs it is theirs (CommittedSdc), else the job's
        ckpt_retention=0 if body.committed_sdc or body.checkpoint.retention_checkpoints is None
        else body.checkpoint.retention_checkpoints,
        validation_interval_steps=body.validation.interval_steps,
        validation_seconds=body.validation.seconds,
        restart_seconds=body.cold_restart_seconds,
        seed=body.seed if seed is None else seed,
        causes=causes(body),
        stragglers=None if body.stragglers is None else Stragglers(
            jitter_seconds=body.stragglers.jitter_seconds, slow_ranks=body.stragglers.slow_ranks,
            slowdown=body.stragglers.slowdown,
            replace_after_steps=body.stragglers.mitigation.detect_after_steps
            if body.stragglers.mitigation else 0),
        shadow=None if body.shadow is None else Shadow(body.shadow.fraction, body.shadow.overhead),
        fleet=fleet,
        hyper=None if body.checkpoint.hyper is None else Hyper(body.checkpoint.hyper.interval_steps,
                                                               body.checkpoint.hyper.window_steps),
        committed_sdc=None if body.sdc is None else committed_sdc(body.sdc, body.checkpoint.retention_checkpoints),
        servers=None if body.servers is None else servers(body.servers),
        tier=memory_tier(body),
        lower_tier=memory_tier(body, lower=True),
        jit_seconds=body.checkpoint.just_in_time.seconds if body.checkpoint.just_in_time is not None else 0.0,
        jit_share=body.checkpoint.just_in_time.share if body.checkpoint.just_in_time is not None else 1.0,
        **restart_fields(body),
    )


def restart_fields(body: ScenarioBody) -> dict:
    """JobSpec's fields of in-process restarts, crash loops, live migration and elastic replica groups (none when the
    scenario has none)."""
    out = {}
    if (ip := body.recovery.in_process) is not None:
        out.update(in_process_seconds=ip.seconds, in_process_success=ip.success_probability)
    if (cl := body.recovery.crash_loop) is not None:
        out.update(restart_failure=cl.failure_probability, restart_attempts=cl.max_attempts,
                   escalation_seconds=cl.escalation_seconds)
    if (m := body.recovery.migration) is not None:
        out.update(migration_seconds=m.seconds)
    if (el := body.recovery.elastic) is not None:
        out.update(elastic_groups=el.groups, elastic_min_groups=el.min_groups,
                   elastic_replace_seconds=el.replace_seconds, elastic_heal_seconds=el.heal_seconds,
                   elastic_overhead=el.overhead)
    return out


def memory_tier(body: ScenarioBody, lower: bool = False) -> MemoryTier | None:
    """The engine's memory tier of a scenario's ``checkpoint.tiers``, the one under the persistent checkpoint, or
    with ``lower`` the one under that (the local tier beside a peer tier); None: none."""
    given = body.checkpoint.tiers.given if body.checkpoint.tiers is not None else ()
    if len(given) <= lower:
        return None
    kind, t = given[lower]
    return MemoryTier(kind, t.interval_steps, t.seconds, t.load_seconds, getattr(t, "copies", 1),
                      getattr(t, "jump_servers", 1), t.corrupt_on_load,
                      t.save_failure.probability if t.save_failure is not None else 0.0, t.write_seconds,
                      t.retention_checkpoints)


def servers(cfg: ServersConfig) -> Servers:
    """The engine's Servers of a scenario's ``servers``: pools (and what only pools have: repairs, diagnosis,
    retirement) when it has warm standbys or spares."""
    lt = cfg.lifetime
    shape = lt.shape if lt.distribution == "weibull" else lt.sigma if lt.distribution == "lognormal" else 1.0
    pools = {}
    if cfg.pools:  # the engine's Servers.capacity: warm_standbys set (0 when the scenario has spares only)
        r, sp = cfg.repair, cfg.spares
        pools = dict(warm_standbys=cfg.warm_standbys or 0, spares=sp.count if sp else 0,
                     spares_withheld=sp.withheld if sp else 0, preemption_seconds=sp.preemption_seconds if sp else 0.0,
                     **automatic_repair(r.automatic))
        if r.false_success is not None:
            pools.update(repair_fail=(r.false_success.automatic, r.false_success.manual))
        if cfg.host_selection_seconds is not None:
            pools.update(host_selection_seconds=cfg.host_selection_seconds)
        if cfg.rescheduling == "gang":
            pools.update(gang=True)
        if r.manual is not None:
            pools.update(manual_probability=r.manual.probability, manual_repair=repair_time(r.manual.time))
        if cfg.diagnosis is not None:
            pools.update(diagnosis=cfg.diagnosis.probability, misattribution=cfg.diagnosis.misattribution)
        if cfg.retirement is not None:
            pools.update(retire_after=cfg.retirement.failures, retire_window_seconds=cfg.retirement.window_seconds)
    if cfg.replay is not None:
        times, span = cfg.replay.times()
        pools.update(replay=times, replay_span_seconds=span)
        if cfg.replay.repairs == "log":
            pools.update(replay_repairs=cfg.replay.repair_times())
    b = cfg.bursts
    if b is not None:
        pools.update(burst_per_day=b.per_day, burst_mean_size=b.mean_size or 2.0, burst_domain=b.domain_servers or 0)
    if cfg.regimes is not None:
        pools.update(regimes=tuple((r.multiplier, r.mean_days) for r in (cfg.regimes.calm, cfg.regimes.stormy)))
    if cfg.rate_schedule is not None:
        pools.update(rate_schedule=tuple((p.from_day, p.multiplier) for p in cfg.rate_schedule))
    if cfg.relapse is not None:
        pools.update(relapse=(cfg.relapse.probability, cfg.relapse.mean_hours))
    return Servers(cfg.gpus_per_server, cfg.lemons.fraction if cfg.lemons else 0.0,
                   cfg.lemons.multiplier if cfg.lemons else 1.0, lt.distribution, shape,
                   cfg.rates.gamma_shape if cfg.rates else 0.0, **pools)


def automatic_repair(r) -> dict:
    """The automatic stage as the engine's Servers takes it: ``repair``, or a mixture's ``repair_mixture``."""
    if r.distribution == "mixture":
        return dict(repair_mixture=tuple((c.weight, *repair_time(c.time)) for c in r.components))
    return dict(repair=repair_time(r))


def repair_time(r) -> tuple[str, float, float]:
    """A repair time as the engine takes it: (distribution, scale seconds, sigma)."""
    scale = r.mean_seconds if r.distribution == "exponential" else \
        r.median_seconds if r.distribution == "lognormal" else r.max_seconds
    return r.distribution, scale, r.sigma if r.distribution == "lognormal" else 0.0


def detector(d: SdcDetector) -> Detector:
    """One detection layer as the engine takes it."""
    lat = d.latency
    if lat.distribution == "exponential":
        return Detector(d.name, "exponential", lat.mean_seconds, 0.0, d.coverage)
    if lat.distribution == "lognormal":
        return Detector(d.name, "lognormal", lat.median_seconds, lat.sigma, d.coverage)
    return Detector(d.name, "uniform", lat.max_seconds, 0.0, d.coverage)


def committed_sdc(model: SdcModel, retention: int | None = None) -> CommittedSdc | None:
    """The committed-SDC mechanism, or None under the reference semantics; its retention is the scenario's one
    (``sdc.retention_checkpoints`` or ``checkpoint.retention_checkpoints``: ``retention``)."""
    if model.semantics == "reference":
        return None
    return CommittedSdc(tuple(detector(d) for d in model.detectors), model.retention_checkpoints or retention)
