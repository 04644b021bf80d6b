"""The engine's entry points: ``advance(state, until) -> (state, events)``, seed 000's loop without the loop.

Hard failures and SDC candidates are Bernoulli point sets over ``g``, the executed-step index (streams.py);
the trajectory is a deterministic function of them. Between two rollbacks the job runs a *segment*, crossed
in closed form, so the cost grows with failures and SDCs, not with steps. One compiled loop does it for every
mechanism (loop.py; for one State: advance), job ends and, on request, a trace of every event included.
Its checks: the per-step oracle (oracle.py, in distribution), tick-size invariance, and the golden paths the
Python walks it replaced left behind (tests/engine/golden_paths.py).

Promises: pure (same inputs, same outputs; nothing read from outside the arguments); tick-size invariance:
a call completes exactly the units (a step with its validation, checkpoint and recovery) that end at or
before ``until``, all time in integer microseconds, so any partition of time into calls gives the same state.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from simd.engine import trace as tr
from simd.engine.frozen import built
from simd.engine.hazard import NEVER
from simd.engine.layout import Aux, Pos, TotalsLayout, pack, state_fields, words
from simd.engine.loopcall import call
from simd.engine.results import Event, JobResult, job_result
from simd.engine.spec import JobSpec, compile_spec
from simd.engine.state import State, Totals
from simd.engine.stragglers import BUCKET_FACTORS
from simd.engine.streams import first_position


def new_state(spec: JobSpec) -> State:
    """The state at simulated time 0: a fresh job."""
    plan = compile_spec(spec)
    totals = Totals(interruptions=(0,) * len(plan.cause_names), step_hist=(0,) * (len(BUCKET_FACTORS) + 1),
                    interruptions_by_type=(0,) * len(plan.type_names), sdc_onsets_by_type=(0,) * len(plan.type_names),
                    detector_finds=(0,) * len(plan.detector_names),
                    restart_attempts=(0,) * len(plan.cause_names) if any(plan.cause_recovery) else ())
    return State(plan=plan, clock=0, t=0, g=0, step=0, last_ckpt=0, corrupted=False,
                 hard=(0, first_position(plan.hard_stream, plan.hard_log1m)),
                 sdc=(0, first_position(plan.sdc_stream, plan.sdc_log1m)),
                 pending_us=0, totals=totals, job_start=totals, job_start_t=0, job_start_g=0,
                 rejoin=(0,) * plan.elastic_groups, group_ready=(0,) * (plan.elastic_groups if plan.table else 0))


def advance(state: State, until_us: int, *, max_jobs: int | None = None,
            trace: bool = False) -> tuple[State, list[Event]]:
    """Advance to simulated time ``until_us`` (microseconds). Pure: same inputs, same outputs.

    Returns the new state and the events that happened: every job end, and with ``trace`` also every
    interruption and SDC verdict (recorded by the kernel in a buffer: trace.py). With ``max_jobs`` it stops as
    soon as that many jobs have completed in total; the clock then stays at the end of the last job (offline
    simulation), otherwise it is ``until_us``. Under ``NUMBA_DISABLE_JIT=1`` the same loop runs as Python.
    """
    if until_us < state.clock:
        raise ValueError(f"cannot advance backwards: at {state.clock} us, asked for {until_us} us")
    return _on_the_kernel(state, until_us, max_jobs, trace)


def retarget(state: State, spec: JobSpec) -> State:
    """The same job from ``state.clock`` on, under new parameters (a drill starting or ending).

    Counters, position, pending work and the unit in progress carry over; the unit in progress finishes under
    the new parameters. Hard failures and SDCs are redrawn from the current step on, from streams of the new
    epoch: both are memoryless, so this is exactly the process with the new rates. Step durations stay a pure
    function of the executed-step index. The causes must keep their names (their counters carry over), and
    the target and intervals may change only at a job boundary-safe value: the position must stay valid.
    Servers (servers.py) keep their lifetimes when their failure model is unchanged (``servers_kept``); else
    every server starts a new lifetime at the current step, drawn from the new epoch's stream.
    """
    old = state.plan.spec
    if tuple(c.name for c in spec.cause_list) != tuple(c.name for c in old.cause_list):
        raise ValueError("retarget cannot change the failure causes")
    if tuple(a.name for a in spec.accelerator_list) != tuple(a.name for a in old.accelerator_list):
        raise ValueError("retarget cannot change the accelerator types")
    if spec.committed_sdc != old.committed_sdc and (spec.committed_sdc is None or old.committed_sdc is None or tuple(
            d.name for d in spec.committed_sdc.detectors) != tuple(d.name for d in old.committed_sdc.detectors)):
        raise ValueError("retarget cannot change the SDC detectors")  # their counters carry over, as the causes'
    if state.plan.committed and spec.step_seconds != old.step_seconds and state.pending_us:
        # the kernel's rollbacks to a committed-SDC checkpoint (loop.py: the compute kept after the newest clean
        # checkpoint) count steps times the step time: with uncommitted steps of the old step time that would be
        # wrong (a rollback could book negative time)
        raise ValueError("retarget: step_seconds can change on a plan with committed SDCs only with no compute "
                         "pending (at a clean checkpoint)")
    if spec.step_seconds != old.step_seconds and (state.write_end or state.hw):
        # a write's commit and a fallback's recompute count steps times the step time (loop.py's _commit), as the
        # committed SDCs' rollbacks do above
        raise ValueError("retarget: step_seconds can change only with no save writing and no recomputed work "
                         "pending")
    if spec.step_seconds != old.step_seconds and state.last_ckpt and any(
            x.ckpt_corrupt_on_load or x.tier is not None for x in (old, spec)):
        # a recovery can go below the work committed (a checkpoint found corrupt, a memory tier's loss), and a job's
        # end that voids it takes its productive credit back at the step time then (Totals.voided_us): with steps
        # credited at another step time the kept buckets would be wrong (productive below 0)
        raise ValueError("retarget: step_seconds can change on a plan with corrupt loads or a memory tier only before "
                         "the job's first checkpoint")
    if (spec.ckpt_corrupt_on_load > 0) != (old.ckpt_corrupt_on_load > 0) and state.last_ckpt:
        # the loop keeps every checkpoint a fallback can load only while loads can be corrupt (State.corrupt_ckpts):
        # switched on after a checkpoint it would hold none of those saved before, switched off its clean ones
        raise ValueError("retarget: corrupt loads can switch on or off only before the job's first checkpoint")
    if spec.target_steps < state.step:
        raise ValueError(f"retarget: target_steps {spec.target_steps} is behind the job's step {state.step}")
    if spec.elastic_groups != old.elastic_groups:
        raise ValueError("retarget cannot change the elastic replica groups")
    if (spec.tier.retention_checkpoints if spec.tier else 1) != (old.tier.retention_checkpoints if old.tier else 1):
        raise ValueError("retarget cannot change the memory tier's retention")  # (the width of its ring)
    if (spec.lower_tier.retention_checkpoints if spec.lower_tier else 0) != \
            (old.lower_tier.retention_checkpoints if old.lower_tier else 0):  # (two tiers: the widths of their rings)
        raise ValueError("retarget cannot add or remove a second memory tier nor change its retention")
    epoch = state.epoch + 1
    plan = compile_spec(spec, epoch)
    if (len(plan.cause_names) if plan.cause_recovery else 0) != len(state.totals.restart_attempts):
        # the kernel counts each cause's restarts only with in-process restarts or crash loops (new_state sizes
        # Totals.restart_attempts then): switching them on would start the counts from 0 under interruptions
        # already restarted, switching them off would stop them. A drill's crash loop keeps one width by giving
        # the scenario one at failure probability 0 outside the drill (ScenarioBody.with_crash_loop_counted).
        raise ValueError("retarget cannot switch in-process restarts or crash loops on or off (the per-cause "
                         "restart counts would lose their meaning): start the job anew")
    g = state.g
    hard = (0, g + first_position(plan.hard_stream, plan.hard_log1m)) if plan.hard_log1m else (0, NEVER)
    sdc = (0, g + first_position(plan.sdc_stream, plan.sdc_log1m)) if plan.sdc_log1m else (0, NEVER)
    # bursts (servers.py): the next is drawn afresh from g under the new rate (memoryless: the same process)
    burst_at = g if plan.burst_log1m else state.burst_at
    # elastic replica groups out rejoin no later than the new parameters' rejoin from now (a heal a drill made
    # endless ends with it)
    rejoin = capped_rejoins(state.rejoin, state.clock + plan.rejoin_us, state.group_ready, plan.rejoin_us)
    # relapses switched on or off: the flags' region appears or goes (servers.py, "Relapses"), none flagged
    relapse = {} if (plan.relapse_p > 0) == (state.plan.relapse_p > 0) else {"srv_relapse": ()}
    if servers_kept(state.plan, plan):
        return replace(state, plan=plan, hard=hard, sdc=sdc, epoch=epoch, burst_at=burst_at, rejoin=rejoin, **relapse)
    return replace(state, plan=plan, hard=hard, sdc=sdc, epoch=epoch, lifetimes=0, srv_next=(), srv_mult=(),
                   burst_at=burst_at, regime=(), rejoin=rejoin, **relapse)


def capped_rejoins(rejoin: tuple[int, ...], latest: int, ready: tuple[int, ...] = (), rejoin_us: int = 0) -> \
        tuple[int, ...]:
    """State.rejoin with every group out rejoining at ``latest`` at the latest (0: running, kept); with servers
    (``ready``: State.group_ready) no earlier than ``rejoin_us`` after its last replacement is ready."""
    if ready:
        return tuple(min(r, max(latest, x + rejoin_us)) if r else 0 for r, x in zip(rejoin, ready, strict=True))
    return tuple(min(r, latest) if r else 0 for r in rejoin)


def servers_kept(old, new) -> bool:
    """Whether a retarget from plan ``old`` to ``new`` keeps the servers' lifetimes: both have the same table
    (count, lemons, lifetime distribution and scales), so each server's current lifetime stays its own."""
    return new.servers > 0 and _table(old) == _table(new)


