"""Seed 000's per-step loop, kept as the oracle the event-driven engine is tested and benchmarked against.

This is the seed's ``TrainingSimulator.run`` (quoted in full in the seed), with ``random.Random(seed)`` and
one or two Bernoulli draws per step. Extended only where the engine is: each hard failure draws a cause
(one more uniform, only when there are several causes) that sets its detection and restart time. With shadow
ranks (shadow.py) hard failures strike n + k GPUs and one more Bernoulli per step (after the hard failure's)
is a disagreement over the 2k GPUs of shadowed ranks, rolled back at the end of its step; silent SDCs strike
the n - k others; every step lasts step_seconds * (1 + overhead). With a fleet (fleet.py) each accelerator
type draws its own Bernoulli per step, for hard failures and for SDC onsets; when several types fail in one
step, each one's first failure time within the step is drawn and the earliest is charged (``_FirstFailure``).
It is O(steps): use it for tests and benchmarks only.
"""

from __future__ import annotations

import math
import random
from bisect import bisect_left

from simd.engine.fleet import Accelerator
from simd.engine.hazard import per_step_cluster_hazard
from simd.engine.shadow import shadow_ranks
from simd.engine.spec import US_PER_SECOND, JobSpec, Plan, compile_spec


def reference_run(spec: JobSpec, *, seed: int | None = None) -> dict:
    """Run one job step by step: the seed's loop. Under stragglers, the g-th executed step lasts the engine's
    duration of executed step g (a pure function of g and the spec's seed, see stragglers.py) instead of
    step_seconds. Step durations never change what happens in the loop, so their excess over step_seconds is
    added after it, for executed steps 1..N: the loop itself stays the seed's, as fast as the seed's."""
    rng = random.Random(spec.seed if seed is None else seed)
    plan = compile_spec(spec)  # only its cumulative cause shares and step durations are used here
    k = shadow_ranks(spec.n_gpus, spec.shadow)  # 0 without shadow ranks: the seed's draws exactly
    n_gpus, step_seconds = spec.n_gpus, spec.step_seconds
    accelerators = spec.fleet or (Accelerator("gpu", n_gpus, spec.hard_per_gpu_hour, spec.sdc_per_gpu_hour),)
    hard_draw = _FirstFailure(rng, [(a.count + k, a.hard_per_gpu_hour) for a in accelerators], step_seconds)
    sdc_draw = _FirstFailure(rng, [(a.count - k, a.sdc_per_gpu_hour) for a in accelerators], step_seconds)
    disagree = per_step_cluster_hazard(spec.sdc_per_gpu_hour, 2 * k, step_seconds) if k else 0.0
    shadow_s = step_seconds * spec.shadow.overhead if k else 0.0
    hard_by_type, sdc_by_type = [0] * len(accelerators), [0] * len(accelerators)
    shadow_detected = onsets = 0
    shadow_t = 0.0
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

    while cur < target:
        cur += 1
        wall += step_s + shadow_s
        shadow_t += shadow_s
        # (a) hard failure: stop, roll back to last_ckpt
        failed = hard_draw()
        if failed >= 0:
            hard_by_type[failed] += 1
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
        # (a') shadow disagreement at the end of the step: found, roll back to last_ckpt, restart
        if k and rng.random() < disagree:
            sdc_detected += 1
            shadow_detected += 1
            onsets += 1
            sdc_by_type[0] += 1
            recompute += cur - last_ckpt
            cur = last_ckpt
            corrupted = False
            restart_t += spec.restart_seconds
            wall += spec.restart_seconds
            continue
        # (b) SDC onset (silent)
        if not corrupted:
            onset = sdc_draw()
            if onset >= 0:
                corrupted = True
                onsets += 1
                sdc_by_type[onset] += 1
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

    executed = target + recompute - final_void  # every iteration moved cur up by one; rollbacks are recomputed
    excess = _straggler_seconds(plan, executed)
    wall += excess
    productive = (target - final_void) * step_s
    return {
        "steps_executed": executed,
        "mean_step_seconds": step_s + shadow_s + excess / executed,
        "target_steps": target,
        "recompute_steps": recompute,
        "interruptions": interruptions,
        "interruptions_by_cause": by_cause,
        "sdc_detected": sdc_detected,
        "sdc_baked": sdc_baked,
        "sdc_onsets": onsets,
        "shadow_detected": shadow_detected,
        "shadow_seconds": shadow_t,
        "interruptions_by_type": dict(zip((a.name for a in accelerators), hard_by_type, strict=True)),
        "sdc_onsets_by_type": dict(zip((a.name for a in accelerators), sdc_by_type, strict=True)),
        "wall_seconds": wall,
        "checkpoint_seconds": ckpt_t,
        "validation_seconds": valid_t,
        "restart_seconds": restart_t,
        "detection_seconds": detect_t,
        # simd's definition (productive / wall: void work is not productive) and the seed's
        "effective_utilization": productive / wall,
        "seed_effective_utilization": target * step_s / wall,
    }


class _FirstFailure:
    """One step's draws for groups of GPUs (count, rate per GPU-hour): the index of the group charged with the
    step's failure, or -1. One group: the seed's single Bernoulli. Several (a fleet): one Bernoulli per group;
    when several groups fail in the step, the time of each one's first failure within the step is drawn (the
    first of ``n`` exponential clocks of rate ``-log(1 - p)`` per step, given that it rings within the step:
    ``t = -log(1 - u q) / L`` with ``q`` the group's step hazard and ``L = -log(1 - q)``) and the earliest is
    charged (fleet.py). A group whose GPUs fail surely (q = 1) fails at time 0; ties go to the first such."""

    def __init__(self, rng: random.Random, groups: list[tuple[int, float]], step_seconds: float):
        self.rng = rng
        self.q = [per_step_cluster_hazard(rate, n, step_seconds) for n, rate in groups]
        self.rate = [math.inf if q >= 1.0 else -math.log1p(-q) for q in self.q]

    def __call__(self) -> int:
        rng, q = self.rng, self.q
        if len(q) == 1:
            return 0 if rng.random() < q[0] else -1
        failed = [i for i, qi in enumerate(q) if rng.random() < qi]
        if len(failed) <= 1:
            return failed[0] if failed else -1
        return min(failed, key=self._first_time)

    def _first_time(self, i: int) -> float:
        u = self.rng.random()
        return 0.0 if math.isinf(self.rate[i]) else -math.log1p(-u * self.q[i]) / self.rate[i]


def _straggler_seconds(plan: Plan, executed: int) -> float:
    """Time of executed steps 1..executed above step_seconds under the plan's stragglers (0 without)."""
    if plan.step_times is None:
        return 0.0
    total_us = 0
    for g0 in range(0, executed, 1 << 16):
        n = min(1 << 16, executed - g0)
        total_us += int(plan.step_times.durations(g0, n, max(0, min(n, plan.slow_steps - g0)))[0].sum())
    return (total_us - executed * plan.step_us) / US_PER_SECOND
