"""The daemon's kernels, compiled off its critical path: a background thread compiles (or loads from the cache)
the units of the engine its scenarios run on (simd.engine.kernels), while the daemon already serves.

Until a scenario's units are ready the tick loop leaves it where it is: the shared simulated clock runs as
usual and the scenario is reported behind it (``simd_scenario_behind_seconds``), then catches up exactly (the
engine is tick-size invariant) within the per-tick work limit. Running it meanwhile on the engine's Python
reference path instead, which the tests prove bit-identical, was the alternative; it was not chosen: that
path costs 20-100x the kernel's CPU per event, it would take CPU from the compilation on a 2-core machine,
and the work limit would let it advance only a sliver of the clock anyway, for a second way of running a
lane that the daemon would have to get right.

Exports ``simd_engine_kernel_cache_info`` (where the kernels are cached, simd.kernelcache) and
``simd_engine_compile_seconds`` (how long the kernels took to be ready: seconds on a first start on a
machine, a fraction of one from the cache).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterable

from prometheus_client import Gauge
from prometheus_client.registry import CollectorRegistry

from simd import kernelcache
from simd.engine import kernels
from simd.metrics.table import client_args as _args
from simd.offline import precompile

log = logging.getLogger("simd.kernels")


def plan_units(states) -> tuple[str, ...]:
    """The kernel units a lane's replicas run on (they share one plan shape)."""
    return kernels.units_of(states[0].plan) if len(states) else ()


class Warmup:
    """Compiles units in one background thread, one request after another; ``ready(lane)`` says whether a
    lane's units are compiled in this process."""

    def __init__(self, registry: CollectorRegistry | None = None):
        self._queue: list[tuple[str, ...]] = []
        self._given_up: set[str] = set()  # units whose compilation raised: their lanes compile them on their tick
        self._cond = threading.Condition()
        self._thread: threading.Thread | None = None
        self.seconds: float | None = None  # wall seconds until the first request's units were ready
        self._compile_gauge = None
        if registry is not None:
            choice = kernelcache.current()
            info = Gauge(**_args("simd_engine_kernel_cache_info"), registry=registry)
            info.labels(source=choice.source, path=choice.path or "").set(1)
            self._compile_gauge = Gauge(**_args("simd_engine_compile_seconds"), registry=registry)
            self._compile_gauge.set(float("nan"))

    def ready(self, lane) -> bool:
        return all(precompile.compiled((u,)) or u in self._given_up for u in plan_units(lane.states))

    def missing(self, lanes: Iterable) -> tuple[str, ...]:
        """The units the lanes need that are not compiled yet, in kernels.UNITS order."""
        need = {u for lane in lanes for u in plan_units(lane.states)}
        return tuple(u for u in kernels.UNITS if u in need and not precompile.compiled((u,)))

    def request(self, lanes: Iterable) -> tuple[str, ...]:
        """Compile, in the background, what ``lanes`` need and is not compiled; returns those units."""
        units = self.missing(lanes)
        if not units:
            if self.seconds is None:
                self._done(0.0)
            return units
        with self._cond:
            self._queue.append(units)
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="simd-compile", daemon=True)
                self._thread.start()
            self._cond.notify()
        return units

    def _run(self) -> None:
        while True:
            with self._cond:
                while not self._queue:
                    self._cond.wait()
                units = self._queue.pop(0)
            t0 = time.monotonic()
            log.info("kernels: preparing %s (compiled on a first start, loaded from the cache after); "
                     "/metrics answers meanwhile, the scenarios that need them wait behind the clock",
                     ", ".join(units))
            # which units numba's cache holds for this CPU and these sources, read before: the log line says
            # whether a start compiled or loaded (what an operator checks when a start is slow)
            cached = [u for u in units if kernels.compiled() and precompile.in_cache(u)]
            try:
                precompile.warm(units)
            except Exception:  # noqa: BLE001 (the scenarios compile lazily on their first tick instead)
                self._given_up.update(units)
                log.exception("kernels: preparing %s failed; the scenarios compile them on their first tick",
                              ", ".join(units))
            else:
                how = ("loaded from the kernel cache" if len(cached) == len(units)
                       else "compiled" if not cached else f"compiled; {', '.join(cached)} loaded from the kernel cache")
                log.info("kernels: %s ready in %.1f s (%s)", ", ".join(units), time.monotonic() - t0, how)
            took = time.monotonic() - t0
            if self.seconds is None:
                self._done(took)

    def _done(self, seconds: float) -> None:
        self.seconds = seconds
        if self._compile_gauge is not None:
            self._compile_gauge.set(seconds)
