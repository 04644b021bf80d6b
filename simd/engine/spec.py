"""The job specification (seed 000's JobConfig, plus failure causes) and its compiled, integer form.

``compile_spec`` compiles one JobSpec. ``compile_seeds`` compiles one JobSpec for many seeds (a scenario's
replicas): a plan's only seed-dependent fields are its streams (``_streams``), so the rest is compiled once and
each seed's streams are derived together (streams.Seeded), the same plans field for field (tests compare).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field, fields

import numpy as np

from simd.engine import servers as srv
from simd.engine.fleet import Accelerator, combined_hazard, cumulative_shares
from simd.engine.frozen import built
from simd.engine.hazard import NEVER, per_step_cluster_hazard
from simd.engine.late import DISTRIBUTIONS
from simd.engine.servers import Servers
from simd.engine.shadow import Shadow, Stops, shadow_ranks, stops
from simd.engine.stragglers import StepTimes, bucket_bounds, bucket_of
from simd.engine.streams import Seeded, stream_state

# The engine's clock counts integer microseconds: sums of durations are then exact, so the buckets add up
# to the elapsed time bit for bit and any partition of time into ticks gives the identical state.
US_PER_SECOND = 1_000_000


def to_us(seconds: float) -> int:
    """Seconds -> integer microseconds (the engine's resolution)."""
    return round(seconds * US_PER_SECOND)


@dataclass(frozen=True)
class Cause:
    """A class of hard failure: its share of interruptions and what recovering from it costs."""

    name: str
    share: float
    detection_seconds: float = 0.0  # time from the failure to the job noticing it (seed 001, scenario 3)
    restart_seconds: float = 0.0  # time to resume from the last checkpoint once noticed
    # whether it takes its server down: with server pools the failing server goes to repair and a standby or spare
    # replaces it; False (a software fault): the server stays in the job, a new lifetime begun
    server_down: bool = True
    # whether the surviving ranks save just in time after it (JobSpec.jit_seconds; Gupta et al., EuroSys'24): the
    # job then loses only the step in flight
    jit: bool = False
    # whether an in-process restart is tried first (JobSpec.in_process_seconds; NVIDIA's resiliency extension): a
    # short restart within the job's processes that succeeds with JobSpec.in_process_success, else this path
    in_process: bool = False
    # whether its restarts may fail and loop (JobSpec.restart_failure, restart_attempts, escalation_seconds)
    crash_loop: bool = False
    # the share of its failures flagged ahead (a health check's prediction) and migrated live to a warm standby
    # (JobSpec.migration_seconds) when the pools hold one for each failing server; 0: none
    predicted: float = 0.0
    # whether its failure drops the failing data-parallel replica group while enough groups stay up
    # (JobSpec.elastic_groups; torchft, Meta's FT-HSDP): the job goes on without rollback on the groups left
    elastic: bool = False


@dataclass(frozen=True)
class Stragglers:
    """Per-rank step-time variation (seed 001, scenario 4): jitter around the base step time on every rank,
    ``slow_ranks`` ranks slowed by ``slowdown``; with ``replace_after_steps`` > 0 a median-based detector
    flags the slow ranks after that many steps of each job and replaces them (each job starts with them)."""

    jitter_seconds: float = 0.0
    slow_ranks: int = 0
    slowdown: float = 1.0
    replace_after_steps: int = 0


@dataclass(frozen=True)
class Hyper:
    """Hyper-checkpointing (seed 000, exercise 2; hyper.py): after an SDC detection, checkpoint every
    ``interval_steps`` steps, on the lattice anchored at the rollback point, for the next ``window_steps``
    executed steps of the job, then again every ``ckpt_interval_steps``."""

    interval_steps: int
    window_steps: int


@dataclass(frozen=True)
class Detector:
    """A late SDC detector (late.py): it finds a present SDC with probability ``coverage``, ``latency`` simulated
    seconds after the end of the SDC's onset step. ``distribution``: "exponential" (``scale_seconds`` = mean),
    "lognormal" (``scale_seconds`` = median, ``sigma`` = the log's standard deviation) or "uniform" (on
    [0, ``scale_seconds``]: a scanner that visits every host once per cycle)."""

    name: str
    distribution: str
    scale_seconds: float
    sigma: float = 0.0
    coverage: float = 1.0


@dataclass(frozen=True)
class CommittedSdc:
    """The committed-SDC model (late.py): an SDC present at a checkpoint is committed with it (not rolled back
    there, as in seed 000's reference semantics); a detector finds it later and the job rolls back to the newest
    retained checkpoint older than its onset. The job keeps its ``retention_checkpoints`` newest checkpoints."""

    detectors: tuple[Detector, ...]
    retention_checkpoints: int


@dataclass(frozen=True)
class MemoryTier:
    """A checkpoint tier in host memory under the persistent checkpoint (docs/model.md, "Memory tiers"; Gemini,
    SOSP'23; NVIDIA's resiliency extension's local checkpoints): every ``interval_steps`` (a divisor of the
    persistent interval; at the persistent checkpoint's own steps the persistent save stands for it) the job blocks
    ``seconds`` to copy its state to host memory, ``copies`` servers' (1: each server its own shard, ``local``; m:
    the m servers of a group, ``peer``, groups of positions ``b + t * jump_servers``); a recovery from it pays
    ``load_seconds``. Lost with the memory of its holders: a server whose failure takes it down loses its memory."""

    kind: str  # "local" or "peer": the metrics' tier label
    interval_steps: int
    seconds: float
    load_seconds: float = 0.0
    copies: int = 1
    jump_servers: int = 1
    corrupt_on_load: float = 0.0  # P(a load of its checkpoint finds it corrupt: the recovery goes on to persistent)
    # P(a save fails): it costs its blocking and is no rollback target, the tier's copy before it staying the newest
    save_failure: float = 0.0
    # the save's write after its blocking (wall seconds, 0: none): the save is a rollback target once written, a
    # rollback before that aborts it; one write in flight (a save due while one writes waits for it); no slowdown
    write_seconds: float = 0.0
    # how many of its newest durable saves the tier keeps (all lost together with the tier's memory): a load found
    # corrupt falls back to the next older one, a committed SDC's late find to the newest clean one
    retention_checkpoints: int = 1


@dataclass(frozen=True)
class JobSpec:
    """One synchronous training job (seed 000's JobConfig). Durations in seconds, rates per GPU-hour.

    The engine trusts its fields: their limits have one home, the scenario file's types in ``simd.scenario``
    (a JobSpec comes from ``ScenarioBody.job_spec``), and are not checked again here."""

    n_gpus: int
    step_seconds: float
    target_steps: int
    hard_per_gpu_hour: float
    sdc_per_gpu_hour: float
    ckpt_interval_steps: int
    ckpt_seconds: float
    validation_interval_steps: int  # 0 = no validation
    validation_seconds: float
    restart_seconds: float
    seed: int = 0
    # Causes of hard failures. Empty = seed 000's single kind ("hardware"), detected at once, recovered in
    # restart_seconds. SDC rollbacks always pay restart_seconds.
    causes: tuple[Cause, ...] = field(default=())
    stragglers: Stragglers | None = None
    hyper: Hyper | None = None  # None: checkpoints on the fixed interval only
    committed_sdc: CommittedSdc | None = None  # None: seed 000's reference semantics
    shadow: Shadow | None = None  # shadow-rank dual execution (shadow.py); None: no rank is shadowed
    # accelerator types (fleet.py); empty: n_gpus GPUs at the two rates. With a fleet, n_gpus is the sum of
    # the counts and the two rates are the fleet's count-weighted means (for display; the engine uses the types)
    fleet: tuple[Accelerator, ...] = ()
    servers: Servers | None = None  # the job's servers (servers.py); None: GPUs that fail independently, as seed 000
    # what a restart from a checkpoint at a step > 0 pays to load it, on top of its restart (restart bucket); a
    # rollback to the job's start (step 0) loads nothing. 0: the load is inside the restart (seed 000's restarts)
    ckpt_load_seconds: float = 0.0
    # asynchronous saves (docs/model.md, "Asynchronous saves"): after its blocking ``ckpt_seconds`` (the snapshot to
    # host memory) a save writes for ``ckpt_write_seconds`` of wall time, the steps that start meanwhile lasting
    # ``ckpt_write_slowdown`` times their compute; it is a rollback target once written. 0: durable at once (seed 000)
    ckpt_write_seconds: float = 0.0
    ckpt_write_slowdown: float = 1.0
    # a save fails with this probability (drawn at its snapshot, known when its write ends): it costs what a save
    # costs and is no rollback target; the job goes on (the non-fatal policy Megatron-LM#1435 asks for)
    ckpt_save_failure: float = 0.0
    # a checkpoint found corrupt when loaded, with this probability per load (Megatron-LM#5281): the recovery
    # drops it and loads the next older one it keeps, paying each load; none left: the job's start. The job keeps
    # its ``ckpt_retention`` newest checkpoints (with committed SDCs: CommittedSdc.retention_checkpoints, the one
    # retention of a scenario either way: scenario.translate)
    ckpt_corrupt_on_load: float = 0.0
    ckpt_retention: int = 0
    tier: MemoryTier | None = None  # a checkpoint tier in host memory under the persistent one; None: none
    # a second memory tier under ``tier`` (docs/model.md, "Two memory tiers": a local tier under a peer tier,
    # TierCheck's local memory, peer memory and remote storage), its interval a divisor of ``tier``'s; None: one
    # tier or none
    lower_tier: MemoryTier | None = None
    # just-in-time saves (docs/model.md, "Just-in-time saves"): after a hard failure of a cause with ``jit``, the
    # surviving ranks save the step before the failed one, blocking this long, and the recovery loads it; after
    # ``jit_share`` of those failures (drawn per failure from the "jit" stream when < 1: the others leave no healthy
    # replica of some shard)
    jit_seconds: float = 0.0
    jit_share: float = 1.0
    # in-process restarts (docs/model.md, "In-process restarts"): after a hard failure of a cause with
    # ``in_process``, once detected, the job restarts within its processes in this long (restart bucket), rolled back
    # to its checkpoint as by any restart, and succeeds with this probability; else the cause's restart follows
    in_process_seconds: float = 0.0
    in_process_success: float = 0.0
    # crash loops (docs/model.md, "Crash loops"): a restart of a cause with ``crash_loop`` fails with
    # ``restart_failure`` and is tried again, each attempt paying the cause's restart; after ``restart_attempts``
    # failed attempts the job is escalated to a manual intervention of ``escalation_seconds`` (restart bucket), which
    # ends with the job running
    restart_failure: float = 0.0
    restart_attempts: int = 1
    escalation_seconds: float = 0.0
    # live migration of predicted failures (docs/model.md, "Predicted failures migrated live"): the pause of a
    # migration to a warm standby (restart bucket), before the failing step, with no rollback
    migration_seconds: float = 0.0
    # elastic replica groups (docs/model.md, "Elastic replica groups"; 0: off): the job is this many data-parallel
    # groups; a failure of a cause with ``elastic`` drops its group while at least ``elastic_min_groups`` stay up,
    # the job going on without rollback, each step's compute a share up/groups productive and the rest degraded; the
    # group rejoins at the first step that starts ``elastic_replace_seconds`` + ``elastic_heal_seconds`` after the
    # failure's detection (its replacement, then torchft's heal: a copy of the state from a live peer); a failure
    # that would leave fewer groups takes the cause's ordinary path, and every restart brings every group back. The
    # fault-tolerant mode's steady overhead is ``elastic_overhead`` of every step's compute (degraded bucket). With
    # servers the job's servers are in blocks per group (a multiple of the groups), a failure drops every group its
    # servers are in, and the rejoin comes that long after the group's last replacement from the pools is ready
    elastic_groups: int = 0
    elastic_min_groups: int = 1
    elastic_replace_seconds: float = 0.0
    elastic_heal_seconds: float = 0.0
    elastic_overhead: float = 0.0

    @property
    def cause_list(self) -> tuple[Cause, ...]:
        return self.causes or (Cause("hardware", 1.0, 0.0, self.restart_seconds),)

    @property
    def accelerator_list(self) -> tuple[Accelerator, ...]:
        """The fleet, or the plain job's n_gpus GPUs as one type named "gpu"."""
        return self.fleet or (Accelerator("gpu", self.n_gpus, self.hard_per_gpu_hour, self.sdc_per_gpu_hour),)

    @property
    def validation_divides_checkpoint(self) -> bool:
        """Seed 000 erratum: only then is every SDC caught before a checkpoint can bake it in."""
        v = self.validation_interval_steps
        return v > 0 and self.ckpt_interval_steps % v == 0


def stream(name: str, optional: bool = True, renewed: bool = True):
    """A Plan field holding the initial PCG64 state of the seed's stream ``name`` (streams.py): the one declaration
    of a stream, from which the kernel's ``words`` rows (layout.Stream) and _streams' names come. ``renewed``: a
    parameter change (core.retarget) draws from a new stream ``name@epoch`` (docs/design.md 3.4); ``optional``
    (None when the plan has no such stream) False for the streams every plan has."""
    meta = {"stream": name, "renewed": renewed}
    return field(default=None, metadata=meta) if optional else field(metadata=meta)


@dataclass(frozen=True, eq=False)
class Plan:
    """A JobSpec compiled for the engine: integer microseconds and geometric rates. Equal when the specs are.

    The compiled loop reads every field whose type is a number or a tuple of numbers, by name
    (simd.engine.kernel.plan: its int and float fields, its tuples as segments of two arrays), and every
    ``stream`` field as a row of ``words``: a field added here is in the loop's reach with no list to extend."""

    spec: JobSpec
    step_us: int
    ckpt_us: int
    load_us: int  # a restart's load of a checkpoint at a step > 0 (JobSpec.ckpt_load_seconds)
    # an asynchronous save's write (JobSpec.ckpt_write_seconds; 0: none) and the slowdown of the steps it overlaps,
    # as the parts per million of a step's compute they add (``d * write_slow_ppm // 10**6`` for compute d)
    write_us: int
    write_slow_ppm: int
    save_fail: float  # P(a save fails) (JobSpec.ckpt_save_failure); its draws: one per save from "save-fail"
    corrupt_load: float  # P(a load finds its checkpoint corrupt) (JobSpec.ckpt_corrupt_on_load); "corrupt" stream
    val_us: int
    sdc_restart_us: int
    target: int
    ckpt_every: int
    val_every: int
    hard_hazard: float
    sdc_hazard: float
    hard_log1m: float  # log(1 - hard_hazard): 0 = never, -inf = every step
    sdc_log1m: float
    hard_stream: dict = stream("hard", optional=False)
    sdc_stream: dict = stream("sdc", optional=False)
    cause_stream: dict = stream("cause", optional=False)
    step_times: StepTimes | None  # None: every step takes step_us exactly (its own stream: STRAGGLER)
    slow_steps: int  # steps at the start of each job that have the slow ranks (NEVER: always)
    slow_ranks: int
    cause_names: tuple[str, ...]
    cause_cumulative: tuple[float, ...]  # cumulative shares, last forced to 1.0
    cause_detect_us: tuple[int, ...]
    cause_restart_us: tuple[int, ...]
    cause_stays: tuple[int, ...]  # 1 for a cause whose server stays in the job (Cause.server_down False)
    cause_jit: tuple[int, ...]  # 1 for a cause after which the job saves just in time (Cause.jit)
    # per cause: IN_PROCESS | CRASH_LOOP bits (Cause.in_process, Cause.crash_loop; 0: the cause's restart alone)
    cause_recovery: tuple[int, ...] = ()
    # hyper-checkpointing (hyper.py): 0 = off
    hyper_every: int = 0
    hyper_window: int = 0
    # a memory tier (JobSpec.tier; mem_every 0: none): its interval (a divisor of ckpt_every), blocking, load, copies
    # of each shard (1: local) and the jump between a group's positions
    mem_every: int = 0
    mem_us: int = 0
    mem_load_us: int = 0
    mem_copies: int = 1
    mem_jump: int = 1
    mem_corrupt: float = 0.0  # P(a load of the memory tier's checkpoint finds it corrupt); draws of "corrupt"
    # P(a memory tier's save fails); its draws: "tier-save-fail", draw g for the save at the end of executed step g
    mem_save_fail: float = 0.0
    mem_write_us: int = 0  # a memory tier save's write after its blocking (0: none; docs/model.md, "Memory tiers")
    # the memory tier's copies kept (MemoryTier.retention_checkpoints); above 1 they are the replica's ``tier`` aux
    # region (State.tier_ckpts) and every point of the tier is a unit of the loop
    mem_keep: int = 1
    # a second memory tier under it (JobSpec.lower_tier, a local one; low_every 0: none): its interval (a divisor of
    # mem_every), blocking, load, P(a load finds it corrupt), P(a save fails), write, copies kept, a shard's holders
    # and their jump, as mem_*'s; with it every point of the local tier is a unit of the loop, and the peer tier's
    # copies are the ``tier`` aux region whatever it keeps
    low_every: int = 0
    low_us: int = 0
    low_load_us: int = 0
    low_corrupt: float = 0.0
    low_save_fail: float = 0.0
    low_write_us: int = 0
    low_keep: int = 1
    low_copies: int = 1
    low_jump: int = 1
    jit_us: int = 0  # a just-in-time save's blocking (JobSpec.jit_seconds)
    jit_share: float = 1.0  # P(the survivors can save after a failure of such a cause); its draws: "jit", per failure
    # in-process restarts: their time and P(success) (JobSpec.in_process_*), one draw of "in-process" per try
    inproc_us: int = 0
    inproc_ok: float = 0.0
    inproc_stream: dict | None = stream("in-process")
    # crash loops: P(a restart fails), the failed attempts before the escalation, its time (JobSpec.restart_*,
    # escalation_seconds); draws of "restart-fail", restart_limit per interruption
    restart_fail: float = 0.0
    restart_limit: int = 1
    escalation_us: int = 0
    restart_fail_stream: dict | None = stream("restart-fail")
    # live migration: per cause the share of its failures flagged ahead (empty: none), a migration's pause; one draw
    # of "predict" per interruption of a cause with a share
    cause_predicted: tuple[float, ...] = ()
    migrate_us: int = 0
    predict_stream: dict | None = stream("predict")
    # elastic replica groups (JobSpec.elastic_*; elastic_groups 0: off): per cause 1 when its failure drops its
    # group (empty: none), the groups, the fewest left running, a dropped group's rejoin after its failure's
    # detection (replacement and heal), the overhead of every executed step (degraded bucket)
    cause_elastic: tuple[int, ...] = ()
    elastic_groups: int = 0
    elastic_min: int = 1
    rejoin_us: int = 0
    elastic_overhead_us: int = 0
    # committed SDCs (late.py): the detectors' laws (late.DISTRIBUTIONS' codes), scales in us, sigmas, coverages
    committed: bool = False
    retention: int = 0
    detector_names: tuple[str, ...] = ()
    detector_kind: tuple[int, ...] = ()
    detector_scale_us: tuple[float, ...] = ()
    detector_sigma: tuple[float, ...] = ()
    detector_coverage: tuple[float, ...] = ()
    detect_stream: dict | None = stream("sdc-detect")
    save_fail_stream: dict | None = stream("save-fail")
    corrupt_stream: dict | None = stream("corrupt")
    jit_stream: dict | None = stream("jit")
    tier_save_fail_stream: dict | None = stream("tier-save-fail")

    @property
    def table(self) -> int:
        """Servers in the servers' table (servers.py): the cluster's with capacity, else the job's (0: none)."""
        return self.cluster or self.servers

    @property
    def cluster(self) -> int:
        """The cluster's servers with pools (the job's, the standbys, the spares: servers.cluster_size); 0 without."""
        return srv.cluster_size(self.servers, self.standbys, self.spares) if self.pools else 0

    @property
    def extended(self) -> bool:
        """Hyper-checkpointing or committed SDCs: checkpoints may lie off the normal interval's multiples."""
        return self.hyper_every > 0 or self.committed

    # shadow ranks (shadow.py): the hard stream carries hard failures and disagreements ("stops"); without
    # shadow ranks the stop kinds are the causes
    shadow_us: int = 0  # overhead of every executed step (the shadow bucket)
    shadow_kind: int = -1  # the disagreements' index among the stop kinds; -1: no shadow ranks
    stop_cumulative: tuple[float, ...] = (1.0,)  # cumulative shares of the stop kinds, last 1.0
    stop_detect_us: tuple[int, ...] = (0,)
    stop_restart_us: tuple[int, ...] = (0,)
    step_bucket: int = 0  # the step-time histogram's bucket of every step when there are no stragglers
    # accelerator types (fleet.py): attribution of hard failures and SDC onsets
    type_names: tuple[str, ...] = ("gpu",)
    hard_type_cumulative: tuple[float, ...] = (1.0,)
    sdc_type_cumulative: tuple[float, ...] = (1.0,)
    hard_type_stream: dict | None = stream("accel-hard")  # None for a single type (no draw)
    sdc_type_stream: dict | None = stream("accel-sdc")
    # servers (servers.py): the servers' table; 0: none (the hard stream's geometric gaps, seed 000's process)
    servers: int = 0
    lemons: int = 0  # how many servers fail at the lemon multiplier (servers.is_lemon)
    lemon_fraction: float = 0.0  # servers.is_lemon's fraction (0 when the multiplier is 1)
    rate_shape: float = 0.0  # the gamma shape of the servers' rate multipliers (0: none)
    lifetime_kind: int = 0  # servers.LIFETIMES
    lifetime_shape: float = 1.0
    scale_normal: float = 0.0  # lifetime scale in steps (servers.scale) of a server that is not a lemon
    scale_lemon: float = 0.0  # and of a lemon
    lifetime_stream: dict | None = stream("lifetime")
    server_rate_stream: dict | None = stream("server-rate", renewed=False)  # the gamma multipliers' draws: a
    # server's rate is its own, the same in every epoch
    # capacity (servers.py): pools of warm standbys and spares beside the job's servers (the cluster); False: none
    pools: bool = False
    standbys: int = 0
    spares: int = 0
    spares_withheld: int = 0  # the spare pool is this many servers short (lent elsewhere)
    preempt_us: int = 0
    host_selection_us: int = 0  # after an interruption that took a spare or waited (servers.Servers)
    gang: bool = False  # a re-scheduling staffs the warm standbys too before the restart (servers.Servers.gang)
    # the repairs' automatic and manual stages: each a law (late.DISTRIBUTIONS' code), a scale in us and a sigma
    # as a detector's; P(escalated to the manual stage); P(a repair fixes nothing) of each stage
    repair_kind: int = 0
    repair_scale_us: float = 0.0
    repair_sigma: float = 0.0
    # the automatic stage as a mixture (servers.Servers.repair_mixture; empty: the law above): per component its
    # cumulative weight (the last exactly 1), law, scale in us and sigma
    repair_mix_cum: tuple[float, ...] = ()
    repair_mix_kind: tuple[int, ...] = ()
    repair_mix_scale_us: tuple[float, ...] = ()
    repair_mix_sigma: tuple[float, ...] = ()
    manual_probability: float = 0.0
    manual_kind: int = 0
    manual_scale_us: float = 0.0
    manual_sigma: float = 0.0
    repair_fail_auto: float = 0.0
    repair_fail_manual: float = 0.0
    repair_stream: dict | None = stream("repair")
    # a repair that does not hold (servers.py, "Relapses"): P(a repaired server's next lifetime is short), the short
    # law's mean in executed steps (exponential, divided by the server's gamma multiplier); 0: none
    relapse_p: float = 0.0
    relapse_scale: float = 0.0
    # diagnosis and retirement (servers.py): P(the failing server is identified), P(an identified failure is
    # pinned on another server), blames that retire a server (0: never) within a window (us); the diagnosis
    # stream's three draws per failing server (only when diagnosis is imperfect)
    diagnosis: float = 1.0
    misattribution: float = 0.0
    retire_after: int = 0
    retire_window_us: int = 0
    diagnosis_stream: dict | None = stream("diagnosis")
    # bursts (servers.py): log(1 - P(a burst in an executed step)) (0: none), the geometric size's success
    # probability q (size 2 + Geometric(q) on 0, 1, ...; 1: always 2), the failure domain's servers (0: by size);
    # the gaps' stream and the picks' (size, which servers)
    burst_log1m: float = 0.0
    burst_q: float = 1.0
    burst_domain: int = 0
    burst_stream: dict | None = stream("burst")
    burst_pick_stream: dict | None = stream("burst-pick")
    # replay (servers.py): servers.replay_table's CSR of fault steps, the log's servers (0: no replay), its period
    # in steps, the copies of it over the cluster
    replay: tuple[int, ...] = ()
    replay_servers: int = 0
    replay_period: int = 0
    replay_copies: int = 1
    # the log's own repair times (servers.replay_repair_table: microseconds, per fault step of ``replay``'s table;
    # -1 the repair model's); empty: the repair model for every repair
    replay_repair_us: tuple[float, ...] = ()
    # operational time (servers.py): with regimes, each regime's rate multiplier and log(1 - P(leaving it in a
    # step)), P(the first regime is the stormy one), the regime path's stream; the rate schedule's pieces as
    # (first step, multiplier) pairs in a row (empty: none)
    regimes: bool = False
    regime_calm: float = 1.0
    regime_stormy: float = 1.0
    regime_calm_log1m: float = 0.0
    regime_stormy_log1m: float = 0.0
    regime_p_stormy: float = 0.0
    regime_stream: dict | None = stream("regime", renewed=False)
    rate_schedule: tuple[float, ...] = ()

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Plan) and self.spec == other.spec

    def __hash__(self) -> int:
        return hash(self.spec)


