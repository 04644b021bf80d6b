"""The scenario file's shape: every key, its type and bounds, and the rules that join keys (docs/design.md 3).

Frozen pydantic models, strict (no "5" -> 5, no bool as int) and closed (an unknown key is an error). The bounded
types are in simd.scenario.limits, the error lines in simd.scenario.errors, reading in simd.scenario.load.
"""

from __future__ import annotations

import functools
import math
import os
import threading
from collections import OrderedDict
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Annotated, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Discriminator,
    Field,
    PrivateAttr,
    Tag,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)
from pydantic.json_schema import SkipJsonSchema
from pydantic_core import InitErrorDetails

from simd.engine import US_PER_SECOND, cluster_size, refused_tiers, to_us
from simd.models import recovery
from simd.quoting import quoted
from simd.scenario import errors, translate
from simd.scenario.limits import (
    MAX_ALL_SCENARIOS,
    MAX_DRILLS,
    MAX_JOB_SECONDS,
    MAX_SCENARIOS,
    MAX_SWEEPS,
    MAX_TOTAL_REPLICAS,
    TICK_WORK_US,
    WARNING_CODES,
    CostSeconds,
    IntervalSteps,
    LatencySeconds,
    Rate,
    SimulatedSeconds,
    Speedup,
    StepSeconds,
    TickSeconds,
    WarningCode,
)

if TYPE_CHECKING:
    from simd.engine import Cause, JobSpec


@functools.cache
def _attribute_docs() -> dict[str, dict[str, str]]:
    """Each class of this module: its fields' docstrings (the string right under an annotated name), read the way
    pydantic's ``use_attribute_docstrings`` reads them, in one pass over this file."""
    import ast
    import inspect
    from itertools import pairwise
    from pathlib import Path

    docs = {}
    for node in ast.parse(Path(__file__).read_text(encoding="utf-8")).body:
        if isinstance(node, ast.ClassDef):
            docs[node.name] = {
                a.target.id: inspect.cleandoc(b.value.value) for a, b in pairwise(node.body)
                if isinstance(a, ast.AnnAssign) and isinstance(a.target, ast.Name) and isinstance(b, ast.Expr)
                and isinstance(b.value, ast.Constant) and isinstance(b.value.value, str)}
    return docs


def _field_docs(schema: dict, cls: type) -> None:
    """A model's JSON schema: each field's docstring as its description (from the class that declares it)."""
    for name, prop in schema.get("properties", {}).items():
        owner = next((k for k in cls.__mro__ if name in k.__dict__.get("__annotations__", {})), None)
        doc = _attribute_docs().get(owner.__name__, {}).get(name) if owner is not None else None
        if doc is not None:
            prop["description"] = doc


class _Strict(BaseModel):
    # strict: no "5" -> 5 coercion, no bool as int; extra keys are errors; frozen once validated. The docstring
    # under a field is its meaning in docs/scenario-file.md (simd.scenario.docs), put in the JSON schema by
    # _field_docs when one is generated: pydantic's use_attribute_docstrings would read every class's source at
    # import (~0.08 s of CPU in the start of every command).
    model_config = ConfigDict(strict=True, extra="forbid", frozen=True, json_schema_extra=_field_docs)




CauseName = Annotated[str, Field(pattern=r"^[a-z0-9_]+$", max_length=32)]
# Named cause mixes. llama3: Llama 3 paper's root causes of interruptions as seed 001 groups them.
CAUSE_PRESETS: dict[str, dict[str, float]] = {"llama3": recovery.LLAMA3_CAUSE_SHARES}


class CauseSpec(_Strict):
    """One cause of hard failures as data: its share, how the job finds it, how it recovers from it."""

    share: Annotated[float, Field(gt=0, le=1)]
    """Its share of the hard failures (the causes' shares sum to 1)."""
    detection_seconds: CostSeconds | None = None
    """From the failure to the job noticing it, the job making no progress meanwhile (detection bucket): 0 for a
    failure that raises an error at once, a latency, or a watchdog's timeout for a hang (NCCL's default is 10
    minutes). Absent: the latency simd/models/recovery.py gives a cause of that name (Llama 3's causes), else 0."""
    restart_seconds: CostSeconds | None = None
    """Its cold restart. Absent: the scenario's `restart_seconds`."""
    warm: bool | None = None
    """Whether a warm standby's swap (ByteRobust, 55 s) recovers it under `recovery.strategy: warm`. Absent: for
    gpu, network and host (Llama 3's hardware causes), not for the others."""
    server_down: bool = True
    """Whether it takes its server down: with server pools (`servers.warm_standbys`, `servers.spares`) the failing
    server goes to repair and a standby or spare replaces it (the restart may wait for one). false (a software
    fault, a hang): the server stays in the job, as good as before."""


# a cause's value: its share alone, or its data (a mapping); the discriminator keeps an error to the form given
# (its tags start with "=": errors.field_path leaves them out of a key's path)
CauseValue = Annotated[Annotated[Annotated[float, Field(gt=0, le=1)], Tag("=share")]
                       | Annotated[CauseSpec, Tag("=data")],
                       Discriminator(lambda v: "=data" if isinstance(v, dict | CauseSpec) else "=share")]


class Failures(_Strict):
    """The job's failure processes: per-GPU rates of hard failures and SDC onsets, and the causes of the hard
    failures."""

    # (Field(...) rather than `Rate | None`: the annotation stays `float | None`, which simd.offline.sweep.grid reads)
    hard_per_gpu_hour: float | None = Field(default=None, ge=0, le=3.6e6, allow_inf_nan=False)
    """Hard failures per GPU-hour (the job fails, rolls back to its last checkpoint and restarts). Required, except
    with a fleet, which gives the rates per accelerator type (then refused here)."""
    sdc_per_gpu_hour: float | None = Field(default=None, ge=0, le=3.6e6, allow_inf_nan=False)
    """Silent data corruptions per GPU-hour (silent until validation, a shadow rank or a detector finds them).
    Required, except with a fleet."""
    causes: Annotated[Annotated[Literal["llama3"], Tag("=preset")]
                      | Annotated[dict[CauseName, CauseValue], Tag("=mapping")],
                      Discriminator(lambda v: "=preset" if isinstance(v, str) else "=mapping")] | None = None
    """The hard failures' causes and their shares (summing to 1): `llama3` (the Llama 3 paper's root causes as
    seed 001 groups them) or a mapping such as `{gpu: 0.6, network: 0.4}`, each cause a share or its data
    (`{share, detection_seconds, restart_seconds, warm}`: a hang found by a timeout is `{share: 0.05,
    detection_seconds: 600, warm: false}`). Each cause has its detection latency and restart; absent: one kind,
    `hardware`, detected at once."""

    @field_validator("causes")
    @classmethod
    def _shares_sum_to_one(cls, v):
        if isinstance(v, dict):
            if not v:
                raise ValueError("must name at least one cause")
            total = math.fsum(x.share if isinstance(x, CauseSpec) else x for x in v.values())
            if abs(total - 1.0) > 1e-3:
                raise ValueError(f"shares must sum to 1, got {total:g}")
        return v

    def cause_shares(self) -> dict[str, float] | None:
        if self.causes is None:
            return None
        shares = CAUSE_PRESETS[self.causes] if isinstance(self.causes, str) else \
            {k: v.share if isinstance(v, CauseSpec) else v for k, v in self.causes.items()}
        total = math.fsum(shares.values())
        return {k: v / total for k, v in shares.items()}

    def cause_spec(self, name: str) -> CauseSpec | None:
        """The data given for cause ``name`` (None: a share alone, or a preset)."""
        v = self.causes.get(name) if isinstance(self.causes, dict) else None
        return v if isinstance(v, CauseSpec) else None


class PhaseLaw(_Strict):
    """A phase that grows with the job's size, from its time `seconds` at `at_gpus` GPUs: `power`, `seconds x
    (n_gpus / at_gpus) ** exponent`; `log`, `seconds + per_doubling_seconds x log2(n_gpus / at_gpus)`."""

    law: Literal["power", "log"]
    """The law's form."""
    at_gpus: Annotated[int, Field(gt=0, le=10_000_000)]
    """The job size the phase was measured at."""
    seconds: CostSeconds
    """The phase's time at `at_gpus`."""
    exponent: Annotated[float, Field(ge=0, le=3, allow_inf_nan=False)] | None = None
    """`power` only (required there): how it grows, 1 in proportion to the GPUs, 0 not at all (NCCL's
    initialization from 8,192 to 98,304 GPUs: 0.563, docs/model.md)."""
    per_doubling_seconds: Annotated[float, Field(ge=-1e6, le=1e6, allow_inf_nan=False)] | None = None
    """`log` only (required there): what each doubling of the job adds (negative: takes away)."""

    @model_validator(mode="after")
    def _form(self) -> PhaseLaw:
        need, other = ("exponent", "per_doubling_seconds") if self.law == "power" else \
            ("per_doubling_seconds", "exponent")
        if getattr(self, need) is None or getattr(self, other) is not None:
            raise ValueError(f"law: {self.law} takes {need} (not {other})")
        return self

    def at(self, n_gpus: int) -> float:
        """The phase's seconds in a job of ``n_gpus``."""
        r = n_gpus / self.at_gpus
        return self.seconds * r ** self.exponent if self.law == "power" else \
            self.seconds + self.per_doubling_seconds * math.log2(r)


# a phase's value: seconds, or a law in the job's size (the discriminator keeps an error to the form given)
PhaseValue = Annotated[Annotated[CostSeconds, Tag("=seconds")] | Annotated[PhaseLaw, Tag("=law")],
                       Discriminator(lambda v: "=law" if isinstance(v, dict | PhaseLaw) else "=seconds")]


class RestartPhases(_Strict):
    """The cold restart as a timeline of phases (TrainMover's at 8,192 GPUs: stop 31.2 s, reschedule 90 s,
    checkpoint load 93.6 s, NCCL 65.4 s, warm-up 108 s), each in seconds or a law in the job's size evaluated
    at the scenario's `n_gpus` when the file is read. Their sum is the cold restart; the checkpoint load is
    `checkpoint.load_seconds` (one number, paid by the rollbacks that load a checkpoint)."""

    stop: PhaseValue = 0.0
    """Stopping the job: its processes killed, the failure reported to the scheduler. Absent: 0."""
    reschedule: PhaseValue = 0.0
    """The scheduler placing the job again (the servers' waits with pools come on top: `waiting`). Absent: 0."""
    communicator_init: PhaseValue = 0.0
    """Rebuilding the collective communicators (NCCL's initialization), which grows with the job. Absent: 0."""
    warmup: PhaseValue = 0.0
    """The first steps after the restart, slower than steady state (compilation, caches, allocator). Absent:
    0."""
    checkpoint_load: SkipJsonSchema[float | None] = Field(default=None, exclude=True)

    @model_validator(mode="after")
    def _load_elsewhere(self) -> RestartPhases:
        if self.checkpoint_load is not None:
            raise ValueError("recovery.phases.checkpoint_load: the load phase is checkpoint.load_seconds (one number, "
                             "paid by every rollback that loads a checkpoint): give it there")
        return self

    def seconds(self, n_gpus: int) -> dict[str, float]:
        """Each phase's seconds in a job of ``n_gpus`` (a law evaluated there; ValueError if it leaves 0 .. 10^6),
        in the timeline's order."""
        out = {}
        for name in PHASES:
            v = getattr(self, name)
            x = v.at(n_gpus) if isinstance(v, PhaseLaw) else v
            if not 0.0 <= x <= 1e6:
                raise ValueError(f"recovery.phases.{name}: the law gives {x:.6g} s at {n_gpus} GPUs: a phase must "
                                 "take 0 to 10^6 s")
            out[name] = x
        return out


PHASES = ("stop", "reschedule", "communicator_init", "warmup")  # RestartPhases' keys, in the timeline's order


class InProcess(_Strict):
    """In-process restarts (NVIDIA's resiliency extension, `inprocess.Wrapper`): after a fault the training function
    is restarted on every healthy rank within the same processes, which skips the scheduler, the container, the
    interpreter and the CUDA context's start-up; the function starts again from its checkpoint (a rollback, with the
    checkpoint's load). When it fails the cause's restart follows (its servers replaced, with pools)."""

    causes: Annotated[list[CauseName], Field(min_length=1, max_length=64)]
    """The failure causes an in-process restart is tried for (names of `failures.causes`; without causes the one
    cause is `hardware`)."""
    seconds: CostSeconds
    """The in-process restart, from the failure's detection to the job running again, its load apart (restart
    bucket; paid by a failed attempt too)."""
    success_probability: Annotated[float, Field(ge=0, le=1, allow_inf_nan=False)]
    """The share of in-process restarts that bring the job back (each independently): one that succeeds cleared
    the fault, its server stays in the job with its memory; one that fails is followed by the cause's restart."""


