"""``simd run``: the daemon. Wires the tick logic (ticker.py) to the wall clock, an APScheduler interval job,
the HTTP endpoint (server.py, exporter.py) and the signals. The only module that reads a clock.

Lifecycle: validate and bind first (a bad address or a port in use fails before anything runs), then start
serving and ticking; on SIGTERM or SIGINT finish the tick in progress, stop serving, return 0.
Exit codes: 0 after a signal, 1 when the address cannot be bound (e.g. port in use), 2 when it cannot be
resolved (``cli`` maps bad flags and configuration errors to 2 before calling in here).
"""

from __future__ import annotations

import logging
import signal
import socket
import sys
import threading
import time

from apscheduler.executors.pool import ThreadPoolExecutor
from apscheduler.schedulers.background import BackgroundScheduler

from simd import __version__
from simd.config import Config
from simd.drills import DrillControl
from simd.exporter import new_registry
from simd.runflags import DEFAULT_LISTEN, parse_listen
from simd.server import HttpServer, make_app
from simd.ticker import Ticker

log = logging.getLogger("simd.daemon")

EXIT_OK, EXIT_RUNTIME, EXIT_USAGE = 0, 1, 2


def setup_logging() -> None:
    """Logs on stderr. APScheduler logs only errors (a failing tick, with its traceback): its per-run INFO lines
    are noise, and its "skipped: maximum number of running instances" warnings are the overruns the ticker
    already counts and logs (at most once a minute)."""
    if not logging.getLogger().handlers:
        logging.basicConfig(stream=sys.stderr, level=logging.INFO,
                            format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    logging.getLogger("apscheduler").setLevel(logging.ERROR)


def run(config: Config, listen: str | tuple[str, int] = DEFAULT_LISTEN, speedup: float | None = None,
        tick_seconds: float | None = None, stop: threading.Event | None = None, api_token: str | None = None) -> int:
    """Run until SIGTERM/SIGINT (or until ``stop`` is set); return the exit code. ``api_token`` enables the
    drill control API (POST /api/v1/drills/{name}); without it every POST is refused."""
    setup_logging()
    host, port = parse_listen(listen) if isinstance(listen, str) else listen
    where = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    ticker, app = assemble(config, time.monotonic, time.time, speedup, tick_seconds, api_token)
    try:
        server = HttpServer((host, port), app)
    except socket.gaierror as exc:
        log.error("cannot listen on %s: cannot resolve host %r: %s", where, host, exc.strerror or exc)
        return EXIT_USAGE
    except OSError as exc:
        log.error("cannot listen on %s: %s", where, exc.strerror or exc)
        return EXIT_RUNTIME
    stop = stop or threading.Event()
    previous = _install_signals(stop)
    scheduler = BackgroundScheduler(executors={"default": ThreadPoolExecutor(1)}, timezone="UTC")
    serving = threading.Thread(target=server.serve_forever, name="simd-http", daemon=True)
    try:
        serving.start()
        scheduler.add_job(ticker.tick, "interval", seconds=ticker.tick_seconds, id="tick", max_instances=1,
                          coalesce=True, misfire_grace_time=None)
        scheduler.start()
        _log_summary(config, ticker, server, api_token)
        while not stop.wait(1.0):  # a timed wait: signal handlers run between the waits
            pass
        log.info("stopping: finishing the tick in progress")
    finally:
        scheduler.shutdown(wait=True)
        server.shutdown()
        server.server_close()
        _restore_signals(previous)
    log.info("stopped after %d ticks, %.0f simulated seconds", ticker.registry.get_sample_value("simd_ticks_total"),
             ticker.snapshot.simulated_us / 1e6)
    return EXIT_OK


def assemble(config: Config, clock, wall, speedup: float | None = None, tick_seconds: float | None = None,
             api_token: str | None = None) -> tuple[Ticker, object]:
    """The tick loop and the WSGI app serving it (no thread, no socket): one private registry holds the
    simulation's collector, the process collector and the tick loop's health."""
    registry = new_registry(lambda: ticker.snapshot)
    ticker = Ticker(config, clock=clock, wall=wall, speedup=speedup, tick_seconds=tick_seconds, registry=registry)
    drills = DrillControl(config, lambda: ticker.snapshot, ticker.start_drill)
    return ticker, make_app(registry, ticker.health.status, drills=drills, token=api_token)


def _log_summary(config: Config, ticker: Ticker, server: HttpServer, api_token: str | None) -> None:
    host = server.server_address[0]
    shown = f"[{host}]" if ":" in host else host
    names = [i.name for i in ticker.infos]
    replicas = sum(i.replicas for i in ticker.infos)
    log.info("simd %s listening on http://%s:%d/metrics (and /healthz)", __version__, shown, server.port)
    log.info("speedup %g (1 wall second = %g simulated seconds), a tick every %g s", ticker.speedup,
             ticker.speedup, ticker.tick_seconds)
    log.info("%d scenarios, %d replicas: %s", len(names), replicas, ", ".join(names))
    if config.drills:
        log.info("%d drills: %s; control API %s", len(config.drills), ", ".join(d.name for d in config.drills),
                 "enabled (POST /api/v1/drills/NAME with the bearer token)" if api_token else
                 "disabled (no SIMD_API_TOKEN or --api-token-file): drills start only when scheduled")
    for w in config.warnings():
        log.warning("config: %s", w)


def _install_signals(stop: threading.Event) -> dict:
    if threading.current_thread() is not threading.main_thread():
        return {}  # signals can only be handled in the main thread (tests run the daemon in others)

    def handler(signum, _frame):
        log.info("received %s", signal.Signals(signum).name)
        stop.set()

    return {s: signal.signal(s, handler) for s in (signal.SIGTERM, signal.SIGINT)}


def _restore_signals(previous: dict) -> None:
    for s, h in previous.items():
        signal.signal(s, h)
