"""One scenario in the running daemon (a *lane*): its replicas' engine states, the parameters they run under,
and advancing them with a bound on the work of one tick.

A lane is an immutable value; the tick loop (simd.ticker) replaces it. Its replicas share one engine clock,
which counts from ``origin_us`` of the daemon's shared simulated clock: 0 for a scenario that ran from the
start (or from a resumed snapshot of such a run), the shared time of a reload that added or changed it.

Bounded work: the engine's cost grows with the events it crosses (hard failures, SDC rollbacks, job ends),
not with the simulated time, plus a few nanoseconds per executed step when stragglers give each step its own
duration. :func:`advance_lane` advances in chunks sized from the plan's expected event rate, counts the work
of each chunk, and stops once a tick's work reaches ``limit``: the lane is then *behind* the shared clock
(reported, and caught up exactly by later ticks: the engine is tick-size invariant) instead of holding the
daemon. Drills change a lane's parameters at exactly their simulated boundaries, wherever the lane is.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Callable
from dataclasses import dataclass, replace

from simd.config import Scenario, ScenarioBody
from simd.engine import US_PER_SECOND, State, advance, new_state, retarget
from simd.engine.replicas import advance_replicas
from simd.snapshot import ScenarioInfo, ScenarioSnapshot, scenario_info, scenario_snapshot

# The work one scenario may do in one tick, in events (all replicas together). Measured on this 2-core machine
# (CPU time of advance_lane until the limit): 0.5 us per event on the batch path (60 s steps, Llama 3 causes),
# 44 us on the segment walk at a failure every other 1 s step, so 5,000 events cost at most ~0.2 s: a tick at
# the default 1 s interval stays on time, while a busy scenario of the default configuration does ~100
# events per tick at speedup 3600 and a runaway one (a drill multiplying a rate by 10^6, a 1 ms step at
# speedup 10^9) is cut and reported.
EVENTS_PER_TICK = 5_000
# An executed step whose duration the straggler sampler draws costs ~14 ns (simd/engine/stragglers.py),
# ~1/1000 of an event: that many such steps count as one event.
STEPS_PER_EVENT = 1000
# A chunk is sized to expect this share of the remaining budget, so one chunk overshoots it only with a
# vanishing (Poisson-tail) probability.
CHUNK_SHARE = 0.25

Advance = Callable[[State, int], tuple[State, list]]


def scenario_key(scenario: Scenario) -> str:
    """A hash of everything that defines the scenario's simulation (its fields, name and sweep): equal keys
    mean a saved or running state may continue under this configuration."""
    payload = json.dumps({"scenario": scenario.model_dump(mode="json"), "sweep": scenario.sweep},
                         sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(payload.encode()).hexdigest()[:32]


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


def new_lane(scenario: Scenario, body: ScenarioBody, origin_us: int) -> Lane:
    """A fresh run of ``scenario`` (every replica at engine time 0) under parameters ``body``."""
    # advanced to time 0 (no change) on the batch path: its kernels are loaded now, before the ticks' clock starts
    states = advance_replicas(tuple(new_state(body.job_spec(seed)) for seed in scenario.replica_seeds()), 0)
    return Lane(scenario, scenario_key(scenario), origin_us, body, states, scenario_info(scenario, body, states[0]))


def with_body(lane: Lane, body: ScenarioBody) -> Lane:
    """The lane under new parameters from its current time on (a drill starting or ending, a reload)."""
    if body == lane.body:
        return lane
    states = tuple(retarget(s, body.job_spec(seed)) for s, seed in zip(lane.states, lane.scenario.replica_seeds(),
                                                                      strict=True))
    return replace(lane, body=body, states=states, info=scenario_info(lane.scenario, body, states[0]))


def work(state: State) -> int:
    """The work counted so far in ``state``: events, and straggler-sampled steps / STEPS_PER_EVENT."""
    t = state.totals
    n = sum(t.interruptions) + t.sdc_detected + t.sdc_baked + t.jobs_completed
    if state.plan.step_times is not None:
        n += t.steps_executed // STEPS_PER_EVENT
    return n


def work_of(states: tuple[State, ...]) -> int:
    """``work`` summed over the replicas; from the batch path's arrays when the states come from it."""
    b = getattr(states, "batch", None)
    if b is None:
        return sum(work(s) for s in states)
    n = int(b.column("interruptions").sum() + b.column("sdc_detected").sum() + b.column("sdc_baked").sum()
            + b.column("jobs_completed").sum())
    if states[0].plan.step_times is not None:
        n += int((b.column("steps_executed") // STEPS_PER_EVENT).sum())
    return n


def chunk_us(state: State, replicas: int, budget: int) -> float:
    """Simulated microseconds in which the replicas are expected to do CHUNK_SHARE of ``budget`` work."""
    p = state.plan
    per_step = p.hard_hazard + p.sdc_hazard + 1.0 / p.target  # events per executed step, expected
    if p.step_times is not None:
        per_step += 1.0 / STEPS_PER_EVENT
    rate = per_step / p.step_us * replicas  # work per simulated microsecond, all replicas (an upper bound:
    # restarts, checkpoints and slow steps only stretch the time between events)
    return max(p.step_us, CHUNK_SHARE * max(budget, 1) / rate)


@dataclass(frozen=True)
class Advanced:
    lane: Lane
    work: int  # what this call did
    cut: bool  # stopped at the limit before ``until_us``


def advance_lane(lane: Lane, until_us: int, body_at: Callable[[float], ScenarioBody],
                 boundaries: Callable[[float, float], list[float]], limit: int = EVENTS_PER_TICK,
                 advance_fn: Advance | None = None) -> Advanced:
    """Advance ``lane`` to shared simulated time ``until_us``, retargeting it at each drill boundary on the way
    (``boundaries(t0, t1)``: simulated seconds in (t0, t1]; ``body_at(t)``: its parameters at t), and stop
    early once ``limit`` work is done. Pure: the lane given is not changed."""
    step = advance_fn or advance
    done, since = 0, lane.at_us / US_PER_SECOND
    while True:
        upcoming = boundaries(since, until_us / US_PER_SECOND)
        b = upcoming[0] if upcoming else None
        target = until_us if b is None else min(until_us, max(lane.at_us, round(b * US_PER_SECOND)))
        while lane.at_us < target:
            if done >= limit:
                return Advanced(lane, done, True)
            before = work_of(lane.states)
            to = min(target, lane.at_us + math.ceil(chunk_us(lane.states[0], len(lane.states), limit - done)))
            if step is advance:  # all replicas at once on the engine's batch path: the same states, bit for bit
                states = advance_replicas(lane.states, to - lane.origin_us)
            else:  # an injected advance (tests): one replica at a time
                states = tuple(step(s, to - lane.origin_us)[0] for s in lane.states)
            lane = replace(lane, states=states)
            done += work_of(lane.states) - before
        if b is None:
            return Advanced(lane, done, False)
        lane, since = with_body(lane, body_at(b)), b  # a drill starts or ends here
