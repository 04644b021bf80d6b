"""Scenario file (YAML) -> validated, frozen objects; the embedded default configuration.

Every problem is reported, one per line, as ``<field path>: <what is wrong>, got <value>`` (DESIGN.md 3.8).
Unknown keys are errors. Nothing starts until the whole file is valid.
"""

from __future__ import annotations

import math
from importlib import resources
from pathlib import Path
from typing import Annotated

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from simd.engine import JobSpec, per_step_cluster_hazard

DEFAULT_RESOURCE = "default.yaml"


class ConfigError(Exception):
    """The scenario file is invalid; ``errors`` holds one readable line per problem."""

    def __init__(self, errors: list[str]):
        super().__init__("\n".join(errors))
        self.errors = errors


class _Strict(BaseModel):
    # strict: no "5" -> 5 coercion, no bool as int; extra keys are errors; frozen once validated
    model_config = ConfigDict(strict=True, extra="forbid", frozen=True)


NonNegative = Annotated[float, Field(ge=0, allow_inf_nan=False)]
Positive = Annotated[float, Field(gt=0, allow_inf_nan=False)]


class Failures(_Strict):
    hard_per_gpu_hour: NonNegative
    sdc_per_gpu_hour: NonNegative


class Checkpoint(_Strict):
    interval_steps: Annotated[int, Field(gt=0)]
    seconds: NonNegative


class Validation(_Strict):
    interval_steps: Annotated[int, Field(ge=0)] = 0  # 0 = no validation
    seconds: NonNegative = 0.0


class Scenario(_Strict):
    name: Annotated[str, Field(pattern=r"^[a-z0-9_-]+$", max_length=64)]
    seed: Annotated[int, Field(ge=0, lt=2**63)] = 0
    n_gpus: Annotated[int, Field(gt=0, le=10_000_000)]
    step_seconds: Annotated[float, Field(gt=0, le=86400, allow_inf_nan=False)]
    target_steps: Annotated[int, Field(gt=0, le=10**12)]
    failures: Failures
    checkpoint: Checkpoint
    validation: Validation = Validation()
    restart_seconds: NonNegative

    @model_validator(mode="after")
    def _probabilities(self) -> Scenario:
        for rate in ("hard_per_gpu_hour", "sdc_per_gpu_hour"):
            value = getattr(self.failures, rate)
            if value * self.step_seconds / 3600.0 > 1.0:
                raise ValueError(
                    f"failures.{rate} * step_seconds / 3600 is a probability per GPU-step and must be <= 1, "
                    f"got {value} * {self.step_seconds} / 3600")
        return self

    def job_spec(self, seed: int | None = None) -> JobSpec:
        return JobSpec(
            n_gpus=self.n_gpus,
            step_seconds=self.step_seconds,
            target_steps=self.target_steps,
            hard_per_gpu_hour=self.failures.hard_per_gpu_hour,
            sdc_per_gpu_hour=self.failures.sdc_per_gpu_hour,
            ckpt_interval_steps=self.checkpoint.interval_steps,
            ckpt_seconds=self.checkpoint.seconds,
            validation_interval_steps=self.validation.interval_steps,
            validation_seconds=self.validation.seconds,
            restart_seconds=self.restart_seconds,
            seed=self.seed if seed is None else seed,
        )

    def warnings(self) -> list[str]:
        v, c = self.validation.interval_steps, self.checkpoint.interval_steps
        if self.failures.sdc_per_gpu_hour > 0 and (v == 0 or c % v != 0):
            why = "no validation" if v == 0 else f"validation every {v} steps does not divide checkpoint every {c}"
            return [f"scenario {self.name}: {why}: SDCs can be baked into checkpoints "
                    "(seed 000 erratum: only checkpoint_interval % validation_interval == 0 prevents it)"]
        return []


