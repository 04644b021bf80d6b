"""The event-driven engine: ``advance(state, until) -> (state, events)``, seed 000's loop without the loop.

Seed 000 walks every step and draws two Bernoulli variables per step. Here the step of the next hard failure
and the number of clean steps before the next SDC onset are drawn geometrically (memoryless, so the process
is the same in distribution) and kept in the state; everything between two such events is clean and is
crossed in closed form, whole checkpoint intervals included. The cost of a call grows with the number of
failures and SDCs, not with the number of steps.

Order within a step, as the seed's loop: (a) hard failure -> roll back to the last clean checkpoint, detect,
restart; (b) SDC onset (silent; not on a step that failed); (c) validation point: pay validation, a present
SDC is *detected* -> roll back, restart; (d) checkpoint point (unless (c) rolled back): pay the checkpoint, a
present SDC is *baked in* -> roll back, restart, else commit. At the target step the job ends; an SDC still
present then is counted baked in and its steps recomputed (the seed's end-of-job rule), and the next job
starts (continuous mode).

Tick-size invariance: a call processes exactly the units (a step with its validation, checkpoint and
recovery) that end at or before ``until``; every random draw is made when the event that needs it happens,
and all time is integer microseconds. So any partition of [0, T] into calls gives the identical state.
"""

from __future__ import annotations

from bisect import bisect_left
from dataclasses import dataclass, replace

from simd.engine.hazard import NEVER, geometric_from_exponential
from simd.engine.rng import Streams, initial_states
from simd.engine.spec import US_PER_SECOND, JobSpec, Plan, compile_spec
from simd.engine.state import BUCKETS, State, Totals

_HARD, _SDC, _CAUSE = 0, 1, 2  # indices into rng.STREAMS


@dataclass(frozen=True)
class JobResult:
    """One completed job, in seed 000's SimResult vocabulary (seconds)."""

    job: int  # 0-based index of the job in this simulation
    target_steps: int
    step_seconds: float
    recompute_steps: int
    interruptions: int
    interruptions_by_cause: dict[str, int]
    sdc_detected: int
    sdc_baked: int
    checkpoints: int
    wall_seconds: float
    bucket_seconds: dict[str, float]

    @property
    def checkpoint_seconds(self) -> float:
        return self.bucket_seconds["checkpoint"]

    @property
    def validation_seconds(self) -> float:
        return self.bucket_seconds["validation"]

    @property
    def restart_seconds(self) -> float:
        return self.bucket_seconds["restart"]

    @property
    def effective_utilization(self) -> float:
        """Productive (committed, kept) compute over wall time.

        Seed 000 divides ``target * step_seconds`` by wall time. The two agree except when a job ends with
        an SDC present: the seed voids those steps (counts them recomputed) yet still counts them useful in
        the numerator; here void work is never productive, so every second is in exactly one bucket.
        """
        return self.bucket_seconds["productive"] / self.wall_seconds if self.wall_seconds > 0 else 0.0

    @property
    def mean_step_seconds(self) -> float:
        executed = self.target_steps + self.recompute_steps
        compute = self.bucket_seconds["productive"] + self.bucket_seconds["rollback"]
        return (compute + self.bucket_seconds["straggler"]) / executed if executed else 0.0


@dataclass(frozen=True)
class Event:
    """Something that happened at simulated time ``t_us``: an interruption, an SDC verdict, a job end."""

    t_us: int
    kind: str  # "interruption" | "sdc_detected" | "sdc_baked" | "job_end"
    cause: str = ""
    job: JobResult | None = None


def new_state(spec: JobSpec) -> State:
    """The state at simulated time 0: a fresh job, the first failure and SDC already drawn."""
    plan = compile_spec(spec)
    streams = Streams(initial_states(spec.seed))
    hard_cd, cause = _draw_hard(plan, streams)
    sdc_cd = geometric_from_exponential(streams.gen(_SDC).standard_exponential(), plan.sdc_rate)
    totals = Totals(interruptions=(0,) * len(plan.cause_names))
    return State(plan=plan, clock=0, t=0, step=0, last_ckpt=0, corrupted=False, hard_countdown=hard_cd,
                 next_cause=cause, sdc_countdown=sdc_cd, pending_us=0, totals=totals, job_start=totals,
                 job_start_t=0, rng=streams.states())


def _draw_hard(plan: Plan, streams: Streams) -> tuple[int, int]:
    countdown = geometric_from_exponential(streams.gen(_HARD).standard_exponential(), plan.hard_rate)
    cause = 0
    if len(plan.cause_cumulative) > 1:
        cause = min(bisect_left(plan.cause_cumulative, streams.gen(_CAUSE).random()),
                    len(plan.cause_cumulative) - 1)
    return countdown, cause