class CrashLoop(_Strict):
    """Restarts that fail again (a bad node not isolated, a corrupt checkpoint, a bug that recurs): each restart
    fails with a probability and is tried again, up to a limit, then the job is escalated to a manual
    intervention."""

    failure_probability: Annotated[float, Field(ge=0, le=1, allow_inf_nan=False)]
    """The share of restarts that fail, each attempt independently; each failed attempt costs the cause's restart
    (restart bucket) and the next one is tried."""
    max_attempts: Annotated[int, Field(ge=1, le=1000)]
    """The restarts tried before the job is escalated (a requeue limit, Kubernetes' `backoffLimit` + 1)."""
    escalation_seconds: CostSeconds
    """The manual intervention once `max_attempts` restarts failed: from the last failed attempt to the job running
    again, its own restart included (restart bucket)."""
    causes: Annotated[list[CauseName], Field(min_length=1, max_length=64)] | None = None
    """The failure causes whose restarts may loop (names of `failures.causes`). Absent: every cause."""


class Migration(_Strict):
    """Predicted failures migrated live (TrainMover; NVIDIA's resiliency extension's hot spares): health checks flag a
    share of the failures ahead of time, and the job moves the failing servers' work to warm standbys before they
    fail, pausing for `seconds`, with no rollback. Needs `servers.warm_standbys`."""

    seconds: CostSeconds
    """The job's pause while the work moves to the standbys (restart bucket): TrainMover's migration takes seconds."""
    causes: Annotated[dict[CauseName, Annotated[float, Field(ge=0, le=1, allow_inf_nan=False)]],
                      Field(min_length=1, max_length=64)]
    """Per cause (names of `failures.causes`; without causes the one cause is `hardware`) the share of its failures
    flagged ahead: Llama 3 planned 47 of its 466 interruptions, TrainMover reports one predicted failure per 8.9
    unpredicted ones. A flagged failure whose servers find no warm standby (in the pool or back from repair) is an
    ordinary failure."""


class Elastic(_Strict):
    """Elastic replica groups (torchft, Meta's FT-HSDP): the job is `groups` data-parallel replica groups; a failure of
    a listed cause drops its group and the job goes on without rollback on the groups left, each step with fewer
    samples (the global batch shrinks; the step count, the checkpoints and the validations stay), until the group
    rejoins; a failure that would leave fewer than `min_groups` running takes the cause's ordinary path (restart,
    rollback), after which every group runs. With `servers` the job's servers are split into the groups in blocks (a
    multiple of `groups`), a failure drops every group its servers (a burst's) are in, and a dropped group's failed
    servers are replaced from the pools as for a restart before it rejoins. Refused beside live migration, a memory
    tier, committed SDCs, shadow ranks, a fleet, hyper-checkpointing, corrupt loads, asynchronous or failing saves and
    just-in-time saves (not modelled together)."""

    groups: Annotated[int, Field(ge=1, le=65536)]
    """The data-parallel replica groups (a divisor of `n_gpus`): with g of them running, a step's compute is g /
    `groups` productive and the rest degraded (the `degraded` bucket)."""
    min_groups: Annotated[int, Field(ge=1, le=65536)] = 1
    """The fewest groups the job trains on: a failure that would leave fewer restarts the job as without groups."""
    replace_seconds: CostSeconds = recovery.WARM_SWAP_SECONDS
    """From the failure's detection to the dropped group's replacement ready. Absent: a warm standby's swap
    (ByteRobust's 55 s), the replacement the model has without servers. With `servers`, the time to bring the
    group's servers in once its last replacement is there (a standby at once, a spare after its preemption, a server
    back from repair, and the host selection as for a restart), on top of waiting for it."""
    heal_seconds: CostSeconds = 0.0
    """After the replacement, the group's heal, copying the model and optimizer state from a live peer (torchft's
    recovery; torchft#329 reports ~948 s from a fault to the group back): the group rejoins at the start of the first
    step from then."""
    overhead: Annotated[float, Field(ge=0, le=1, allow_inf_nan=False)] = 0.0
    """The fault-tolerant mode's steady overhead: this share of every step's compute added to each step, all the
    time (degraded bucket)."""
    causes: Annotated[list[CauseName], Field(min_length=1, max_length=64)] | None = None
    """The failure causes that drop their group (names of `failures.causes`). Absent: those that take their server
    down (`server_down`; without causes, `hardware`)."""

    @model_validator(mode="after")
    def _fewest(self) -> Elastic:
        if self.min_groups > self.groups:
            raise ValueError(f"min_groups must be <= groups ({self.groups}), got {self.min_groups}")
        return self


class Recovery(_Strict):
    """How the job restarts after a hard failure (seed 001, scenario 3)."""

    strategy: Literal["cold", "warm"] = "cold"
    """`cold`: every failure takes the full restart (`restart_seconds`); `warm`: gpu, network and host failures
    swap in a warm standby (ByteRobust's hot update, 55 s), software and other failures still restart cold (a
    cause given as data says for itself: `failures.causes.NAME.warm`)."""
    phases: RestartPhases | None = None
    """The cold restart by phase (stop, reschedule, communicator_init, warmup; the checkpoint load is
    `checkpoint.load_seconds`), instead of `restart_seconds`: every cold restart (a hard failure's, an SDC
    rollback's) takes their sum, and the metrics split the restart time by phase. Absent: `restart_seconds`."""
    in_process: InProcess | None = None
    """An in-process restart tried first for some causes (docs/model.md, "In-process restarts"). Absent: none."""
    crash_loop: CrashLoop | None = None
    """Hard failures' restarts that fail and are tried again, then escalated (docs/model.md, "Crash loops"). Absent:
    every restart succeeds."""
    migration: Migration | None = None
    """Failures flagged ahead and migrated live to a warm standby (docs/model.md, "Predicted failures migrated live").
    Absent: none."""
    elastic: Elastic | None = None
    """Elastic replica groups: a failure drops its group, the job goes on without rollback (docs/model.md, "Elastic
    replica groups"). Absent: none."""


class Mitigation(_Strict):
    """Replacing the slow ranks once a median-based detector has flagged them."""

    detect_after_steps: Annotated[int, Field(gt=0, le=10**9)]
    """Steps of a job after which the slow ranks are flagged and replaced (the job runs healthy from there)."""


class StragglerConfig(_Strict):
    """Stragglers: a synchronous step lasts as long as its slowest rank (simd/engine/stragglers.py)."""

    jitter_seconds: Annotated[float, Field(ge=0, le=3600, allow_inf_nan=False)] = 0.0
    """Each rank's step time is `step_seconds` plus a half-normal delay with this scale, drawn per rank and step."""
    slow_ranks: Annotated[int, Field(ge=0)] = 0
    """Ranks that are persistently slow (at most `n_gpus`)."""
    slowdown: Annotated[float, Field(ge=1, le=100, allow_inf_nan=False)] = 1.0
    """A slow rank's step time is multiplied by this."""
    mitigation: Mitigation | None = None
    """Replace the slow ranks after a while; absent: they stay for the whole job."""


class HyperCheckpoint(_Strict):
    """Hyper-checkpointing (seed 000, exercise 2; simd/engine/hyper.py): after each SDC detection (a validation
    catching it, a checkpoint baking it in, a late detector finding it; not a job's end) the job checkpoints every
    ``interval_steps`` steps on the lattice anchored at the rollback point, for the next ``window_steps`` executed
    steps, then on the normal interval again. A job's end closes the window."""

    interval_steps: IntervalSteps
    """The checkpoint interval inside a window, usually below `checkpoint.interval_steps` (equal to it: exactly
    the plain schedule). Unless validation divides it too, hyper checkpoints can bake SDCs in (check-config
    warns)."""
    window_steps: Annotated[int, Field(gt=0, le=10**12)]
    """How long a window lasts, in executed steps (recomputed and failed steps count); longer than the job: until
    the job ends."""


class SaveFailure(_Strict):
    """Saves that fail (a storage error, a write that times out): the non-fatal policy Megatron-LM#1435 asks for,
    the job goes on without the save."""

    probability: Annotated[float, Field(ge=0, le=1, allow_inf_nan=False)]
    """The share of saves that fail, each independently: a failed save costs its blocking (and its write, with
    `write_seconds`, which ends without a checkpoint) and is no rollback target; the one before it stays the
    target. No public per-save failure rate exists (docs/checkpoints.md, section 9)."""


class LocalTier(_Strict):
    """A checkpoint tier in each server's own memory (NVIDIA's resiliency extension's local checkpoints without
    replication): every shard has one copy, so any server whose failure takes it down loses the tier."""

    interval_steps: IntervalSteps
    """Steps between its saves; a divisor of `checkpoint.interval_steps` (at the persistent checkpoint's steps the
    persistent save stands for it, as Megatron's `--non-persistent-save-interval` yields to `--save-interval`)."""
    seconds: CostSeconds
    """What one save blocks the job for (a copy of its state to host memory); no public figure at scale (Gemini
    reports no overhead on iteration time)."""
    load_seconds: CostSeconds = 0.0
    """What a recovery from it pays to load it, on top of its restart (restart bucket), in place of
    `checkpoint.load_seconds`. No public figure at 16k GPUs (docs/checkpoints.md, section 5)."""
    corrupt_on_load: Annotated[float, Field(ge=0, le=1, allow_inf_nan=False)] = 0.0
    """The probability that a load finds its checkpoint corrupt (Megatron-LM#5281: a replica-assembled local
    checkpoint that NaNs after load): the recovery pays the load and goes on to the tier's next older copy kept
    (`retention_checkpoints`) newer than the persistent checkpoint, else to the persistent checkpoint. No public
    rate exists."""
    save_failure: SaveFailure | None = None
    """Saves of this tier that fail (a copy to peers that times out, host memory short): each costs its blocking
    and is no rollback target, the tier's copy before it staying its newest (a save fails before it replaces the
    copy). Absent: none fail. No public rate exists."""
    write_seconds: CostSeconds = 0.0
    """How long a save writes after its blocking (NVIDIA's resiliency extension's local checkpoints save
    asynchronously: a copy to host memory or local storage, then replication to peers), without slowing the steps
    (Gemini interleaves the traffic in the training's idle network time and reports no iteration overhead): the
    save is a rollback target once written, a rollback before that aborts it (the tier's copy before it stays
    the newest), and a save due while one writes waits for it (checkpoint time). 0: durable when its blocking
    ends. No public figure at scale."""
    # (a plain int with bounds, not an Annotated alias: simd sweep reads the annotation to vary it)
    retention_checkpoints: int = Field(default=1, ge=1, le=1000)
    """How many of its newest saves the tier keeps (NVIDIA's resiliency extension's local checkpoint manager keeps
    the newest: its `_cleanup` removes every older iteration after a save succeeds; a failed save's files go and
    the copies before it stay). Its copies share the memory, so an interruption that loses the tier loses them
    all. More than one matters where a load finds a copy corrupt (`corrupt_on_load`: the recovery falls back to
    the next older copy, paying each load, before the persistent checkpoint) and under committed SDCs (a late find
    goes back to the newest clean copy); a copy older than the newest persistent checkpoint is never loaded (the
    persistent one stands for it, as Megatron-LM loads its non-persistent checkpoint only when it is at least as
    new). No public figure for more than one."""


class PeerTier(LocalTier):
    """A checkpoint tier in the memory of peer servers (Gemini, SOSP'23; NVIDIA's resiliency extension's local
    checkpoints with replication): the job's servers in groups of `copies`, each holding every member's shard; the
    tier is lost only when every member of some group fails in one interruption (docs/model.md, "Memory tiers")."""

    copies: int = Field(default=2, ge=2, le=64)
    """Servers per group (Megatron's `--replication-factor`, 2 by default)."""
    jump_servers: int = Field(default=1, ge=1, le=1 << 16)
    """The distance between a group's members, in positions among the job's servers (Megatron's
    `--replication-jump` in servers): 1 puts neighbours together (Gemini's group placement); a failure domain's
    size spreads every group over `copies` domains. The job's servers must be a multiple of `copies` times it."""


class Tiers(_Strict):
    """Checkpoint tiers in memory under the persistent checkpoint: one of the two, or both (TierCheck's local
    memory, peer memory and remote storage; docs/model.md, "Two memory tiers"): the local tier then saves every
    `local.interval_steps`, a divisor of `peer.interval_steps`, and the peer tier's save stands for it at the peer
    tier's steps, as the persistent save stands for both at its own."""

    peer: PeerTier | None = None
    local: LocalTier | None = None

    @model_validator(mode="after")
    def _one(self) -> Tiers:
        if self.peer is None and self.local is None:
            raise ValueError("checkpoint.tiers: give a memory tier, peer or local (or both)")
        if self.peer is not None and self.local is not None and (
                self.local.interval_steps >= self.peer.interval_steps or
                self.peer.interval_steps % self.local.interval_steps):
            raise ValueError(f"checkpoint.tiers.local.interval_steps must divide checkpoint.tiers.peer.interval_steps "
                             f"and be smaller, got {self.local.interval_steps} and {self.peer.interval_steps}")
        return self

    @property
    def tier(self) -> tuple[str, LocalTier]:
        """The memory tier under the persistent checkpoint: its kind and its block (the peer tier when both are
        given)."""
        return ("peer", self.peer) if self.peer is not None else ("local", self.local)

    @property
    def given(self) -> tuple[tuple[str, LocalTier], ...]:
        """The memory tiers given, the one under the persistent checkpoint first: (kind, block) each."""
        return tuple((kind, t) for kind, t in (("peer", self.peer), ("local", self.local)) if t is not None)


