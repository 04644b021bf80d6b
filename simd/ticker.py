"""The tick logic: advance every replica of every scenario to ``speedup`` x the wall time since the start.

The clock is injected (a callable returning monotonic seconds; the daemon passes ``time.monotonic``), so
tests drive it by hand and never sleep. Promises:

- After a tick that read the clock at ``now``, every state is at simulated time
  ``floor(speedup * (now - start) * 1e6)`` microseconds. A late tick, or one standing in for several
  coalesced ones, catches up exactly; nothing is counted twice, and since the engine is tick-size invariant
  the states depend only on that last time, not on how the wall time was cut into ticks.
- All scenarios and replicas share that one simulated clock.
- After each tick a new immutable :class:`~simd.snapshot.Snapshot` replaces the previous one in a single
  reference assignment: a reader sees the previous complete tick or this complete tick, never a mixture.
- Overruns are counted by kind: ``slow`` (a tick that took longer than ``tick_seconds``) and ``missed``
  (a scheduled slot ``start + k * tick_seconds`` in which no tick started: coalesced into a later tick or
  skipped). A tick is assigned to the nearest slot, so a tick more than half an interval late counts the
  slot it was meant for as missed.
"""

from __future__ import annotations

import bisect
import logging
import math
import threading
from collections.abc import Callable
from dataclasses import replace

from simd.config import Config, Scenario, ScenarioBody
from simd.drills import DrillBook
from simd.engine import US_PER_SECOND, State, advance, new_state, retarget
from simd.snapshot import DaemonStats, DrillSnapshot, ScenarioInfo, Snapshot, scenario_info, scenario_snapshot

log = logging.getLogger(__name__)

# Upper bounds of the tick-duration histogram, wall seconds: 1 ms (an idle tick of a small configuration)
# to 10 s (far beyond any tick_seconds the default configuration needs); the 5% CPU budget at one tick per
# second is 50 ms, in the middle.
TICK_DURATION_BOUNDS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 10.0)

# /healthz reports a stall when no tick completed for this many tick intervals plus STALL_GRACE_SECONDS.
STALL_TICKS = 3
STALL_GRACE_SECONDS = 1.0
# Overruns are logged at most once per this many wall seconds (a summary of those since the last line), so
# an overloaded host gets a warning a minute rather than one per tick.
OVERRUN_LOG_SECONDS = 60.0

Clock = Callable[[], float]


