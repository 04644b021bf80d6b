"""Drills: named fault timelines for rehearsing alerting rules: which drills run, what they change, and how.

A drill applies its effects to its scenarios from its start to ``start + duration_seconds`` of simulated
time. It starts at ``start_at_seconds`` (if configured) or on demand. Three layers, none with a clock of its
own (times are passed in) or an HTTP status:

- :class:`DrillBook`: the runs (scheduled and on demand), which are active when, where inside a stretch of
  simulated time the set of active drills changes (``boundaries``), and each scenario's parameters at a
  simulated time (``scenario_body``). Several drills on one scenario compose: rate and checkpoint factors
  multiply (a cause's rate factors too), the stragglers and crash loops of the latest-started drill win.
- :class:`DrillRunner`: the drills in a running simulation, driven by the tick loop (simd.live.ticker, which
  retargets each scenario's replicas at the boundaries where its parameters change, so a drill changes the
  simulation at exactly its simulated time, whatever the tick size): it counts the scheduled starts, holds
  ticks back while a stall drill runs, starts drills on demand, and carries runs over a reload.
- :class:`DrillControl`: what the control API (simd.daemon.app) calls: the listing, read from the published
  snapshot without taking the tick loop's lock, and on-demand starts through the tick loop.

Requests that cannot be carried out raise :class:`UnknownDrill` or :class:`DrillAlreadyRunning`; the server
maps them to HTTP statuses.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass

from simd.metrics.snapshot import DrillSnapshot, Snapshot
from simd.scenario import Config, Drill, DrillEffects, Scenario, ScenarioBody

log = logging.getLogger(__name__)


class DrillError(Exception):
    """A drill request that cannot be carried out."""


class UnknownDrill(DrillError, LookupError):
    """No drill of that name is configured."""


class DrillAlreadyRunning(DrillError):
    """The drill is running; it can start again once it has ended."""


@dataclass(frozen=True)
class Run:
    drill: str
    start: float  # simulated seconds
    end: float
    on_demand: bool


@dataclass(frozen=True)
class Started:
    """An on-demand start: the run's simulated window and the wall seconds of ticks it holds back."""

    name: str
    start_seconds: float
    end_seconds: float
    stall_seconds: float

    def as_json(self) -> dict:
        return {"name": self.name, "active": True, "start_seconds": self.start_seconds,
                "end_seconds": self.end_seconds, "stall_seconds": self.stall_seconds}


class DrillBook:
    """The runs of the configured drills; a plain value holder (no clock, no simulation)."""

    def __init__(self, config: Config):
        self.config = config
        self.runs: list[Run] = [Run(d.name, d.start_at_seconds, d.start_at_seconds + d.duration_seconds, False)
                                for d in config.drills if d.start_at_seconds is not None]
        self.starts: dict[str, int] = {d.name: 0 for d in config.drills}

    def drill(self, name: str) -> Drill:
        try:
            return self.config.drill(name)
        except KeyError:
            raise UnknownDrill(f"no drill named {name!r}") from None

    def start(self, name: str, now: float, duration_seconds: float | None = None) -> Run:
        """Start ``name`` at simulated time ``now`` (on demand)."""
        d = self.drill(name)
        if self.active(name, now):
            raise DrillAlreadyRunning(f"drill {name!r} is already running")
        run = Run(name, now, now + (duration_seconds or d.duration_seconds), True)
        self.runs.append(run)
        self.starts[name] += 1
        return run

    def active(self, name: str, t: float) -> bool:
        return any(r.drill == name and r.start <= t < r.end for r in self.runs)

    def active_runs(self, t: float) -> list[Run]:
        return sorted((r for r in self.runs if r.start <= t < r.end), key=lambda r: r.start)

    def last_run(self, name: str, t: float) -> Run | None:
        """The run of ``name`` that started last by simulated time ``t``."""
        return max((r for r in self.runs if r.drill == name and r.start <= t), key=lambda r: r.start, default=None)

    def boundaries(self, t0: float, t1: float) -> list[float]:
        """Simulated times in (t0, t1] at which some drill starts or ends."""
        return sorted({x for r in self.runs for x in (r.start, r.end) if t0 < x <= t1})

    def scheduled_starts(self, t0: float, t1: float) -> list[Run]:
        """The scheduled runs starting in [t0, t1): ticks partition time, so each is found once."""
        return [r for r in self.runs if not r.on_demand and t0 <= r.start < t1]

    def count_scheduled_starts(self, t0: float, t1: float) -> list[Run]:
        """Count the scheduled starts in [t0, t1); return those runs."""
        runs = self.scheduled_starts(t0, t1)
        for r in runs:
            self.starts[r.drill] += 1
        return runs

    def effects(self, scenario: str, t: float) -> list[DrillEffects]:
        out = []
        for r in self.active_runs(t):
            d = self.config.drill(r.drill)
            if scenario in {s.name for s in self.config.drill_targets(d)}:
                out.append(d.effects)
        return out

    def scenario_body(self, scenario: ScenarioBody, name: str, t: float) -> ScenarioBody:
        """The scenario's parameters at simulated time t, with every active drill's effects. A scenario that a
        drill gives a crash loop has one that never fails outside it (ScenarioBody.with_crash_loop_counted): its
        per-cause restart counts have the same width before, during and after the drill."""
        body = scenario
        if (loop := self.config.drill_crash_loop(name)) is not None:
            body = body.with_crash_loop_counted(loop)
        for e in self.effects(name, t):
            body = body.with_effects(e)
        return body

    def stall_seconds(self, name: str) -> float:
        return self.drill(name).effects.stall_seconds


