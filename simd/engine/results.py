"""What the engine hands out: completed jobs and events, in seconds (seed 000's SimResult vocabulary).

Promises: plain frozen values built from a State's integer counters; no simulation logic. Every second of a
job is in exactly one bucket (state.BUCKETS), so the buckets of a JobResult sum to its wall time, and
``bucket_seconds`` of a state plus its ``in_flight`` sum to the state's clock.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from simd.engine.spec import IN_PROCESS, US_PER_SECOND, Plan
from simd.engine.state import State, Totals


@dataclass(frozen=True)
class JobResult:
    """One completed job, in seed 000's SimResult vocabulary (seconds)."""

    job: int  # 0-based index of the job in this simulation
    target_steps: int
    step_seconds: float
    recompute_steps: int
    interruptions: int
    interruptions_by_cause: dict[str, int]
    sdc_detected: int
    sdc_baked: int
    checkpoints: int
    wall_seconds: float
    bucket_seconds: dict[str, float]
    shadow_detected: int = 0  # SDCs found by shadow-rank disagreement (shadow.py), also in sdc_detected
    interruptions_by_type: dict[str, int] = field(default_factory=dict)  # per accelerator type (fleet.py)
    sdc_onsets_by_type: dict[str, int] = field(default_factory=dict)
    hyper_activations: int = 0  # hyper-checkpointing windows opened (hyper.py)
    hyper_steps: int = 0  # executed steps under hyper-checkpointing
    sdc_late_found: int = 0  # committed SDCs found later by a detector (late.py)
    sdc_unrecoverable: int = 0  # ... whose onset was older than the oldest retained checkpoint
    checkpoints_lost: int = 0  # committed checkpoints discarded by late rollbacks
    sdc_found_by_detector: dict[str, int] = field(default_factory=dict)  # per detector, committed or not
    server_failures: int = 0  # servers whose lifetime ended (servers.py): at least one per interruption
    replacements: dict[str, int] = field(default_factory=dict)  # capacity: failed servers replaced, by source
    repairs: dict[str, int] = field(default_factory=dict)  # capacity: repairs escalated, false, lemons fixed
    diagnosis: dict[str, int] = field(default_factory=dict)  # capacity: failing servers missed, failures misplaced
    retirements: int = 0  # capacity: servers retired
    bursts: dict[str, int] = field(default_factory=dict)  # with bursts: how many, and the servers they struck
    gpu_hours: dict[str, float] = field(default_factory=dict)  # capacity: GPU-hours held by the job and its pools
    # asynchronous or failing saves: saves aborted by a rollback while they wrote, saves that failed, and the
    # checkpoint bucket's seconds lost to the writes' slowdown of the steps they overlapped and waiting for a write
    # ({}: saves durable at once that never fail)
    saves: dict[str, float] = field(default_factory=dict)
    # corrupt loads: loads that found their checkpoint corrupt, recoveries that fell back to the job's start
    loads: dict[str, int] = field(default_factory=dict)
    # a memory tier: its saves, the interruptions that lost it, and the rollbacks by where they recovered from
    # ({}: no memory tier); with two, summed over both, and the local tier's own as ``local_*``
    tier: dict[str, int] = field(default_factory=dict)
    jit_saves: int = 0  # just-in-time saves after hard failures (JobSpec.jit_seconds)
    load_seconds: float = 0.0  # of the restart bucket, the checkpoints' loads
    # in-process restarts by outcome ({}: no cause has one); per cause the restarts attempted and the crash loops
    # escalated ({} and 0: no cause has an in-process restart or a crash loop)
    in_process: dict[str, int] = field(default_factory=dict)
    restart_attempts_by_cause: dict[str, int] = field(default_factory=dict)
    escalations: int = 0
    # live migration: failures flagged ahead and migrated, flagged with no standby there ({}: none flagged)
    migration: dict[str, int] = field(default_factory=dict)
    # elastic replica groups: failures that dropped a group, groups that rejoined healed, and of the degraded bucket
    # the fault-tolerant mode's overhead ({}: no elastic groups)
    elastic: dict[str, float] = field(default_factory=dict)

    @property
    def checkpoint_seconds(self) -> float:
        return self.bucket_seconds["checkpoint"]

    @property
    def validation_seconds(self) -> float:
        return self.bucket_seconds["validation"]

    @property
    def restart_seconds(self) -> float:
        return self.bucket_seconds["restart"]

    @property
    def effective_utilization(self) -> float:
        """Productive (committed, kept) compute over wall time.

        Seed 000 divides ``target * step_seconds`` by wall time. The two agree except when a job ends with
        an SDC present: the seed voids those steps (counts them recomputed) yet still counts them useful in
        the numerator; here void work is never productive, so every second is in exactly one bucket.
        """
        return self.bucket_seconds["productive"] / self.wall_seconds if self.wall_seconds > 0 else 0.0

    @property
    def gpu_hours_per_productive_gpu_hour(self) -> float | None:
        """GPU-hours held (the job's and its pools') per productive GPU-hour of the job: the cost of a productive
        GPU-hour in GPU-hours (times a price: money); None without pools, inf if nothing was productive."""
        if not self.gpu_hours:
            return None
        productive = self.effective_utilization * self.gpu_hours["job"]
        return (self.gpu_hours["job"] + self.gpu_hours["pools"]) / productive if productive > 0 else float("inf")

    @property
    def mean_step_seconds(self) -> float:
        overhead = self.elastic.get("overhead_seconds", 0.0)
        compute = self.bucket_seconds["productive"] + self.bucket_seconds["rollback"] + \
            self.bucket_seconds.get("degraded", 0.0) - overhead
        # every executed step's base compute is productive or rollback (target + recompute counts the steps
        # voided at the job's end twice: they are in both), or with elastic groups out degraded
        executed = round(compute / self.step_seconds)
        slower = self.bucket_seconds["straggler"] + self.bucket_seconds.get("shadow", 0.0) + overhead
        return (compute + slower) / executed if executed else 0.0