# The seed's streams by Plan field (StepTimes' apart): field -> (stream name, renewed at a new epoch)
STREAMS = {f.name: (f.metadata["stream"], f.metadata["renewed"]) for f in fields(Plan) if "stream" in f.metadata}


# Which mechanisms combine, decided here and nowhere else: the scenario file asks ``refused`` about the
# mechanisms a scenario names, compile_spec about those a job switches on (``switched_on``). Every combination
# not listed runs on the engine and is checked against the per-step oracle (simd/engine/oracle.py, which models
# them all: tests/engine/statistical). Shadow ranks with hyper-checkpointing or committed SDCs: a disagreement
# is an SDC detection (it opens a hyper window) and rolls back like a hard failure (a committed SDC survives it).
# Elastic replica groups with live migration: a migration moves a failing server of a group to a standby before its
# step, which the groups' model does not place (refused).
REFUSED = {
    ("shadow", "fleet"): "shadow ranks on a mixed fleet are not modelled",
    ("shadow", "stragglers"): "the step-time model of shadowed ranks is not modelled",
    ("servers", "shadow"): "shadow ranks on servers are not modelled: a disagreement rides the hard stream",
    ("servers", "fleet"): "servers of several accelerator types are not modelled",
    ("memory_tier", "migration"): "a live migration's copy of a memory tier is not modelled",
    **{("elastic", other): f"elastic replica groups with {what} are not modelled" for other, what in (
        ("migration", "live migration (a migrated server's place in its group)"), ("shadow", "shadow ranks"),
        ("fleet", "a mixed fleet"), ("hyper", "hyper-checkpointing"),
        ("committed_sdc", "committed SDCs"), ("corrupt_loads", "corrupt loads"), ("memory_tier", "a memory tier"),
        ("jit", "just-in-time saves"), ("async_saves", "asynchronous or failing saves"),
        ("relapse", "repairs that do not hold (servers.relapse)"))},
}


