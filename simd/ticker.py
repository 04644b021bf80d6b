"""The tick loop: advance every replica of every scenario to ``speedup`` x the wall time since the start, and
publish a snapshot.

The clock is injected (a callable returning monotonic seconds; the daemon passes ``time.monotonic``), so
tests drive it by hand and never sleep. Promises:

- After a tick that read the clock at ``now``, every state is at simulated time
  ``floor(speedup * (now - start) * 1e6)`` microseconds. A late tick, or one standing in for several
  coalesced ones, catches up exactly; nothing is counted twice, and since the engine is tick-size invariant
  the states depend only on that last time, not on how the wall time was cut into ticks.
- All scenarios and replicas share that one simulated clock.
- After each tick a new immutable :class:`~simd.snapshot.Snapshot` replaces the previous one in a single
  reference assignment: a reader sees the previous complete tick or this complete tick, never a mixture.

What the drills do (retargeting at their exact simulated times, stalls, on-demand starts) is
simd.drills.DrillRunner's; the loop's own health (tick counts, durations, overruns, /healthz) is
simd.health.TickHealth's, on ``registry``. ``speedup`` and ``tick_seconds`` are valid values of the
configuration's types (simd.config; the CLI flags are parsed with them).
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable

from prometheus_client.registry import CollectorRegistry

from simd.config import Config
from simd.drills import DrillRunner, Started
from simd.engine import US_PER_SECOND, State, advance, new_state
from simd.health import TickHealth
from simd.snapshot import ScenarioInfo, Snapshot, scenario_info, scenario_snapshot

Clock = Callable[[], float]


class Ticker:
    """Owns the engine states; ``tick()`` advances them and publishes a snapshot."""

    def __init__(self, config: Config, clock: Clock, wall: Clock, speedup: float | None = None,
                 tick_seconds: float | None = None, advance_fn=advance, registry: CollectorRegistry | None = None):
        self.speedup = float(config.speedup if speedup is None else speedup)
        self.tick_seconds = float(config.tick_seconds if tick_seconds is None else tick_seconds)
        self._clock, self._advance = clock, advance_fn
        self._lock = threading.Lock()
        self.config = config
        self.drills = DrillRunner(config)
        self._scenarios = config.all_scenarios
        self.states: tuple[tuple[State, ...], ...] = tuple(
            tuple(new_state(spec) for spec in self.drills.specs(i)) for i in range(len(self._scenarios)))
        self.infos: tuple[ScenarioInfo, ...] = tuple(self._info(i) for i in range(len(self._scenarios)))
        self.start = clock()
        self.registry = CollectorRegistry() if registry is None else registry
        self.health = TickHealth(self.start, self.tick_seconds, clock, wall, self.registry)
        self.snapshot: Snapshot = self._snapshot(0)

    def target_us(self, now: float) -> int:
        """The simulated time (microseconds) that wall time ``now`` maps to."""
        return max(0, math.floor(self.speedup * (now - self.start) * US_PER_SECOND))

    def tick(self) -> Snapshot:
        """Advance everything to the simulated time of now, publish and return the new snapshot."""
        with self._lock:
            began = self._clock()
            if self.drills.stalled(began):  # a stall drill: no tick runs (health and last-tick time show it)
                return self.snapshot
            t0 = self.snapshot.simulated_us
            until = max(self.target_us(began), t0)
            # drills start and end at their exact simulated times, whatever the tick size
            for b in self.drills.boundaries(t0 / US_PER_SECOND, until / US_PER_SECOND):
                self._advance_all(min(until, round(b * US_PER_SECOND)))
                self._retarget(b)
            self._advance_all(until)
            stall = self.drills.scheduled(t0 / US_PER_SECOND, until / US_PER_SECOND)
            snapshot = self._snapshot(until)
            ended = self._clock()
            self.drills.hold(ended, stall)
            self.snapshot = snapshot
            self.health.done(began, ended)
        return snapshot

    def start_drill(self, name: str, duration_seconds: float | None = None) -> Started:
        """Start drill ``name`` now (at the current simulated time) and publish the changed parameters;
        simd.drills.UnknownDrill or DrillAlreadyRunning if it cannot."""
        with self._lock:
            now_us = self.snapshot.simulated_us
            started = self.drills.start(name, now_us / US_PER_SECOND, duration_seconds, self._clock())
            self._retarget(started.start_seconds)
            self.snapshot = self._snapshot(now_us)
        return started

    def _advance_all(self, until: int) -> None:
        self.states = tuple(tuple(self._advance(s, until)[0] for s in states) for states in self.states)

    def _retarget(self, t: float) -> None:
        """Apply the drills' parameters at simulated second ``t`` (every replica is at that time), and refresh
        the changed scenarios' analytic facts (a slower checkpoint moves the optimum)."""
        states, changed = self.drills.retarget(t, self.states)
        self.states = tuple(states)
        if changed:
            infos = list(self.infos)
            for i in changed:
                infos[i] = self._info(i)
            self.infos = tuple(infos)

    def _info(self, i: int) -> ScenarioInfo:
        return scenario_info(self._scenarios[i], self.drills.bodies[i], self.states[i][0])

    def _snapshot(self, until_us: int) -> Snapshot:
        scenarios = tuple(scenario_snapshot(info, states) for info, states in zip(self.infos, self.states,
                                                                                  strict=True))
        return Snapshot(simulated_us=until_us, speedup=self.speedup, scenarios=scenarios,
                        drills=self.drills.snapshot(until_us / US_PER_SECOND))