class JustInTime(_Strict):
    """Just-in-time saves (Gupta et al., EuroSys'24): after a failure the surviving data-parallel replicas, which
    hold the same state, save it; the job then loses only the step in flight. For failures that leave a healthy
    replica of every shard (a GPU, a link, a host), not software faults that hit every rank."""

    causes: Annotated[list[CauseName], Field(min_length=1, max_length=64)] | None = None
    """The failure causes after which the job saves just in time (names of `failures.causes`; without causes the
    one cause is `hardware`); absent: every cause."""
    share: Annotated[float, Field(gt=0, le=1, allow_inf_nan=False)] = 1.0
    """The share of those causes' failures after which the survivors can save: the others leave no healthy replica
    of some shard (a failure that takes a whole data-parallel group, or every copy of a shard, with it); drawn per
    failure. No public figure: it depends on the job's layout (EuroSys'24 saves after any failure that leaves a
    replica of every shard)."""
    seconds: CostSeconds
    """What the save blocks the job for, after the failure's detection (checkpoint bucket): "from several minutes
    to a few seconds per GPU" (EuroSys'24). The recovery then loads it (`load_seconds`)."""


class Checkpoint(_Strict):
    """Checkpoints: the job commits its progress every `interval_steps` steps, blocking for `seconds`."""

    interval_steps: IntervalSteps
    """Steps between checkpoints (beyond `target_steps`: only the job's end commits)."""
    seconds: CostSeconds
    """What one checkpoint blocks the job for."""
    load_seconds: CostSeconds = 0.0
    """What a recovery pays to load the checkpoint it rolls back to, on top of its restart (restart bucket): every
    rollback (a hard failure, a shadow disagreement, an SDC detection) to a checkpoint at a step > 0; one to the
    job's start (no checkpoint yet) loads nothing. 0: the restart includes the load (`restart_seconds` and the
    causes' restarts are then the whole restart). TrainMover's cold restart of 6.47 min at 8,192 GPUs spends
    1.56 min (93.6 s) loading the checkpoint (simd/models/recovery.py)."""
    write_seconds: CostSeconds = 0.0
    """Asynchronous saves (PyTorch DCP's `async_save`, Megatron's asynchronous checkpoints, CheckFreq): after its
    blocking `seconds` (the snapshot to host memory) a save writes to storage for this long (wall time) while the
    job trains on. It is a rollback target only once written: from the first step that starts after its write
    ends; a rollback before that aborts it (the save before it stays the target). One write at a time: a save due
    while one writes waits for it, and the job's end waits for the last one (checkpoint bucket). 0: a save is
    durable when its blocking ends (seed 000)."""
    write_slowdown: Annotated[float, Field(ge=1, le=100, allow_inf_nan=False)] = 1.0
    """How many times its compute a step takes when it starts while a save writes (the writer shares the host and
    the network); the extra time is checkpoint time. CheckFreq (FAST'21) keeps its whole checkpoint overhead within
    3.5%. Needs `write_seconds`."""
    save_failure: SaveFailure | None = None
    """Saves that fail; absent: every save succeeds."""
    # (a plain int with bounds, not an Annotated alias: simd sweep reads the annotation to vary it)
    retention_checkpoints: int | None = Field(default=None, ge=1, le=1000)
    """How many of the newest checkpoints the job keeps: where a recovery falls back to when a load finds a
    checkpoint corrupt (`corrupt_on_load`), and with committed SDCs how far back a late find can go
    (`sdc.retention_checkpoints` is the same number: give one of the two). Absent: only the newest matters."""
    corrupt_on_load: Annotated[float, Field(ge=0, le=1, allow_inf_nan=False)] = 0.0
    """The probability that a load finds its checkpoint corrupt (Megatron-LM#5281: a checkpoint that NaNs after
    load, restarted 44 times): the recovery pays the load, drops that checkpoint, and loads the next older one
    the job keeps (`retention_checkpoints`, needed), down to the job's start (which loads nothing). With committed
    SDCs a late find goes down the kept checkpoints older than the SDC's onset the same way (docs/model.md,
    "Checkpoints kept and found corrupt"). No public rate exists."""
    hyper: HyperCheckpoint | None = None
    """Checkpoint more often for a while after each SDC detection; absent: the fixed interval only."""
    tiers: Tiers | None = None
    """Checkpoint tiers in memory under this one (the persistent checkpoint): a recovery loads the newest
    checkpoint of any tier that survived the interruption. Absent: the persistent checkpoint only."""
    just_in_time: JustInTime | None = None
    """Save just in time after the failures of some causes; absent: never."""

    @model_validator(mode="after")
    def _write(self) -> Checkpoint:
        if self.write_slowdown != 1.0 and self.write_seconds == 0.0:
            raise ValueError("checkpoint.write_slowdown needs checkpoint.write_seconds > 0 (a slowdown of the steps "
                             "a save's write overlaps)")
        for kind, tier in self.tiers.given if self.tiers is not None else ():
            if tier.interval_steps >= self.interval_steps or self.interval_steps % tier.interval_steps:
                raise ValueError(f"checkpoint.tiers.{kind}.interval_steps must divide checkpoint.interval_steps and "
                                 f"be smaller, got {tier.interval_steps} and {self.interval_steps}")
        return self


class Validation(_Strict):
    """Validation: a check that finds a present SDC before a checkpoint takes it (the job rolls back)."""

    interval_steps: Annotated[int, Field(ge=0, le=10**9)] = 0
    """Steps between validations; 0: no validation. Only an interval that divides the checkpoint interval keeps
    every SDC out of checkpoints (check-config warns otherwise)."""
    seconds: CostSeconds = 0.0
    """What one validation blocks the job for."""


class ShadowRanks(_Strict):
    """Shadow-rank dual execution (seed 000, exercise 3; simd/engine/shadow.py)."""

    fraction: Annotated[float, Field(ge=0, le=1, allow_inf_nan=False)]
    """The share of the job's ranks that run twice, each copy on a GPU of its own: round(fraction * n_gpus)
    ranks (0: none, the plain job; 1: every rank, so no SDC ever reaches a validation or a checkpoint)."""
    overhead: Annotated[float, Field(ge=0, le=10, allow_inf_nan=False)] = 0.0
    """With at least one rank shadowed, every step lasts `step_seconds * (1 + overhead)` (the comparison of the
    copies; 0: free; 1: the duplicates time-share the GPUs, twice as slow)."""


class AcceleratorType(_Strict):
    """One accelerator type of a heterogeneous fleet (seed 000, exercise 4; simd/engine/fleet.py). No presets:
    there are no public per-type failure and SDC rates to take them from, so the file gives them."""

    type: Annotated[str, Field(pattern=r"^[a-z0-9_]+$", max_length=32)]
    """The type's name (distinct in the fleet): the `accelerator` label's value."""
    count: Annotated[int, Field(gt=0, le=10_000_000)]
    """GPUs of this type in the job (the counts add up to the job's GPUs)."""
    hard_per_gpu_hour: Rate
    """Hard failures per GPU-hour of this type."""
    sdc_per_gpu_hour: Rate
    """SDC onsets per GPU-hour of this type."""


class ExponentialLatency(_Strict):
    """A memoryless latency: a check that fires at a constant rate."""

    distribution: Literal["exponential"]
    mean_seconds: LatencySeconds
    """The mean latency, simulated seconds."""


class LognormalLatency(_Strict):
    """A lognormal latency: a check whose time to notice varies over orders of magnitude."""

    distribution: Literal["lognormal"]
    median_seconds: LatencySeconds
    """The median latency, simulated seconds."""
    sigma: Annotated[float, Field(ge=0, le=10, allow_inf_nan=False)]
    """The standard deviation of the latency's logarithm; 0: always the median."""


class UniformLatency(_Strict):
    """A latency uniform on [0, max]: a scanner that visits every host once per cycle of `max_seconds`."""

    distribution: Literal["uniform"]
    max_seconds: LatencySeconds
    """The scanner's cycle, simulated seconds."""


class SdcDetector(_Strict):
    """A layer of SDC detection (simd/engine/late.py): it finds a present SDC with probability ``coverage``, after
    its latency; the first detector to find it wins."""

    name: Annotated[str, Field(pattern=r"^[a-z0-9_]+$", max_length=32)]
    """The detector's name (distinct): the `detector` label's value."""
    coverage: Annotated[float, Field(ge=0, le=1, allow_inf_nan=False)] = 1.0
    """The share of SDCs it can find."""
    latency: Annotated[ExponentialLatency | LognormalLatency | UniformLatency, Field(discriminator="distribution")]
    """How long after the end of the SDC's onset step it finds one, in simulated seconds; `distribution` picks
    the form."""



class Lemons(_Strict):
    """Lemon servers (AIReSim's systematic failures; Kokolis et al., HPCA'25, "lemon nodes"): a share of the servers
    failing at a multiple of the base rate."""

    fraction: Annotated[float, Field(ge=0, le=1, allow_inf_nan=False)]
    """The share of the job's servers that are lemons: round(fraction * servers) of them."""
    multiplier: Annotated[float, Field(ge=1, le=10_000, allow_inf_nan=False)]
    """A lemon's failure rate over an ordinary server's."""


class ServerRates(_Strict):
    """Servers whose rates differ at random: each server's rate times its own draw of a gamma distribution of mean
    1, fixed for the simulation (a fault log's over-dispersed per-server counts; `simd trace fit` fits the
    shape)."""

    gamma_shape: Annotated[float, Field(ge=0.05, le=1000, allow_inf_nan=False)]
    """The gamma's shape a: the multipliers' variance is 1/a (small: a few servers fail far more than the rest;
    large: nearly identical servers)."""


class ExponentialLifetime(_Strict):
    """Memoryless: a server fails at a constant rate whatever its age (seed 000's process)."""

    distribution: Literal["exponential"]


class WeibullLifetime(_Strict):
    """Weibull lifetimes of the same mean: shape < 1 infant mortality (a server fails early after a repair more
    often), > 1 wear-out."""

    distribution: Literal["weibull"]
    shape: Annotated[float, Field(ge=0.1, le=10, allow_inf_nan=False)]
    """The Weibull shape k (1: exponential)."""


class LognormalLifetime(_Strict):
    """Lognormal lifetimes of the same mean."""

    distribution: Literal["lognormal"]
    sigma: Annotated[float, Field(gt=0, le=4, allow_inf_nan=False)]
    """The standard deviation of the lifetime's logarithm."""


class ExponentialRepair(_Strict):
    """Memoryless repair times."""

    distribution: Literal["exponential"]
    mean_seconds: LatencySeconds
    """The mean repair time, simulated seconds."""


class LognormalRepair(_Strict):
    """Lognormal repair times: most repairs quick, a heavy tail of long ones (a fault log's median 0.85 days and
    mean 5.5 days, InfiniteHBD)."""

    distribution: Literal["lognormal"]
    median_seconds: LatencySeconds
    """The median repair time, simulated seconds."""
    sigma: Annotated[float, Field(ge=0, le=10, allow_inf_nan=False)]
    """The standard deviation of the repair time's logarithm."""


class UniformRepair(_Strict):
    """Repair times uniform on [0, max]."""

    distribution: Literal["uniform"]
    max_seconds: LatencySeconds
    """The longest repair, simulated seconds."""


RepairTime = Annotated[ExponentialRepair | LognormalRepair | UniformRepair, Field(discriminator="distribution")]


class RepairComponent(_Strict):
    """One kind of repair in a mixture (a reboot, a part swap, a vendor's replacement)."""

    weight: Annotated[float, Field(gt=0, le=1, allow_inf_nan=False)]
    """The share of repairs of this kind."""
    time: RepairTime
    """How long a repair of this kind takes; `distribution` picks the form."""


MIXTURE_TOLERANCE = 1e-6  # how far the weights' sum may be from 1 (a fit's written to 4-6 digits each)


class MixtureRepair(_Strict):
    """Repair times as a mixture of kinds of repair, as fault logs have them (`simd trace fit` writes one when its
    AIC is lower: InfiniteHBD's repairs are three lognormal kinds, 7% of them with a median of 13 minutes, 34% of 2.9
    hours and 59% of 2.7 days)."""

    distribution: Literal["mixture"]
    components: Annotated[list[RepairComponent], Field(min_length=2, max_length=8)]
    """The kinds of repair, their weights summing to 1 (within 10^-6)."""

    @model_validator(mode="after")
    def _weights(self):
        total = math.fsum(c.weight for c in self.components)
        if abs(total - 1.0) > MIXTURE_TOLERANCE:
            raise ValueError(f"the components' weights sum to {total:.6g}, not 1")
        return self


AutomaticRepairTime = Annotated[ExponentialRepair | LognormalRepair | UniformRepair | MixtureRepair,
                                Field(discriminator="distribution")]


class ManualRepair(_Strict):
    """The manual stage a repair escalates to (after the automatic one)."""

    probability: Annotated[float, Field(ge=0, le=1, allow_inf_nan=False)]
    """The share of repairs escalated, whatever the automatic stage's outcome (AIReSim's paper model: 0.8)."""
    time: RepairTime
    """How long the manual stage takes; `distribution` picks the form."""