class Ticker:
    """Owns the engine states; ``tick()`` advances them and publishes a snapshot."""

    def __init__(self, config: Config, clock: Clock, wall: Clock, speedup: float | None = None,
                 tick_seconds: float | None = None, advance_fn=advance):
        self.speedup = float(config.speedup if speedup is None else speedup)
        self.tick_seconds = float(config.tick_seconds if tick_seconds is None else tick_seconds)
        if not (self.speedup > 0 and math.isfinite(self.speedup)):
            raise ValueError(f"speedup must be a finite number > 0, got {self.speedup}")
        if not (self.tick_seconds > 0 and math.isfinite(self.tick_seconds)):
            raise ValueError(f"tick_seconds must be a finite number > 0, got {self.tick_seconds}")
        self._clock, self._wall, self._advance = clock, wall, advance_fn
        self._lock = threading.Lock()
        self.config = config
        self.book = DrillBook(config)
        self._configured: tuple[Scenario, ...] = config.all_scenarios
        # each scenario's parameters now: as configured, or changed by the drills that run
        self._bodies: list[ScenarioBody] = [self.book.scenario_body(s, s.name, 0.0) for s in self._configured]
        self.states: tuple[tuple[State, ...], ...] = tuple(
            tuple(new_state(b.job_spec(seed)) for seed in s.replica_seeds())
            for s, b in zip(self._configured, self._bodies, strict=True))
        self.infos: tuple[ScenarioInfo, ...] = tuple(
            self._info(s, b, states[0])
            for s, b, states in zip(self._configured, self._bodies, self.states, strict=True))
        self._stalled_until: float | None = None  # a stall drill: no tick runs before this clock() value
        self.start = clock()
        self._slot = 0  # the slot of the last tick (slot 0: the start)
        self._last_done = self.start  # clock at the end of the last tick (the start before any)
        self._pending, self._last_warned = (0, 0), -math.inf  # overruns not logged yet (slow, missed)
        self._stats = DaemonStats(duration_bounds=TICK_DURATION_BOUNDS,
                                  duration_counts=(0,) * (len(TICK_DURATION_BOUNDS) + 1))
        self.snapshot: Snapshot = self._build(0, self._stats)

    def target_us(self, now: float) -> int:
        """The simulated time (microseconds) that wall time ``now`` maps to."""
        return max(0, math.floor(self.speedup * (now - self.start) * US_PER_SECOND))

    def tick(self) -> Snapshot:
        """Advance everything to the simulated time of now, publish and return the new snapshot."""
        with self._lock:
            began = self._clock()
            if self._stalled_until is not None:
                if began < self._stalled_until:  # a stall drill: no tick runs (health and last-tick time show it)
                    return self.snapshot
                self._stalled_until = None
            slot = math.floor((began - self.start) / self.tick_seconds + 0.5)
            missed = max(0, slot - self._slot - 1)
            self._slot = max(self._slot, slot)
            t0 = self.snapshot.simulated_us
            until = max(self.target_us(began), t0)
            # drills start and end at their exact simulated times, whatever the tick size
            for b in self.book.boundaries(t0 / US_PER_SECOND, until / US_PER_SECOND):
                self._advance_all(min(until, round(b * US_PER_SECOND)))
                self._apply_drills(b)
            self._advance_all(until)
            stall = max((self.book.stall_seconds(r.drill)
                         for r in self.book.scheduled_starts(t0 / US_PER_SECOND, until / US_PER_SECOND)), default=0.0)
            self.book.count_scheduled_starts(t0 / US_PER_SECOND, until / US_PER_SECOND)
            scenarios = self._scenarios()
            ended = self._clock()
            duration = max(0.0, ended - began)
            slow = duration > self.tick_seconds
            st = self._stats
            counts = list(st.duration_counts)
            counts[bisect.bisect_left(TICK_DURATION_BOUNDS, duration)] += 1
            self._stats = replace(st, ticks=st.ticks + 1, overruns_slow=st.overruns_slow + slow,
                                  overruns_missed=st.overruns_missed + missed, duration_counts=tuple(counts),
                                  duration_sum=st.duration_sum + duration, last_tick_unix=self._wall())
            self.snapshot = Snapshot(simulated_us=until, speedup=self.speedup, scenarios=scenarios,
                                     daemon=self._stats, drills=self._drills(until))
            self._last_done = ended
            if stall:
                self._stalled_until = ended + stall
        self._report_overruns(ended, slow, missed, duration)
        return self.snapshot

    def _report_overruns(self, now: float, slow: bool, missed: int, duration: float) -> None:
        """Log overruns: each one while they are rare, then one summary per OVERRUN_LOG_SECONDS."""
        if not (slow or missed):
            return
        self._pending = (self._pending[0] + slow, self._pending[1] + missed)
        if now - self._last_warned < OVERRUN_LOG_SECONDS:
            return
        n_slow, n_missed = self._pending
        log.warning("tick overruns: %d slow (the last took %.3f s, tick_seconds %g), %d scheduled tick(s) missed "
                    "(coalesced: the next tick catches up)", n_slow, duration, self.tick_seconds, n_missed)
        self._pending, self._last_warned = (0, 0), now

    def health(self) -> tuple[bool, str]:
        """(True, "ok") while ticks are recent; else (False, why)."""
        limit = STALL_TICKS * self.tick_seconds + STALL_GRACE_SECONDS
        quiet = self._clock() - self._last_done
        if quiet > limit:
            what = "no tick completed since the start" if self._stats.ticks == 0 else "no tick completed"
            return False, f"stalled: {what} for {quiet:.1f} s (limit {limit:g} s = {STALL_TICKS} x tick_seconds + " \
                          f"{STALL_GRACE_SECONDS:g} s)"
        return True, "ok"

    def start_drill(self, name: str, duration_seconds: float | None = None) -> dict:
        """Start drill ``name`` now (at the current simulated time); DrillError (404/409) if it cannot."""
        with self._lock:
            now_us = self.snapshot.simulated_us
            run = self.book.start(name, now_us / US_PER_SECOND, duration_seconds)
            self._apply_drills(run.start)
            stall = self.book.stall_seconds(name)
            if stall:
                self._stalled_until = self._clock() + stall
            self.snapshot = replace(self.snapshot, scenarios=self._scenarios(), drills=self._drills(now_us))
        log.info("drill %s started at simulated second %.0f, until %.0f%s", name, run.start, run.end,
                 f"; ticks stall for {stall:g} wall seconds" if stall else "")
        return {"name": name, "active": True, "start_seconds": run.start, "end_seconds": run.end,
                "stall_seconds": stall}

    def list_drills(self) -> list[dict]:
        with self._lock:
            return self.book.listing(self.snapshot.simulated_us / US_PER_SECOND)

    def _advance_all(self, until: int) -> None:
        self.states = tuple(tuple(self._advance(s, until)[0] for s in states) for states in self.states)

    def _apply_drills(self, t: float) -> None:
        """Retarget the scenarios whose parameters the drills change at simulated second ``t`` (every replica
        is at that time), and refresh their analytic facts (a slower checkpoint moves the optimum)."""
        states, infos = list(self.states), list(self.infos)
        for i, s in enumerate(self._configured):
            body = self.book.scenario_body(s, s.name, t)
            if body == self._bodies[i]:
                continue
            self._bodies[i] = body
            states[i] = tuple(retarget(st, body.job_spec(seed)) for st, seed in zip(states[i], s.replica_seeds(),
                                                                                     strict=True))
            infos[i] = self._info(s, body, states[i][0])
        self.states, self.infos = tuple(states), tuple(infos)

    def _drills(self, until_us: int) -> tuple[DrillSnapshot, ...]:
        t = until_us / US_PER_SECOND
        return tuple(DrillSnapshot(d.name, self.book.active(d.name, t), self.book.starts[d.name])
                     for d in self.config.drills)

    @staticmethod
    def _info(s: Scenario, body: ScenarioBody, state: State) -> ScenarioInfo:
        return scenario_info(s.name, s.sweep, s.replicas, body.stragglers is not None, state,
                             s.slo.goodput_target if s.slo else None, configured=s.job_spec())

    def _scenarios(self):
        return tuple(scenario_snapshot(info, states) for info, states in zip(self.infos, self.states, strict=True))

    def _build(self, until: int, stats: DaemonStats) -> Snapshot:
        return Snapshot(simulated_us=until, speedup=self.speedup, scenarios=self._scenarios(), daemon=stats,
                        drills=self._drills(until))