# The refused pairs the per-step oracle models all the same (compile_spec(spec, oracle=True) compiles them for it)
ORACLE_RUNS: frozenset[tuple[str, str]] = frozenset()


# The scenario keys that switch each mechanism on, as a refusal names them (the words the user wrote, not the
# mechanism's name); ``{tier}`` is the memory tier's kind (peer or local).
KEYS = {
    "shadow": "shadow", "fleet": "fleet", "stragglers": "stragglers", "servers": "servers",
    "hyper": "checkpoint.hyper", "committed_sdc": "sdc.semantics: committed", "causes": "failures.causes",
    "corrupt_loads": "checkpoint.corrupt_on_load", "memory_tier": "checkpoint.tiers",
    "peer_tier": "checkpoint.tiers.peer", "local_tier": "checkpoint.tiers.local",
    "two_tiers": "checkpoint.tiers.peer and checkpoint.tiers.local",
    "tier_corrupt_loads": "checkpoint.tiers.{tier}.corrupt_on_load",
    "tier_writes": "checkpoint.tiers.{tier}.write_seconds",
    "tier_save_failure": "checkpoint.tiers.{tier}.save_failure",
    "jit": "checkpoint.just_in_time", "in_process": "recovery.in_process", "crash_loop": "recovery.crash_loop",
    "migration": "recovery.migration", "elastic": "recovery.elastic",
    "async_saves": "checkpoint.write_seconds (or checkpoint.save_failure)", "relapse": "servers.relapse",
}