def stretch_us(plan: Plan, a: int, m: int) -> int:
    """Time of the clean steps a+1..m with their validations and checkpoints (closed form)."""
    t = (m - a) * plan.step_us + (m // plan.ckpt_every - a // plan.ckpt_every) * plan.ckpt_us
    if plan.val_every:
        t += (m // plan.val_every - a // plan.val_every) * plan.val_us
    return t


def fit_steps(plan: Plan, a: int, b: int, budget_us: int) -> int:
    """The largest m in [a, b] whose clean stretch a+1..m takes at most ``budget_us`` (binary search)."""
    lo, hi = a, b
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if stretch_us(plan, a, mid) <= budget_us:
            lo = mid
        else:
            hi = mid - 1
    return lo


def advance(state: State, until_us: int, *, max_jobs: int | None = None) -> tuple[State, list[Event]]:
    """Advance to simulated time ``until_us`` (microseconds). Pure: same inputs, same outputs.

    With ``max_jobs``, stops as soon as that many jobs have completed in total; the clock then stays at the
    end of the last job (offline simulation), otherwise it is ``until_us``.
    """
    if until_us < state.clock:
        raise ValueError(f"cannot advance backwards: at {state.clock} us, asked for {until_us} us")
    p = state.plan
    step_us, ckpt_us, val_us = p.step_us, p.ckpt_us, p.val_us
    C, V, target = p.ckpt_every, p.val_every, p.target
    streams = Streams(state.rng)
    tt = state.totals

    t, step, last, corrupted = state.t, state.step, state.last_ckpt, state.corrupted
    hard_cd, cause, sdc_cd, pending = state.hard_countdown, state.next_cause, state.sdc_countdown, state.pending_us
    job_start, job_start_t = state.job_start, state.job_start_t
    executed, committed, recomputed = tt.steps_executed, tt.steps_committed, tt.steps_recomputed
    checkpoints, validations = tt.checkpoints, tt.validations
    onsets, detected, baked = tt.sdc_onsets, tt.sdc_detected, tt.sdc_baked
    interruptions = list(tt.interruptions)
    productive, rollback, ckpt_t, val_t = tt.productive_us, tt.rollback_us, tt.checkpoint_us, tt.validation_us
    restart_t, detect_t, straggler_t, jobs = tt.restart_us, tt.detection_us, tt.straggler_us, tt.jobs_completed
    events: list[Event] = []
    halted = False

    def pack() -> Totals:
        return Totals(executed, committed, recomputed, checkpoints, validations, onsets, detected, baked,
                      tuple(interruptions), productive, rollback, ckpt_t, val_t, restart_t, detect_t,
                      straggler_t, jobs)

    while True:
        if max_jobs is not None and jobs >= max_jobs:
            halted = True
            break
        # The step e of the next unit that is not a clean, quiet one.
        e = step + hard_cd
        if corrupted:
            nxt = (step // C + 1) * C
            if V:
                nxt = min(nxt, (step // V + 1) * V)
            e = min(e, nxt)
        else:
            e = min(e, step + sdc_cd)  # on a tie the hard failure wins: a failed step has no SDC draw
        e = min(e, target)

        # (1) The quiet steps step+1 .. e-1, in closed form.
        quiet = e - 1 - step
        if quiet > 0:
            dur = stretch_us(p, step, e - 1)
            m = e - 1
            if t + dur > until_us:
                m = fit_steps(p, step, e - 1, until_us - t)
                dur = stretch_us(p, step, m)
            n = m - step
            if n:
                executed += n
                hard_cd -= n
                if not corrupted:
                    sdc_cd -= n
                nc = m // C - step // C  # zero while corrupted: e is then at or before the next point
                ckpt_t += nc * ckpt_us
                if V:
                    nv = m // V - step // V
                    validations += nv
                    val_t += nv * val_us
                pending += n * step_us
                if nc:
                    new_last = (m // C) * C
                    gained = new_last - last
                    committed += gained
                    productive += gained * step_us
                    pending -= gained * step_us
                    checkpoints += nc
                    last = new_last
                t += dur
                step = m
            if m < e - 1:
                break

        # (2) The unit of step e: its outcome is known from the state, so its duration is too.
        if e == step + hard_cd:
            dur = step_us + p.cause_detect_us[cause] + p.cause_restart_us[cause]
            if t + dur > until_us:
                break
            t += dur
            executed += 1  # the failed step draws no SDC (seed: `continue` before the SDC draw)
            lost = e - last
            recomputed += lost
            rollback += pending + step_us
            detect_t += p.cause_detect_us[cause]
            restart_t += p.cause_restart_us[cause]
            interruptions[cause] += 1
            events.append(Event(t, "interruption", p.cause_names[cause]))
            step, pending, corrupted = last, 0, False
            hard_cd, cause = _draw_hard(p, streams)
            continue

        onset = not corrupted and e == step + sdc_cd
        bad = corrupted or onset
        val_point = bool(V) and e % V == 0
        ckpt_point = e % C == 0
        caught = bad and val_point
        bake = bad and not caught and ckpt_point
        dur = step_us + (val_us if val_point else 0) + (ckpt_us if ckpt_point and not caught else 0)
        if caught or bake:
            dur += p.sdc_restart_us
        if t + dur > until_us:
            break
        t += dur
        executed += 1
        hard_cd -= 1
        if onset:
            onsets += 1
            corrupted = True
            sdc_cd = geometric_from_exponential(streams.gen(_SDC).standard_exponential(), p.sdc_rate)
        elif not corrupted:
            sdc_cd -= 1
        pending += step_us
        step = e
        if val_point:
            validations += 1
            val_t += val_us
        if ckpt_point and not caught:
            ckpt_t += ckpt_us
        if caught or bake:
            if caught:
                detected += 1
            else:
                baked += 1
            recomputed += step - last
            rollback += pending
            restart_t += p.sdc_restart_us
            events.append(Event(t, "sdc_detected" if caught else "sdc_baked"))
            step, pending, corrupted = last, 0, False
            continue
        if ckpt_point:
            committed += step - last
            productive += pending
            checkpoints += 1
            last, pending = step, 0
        if step == target:
            if corrupted:  # seed's end-of-job rule: the SDC is baked in, its steps are void
                baked += 1
                recomputed += step - last
                rollback += pending
                events.append(Event(t, "sdc_baked"))
            else:
                committed += step - last
                productive += pending
            jobs += 1
            now = pack()
            events.append(Event(t, "job_end", job=_job_result(p, now.minus(job_start), jobs - 1,
                                                              t - job_start_t)))
            step, last, pending, corrupted = 0, 0, 0, False
            job_start, job_start_t = now, t

    new = replace(state, clock=t if halted else until_us, t=t, step=step, last_ckpt=last,
                  corrupted=corrupted, hard_countdown=hard_cd, next_cause=cause, sdc_countdown=sdc_cd,
                  pending_us=pending, totals=pack(), job_start=job_start, job_start_t=job_start_t,
                  rng=streams.states())
    return new, events


def _job_result(p: Plan, d: Totals, index: int, wall_us: int) -> JobResult:
    return JobResult(
        job=index,
        target_steps=p.target,
        step_seconds=p.spec.step_seconds,
        recompute_steps=d.steps_recomputed,
        interruptions=sum(d.interruptions),
        interruptions_by_cause=dict(zip(p.cause_names, d.interruptions, strict=True)),
        sdc_detected=d.sdc_detected,
        sdc_baked=d.sdc_baked,
        checkpoints=d.checkpoints,
        wall_seconds=wall_us / US_PER_SECOND,
        bucket_seconds={b: us / US_PER_SECOND for b, us in d.bucket_us().items()},
    )


def bucket_seconds(state: State) -> dict[str, float]:
    """Seconds per bucket since the start, plus ``in_flight``; they sum to ``state.clock_seconds``."""
    out = {b: us / US_PER_SECOND for b, us in state.totals.bucket_us().items()}
    out["in_flight"] = state.in_flight_us() / US_PER_SECOND
    return out


def run_job(spec: JobSpec, *, tick_us: int | None = None, limit_us: int | None = None) -> JobResult | None:
    """Run one job from a fresh state to completion; None if ``limit_us`` of simulated time pass first.

    With ``tick_us`` the job advances in ticks of that size (the result is the same, by construction).
    """
    state = new_state(spec)
    limit = limit_us if limit_us is not None else NEVER
    while True:
        until = limit if tick_us is None else min(limit, state.clock + tick_us)
        state, events = advance(state, until, max_jobs=1)
        for ev in events:
            if ev.kind == "job_end":
                return ev.job
        if state.clock >= limit:
            return None


__all__ = ["BUCKETS", "Event", "JobResult", "advance", "bucket_seconds", "new_state", "run_job",
           "stretch_us", "fit_steps"]
