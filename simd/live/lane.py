"""One scenario in the running daemon (a *lane*): its replicas' engine states, the parameters they run under,
and advancing them with a bound on the work of one tick.

A lane is an immutable value; the tick loop (simd.live.ticker) replaces it. Its replicas share one engine clock,
which counts from ``origin_us`` of the daemon's shared simulated clock: 0 for a scenario that ran from the
start (or from a resumed snapshot of such a run), the shared time of a reload that added or changed it.

Bounded work: a tick's work is counted in estimated CPU microseconds of the engine (:class:`Costs`): per event
crossed (hard failures, SDC rollbacks, job ends), per executed step whose duration the straggler sampler draws,
and per replica per call, at the measured costs of the path the lane runs on (the compiled batch over replicas, or an
injected advance one replica at a time). :func:`advance_lane` advances in chunks sized so that the expected work
plus four standard deviations fits the budget left (so in one call when it fits: a tick of 10,000 replicas of
llama3-16k at speedup 3600 is ~0.13 s of estimated work, one call), counts what each chunk did, and stops once
the work reaches ``limit`` or too little is left for another call: the lane is then *behind* the shared clock
(reported, and caught up exactly by later ticks: the engine is tick-size invariant) instead of holding the
daemon. Drills change a lane's parameters at exactly their simulated boundaries, wherever the lane is.
"""

from __future__ import annotations

import gc
import math
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace

from simd.engine import (
    US_PER_SECOND,
    State,
    advance,
    advance_replicas,
    new_replicas,
    on_kernel,
    retarget_replicas,
)
from simd.live.keyed import digest, keyed
from simd.metrics.snapshot import ScenarioInfo, ScenarioSnapshot, scenario_info, scenario_snapshot
from simd.scenario import Scenario, ScenarioBody

# The work one scenario may do in one tick, in estimated CPU microseconds of the engine (all replicas together):
# 0.2 s, so that a tick at the default 1 s interval stays on time with a few busy scenarios, while a runaway
# one (a drill multiplying a rate by 10^6, a 1 ms step at speedup 10^9) is cut and reported.
WORK_LIMIT_US = 200_000
# Four standard deviations of a chunk's work (its events are Poisson) are kept in reserve when it is sized, so a
# chunk overshoots the budget left only with a vanishing (Poisson-tail) probability.
TAIL_SDS = 4.0
# A lane with less than this share of its limit left stops for the tick: another chunk would be tiny.
MIN_LEFT_SHARE = 1 / 16


@dataclass(frozen=True)
class Costs:
    """Estimated CPU microseconds of one path of the engine: per event, per straggler-drawn step, per replica
    per call."""

    per_event_us: float
    per_step_us: float
    per_call_us: float


# The compiled batch over replicas (simd.engine.replicas), measured on this 2-core machine (bench/daemon.py
# --costs measures them again): 0.08-0.49 us per event (1,000 replicas of a failure every ~2 steps, 100-1,000
# simulated s per call); 17.7-20.9 ns per executed step of llama3-16k under stragglers, its events included
# (2,000-10,000 replicas, 3,600 simulated s per call); 0.65-0.83 us per replica per call (mostly its streams'
# jumps to their current draws, in the kernel) and ~0.2 us in the arrays' copies.
KERNEL = Costs(per_event_us=0.5, per_step_us=0.02, per_call_us=1.0)
# An injected advance, one replica at a time (tests; every lane of the daemon runs on the batch over replicas):
# what it runs is not known, so it is counted at the costs of a slow path, a Python segment walk of the same model
# (measured: 44 us per event at a failure every other 1 s step); ~14 ns per
# straggler-drawn step (simd/engine/stragglers.py); 70-220 us per call that crosses no event (core.advance on the
# compiled loop: 45 us per call, 0.05 us per event).
CORE = Costs(per_event_us=44.0, per_step_us=0.014, per_call_us=100.0)

Advance = Callable[[State, int], tuple[State, list]]


