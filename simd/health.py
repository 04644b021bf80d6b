"""The tick loop's own health: plain prometheus-client metrics, overrun accounting, and /healthz's check.

The metrics (names, HELP and labels from simd.metric_table's ``health`` rows) live on the registry they are
given, never on prometheus_client's global one: ``simd_ticks_total``, ``simd_tick_duration_seconds``,
``simd_tick_overruns_total{kind}`` and ``simd_last_tick_timestamp_seconds``.

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

from simd.metric_table import BY_NAME

log = logging.getLogger("simd.ticker")  # the tick loop's log (its overruns)

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


def _args(name: str) -> dict:
    row = BY_NAME[name]
    return {"name": row.name, "documentation": row.help, "labelnames": row.labels}


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
        self._slot = 0  # the slot of the last tick (slot 0: the start)
        self._last_done = start  # clock at the end of the last tick (the start before any)
        self._any = False
        self._pending, self._last_warned = (0, 0), -math.inf  # overruns not logged yet (slow, missed)

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
        self._report_overruns(ended, slow, missed, duration)

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
