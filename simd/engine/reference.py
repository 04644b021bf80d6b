"""Seed 000's per-step loop, kept as the oracle the event-driven engine is tested and benchmarked against.

This is the seed's ``TrainingSimulator.run`` (quoted in full in the seed), with ``random.Random(seed)`` and
one or two Bernoulli draws per step. Extended only where the engine is: each hard failure draws a cause
(one more uniform, only when there are several causes) that sets its detection and restart time. With shadow
ranks (shadow.py) hard failures strike n + k GPUs and one more Bernoulli per step (after the hard failure's)
is a disagreement over the 2k GPUs of shadowed ranks, rolled back at the end of its step; silent SDCs strike
the n - k others; every step lasts step_seconds * (1 + overhead). With a fleet (fleet.py) each accelerator
type draws its own Bernoulli per step, for hard failures and for SDC onsets; when several types fail in one
step, each one's first failure time within the step is drawn and the earliest is charged (``_FirstFailure``).
Both run in ``reference_run_shadow_fleet``, a copy of the loop with their draws.
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
    if spec.hyper is not None or spec.committed_sdc is not None:
        return reference_run_extended(spec, seed=seed)
    if spec.shadow is not None or spec.fleet:
        return reference_run_shadow_fleet(spec, seed=seed)
    rng = random.Random(spec.seed if seed is None else seed)
    plan = compile_spec(spec)  # only its cumulative cause shares and step durations are used here
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

    while cur < target:
        cur += 1
        wall += step_s
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

    executed = target + recompute - final_void  # every iteration moved cur up by one; rollbacks are recomputed
    excess = _straggler_seconds(plan, executed)
    wall += excess
    productive = (target - final_void) * step_s
    return {
        "steps_executed": executed,
        "mean_step_seconds": step_s + excess / executed,
        "target_steps": target,
        "recompute_steps": recompute,
        "interruptions": interruptions,
        "interruptions_by_cause": by_cause,
        "sdc_detected": sdc_detected,
        "sdc_baked": sdc_baked,
        "shadow_detected": 0,
        "shadow_seconds": 0.0,
        "interruptions_by_type": {"gpu": interruptions},
        "wall_seconds": wall,
        "checkpoint_seconds": ckpt_t,
        "validation_seconds": valid_t,
        "restart_seconds": restart_t,
        "detection_seconds": detect_t,
        # simd's definition (productive / wall: void work is not productive) and the seed's
        "effective_utilization": productive / wall,
        "seed_effective_utilization": target * step_s / wall,
    }



def reference_run_shadow_fleet(spec: JobSpec, *, seed: int | None = None) -> dict:
    """``reference_run`` with shadow ranks or a fleet (module docstring): the seed's loop with their draws. A
    loop of its own, so that the seed's loop stays as fast as the seed's (what bench/engine.py measures)."""
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
    one = len(accelerators) == 1  # one type: the draws inline, as the seed's (a call per draw costs as much)
    hard_q, sdc_q = hard_draw.q[0], sdc_draw.q[0]
    hard_types, sdc_types = tuple(enumerate(hard_draw.q)), tuple(enumerate(sdc_draw.q))
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
        if one:
            failed = 0 if rng.random() < hard_q else -1
        else:  # one Bernoulli per type (inline: a call per step would cost as much as the rest of the loop)
            failed = -1
            for i, qi in hard_types:
                if rng.random() < qi:
                    if failed >= 0:
                        failed = hard_draw.several(failed, i)
                        break
                    failed = i
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
            if one:
                onset = 0 if rng.random() < sdc_q else -1
            else:
                onset = -1
                for i, qi in sdc_types:
                    if rng.random() < qi:
                        if onset >= 0:
                            onset = sdc_draw.several(onset, i)
                            break
                        onset = i
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
    """Groups of GPUs (count, rate per GPU-hour) and their step hazards ``q``. The loop draws one Bernoulli per
    group and step (inline: a call per step would cost as much as the rest of the loop); when several groups
    fail in the step, ``several`` draws the remaining groups' Bernoullis and each failing group's first failure
    time within the step (the
    first of ``n`` exponential clocks of rate ``-log(1 - p)`` per step, given that it rings within the step:
    ``t = -log(1 - u q) / L`` with ``q`` the group's step hazard and ``L = -log(1 - q)``) and the earliest is
    charged (fleet.py). A group whose GPUs fail surely (q = 1) fails at time 0; ties go to the first such."""

    def __init__(self, rng: random.Random, groups: list[tuple[int, float]], step_seconds: float):
        self.rng = rng
        self.q = [per_step_cluster_hazard(rate, n, step_seconds) for n, rate in groups]
        self.rate = [math.inf if q >= 1.0 else -math.log1p(-q) for q in self.q]
        self._indexed = tuple(enumerate(self.q))

    def several(self, first: int, second: int) -> int:
        """Groups ``first`` and ``second`` failed: draw the remaining groups' Bernoullis, then the times."""
        uniform = self.rng.random
        failed = [first, second] + [i for i, qi in self._indexed[second + 1:] if uniform() < qi]
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


def reference_run_extended(spec: JobSpec, *, seed: int | None = None) -> dict:
    """The seed's loop with hyper-checkpointing (hyper.py) and committed SDCs with late detectors (late.py): the
    oracle of the extended walk (xwalk.py). Per step, in this order: (a) hard failure -> roll back to the newest
    checkpoint (an SDC survives it if a checkpoint holds it); (b) SDC onset, each detector's coverage and latency
    drawn (``random.Random``'s own expovariate / lognormvariate / uniform, not the engine's inverse transforms);
    (b') the first detector's finding due by the end of the step -> roll back (to the newest retained checkpoint
    older than the onset once a checkpoint holds the SDC; to the oldest retained one, the SDC accepted, if that
    one is gone), restart; (c) validation: an SDC in no checkpoint is detected; (d) checkpoint point, on the hyper
    lattice while a window is open: an SDC present is baked in and rolled back (reference semantics) or committed
    with it. Detections (b'), (c), (d)-baked open a hyper window of window_steps executed steps, anchored at the
    rollback point. Time is counted in integer microseconds, as the engine does, so that a latency and the end
    of a step compare alike. Stragglers add their excess after the loop, as in ``reference_run``."""
    if getattr(spec, "shadow", None) is not None or getattr(spec, "fleet", ()):
        raise ValueError("reference_run_extended models neither shadow ranks nor fleets")
    rng = random.Random(spec.seed if seed is None else seed)
    plan = compile_spec(spec)
    hard_hazard = per_step_cluster_hazard(spec.hard_per_gpu_hour, spec.n_gpus, spec.step_seconds)
    sdc_hazard = per_step_cluster_hazard(spec.sdc_per_gpu_hour, spec.n_gpus, spec.step_seconds)
    causes, cumulative = spec.cause_list, plan.cause_cumulative
    by_cause = dict.fromkeys((c.name for c in causes), 0)
    us = US_PER_SECOND
    step_us, val_us, ckpt_us = round(spec.step_seconds * us), round(spec.validation_seconds * us), \
        round(spec.ckpt_seconds * us)
    restart_us = round(spec.restart_seconds * us)
    target, vi, ci = spec.target_steps, spec.validation_interval_steps, spec.ckpt_interval_steps
    hi = spec.hyper.interval_steps if spec.hyper else 0
    window = spec.hyper.window_steps if spec.hyper else 0
    committed = spec.committed_sdc is not None
    detectors = spec.committed_sdc.detectors if committed else ()
    retention = spec.committed_sdc.retention_checkpoints if committed else 0
    found_by = dict.fromkeys((d.name for d in detectors), 0)

    t = g = 0
    last = clean = cur = 0
    corrupted = False
    deadline, det = math.inf, 0
    n_corrupt, corrupt = 0, []  # checkpoints holding the present SDC, the newest `retention` of them
    hyper_end = anchor = 0
    c = dict.fromkeys(("interruptions", "sdc_detected", "sdc_baked", "recompute", "final_void", "late", "lost",
                       "unrecoverable", "activations", "hyper_steps", "committed_steps"), 0)
    times = dict.fromkeys(("ckpt", "val", "restart", "detect"), 0)

    def detection(target_step: int) -> None:
        nonlocal cur, last, clean, corrupted, deadline, n_corrupt, hyper_end, anchor, t
        c["recompute"] += cur - target_step
        cur = last = clean = target_step
        corrupted, deadline, n_corrupt = False, math.inf, 0
        corrupt.clear()
        times["restart"] += restart_us
        t += restart_us
        if hi:
            if g >= hyper_end:
                c["activations"] += 1
            hyper_end, anchor = g + window, target_step

    while cur < target:
        cur += 1
        g += 1
        t += step_us
        in_hyper = bool(hi) and g <= hyper_end
        c["hyper_steps"] += in_hyper
        # (a) hard failure
        if rng.random() < hard_hazard:
            cause = causes[0]
            if len(causes) > 1:
                cause = causes[min(bisect_left(cumulative, rng.random()), len(causes) - 1)]
            by_cause[cause.name] += 1
            c["interruptions"] += 1
            c["recompute"] += cur - last
            cur = last
            if corrupted and n_corrupt == 0:
                corrupted, deadline = False, math.inf
            d_us, r_us = round(cause.detection_seconds * us), round(cause.restart_seconds * us)
            times["detect"] += d_us
            times["restart"] += r_us
            t += d_us + r_us
            continue
        # (b) SDC onset, its detectors drawn
        if not corrupted and rng.random() < sdc_hazard:
            corrupted = True
            deadline, det = math.inf, 0
            for j, dt in enumerate(detectors):
                covered = rng.random() < dt.coverage
                if dt.distribution == "exponential":
                    lat = rng.expovariate(1.0 / dt.scale_seconds) if dt.scale_seconds else 0.0
                elif dt.distribution == "lognormal":
                    lat = rng.lognormvariate(math.log(dt.scale_seconds), dt.sigma) if dt.scale_seconds else 0.0
                else:
                    lat = rng.uniform(0.0, dt.scale_seconds)
                if covered and t + round(lat * us) < deadline:
                    deadline, det = t + round(lat * us), j
        # (b') a detector's finding due by the end of this step
        if corrupted and deadline <= t:
            found_by[detectors[det].name] += 1
            if n_corrupt == 0:
                c["sdc_detected"] += 1
                detection(last)
            else:
                c["late"] += 1
                if n_corrupt < retention:
                    c["lost"] += n_corrupt
                    detection(clean)
                else:  # unrecoverable: the oldest retained checkpoint, its steps since the clean one kept
                    c["unrecoverable"] += 1
                    c["lost"] += retention - 1
                    oldest = corrupt[-retention]
                    c["committed_steps"] += oldest - clean
                    detection(oldest)
            continue
        # (c) validation point, before the checkpoint
        if vi and cur % vi == 0:
            times["val"] += val_us
            t += val_us
            if corrupted and n_corrupt == 0:
                c["sdc_detected"] += 1
                detection(last)
                continue
        # (d) checkpoint point: on the hyper lattice while a window is open
        if (cur - anchor) % hi == 0 if in_hyper else cur % ci == 0:
            times["ckpt"] += ckpt_us
            t += ckpt_us
            if corrupted and not committed:
                c["sdc_baked"] += 1
                detection(last)
                continue
            if corrupted:  # committed with the checkpoint
                c["sdc_baked"] += n_corrupt == 0
                n_corrupt += 1
                corrupt.append(cur)
                del corrupt[:-retention]
                last = cur
            else:
                last = clean = cur
    # end of job: an SDC still present is baked in (if no checkpoint took it yet), void since the clean checkpoint
    if corrupted:
        c["sdc_baked"] += n_corrupt == 0
        c["recompute"] += cur - clean
        c["final_void"] = cur - clean

    executed = g
    excess = _straggler_seconds(plan, executed)
    wall = t / us + excess
    step_s = spec.step_seconds
    return {
        "steps_executed": executed,
        "mean_step_seconds": step_s + excess / executed,
        "target_steps": target,
        "recompute_steps": c["recompute"],
        "interruptions": c["interruptions"],
        "interruptions_by_cause": by_cause,
        "sdc_detected": c["sdc_detected"],
        "sdc_baked": c["sdc_baked"],
        "wall_seconds": wall,
        "checkpoint_seconds": times["ckpt"] / us,
        "validation_seconds": times["val"] / us,
        "restart_seconds": times["restart"] / us,
        "detection_seconds": times["detect"] / us,
        "effective_utilization": (target - c["final_void"]) * step_s / wall,
        "seed_effective_utilization": target * step_s / wall,
        "hyper_activations": c["activations"],
        "hyper_steps": c["hyper_steps"],
        "sdc_late_found": c["late"],
        "sdc_unrecoverable": c["unrecoverable"],
        "checkpoints_lost": c["lost"],
        "sdc_found_by_detector": found_by,
    }