def refused(mechanisms, tier: str = "peer", oracle: bool = False) -> list[str]:
    """Why the mechanisms named (``shadow``, ``fleet``, ``stragglers``, ...) cannot run together: one line per
    pair that does not combine, naming the scenario keys that switch them on (KEYS; ``tier``: the memory tier's
    kind); empty if they do. ``oracle``: in the per-step oracle, which runs the pairs of ORACLE_RUNS too."""
    on = set(mechanisms)
    return [f"{KEYS[a].format(tier=tier)} and {KEYS[b].format(tier=tier)} cannot be combined ({why})"
            for (a, b), why in REFUSED.items() if a in on and b in on and not (oracle and (a, b) in ORACLE_RUNS)]


def refused_tiers(common, tiers, oracle: bool = False) -> list[str]:
    """``refused`` for a job whose memory tiers are ``tiers`` ((kind, the mechanisms that tier switches on) pairs,
    none, one or two) beside the mechanisms ``common``: each tier's lines name its own keys, once each."""
    lines: list[str] = []
    for kind, own in tiers or (("peer", set()),):
        lines += [x for x in refused(set(common) | set(own), kind, oracle) if x not in lines]
    return lines


def _tiers(spec: JobSpec) -> tuple[MemoryTier, ...]:
    """The job's memory tiers, the one under the persistent checkpoint first."""
    return tuple(t for t in (spec.tier, spec.lower_tier) if t is not None)


