"""Live reload of the scenario file (SIGHUP and ``POST /-/reload``), with Prometheus' promises: the new file
is read and validated first; on any error the running configuration stays, the error is logged and
``simd_config_last_reload_successful`` turns 0; on success it turns 1 and
``simd_config_last_reload_success_timestamp_seconds`` is set. What carries over is simd.live.ticker.Ticker.reload's
(unchanged scenarios keep their state, changed ones restart, removed ones disappear from /metrics).

A daemon started on the embedded configuration (no ``--config``) reloads the embedded configuration: a
successful reload that changes nothing.

Any failure while loading or applying the file, whatever its type (a replay log nested too deep for the
parser, a number too large, memory exhausted, a bug), is a refused reload: one line naming the file and what
went wrong (the exception's kind, never the file's content), the previous configuration running on, the gauge
at 0; nothing the refused file made is kept (the replay logs it read are dropped from
simd.scenario.schema's cache). A reload never raises, so SIGHUP never stops the daemon.

One reload at a time. SIGHUP's reload runs on the daemon's main thread and waits for one in progress;
``POST /-/reload`` (:meth:`Reloader.submit`) runs it on a thread of its own, never on the HTTP server's app
threads' work: the request's thread waits for the outcome (at most :data:`RELOAD_WAIT_SECONDS`), and a
request while another reload runs is refused at once (:class:`ReloadBusy`, 409), so health checks and
scrapes keep a free app thread whatever the clients do.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

from simd.scenario import ConfigError, default_config, load_config
from simd.scenario.schema import forget_replay_logs, replay_cache_keys

log = logging.getLogger(__name__)

MAX_LOGGED_ERRORS = 20  # a broken file can have hundreds of errors: the first ones say what is wrong
# How long ``POST /-/reload`` waits for its reload's outcome before answering 202 (the reload goes on; its
# outcome is in simd_config_last_reload_successful and the log): a reload of a file at the limits (50,000
# replicas, replay logs at their limits) takes tens of seconds on a loaded 2-core machine.
RELOAD_WAIT_SECONDS = 120.0
# What an unexpected failure is called in the refused reload's line (the exception's message may quote the
# file: only its kind is shown).
KINDS = {RecursionError: "nested too deep to parse", OverflowError: "a number too large",
         MemoryError: "out of memory", ZeroDivisionError: "a division by zero"}


class ReloadBusy(Exception):
    """Another reload is in progress (the message says which)."""


class ReloadPending(Exception):
    """The reload goes on past RELOAD_WAIT_SECONDS (its outcome: the gauge and the log)."""


def failure(where: str, exc: BaseException, doing: str = "loading") -> str:
    """One line for an unexpected exception while ``doing`` the file at ``where``: its kind, never its text."""
    kind = next((v for k, v in KINDS.items() if isinstance(exc, k)), None)
    return f"{where}: {doing} it failed: {type(exc).__name__}" + (f" ({kind})" if kind else "")


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
        self._running = ""  # the trigger of the reload in progress

    def __call__(self, trigger: str) -> tuple[bool, dict | list[str]]:
        """Reload now (waiting for one in progress): (True, what changed) or (False, the error lines)."""
        with self._lock:
            return self._reload(trigger)

    def submit(self, trigger: str, wait: float | None = None) -> tuple[bool, dict | list[str]]:
        """Reload on a thread of its own and wait for it at most ``wait`` seconds (None: RELOAD_WAIT_SECONDS):
        as ``__call__``;
        ReloadBusy at once if a reload is in progress, ReloadPending if it is still running after ``wait``."""
        if not self._lock.acquire(blocking=False):
            raise ReloadBusy(f"a reload ({self._running or 'another'}) is in progress: retry when it has ended")
        outcome: list = []
        done = threading.Event()

        def work() -> None:
            try:
                outcome.append(self._reload(trigger))
            finally:
                self._lock.release()
                done.set()

        try:
            threading.Thread(target=work, name="simd-reload", daemon=True).start()
        except Exception as exc:  # noqa: BLE001 (no thread to be had: a refused reload, not a 500)
            self._lock.release()
            return self._failed(trigger, self.source or "the embedded configuration", [
                failure(self.source or "the embedded configuration", exc, "starting a thread for")])
        wait = RELOAD_WAIT_SECONDS if wait is None else wait
        if not done.wait(wait):
            raise ReloadPending(f"the reload is still in progress after {wait:g} s: its outcome will be in "
                                "simd_config_last_reload_successful and the daemon's log")
        return outcome[0]

    def _reload(self, trigger: str) -> tuple[bool, dict | list[str]]:
        self._running = trigger
        where = self.source or "the embedded configuration"
        try:
            return self._apply(trigger, where)
        except Exception as exc:  # noqa: BLE001 (a reload never raises: SIGHUP's caller is the main loop)
            return self._failed(trigger, where, [failure(where, exc, "reloading")])
        finally:
            self._running = ""

    def _apply(self, trigger: str, where: str) -> tuple[bool, dict | list[str]]:
        cached = replay_cache_keys()
        try:
            config = load_config(self.source) if self.source else default_config()
        except ConfigError as exc:
            forget_replay_logs(cached)
            return self._failed(trigger, where, exc.errors)
        except Exception as exc:  # noqa: BLE001 (whatever the file makes the loader raise: a refused reload)
            forget_replay_logs(cached)
            return self._failed(trigger, where, [failure(where, exc)])
        overruns = config.tick_overruns(*self.ticker.pace(config))  # at the flags' pace, when given
        if overruns:
            del config
            forget_replay_logs(cached)
            return self._failed(trigger, where, overruns[:3])
        before = self.ticker.tick_seconds
        try:
            result = self.ticker.reload(config)
        except Exception as exc:  # noqa: BLE001 (the running configuration stays, whatever went wrong)
            del config
            forget_replay_logs(cached)
            return self._failed(trigger, where, [failure(where, exc, "applying")])
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