class Config(_Strict):
    speedup: Annotated[float, Field(gt=0, le=1e9, allow_inf_nan=False)] = 600.0
    tick_seconds: Annotated[float, Field(ge=0.01, le=3600, allow_inf_nan=False)] = 1.0
    scenarios: Annotated[list[Scenario], Field(min_length=1)]

    @model_validator(mode="after")
    def _unique_names(self) -> Config:
        seen: dict[str, int] = {}
        for i, s in enumerate(self.scenarios):
            if s.name in seen:
                raise ValueError(f"scenarios[{i}].name: duplicate of scenarios[{seen[s.name]}].name, got {s.name!r}")
            seen[s.name] = i
        return self

    def scenario(self, name: str) -> Scenario:
        for s in self.scenarios:
            if s.name == name:
                return s
        raise KeyError(name)

    def warnings(self) -> list[str]:
        return [w for s in self.scenarios for w in s.warnings()]


_PHRASES = {
    "greater_than": "must be > {gt}",
    "greater_than_equal": "must be >= {ge}",
    "less_than": "must be < {lt}",
    "less_than_equal": "must be <= {le}",
    "extra_forbidden": "unknown key",
    "missing": "required key is missing",
    "int_type": "must be an integer",
    "float_type": "must be a number",
    "string_type": "must be a string",
    "list_type": "must be a list",
    "model_type": "must be a mapping",
    "dict_type": "must be a mapping",
    "string_pattern_mismatch": "must match {pattern}",
    "too_short": "must have at least {min_length} item(s)",
    "string_too_long": "must be at most {max_length} characters",
    "finite_number": "must be a finite number",
}


def _path(loc: tuple) -> str:
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += ("." if out else "") + str(part)
    return out


def _format(err: dict) -> str:
    path = _path(err["loc"])
    kind = err["type"]
    if kind == "value_error":  # our own validators: the message already names its field
        msg = str(err["ctx"]["error"]) if "ctx" in err else err["msg"]
        return msg if msg.startswith("scenarios[") or not path else f"{path}: {msg}"
    phrase = _PHRASES.get(kind)
    text = phrase.format(**err.get("ctx", {})) if phrase else err["msg"][0].lower() + err["msg"][1:]
    if kind in ("missing",):
        return f"{path}: {text}"
    return f"{path}: {text}, got {err['input']!r}"


def parse_config(text: str, source: str = "<config>") -> Config:
    """Parse and validate a scenario file's text; raise ConfigError with every problem."""
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = getattr(exc, "problem", None) or str(exc)
        raise ConfigError([f"{source}: not valid YAML{where}: {problem}"]) from None
    if not isinstance(data, dict):
        raise ConfigError([f"{source}: the top level must be a mapping with a 'scenarios' list, "
                           f"got {type(data).__name__}"])
    try:
        return Config.model_validate(data)
    except ValidationError as exc:
        raise ConfigError([_format(e) for e in exc.errors(include_url=False)]) from None


def load_config(path: str | Path) -> Config:
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError([f"{path}: cannot read: {exc.strerror or exc}"]) from None
    except UnicodeDecodeError:
        raise ConfigError([f"{path}: not UTF-8 text"]) from None
    return parse_config(text, str(path))


def default_config_text() -> str:
    return resources.files("simd").joinpath(DEFAULT_RESOURCE).read_text(encoding="utf-8")


def default_config() -> Config:
    return parse_config(default_config_text(), f"<embedded {DEFAULT_RESOURCE}>")


def summary(s: Scenario) -> str:
    """One line per scenario for ``simd check-config``."""
    v = s.validation.interval_steps
    spec = s.job_spec()
    h = per_step_cluster_hazard(spec.hard_per_gpu_hour, spec.n_gpus, spec.step_seconds)
    mtbf = spec.step_seconds / h / 3600 if h > 0 else math.inf
    return (f"{s.name}: {s.n_gpus} GPUs, {s.target_steps} steps of {s.step_seconds:g} s, "
            f"checkpoint every {s.checkpoint.interval_steps} steps ({s.checkpoint.seconds:g} s), "
            + (f"validation every {v} steps ({s.validation.seconds:g} s)" if v else "no validation")
            + f", job MTBF {mtbf:.3g} h")