def tier_switches(tier: MemoryTier) -> set[str]:
    """The mechanisms a memory tier switches on of its own (its corrupt loads, writes, failing saves)."""
    return {name for name, present in (
        ("tier_corrupt_loads", tier.corrupt_on_load > 0),
        ("tier_writes", tier.write_seconds > 0), ("tier_save_failure", tier.save_failure > 0)) if present}


def switched_on(spec: JobSpec) -> set[str]:
    """The mechanisms a job switches on: shadow ranks (at least one rank shadowed), a fleet of accelerator types,
    stragglers whose step times vary, hyper-checkpointing, committed SDCs, failure causes, servers that are not
    seed 000's process (servers.plain), ... (its memory tiers' own: ``tier_switches``)."""
    on = {name for name, present in (
        ("shadow", shadow_ranks(spec.n_gpus, spec.shadow) > 0), ("fleet", bool(spec.fleet)),
        ("stragglers", _varies(spec.stragglers)), ("hyper", spec.hyper is not None),
        ("committed_sdc", spec.committed_sdc is not None), ("causes", bool(spec.causes)),
        ("servers", not srv.plain(spec.servers, spec.n_gpus)),
        ("corrupt_loads", spec.ckpt_corrupt_on_load > 0),
        ("memory_tier", spec.tier is not None), ("two_tiers", spec.lower_tier is not None),
        *((f"{t.kind}_tier", True) for t in _tiers(spec)),
        ("jit", any(c.jit for c in spec.causes)),
        ("in_process", any(c.in_process for c in spec.causes)), ("crash_loop", any(c.crash_loop for c in spec.causes)),
        ("migration", any(c.predicted > 0 for c in spec.causes)), ("elastic", spec.elastic_groups > 0),
        ("async_saves", spec.ckpt_write_seconds > 0 or spec.ckpt_save_failure > 0),
        ("relapse", spec.servers is not None and spec.servers.relapse[0] > 0))
        if present}
    return on