class FalseSuccess(_Strict):
    """Repairs that report success without fixing the fault: the server returns unchanged (a lemon stays one)."""

    automatic: Annotated[float, Field(ge=0, le=1, allow_inf_nan=False)] = 0.0
    """The share of repairs ending with the automatic stage that fix nothing (AIReSim: 0.4)."""
    manual: Annotated[float, Field(ge=0, le=1, allow_inf_nan=False)] = 0.0
    """The share of manual repairs that fix nothing (AIReSim: 0.2)."""


class Repair(_Strict):
    """A failed server's repair: an automatic stage, escalated to a manual one with a probability; a true repair
    makes a lemon an ordinary server for good."""

    automatic: AutomaticRepairTime
    """How long the automatic stage takes, from the end of the step the server failed in."""
    manual: ManualRepair | None = None
    """Absent: no repair is escalated."""
    false_success: FalseSuccess | None = None
    """Absent: every repair fixes the fault."""


class Relapse(_Strict):
    """A repair that does not hold: a repaired server failing again within hours (its own check after the repair, a
    fault the repair did not reach), as fault logs show (InfiniteHBD: 85 repeats within 2.4 hours of a repair where
    renewal lifetimes give 28-54). With `probability` the server's next lifetime is short, exponential of mean
    `mean_hours` of compute divided by its rate multiplier (`rates`), instead of its `lifetime` law; after it, the law
    again. Without pools a failed server is repaired at once, so each failure's renewal is such a repair. Beside
    `repair.false_success`, which keeps a lemon a lemon (its rate), a relapse gives any server one short lifetime."""

    probability: Annotated[float, Field(gt=0, le=1, allow_inf_nan=False)]
    """The share of repairs that do not hold."""
    mean_hours: Annotated[float, Field(gt=0, le=1e6, allow_inf_nan=False)]
    """The short lifetime's mean, hours of the job's compute (as lifetimes count them), at a rate multiplier of 1."""


class Spares(_Strict):
    """A pool of spare servers the job takes when it has no warm standby left."""

    count: Annotated[int, Field(ge=0, le=1 << 16)]
    """Spare servers."""
    withheld: Annotated[int, Field(ge=0, le=1 << 16)] = 0
    """Spares the job may not take (lent to other work): the pool is this many short; at most `count` (a drill's
    `spares_withheld` sets it)."""
    preemption_seconds: CostSeconds = 0.0
    """Taking a spare: the time to preempt the work that runs on it (AIReSim: 20 min)."""

    @model_validator(mode="after")
    def _withheld(self) -> Spares:
        if self.withheld > self.count:
            raise ValueError(f"spares.withheld must be <= spares.count, got {self.withheld} and {self.count}")
        return self


class Diagnosis(_Strict):
    """How well a failure is pinned on its server (AIReSim's diagnosis_probability and diagnosis_uncertainty)."""

    probability: Annotated[float, Field(ge=0, le=1, allow_inf_nan=False)] = 1.0
    """The share of failures whose server is identified; the others leave the failing server in the job (it
    starts a new lifetime, unrepaired: a lemon stays one)."""
    misattribution: Annotated[float, Field(ge=0, le=1, allow_inf_nan=False)] = 0.0
    """The share of identified failures pinned on another of the job's servers, drawn at random: that healthy
    server goes to repair and is replaced, the failing one stays in the job."""


class Retirement(_Strict):
    """Retiring servers that keep failing (Kokolis et al., HPCA'25, "lemon nodes"; AIReSim's ThresholdRemoval)."""

    failures: Annotated[int, Field(ge=1, le=16)]
    """A server blamed for this many failures within the window is retired instead of repaired (never below the
    job's servers: the cluster keeps at least as many as the job needs)."""
    window_seconds: Annotated[float, Field(gt=0, le=1e12, allow_inf_nan=False)]
    """The window, simulated seconds (AIReSim's option: 7 days)."""


class Replay(_Strict):
    """A fault log replayed on the job's servers instead of drawn lifetimes (docs/traces.md, "Replay"):
    a fault at the log's time t strikes its server in executed step ceil(t / step_seconds) (the log's clock taken
    as the job's compute clock, as lifetimes count it); cluster server i replays log server i mod N, further copies
    shifted by a fraction of the span, the log repeating with its span."""

    log: Annotated[str, Field(min_length=1, max_length=4096)]
    """The log's path (InfiniteHBD's JSON or the CSV of `simd trace`); a relative one from the scenario file's folder
    (as Prometheus reads `rule_files`: check-config and the daemon read the same file wherever they run)."""
    servers: Annotated[int, Field(ge=1, le=1 << 17)] | None = None
    """The log's cluster: its servers in all (a log names only those that failed); absent: the servers it names."""
    repairs: Literal["model", "log"] = "model"
    """How a server a replayed fault sends to repair is repaired (with pools): `log`, in the log's own time for
    that fault (its end less its start; the longest of a server's faults in one step; no manual stage), the
    repair model (`servers.repair`) only for what the log does not time (a repair it leaves open, a burst's
    server, a server blamed for another's failure; needs pools); `model`, by `servers.repair` always. Absent:
    `model`."""
    columns: dict[Annotated[str, Field(min_length=1, max_length=16)],
                  Annotated[str, Field(min_length=1, max_length=200)]] | None = None
    """A CSV log's own column names, simd's name -> the file's, as `simd trace --columns` maps them (e.g.
    `{start: Prob Started, end: Prob Fixed, server: nodenum, class: Cause}`; simd's names: start, end, server,
    class, level, desc, time, event). Absent: the file has simd's names."""
    timezone: Annotated[str, Field(min_length=1, max_length=64)] | None = None
    """The zone of a CSV log's dates without an offset, as `simd trace --timezone`: a tz database name
    (Europe/Berlin), UTC, or an offset (+05:30). Absent: UTC."""
    time_format: Annotated[str, Field(min_length=1, max_length=100)] | None = None
    """A strptime format every time of a CSV log is read with, as `simd trace --time-format` (LANL's
    `%m/%d/%Y %H:%M`). Absent: seconds or ISO 8601."""

    _table: ReplayTable | None = PrivateAttr(default=None)  # the log as read when this model was validated

    @field_validator("columns")
    @classmethod
    def _columns(cls, columns: dict[str, str] | None) -> dict[str, str] | None:
        from simd.traces.log import columns_map

        return None if columns is None else columns_map(columns.items())

    @field_validator("timezone")
    @classmethod
    def _zone(cls, text: str | None) -> str | None:
        from simd.traces.log import zone

        if text is not None:
            zone(text)
        return text

    @field_validator("time_format")
    @classmethod
    def _time_format(cls, text: str | None) -> str | None:
        from simd.traces.log import time_format

        return None if text is None else time_format(text)

    @field_validator("log")
    @classmethod
    def _from_the_files_folder(cls, path: str, info: ValidationInfo) -> str:
        """A relative path joined to the scenario file's folder (simd.scenario.load's context ``folder``; without
        one, a scenario given otherwise than by a file, the working directory's). Validated again from a dump (a
        sweep's grid, a drill's effects), the joined path stays."""
        folder = (info.context or {}).get("folder")
        return os.path.join(folder, path) if folder and not os.path.isabs(path) else path

    def _read(self) -> ReplayTable:
        """The log's replay table (read, or from the cache)."""
        return _replay_log(self.log, self.columns, self.timezone, self.time_format)

    @model_validator(mode="after")
    def _readable(self) -> Replay:
        table = self._read()
        if self.servers is not None and self.servers < table.named:
            raise ValueError(f"replay.servers {self.servers} is fewer than the {table.named} servers the log "
                             "names")
        self._table = table
        return self

    def times(self) -> tuple[tuple[tuple[float, ...], ...], float]:
        """(per log server, its faults' start times in seconds; the log's span in seconds): named servers first, in
        the order of their first event, then the servers without a fault. From the log as read when the scenario
        was validated (a later change of the file is read at the next reload)."""
        table = self._table if self._table is not None else self._read()
        return table.starts + ((),) * ((self.servers or table.named) - table.named), table.span_seconds

    def repair_times(self) -> tuple[tuple[float, ...], ...]:
        """Per log server (as :meth:`times`), its faults' repair times in seconds (nan: open at the log's end)."""
        table = self._table if self._table is not None else self._read()
        return table.repairs + ((),) * ((self.servers or table.named) - table.named)


@dataclass(frozen=True)
class ReplayTable:
    """What a scenario keeps of a fault log: per named server its faults' start times (seconds), the log's span."""

    starts: tuple[tuple[float, ...], ...]
    span_seconds: float
    repairs: tuple[tuple[float, ...], ...] = ()  # per named server its faults' repair times, seconds (nan: open)

    @property
    def named(self) -> int:
        return len(self.starts)

    @property
    def nbytes(self) -> int:
        """Its size in memory, bytes: two float objects and tuple slots per fault (2 x (24 + 8)), two tuples per
        server (2 x 56)."""
        return 64 + 112 * len(self.starts) + 64 * sum(map(len, self.starts))


# Parsed replay logs kept for the next validation of the same file version (a sweep's points, a drill's targets
# and a reload each validate a scenario again), least recently used first out, at most this many bytes of
# ReplayTable in all: one table of a log at the fault log's limits (simd.traces.log.MAX_EVENTS: 500,000 faults,
# ~32 MB, its start and repair times) fits with room; a refused reload drops what it added (simd.live.reload), a
# scenario keeps its own.
REPLAY_CACHE_BYTES = 64 << 20
_replay_cache: OrderedDict[tuple, ReplayTable] = OrderedDict()
_replay_cache_lock = threading.Lock()


def replay_cache_keys() -> set[tuple]:
    """The file versions whose replay tables are cached now (for ``forget_replay_logs``)."""
    with _replay_cache_lock:
        return set(_replay_cache)


def forget_replay_logs(keep: set[tuple] = frozenset()) -> None:
    """Drop the cached replay tables except ``keep``'s (what a refused reload read is dropped with it)."""
    with _replay_cache_lock:
        for key in [k for k in _replay_cache if k not in keep]:
            del _replay_cache[key]


def replay_cache_bytes() -> int:
    """The cached replay tables' size, bytes (ReplayTable.nbytes)."""
    with _replay_cache_lock:
        return sum(t.nbytes for t in _replay_cache.values())


def _replay_log(path: str, columns: dict[str, str] | None = None, timezone: str | None = None,
                time_format: str | None = None) -> ReplayTable:
    """The replay table of the fault log at ``path`` read with the options (Replay's, simd.traces.log.load's),
    read once per file version (device, inode, size, modification time) and options while it stays in the cache: a
    ValueError naming the first problems if it cannot be used."""
    from simd.traces.log import LogError, load, zone

    try:
        st = os.stat(path)
    except OSError as exc:
        raise ValueError(f"replay.log {path}: {exc.strerror}") from None
    key = (path, st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, tuple(sorted((columns or {}).items())), timezone,
           time_format)
    with _replay_cache_lock:
        table = _replay_cache.get(key)
        if table is not None:
            _replay_cache.move_to_end(key)
            return table
    try:
        log = load(path, columns, None if timezone is None else zone(timezone), time_format, via="scenario")
    except LogError as exc:
        raise ValueError(f"replay.log {path}: " + "; ".join(exc.errors[:3])) from None
    except (RecursionError, OverflowError, MemoryError) as exc:  # what the parser lets through: its kind only
        what = {RecursionError: "nested too deep", OverflowError: "a number too large"}.get(type(exc), "out of memory")
        raise ValueError(f"replay.log {path}: cannot be read ({type(exc).__name__}: {what})") from None
    per: list[list[float]] = [[] for _ in log.servers]
    rep: list[list[float]] = [[] for _ in log.servers]
    for f in log.faults:
        per[f.server].append(f.start)
        rep[f.server].append(math.nan if f.end is None else f.repair_seconds)
    table = ReplayTable(tuple(tuple(p) for p in per), log.span_seconds, tuple(tuple(r) for r in rep))
    del log, per, rep  # the parsed events: only the table stays
    if table.nbytes <= REPLAY_CACHE_BYTES:
        with _replay_cache_lock:
            _replay_cache[key] = table
            while sum(t.nbytes for t in _replay_cache.values()) > REPLAY_CACHE_BYTES:
                _replay_cache.popitem(last=False)
    return table


class Bursts(_Strict):
    """Correlated failures (a fault log's bursts: InfiniteHBD has 55 faults starting at the same instant
    as the one before): events that strike several of the job's servers in one step, one interruption, every
    struck server handled as a failed one (to repair with pools)."""

    per_day: Annotated[float, Field(gt=0, le=10_000, allow_inf_nan=False)]
    """Bursts per day of the job's compute (a Poisson process over its executed steps)."""
    mean_size: Annotated[float, Field(ge=2, le=10_000, allow_inf_nan=False)] | None = None
    """The servers a burst strikes: 2 + a geometric count, this mean (absent: 2), chosen uniformly among the job's."""
    domain_servers: Annotated[int, Field(ge=2, le=1 << 16)] | None = None
    """Instead of `mean_size`: a burst strikes every job server of one failure domain of this many consecutive
    servers (a rack, a power feed), the domain of a job server drawn uniformly."""

    @model_validator(mode="after")
    def _one_size(self) -> Bursts:
        if self.mean_size is not None and self.domain_servers is not None:
            raise ValueError("bursts: mean_size or domain_servers, not both")
        return self


