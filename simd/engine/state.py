"""The engine's state: integer counters and positions only, so that it compares exactly."""

from __future__ import annotations

from dataclasses import dataclass, fields

from simd.engine.hazard import NEVER
from simd.engine.spec import US_PER_SECOND, Plan

# Every simulated microsecond ends in exactly one of these (docs/design.md 3.5), or is in flight:
# compute of steps not yet committed by a checkpoint, or the unit (step, validation, checkpoint, restart)
# that is still running when a tick ends.
# "shadow": the shadow ranks' overhead on every executed step (shadow.py).
# "waiting": the job standing still for a server (a spare's preemption, a repair to end: servers.py, capacity).
BUCKETS = ("productive", "rollback", "checkpoint", "validation", "restart", "detection", "straggler", "shadow",
           "waiting")


@dataclass(frozen=True)
class Totals:
    """Monotone counters since the start of the simulation."""

    steps_executed: int = 0
    steps_committed: int = 0
    steps_recomputed: int = 0
    checkpoints: int = 0  # committed checkpoints
    validations: int = 0
    sdc_onsets: int = 0
    sdc_detected: int = 0
    sdc_baked: int = 0
    interruptions: tuple[int, ...] = ()  # hard failures, per cause (Plan.cause_names)
    productive_us: int = 0
    rollback_us: int = 0
    checkpoint_us: int = 0
    validation_us: int = 0
    restart_us: int = 0
    detection_us: int = 0
    straggler_us: int = 0
    jobs_completed: int = 0
    step_hist: tuple[int, ...] = ()  # executed steps per step-time bucket (stragglers.BUCKET_FACTORS, +Inf)
    stragglers_replaced: int = 0  # slow ranks flagged by the median detector and replaced
    shadow_detected: int = 0  # SDCs found by a shadow rank's disagreement (shadow.py; also in sdc_detected)
    shadow_us: int = 0  # the shadow bucket
    interruptions_by_type: tuple[int, ...] = ()  # hard failures per accelerator type (Plan.type_names, fleet.py)
    sdc_onsets_by_type: tuple[int, ...] = ()  # SDC onsets per accelerator type
    hyper_activations: int = 0  # SDC detections that switched hyper-checkpointing on (hyper.py)
    hyper_steps: int = 0  # executed steps under hyper-checkpointing
    sdc_late_found: int = 0  # committed SDCs found later by a detector (late.py)
    sdc_unrecoverable: int = 0  # ... whose onset was older than the oldest retained checkpoint
    checkpoints_lost: int = 0  # committed checkpoints discarded by a late rollback
    detector_finds: tuple[int, ...] = ()  # SDCs found by each detector (Plan.detector_names), committed or not
    server_failures: int = 0  # servers whose lifetime ended (servers.py; several in one step: one interruption)
    waiting_us: int = 0  # the waiting bucket (servers.py, capacity)
    replacements_standby: int = 0  # failed servers replaced by a warm standby
    replacements_spare: int = 0  # ... by a spare (after its preemption)
    replacements_waited: int = 0  # ... by a server back from repair, the job waiting for it
    repairs_manual: int = 0  # repairs escalated to the manual stage (every repair has the automatic one)
    repairs_false: int = 0  # repairs that reported success without fixing the fault
    lemons_fixed: int = 0  # lemons a true repair made ordinary servers
    diagnosis_missed: int = 0  # failing servers not identified (they stayed in the job)
    diagnosis_wrong: int = 0  # failures pinned on another server (a healthy one went to repair)
    retirements: int = 0  # servers retired (blamed retire_after times within the window)
    retired_at_s: int = 0  # the retirements' simulated times summed, whole seconds (retired server-time: cost)
    repairs_started: int = 0  # repairs started (their pipeline and outcome drawn then: repairs_manual, _false)
    repairs_false_manual: int = 0  # repairs_false that were escalated
    burst_events: int = 0  # correlated failures: bursts that struck the job
    burst_servers: int = 0  # servers they struck (each also in server_failures)
    relapses: int = 0  # repairs that did not hold (servers.py, "Relapses"): a short lifetime next
    # asynchronous saves: of the checkpoint bucket, the time the steps overlapping a write lost to its slowdown and
    # the time the job waited for a write (a save due while the one before still writes; the job's end); the
    # saves a rollback aborted while they wrote (not rollback targets: ``checkpoints`` counts the durable ones)
    checkpoint_write_us: int = 0
    checkpoint_wait_us: int = 0
    saves_aborted: int = 0
    saves_failed: int = 0  # saves that failed (JobSpec.ckpt_save_failure): not rollback targets
    loads_corrupt: int = 0  # loads that found their checkpoint corrupt (the recovery fell back to an older one)
    fallbacks_to_start: int = 0  # recoveries that found every checkpoint kept corrupt and went back to the start
    # a memory tier (JobSpec.tier): its saves, the interruptions that took its copies (every holder of some shard
    # failed), and the rollbacks by where they recovered from: the tier, the persistent checkpoint, the job's start
    tier_saves: int = 0
    tier_losses: int = 0
    recoveries_tier: int = 0
    recoveries_persistent: int = 0
    recoveries_start: int = 0
    tier_loads_corrupt: int = 0  # loads of the memory tier's checkpoint found corrupt (the recovery went on)
    tier_saves_failed: int = 0  # the memory tier's saves that failed (paid, no rollback target)
    # the memory tier's saves whose write a rollback (or the job's end, which needs no copy) aborted
    tier_saves_aborted: int = 0
    jit_saves: int = 0  # just-in-time saves after a hard failure (JobSpec.jit_seconds), durable or baking an SDC
    load_us: int = 0  # of the restart bucket, the checkpoints' loads (JobSpec.ckpt_load_seconds, each load paid)
    # in-process restarts tried after a hard failure that succeeded, and that failed (the cause's restart followed)
    in_process_ok: int = 0
    in_process_failed: int = 0
    # per cause (Plan.cause_names), the cause's restarts attempted (a crash loop's failed ones included; an
    # in-process restart that succeeded takes none); () when no cause has an in-process restart or a crash loop:
    # then each interruption is one restart
    restart_attempts: tuple[int, ...] = ()
    escalations: int = 0  # crash loops escalated to a manual intervention (JobSpec.escalation_seconds)
    # failures flagged ahead and migrated live to warm standbys (no rollback), and those flagged with no standby
    # there (ordinary failures, also in ``interruptions``)
    migrations: int = 0
    migrations_no_standby: int = 0
    # elastic replica groups (JobSpec.elastic_groups): the degraded bucket (of each step run with groups out, the
    # share of its compute they would have done; the fault-tolerant mode's overhead of every step), failures that
    # dropped a group (no rollback), groups that rejoined
    degraded_us: int = 0
    elastic_drops: int = 0
    elastic_rejoins: int = 0
    # two memory tiers (JobSpec.lower_tier): the local tier's own counts, which the tier_* counts and
    # recoveries_tier include (the peer tier's: their difference)
    low_saves: int = 0
    low_saves_failed: int = 0
    low_saves_aborted: int = 0
    low_losses: int = 0
    low_recoveries: int = 0
    low_loads_corrupt: int = 0
    # of the productive bucket, the compute a job's end voided after it was committed: steps a recovery went below
    # once committed (a corrupt load, a memory tier's loss: State.hw) whose redo an SDC still held at the job's end.
    # A counter does not go down, so the credit stays in productive_us and is taken back here: the kept buckets
    # (bucket_us) count it as rollback, where every execution of a step the job did not keep belongs
    voided_us: int = 0

    def bucket_us(self, elastic: bool = False, kept: bool = True) -> dict[str, int]:
        """Microseconds per bucket (BUCKETS), and ``degraded`` with elastic replica groups (``elastic``, or any
        time there). ``kept``: the voided credit (``voided_us``) in rollback, not productive (the job's kept work:
        results, the utilization); else as the monotone counters hold it (the exposition's bucket counters)."""
        out = {b: getattr(self, f"{b}_us") for b in BUCKETS}
        if kept:
            out["productive"] -= self.voided_us
            out["rollback"] += self.voided_us
        if elastic or self.degraded_us:
            out["degraded"] = self.degraded_us
        return out

    def minus(self, other: Totals) -> Totals:
        values = {}
        for f in fields(self):
            a, b = getattr(self, f.name), getattr(other, f.name)
            values[f.name] = tuple(x - y for x, y in zip(a, b, strict=True)) if isinstance(a, tuple) else a - b
        return Totals(**values)


