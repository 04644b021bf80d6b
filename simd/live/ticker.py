"""The tick loop: advance every scenario (simd.live.lane) to ``speedup`` x the wall time since the start, and
publish a snapshot.

The clock is injected (a callable returning monotonic seconds; the daemon passes ``time.monotonic``), so
tests drive it by hand and never sleep. Promises:

- After a tick that read the clock at ``now``, the shared simulated clock is at
  ``floor(speedup * (now - start) * 1e6)`` microseconds (plus where a resumed snapshot left it), and every
  lane is there unless it is behind: it reached its work limit this tick (counted, caught up exactly by the
  next ticks) or it is quarantined. A late tick, or one standing in for several coalesced ones, catches up
  exactly; nothing is counted twice, and since the engine is tick-size invariant the states depend only on
  the simulated time reached, not on how the wall time was cut into ticks.
- After each tick a new immutable :class:`~simd.metrics.snapshot.Snapshot` replaces the previous one in a single
  reference assignment: a reader sees the previous complete tick or this complete tick, never a mixture,
  and never waits for the tick's lock.
- A lane whose advance raises is quarantined (``failed``: exported, logged once with its cause, counted in
  ``simd_tick_errors_total``); the other lanes go on.
- Per tick, each lane does at most ``work_limit`` work (estimated CPU microseconds of the engine, simd.live.lane);
  and once a tick has run for ``tick_seconds`` it leaves the remaining lanes where they are (behind) for the
  next tick, which starts with the lanes furthest behind.
- ``reload(config)`` swaps in a new configuration between ticks: an unchanged scenario (same
  simd.live.lane.scenario_key) keeps its lane, a changed or new one starts fresh at the current simulated time, a
  removed one disappears; unchanged drills keep their runs.

What the drills do (their boundaries, stalls, on-demand starts) is simd.live.drills.DrillRunner's; the loop's
own health (tick counts, durations, overruns, /healthz) is simd.metrics.health.TickHealth's, on ``registry``.
``speedup`` and ``tick_seconds`` are valid values of the configuration's types (simd.scenario; the CLI flags
are parsed with them); given here they override the file's, also across reloads.
"""

from __future__ import annotations

import logging
import math
import threading
from collections.abc import Callable
from dataclasses import dataclass, replace

from prometheus_client.registry import CollectorRegistry

from simd.engine import US_PER_SECOND, State, advance
from simd.live.drills import DrillRunner, Started
from simd.live.lane import WORK_LIMIT_US, Lane, advance_lane, counts_restarts, new_lane, scenario_key, with_body
from simd.metrics.health import TickHealth
from simd.metrics.snapshot import ScenarioInfo, Snapshot
from simd.scenario import Config

log = logging.getLogger(__name__)

Clock = Callable[[], float]


@dataclass(frozen=True)
class Reloaded:
    """What a reload did, by scenario name."""

    kept: tuple[str, ...]
    restarted: tuple[str, ...]  # changed: started fresh
    added: tuple[str, ...]
    removed: tuple[str, ...]
    drills_reset: tuple[str, ...]  # drills whose runs were dropped (changed or removed)

    def as_json(self) -> dict:
        return {k: list(v) for k, v in self.__dict__.items()}