@dataclass(frozen=True)
class Event:
    """Something that happened at simulated time ``t_us``: an interruption, an SDC verdict, a job end."""

    t_us: int
    kind: str  # "interruption" | "sdc_detected" | "sdc_baked" | "job_end"
    cause: str = ""
    job: JobResult | None = None


def job_result(p: Plan, d: Totals, index: int, wall_us: int, retired_before: int = 0,
               end_us: int | None = None) -> JobResult:
    """The JobResult of a job whose counters grew by ``d`` over ``wall_us`` of simulated time, ending at ``end_us``
    (default: ``wall_us``, a job from time 0), with ``retired_before`` servers retired before it started."""
    return JobResult(
        job=index,
        target_steps=p.target,
        step_seconds=p.spec.step_seconds,
        recompute_steps=d.steps_recomputed,
        interruptions=sum(d.interruptions),
        interruptions_by_cause=dict(zip(p.cause_names, d.interruptions, strict=True)),
        sdc_detected=d.sdc_detected,
        sdc_baked=d.sdc_baked,
        checkpoints=d.checkpoints,
        wall_seconds=wall_us / US_PER_SECOND,
        bucket_seconds={b: us / US_PER_SECOND for b, us in d.bucket_us(p.elastic_groups > 0).items()},
        shadow_detected=d.shadow_detected,
        interruptions_by_type=dict(zip(p.type_names, d.interruptions_by_type, strict=True)),
        sdc_onsets_by_type=dict(zip(p.type_names, d.sdc_onsets_by_type, strict=True)),
        hyper_activations=d.hyper_activations,
        hyper_steps=d.hyper_steps,
        sdc_late_found=d.sdc_late_found,
        sdc_unrecoverable=d.sdc_unrecoverable,
        checkpoints_lost=d.checkpoints_lost,
        sdc_found_by_detector=dict(zip(p.detector_names, d.detector_finds, strict=True)),
        server_failures=d.server_failures,
        replacements={"standby": d.replacements_standby, "spare": d.replacements_spare,
                      "waited": d.replacements_waited} if p.cluster else {},
        repairs={**({"started": d.repairs_started, "manual": d.repairs_manual, "false": d.repairs_false,
                    "false_manual": d.repairs_false_manual, "lemons_fixed": d.lemons_fixed} if p.cluster else {}),
                 **({"relapsed": d.relapses} if p.relapse_p else {})},
        diagnosis={"missed": d.diagnosis_missed, "wrong": d.diagnosis_wrong} if p.cluster else {},
        retirements=d.retirements,
        bursts={"count": d.burst_events, "servers": d.burst_servers} if p.burst_log1m else {},
        gpu_hours=gpu_hours(p, d, wall_us, retired_before, wall_us if end_us is None else end_us)
        if p.cluster else {},
        saves={"aborted": d.saves_aborted, "failed": d.saves_failed,
               "write_seconds": d.checkpoint_write_us / US_PER_SECOND,
               "wait_seconds": d.checkpoint_wait_us / US_PER_SECOND}
        if p.write_us or p.save_fail or p.mem_write_us or p.low_write_us else {},
        loads={"corrupt": d.loads_corrupt, "fallbacks_to_start": d.fallbacks_to_start} if p.corrupt_load else {},
        tier={"saves": d.tier_saves, "losses": d.tier_losses, "recoveries_tier": d.recoveries_tier,
              "recoveries_persistent": d.recoveries_persistent, "recoveries_start": d.recoveries_start,
              "loads_corrupt": d.tier_loads_corrupt,
              **({"saves_failed": d.tier_saves_failed} if p.mem_save_fail or p.low_save_fail else {}),
              **({"saves_aborted": d.tier_saves_aborted} if p.mem_write_us or p.low_write_us else {}),
              **({"local_saves": d.low_saves, "local_saves_failed": d.low_saves_failed,
                  "local_saves_aborted": d.low_saves_aborted, "local_losses": d.low_losses,
                  "local_recoveries": d.low_recoveries, "local_loads_corrupt": d.low_loads_corrupt}
                 if p.low_every else {})} if p.mem_every else {},
        jit_saves=d.jit_saves,
        load_seconds=d.load_us / US_PER_SECOND,
        in_process={"succeeded": d.in_process_ok, "failed": d.in_process_failed}
        if any(b & IN_PROCESS for b in p.cause_recovery) else {},
        restart_attempts_by_cause=dict(zip(p.cause_names, d.restart_attempts, strict=True))
        if p.cause_recovery else {},
        escalations=d.escalations,
        migration={"migrated": d.migrations, "no_standby": d.migrations_no_standby} if p.cause_predicted else {},
        elastic={"drops": d.elastic_drops, "rejoins": d.elastic_rejoins,
                 "overhead_seconds": d.steps_executed * p.elastic_overhead_us / US_PER_SECOND}
        if p.elastic_groups else {},
    )


def gpu_hours(p: Plan, d: Totals, wall_us: int, retired_before: int, end_us: int) -> dict[str, float]:
    """GPU-hours a job of plan ``p`` held over its ``wall_us`` (docs/servers.md, cost): ``job``, its GPUs the whole
    time (waiting included), and ``pools``, its standbys' and spares' (in repair too) less the retired servers'
    time (retirement times summed in whole seconds: ``Totals.retired_at_s``)."""
    per = p.spec.servers.gpus_per_server
    wall_s = wall_us / US_PER_SECOND
    retired_s = retired_before * wall_s + max(0, d.retirements * (end_us // US_PER_SECOND) - d.retired_at_s)
    pools = (p.cluster - p.servers) * wall_s - retired_s
    return {"job": p.spec.n_gpus * wall_s / 3600.0, "pools": max(0.0, pools) * per / 3600.0}


def bucket_seconds(state: State) -> dict[str, float]:
    """Seconds per bucket since the start, plus ``in_flight``; they sum to ``state.clock_seconds``."""
    out = {b: us / US_PER_SECOND for b, us in state.totals.bucket_us(state.plan.elastic_groups > 0).items()}
    out["in_flight"] = state.in_flight_us() / US_PER_SECOND
    return out