class DrillRunner:
    """The drills of a running simulation. The tick loop owns the engine states and the lock; it asks for the
    ``boundaries`` inside each stretch it advances a scenario over and for the scenario's ``body`` at each
    of them (retargeting the replicas when it changed), calls ``stalled`` before a tick, ``scheduled`` once
    per tick and ``hold`` at its end, and ``start`` for an on-demand start."""

    def __init__(self, config: Config):
        self.config = config
        self.book = DrillBook(config)
        self._stalled_until: float | None = None  # a stall drill: no tick runs before this clock value

    def carry_over(self, old: DrillRunner) -> list[str]:
        """Keep the runs, start counts and stall of ``old``'s drills that this configuration defines the same
        way (a reload); return the names of those whose runs were dropped (changed or removed)."""
        kept = {d.name for d in self.config.drills if d in old.config.drills}
        # a kept drill's runs are the old ones (its scheduled run included); the others start anew
        self.book.runs = [r for r in self.book.runs if r.drill not in kept] + [
            r for r in old.book.runs if r.drill in kept]
        for name in kept:
            self.book.starts[name] = old.book.starts[name]
        self._stalled_until = old._stalled_until
        return sorted({r.drill for r in old.book.runs} - kept)

    def body(self, scenario: Scenario, t: float) -> ScenarioBody:
        """The parameters of ``scenario`` at simulated second ``t``: as configured, or changed by the drills
        that run then."""
        return self.book.scenario_body(scenario, scenario.name, t)

    def boundaries(self, t0: float, t1: float) -> list[float]:
        return self.book.boundaries(t0, t1)

    def scheduled(self, t0: float, t1: float) -> float:
        """A tick covers simulated [t0, t1): count the scheduled starts in it; return the longest stall among
        them (wall seconds; the tick loop passes it to ``hold`` when the tick ends)."""
        starts = self.book.count_scheduled_starts(t0, t1)
        return max((self.book.stall_seconds(r.drill) for r in starts), default=0.0)

    def hold(self, now: float, stall: float) -> None:
        """Hold ticks back for ``stall`` wall seconds from clock ``now`` (nothing for 0)."""
        if stall:
            self._stalled_until = now + stall

    def stalled(self, now: float) -> bool:
        """True while a stall drill holds ticks back at clock ``now``."""
        if self._stalled_until is not None and now < self._stalled_until:
            return True
        self._stalled_until = None
        return False

    def start(self, name: str, t: float, duration_seconds: float | None, now: float) -> Started:
        """Start ``name`` on demand at simulated second ``t`` (clock ``now``). The caller retargets at ``t``."""
        run = self.book.start(name, t, duration_seconds)
        stall = self.book.stall_seconds(name)
        self.hold(now, stall)
        log.info("drill %s started at simulated second %.0f, until %.0f%s", name, run.start, run.end,
                 f"; ticks stall for {stall:g} wall seconds" if stall else "")
        return Started(name, run.start, run.end, stall)

    def snapshot(self, t: float) -> tuple[DrillSnapshot, ...]:
        """Every configured drill at simulated second ``t``, with what the listing shows of its definition."""
        out = []
        for d in self.config.drills:
            last = self.book.last_run(d.name, t)
            out.append(DrillSnapshot(
                d.name, self.book.active(d.name, t), self.book.starts[d.name], last.start if last else None,
                last.end if last else None, d.description, tuple(s.name for s in self.config.drill_targets(d)),
                d.duration_seconds, d.start_at_seconds))
        return tuple(out)


class DrillControl:
    """The control API's operations, as plain values (the server turns them into HTTP)."""

    def __init__(self, snapshot: Callable[[], Snapshot], start: Callable[[str, float | None], Started]):
        self._snapshot, self._start = snapshot, start

    def list(self) -> list[dict]:
        """Every drill, as of the published snapshot (no lock: one reference read; a reload publishes a
        snapshot with the new configuration's drills)."""
        return [_listing(d) for d in self._snapshot().drills]

    def get(self, name: str) -> dict:
        for row in self.list():
            if row["name"] == name:
                return row
        raise UnknownDrill(f"no drill named {name!r}")

    def start(self, name: str, duration_seconds: float | None = None) -> dict:
        return self._start(name, duration_seconds).as_json()


def _listing(d: DrillSnapshot) -> dict:
    return {
        "name": d.name,
        "description": d.description,
        "active": d.active,
        "scenarios": list(d.scenarios),
        "duration_seconds": d.duration_seconds,
        "start_at_seconds": d.start_at_seconds,
        "last_start_seconds": d.last_start_seconds,
        "last_end_seconds": d.last_end_seconds,
    }
