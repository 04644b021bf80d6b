"""What a configuration key hashes: a scenario's (simd.live.lane.scenario_key) and a drill's
(simd.live.persist), so that a saved state continues only under the configuration it ran under.

A key covers the model's JSON dump (``model_dump(mode="json")``), in which a field at its default is left out
(pydantic's ``exclude_defaults``) unless :data:`FIRST_KEYED` lists it. FIRST_KEYED records, per model class,
the fields every key of the first saved states included whatever their value; it is a fixed record of those
keys' form and never grows: a field added to the schema is in no key while it is at its default, so a
configuration that does not use it keeps the key a state was saved under, and one that sets it gets another key.
"""

from __future__ import annotations

import hashlib
import json

from pydantic import BaseModel

# model class -> the fields keyed at any value (the rest: only away from their default)
FIRST_KEYED = {name: frozenset(fields.split()) for name, fields in {
    "Scenario": "seed n_gpus step_seconds target_steps failures checkpoint validation restart_seconds recovery "
                "stragglers replicas slo shadow fleet sdc name",
    "Failures": "hard_per_gpu_hour sdc_per_gpu_hour causes",
    "Checkpoint": "interval_steps seconds hyper",
    "HyperCheckpoint": "interval_steps window_steps",
    "Validation": "interval_steps seconds",
    "Recovery": "strategy",
    "StragglerConfig": "jitter_seconds slow_ranks slowdown mitigation",
    "Mitigation": "detect_after_steps",
    "Slo": "goodput_target",
    "ShadowRanks": "fraction overhead",
    "AcceleratorType": "type count hard_per_gpu_hour sdc_per_gpu_hour",
    "SdcModel": "semantics detectors retention_checkpoints",
    "SdcDetector": "name coverage latency",
    "ExponentialLatency": "distribution mean_seconds",
    "LognormalLatency": "distribution median_seconds sigma",
    "UniformLatency": "distribution max_seconds",
    "ServersConfig": "gpus_per_server lemons rates lifetime warm_standbys spares repair",
    "Lemons": "fraction multiplier",
    "ServerRates": "gamma_shape",
    "ExponentialLifetime": "distribution",
    "WeibullLifetime": "distribution shape",
    "LognormalLifetime": "distribution sigma",
    "Spares": "count preemption_seconds",
    "Repair": "automatic manual false_success",
    "ExponentialRepair": "distribution mean_seconds",
    "LognormalRepair": "distribution median_seconds sigma",
    "UniformRepair": "distribution max_seconds",
    "ManualRepair": "probability time",
    "FalseSuccess": "automatic manual",
    "Diagnosis": "probability misattribution",
    "Retirement": "failures window_seconds",
    "Bursts": "per_day mean_size domain_servers",
    "Replay": "log servers",
    "Drill": "name description duration_seconds start_at_seconds scenarios effects",
    "DrillEffects": "hard_rate_factor sdc_rate_factor checkpoint_seconds_factor stragglers stall_seconds",
}.items()}


def keyed(model: BaseModel, exclude: frozenset[str] = frozenset()) -> dict:
    """``model``'s JSON dump (top-level fields ``exclude`` apart) as keys cover it: see the module docstring."""
    return _pruned(model, model.model_dump(mode="json", exclude=set(exclude)))


def _pruned(value, dumped):
    if isinstance(value, BaseModel) and isinstance(dumped, dict):
        declared, always = type(value).model_fields, FIRST_KEYED.get(type(value).__name__, frozenset())
        out = {}
        for name, v in dumped.items():
            info, current = declared[name], getattr(value, name)
            if name not in always and not info.is_required() and current == info.get_default(
                    call_default_factory=True):
                continue
            out[name] = _pruned(current, v)
        return out
    if isinstance(value, list | tuple) and isinstance(dumped, list) and len(value) == len(dumped):
        return [_pruned(x, d) for x, d in zip(value, dumped, strict=True)]
    return dumped


def digest(document: dict, length: int = 32) -> str:
    """The key of a JSON document: the SHA-256 of its canonical form, hex, ``length`` digits."""
    canonical = json.dumps(document, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()[:length]
