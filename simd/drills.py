"""Drills: named fault timelines for rehearsing alerting rules (which drills run, and what they change).

A drill applies its effects to its scenarios from its start to ``start + duration_seconds`` of simulated
time. It starts at ``start_at_seconds`` (if configured) or on demand (``DrillBook.start``). The book is a
plain value holder with no clock: the daemon asks it where, inside a tick, the set of active drills
changes (``boundaries``), advances the engine to each boundary and retargets the scenarios whose
parameters changed (``scenario_body``), so a scheduled drill changes the simulation at exactly its
simulated time, whatever the tick size.

Several drills on one scenario compose: rate and checkpoint factors multiply, the stragglers of the
latest-started drill win.
"""

from __future__ import annotations

from dataclasses import dataclass

from simd.config import Config, Drill, DrillEffects, ScenarioBody


class DrillError(Exception):
    """A drill request that cannot be carried out; ``status`` is the HTTP status that says why."""

    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = status


@dataclass(frozen=True)
class Run:
    drill: str
    start: float  # simulated seconds
    end: float
    on_demand: bool


class DrillBook:
    def __init__(self, config: Config):
        self.config = config
        self.runs: list[Run] = [Run(d.name, d.start_at_seconds, d.start_at_seconds + d.duration_seconds, False)
                                for d in config.drills if d.start_at_seconds is not None]
        self.starts: dict[str, int] = {d.name: 0 for d in config.drills}

    def drill(self, name: str) -> Drill:
        try:
            return self.config.drill(name)
        except KeyError:
            raise DrillError(404, f"no drill named {name!r}") from None

    def start(self, name: str, now: float, duration_seconds: float | None = None) -> Run:
        """Start ``name`` at simulated time ``now`` (on demand). 409 if it is running, 404 if unknown."""
        d = self.drill(name)
        if self.active(name, now):
            raise DrillError(409, f"drill {name!r} is already running")
        run = Run(name, now, now + (duration_seconds or d.duration_seconds), True)
        self.runs.append(run)
        self.starts[name] += 1
        return run

    def active(self, name: str, t: float) -> bool:
        return any(r.drill == name and r.start <= t < r.end for r in self.runs)

    def active_runs(self, t: float) -> list[Run]:
        return sorted((r for r in self.runs if r.start <= t < r.end), key=lambda r: r.start)

    def boundaries(self, t0: float, t1: float) -> list[float]:
        """Simulated times in (t0, t1] at which some drill starts or ends."""
        return sorted({x for r in self.runs for x in (r.start, r.end) if t0 < x <= t1})

    def scheduled_starts(self, t0: float, t1: float) -> list[Run]:
        """The scheduled runs starting in [t0, t1): ticks partition time, so each is found once."""
        return [r for r in self.runs if not r.on_demand and t0 <= r.start < t1]

    def count_scheduled_starts(self, t0: float, t1: float) -> None:
        for r in self.scheduled_starts(t0, t1):
            self.starts[r.drill] += 1

    def effects(self, scenario: str, t: float) -> list[DrillEffects]:
        out = []
        for r in self.active_runs(t):
            d = self.config.drill(r.drill)
            if scenario in {s.name for s in self.config.drill_targets(d)}:
                out.append(d.effects)
        return out

    def scenario_body(self, scenario: ScenarioBody, name: str, t: float) -> ScenarioBody:
        """The scenario's parameters at simulated time t, with every active drill's effects."""
        body = scenario
        for e in self.effects(name, t):
            body = body.with_effects(e)
        return body

    def stall_seconds(self, name: str) -> float:
        return self.drill(name).effects.stall_seconds

    def listing(self, t: float) -> list[dict]:
        """For GET /api/v1/drills."""
        out = []
        for d in self.config.drills:
            runs = [r for r in self.runs if r.drill == d.name and r.start <= t]
            last = runs[-1] if runs else None
            out.append({
                "name": d.name,
                "description": d.description,
                "active": self.active(d.name, t),
                "scenarios": [s.name for s in self.config.drill_targets(d)],
                "duration_seconds": d.duration_seconds,
                "start_at_seconds": d.start_at_seconds,
                "last_start_seconds": last.start if last else None,
                "last_end_seconds": last.end if last else None,
            })
        return out