def scenario_key(scenario: Scenario) -> str:
    """A hash of everything that defines the scenario's simulation (its fields, name and sweep): equal keys
    mean a saved or running state may continue under this configuration. A field the schema gained after a
    state was saved changes no key while it is at its default (simd.live.keyed). How warnings are logged
    (``acknowledge``) is not simulation."""
    return digest({"scenario": keyed(scenario, frozenset({"acknowledge"})), "sweep": scenario.sweep})


@dataclass(frozen=True)
class Lane:
    scenario: Scenario
    key: str  # scenario_key(scenario)
    origin_us: int  # shared simulated time at which the lane's engine clock was 0
    body: ScenarioBody  # the parameters now (as configured, or changed by running drills)
    states: tuple[State, ...]  # one per replica, all at the same engine clock
    info: ScenarioInfo
    failed: str | None = None  # the cause, once a tick raised: the lane is quarantined (no longer advanced)
    overruns: int = 0  # ticks in which the lane reached its work limit

    @property
    def at_us(self) -> int:
        """Where the lane is on the shared simulated clock."""
        return self.origin_us + self.states[0].clock

    def snapshot(self, shared_us: int) -> ScenarioSnapshot:
        return replace(scenario_snapshot(self.info, self.states), failed=self.failed is not None,
                       behind_us=max(0, shared_us - self.at_us), overruns=self.overruns)


@contextmanager
def gc_paused() -> Iterator[None]:
    """The cyclic garbage collector paused while a lane's replicas are built in bulk (a plan, spec, step times
    and stream dicts per replica, none in a cycle): with 10,000 replicas its passes over the growing heap were
    half the time of a startup, a retarget or a resume (measured: 0.47 -> 0.22 s, 1.4 -> 0.6 s). Reference
    counting frees as usual; collections resume at the end."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def new_lane(scenario: Scenario, body: ScenarioBody, origin_us: int) -> Lane:
    """A fresh run of ``scenario`` (every replica at engine time 0) under parameters ``body``: its replicas'
    plans compiled together (replicas.new_replicas: ~10-20 us per replica, where one core.new_state costs ~0.6 ms;
    the same states)."""
    seeds = scenario.replica_seeds()
    with gc_paused():
        states = new_replicas(body.job_spec(seeds[0]), seeds)
    return Lane(scenario, scenario_key(scenario), origin_us, body, states, scenario_info(scenario, body, states[0]))


def with_body(lane: Lane, body: ScenarioBody) -> Lane:
    """The lane under new parameters from its current time on (a drill starting or ending, a reload): every
    replica retargeted at once (replicas.retarget_replicas, core.retarget's states; on the batch path's arrays
    when the lane is on them), each under ``body`` with its own seed."""
    if body == lane.body:
        return lane
    with gc_paused():
        states = retarget_replicas(lane.states, body.job_spec(lane.scenario.replica_seeds()[0]))
    return replace(lane, body=body, states=states, info=scenario_info(lane.scenario, body, states[0]))


def events(state: State) -> int:
    """The events counted so far in ``state``: interruptions, SDC verdicts (detected, baked in), job ends."""
    t = state.totals
    return sum(t.interruptions) + t.sdc_detected + t.sdc_baked + t.jobs_completed


def counted(states: Sequence[State]) -> tuple[int, int]:
    """(events, executed steps) summed over the replicas; from the batch path's arrays when the states come
    from it (no State built)."""
    b = getattr(states, "batch", None)
    if b is None:
        return sum(events(s) for s in states), sum(s.totals.steps_executed for s in states)
    n = int(b.column("interruptions").sum() + b.column("sdc_detected").sum() + b.column("sdc_baked").sum()
            + b.column("jobs_completed").sum())
    return n, int(b.column("steps_executed").sum())


def costs_of(states: Sequence[State], advance_fn: Advance) -> Costs:
    """The costs of the path ``advance_lane`` takes for ``states``."""
    return KERNEL if advance_fn is advance and on_kernel(states) else CORE


def work_us(costs: Costs, plan, replicas: int, events_done: int, steps_done: int) -> float:
    """The estimated CPU microseconds of one call that did ``events_done`` events and executed ``steps_done``
    steps over ``replicas`` replicas of ``plan``."""
    w = costs.per_call_us * replicas + costs.per_event_us * events_done
    if plan.step_times is not None:
        w += costs.per_step_us * steps_done
    return w


def chunk_us(costs: Costs, plan, replicas: int, budget: float) -> float:
    """The longest stretch of simulated microseconds whose expected work plus TAIL_SDS standard deviations fits
    ``budget`` (at least one step; when the calls' cost alone exceeds it, the stretch whose expected work
    besides them fits it). In x us: events ~ Poisson(lam * x) (all replicas), so the work is
    c + a * x + TAIL_SDS * e * sqrt(lam * x) with c the calls' cost, a the expected work per us, e per event."""
    per_step = plan.hard_hazard + plan.sdc_hazard + 1.0 / plan.target  # events per executed step, expected
    lam = per_step / plan.step_us * replicas  # events per simulated us, all replicas (an upper bound: restarts,
    # checkpoints and slow steps only stretch the time between events and steps)
    a = costs.per_event_us * lam
    if plan.step_times is not None:
        a += costs.per_step_us * replicas / plan.step_us
    left = budget - costs.per_call_us * replicas
    if left <= 0:  # the calls alone cost more than the budget: one call pays them, so spend the budget on
        left = budget  # progress (one step per call would pay them every step and fall ever further behind)
    b = TAIL_SDS * costs.per_event_us * math.sqrt(lam)
    if a <= 0:
        return math.inf
    y = (-b + math.sqrt(b * b + 4 * a * left)) / (2 * a)  # a y^2 + b y = left, y = sqrt(x)
    return max(plan.step_us, y * y)