def compile_spec(spec: JobSpec, epoch: int = 0, *, oracle: bool = False) -> Plan:
    """``epoch`` counts the parameter changes so far (engine.retarget): each epoch draws its failures and
    SDCs from streams of its own, so a drill's rates start a fresh (memoryless) process. ``oracle``: the plan of
    the per-step oracle, which runs the combinations of ORACLE_RUNS too (the engine's loop refuses them)."""
    if why := refused_tiers(switched_on(spec), [(t.kind, tier_switches(t)) for t in _tiers(spec)], oracle):
        raise ValueError("; ".join(why))
    if spec.lower_tier is not None and (spec.tier is None or spec.tier.kind != "peer" or spec.lower_tier.kind != "local"
                                        or spec.tier.interval_steps % spec.lower_tier.interval_steps):
        raise ValueError("a second memory tier is a local tier under a peer tier, its interval a divisor of the peer "
                         "tier's (checkpoint.tiers.local and checkpoint.tiers.peer)")
    if any(c.predicted > 0 for c in spec.causes) and (spec.servers is None or not spec.servers.warm_standbys):
        raise ValueError("a live migration needs warm standbys (servers.warm_standbys): it moves the work to one")
    if spec.elastic_groups > 0 and not srv.plain(spec.servers, spec.n_gpus) and \
            srv.count(spec.n_gpus, spec.servers) % spec.elastic_groups:
        raise ValueError(f"the job's servers ({srv.count(spec.n_gpus, spec.servers)}) must be a multiple of the "
                         f"elastic replica groups ({spec.elastic_groups}): each group a block of them")
    causes = spec.cause_list
    cumulative, acc = [], 0.0
    for c in causes:
        acc += c.share
        cumulative.append(acc)
    cumulative[-1] = 1.0
    hard, sdc, disagree = job_hazards(spec)
    step_us = to_us(spec.step_seconds)
    if step_us < 1:
        raise ValueError(f"step_seconds must be at least 1 microsecond, got {spec.step_seconds}")
    detect_us = tuple(to_us(c.detection_seconds) for c in causes)
    restart_us = tuple(to_us(c.restart_seconds) for c in causes)
    st = stops(hard, disagree, tuple(cumulative), detect_us, restart_us, to_us(spec.restart_seconds), _log1m)
    plan = dict(
        spec=spec,
        step_us=step_us,
        ckpt_us=to_us(spec.ckpt_seconds),
        load_us=to_us(spec.ckpt_load_seconds),
        write_us=to_us(spec.ckpt_write_seconds),
        write_slow_ppm=round((spec.ckpt_write_slowdown - 1.0) * 10**6),
        save_fail=spec.ckpt_save_failure,
        corrupt_load=spec.ckpt_corrupt_on_load,
        **_tier(spec.tier),
        **_lower_tier(spec.lower_tier),
        val_us=to_us(spec.validation_seconds),
        sdc_restart_us=to_us(spec.restart_seconds),
        target=spec.target_steps,
        ckpt_every=spec.ckpt_interval_steps,
        val_every=spec.validation_interval_steps,
        hard_hazard=st.hazard,  # hard failures, and disagreements with shadow ranks (shadow.py); servers: _servers
        sdc_hazard=sdc,
        hard_log1m=st.log1m,
        sdc_log1m=_log1m(sdc),
        cause_names=tuple(c.name for c in causes),
        cause_cumulative=tuple(cumulative),
        cause_detect_us=detect_us,
        cause_restart_us=restart_us,
        cause_stays=tuple(int(not c.server_down) for c in causes),
        cause_jit=tuple(int(c.jit) for c in causes),
        jit_us=to_us(spec.jit_seconds),
        jit_share=spec.jit_share,
        **_restarts(spec, causes),
        **_elastic(spec, causes, step_us),
        step_times=_step_times(spec, step_us),
        slow_steps=_slow_steps(spec),
        slow_ranks=spec.stragglers.slow_ranks if spec.stragglers and spec.stragglers.slowdown > 1 else 0,
        **_extensions(spec),
        **_shadow_and_fleet(spec, st, step_us),
        **{f: stream_state(spec.seed, name, kind) for f, (name, kind) in _streams(spec, epoch).items()},
    )
    plan.update(_servers(spec))
    return Plan(**plan)


def _tier(tier: MemoryTier | None) -> dict:
    """The Plan's memory-tier fields (none: the defaults, no tier)."""
    if tier is None:
        return {}
    return dict(mem_every=tier.interval_steps, mem_us=to_us(tier.seconds), mem_load_us=to_us(tier.load_seconds),
                mem_copies=tier.copies, mem_jump=tier.jump_servers, mem_corrupt=tier.corrupt_on_load,
                mem_save_fail=tier.save_failure, mem_write_us=to_us(tier.write_seconds),
                mem_keep=tier.retention_checkpoints)


def _lower_tier(tier: MemoryTier | None) -> dict:
    """The Plan's fields of a second memory tier (none: the defaults, no second tier)."""
    if tier is None:
        return {}
    return dict(low_every=tier.interval_steps, low_us=to_us(tier.seconds), low_load_us=to_us(tier.load_seconds),
                low_corrupt=tier.corrupt_on_load, low_save_fail=tier.save_failure,
                low_write_us=to_us(tier.write_seconds), low_keep=tier.retention_checkpoints, low_copies=tier.copies,
                low_jump=tier.jump_servers)


# Cause.in_process and Cause.crash_loop as the bits of Plan.cause_recovery
IN_PROCESS, CRASH_LOOP = 1, 2


def _restarts(spec: JobSpec, causes: tuple[Cause, ...]) -> dict:
    """The Plan fields of in-process restarts, crash loops and live migration (none when no cause has any)."""
    bits = tuple(IN_PROCESS * c.in_process + CRASH_LOOP * c.crash_loop for c in causes)
    out = {}
    if any(c.predicted > 0 for c in causes):
        out.update(cause_predicted=tuple(float(c.predicted) for c in causes), migrate_us=to_us(spec.migration_seconds))
    if not any(bits):
        return out
    return dict(**out, cause_recovery=bits, inproc_us=to_us(spec.in_process_seconds), inproc_ok=spec.in_process_success,
                restart_fail=spec.restart_failure, restart_limit=spec.restart_attempts,
                escalation_us=to_us(spec.escalation_seconds))


def _elastic(spec: JobSpec, causes: tuple[Cause, ...], step_us: int) -> dict:
    """The Plan fields of elastic replica groups (none when off). The overhead per step rounds as the engine's
    other durations (to_us of its seconds)."""
    if spec.elastic_groups <= 0:
        return {}
    return dict(cause_elastic=tuple(int(c.elastic) for c in causes), elastic_groups=spec.elastic_groups,
                elastic_min=spec.elastic_min_groups,
                rejoin_us=to_us(spec.elastic_replace_seconds) + to_us(spec.elastic_heal_seconds),
                elastic_overhead_us=round(step_us * spec.elastic_overhead))


# The per-step straggler stream (StepTimes.stream): not renewed by a retarget (durations stay a pure function of
# the executed-step index), so not named by epoch
STRAGGLER = ("straggler", "PCG64DXSM")


def _streams(spec: JobSpec, epoch: int) -> dict[str, tuple[str, str]]:
    """The Plan fields that hold a stream of the seed (StepTimes' apart) for ``spec``: field -> (name, bit
    generator), the names from the fields' declarations (``stream``). Each mechanism draws from streams of its own
    (docs/design.md 3.4), so adding one changes no other's draws; a mechanism that is off has none."""
    on = ["hard_stream", "sdc_stream", "cause_stream"]
    if spec.committed_sdc is not None:
        on.append("detect_stream")
    if spec.ckpt_save_failure > 0:
        on.append("save_fail_stream")
    tiers = _tiers(spec)
    if spec.ckpt_corrupt_on_load > 0 or any(t.corrupt_on_load > 0 for t in tiers):
        on.append("corrupt_stream")
    if spec.jit_share < 1 and any(c.jit for c in spec.causes):
        on.append("jit_stream")
    if any(t.save_failure > 0 for t in tiers):  # (two tiers never save at one step: draw g is one save's)
        on.append("tier_save_fail_stream")
    if not srv.plain(spec.servers, spec.n_gpus):
        on.append("lifetime_stream")
        if spec.servers.capacity or spec.servers.relapse[0] > 0:  # (without pools: whether a repair holds)
            on.append("repair_stream")
            if srv.imperfect_diagnosis(spec.servers):
                on.append("diagnosis_stream")
        if spec.servers.burst_per_day > 0:
            on += ["burst_stream", "burst_pick_stream"]
        if spec.servers.rate_shape > 0.0:
            on.append("server_rate_stream")
        if spec.servers.regimes:
            on.append("regime_stream")
    if any(c.in_process for c in spec.causes):
        on.append("inproc_stream")
    if any(c.crash_loop for c in spec.causes):  # (with a failure probability 0 too: a sweep's points share streams)
        on.append("restart_fail_stream")
    if any(c.predicted > 0 for c in spec.causes):
        on.append("predict_stream")
    if len(spec.accelerator_list) > 1:  # drawn only with several types
        on += ["hard_type_stream", "sdc_type_stream"]
    out = {}
    for f in on:
        name, renewed = STREAMS[f]
        out[f] = (_epoch_name(name, epoch) if renewed else name, "PCG64")
    return out


