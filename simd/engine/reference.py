"""Seed 000's per-step loop, kept as the oracle the event-driven engine is tested and benchmarked against.

This is the seed's ``TrainingSimulator.run`` (quoted in full in the seed), with ``random.Random(seed)`` and
one or two Bernoulli draws per step. Extended only where the engine is: each hard failure draws a cause
(one more uniform, only when there are several causes) that sets its detection and restart time.
It is O(steps): use it for tests and benchmarks only.
"""

from __future__ import annotations

import random
from bisect import bisect_left

from simd.engine.hazard import per_step_cluster_hazard
from simd.engine.spec import US_PER_SECOND, JobSpec, Plan, compile_spec


def reference_run(spec: JobSpec, *, seed: int | None = None) -> dict:
    """Run one job step by step. Under stragglers, the g-th executed step lasts the engine's duration of
    executed step g (a pure function of g and the spec's seed, see stragglers.py) instead of step_seconds."""
    rng = random.Random(spec.seed if seed is None else seed)
    plan = compile_spec(spec)  # only its cumulative cause shares and step durations are used here
    durations = _StepDurations(spec, plan)
    hard_hazard = per_step_cluster_hazard(spec.hard_per_gpu_hour, spec.n_gpus, spec.step_seconds)
    sdc_hazard = per_step_cluster_hazard(spec.sdc_per_gpu_hour, spec.n_gpus, spec.step_seconds)
    causes = spec.cause_list
    cumulative = plan.cause_cumulative
    by_cause = dict.fromkeys((c.name for c in causes), 0)

    step_s, target = spec.step_seconds, spec.target_steps
    vi, ci = spec.validation_interval_steps, spec.ckpt_interval_steps
    wall = 0.0
    last_ckpt = cur = 0
    corrupted = False
    interruptions = sdc_detected = sdc_baked = recompute = final_void = 0
    ckpt_t = restart_t = valid_t = detect_t = 0.0

    executed = 0
    while cur < target:
        cur += 1
        executed += 1
        wall += durations(executed)
        # (a) hard failure: stop, roll back to last_ckpt
        if rng.random() < hard_hazard:
            cause = causes[0]
            if len(causes) > 1:
                cause = causes[min(bisect_left(cumulative, rng.random()), len(causes) - 1)]
            by_cause[cause.name] += 1
            interruptions += 1
            recompute += cur - last_ckpt
            cur = last_ckpt
            corrupted = False
            detect_t += cause.detection_seconds
            restart_t += cause.restart_seconds
            wall += cause.detection_seconds + cause.restart_seconds
            continue
        # (b) SDC onset (silent)
        if not corrupted and rng.random() < sdc_hazard:
            corrupted = True
        # (c) validation point, before the checkpoint
        if vi and cur % vi == 0:
            valid_t += spec.validation_seconds
            wall += spec.validation_seconds
            if corrupted:
                sdc_detected += 1
                recompute += cur - last_ckpt
                cur = last_ckpt
                corrupted = False
                restart_t += spec.restart_seconds
                wall += spec.restart_seconds
                continue
        # (d) checkpoint point: commit or bake in
        if cur % ci == 0:
            ckpt_t += spec.ckpt_seconds
            wall += spec.ckpt_seconds
            if corrupted:
                sdc_baked += 1
                recompute += cur - last_ckpt
                cur = last_ckpt
                corrupted = False
                restart_t += spec.restart_seconds
                wall += spec.restart_seconds
            else:
                last_ckpt = cur
    # end of job: an SDC still present is baked in and its steps are void
    if corrupted:
        sdc_baked += 1
        recompute += cur - last_ckpt
        final_void = cur - last_ckpt

    productive = (target - final_void) * step_s
    return {
        "steps_executed": executed,
        "mean_step_seconds": durations.total(executed) / executed,
        "target_steps": target,
        "recompute_steps": recompute,
        "interruptions": interruptions,
        "interruptions_by_cause": by_cause,
        "sdc_detected": sdc_detected,
        "sdc_baked": sdc_baked,
        "wall_seconds": wall,
        "checkpoint_seconds": ckpt_t,
        "validation_seconds": valid_t,
        "restart_seconds": restart_t,
        "detection_seconds": detect_t,
        # simd's definition (productive / wall: void work is not productive) and the seed's
        "effective_utilization": productive / wall,
        "seed_effective_utilization": target * step_s / wall,
    }


class _StepDurations:
    """Seconds of the g-th executed step: step_seconds, or the engine's straggler durations (in blocks)."""

    def __init__(self, spec: JobSpec, plan: Plan):
        self.step_s, self.times, self.slow = spec.step_seconds, plan.step_times, plan.slow_steps
        self.block: list[float] = []

    def __call__(self, g: int) -> float:
        if self.times is None:
            return self.step_s
        while g > len(self.block):
            g0, n = len(self.block), max(4096, len(self.block))
            us = self.times.durations(g0, n, max(0, min(n, self.slow - g0)))[0]
            self.block.extend((us / US_PER_SECOND).tolist())
        return self.block[g - 1]

    def total(self, executed: int) -> float:
        return self.step_s * executed if self.times is None else sum(self.block[:executed])