class Ticker:
    """Owns the lanes; ``tick()`` advances them and publishes a snapshot."""

    def __init__(self, config: Config, clock: Clock, wall: Clock, speedup: float | None = None,
                 tick_seconds: float | None = None, advance_fn=advance, registry: CollectorRegistry | None = None,
                 work_limit: float = WORK_LIMIT_US, lanes: tuple[Lane, ...] | None = None, at_us: int = 0,
                 drills: DrillRunner | None = None, lane_ready: Callable[[Lane], bool] | None = None):
        """``lanes``, ``at_us`` and ``drills``: resume where a saved state left off (simd.live.persist).
        ``lane_ready(lane)``: whether the engine's kernels for the lane are compiled (simd.live.warmup); a lane that
        is not ready is left where it is, behind the clock. None: every lane is."""
        self.lane_ready = lane_ready or (lambda lane: True)
        self.ready = False  # the kernels of every lane ready and every lane caught up (latched; see readiness)
        self.waiting: tuple[str, ...] = ()  # why not ready, for /-/ready
        self._speedup_flag, self._tick_flag = speedup, tick_seconds
        self.speedup = float(config.speedup if speedup is None else speedup)
        self.tick_seconds = float(config.tick_seconds if tick_seconds is None else tick_seconds)
        self._clock, self._advance, self.work_limit = clock, advance_fn, work_limit
        self._lock = threading.Lock()
        self.config = config
        self.drills = drills or DrillRunner(config)
        self.lanes: tuple[Lane, ...] = lanes if lanes is not None else tuple(
            new_lane(s, self.drills.body(s, at_us / US_PER_SECOND), at_us) for s in config.all_scenarios)
        self.start = clock()  # the wall clock reading at which the shared simulated clock was at_us
        self._anchor_us = at_us
        self.registry = CollectorRegistry() if registry is None else registry
        self.health = TickHealth(self.start, self.tick_seconds, clock, wall, self.registry)
        self.snapshot: Snapshot = self._snapshot(at_us)
        self._readiness(at_us)

    def pace(self, config: Config) -> tuple[float, float]:
        """(speedup, tick_seconds) the ticker runs ``config`` at: the command line's flags over the file's."""
        return (float(config.speedup if self._speedup_flag is None else self._speedup_flag),
                float(config.tick_seconds if self._tick_flag is None else self._tick_flag))

    # --- views kept for callers that index scenarios by position -------------------------------------
    @property
    def states(self) -> tuple[tuple[State, ...], ...]:
        return tuple(lane.states for lane in self.lanes)

    @property
    def infos(self) -> tuple[ScenarioInfo, ...]:
        return tuple(lane.info for lane in self.lanes)

    def target_us(self, now: float) -> int:
        """The simulated time (microseconds) that wall time ``now`` maps to."""
        return max(0, self._anchor_us + math.floor(self.speedup * (now - self.start) * US_PER_SECOND))

    def tick(self) -> Snapshot:
        """Advance everything to the simulated time of now, publish and return the new snapshot."""
        with self._lock:
            began = self._clock()
            if self.drills.stalled(began):  # a stall drill: no tick runs (health and last-tick time show it)
                return self.snapshot
            t0 = self.snapshot.simulated_us
            until = max(self.target_us(began), t0)
            self.lanes = self._advance_lanes(until, began)
            stall = self.drills.scheduled(t0 / US_PER_SECOND, until / US_PER_SECOND)
            snapshot = self._snapshot(until)
            self._readiness(until)
            ended = self._clock()
            self.drills.hold(ended, stall)
            self.snapshot = snapshot
            self.health.done(began, ended)
        return snapshot

    def _advance_lanes(self, until: int, began: float) -> tuple[Lane, ...]:
        lanes = list(self.lanes)
        # the lanes furthest behind first, so that a tick cut short by its time budget starves none
        for i in sorted(range(len(lanes)), key=lambda k: lanes[k].at_us):
            lane = lanes[i]
            if lane.failed is not None or lane.at_us >= until:
                continue
            if self._clock() - began > self.tick_seconds:
                continue  # this tick is over its time: the lane waits for the next one (behind meanwhile)
            if not self.lane_ready(lane):
                continue  # its kernels are being compiled (simd.live.warmup): behind meanwhile, caught up after
            try:
                out = advance_lane(lane, until, lambda t, s=lane.scenario: self.drills.body(s, t),
                                   self.drills.boundaries, self.work_limit, self._advance)
            except Exception as exc:  # noqa: BLE001 (any failure of one scenario must not stop the others)
                lanes[i] = self._quarantine(lane, exc)
                continue
            lanes[i] = out.lane if not out.cut else replace(out.lane, overruns=out.lane.overruns + 1)
            if out.cut:
                self.health.event_overrun(lane.scenario.name, out.work, self.work_limit,
                                          (until - out.lane.at_us) / US_PER_SECOND)
        return tuple(lanes)

    def _readiness(self, until_us: int) -> None:
        """Readiness (GET /-/ready, ``simd_ready``): every lane's kernels are compiled and every lane that is not
        quarantined has reached the shared clock once since the start or the last reload; it then stays
        ready (a later work-limit overrun is ``simd_scenario_behind_seconds``' to show, not a reason to stop
        being ready)."""
        if self.ready:
            return
        compiling = [lane.scenario.name for lane in self.lanes if not self.lane_ready(lane)]
        behind = [lane.scenario.name for lane in self.lanes if lane.failed is None and lane.at_us < until_us]
        self.waiting = tuple(f"{n}: kernels compiling" for n in compiling) + tuple(
            f"{n}: catching up" for n in behind if n not in compiling)
        self.ready = not self.waiting
        self.health.set_ready(self.ready)

    def readiness(self) -> tuple[bool, str]:
        """(True, "ready") or (False, why), for GET /-/ready."""
        if self.ready:
            return True, "ready"
        shown = ", ".join(self.waiting[:5]) + (f" and {len(self.waiting) - 5} more" if len(self.waiting) > 5 else "")
        return False, f"not ready: {shown}"

    def _quarantine(self, lane: Lane, exc: Exception) -> Lane:
        cause = f"{type(exc).__name__}: {exc}"
        self.health.errors.inc()
        log.error("scenario %s failed at simulated second %.0f and is quarantined (simd_scenario_failed 1; its "
                  "counters stay where they were; a reload that changes it restarts it): %s", lane.scenario.name,
                  lane.at_us / US_PER_SECOND, cause, exc_info=exc)
        return replace(lane, failed=cause[:500])

    def start_drill(self, name: str, duration_seconds: float | None = None) -> Started:
        """Start drill ``name`` now (at the current simulated time) and publish the changed parameters;
        simd.live.drills.UnknownDrill or DrillAlreadyRunning if it cannot."""
        with self._lock:
            now_us = self.snapshot.simulated_us
            t = now_us / US_PER_SECOND
            started = self.drills.start(name, t, duration_seconds, self._clock())
            # the lanes at the current time change now; a lane behind meets the start as a boundary later
            self.lanes = tuple(self._rebody(lane, t) if lane.at_us == now_us and lane.failed is None else lane
                               for lane in self.lanes)
            self.snapshot = self._snapshot(now_us)
        return started

    def _rebody(self, lane: Lane, t: float) -> Lane:
        try:
            return with_body(lane, self.drills.body(lane.scenario, t))
        except Exception as exc:  # noqa: BLE001 (as in a tick: one scenario's failure stops no other)
            return self._quarantine(lane, exc)

    def reload(self, config: Config) -> Reloaded:
        """Swap in ``config`` (validated already) between two ticks; see the module docstring. Everything new
        is built before anything is replaced, so an exception leaves the running configuration as it was.

        The lanes of new and changed scenarios (the costly part: every replica's plan compiled and drawn) are
        built outside the tick loop's lock, at the shared time the reload read; ticks go on meanwhile, and the
        swap under the lock only retargets those lanes to the drills as they are then (a drill may have started
        in between) and takes the unchanged lanes as the ticks left them. A fresh lane that a tick has passed
        meanwhile is behind the shared clock and catches up exactly at the next ticks."""
        with self._lock:
            now_us = self.snapshot.simulated_us
            old = {lane.scenario.name: lane for lane in self.lanes}
            drills = DrillRunner(config)
            drills.carry_over(self.drills)
        fresh = {s.name: new_lane(s, drills.body(s, now_us / US_PER_SECOND), now_us)
                 for s in config.all_scenarios
                 if s.name not in old or old[s.name].key != scenario_key(s) or _recounted(old[s.name], s, drills)}
        with self._lock:
            drills = DrillRunner(config)
            reset = drills.carry_over(self.drills)
            current = {lane.scenario.name: lane for lane in self.lanes}
            lanes, kept, restarted, added = [], [], [], []
            for s in config.all_scenarios:
                lane = current.get(s.name)
                if s.name in fresh or lane is None or lane.key != scenario_key(s) or _recounted(lane, s, drills):
                    new = fresh.get(s.name) or new_lane(s, drills.body(s, now_us / US_PER_SECOND), now_us)
                    lanes.append(with_body(new, drills.body(s, new.at_us / US_PER_SECOND)))
                    (restarted if s.name in old else added).append(s.name)
                elif lane.failed is None:
                    # the same scenario: its state goes on; drills that changed may change its parameters
                    lanes.append(with_body(replace(lane, scenario=s), drills.body(s, lane.at_us / US_PER_SECOND)))
                    kept.append(s.name)
                else:
                    lanes.append(replace(lane, scenario=s))  # still quarantined: the same inputs fail again
                    kept.append(s.name)
            removed = tuple(n for n in current if n not in {s.name for s in config.all_scenarios})
            speedup, tick_seconds = self.pace(config)
            # nothing has been replaced yet; from here on nothing raises
            now = self._clock()
            shared_us = self.snapshot.simulated_us
            self._anchor_us, self.start = max(self.target_us(now), shared_us), now  # the clock goes on from here
            self.config, self.drills, self.lanes, self.speedup = config, drills, tuple(lanes), speedup
            if tick_seconds != self.tick_seconds:
                self.tick_seconds = tick_seconds
                self.health.retime(now, tick_seconds)
            self.snapshot = self._snapshot(shared_us)
            self.ready = False  # until the new lanes are compiled and current (normally: now)
            self._readiness(shared_us)
        return Reloaded(tuple(kept), tuple(restarted), tuple(added), removed, tuple(reset))

    def saved(self) -> tuple[int, tuple[Lane, ...], DrillRunner]:
        """What simd.live.persist writes: the shared clock, the lanes and the drills, as of the last tick (taken
        under the lock, so never half a tick; the lanes are immutable)."""
        with self._lock:
            return self.snapshot.simulated_us, self.lanes, self.drills

    def _snapshot(self, until_us: int) -> Snapshot:
        return Snapshot(simulated_us=until_us, speedup=self.speedup,
                        scenarios=tuple(lane.snapshot(until_us) for lane in self.lanes),
                        drills=self.drills.snapshot(until_us / US_PER_SECOND))


def _recounted(lane: Lane, scenario, drills: DrillRunner) -> bool:
    """Whether a reload switches the per-cause restart counts of ``lane``'s scenario on or off (a crash-loop drill
    added or removed, lane.counts_restarts): no retarget can, so the lane starts anew, as a changed scenario does."""
    return counts_restarts(lane.body) != counts_restarts(drills.body(scenario, lane.at_us / US_PER_SECOND))
