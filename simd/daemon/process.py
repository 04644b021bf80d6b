"""``simd run``: the daemon. Wires the tick logic (ticker.py) to the wall clock, an APScheduler interval job,
the HTTP endpoint (server.py, exporter.py), live reload (reload.py), the state directory (persist.py) and the
signals. The only module that reads a clock.

Lifecycle: validate, take the state directory and bind first (a bad address, a port in use or a state
directory held by another daemon fails before anything runs), resume the saved state if there is one, then
serve and tick, saving the state every ``save_every_ticks`` ticks (on a thread of its own: simd.live.persist.Saver).
On SIGTERM or SIGINT: finish the tick in progress, stop serving, save the state, return 0 (1 when that save fails).

Signals: SIGTERM, SIGINT stop; SIGHUP reloads the scenario file (as ``POST /-/reload``); SIGUSR1 logs a
summary of the state (every scenario's clock, lag, quarantine and overruns; the drills; the last reload);
SIGQUIT writes every thread's stack to stderr and goes on (faulthandler; as the JVM does); SIGUSR2 is
logged and ignored. SIGPIPE stays ignored (Python's default: a client gone mid-response is the server's
error to handle). Every other signal has its default action (SIGKILL and SIGSTOP cannot be handled).

Exit codes: 0 after a signal, 1 when the address cannot be bound (e.g. port in use) or the state directory
cannot be used, 2 when the address cannot be resolved (``cli`` maps bad flags and configuration errors to 2
before calling in here).
"""

from __future__ import annotations

import faulthandler
import gc
import logging
import queue
import signal
import socket
import sys
import threading
import time
from dataclasses import dataclass

from apscheduler.executors.pool import ThreadPoolExecutor
from apscheduler.schedulers.background import BackgroundScheduler

from simd import __version__, kernelcache
from simd.daemon.app import make_app
from simd.daemon.listen import DEFAULT_LISTEN, parse_listen
from simd.daemon.waitress_adapter import HttpServer
from simd.engine import US_PER_SECOND
from simd.live.drills import DrillControl
from simd.live.persist import Resumed, Saver, StateDir, StateDirBusy, StateError, resume
from simd.live.reload import Reloader
from simd.live.ticker import Ticker
from simd.live.warmup import Warmup
from simd.metrics.collector import new_registry
from simd.metrics.health import DaemonStatus
from simd.scenario import Config

log = logging.getLogger(__name__)

EXIT_OK, EXIT_RUNTIME, EXIT_USAGE = 0, 1, 2
# Save the state every this many ticks (10 s at the default tick): a kill -9 loses at most that much wall time.
SAVE_EVERY_TICKS = 10


