"""The tick loop's own health: plain prometheus-client metrics, overrun accounting, and /healthz's check.

The metrics (names, HELP and labels from simd.metrics.table's ``health`` rows) live on the registry they are
given, never on prometheus_client's global one: ``simd_ticks_total``, ``simd_tick_duration_seconds``,
``simd_tick_overruns_total{kind}``, ``simd_last_tick_timestamp_seconds`` and ``simd_tick_errors_total``
(a scenario's advance raised: simd.live.ticker quarantines it).

Overruns are counted by kind: ``slow`` (a tick that took longer than ``tick_seconds``) and ``missed`` (a
scheduled slot ``start + k * tick_seconds`` in which no tick started: coalesced into a later tick or
skipped). A tick is assigned to the nearest slot, so a tick more than half an interval late counts the slot
it was meant for as missed. Overruns are logged, each while they are rare, then one summary a minute.

The tick loop records a tick right after publishing its snapshot, so a scrape in between sees the new
tick's simulation with the previous tick's count (the simulation's own samples are always one whole tick).
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable

from prometheus_client import Counter, Gauge, Histogram
from prometheus_client.registry import CollectorRegistry

from simd.metrics.table import client_args as _args

log = logging.getLogger("simd.live.ticker")  # the tick loop's log (its overruns)

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


class TickHealth:
    """Records each completed tick (``done``) and answers /healthz (``status``)."""

    def __init__(self, start: float, tick_seconds: float, clock: Clock, wall: Clock, registry: CollectorRegistry):
        self.start, self.tick_seconds, self._clock, self._wall = start, tick_seconds, clock, wall
        self.ticks = Counter(**_args("simd_ticks"), registry=registry)
        self.duration = Histogram(**_args("simd_tick_duration_seconds"), buckets=TICK_DURATION_BOUNDS,
                                  registry=registry)
        overruns = Counter(**_args("simd_tick_overruns"), registry=registry)
        self.slow, self.missed = overruns.labels(kind="slow"), overruns.labels(kind="missed")
        self.last_tick = Gauge(**_args("simd_last_tick_timestamp_seconds"), registry=registry)
        self.errors = Counter(**_args("simd_tick_errors"), registry=registry)
        self.ready = Gauge(**_args("simd_ready"), registry=registry)
        self._is_ready: bool | None = None
        self._slot = 0  # the slot of the last tick (slot 0: the start)
        self.generation = 0  # counts the ticks recorded (simd.daemon.scrape reuses a rendering until it changes)
        self._last_done = start  # clock at the end of the last tick (the start before any)
        self._any = False
        self._pending, self._last_warned = (0, 0), -math.inf  # overruns not logged yet (slow, missed)
        self._event_overruns, self._events_warned = 0, -math.inf  # work-limit overruns not logged yet

    def done(self, began: float, ended: float) -> None:
        """A tick that started at clock ``began`` completed at ``ended``."""
        slot = math.floor((began - self.start) / self.tick_seconds + 0.5)
        missed = max(0, slot - self._slot - 1)
        self._slot = max(self._slot, slot)
        duration = max(0.0, ended - began)
        slow = duration > self.tick_seconds
        self.ticks.inc()
        self.duration.observe(duration)
        self.slow.inc(slow)
        self.missed.inc(missed)
        self.last_tick.set(self._wall())
        self._last_done, self._any = ended, True
        self.generation += 1
        self._report_overruns(ended, slow, missed, duration)

    def set_ready(self, ready: bool) -> None:
        """The tick loop's readiness (simd.live.ticker.Ticker.readiness) changed or was computed again."""
        if self._is_ready != ready:
            self._is_ready = ready
            self.ready.set(1 if ready else 0)
            self.generation += 1  # a rendering of /metrics that shows the old value is stale

    def retime(self, now: float, tick_seconds: float) -> None:
        """The ticks are rescheduled every ``tick_seconds`` from ``now`` (a reload changed the interval)."""
        self.start, self.tick_seconds, self._slot = now, tick_seconds, 0

    def event_overrun(self, scenario: str, work: float, limit: float, behind_seconds: float) -> None:
        """A scenario reached its work limit in a tick (simd.live.lane): logged while rare, then once a minute."""
        now = self._clock()
        self._event_overruns += 1
        if now - self._events_warned < OVERRUN_LOG_SECONDS:
            return
        log.warning("scenario %s reached the work limit of a tick (%.0f ms of estimated engine CPU, limit %.0f ms) "
                    "and is %.0f simulated "
                    "seconds behind (it catches up exactly when it can); %d such overrun(s) since the last line",
                    scenario, work / 1e3, limit / 1e3, behind_seconds, self._event_overruns)
        self._event_overruns, self._events_warned = 0, now

    def status(self) -> tuple[bool, str]:
        """(True, "ok") while ticks are recent; else (False, why)."""
        limit = STALL_TICKS * self.tick_seconds + STALL_GRACE_SECONDS
        quiet = self._clock() - self._last_done
        if quiet > limit:
            what = "no tick completed" if self._any else "no tick completed since the start"
            return False, f"stalled: {what} for {quiet:.1f} s (limit {limit:g} s = {STALL_TICKS} x tick_seconds + " \
                          f"{STALL_GRACE_SECONDS:g} s)"
        return True, "ok"

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


class DaemonStatus:
    """The daemon's configuration reloads and state saves, as plain prometheus-client gauges and a counter on
    ``registry``: ``simd_config_last_reload_successful`` and ``simd_config_last_reload_success_timestamp_seconds``
    (as Prometheus exports its own; both say success at start), ``simd_state_last_save_timestamp_seconds`` and
    ``simd_state_save_errors_total``."""

    def __init__(self, registry: CollectorRegistry, wall: Clock):
        self._wall = wall
        self.reload_ok = Gauge(**_args("simd_config_last_reload_successful"), registry=registry)
        self.reload_time = Gauge(**_args("simd_config_last_reload_success_timestamp_seconds"), registry=registry)
        self.last_save = Gauge(**_args("simd_state_last_save_timestamp_seconds"), registry=registry)
        self.save_errors = Counter(**_args("simd_state_save_errors"), registry=registry)
        self.generation = 0  # changes whenever a value here does (simd.daemon.scrape reuses a rendering until then)
        self.reload_successful = True
        self.reloaded(True)

    def reloaded(self, ok: bool) -> None:
        self.reload_successful = ok
        self.reload_ok.set(1 if ok else 0)
        if ok:
            self.reload_time.set(self._wall())
        self.generation += 1

    def saved(self, wall: float) -> None:
        self.last_save.set(wall)
        self.generation += 1

    def save_failed(self) -> None:
        self.save_errors.inc()
        self.generation += 1