def with_seed(spec: JobSpec, seed: int) -> JobSpec:
    """``dataclasses.replace(spec, seed=seed)``, without the frozen __init__'s cost (~6 us; no __post_init__)."""
    return built(JobSpec, spec.__dict__, seed=seed)


@dataclass(frozen=True)
class Seeds:
    """One JobSpec compiled for many seeds: ``plans[i]`` equals ``compile_spec(with_seed(spec, seeds[i]), epoch)``
    field for field; ``streams``: their streams by Plan field (``"step_times"``: the straggler stream), the
    plans' ``*_stream`` fields as arrays (streams.Seeded: first draws, kernel words)."""

    plans: tuple[Plan, ...]
    streams: dict[str, Seeded]


def compile_seeds(spec: JobSpec, seeds: Sequence[int], epoch: int = 0) -> Seeds:
    """``spec`` compiled for each of ``seeds`` (its own seed ignored): the seed-independent fields once, each
    seed's streams derived together; ~15 us per seed where compile_spec costs ~0.3-0.7 ms (4 numpy bit
    generators). Every plan has its own JobSpec and StepTimes (its stream); the step-time tables and bounds are
    shared (stragglers._lines is cached: compile_spec's plans share the tables too)."""
    if not seeds:
        return Seeds((), {})
    first = compile_spec(with_seed(spec, seeds[0]), epoch)
    names = _streams(spec, epoch)
    streams = {f: Seeded(seeds, name, kind) for f, (name, kind) in names.items()}
    if first.step_times is not None:
        streams["step_times"] = Seeded(seeds, *STRAGGLER)
    columns = {f: streams[f].dicts() for f in names}
    straggler = streams["step_times"].dicts() if "step_times" in streams else None
    base = {k: v for k, v in first.__dict__.items() if not k.startswith("_")}  # not a cache kept on the plan
    plans = []
    for i, seed in enumerate(seeds):
        p = built(Plan, base)  # as compile_spec builds it, minus the frozen __init__'s cost
        d = p.__dict__
        for f, col in columns.items():
            d[f] = col[i]
        d["spec"] = with_seed(spec, seed)
        if straggler is not None:
            d["step_times"] = _with_stream(first.step_times, straggler[i])
        plans.append(p)
    return Seeds(tuple(plans), streams)


def job_hazards(spec: JobSpec) -> tuple[float, float, float]:
    """Per-step hazards of a hard failure, an SDC onset on an unshadowed rank and a shadow disagreement: the
    seed's cluster hazard over n_gpus (+ the shadow ranks' duplicates), or combined over the fleet's types."""
    k = shadow_ranks(spec.n_gpus, spec.shadow)
    if spec.fleet:  # without shadow ranks (refused)
        return (combined_hazard(tuple((a.count, a.hard_per_gpu_hour) for a in spec.fleet), spec.step_seconds),
                combined_hazard(tuple((a.count, a.sdc_per_gpu_hour) for a in spec.fleet), spec.step_seconds), 0.0)
    n, step = spec.n_gpus, spec.step_seconds
    if not k:
        return (per_step_cluster_hazard(spec.hard_per_gpu_hour, n, step),
                per_step_cluster_hazard(spec.sdc_per_gpu_hour, n, step), 0.0)
    return (per_step_cluster_hazard(spec.hard_per_gpu_hour, n + k, step),
            per_step_cluster_hazard(spec.sdc_per_gpu_hour, n - k, step) + 0.0,  # + 0.0: no -0.0 when k = n
            per_step_cluster_hazard(spec.sdc_per_gpu_hour, 2 * k, step))


def _shadow_and_fleet(spec: JobSpec, st: Stops, step_us: int) -> dict:
    """The Plan fields of shadow ranks (shadow.py) and accelerator types (fleet.py)."""
    k = shadow_ranks(spec.n_gpus, spec.shadow)
    shadow_us = to_us(spec.step_seconds * spec.shadow.overhead) if k else 0
    acc = spec.accelerator_list
    return dict(
        shadow_us=shadow_us, shadow_kind=st.shadow_kind, stop_cumulative=st.cumulative,
        stop_detect_us=st.detect_us, stop_restart_us=st.restart_us,
        step_bucket=int(bucket_of(bucket_bounds(step_us), np.array([step_us + shadow_us]))[0]),
        type_names=tuple(a.name for a in acc),
        hard_type_cumulative=cumulative_shares(tuple((a.count, a.hard_per_gpu_hour) for a in acc), spec.step_seconds),
        sdc_type_cumulative=cumulative_shares(tuple((a.count, a.sdc_per_gpu_hour) for a in acc), spec.step_seconds),
    )


def _extensions(spec: JobSpec) -> dict:
    """The Plan fields of hyper-checkpointing and committed SDCs (none when both are off)."""
    out: dict = {"retention": spec.ckpt_retention} if spec.ckpt_retention else {}
    if spec.hyper is not None:
        out.update(hyper_every=spec.hyper.interval_steps, hyper_window=spec.hyper.window_steps)
    c = spec.committed_sdc
    if c is not None:
        out.update(committed=True, retention=c.retention_checkpoints,
                   detector_names=tuple(d.name for d in c.detectors),
                   detector_kind=tuple(DISTRIBUTIONS.index(d.distribution) for d in c.detectors),
                   detector_scale_us=tuple(d.scale_seconds * US_PER_SECOND for d in c.detectors),
                   detector_sigma=tuple(d.sigma for d in c.detectors),
                   detector_coverage=tuple(d.coverage for d in c.detectors))
    return out