def _table(p) -> tuple:
    return (p.servers, p.lemon_fraction, p.rate_shape, p.lifetime_kind, p.lifetime_shape, p.scale_normal, p.scale_lemon,
            p.regimes, p.regime_calm, p.regime_stormy, p.regime_calm_log1m, p.regime_stormy_log1m, p.rate_schedule)


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


_KEY = "_core_layout"  # the Totals layout of the plan's states, cached on the (immutable) plan


def _layout(state: State) -> TotalsLayout:
    lay = state.plan.__dict__.get(_KEY)
    if lay is None:
        lay = state.plan.__dict__[_KEY] = TotalsLayout(state.totals)
    return lay


def _on_the_kernel(state: State, until_us: int, max_jobs: int | None,
                   traced: bool) -> tuple[State, list[Event]]:
    """advance's work: the State packed into one row of the kernel's arrays (layout.py), the kernel called up to
    each job's end in turn (its ``max_jobs`` cut) so the job's JobResult can be built from the counters' growth
    (results.job_result), the State built back from the row. With ``traced`` the kernel records the
    interruptions and SDC verdicts too (trace.py); they come before their job's end in the events. Cost: a few
    microseconds to pack and unpack, one kernel call per job that ends in the call plus one."""
    plan = state.plan
    lay, pos, tot, aux = pack((state,), _layout(state))
    start = np.empty_like(tot)  # the kernel's copy of the totals at a job's end (rebuilt here from ``tot``)
    w = words(plan)[None]
    jobs_col = int(lay.start["jobs_completed"])
    events: list[Event] = []
    job_start, now = state.job_start, None
    rows = tr.buffer() if traced else None
    while True:
        jobs = int(tot[0, jobs_col])
        job_t = int(pos[0, Pos.job_start_t])
        # stop at the next job's end (to report it), or at max_jobs in total as core.advance does
        cut = jobs + 1 if max_jobs is None else min(jobs + 1, max_jobs)
        if rows is None:
            call(plan, lay, pos, tot, start, aux, w, until_us, cut)
        else:
            rows = _traced(plan, lay, pos, tot, start, aux, w, until_us, cut, rows)
            events += tr.events(plan, rows)
        if int(tot[0, jobs_col]) == jobs:  # until reached (or max_jobs already complete): done
            now = None
            break
        now = lay.totals(tot[0].tolist())
        t = int(pos[0, Pos.t])
        events.append(Event(t, "job_end", job=job_result(plan, now.minus(job_start), jobs, t - job_t,
                                                                      job_start.retirements, t)))
        job_start = now
        if max_jobs is not None and jobs + 1 >= max_jobs:  # (a further call would stop at once)
            break
    d = state.__dict__.copy()  # the fields the kernel moves are all set anew below
    d.update(state_fields(pos[0].tolist(), aux[0], Aux.of(plan)))
    d.update(totals=now if now is not None else lay.totals(tot[0].tolist()), job_start=job_start)
    return built(State, d), events


def _traced(plan, lay, pos, tot, start, aux, w, until_us, max_jobs, rows):
    """One call with its events recorded in ``rows`` (trace.py); run again from the same state with rows enough
    when they were too few. Returns the buffer that holds them."""
    before = pos.copy(), tot.copy(), aux.copy()
    while True:
        call(plan, lay, pos, tot, start, aux, w, until_us, max_jobs, rows)
        if not tr.overflowed(rows):
            return rows
        rows = tr.buffer(int(rows[1][0]))
        for a, b in zip((pos, tot, aux), before, strict=True):
            a[...] = b
