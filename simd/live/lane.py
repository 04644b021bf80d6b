"""One scenario in the running daemon (a *lane*): its replicas' engine states, the parameters they run under,
and advancing them with a bound on the work of one tick.

A lane is an immutable value; the tick loop (simd.live.ticker) replaces it. Its replicas share one engine clock,
which counts from ``origin_us`` of the daemon's shared simulated clock: 0 for a scenario that ran from the
start (or from a resumed snapshot of such a run), the shared time of a reload that added or changed it.

Bounded work: a tick's work is counted in estimated CPU microseconds of the engine (simd.engine.work's
:class:`Costs`): per event crossed (hard failures, SDC rollbacks, job ends), per executed step whose duration the
straggler sampler draws, per server event (failures, bursts' strikes, repairs) and per server a call or a burst
passes over, and per replica per call, at the measured costs of the path the lane runs on (the compiled batch over
replicas, or an injected advance one replica at a time). :func:`advance_lane` advances in chunks sized so that the
expected work plus four standard deviations fits the budget left (so in one call when it fits: a tick of 10,000
replicas of llama3-16k at speedup 3600 is ~0.13 s of estimated work, one call); on the batch path the kernel counts
what it does as it goes and stops each replica at the end of a unit once it has spent its share of the budget
left (a burst's thousands of servers, which no estimate of a chunk bounds, included), every replica at one clock.
The lane stops once the work reaches ``limit`` or too little is left for another call: it is then *behind* the
shared clock (reported, and caught up exactly by later ticks: the engine is tick-size invariant) instead of
holding the daemon. Drills change a lane's parameters at exactly their simulated boundaries, wherever the lane is.
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
from simd.engine import work as engine_work
from simd.live.keyed import digest, keyed
from simd.metrics.snapshot import ScenarioInfo, ScenarioSnapshot, scenario_info, scenario_snapshot
from simd.scenario import Scenario, ScenarioBody
from simd.scenario.limits import TICK_WORK_US

# The work one scenario may do in one tick (simd.scenario.limits, where the file's bound on a tick's estimate
# reads it too)
WORK_LIMIT_US = TICK_WORK_US
# A lane with less than this share of its limit left stops for the tick: another chunk would be tiny.
MIN_LEFT_SHARE = 1 / 16

# An injected advance, one replica at a time (tests; every lane of the daemon runs on the batch over replicas):
# what it runs is not known, so it is counted at the costs of a slow path, a Python segment walk of the same model
# (measured: 44 us per event at a failure every other 1 s step); ~14 ns per
# straggler-drawn step (simd/engine/stragglers.py); 70-220 us per call that crosses no event (core.advance on the
# compiled loop: 45 us per call, 0.05 us per event); a server event at an event's cost, a pass over the servers
# at the kernel's.
KERNEL, TAIL_SDS, Costs = engine_work.KERNEL, engine_work.TAIL_SDS, engine_work.Costs
CORE = Costs(per_event_us=44.0, per_step_us=0.014, per_call_us=100.0, per_server_us=44.0,
             per_cluster_server_us=KERNEL.per_cluster_server_us)

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
        clock = getattr(self.states, "clock", None)  # the batch path's, without building a State
        return self.origin_us + (self.states[0].clock if clock is None else clock)

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


def counts_restarts(body: ScenarioBody) -> bool:
    """Whether the engine counts ``body``'s restarts per cause (with in-process restarts or crash loops: a width of
    Totals.restart_attempts that no retarget changes, core.retarget): a reload that changes it starts the lane anew."""
    from simd.scenario.translate import restart_paths

    in_process, loops = restart_paths(body)
    return bool(in_process or loops)


def events(state: State) -> int:
    """The events counted so far in ``state``: interruptions, SDC verdicts (detected, baked in), job ends."""
    t = state.totals
    return sum(t.interruptions) + t.sdc_detected + t.sdc_baked + t.jobs_completed


def server_events(state: State) -> int:
    """The server events counted so far in ``state``: failures, bursts' strikes, repairs started."""
    t = state.totals
    return t.server_failures + t.burst_servers + t.repairs_started