@dataclass(frozen=True)
class Advanced:
    lane: Lane
    work: float  # what this call did, estimated CPU microseconds
    cut: bool  # stopped at the limit before ``until_us``


def advance_lane(lane: Lane, until_us: int, body_at: Callable[[float], ScenarioBody],
                 boundaries: Callable[[float, float], list[float]], limit: float = WORK_LIMIT_US,
                 advance_fn: Advance | None = None) -> Advanced:
    """Advance ``lane`` to shared simulated time ``until_us``, retargeting it at each drill boundary on the way
    (``boundaries(t0, t1)``: simulated seconds in (t0, t1]; ``body_at(t)``: its parameters at t), and stop
    early once ``limit`` work (estimated CPU microseconds) is done or less than MIN_LEFT_SHARE of it is left.
    The first chunk always runs (at least one step), so a lane always moves. Pure: the lane given is not
    changed."""
    step = advance_fn or advance
    done, since, first = 0.0, lane.at_us / US_PER_SECOND, True
    while True:
        upcoming = boundaries(since, until_us / US_PER_SECOND)
        b = upcoming[0] if upcoming else None
        target = until_us if b is None else min(until_us, max(lane.at_us, round(b * US_PER_SECOND)))
        while lane.at_us < target:
            if not first and limit - done < MIN_LEFT_SHARE * limit:
                return Advanced(lane, done, True)
            first = False
            costs = costs_of(lane.states, step)
            plan, n = lane.states[0].plan, len(lane.states)
            before = counted(lane.states)
            to = min(target, lane.at_us + math.ceil(min(chunk_us(costs, plan, n, limit - done), 2.0 ** 62)))
            if step is advance:  # all replicas at once on the engine's batch path: the same states, bit for bit
                states = advance_replicas(lane.states, to - lane.origin_us)
            else:  # an injected advance (tests): one replica at a time
                states = tuple(step(s, to - lane.origin_us)[0] for s in lane.states)
            lane = replace(lane, states=states)
            after = counted(lane.states)
            done += work_us(costs, plan, n, after[0] - before[0], after[1] - before[1])
        if b is None:
            return Advanced(lane, done, False)
        lane, since = with_body(lane, body_at(b)), b  # a drill starts or ends here