def setup_logging() -> None:
    """Logs on stderr. APScheduler logs only errors (a failing tick, with its traceback): its per-run INFO lines
    are noise, and its "skipped: maximum number of running instances" warnings are the overruns the ticker
    already counts and logs (at most once a minute). waitress' "task queue depth" warning fires on every
    request that waits for a free thread: a burst of scrapers is normal, not a warning."""
    if not logging.getLogger().handlers:
        logging.basicConfig(stream=sys.stderr, level=logging.INFO,
                            format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    logging.getLogger("apscheduler").setLevel(logging.ERROR)
    logging.getLogger("waitress.queue").setLevel(logging.ERROR)


def run(config: Config, listen: str | tuple[str, int] = DEFAULT_LISTEN, speedup: float | None = None,
        tick_seconds: float | None = None, stop: threading.Event | None = None, api_token: str | None = None,
        config_path: str | None = None, state_dir: str | None = None,
        save_every_ticks: int = SAVE_EVERY_TICKS) -> int:
    """Run until SIGTERM/SIGINT (or until ``stop`` is set); return the exit code. ``api_token`` enables the
    control API (POST /api/v1/drills/{name}, POST /-/reload); without it every POST is refused.
    ``config_path`` is what a reload reads (None: the embedded configuration); ``state_dir`` keeps the state
    across restarts."""
    setup_logging()
    host, port = parse_listen(listen) if isinstance(listen, str) else listen
    where = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    state = None
    if state_dir is not None:
        try:
            state = StateDir(state_dir).open()
        except (StateDirBusy, OSError) as exc:
            log.error("cannot use --state-dir %s: %s", state_dir, getattr(exc, "strerror", None) or exc)
            return EXIT_RUNTIME
    kernelcache.configure(state_dir)  # before any kernel is defined: where numba caches them (under a state
    # directory this daemon holds)
    try:
        return _run(config, host, port, where, speedup, tick_seconds, stop, api_token, config_path, state,
                    save_every_ticks)
    finally:
        if state is not None:
            state.close()


def _run(config, host, port, where, speedup, tick_seconds, stop, api_token, config_path, state,
         save_every_ticks) -> int:
    resumed = _resume(state, config) if state is not None else None
    parts = build(config, time.monotonic, time.time, speedup, tick_seconds, api_token, config_path, resumed,
                  warmup=True)
    ticker = parts.ticker
    try:
        server = HttpServer((host, port), parts.app)
    except socket.gaierror as exc:
        log.error("cannot listen on %s: cannot resolve host %r: %s", where, host, exc.strerror or exc)
        return EXIT_USAGE
    except OSError as exc:
        log.error("cannot listen on %s: %s", where, exc.strerror or exc)
        return EXIT_RUNTIME
    saver = Saver(state, ticker, save_every_ticks, parts.status, background=True) if state is not None else None
    commands: queue.SimpleQueue = queue.SimpleQueue()  # SimpleQueue.put is reentrant: safe in a signal handler
    previous = _install_signals(commands)
    scheduler = BackgroundScheduler(executors={"default": ThreadPoolExecutor(1)}, timezone="UTC")
    parts.reloader.rescheduled = lambda seconds: scheduler.reschedule_job("tick", trigger="interval",
                                                                          seconds=seconds)
    serving = threading.Thread(target=server.serve_forever, name="simd-http", daemon=True)

    def tick() -> None:
        ticker.tick()
        parts.app.refresh()  # the scrapes after the tick find their rendering ready
        if saver is not None:
            saver.after_tick()

    try:
        serving.start()
        scheduler.add_job(tick, "interval", seconds=ticker.tick_seconds, id="tick", max_instances=1,
                          coalesce=True, misfire_grace_time=None)
        scheduler.start()
        _log_summary(config, ticker, server, api_token, state)
        parts.warmup.request(ticker.lanes)  # the kernels compile in the background: /metrics answers meanwhile
        while stop is None or not stop.is_set():
            try:
                command = commands.get(timeout=0.25)  # a timed wait: signal handlers run between the waits
            except queue.Empty:
                continue
            if command == "stop":
                break
            if command == "reload":
                parts.reloader("SIGHUP")
            elif command == "dump":
                dump_state(ticker, parts.status)
        log.info("stopping: finishing the tick in progress")
    finally:
        scheduler.shutdown(wait=True)
        server.shutdown()
        server.server_close()
        _restore_signals(previous)
        saved = saver is None or saver.save(quiet=True)
        if saver is not None and saved:
            log.info("state saved to %s at simulated second %.0f", state.file,
                     ticker.snapshot.simulated_us / US_PER_SECOND)
    log.info("stopped after %d ticks, %.0f simulated seconds", ticker.registry.get_sample_value("simd_ticks_total"),
             ticker.snapshot.simulated_us / US_PER_SECOND)
    if not saved:  # the state since the last good save is lost: say so in the exit code, not only the log
        log.error("the final save failed: the state since the last snapshot in %s is lost (%s)", state.path,
                  saver.last_error)
        return EXIT_RUNTIME
    return EXIT_OK


def _resume(state: StateDir, config: Config) -> Resumed | None:
    payload = state.load()
    if payload is None:
        log.info("state: no usable snapshot in %s: starting from simulated time 0", state.path)
        return None
    try:
        resumed = resume(payload, config)
    except StateError as exc:
        state.move_aside(str(exc))
        return None
    except Exception as exc:  # noqa: BLE001 (whatever a checksummed but impossible state makes resume raise)
        state.move_aside(f"resuming it failed: {type(exc).__name__}")
        return None
    if resumed.refused:  # kept as evidence; the scenarios it names start fresh, the others resume from it
        state.move_aside("; ".join(resumed.refused) + " (it starts fresh; the other scenarios resume)",
                         starting_fresh=False)
    log.info("state: resumed from %s at simulated second %.0f (%d scenarios)", state.file,
             resumed.at_us / US_PER_SECOND, len(resumed.lanes))
    return resumed


@dataclass
class Parts:
    ticker: Ticker
    app: object
    status: DaemonStatus
    reloader: Reloader
    warmup: Warmup


def build(config: Config, clock, wall, speedup: float | None = None, tick_seconds: float | None = None,
          api_token: str | None = None, config_path: str | None = None, resumed: Resumed | None = None,
          warmup: bool = False) -> Parts:
    """The tick loop, the WSGI app serving it, the daemon's status and the reloader (no thread, no socket):
    one private registry holds the simulation's collector, the process collector, the tick loop's health and
    the daemon's status. ``resumed``: continue a saved state (simd.live.persist.resume). ``warmup``: lanes wait
    for their kernels (simd.live.warmup; its thread starts on the first ``parts.warmup.request``); else they
    compile on their first tick (tests that drive the clock by hand)."""
    registry = new_registry(lambda: ticker.snapshot)
    kw = {} if resumed is None else {"lanes": resumed.lanes, "at_us": resumed.at_us, "drills": resumed.drills}
    warm = Warmup(registry)
    ticker = Ticker(config, clock=clock, wall=wall, speedup=speedup, tick_seconds=tick_seconds, registry=registry,
                    lane_ready=warm.ready if warmup else None, **kw)
    # The replicas' compiled plans and states live as long as the daemon: keep them out of the garbage collector's
    # full collections, which otherwise walk them all about once a tick (measured with 10,000 replicas of
    # llama3-16k: 0.4-0.8 s per full collection on this 2-core machine under load).
    gc.freeze()
    status = DaemonStatus(registry, wall)
    reloader = Reloader(ticker, config_path, status, warmup=warm if warmup else None)
    drills = DrillControl(lambda: ticker.snapshot, ticker.start_drill)
    app = make_app(registry, ticker.health.status, drills=drills, token=api_token, reload=reloader,
                   version=lambda: (ticker.snapshot, ticker.health.generation, status.generation), clock=clock,
                   ready=ticker.readiness)
    return Parts(ticker, app, status, reloader, warm)


def assemble(config: Config, clock, wall, speedup: float | None = None, tick_seconds: float | None = None,
             api_token: str | None = None) -> tuple[Ticker, object]:
    """The tick loop and the WSGI app serving it (``build``'s first two parts)."""
    parts = build(config, clock, wall, speedup, tick_seconds, api_token)
    return parts.ticker, parts.app


def _log_summary(config: Config, ticker: Ticker, server: HttpServer, api_token: str | None,
                 state: StateDir | None) -> None:
    host = server.server_address[0]
    shown = f"[{host}]" if ":" in host else host
    names = [i.name for i in ticker.infos]
    replicas = sum(i.replicas for i in ticker.infos)
    log.info("simd %s listening on http://%s:%d/metrics (and /-/healthy, /-/ready); at most %d connections",
             __version__, shown, server.port, server.connection_limit)
    kernelcache.log_choice()
    log.info("speedup %g (1 wall second = %g simulated seconds), a tick every %g s", ticker.speedup,
             ticker.speedup, ticker.tick_seconds)
    log.info("%d scenarios, %d replicas: %s", len(names), replicas, ", ".join(names))
    if config.drills:
        log.info("%d drills: %s; control API %s", len(config.drills), ", ".join(d.name for d in config.drills),
                 "enabled (POST /api/v1/drills/NAME with the bearer token)" if api_token else
                 "disabled (no SIMD_API_TOKEN or --api-token-file): drills start only when scheduled")
    log.info("state %s; SIGHUP%s reloads the scenario file, SIGUSR1 logs a state summary",
             f"saved to {state.file}" if state else "not saved (no --state-dir)",
             " or POST /-/reload" if api_token else "")
    for w in config.warnings():
        log.warning("config: %s", w)
    for n in config.notes():
        log.info("config (acknowledged): %s", n)


def dump_state(ticker: Ticker, status: DaemonStatus) -> None:
    """SIGUSR1: one log line per scenario and one for the daemon, from the published snapshot (no lock)."""
    snap = ticker.snapshot
    log.info("state: simulated second %.0f, speedup %g, tick every %g s, %d scenarios, last reload %s",
             snap.simulated_us / US_PER_SECOND, snap.speedup, ticker.tick_seconds, len(snap.scenarios),
             "successful" if status.reload_successful else "FAILED (the previous configuration runs)")
    for sc in snap.scenarios:
        log.info("state: scenario %s: %.0f simulated seconds on its clock, %.0f behind, %d overrun(s)%s",
                 sc.info.name, sc.clock_us / US_PER_SECOND, sc.behind_us / US_PER_SECOND, sc.overruns,
                 ", QUARANTINED" if sc.failed else "")
    active = [d.name for d in snap.drills if d.active]
    log.info("state: drills active: %s", ", ".join(active) if active else "none")


def _install_signals(commands: queue.SimpleQueue) -> dict:
    if threading.current_thread() is not threading.main_thread():
        return {}  # signals can only be handled in the main thread (tests run the daemon in others)
    what = {signal.SIGTERM: "stop", signal.SIGINT: "stop", signal.SIGHUP: "reload", signal.SIGUSR1: "dump"}

    def handler(signum, _frame):
        log.info("received %s", signal.Signals(signum).name)
        commands.put(what[signum])

    def ignored(signum, _frame):
        log.info("received %s: ignored (SIGHUP reloads, SIGUSR1 logs a state summary, SIGQUIT dumps the threads' "
                 "stacks)", signal.Signals(signum).name)

    previous = {s: signal.signal(s, handler) for s in what}
    previous[signal.SIGUSR2] = signal.signal(signal.SIGUSR2, ignored)
    faulthandler.register(signal.SIGQUIT, all_threads=True, chain=False)
    return previous


def _restore_signals(previous: dict) -> None:
    if previous:
        faulthandler.unregister(signal.SIGQUIT)
    for s, h in previous.items():
        signal.signal(s, h)
