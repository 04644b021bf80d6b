"""A validated scenario -> the engine's JobSpec: causes with their detection and restart, the fleet's types,
stragglers, shadow ranks, hyper-checkpointing and committed SDCs with their detectors."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from simd.engine import Accelerator, Cause, CommittedSdc, Detector, Hyper, JobSpec, Shadow, Stragglers
from simd.models import recovery

if TYPE_CHECKING:
    from simd.scenario.schema import ScenarioBody, SdcDetector, SdcModel


def causes(body: ScenarioBody) -> tuple[Cause, ...]:
    """Each cause with its detection latency and its restart under the recovery strategy."""
    shares = body.failures.cause_shares() if body.failures is not None else None
    warm = body.recovery.strategy == "warm"
    if shares is None:  # seed 000: one kind of failure, detected at once
        restart = recovery.WARM_SWAP_SECONDS if warm else body.restart_seconds
        return (Cause("hardware", 1.0, 0.0, restart),)
    return tuple(
        Cause(name, share, recovery.DETECTION_SECONDS.get(name, 0.0),
              recovery.WARM_SWAP_SECONDS if warm and name in recovery.WARM_CAPABLE_CAUSES
              else body.restart_seconds)
        for name, share in shares.items())

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
        validation_interval_steps=body.validation.interval_steps,
        validation_seconds=body.validation.seconds,
        restart_seconds=body.restart_seconds,
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
        committed_sdc=None if body.sdc is None else committed_sdc(body.sdc),
        servers=None if body.servers is None else body.servers.engine(),
    )


def detector(d: SdcDetector) -> Detector:
    """One detection layer as the engine takes it."""
    lat = d.latency
    if lat.distribution == "exponential":
        return Detector(d.name, "exponential", lat.mean_seconds, 0.0, d.coverage)
    if lat.distribution == "lognormal":
        return Detector(d.name, "lognormal", lat.median_seconds, lat.sigma, d.coverage)
    return Detector(d.name, "uniform", lat.max_seconds, 0.0, d.coverage)


def committed_sdc(model: SdcModel) -> CommittedSdc | None:
    """The committed-SDC mechanism, or None under the reference semantics."""
    if model.semantics == "reference":
        return None
    return CommittedSdc(tuple(detector(d) for d in model.detectors), model.retention_checkpoints)
