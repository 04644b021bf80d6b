"""The scenario file's shape: every key, its type and bounds, and the rules that join keys (docs/design.md 3).

Frozen pydantic models, strict (no "5" -> 5, no bool as int) and closed (an unknown key is an error). The bounded
types are in simd.scenario.limits, the error lines in simd.scenario.errors, reading in simd.scenario.load.
"""

from __future__ import annotations

import math
from functools import cached_property
from typing import TYPE_CHECKING, Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator
from pydantic_core import InitErrorDetails

from simd.models import recovery
from simd.scenario import errors, translate
from simd.scenario.limits import (
    MAX_ALL_SCENARIOS,
    MAX_DRILLS,
    MAX_JOB_SECONDS,
    MAX_SCENARIOS,
    MAX_SWEEPS,
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


class _Strict(BaseModel):
    # strict: no "5" -> 5 coercion, no bool as int; extra keys are errors; frozen once validated
    model_config = ConfigDict(strict=True, extra="forbid", frozen=True)




CauseName = Annotated[str, Field(pattern=r"^[a-z0-9_]+$", max_length=32)]
# Named cause mixes. llama3: Llama 3 paper's root causes of interruptions as seed 001 groups them.
CAUSE_PRESETS: dict[str, dict[str, float]] = {"llama3": recovery.LLAMA3_CAUSE_SHARES}


class Failures(_Strict):
    # both required, except with a fleet (which gives them per accelerator type: then they are refused)
    # (Field(...) rather than `Rate | None`: the annotation stays `float | None`, which simd.offline.sweep.grid reads)
    hard_per_gpu_hour: float | None = Field(default=None, ge=0, le=3.6e6, allow_inf_nan=False)
    sdc_per_gpu_hour: float | None = Field(default=None, ge=0, le=3.6e6, allow_inf_nan=False)
    # None: seed 000's single kind of hard failure ("hardware"), detected at once
    causes: Literal["llama3"] | dict[CauseName, Annotated[float, Field(gt=0, le=1)]] | None = None

    @field_validator("causes")
    @classmethod
    def _shares_sum_to_one(cls, v):
        if isinstance(v, dict):
            if not v:
                raise ValueError("must name at least one cause")
            total = math.fsum(v.values())
            if abs(total - 1.0) > 1e-3:
                raise ValueError(f"shares must sum to 1, got {total:g}")
        return v

    def cause_shares(self) -> dict[str, float] | None:
        if self.causes is None:
            return None
        shares = CAUSE_PRESETS[self.causes] if isinstance(self.causes, str) else self.causes
        total = math.fsum(shares.values())
        return {k: v / total for k, v in shares.items()}


class Recovery(_Strict):
    # cold: every failure takes the full restart (restart_seconds); warm: gpu, network and host failures swap
    # in a warm standby (ByteRobust hot update, 55 s), software and other failures still restart cold
    # (seed 001, scenario 3)
    strategy: Literal["cold", "warm"] = "cold"


class Mitigation(_Strict):
    # a median-based detector flags the slow ranks after this many steps of a job and replaces them
    detect_after_steps: Annotated[int, Field(gt=0, le=10**9)]


class StragglerConfig(_Strict):
    jitter_seconds: Annotated[float, Field(ge=0, le=3600, allow_inf_nan=False)] = 0.0
    slow_ranks: Annotated[int, Field(ge=0)] = 0
    slowdown: Annotated[float, Field(ge=1, le=100, allow_inf_nan=False)] = 1.0
    mitigation: Mitigation | None = None


class HyperCheckpoint(_Strict):
    """Hyper-checkpointing (seed 000, exercise 2; simd/engine/hyper.py): after each SDC detection (a validation
    catching it, a checkpoint baking it in, a late detector finding it; not a job's end) the job checkpoints every
    ``interval_steps`` steps on the lattice anchored at the rollback point, for the next ``window_steps`` executed
    steps, then on the normal interval again. A job's end closes the window."""

    # 1..10^9 steps; usually below checkpoint.interval_steps (equal to it: exactly the plain schedule). Unless
    # validation divides it too, hyper checkpoints can bake SDCs in (check-config warns)
    interval_steps: IntervalSteps
    # 1..10^12 executed steps (recomputed and failed steps count); longer than the job: until the job ends
    window_steps: Annotated[int, Field(gt=0, le=10**12)]


class Checkpoint(_Strict):
    interval_steps: IntervalSteps
    seconds: CostSeconds
    hyper: HyperCheckpoint | None = None  # absent: the fixed interval only


class Validation(_Strict):
    interval_steps: Annotated[int, Field(ge=0, le=10**9)] = 0  # 0 = no validation
    seconds: CostSeconds = 0.0


class ShadowRanks(_Strict):
    """Shadow-rank dual execution (seed 000, exercise 3; simd/engine/shadow.py)."""

    # share of the job's ranks that run twice, each copy on a GPU of its own: round(fraction * n_gpus) ranks;
    # 0..1 (0: none, the plain job; 1: every rank, so no SDC ever reaches a validation or a checkpoint)
    fraction: Annotated[float, Field(ge=0, le=1, allow_inf_nan=False)]
    # with at least one rank shadowed, every step lasts step_seconds * (1 + overhead) (the comparison of the
    # copies); 0..10 (0: free; 1: the duplicates time-share the GPUs, twice as slow)
    overhead: Annotated[float, Field(ge=0, le=10, allow_inf_nan=False)] = 0.0


class AcceleratorType(_Strict):
    """One accelerator type of a heterogeneous fleet (seed 000, exercise 4; simd/engine/fleet.py). No presets:
    there are no public per-type failure and SDC rates to take them from, so the file gives them."""

    type: Annotated[str, Field(pattern=r"^[a-z0-9_]+$", max_length=32)]  # the `accelerator` label's value
    count: Annotated[int, Field(gt=0, le=10_000_000)]  # GPUs of this type in the job
    hard_per_gpu_hour: Rate
    sdc_per_gpu_hour: Rate


class ExponentialLatency(_Strict):
    distribution: Literal["exponential"]
    mean_seconds: LatencySeconds  # memoryless: a check that fires at a constant rate


class LognormalLatency(_Strict):
    distribution: Literal["lognormal"]
    median_seconds: LatencySeconds
    sigma: Annotated[float, Field(ge=0, le=10, allow_inf_nan=False)]  # the log's standard deviation; 0: fixed


class UniformLatency(_Strict):
    distribution: Literal["uniform"]
    max_seconds: LatencySeconds  # on [0, max]: a scanner that visits every host once per cycle of max_seconds


class SdcDetector(_Strict):
    """A layer of SDC detection (simd/engine/late.py): it finds a present SDC with probability ``coverage``, after
    its latency; the first detector to find it wins."""

    name: Annotated[str, Field(pattern=r"^[a-z0-9_]+$", max_length=32)]  # the `detector` label's value
    coverage: Annotated[float, Field(ge=0, le=1, allow_inf_nan=False)] = 1.0  # 0..1: share of SDCs it can find
    latency: Annotated[ExponentialLatency | LognormalLatency | UniformLatency, Field(discriminator="distribution")]



class SdcModel(_Strict):
    """What happens to an SDC that reaches a checkpoint. ``reference`` (the default, seed 000): it is baked in and
    rolled back there. ``committed`` (simd/engine/late.py): it is committed with the checkpoint and found later by
    the ``detectors``, forcing a rollback to the newest retained checkpoint older than its onset; one that
    outlives the retention is unrecoverable. Validation catches an SDC before a checkpoint under both."""

    semantics: Literal["reference", "committed"] = "reference"
    # committed only: 0..8 layers (none: a committed SDC is found by nothing, it stays to the job's end)
    detectors: Annotated[list[SdcDetector], Field(max_length=8)] = []
    # committed only (required there): the newest 1..1000 checkpoints are kept (the job's start counts as one)
    retention_checkpoints: int | None = Field(default=None, ge=1, le=1000)  # (plain int: simd sweep can vary it)

    @model_validator(mode="after")
    def _committed_keys(self) -> SdcModel:
        if self.semantics == "reference":
            if self.detectors or self.retention_checkpoints is not None:
                raise ValueError("sdc.detectors and sdc.retention_checkpoints need semantics: committed (under the "
                                 "reference semantics an SDC never outlives a checkpoint)")
            return self
        if self.retention_checkpoints is None:
            raise ValueError("sdc.retention_checkpoints: required with semantics: committed")
        names = [d.name for d in self.detectors]
        if len(set(names)) != len(names):
            raise ValueError(f"sdc.detectors: the names must be distinct, got {names}")
        return self



class Slo(_Strict):
    # the effective utilization (goodput) the scenario should keep; alerting rules compare against it
    goodput_target: Annotated[float, Field(gt=0, le=1)]


class ScenarioBody(_Strict):
    """A scenario without its name (a sweep's template)."""

    seed: Annotated[int, Field(ge=0, lt=2**63)] = 0
    # required unless `fleet` gives the GPUs (the counts add up to n_gpus); then refused
    n_gpus: int | None = Field(default=None, gt=0, le=10_000_000)
    step_seconds: StepSeconds
    target_steps: Annotated[int, Field(gt=0, le=10**12)]
    # required; with a fleet only `causes` may be given (the rates are per type)
    failures: Failures | None = None
    checkpoint: Checkpoint
    validation: Validation = Validation()
    # the cold restart; absent: TrainMover's measured timeline, 6.47 min = 388.2 s (seed 001)
    restart_seconds: CostSeconds = recovery.COLD_RESTART_SECONDS
    recovery: Recovery = Recovery()
    stragglers: StragglerConfig | None = None
    # independent copies of the job (seeds seed .. seed + replicas - 1) whose metrics add up
    # At most 10,000: the daemon advances a scenario's replicas together on the engine's batch path
    # (simd/engine/replicas.py), which keeps 10,000 replicas of llama3-16k at speedup 3600 on the 1 s schedule
    # (bench/daemon.py --replicas 10000 measures it); the cap bounds a scenario's memory and tick cost.
    replicas: Annotated[int, Field(ge=1, le=10_000)] = 1
    slo: Slo | None = None
    # shadow-rank dual execution; absent: no rank shadowed
    shadow: ShadowRanks | None = None
    # accelerator types instead of n_gpus and one pair of rates (1..64 types, distinct names); absent: one type
    fleet: Annotated[list[AcceleratorType], Field(min_length=1, max_length=64)] | None = None
    # what an SDC that reaches a checkpoint does; absent: seed 000's reference semantics (baked in, rolled back)
    sdc: SdcModel | None = None
    # the warnings this scenario raises on purpose (it demonstrates a risky configuration), by code: they are
    # logged at info level instead. Not part of the simulation (simd.live.lane.scenario_key leaves it out).
    acknowledge: Annotated[list[WarningCode], Field(max_length=len(WARNING_CODES))] = []

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
    def _fleet_and_shadow(self) -> ScenarioBody:
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
        if self.shadow is not None:
            raise ValueError("shadow and fleet cannot be combined (shadow ranks on a mixed fleet are not modelled)")
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
        if self.shadow is not None and self.stragglers is not None:
            raise ValueError("shadow and stragglers cannot be combined (the step-time model of shadowed ranks "
                             "is not modelled)")
        if self.shadow is not None and (self.checkpoint.hyper is not None or self.committed_sdc):
            raise ValueError("shadow cannot be combined with checkpoint.hyper or sdc.semantics: committed (not "
                             "checked against the per-step oracle together)")
        return self

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
        update = {
            "checkpoint": self.checkpoint.model_copy(update={
                "seconds": self.checkpoint.seconds * effects.checkpoint_seconds_factor}),
        }
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
        return self.model_copy(update=update)

    def warnings(self) -> list[str]:
        """What may go wrong in this configuration, except what the scenario acknowledges (``notes``)."""
        return [f"{text} [deliberate? acknowledge: [{code}]]" for code, text in self._risks()
                if code not in self.acknowledge]

    def notes(self) -> list[str]:
        """The warnings the scenario acknowledges: it shows that risk on purpose (logged at info level)."""
        return [text for code, text in self._risks() if code in self.acknowledge]

    def _risks(self) -> list[tuple[str, str]]:
        """(code, text) of each risk of the configuration."""
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
        return []


class Scenario(ScenarioBody):
    name: Annotated[str, Field(pattern=r"^[a-z0-9_-]+$", max_length=64)]
    sweep: str | None = Field(default=None, exclude=True)  # set on the scenarios a sweep expands to


class Sweep(_Strict):
    """The same job at several checkpoint intervals: scenarios named ``<name>-<interval>``."""

    name: Annotated[str, Field(pattern=r"^[a-z0-9_-]+$", max_length=48)]
    checkpoint_intervals: Annotated[list[IntervalSteps], Field(min_length=2, max_length=64)]
    scenario: ScenarioBody

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
    sdc_rate_factor: Annotated[float, Field(ge=0, le=1e6, allow_inf_nan=False)] = 1.0
    checkpoint_seconds_factor: Annotated[float, Field(gt=0, le=1e6, allow_inf_nan=False)] = 1.0
    stragglers: StragglerConfig | None = None  # replaces the scenario's stragglers
    stall_seconds: Annotated[float, Field(ge=0, le=86400, allow_inf_nan=False)] = 0.0  # wall seconds without ticks


class Drill(_Strict):
    """A named fault timeline for alerting-rule rehearsal: effects on some scenarios for a stretch of
    simulated time, started at ``start_at_seconds`` of simulated time or on demand (HTTP API, `simd drill`)."""

    name: Annotated[str, Field(pattern=r"^[a-z0-9_-]+$", max_length=48)]
    description: Annotated[str, Field(min_length=1, max_length=300)]
    duration_seconds: SimulatedSeconds
    start_at_seconds: Annotated[float, Field(ge=0, le=1e12, allow_inf_nan=False)] | None = None
    scenarios: Annotated[list[str], Field(min_length=1)] | None = None  # default: every scenario outside sweeps
    effects: DrillEffects


class DrillRequest(_Strict):
    """The body of ``POST /api/v1/drills/{name}`` (every key optional)."""

    duration_seconds: SimulatedSeconds | None = None  # default: the drill's configured duration


class Config(_Strict):
    speedup: Speedup = 600.0
    tick_seconds: TickSeconds = 1.0
    scenarios: Annotated[list[Scenario], Field(max_length=MAX_SCENARIOS)] = []
    sweeps: Annotated[list[Sweep], Field(max_length=MAX_SWEEPS)] = []
    drills: Annotated[list[Drill], Field(max_length=MAX_DRILLS)] = []

    @model_validator(mode="after")
    def _unique_names(self) -> Config:
        if not self.scenarios and not self.sweeps:
            raise ValueError("scenarios: at least one scenario or sweep is required")
        points = len(self.scenarios) + sum(len(sw.checkpoint_intervals) for sw in self.sweeps)
        if points > MAX_ALL_SCENARIOS:
            raise ValueError(f"scenarios and sweep points: at most {MAX_ALL_SCENARIOS} in all, got {points}")
        seen: dict[str, str] = {}
        for where, s in self._named():
            if s.name in seen:
                raise ValueError(f"{where}.name: {s.name!r} is already the name of {seen[s.name]}")
            seen[s.name] = where
        drill_names: dict[str, int] = {}
        for i, d in enumerate(self.drills):
            if d.name in drill_names:
                raise ValueError(f"drills[{i}].name: {d.name!r} is already the name of drills[{drill_names[d.name]}]")
            drill_names[d.name] = i
            for j, target in enumerate(d.scenarios or []):
                if target not in seen:
                    raise ValueError(f"drills[{i}].scenarios[{j}]: no scenario named {target!r}")
            for s in self.drill_targets(d):
                try:
                    ScenarioBody.model_validate(s.with_effects(d.effects).model_dump(exclude={"name", "sweep"}),
                                                strict=False)
                except ValidationError as exc:
                    raise ValueError(f"drills[{i}] on scenario {s.name}: " + "; ".join(
                        errors.phrase(e) for e in exc.errors(include_url=False))) from None
        return self

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


