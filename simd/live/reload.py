"""Live reload of the scenario file (SIGHUP and ``POST /-/reload``), with Prometheus' promises: the new file
is read and validated first; on any error the running configuration stays, the error is logged and
``simd_config_last_reload_successful`` turns 0; on success it turns 1 and
``simd_config_last_reload_success_timestamp_seconds`` is set. What carries over is simd.live.ticker.Ticker.reload's
(unchanged scenarios keep their state, changed ones restart, removed ones disappear from /metrics).

A daemon started on the embedded configuration (no ``--config``) reloads the embedded configuration: a
successful reload that changes nothing. Reloads are serialized (one at a time).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

from simd.scenario import ConfigError, default_config, load_config

log = logging.getLogger(__name__)

MAX_LOGGED_ERRORS = 20  # a broken file can have hundreds of errors: the first ones say what is wrong


class Reloader:
    """``reloader(trigger)`` reloads ``source`` (a path, or None for the embedded configuration) into
    ``ticker``; returns (True, what changed) or (False, the error lines). ``rescheduled(tick_seconds)`` is
    called when the tick interval changed."""

    def __init__(self, ticker, source: str | None, status, rescheduled: Callable[[float], None] | None = None,
                 warmup=None):
        """``warmup`` (simd.live.warmup.Warmup): compiles, in the background, the kernels new scenarios need."""
        self.ticker, self.source, self.status, self.rescheduled = ticker, source, status, rescheduled
        self.warmup = warmup
        self._lock = threading.Lock()

    def __call__(self, trigger: str) -> tuple[bool, dict | list[str]]:
        with self._lock:
            where = self.source or "the embedded configuration"
            try:
                config = load_config(self.source) if self.source else default_config()
            except ConfigError as exc:
                return self._failed(trigger, where, exc.errors)
            before = self.ticker.tick_seconds
            try:
                result = self.ticker.reload(config)
            except Exception as exc:  # noqa: BLE001 (the running configuration stays, whatever went wrong)
                log.exception("reload (%s) of %s failed while applying it", trigger, where)
                return self._failed(trigger, where, [f"{type(exc).__name__}: {exc}"])
            self.status.reloaded(True)
            if self.warmup is not None:
                self.warmup.request(self.ticker.lanes)
            log.info("reload (%s) of %s: %d scenarios kept, %d restarted (changed)%s, %d added%s, %d removed%s",
                     trigger, where, len(result.kept), len(result.restarted), _names(result.restarted),
                     len(result.added), _names(result.added), len(result.removed), _names(result.removed))
            if result.drills_reset:
                log.info("reload: the runs of changed or removed drills were dropped: %s",
                         ", ".join(result.drills_reset))
            for w in config.warnings():
                log.warning("config: %s", w)
            for n in config.notes():
                log.info("config (acknowledged): %s", n)
            if self.ticker.tick_seconds != before and self.rescheduled is not None:
                self.rescheduled(self.ticker.tick_seconds)
            return True, result.as_json()

    def _failed(self, trigger: str, where: str, errors: list[str]) -> tuple[bool, list[str]]:
        self.status.reloaded(False)
        log.error("reload (%s) of %s failed: %d error(s); the previous configuration keeps running", trigger, where,
                  len(errors))
        for line in errors[:MAX_LOGGED_ERRORS]:
            log.error("reload: %s", line)
        if len(errors) > MAX_LOGGED_ERRORS:
            log.error("reload: ... and %d more", len(errors) - MAX_LOGGED_ERRORS)
        return False, errors


def _names(names: tuple[str, ...], limit: int = 10) -> str:
    if not names:
        return ""
    shown = ", ".join(names[:limit]) + (f", ... ({len(names) - limit} more)" if len(names) > limit else "")
    return f" ({shown})"