class Regime(_Strict):
    """One regime of the failure rate: its multiplier and how long it lasts."""

    multiplier: Annotated[float, Field(ge=0, le=10_000, allow_inf_nan=False)]
    """The servers' failure rates times this while the regime holds."""
    mean_days: Annotated[float, Field(gt=0, le=1e6, allow_inf_nan=False)]
    """The regime's mean duration, days of the job's compute (a geometric number of executed steps)."""


class Regimes(_Strict):
    """Faults clustered in time (a Markov-modulated rate; `simd trace fit` fits it): a hidden calm and stormy regime,
    common to all the job's servers, alternating; the servers age in operational time, each executed step adding
    the regime's multiplier to their age (docs/servers.md)."""

    calm: Regime
    """The regime the rate returns to."""
    stormy: Regime
    """The regime of crowded failures (a campaign of stress tests, a bad batch of parts, a facility problem)."""


class RatePiece(_Strict):
    """A piece of the rate schedule."""

    from_day: Annotated[float, Field(ge=0, le=1e6, allow_inf_nan=False)]
    """The day of the job's compute from which the piece holds (the first piece's 0)."""
    multiplier: Annotated[float, Field(ge=0, le=10_000, allow_inf_nan=False)]
    """The servers' failure rates times this, until the next piece's day (the last one's for good)."""


# A job's servers and a scenario's server-lifetimes in all: each replica keeps one end of lifetime per server and a
# tournament tree over them (layout.Aux: ~3-4 int64 per server, ~11 with pools, + retirement.failures with
# retirement, counted as that share of a server: server_slots), so the bounds cap a scenario's memory at ~0.25 GB
# (~0.75 GB with pools) between saves.
MAX_SERVERS, MAX_SCENARIO_SERVERS = 1 << 17, 1 << 23

# The memory budget of a whole file (Config._memory, from scenario_bytes): the bytes every replica holds at its
# peak, a state save (the state's columns listed as Python integers and encoded beside the arrays), summed over
# the scenarios and sweep points, at most MAX_FILE_BYTES, what one daemon may take on a machine of a few GB (one
# scenario at MAX_SCENARIO_SERVERS fits: ~2.7 GB). Measured by `python bench/daemon.py --memory` (peak RSS
# against the estimate): a replica without servers 4-7 kB between ticks and 16-20 kB in a tick
# (simd.scenario.limits.MAX_TOTAL_REPLICAS' measure); a server slot 20-54 B between saves and 136-301 B at a
# save's peak (131,072 servers: without pools, with pools, with Weibull lifetimes and gamma rates, with retirement
# after 16 failures, counted as 2.45 slots); a replayed fault ~130 B once per scenario (its start time in the
# spec, its step in the plan's table, both listed and encoded at a save), counted twice with the log's repair
# times (`replay.repairs: log`: a repair time beside each, in the spec and the plan's table, the same again).
REPLICA_BYTES = 20_000
SERVER_SLOT_BYTES = 320
REPLAY_FAULT_BYTES = 160
MAX_FILE_BYTES = 3 << 30