def _servers(spec: JobSpec) -> dict:
    """The Plan fields of servers (servers.py): none when they are seed 000's process. With a table, the hard
    stream draws nothing (``hard_log1m`` 0: the servers' lifetimes give the failures); ``hard_hazard`` stays the
    per-step hazard of the servers' exponential equivalent (the same mean rates), for the analytic views."""
    s = spec.servers
    if srv.plain(s, spec.n_gpus):
        return {}
    n = srv.count(spec.n_gpus, s)
    rates = (srv.rate_per_step(spec.hard_per_gpu_hour, 1.0, s.gpus_per_server, spec.step_seconds),
             srv.rate_per_step(spec.hard_per_gpu_hour, s.lemon_multiplier, s.gpus_per_server, spec.step_seconds))
    cap = {}
    if s.capacity:
        (kind, scale, sigma), (m_kind, m_scale, m_sigma) = s.repair, s.manual_repair
        cap = dict(pools=True, standbys=s.warm_standbys, spares=s.spares, spares_withheld=s.spares_withheld,
                   preempt_us=to_us(s.preemption_seconds), host_selection_us=to_us(s.host_selection_seconds),
                   gang=s.gang,
                   repair_kind=DISTRIBUTIONS.index(kind),
                   repair_scale_us=scale * US_PER_SECOND, repair_sigma=sigma, manual_probability=s.manual_probability,
                   repair_fail_auto=s.repair_fail[0], repair_fail_manual=s.repair_fail[1],
                   manual_kind=DISTRIBUTIONS.index(m_kind), manual_scale_us=m_scale * US_PER_SECOND,
                   manual_sigma=m_sigma, **_mixture(s.repair_mixture),
                   diagnosis=s.diagnosis, misattribution=s.misattribution, retire_after=s.retire_after,
                   retire_window_us=to_us(s.retire_window_seconds))
    bursts = {}
    if s.replay:
        table, period = srv.replay_table(s, spec.step_seconds)
        bursts.update(replay=table, replay_servers=len(s.replay), replay_period=period,
                      replay_copies=-(-srv.cluster(spec.n_gpus, s) // len(s.replay)))
        if s.replay_repairs and s.capacity:  # (without pools a failed server is back at once)
            bursts.update(replay_repair_us=srv.replay_repair_table(s, spec.step_seconds))
    if s.burst_per_day > 0:  # per executed step: a Poisson process of burst_per_day per day of compute
        p_step = -math.expm1(-s.burst_per_day * spec.step_seconds / 86400.0)
        bursts.update(burst_log1m=_log1m(p_step), burst_q=1.0 / (s.burst_mean_size - 1.0),
                      burst_domain=s.burst_domain)
    if s.relapse[0] > 0:
        bursts.update(relapse_p=s.relapse[0], relapse_scale=s.relapse[1] * 3600.0 / spec.step_seconds)
    return dict(**cap, **bursts, **_operational(s, spec.step_seconds),
                servers=n, lemons=srv.lemons(n, s), lifetime_kind=srv.LIFETIMES.index(s.lifetime),
                lemon_fraction=s.lemon_fraction if s.lemon_multiplier != 1.0 else 0.0, rate_shape=s.rate_shape,
                lifetime_shape=s.shape, scale_normal=srv.scale(s.lifetime, s.shape, rates[0]),
                scale_lemon=srv.scale(s.lifetime, s.shape, rates[1]),
                hard_log1m=0.0, hard_hazard=combined_hazard(
                    (((n - srv.lemons(n, s)) * s.gpus_per_server, spec.hard_per_gpu_hour),
                     (srv.lemons(n, s) * s.gpus_per_server, spec.hard_per_gpu_hour * s.lemon_multiplier)),
                    spec.step_seconds))


def _operational(s: srv.Servers, step_seconds: float) -> dict:
    """The Plan fields of operational time (servers.py): the regimes' multipliers, their per-step log(1 - P(leaving))
    from their mean days, the stationary P(stormy) of the per-step chain; the schedule's first steps."""
    out = {}
    if s.regimes:
        (mc, dc), (ms, ds) = s.regimes
        lc, ls = (-step_seconds / (d * 86400.0) for d in (dc, ds))
        qc, qs = -math.expm1(lc), -math.expm1(ls)
        out.update(regimes=True, regime_calm=mc, regime_stormy=ms, regime_calm_log1m=lc, regime_stormy_log1m=ls,
                   regime_p_stormy=qc / (qc + qs))
    if s.rate_schedule:
        out["rate_schedule"] = tuple(x for day, m in s.rate_schedule
                                     for x in (float(math.floor(day * 86400.0 / step_seconds + 0.5)), m))
    return out


def _mixture(components: tuple[tuple[float, str, float, float], ...]) -> dict:
    """The Plan fields of a repair mixture (servers.Servers.repair_mixture): the cumulative weights over their sum,
    the last exactly 1 (so every uniform in (0, 1] finds its component), each component's law, scale in us, sigma."""
    if not components:
        return {}
    total = math.fsum(w for w, _, _, _ in components)
    cum = [math.fsum(w for w, _, _, _ in components[:j + 1]) / total for j in range(len(components))]
    cum[-1] = 1.0
    return dict(repair_mix_cum=tuple(cum), repair_mix_kind=tuple(DISTRIBUTIONS.index(k) for _, k, _, _ in components),
                repair_mix_scale_us=tuple(x * US_PER_SECOND for _, _, x, _ in components),
                repair_mix_sigma=tuple(float(sg) for _, _, _, sg in components))


def _log1m(p: float) -> float:
    return -math.inf if p >= 1.0 else math.log1p(-p)


def _with_stream(st: StepTimes, stream: dict) -> StepTimes:
    """``st`` (as just built: nothing derived from its stream cached yet) for another seed's straggler stream:
    what StepTimes(..., stream) builds (its tables and bounds depend on the parameters only; tests compare every
    attribute), in ~1 us instead of ~7-40 us (the bounds' rounding per bucket)."""
    return built(StepTimes, st.__dict__, stream=stream)


def _varies(st: Stragglers | None) -> bool:
    """Whether step durations vary (else every step takes step_us)."""
    return st is not None and not (st.jitter_seconds == 0 and (st.slow_ranks == 0 or st.slowdown == 1.0))


def _step_times(spec: JobSpec, step_us: int, stream: dict | None = None) -> StepTimes | None:
    """The step durations (None when they do not vary); ``stream``: the straggler stream's state (None: the
    seed's, from numpy)."""
    st = spec.stragglers
    if not _varies(st):
        return None
    if stream is None:
        stream = stream_state(spec.seed, *STRAGGLER)
    return StepTimes(spec.n_gpus, step_us, st.jitter_seconds * US_PER_SECOND, st.slow_ranks, st.slowdown, stream)


def _slow_steps(spec: JobSpec) -> int:
    st = spec.stragglers
    if st is None or st.slow_ranks == 0 or st.slowdown == 1.0:
        return 0
    return st.replace_after_steps or NEVER


def _epoch_name(stream: str, epoch: int) -> str:
    return stream if epoch == 0 else f"{stream}@{epoch}"