@dataclass(frozen=True)
class State:
    """Where a job stands. ``clock`` is the simulated time reached; ``t`` the end of the last whole unit."""

    plan: Plan
    clock: int  # microseconds
    t: int  # microseconds, <= clock; (clock - t) is the unit in progress
    step: int  # steps done in the current job, including uncommitted ones (seed's `cur`)
    last_ckpt: int  # step of the last clean checkpoint
    corrupted: bool  # an undetected SDC is in the state
    g: int  # steps executed since the simulation started (all jobs, recomputed ones included)
    hard: tuple[int, int]  # (index, g position) of the next hard failure (streams.py)
    sdc: tuple[int, int]  # (index, g position) of the next SDC candidate
    pending_us: int  # base compute time of the uncommitted steps (last_ckpt, step]
    totals: Totals
    job_start: Totals  # totals when the current job started
    job_start_t: int
    job_start_g: int  # g when the current job started
    epoch: int = 0  # parameter changes so far (core.retarget)
    # hyper-checkpointing (hyper.py): executed steps g + 1 .. hyper_end are under hyper, their checkpoints on the
    # lattice hyper_anchor + k * interval; hyper_end <= g: off
    hyper_end: int = 0
    hyper_anchor: int = 0
    # committed SDCs (late.py), while ``corrupted``: the job step of the onset (0 under the reference semantics),
    # the simulated time (us) at which the first detector to find it does (NEVER: none will) and which one
    sdc_onset: int = 0
    sdc_deadline: int = NEVER
    sdc_detector: int = 0
    clean_ckpt: int = 0  # newest checkpoint without the present SDC (committed SDCs only; else 0)
    n_corrupt: int = 0  # checkpoints committed with the present SDC
    # the newest of them (at most the retention), oldest first; with corrupt loads (JobSpec.ckpt_corrupt_on_load,
    # which committed SDCs refuse) the checkpoints the job keeps, its newest ``retention``
    corrupt_ckpts: tuple[int, ...] = ()
    # servers (servers.py), with a table (Plan.servers > 0): lifetimes drawn from the epoch's "lifetime" stream
    # (0: none yet, the servers start new at g), and for each server the executed step its lifetime ends in
    lifetimes: int = 0
    srv_next: tuple[int, ...] = ()
    srv_mult: tuple[int, ...] = ()  # with gamma rates: each server's multiplier (servers.MULT_ONE = 1); () not drawn
    # capacity: each server's role (servers.JOB, STANDBY, SPARE, REPAIR, RETIRED; () not laid out yet) and, in
    # repair, the simulated time (us) its repair ends (NEVER otherwise); repair times drawn from the epoch's "repair"
    # stream; the time until which the job waits for its replacement servers (<= t: not waiting)
    srv_role: tuple[int, ...] = ()
    srv_repair: tuple[int, ...] = ()
    srv_fixed: tuple[int, ...] = ()  # with lemons and pools: 1 for a lemon a true repair fixed
    repair_draws: int = 0
    wait_until: int = 0
    # diagnosis and retirement: draws of the epoch's "diagnosis" stream; with retirement, per server its last
    # ``retire_after`` blames (simulated time + 1 in us, 0: none; oldest first), server after server
    diagnosis_draws: int = 0
    srv_blamed: tuple[int, ...] = ()
    # bursts: gaps drawn from the "burst" stream, the executed step of the latest burst drawn (<= g: the
    # next is drawn; a retarget sets it to g, so a drill's rate starts a fresh process), draws of "burst-pick"
    burst_draws: int = 0
    burst_at: int = 0
    burst_picks: int = 0
    # operational time's regimes (servers.py): the regime path's current stretch j as (j + 1, its first executed
    # step - 1, its last executed step, its regime: 0 calm, 1 stormy); () not drawn yet
    regime: tuple[int, ...] = ()
    # an asynchronous save in flight: when its write ends (us; 0: none in flight), its job step, whether it holds
    # the present SDC (committed SDCs)
    write_end: int = 0
    write_step: int = 0
    write_sdc: bool = False
    write_fails: bool = False  # ... whether it fails (drawn at its snapshot)
    save_draws: int = 0  # draws of the epoch's "save-fail" stream (one per save)
    # corrupt loads: draws of the epoch's "corrupt" stream (one per load); after a fallback below committed work,
    # the highest committed step (its steps' re-execution is recompute, not productive again; 0: none)
    corrupt_draws: int = 0
    hw: int = 0
    # a memory tier: the newest durable persistent checkpoint (``last_ckpt`` is then the newest of either tier;
    # 0 without a tier), and the end of a recovery's load from the tier it chose (known once the interruption's
    # servers are: the job stands still until then, restart bucket; <= t: none)
    persist_last: int = 0
    load_end: int = 0
    # a memory tier beside committed SDCs: the newest clean persistent checkpoint, and the tier's clean copy when
    # newer (0: none, not newer, overwritten by a tier save that took the SDC, or lost); ``clean_ckpt`` is the
    # newest clean checkpoint taken (the work committed), which a late find may have to go below
    persist_clean: int = 0
    tier_clean: int = 0
    # a just-in-time save beside a memory tier: the end of its blocking (decided once the interruption's servers
    # are, as the tier's load: the job stands still until then, checkpoint bucket; <= t: none)
    jit_end: int = 0
    # a memory tier's save in flight (MemoryTier.write_seconds): when its write ends (us; 0: none), its job step
    tier_write_end: int = 0
    tier_write_step: int = 0
    tier_write_fails: bool = False  # ... whether it fails (MemoryTier.save_failure, drawn at its save)
    # elastic replica groups (Plan.elastic_groups; () off): per group 0 while it runs, else the simulated time (us)
    # from which it rejoins (at the start of the first step from then)
    rejoin: tuple[int, ...] = ()
    # a memory tier keeping more than one copy (Plan.mem_keep > 1): its retained copies' job steps, oldest first (a
    # copy of a step >= sdc_onset holds the present committed SDC); with one copy the tier's copy is ``last_ckpt``
    # when newer than ``persist_last``
    tier_ckpts: tuple[int, ...] = ()
    # ... with servers (docs/model.md, "Elastic replica groups"): per group out, the simulated time (us) its last
    # replacement is ready (0: running), which a restart waits for; with pools, each server's group + 1 (0: not the
    # job's; () not laid out yet), a replacement taking the group of the server it replaces
    group_ready: tuple[int, ...] = ()
    srv_group: tuple[int, ...] = ()
    # a repair that does not hold (Plan.relapse_p > 0; servers.py, "Relapses"): per server 1 when its next lifetime
    # is short (its repair did not hold; cleared when that lifetime starts); () none flagged yet
    srv_relapse: tuple[int, ...] = ()
    # two memory tiers (Plan.low_every > 0): the local tier's retained copies' job steps, oldest first (the peer
    # tier's are ``tier_ckpts`` then, whatever it keeps), and its save in flight as tier_write_*'s
    low_ckpts: tuple[int, ...] = ()
    low_write_end: int = 0
    low_write_step: int = 0
    low_write_fails: bool = False
    # with corrupt loads: the ring of kept checkpoints (corrupt_ckpts) has held its ``retention`` since the job was
    # last at step 0, so the job's start no longer counts as a kept clean checkpoint for a late find (docs/model.md,
    # "Checkpoints kept and found corrupt"): a checkpoint found corrupt and dropped since does not bring it back
    ring_filled: bool = False

    @property
    def clock_seconds(self) -> float:
        return self.clock / US_PER_SECOND

    def in_flight_us(self) -> int:
        """Elapsed time not yet in a bucket: uncommitted compute plus the unit in progress."""
        return self.pending_us + (self.clock - self.t)