def server_slots(body: ScenarioBody) -> float:
    """A replica's servers as the memory caps count them: the servers' table (the cluster's with pools, else the
    job's) weighted by the blames retirement keeps (1 + retirement.failures / 11); 0 without servers."""
    s = body.servers
    if s is None or body.fleet is not None or body.gpus % s.gpus_per_server:
        return 0.0
    n = cluster_size(body.gpus // s.gpus_per_server, s.warm_standbys or 0, s.spares.count if s.spares else 0)
    return n * (1.0 + (s.retirement.failures / 11.0 if s.retirement is not None else 0.0))


def scenario_bytes(body: ScenarioBody) -> int:
    """The estimated bytes of a scenario's replicas at their peak (a save), its replay table included: the one
    formula the file's memory budget sums (MAX_FILE_BYTES)."""
    replay = body.servers.replay if body.servers is not None else None
    faults = sum(map(len, replay.times()[0])) * (2 if replay.repairs == "log" else 1) if replay is not None else 0
    return math.ceil(body.replicas * (REPLICA_BYTES + server_slots(body) * SERVER_SLOT_BYTES)
                     + faults * REPLAY_FAULT_BYTES)


class ServersConfig(_Strict):
    """The job's GPUs as servers, each failing at its own rate, with lifetimes that need not be memoryless
    (simd/engine/servers.py; docs/servers.md). A failed server is repaired at once and rejoins."""

    gpus_per_server: Annotated[int, Field(ge=1, le=1024)] = 8
    """GPUs per server; the job's GPUs must be a multiple."""
    lemons: Lemons | None = None
    """Absent: every server fails at the base rate (`failures.hard_per_gpu_hour` times its GPUs)."""
    rates: ServerRates | None = None
    """Absent: the servers' rates are fixed (the base rate, or a lemon's); with `lemons` too, a lemon's rate is
    multiplied by its draw as well."""
    lifetime: Annotated[ExponentialLifetime | WeibullLifetime | LognormalLifetime,
                        Field(discriminator="distribution")] = ExponentialLifetime(distribution="exponential")
    """The time from a server's start or repair to its next failure, counted in executed steps, with the mean its
    rate gives; `distribution` picks the form."""
    warm_standbys: Annotated[int, Field(ge=0, le=1 << 16)] | None = None
    """Healthy servers kept warm beside the job: a failed server goes to repair and a standby replaces it at the
    restart's cost. With it (or `spares`) the cluster has pools and `repair` is required; absent with no spares: a
    failed server is repaired at once and rejoins."""
    spares: Spares | None = None
    """Taken when no standby is left, after their preemption; with neither, the job waits (the `waiting` bucket)
    for the first server back from repair. Repaired servers refill the standbys, then the spares."""
    repair: Repair | None = None
    """How a failed server is repaired (required with pools)."""
    relapse: Relapse | None = None
    """Absent: every repaired server starts a lifetime of its law."""
    diagnosis: Diagnosis | None = None
    """Absent: every failing server is identified (needs pools)."""
    retirement: Retirement | None = None
    """Absent: no server is retired (needs pools)."""
    bursts: Bursts | None = None
    """Absent: servers fail independently."""
    replay: Replay | None = None
    """A fault log replayed instead of drawn lifetimes (then no `lemons`, `rates` or `lifetime`); absent: drawn."""
    regimes: Regimes | None = None
    """Absent: no regimes (the rates hold steady, as `rate_schedule` sets them)."""
    rate_schedule: Annotated[list[RatePiece], Field(min_length=1, max_length=10_000)] | None = None
    """Rates that change with the job's compute time (a fault log's rate per month, `simd trace stats`): pieces by
    day, in increasing order from day 0; absent: the same rates throughout."""
    host_selection_seconds: CostSeconds | None = None
    """Re-scheduling on new hosts: after an interruption that took a spare or waited for a repair (no warm standby
    left), the time the scheduler takes to select the hosts, once the last replacement is ready (the job waits;
    AIReSim's host selection: 180). Needs pools; absent: 0."""
    rescheduling: Literal["job", "gang"] | None = None
    """When a job re-scheduled on new hosts (no warm standby left: a spare taken or a repair waited for) restarts:
    `job`, once its own servers are there; `gang`, only once the job and its `warm_standbys` are all staffed (the
    standbys from the spares, each after its preemption, then from the first servers back from repair; as far as
    the cluster holds them): AIReSim's host selection, which starts a job only with `job_size + warm_standbys`
    servers. An interruption a standby covers restarts at once under both. Needs pools; absent: `job`."""
    price_per_gpu_hour: Annotated[float, Field(ge=0, le=1e6, allow_inf_nan=False)] | None = None
    """What one GPU-hour held costs (any currency): `simd simulate --json` then reports the cost of the GPU-hours
    the job and its pools held and of one productive GPU-hour (needs pools; without it, in GPU-hours only)."""

    @property
    def pools(self) -> bool:
        """Whether the cluster has pools: warm standbys or spares (then a failed server goes to repair)."""
        return self.warm_standbys is not None or self.spares is not None

    @model_validator(mode="after")
    def _pools(self) -> ServersConfig:
        pools = self.pools
        if pools and self.repair is None:
            raise ValueError("servers.repair is required with warm_standbys or spares (the pools refill from repair)")
        if self.repair is not None and not pools:
            raise ValueError("servers.repair needs warm_standbys or spares (without pools a failed server is repaired "
                             "at once)")
        if self.replay is not None:
            drawn = [k for k in ("lemons", "rates") if getattr(self, k) is not None] + \
                (["lifetime"] if self.lifetime.distribution != "exponential" else [])
            drawn += [k for k in ("regimes", "rate_schedule", "relapse") if getattr(self, k) is not None]
            if drawn:
                raise ValueError(f"servers.replay replays a log's faults: {', '.join(drawn)} would not apply")
        sched = self.rate_schedule
        if sched is not None:
            if sched[0].from_day != 0:
                raise ValueError("servers.rate_schedule: the first piece's from_day must be 0")
            for k in range(1, len(sched)):
                if not sched[k].from_day > sched[k - 1].from_day:
                    raise ValueError(f"servers.rate_schedule: piece {k + 1}'s from_day is not after piece {k}'s")
        if self.replay is not None and self.replay.repairs == "log" and not pools:
            raise ValueError("servers.replay.repairs: log needs warm_standbys or spares (without pools a failed "
                             "server is repaired at once)")
        for name in ("diagnosis", "retirement", "price_per_gpu_hour", "host_selection_seconds", "rescheduling"):
            if getattr(self, name) is not None and not pools:
                raise ValueError(f"servers.{name} needs warm_standbys or spares (without pools no server leaves the "
                                 "job)")
        return self


def _scaled(r, factor: float):
    """A repair time with its scale (mean, median or maximum; each component's of a mixture) times ``factor``."""
    if r.distribution == "mixture":
        return r.model_copy(update={"components": [c.model_copy(update={"time": _scaled(c.time, factor)})
                                                   for c in r.components]})
    key = {"exponential": "mean_seconds", "lognormal": "median_seconds", "uniform": "max_seconds"}[r.distribution]
    return r.model_copy(update={key: getattr(r, key) * factor})


class SdcModel(_Strict):
    """What happens to an SDC that reaches a checkpoint. ``reference`` (the default, seed 000): it is baked in and
    rolled back there. ``committed`` (simd/engine/late.py): it is committed with the checkpoint and found later by
    the ``detectors``, forcing a rollback to the newest retained checkpoint older than its onset; one that
    outlives the retention is unrecoverable. Validation catches an SDC before a checkpoint under both."""

    semantics: Literal["reference", "committed"] = "reference"
    """`reference` (seed 000's): an SDC at a checkpoint is baked in and rolled back there; `committed`: it is
    committed with the checkpoint and found later by the detectors."""
    detectors: Annotated[list[SdcDetector], Field(max_length=8)] = []
    """Committed only: the detection layers (none: a committed SDC is found by nothing, it stays to the job's
    end)."""
    # (a plain int with bounds, not an Annotated alias: simd sweep reads the annotation to vary it)
    retention_checkpoints: int | None = Field(default=None, ge=1, le=1000)
    """Committed only, and required there unless `checkpoint.retention_checkpoints` gives it (one of the two: the
    same number): how many of the newest checkpoints are kept (the job's start counts as one)."""

    @model_validator(mode="after")
    def _committed_keys(self) -> SdcModel:
        if self.semantics == "reference":
            if self.detectors or self.retention_checkpoints is not None:
                raise ValueError("sdc.detectors and sdc.retention_checkpoints need semantics: committed (under the "
                                 "reference semantics an SDC never outlives a checkpoint)")
            return self
        names = [d.name for d in self.detectors]
        if len(set(names)) != len(names):
            raise ValueError(f"sdc.detectors: the names must be distinct, got {names}")
        return self



class Slo(_Strict):
    """The scenario's service-level objective, for the alerting rules."""

    goodput_target: Annotated[float, Field(gt=0, le=1)]
    """The effective utilization (goodput) the scenario should keep; `SimdGoodputBelowTarget` compares against
    it."""


class ScenarioBody(_Strict):
    """A scenario without its name (a sweep's template)."""

    seed: Annotated[int, Field(ge=0, lt=2**63)] = 0
    """The seed of every random stream of the job (replica r uses seed + r)."""
    n_gpus: int | None = Field(default=None, gt=0, le=10_000_000)
    """GPUs (ranks) in the job. Required, unless a fleet gives them (then refused)."""
    step_seconds: StepSeconds
    """A training step's duration without stragglers."""
    target_steps: Annotated[int, Field(gt=0, le=10**12)]
    """Steps per job; the daemon starts the next job when one completes."""
    failures: Failures | None = None
    """Required; with a fleet only `causes` may be given (the rates are per type)."""
    checkpoint: Checkpoint
    validation: Validation = Validation()
    """Absent: no validation."""
    restart_seconds: CostSeconds = recovery.COLD_RESTART_SECONDS
    """The cold restart after a hard failure or an SDC rollback; absent: TrainMover's measured timeline,
    6.47 min = 388.2 s (seed 001)."""
    recovery: Recovery = Recovery()
    stragglers: StragglerConfig | None = None
    """Absent: every step lasts `step_seconds`."""
    # At most 10,000: the daemon advances a scenario's replicas together on the engine's batch path
    # (simd/engine/replicas.py), which keeps 10,000 replicas of llama3-16k at speedup 3600 on the 1 s schedule
    # (bench/daemon.py --replicas 10000 measures it); the cap bounds a scenario's memory and tick cost.
    replicas: Annotated[int, Field(ge=1, le=10_000)] = 1
    """Independent copies of the job (seeds seed .. seed + replicas - 1) whose metrics add up."""
    slo: Slo | None = None
    shadow: ShadowRanks | None = None
    """Shadow-rank dual execution; absent: no rank shadowed. Not with a fleet or stragglers."""
    fleet: Annotated[list[AcceleratorType], Field(min_length=1, max_length=64)] | None = None
    """Accelerator types (distinct names) instead of `n_gpus` and one pair of rates; absent: one type."""
    sdc: SdcModel | None = None
    """What an SDC that reaches a checkpoint does; absent: seed 000's reference semantics (baked in, rolled
    back)."""
    servers: ServersConfig | None = None
    """The GPUs as servers with their own rates and lifetimes; absent: GPUs failing independently (seed 000).
    Not with a fleet or shadow ranks."""
    # Not part of the simulation: simd.live.lane.scenario_key leaves it out.
    acknowledge: Annotated[list[WarningCode], Field(max_length=len(WARNING_CODES))] = []
    """The warnings this scenario raises on purpose (it demonstrates a risky configuration), by code: they are
    logged at info level instead."""

    @model_validator(mode="wrap")
    @classmethod
    def _required_without_fleet(cls, data, handler):
        """n_gpus, failures and its two rates are required keys unless a fleet is given: reported as missing,
        together with every other problem of the scenario (not only once the rest is valid)."""
        missing = []
        if isinstance(data, dict) and data.get("fleet") is None:
            if data.get("n_gpus") is None:
                missing.append(InitErrorDetails(type="missing", loc=("n_gpus",), input=data))
            failures = data.get("failures")
            if failures is None:
                missing.append(InitErrorDetails(type="missing", loc=("failures",), input=data))
            elif isinstance(failures, dict):
                missing += [InitErrorDetails(type="missing", loc=("failures", k), input=failures)
                            for k in ("hard_per_gpu_hour", "sdc_per_gpu_hour") if failures.get(k) is None]
        try:
            model = handler(data)
        except ValidationError as exc:
            if not missing:
                raise
            raise ValidationError.from_exception_data(exc.title, [
                {k: e[k] for k in ("type", "loc", "input", "ctx") if k in e} for e in exc.errors()] + missing) from None
        if missing:
            raise ValidationError.from_exception_data(cls.__name__, missing)
        return model

    @property
    def gpus(self) -> int:
        """The job's GPUs: n_gpus, or the fleet's counts added up (shadow ranks' duplicates not included)."""
        return self.n_gpus if self.fleet is None else sum(a.count for a in self.fleet)

    @property
    def committed_sdc(self) -> bool:
        """Whether the scenario runs the committed-SDC model (sdc.semantics: committed)."""
        return self.sdc is not None and self.sdc.semantics == "committed"

    @property
    def sdc_possible(self) -> bool:
        if self.fleet is not None:
            return any(a.sdc_per_gpu_hour > 0 for a in self.fleet)
        return self.failures is not None and bool(self.failures.sdc_per_gpu_hour)

    @model_validator(mode="after")
    def _fleet(self) -> ScenarioBody:
        if self.fleet is None:
            return self
        if self.n_gpus is not None:
            raise ValueError(f"n_gpus and fleet exclude each other (the fleet's counts add up to the job's GPUs), "
                             f"got n_gpus {self.n_gpus}")
        for rate in ("hard_per_gpu_hour", "sdc_per_gpu_hour"):
            if self.failures is not None and getattr(self.failures, rate) is not None:
                raise ValueError(f"failures.{rate} and fleet exclude each other (each accelerator type has its rates)")
        names = [a.type for a in self.fleet]
        if len(set(names)) != len(names):
            raise ValueError(f"fleet: the types must have distinct names, got {names}")
        if self.gpus > 10_000_000:
            raise ValueError(f"fleet: the counts add up to the job's GPUs and must be <= 10000000, got {self.gpus}")
        for i, a in enumerate(self.fleet):
            for rate in ("hard_per_gpu_hour", "sdc_per_gpu_hour"):
                value = getattr(a, rate)
                if value * self.step_seconds / 3600.0 > 1.0:
                    raise ValueError(f"fleet[{i}].{rate} * step_seconds / 3600 is a probability per GPU-step and "
                                     f"must be <= 1, got {value} * {self.step_seconds} / 3600")
        return self

    @model_validator(mode="after")
    def _probabilities(self) -> ScenarioBody:
        if self.target_steps * self.step_seconds > MAX_JOB_SECONDS:
            raise ValueError(f"target_steps * step_seconds is the failure-free job and must be <= {MAX_JOB_SECONDS:g} "
                             f"simulated seconds, got {self.target_steps} * {self.step_seconds:g}")
        for rate in ("hard_per_gpu_hour", "sdc_per_gpu_hour"):
            value = getattr(self.failures, rate) if self.failures is not None else None
            if value is not None and value * self.step_seconds / 3600.0 > 1.0:
                raise ValueError(
                    f"failures.{rate} * step_seconds / 3600 is a probability per GPU-step and must be <= 1, "
                    f"got {value} * {self.step_seconds} / 3600")
        if self.stragglers and self.stragglers.slow_ranks > self.gpus:
            raise ValueError(f"stragglers.slow_ranks must be <= n_gpus ({self.gpus}), "
                             f"got {self.stragglers.slow_ranks}")
        return self

    @model_validator(mode="after")
    def _servers(self) -> ScenarioBody:
        s = self.servers
        if s is None or self.fleet is not None:  # (a fleet with servers: refused by _combinations)
            return self
        if self.gpus % s.gpus_per_server:
            raise ValueError(f"n_gpus must be a multiple of servers.gpus_per_server, got {self.gpus} and "
                             f"{s.gpus_per_server}")
        tiers = self.checkpoint.tiers
        if tiers is not None and tiers.peer is not None:
            span = tiers.peer.copies * tiers.peer.jump_servers
            if (self.gpus // s.gpus_per_server) % span:
                raise ValueError(f"the job's servers (n_gpus / servers.gpus_per_server = "
                                 f"{self.gpus // s.gpus_per_server}) must be a multiple of checkpoint.tiers.peer.copies"
                                 f" x jump_servers ({span}): the peer groups tile the job")
        n = cluster_size(self.gpus // s.gpus_per_server, s.warm_standbys or 0, s.spares.count if s.spares else 0)
        if n > MAX_SERVERS:
            raise ValueError(f"n_gpus / servers.gpus_per_server + warm_standbys + spares is the cluster's servers and "
                             f"must be <= {MAX_SERVERS}, got {n}")
        weight = server_slots(self) / n  # 1 + the blames retirement keeps
        if server_slots(self) * self.replicas > MAX_SCENARIO_SERVERS:
            extra = f" x (1 + retirement.failures / 11 = {weight:.3g})" if weight > 1.0 else ""
            raise ValueError(f"servers x replicas{extra} must be <= {MAX_SCENARIO_SERVERS} (each replica keeps every "
                             f"server's lifetime), got {n} x {self.replicas}")
        if s.lemons is not None and self.failures.hard_per_gpu_hour * s.lemons.multiplier * self.step_seconds \
                / 3600.0 > 1.0:
            raise ValueError(f"failures.hard_per_gpu_hour * servers.lemons.multiplier * step_seconds / 3600 is a "
                             f"lemon GPU's probability per step and must be <= 1, got {self.failures.hard_per_gpu_hour}"
                             f" * {s.lemons.multiplier} * {self.step_seconds} / 3600")
        return self

    @model_validator(mode="after")
    def _combinations(self) -> ScenarioBody:
        """The engine decides which mechanisms combine (simd.engine.spec.refused); here, those the scenario
        names."""
        named = {k for k, v in (("shadow", self.shadow), ("fleet", self.fleet), ("stragglers", self.stragglers),
                                ("hyper", self.checkpoint.hyper), ("committed_sdc", self.committed_sdc or None),
                                ("causes", self.failures and self.failures.causes), ("servers", self.servers))
                 if v is not None}
        if self.checkpoint.corrupt_on_load > 0:
            named.add("corrupt_loads")
        if self.servers is not None and self.servers.relapse is not None:
            named.add("relapse")
        memory = self.checkpoint.tiers.given if self.checkpoint.tiers is not None else ()
        if memory:
            named.update(("memory_tier", *(f"{kind}_tier" for kind, _ in memory)))
            if len(memory) > 1:
                named.add("two_tiers")
        if self.checkpoint.just_in_time is not None:
            named.add("jit")
            known = set(self.failures.cause_shares() or {"hardware": 1.0}) if self.failures is not None else \
                {"hardware"}
            if unknown := [c for c in self.checkpoint.just_in_time.causes or () if c not in known]:
                raise ValueError(f"checkpoint.just_in_time.causes: {', '.join(unknown)} not among the failure causes "
                                 f"({', '.join(sorted(known))})")
        if self.checkpoint.write_seconds > 0 or (self.checkpoint.save_failure is not None and
                                                 self.checkpoint.save_failure.probability > 0):
            named.add("async_saves")
        if (el := self.recovery.elastic) is not None:
            named.add("elastic")
            if self.gpus % el.groups:
                raise ValueError(f"n_gpus must be a multiple of recovery.elastic.groups (each group the same GPUs), "
                                 f"got {self.gpus} and {el.groups}")
            if self.servers is not None and not self.gpus % self.servers.gpus_per_server and \
                    self.gpus // self.servers.gpus_per_server % el.groups:
                raise ValueError(f"the job's servers (n_gpus / servers.gpus_per_server) must be a multiple of "
                                 f"recovery.elastic.groups (each group a block of them), got "
                                 f"{self.gpus // self.servers.gpus_per_server} and {el.groups}")
        for key in ("in_process", "crash_loop", "migration", "elastic"):
            given = getattr(self.recovery, key)
            if given is not None and given.causes is not None:
                named.add(key)
                known = set(self.failures.cause_shares() or {"hardware": 1.0}) if self.failures is not None else \
                    {"hardware"}
                if unknown := [c for c in given.causes if c not in known]:
                    raise ValueError(f"recovery.{key}.causes: {', '.join(unknown)} not among the failure causes "
                                     f"({', '.join(sorted(known))})")
        if self.recovery.crash_loop is not None:
            named.add("crash_loop")
        if self.recovery.migration is not None and (self.servers is None or not self.servers.warm_standbys):
            raise ValueError("recovery.migration needs servers.warm_standbys (a live migration moves the work to a "
                             "warm standby)")
        # (each tier's own mechanisms, named by its own keys)
        if why := refused_tiers(named, [(kind, {k for k, on in (
                ("tier_corrupt_loads", tier.corrupt_on_load > 0), ("tier_writes", tier.write_seconds > 0),
                ("tier_save_failure", tier.save_failure is not None)) if on}) for kind, tier in memory]):
            raise ValueError("; ".join(why))
        sdc = self.sdc.retention_checkpoints if self.sdc is not None else None
        if sdc is not None and self.checkpoint.retention_checkpoints is not None:
            raise ValueError("sdc.retention_checkpoints and checkpoint.retention_checkpoints are one number (the "
                             "checkpoints the job keeps): give one of them")
        if self.committed_sdc and sdc is None and self.checkpoint.retention_checkpoints is None:
            raise ValueError("sdc.retention_checkpoints (or checkpoint.retention_checkpoints): required with "
                             "semantics: committed")
        # (beside committed SDCs the retention may be sdc's key)
        if self.checkpoint.corrupt_on_load > 0 and self.checkpoint.retention_checkpoints is None and sdc is None:
            raise ValueError("checkpoint.corrupt_on_load needs checkpoint.retention_checkpoints (the checkpoints a "
                             "recovery can fall back to)")
        return self

    @model_validator(mode="after")
    def _phases(self) -> ScenarioBody:
        """Restart phases replace the constant cold restart: given beside it (the scenario's or a cause's), the
        file says the restart twice; a law must give a phase in range at the job's size."""
        if self.recovery.phases is None:
            return self
        if "restart_seconds" in self.model_fields_set:
            raise ValueError("restart_seconds and recovery.phases both give the cold restart (the phases' sum is it): "
                             "give one of them")
        given = self.failures.causes if self.failures is not None else None
        for name, v in (given.items() if isinstance(given, dict) else ()):
            if isinstance(v, CauseSpec) and v.restart_seconds is not None:
                raise ValueError(f"failures.causes.{name}.restart_seconds and recovery.phases both give its cold "
                                 "restart: give one of them")
        self.recovery.phases.seconds(self.gpus)
        return self

    def restart_phases_us(self) -> dict[str, int] | None:
        """Each restart phase's integer microseconds at the job's size (None without ``recovery.phases``): the cold
        restart is their sum, so the metrics' split by phase adds up to the restart bucket exactly."""
        if self.recovery.phases is None:
            return None
        return {k: to_us(v) for k, v in self.recovery.phases.seconds(self.gpus).items()}

    @property
    def cold_restart_seconds(self) -> float:
        """The cold restart: the phases' sum (their microseconds added) with ``recovery.phases``, else
        ``restart_seconds``."""
        phases = self.restart_phases_us()
        return self.restart_seconds if phases is None else sum(phases.values()) / US_PER_SECOND

    def causes(self) -> tuple[Cause, ...]:
        """Each cause with its detection latency and its restart under the recovery strategy."""
        return translate.causes(self)

    def job_spec(self, seed: int | None = None) -> JobSpec:
        """The engine's job (simd.scenario.translate), for ``seed`` (default: the scenario's)."""
        return translate.job_spec(self, seed)

    def replica_seeds(self) -> list[int]:
        return [self.seed + r for r in range(self.replicas)]

    def with_effects(self, effects: DrillEffects) -> ScenarioBody:
        """This scenario while a drill runs: rates and checkpoint cost scaled, stragglers replaced."""
        ckpt = {"seconds": self.checkpoint.seconds * effects.checkpoint_seconds_factor}
        if effects.write_seconds_factor != 1.0:
            if not self.checkpoint.write_seconds:
                raise ValueError("the drill's write_seconds_factor needs checkpoint.write_seconds (asynchronous "
                                 "saves)")
            ckpt["write_seconds"] = self.checkpoint.write_seconds * effects.write_seconds_factor
        if effects.tier_write_seconds_factor != 1.0:
            tiers = self.checkpoint.tiers
            if tiers is None or not any(tier.write_seconds for _, tier in tiers.given):
                raise ValueError("the drill's tier_write_seconds_factor needs a memory tier that writes "
                                 "(checkpoint.tiers.peer.write_seconds or checkpoint.tiers.local.write_seconds)")
            factor = effects.tier_write_seconds_factor
            ckpt["tiers"] = tiers.model_copy(update={kind: tier.model_copy(update={
                "write_seconds": tier.write_seconds * factor}) for kind, tier in tiers.given})
        if effects.save_failure_probability is not None:
            ckpt["save_failure"] = SaveFailure(probability=effects.save_failure_probability)
        if effects.corrupt_on_load is not None:
            if self.checkpoint.retention_checkpoints is None and not self.committed_sdc:  # (else sdc's retention)
                raise ValueError("the drill's corrupt_on_load needs checkpoint.retention_checkpoints (the checkpoints "
                                 "a recovery can fall back to)")
            if (effects.corrupt_on_load > 0) != (self.checkpoint.corrupt_on_load > 0):
                # the engine keeps the checkpoints a fallback can load only while loads can be corrupt (State's
                # ring): switched on mid-job it would hold none of those saved before, switched off its clean ones
                raise ValueError(f"the drill's corrupt_on_load {effects.corrupt_on_load:g} switches corrupt loads "
                                 f"{'on' if effects.corrupt_on_load > 0 else 'off'} (the scenario's "
                                 f"checkpoint.corrupt_on_load is {self.checkpoint.corrupt_on_load:g}): the job keeps "
                                 "the checkpoints a fallback loads only while it is above 0, so give both a value "
                                 "above 0 (a scenario's 1e-6 changes its results little)")
            ckpt["corrupt_on_load"] = effects.corrupt_on_load
        update = {"checkpoint": self.checkpoint.model_copy(update=ckpt)}
        if self.fleet is not None:  # every type's rates scaled alike
            update["fleet"] = [a.model_copy(update={"hard_per_gpu_hour": a.hard_per_gpu_hour * effects.hard_rate_factor,
                                                    "sdc_per_gpu_hour": a.sdc_per_gpu_hour * effects.sdc_rate_factor})
                               for a in self.fleet]
        else:
            update["failures"] = self.failures.model_copy(update={
                "hard_per_gpu_hour": self.failures.hard_per_gpu_hour * effects.hard_rate_factor,
                "sdc_per_gpu_hour": self.failures.sdc_per_gpu_hour * effects.sdc_rate_factor})
        if effects.stragglers is not None:
            update["stragglers"] = effects.stragglers
        if effects.on_servers:
            update["servers"] = self._servers_under(effects)
        if effects.cause_rate_factors is not None:
            update.update(self._causes_under(effects.cause_rate_factors, update))
        if effects.crash_loop is not None:
            update["recovery"] = self.recovery.model_copy(update={"crash_loop": effects.crash_loop})
        if effects.elastic_heal_seconds is not None:
            if self.recovery.elastic is None:
                raise ValueError("the drill's elastic_heal_seconds needs recovery.elastic (elastic replica groups)")
            update["recovery"] = update.get("recovery", self.recovery).model_copy(update={
                "elastic": self.recovery.elastic.model_copy(update={"heal_seconds": effects.elastic_heal_seconds})})
        return self.model_copy(update=update)

    def with_crash_loop_counted(self, crash_loop: CrashLoop) -> ScenarioBody:
        """This scenario with ``crash_loop``'s policy but failure probability 0 unless it has a crash loop of its own:
        the same results (no restart fails, no draw is made), with each cause's restarts counted as they are while a
        drill's crash loop runs (DrillEffects.crash_loop)."""
        if self.recovery.crash_loop is not None:
            return self
        dormant = crash_loop.model_copy(update={"failure_probability": 0.0})
        return self.model_copy(update={"recovery": self.recovery.model_copy(update={"crash_loop": dormant})})

    def _causes_under(self, factors: dict[str, float], update: dict) -> dict:
        """The failures (and a fleet's rates) with the named causes' rates multiplied (DrillEffects'
        cause_rate_factors); a ValueError names what is missing."""
        shares = self.failures.cause_shares() if self.failures is not None else None
        if shares is None:
            raise ValueError("the drill's cause_rate_factors needs failures.causes")
        if unknown := [c for c in factors if c not in shares]:
            raise ValueError(f"the drill's cause_rate_factors: {', '.join(unknown)} not among the failure causes "
                             f"({', '.join(sorted(shares))})")
        weighted = {c: s * factors.get(c, 1.0) for c, s in shares.items()}
        m = math.fsum(weighted.values())  # the hard rate's factor
        if m > 0:
            shares = {c: w / m for c, w in weighted.items()}
        causes = {c: self.failures.cause_spec(c).model_copy(update={"share": x}) if self.failures.cause_spec(c)
                  else x for c, x in shares.items()}
        failures = update.get("failures", self.failures)
        out = {"failures": failures.model_copy(update={"causes": causes, **(
            {"hard_per_gpu_hour": failures.hard_per_gpu_hour * m} if failures.hard_per_gpu_hour is not None else {})})}
        if self.fleet is not None:
            out["fleet"] = [a.model_copy(update={"hard_per_gpu_hour": a.hard_per_gpu_hour * m})
                            for a in update.get("fleet", self.fleet)]
        return out

    def _servers_under(self, effects: DrillEffects) -> ServersConfig:
        """The servers while a drill runs (DrillEffects' server effects); a ValueError names what is missing."""
        s = self.servers
        if s is None:
            raise ValueError("the drill changes servers (repair_time_factor, lemons, spares_withheld, bursts): the "
                             "scenario has no servers")
        update: dict = {}
        if effects.lemons is not None:
            update["lemons"] = effects.lemons
        if effects.repair_time_factor != 1.0:
            if s.repair is None:
                raise ValueError("the drill's repair_time_factor needs servers.repair (server pools)")
            update["repair"] = s.repair.model_copy(update={
                "automatic": _scaled(s.repair.automatic, effects.repair_time_factor),
                "manual": None if s.repair.manual is None else s.repair.manual.model_copy(
                    update={"time": _scaled(s.repair.manual.time, effects.repair_time_factor)})})
        if effects.spares_withheld is not None:
            if s.spares is None:
                raise ValueError("the drill's spares_withheld needs servers.spares")
            update["spares"] = s.spares.model_copy(update={"withheld": min(effects.spares_withheld, s.spares.count)})
        if effects.bursts is not None:
            update["bursts"] = effects.bursts
        return s.model_copy(update=update)

    def warnings(self) -> list[str]:
        """What may go wrong in this configuration, except what the scenario acknowledges (``notes``)."""
        return [f"{text} [deliberate? acknowledge: [{code}]]" for code, text in self._risks()
                if code not in self.acknowledge]

    def notes(self) -> list[str]:
        """The warnings the scenario acknowledges: it shows that risk on purpose (logged at info level)."""
        return [text for code, text in self._risks() if code in self.acknowledge]

    def _risks(self) -> list[tuple[str, str]]:
        """(code, text) of each risk of the configuration: SDCs reaching checkpoints (one, the first that
        applies), and a peer tier that nothing loses."""
        return self._sdc_risks() + self._peer_risks()

    def _peer_risks(self) -> list[tuple[str, str]]:
        """A peer tier without servers: the engine has no server identities then, so an interruption is one
        failure and takes one member of a group, never all of its copies (docs/model.md, "Memory tiers", "Loss");
        losing it takes servers failing together (servers.bursts, or a replayed log's simultaneous faults)."""
        tiers = self.checkpoint.tiers
        if tiers is None or tiers.peer is None or self.servers is not None:
            return []
        return [("peer-no-servers", f"scenario {self.name}: checkpoint.tiers.peer without a servers block is never "
                 f"lost: an interruption is then one failure, which takes one of a shard's {tiers.peer.copies} "
                 "copies; losing every copy takes servers failing together (servers.bursts, a replayed log)")]

    def _sdc_risks(self) -> list[tuple[str, str]]:
        """(code, text) of the first way SDCs can reach a checkpoint in this configuration, if any."""
        v, c = self.validation.interval_steps, self.checkpoint.interval_steps
        every_rank_shadowed = self.shadow is not None and round(self.shadow.fraction * self.gpus) == self.gpus
        if self.sdc_possible and (v == 0 or c % v != 0) and not every_rank_shadowed:
            why = "no validation" if v == 0 else f"validation every {v} steps does not divide checkpoint every {c}"
            what = ("committed with checkpoints (sdc.semantics: committed: only sdc.detectors find them then)"
                    if self.committed_sdc else "baked into checkpoints")
            return [("sdc-baked", f"scenario {self.name}: {why}: SDCs can be {what} "
                     "(seed 000 erratum: only checkpoint_interval % validation_interval == 0 prevents it)")]
        hyper = self.checkpoint.hyper
        if self.sdc_possible and hyper is not None and v and hyper.interval_steps % v != 0:
            return [("sdc-baked-hyper", f"scenario {self.name}: validation every {v} steps does not divide "
                     f"checkpoint.hyper.interval_steps {hyper.interval_steps}: SDCs can be baked into hyper "
                     "checkpoints (only a validation interval dividing both intervals prevents it)")]
        tiers = self.checkpoint.tiers
        # (the lowest tier's interval divides the others': validation that divides it divides them)
        if self.sdc_possible and tiers is not None and v and tiers.given[-1][1].interval_steps % v != 0:
            kind, tier = tiers.given[-1]
            what = ("committed with the tier's saves (sdc.semantics: committed: only sdc.detectors find them then)"
                    if self.committed_sdc else "baked into the tier's saves and rolled back there")
            return [("sdc-baked-tier", f"scenario {self.name}: validation every {v} steps does not divide "
                     f"checkpoint.tiers.{kind}.interval_steps {tier.interval_steps}: SDCs can be {what} (only a "
                     "validation interval dividing both intervals prevents it)")]
        return []


class Scenario(ScenarioBody):
    """One job, run to completion again and again (the daemon) or once per seed (the offline tools)."""

    name: Annotated[str, Field(pattern=r"^[a-z0-9_-]+$", max_length=64)]
    """The scenario's name (unique in the file, sweep points included): the `scenario` label's value."""
    # set on the scenarios a sweep expands to; not a key of the file (left out of its documentation)
    sweep: SkipJsonSchema[str | None] = Field(default=None, exclude=True)


class Sweep(_Strict):
    """The same job at several checkpoint intervals: scenarios named ``<name>-<interval>``."""

    name: Annotated[str, Field(pattern=r"^[a-z0-9_-]+$", max_length=48)]
    """The sweep's name: its scenarios are `<name>-<interval>`."""
    checkpoint_intervals: Annotated[list[IntervalSteps], Field(min_length=2, max_length=64)]
    """The checkpoint intervals, distinct (listed in increasing order)."""
    scenario: ScenarioBody
    """The job, as a scenario without its name; its checkpoint interval is replaced by each of the intervals."""

    @field_validator("checkpoint_intervals")
    @classmethod
    def _distinct(cls, v):
        if len(set(v)) != len(v):
            raise ValueError(f"must be distinct, got {v}")
        return sorted(v)

    def expand(self) -> list[Scenario]:
        body = self.scenario.model_dump()
        return [Scenario.model_validate({**body, "name": f"{self.name}-{iv}",
                                         "checkpoint": {**body["checkpoint"], "interval_steps": iv}},
                                        strict=False).model_copy(update={"sweep": self.name})
                for iv in self.checkpoint_intervals]


class DrillEffects(_Strict):
    """What a drill changes while it runs (every factor defaults to no change)."""

    hard_rate_factor: Annotated[float, Field(ge=0, le=1e6, allow_inf_nan=False)] = 1.0
    """Multiplies the hard-failure rates (every type's, with a fleet)."""
    sdc_rate_factor: Annotated[float, Field(ge=0, le=1e6, allow_inf_nan=False)] = 1.0
    """Multiplies the SDC rates."""
    checkpoint_seconds_factor: Annotated[float, Field(gt=0, le=1e6, allow_inf_nan=False)] = 1.0
    """Multiplies the checkpoint's cost (slow storage)."""
    stragglers: StragglerConfig | None = None
    """Replaces the scenario's stragglers while the drill runs."""
    stall_seconds: Annotated[float, Field(ge=0, le=86400, allow_inf_nan=False)] = 0.0
    """Wall seconds during which the daemon runs no tick (rehearses the stalled-ticks alert)."""
    repair_time_factor: Annotated[float, Field(gt=0, le=1e6, allow_inf_nan=False)] = 1.0
    """Multiplies the repair times (both stages) of the repairs that start while the drill runs (needs server
    pools)."""
    lemons: Lemons | None = None
    """Replaces the servers' lemons while the drill runs: a lemon outbreak (needs `servers`; every server starts
    a new lifetime when the drill starts and ends, docs/servers.md)."""
    spares_withheld: Annotated[int, Field(ge=0, le=1 << 16)] | None = None
    """Spares taken away while the drill runs (`servers.spares.withheld`, at most the spares; needs spares)."""
    write_seconds_factor: Annotated[float, Field(gt=0, le=1e6, allow_inf_nan=False)] = 1.0
    """Multiplies an asynchronous save's write time (slow storage) for the saves that start while the drill runs
    (needs `checkpoint.write_seconds`); a write in flight keeps its end."""
    tier_write_seconds_factor: Annotated[float, Field(gt=0, le=1e6, allow_inf_nan=False)] = 1.0
    """Multiplies each memory tier's write time (`checkpoint.tiers.peer.write_seconds`, `local.write_seconds`: a
    slow or congested network to the peers, host memory under pressure) for the tier saves that start while the
    drill runs (needs a tier that writes); a write in flight keeps its end. A write longer than the tier's interval
    makes every tier save wait for the one before (the checkpoint bucket's `wait` part)."""
    save_failure_probability: Annotated[float, Field(ge=0, le=1, allow_inf_nan=False)] | None = None
    """Replaces `checkpoint.save_failure.probability` while the drill runs: 1 is a storage outage (every save
    fails; the job trains on from its last durable checkpoint)."""
    corrupt_on_load: Annotated[float, Field(ge=0, le=1, allow_inf_nan=False)] | None = None
    """Replaces `checkpoint.corrupt_on_load` while the drill runs: checkpoints found corrupt when a recovery loads
    them (a bad storage target; needs `checkpoint.retention_checkpoints`). Both values above 0: the job keeps the
    checkpoints a fallback loads only while loads can be corrupt, so a drill cannot switch them on or off (a
    scenario's 1e-6 changes its results little)."""
    bursts: Bursts | None = None
    """Replaces the servers' bursts while the drill runs (needs `servers`): rack or power-feed outages
    (`domain_servers`) that take whole groups of a peer tier placed inside one domain."""
    cause_rate_factors: Annotated[dict[CauseName, Annotated[float, Field(gt=0, le=1e6, allow_inf_nan=False)]],
                                  Field(min_length=1, max_length=64)] | None = None
    """Multiplies the hard-failure rates of the named causes (names of `failures.causes`; needs them), the others'
    unchanged: the hard rate and the causes' shares change together. A hang storm: `{hang: 20}` on a cause detected
    by a watchdog's timeout."""
    crash_loop: CrashLoop | None = None
    """Replaces `recovery.crash_loop` while the drill runs: restarts that fail and loop to an escalation. A scenario
    without a crash loop runs outside the drill with one that never fails (`failure_probability: 0`, the drill's
    other keys: the same results), so its per-cause restart counts are kept the same way before, during and after
    the drill; a scenario's drills and its own crash loop must agree on `escalation_seconds` (the restart time's
    `escalation` part is counted at one value)."""
    elastic_heal_seconds: CostSeconds | None = None
    """Replaces `recovery.elastic.heal_seconds` while the drill runs (needs `recovery.elastic`): a heal longer than
    the drill is an elastic group that cannot rejoin. When the drill ends (or starts), a group out rejoins at the
    latest `replace_seconds` + `heal_seconds` of the parameters then in force later."""

    @property
    def on_servers(self) -> bool:
        """Whether the drill changes the servers (its scenarios must have them)."""
        return self.repair_time_factor != 1.0 or self.lemons is not None or self.spares_withheld is not None \
            or self.bursts is not None


class Drill(_Strict):
    """A named fault timeline for alerting-rule rehearsal: effects on some scenarios for a stretch of
    simulated time, started at ``start_at_seconds`` of simulated time or on demand (HTTP API, `simd drill`)."""

    name: Annotated[str, Field(pattern=r"^[a-z0-9_-]+$", max_length=48)]
    """The drill's name (unique): the `drill` label's value and the API's path."""
    description: Annotated[str, Field(min_length=1, max_length=300)]
    """What it rehearses, for people (the API lists it)."""
    duration_seconds: SimulatedSeconds
    """How long it runs, in simulated seconds (a start on demand may ask for another duration)."""
    start_at_seconds: Annotated[float, Field(ge=0, le=1e12, allow_inf_nan=False)] | None = None
    """Start by itself at this simulated time; absent: only on demand."""
    scenarios: Annotated[list[str], Field(min_length=1)] | None = None
    """The scenarios it changes, by name; absent: every scenario outside sweeps."""
    effects: DrillEffects


class DrillRequest(_Strict):
    """The body of ``POST /api/v1/drills/{name}`` (every key optional)."""

    duration_seconds: SimulatedSeconds | None = None  # default: the drill's configured duration


class Config(_Strict):
    """A scenario file."""

    speedup: Speedup = 600.0
    """Simulated seconds per wall second in the daemon (`simd run --speedup` overrides it)."""
    tick_seconds: TickSeconds = 1.0
    """Wall seconds between the daemon's ticks (`simd run --tick-seconds` overrides it)."""
    scenarios: Annotated[list[Scenario], Field(max_length=MAX_SCENARIOS)] = []
    """The jobs."""
    sweeps: Annotated[list[Sweep], Field(max_length=MAX_SWEEPS)] = []
    """Jobs at several checkpoint intervals, each point a scenario."""
    drills: Annotated[list[Drill], Field(max_length=MAX_DRILLS)] = []
    """Named fault timelines, for rehearsing alerts."""

    @model_validator(mode="after")
    def _unique_names(self) -> Config:
        if not self.scenarios and not self.sweeps:
            raise ValueError("scenarios: at least one scenario or sweep is required")
        points = len(self.scenarios) + sum(len(sw.checkpoint_intervals) for sw in self.sweeps)
        if points > MAX_ALL_SCENARIOS:
            raise ValueError(f"scenarios and sweep points: at most {MAX_ALL_SCENARIOS} in all, got {points}")
        replicas = sum(s.replicas for s in self.scenarios) + sum(
            sw.scenario.replicas * len(sw.checkpoint_intervals) for sw in self.sweeps)
        if replicas > MAX_TOTAL_REPLICAS:
            raise ValueError(f"replicas: at most {MAX_TOTAL_REPLICAS} in all (scenarios and sweep points, what one "
                             f"daemon holds in memory), got {replicas}")
        named = self._named()
        total = sum(scenario_bytes(s) for _, s in named)
        if total > MAX_FILE_BYTES:
            raise ValueError(f"memory: the replicas' estimated peak (a state save) must be <= {MAX_FILE_BYTES} "
                             f"bytes in all (scenarios and sweep points: replicas x ({REPLICA_BYTES} B + "
                             f"{SERVER_SLOT_BYTES} B per server slot) + {REPLAY_FAULT_BYTES} B per replayed fault; "
                             f"docs/daemon.md), got {total}")
        seen: dict[str, str] = {}
        for where, s in named:
            if s.name in seen:
                raise ValueError(f"{where}.name: {quoted(s.name)} is already the name of {seen[s.name]}")
            seen[s.name] = where
        drill_names: dict[str, int] = {}
        for i, d in enumerate(self.drills):
            if d.name in drill_names:
                raise ValueError(f"drills[{i}].name: {quoted(d.name)} is already the name of "
                                 f"drills[{drill_names[d.name]}]")
            drill_names[d.name] = i
            for j, target in enumerate(d.scenarios or []):
                if target not in seen:
                    raise ValueError(f"drills[{i}].scenarios[{j}]: no scenario named {quoted(target)}")
            for s in self.drill_targets(d):
                try:
                    # the keys set only: a default dumped would count as given (restart_seconds beside phases)
                    ScenarioBody.model_validate(s.with_effects(d.effects).model_dump(
                        exclude={"name", "sweep"}, exclude_unset=True), strict=False)
                except ValidationError as exc:
                    raise ValueError(f"drills[{i}] on scenario {s.name}: " + "; ".join(
                        errors.phrase(e) for e in exc.errors(include_url=False))) from None
                except ValueError as exc:
                    raise ValueError(f"drills[{i}] on scenario {s.name}: {exc}") from None
                own = s.recovery.crash_loop
                first = self.drill_crash_loop(s.name)
                if d.effects.crash_loop is not None and (own or first).escalation_seconds != \
                        d.effects.crash_loop.escalation_seconds:
                    raise ValueError(f"drills[{i}].effects.crash_loop.escalation_seconds on scenario {s.name}: "
                                     f"{d.effects.crash_loop.escalation_seconds:g}, where its "
                                     f"{'recovery.crash_loop' if own else 'first crash-loop drill'} has "
                                     f"{(own or first).escalation_seconds:g}: they must agree (the restart time's "
                                     "escalation part is counted at one value)")
        return self

    def drill_crash_loop(self, scenario: str) -> CrashLoop | None:
        """The crash loop of the first drill (file order) that gives scenario ``scenario`` one (None: none does):
        outside its drills the scenario runs with it at failure probability 0 (ScenarioBody.with_crash_loop_counted),
        so the per-cause restart counts keep one width."""
        for d in self.drills:
            if d.effects.crash_loop is not None and scenario in {s.name for s in self.drill_targets(d)}:
                return d.effects.crash_loop
        return None

    @model_validator(mode="after")
    def _tick_work(self) -> Config:
        if why := self.tick_overruns():
            raise ValueError(why[0])
        return self

    def tick_overruns(self, speedup: float | None = None, tick_seconds: float | None = None) -> list[str]:
        """Why each scenario (or sweep point) whose expected tick exceeds TICK_WORK_US cannot keep up at
        ``speedup`` and ``tick_seconds`` (default: the file's): simd.engine.work's estimate of a call that advances
        its replicas by a tick of simulated time, the daemon's own cost model (simd.live.lane)."""
        from simd.engine import work

        speedup = self.speedup if speedup is None else speedup
        tick_seconds = self.tick_seconds if tick_seconds is None else tick_seconds
        out = []
        for where, s in self._named():
            load = work.load_of(s.job_spec())
            est = work.expected_us(work.KERNEL, load, s.replicas, speedup * tick_seconds * 1e6)
            if est > TICK_WORK_US:
                out.append(f"{where} ({s.name}): a tick of {speedup:g} x {tick_seconds:g} simulated seconds is "
                           f"~{est / 1e6:.3g} s of engine work for its {s.replicas} replica(s), over the "
                           f"{TICK_WORK_US / 1e6:g} s a scenario may take per tick (fewer replicas, a lower rate or "
                           f"speedup, or shorter ticks)")
        return out

    def drill_targets(self, drill: Drill) -> list[Scenario]:
        if drill.scenarios is None:
            return [s for s in self.all_scenarios if s.sweep is None]
        return [s for s in self.all_scenarios if s.name in drill.scenarios]

    def drill(self, name: str) -> Drill:
        for d in self.drills:
            if d.name == name:
                return d
        raise KeyError(name)

    def _named(self) -> list[tuple[str, Scenario]]:
        out = [(f"scenarios[{i}]", s) for i, s in enumerate(self.scenarios)]
        for i, sw in enumerate(self.sweeps):
            out += [(f"sweeps[{i}] ({sw.name}, interval {s.checkpoint.interval_steps})", s) for s in sw.expand()]
        return out

    @cached_property
    def all_scenarios(self) -> tuple[Scenario, ...]:
        """The scenarios and every sweep point, in file order (sweeps expanded once per configuration)."""
        return tuple(s for _, s in self._named())

    def scenario(self, name: str) -> Scenario:
        for s in self.all_scenarios:
            if s.name == name:
                return s
        raise KeyError(name)

    def warnings(self) -> list[str]:
        return [w for s in self.all_scenarios for w in s.warnings()]

    def notes(self) -> list[str]:
        """The warnings scenarios acknowledge (ScenarioBody.notes)."""
        return [n for s in self.all_scenarios for n in s.notes()]