def counted(states: Sequence[State]) -> tuple[int, int, int]:
    """(events, executed steps, server events) summed over the replicas; from the batch path's arrays when the
    states come from it (no State built)."""
    b = getattr(states, "batch", None)
    if b is None:
        return (sum(events(s) for s in states), sum(s.totals.steps_executed for s in states),
                sum(server_events(s) for s in states))
    n = int(b.column("interruptions").sum() + b.column("sdc_detected").sum() + b.column("sdc_baked").sum()
            + b.column("jobs_completed").sum())
    srv = int(b.column("server_failures").sum() + b.column("burst_servers").sum() + b.column("repairs_started").sum())
    return n, int(b.column("steps_executed").sum()), srv


def costs_of(states: Sequence[State], advance_fn: Advance) -> Costs:
    """The costs of the path ``advance_lane`` takes for ``states``."""
    return KERNEL if advance_fn is advance and on_kernel(states) else CORE


def load(plan) -> engine_work.Load:
    """The plan's expected work per step (engine_work.load_of of its spec), kept on the (immutable) plan."""
    got = plan.__dict__.get("_load")
    if got is None:
        got = plan.__dict__["_load"] = engine_work.load_of(plan.spec)
    return got


def work_us(costs: Costs, plan, replicas: int, events_done: int, steps_done: int, servers_done: int = 0) -> float:
    """The estimated CPU microseconds of one call that did ``events_done`` events, executed ``steps_done``
    steps and ``servers_done`` server events over ``replicas`` replicas of ``plan`` (an injected advance: the
    batch path counts its own work, by the same costs)."""
    w = engine_work.call_us(costs, load(plan), replicas) + costs.per_event_us * events_done
    w += costs.per_server_us * servers_done
    if plan.step_times is not None:
        w += costs.per_step_us * steps_done
    return w


def chunk_us(costs: Costs, plan, replicas: int, budget: float, tail_sds: float = TAIL_SDS) -> float:
    """The longest stretch of simulated microseconds whose expected work plus ``tail_sds`` standard deviations
    fits ``budget`` (engine_work.chunk_us, every mechanism's work: events, straggler-drawn steps, servers' events
    and bursts, the passes over the servers). The batch path sizes its calls on the expectation alone (0): its
    kernel stops at the budget whatever the events do."""
    return engine_work.chunk_us(costs, load(plan), replicas, budget, tail_sds)


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
            plan, n = getattr(lane.states, "plan", None) or lane.states[0].plan, len(lane.states)
            sds = 0.0 if costs is KERNEL else TAIL_SDS
            to = min(target, lane.at_us + math.ceil(min(chunk_us(costs, plan, n, limit - done, sds), 2.0 ** 62)))
            if costs is KERNEL:  # all replicas at once on the engine's batch path, each stopping once it spent its
                # share of what is left, all at one clock (engine.replicas: the call then does at most twice that,
                # a cut advancing some replicas twice): the states of an uncut call, bit for bit
                states = advance_replicas(lane.states, to - lane.origin_us,
                                          budget=engine_work.budget(costs, max(0.0, limit - done) / n))
                lane = replace(lane, states=states)
                done += states.batch.work / 1000  # what the kernel counted, by costs' weights in ns
                continue
            before = counted(lane.states)
            if step is advance:  # replicas whose plans differ (not a lane's): one by one on core
                states = advance_replicas(lane.states, to - lane.origin_us)
            else:  # an injected advance (tests): one replica at a time
                states = tuple(step(s, to - lane.origin_us)[0] for s in lane.states)
            lane = replace(lane, states=states)
            after = counted(lane.states)
            done += work_us(costs, plan, n, after[0] - before[0], after[1] - before[1], after[2] - before[2])
        if b is None:
            return Advanced(lane, done, False)
        lane, since = with_body(lane, body_at(b)), b  # a drill starts or ends here
