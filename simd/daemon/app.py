"""The daemon's routes and their authentication: a plain WSGI app (:func:`make_app`), which
simd.daemon.waitress_adapter's HttpServer runs (any WSGI server can run it instead).

- ``GET /metrics``: the registry's metrics, written by prometheus_client: the text format 0.0.4, or
  OpenMetrics 1.0 when ``Accept`` asks for ``application/openmetrics-text``; gzipped when ``Accept-Encoding``
  allows gzip. ``?name[]=simd_ticks_total`` restricts the output to those names. Renderings are reused within
  a tick and rendered ahead by the tick loop (simd.daemon.scrape).
- ``GET /-/healthy`` (liveness, Prometheus' path) and ``GET /healthz`` (the same check): ``200 ok`` while
  ticks are recent; ``503`` with the reason in the body when they stall.
- ``GET /-/ready`` (readiness, Prometheus' path): ``200 ready`` once the engine's kernels are compiled and
  every scenario has caught up with the shared clock; ``503`` with what it waits for until then.
- ``GET /api/v1/drills`` (and ``/api/v1/drills/{name}``): the drills, as JSON.
- ``POST /api/v1/drills/{name}``: start a drill now. ``POST /-/reload``: reload the scenario file (as Prometheus'
  endpoint; 200 with what changed, 400 with the errors while the old configuration keeps running; the file is parsed
  on the reloader's own thread, and a reload requested while one runs is 409 at once; 202 when it outlasts
  simd.live.reload.RELOAD_WAIT_SECONDS). Both only with ``Authorization: Bearer <token>`` (the scheme is
  case-insensitive, RFC 7235 section 2.1); without a configured token every POST is refused (403). Failed
  authentication is logged, at most one line per :data:`AUTH_LOG_SECONDS` (with the count since the last). The
  drill's optional body is a JSON object ``{"duration_seconds": <simulated seconds>}`` of at most 4 KiB
  (simd.scenario.DrillRequest), delimited by ``Content-Length`` or chunked transfer coding; a request with neither
  has no body (RFC 9112 section 6.3), and a body shorter than its ``Content-Length`` is refused. Errors, as JSON
  ``{"error": ...}``: 401 no or wrong token, 413 body too large, 400 malformed body or ``Content-Length``, 404
  unknown drill, 409 already running. A refused request changes nothing.

``HEAD`` is ``GET`` without the body. Any other path is 404; any other method is 405 with an ``Allow``
header. No request waits for the tick loop's lock except an authorized POST.
"""

from __future__ import annotations

import hmac
import logging
import time
from collections.abc import Callable
from typing import Protocol

from prometheus_client.registry import Collector

from simd.daemon.response import Response, error, json_response, text
from simd.daemon.scrape import Renderings
from simd.live.drills import DrillAlreadyRunning, UnknownDrill
from simd.live.reload import ReloadBusy, ReloadPending
from simd.scenario import parse_drill_request

log = logging.getLogger(__name__)

Health = Callable[[], tuple[bool, str]]
MAX_BODY_BYTES = 4096  # a drill request is a few dozen bytes
DRILLS = "/api/v1/drills"
RELOAD = "/-/reload"  # Prometheus' path for the same operation
HEALTHY = ("/-/healthy", "/healthz")  # liveness: Prometheus' path, and the one simd had first
READY = "/-/ready"  # readiness, Prometheus' path
READ = ("GET", "HEAD")
AUTH_LOG_SECONDS = 10.0  # at most one line about failed authentication per this many seconds


class Drills(Protocol):
    """What the control API needs (simd.live.drills.DrillControl has it)."""

    def list(self) -> list[dict]: ...

    def get(self, name: str) -> dict: ...

    def start(self, name: str, duration_seconds: float | None = None) -> dict: ...


class Reload(Protocol):
    """What ``POST /-/reload`` calls (simd.live.reload.Reloader.submit): (True, what changed) or (False, the
    errors); ReloadBusy while another reload runs, ReloadPending when it outlasts the wait."""

    def submit(self, trigger: str) -> tuple[bool, dict | list[str]]: ...


def make_app(registry: Collector, health: Health, drills: Drills | None = None, token: str | None = None,
             reload: Reload | None = None, version: Callable[[], tuple] | None = None,
             clock: Callable[[], float] = time.monotonic, ready: Health | None = None):
    """The WSGI app of the routes in the module docstring. ``ready`` answers /-/ready (None: ready whenever
    healthy). ``drills`` None: no control API (its paths 404);
    ``reload`` None: no ``/-/reload``. ``version()`` names what a /metrics rendering shows (scrape.Renderings;
    None: every scrape renders)."""
    return _App(registry, health, drills, token or None, reload, version, clock, ready or health)


class _App:
    def __init__(self, registry: Collector, health: Health, drills: Drills | None, token: str | None,
                 reload: Reload | None, version, clock, ready: Health):
        self.registry = registry
        self.renderings = Renderings(registry, version, clock)
        self.health, self.drills, self.token, self.reload = health, drills, token, reload
        self.ready = ready
        self._clock = clock
        self._auth_failures, self._auth_logged = 0, -1e300

    def __call__(self, environ: dict, start_response) -> list[bytes]:
        method, path = environ["REQUEST_METHOD"], environ.get("PATH_INFO", "")
        name = _drill_name(path) if self.drills is not None else None
        writable = name is not None or (path == RELOAD and self.reload is not None)
        if method in READ and not (path == RELOAD and self.reload is not None):
            response = self.renderings.response(environ) if path == "/metrics" else self.read(path)
        elif method == "POST" and writable:
            response = self.post(environ, name)
        elif not self.routed(path):
            response = self.read(path)  # the 404 of a path that is not there, whatever the method
        else:
            allow = "POST" if path == RELOAD and self.reload is not None else \
                "GET, HEAD" if name is None else "GET, HEAD, POST"
            response = text(405, "method not allowed\n", ("Allow", allow))
        return response(start_response, head=method == "HEAD")

    def refresh(self) -> None:
        """Render ahead what scrapers asked for recently (scrape.Renderings.refresh): the tick loop calls it."""
        self.renderings.refresh()

    def routed(self, path: str) -> bool:
        """Whether ``path`` is one of the app's routes (some method of it is allowed)."""
        return path == "/metrics" or path in HEALTHY or path == READY or \
            (path == RELOAD and self.reload is not None) or \
            (self.drills is not None and (path == DRILLS or path.startswith(DRILLS + "/")))

    def read(self, path: str) -> Response:
        if path in HEALTHY:
            ok, reason = self.health()
            return text(200 if ok else 503, reason + "\n")
        if path == READY:
            ok, reason = self.ready()
            return text(200 if ok else 503, reason + "\n")
        if self.drills is not None and path == DRILLS:
            return json_response(200, {"drills": self.drills.list()})
        if self.drills is not None and path.startswith(DRILLS + "/"):
            try:
                return json_response(200, self.drills.get(path[len(DRILLS) + 1:]))
            except UnknownDrill as exc:
                return error(404, str(exc))
        return text(404, "not found: try /metrics, /-/healthy, /-/ready or /api/v1/drills\n")

    def post(self, environ: dict, name: str | None) -> Response:
        if self.token is None:
            return error(403, "the control API is disabled: start simd run with SIMD_API_TOKEN set or "
                               "--api-token-file")
        if not self.authorized(environ.get("HTTP_AUTHORIZATION", "")):
            self._log_auth_failure(environ)
            return error(401, "missing or wrong bearer token", ("WWW-Authenticate", "Bearer"))
        raw = _body(environ)
        if isinstance(raw, Response):
            return raw
        if name is None:
            return self.reload_response()
        try:
            request = parse_drill_request(raw)
        except ValueError as exc:
            return error(400, str(exc))
        try:
            started = self.drills.start(name, request.duration_seconds)
            self.renderings.acted()
            return json_response(200, started)
        except UnknownDrill as exc:
            return error(404, str(exc))
        except DrillAlreadyRunning as exc:
            return error(409, str(exc))

    def reload_response(self) -> Response:
        try:
            ok, detail = self.reload.submit("POST /-/reload")
        except ReloadBusy as exc:
            return error(409, str(exc), ("Retry-After", "1"))
        except ReloadPending as exc:
            return json_response(202, {"status": "in progress", "detail": str(exc)})
        self.renderings.acted()  # the reload's outcome (simd_config_last_reload_successful) shows at once
        if ok:
            return json_response(200, {"status": "success", **detail})
        return json_response(400, {"error": "the configuration was not reloaded: the previous one keeps running",
                           "errors": detail})

    def authorized(self, header: str) -> bool:
        """``Bearer <token>``, the scheme in any case (RFC 7235 2.1), one or more spaces before the token."""
        scheme, _, credentials = header.partition(" ")
        given = credentials.lstrip(" ")
        return scheme.lower() == "bearer" and hmac.compare_digest(given.encode(), self.token.encode())

    def _log_auth_failure(self, environ: dict) -> None:
        self._auth_failures += 1
        now = self._clock()
        if now - self._auth_logged < AUTH_LOG_SECONDS:
            return
        log.warning("refused %s %s from %s: %s (%d failed authentication(s) since the last such line)",
                    environ["REQUEST_METHOD"], environ.get("PATH_INFO", ""), environ.get("REMOTE_ADDR", "?"),
                    "no Authorization header" if not environ.get("HTTP_AUTHORIZATION") else "wrong bearer token",
                    self._auth_failures)
        self._auth_failures, self._auth_logged = 0, now


def _body(environ: dict) -> bytes | Response:
    """The request body (b"" without one), or the error response for a bad Content-Length, a too large body or
    one shorter than announced."""
    length_header = environ.get("CONTENT_LENGTH") or ""
    stream = environ["wsgi.input"]
    if not length_header:
        # no length: chunked input that the server has not de-chunked (WSGI's wsgi.input_terminated), else none
        if environ.get("wsgi.input_terminated") and "chunked" in environ.get("HTTP_TRANSFER_ENCODING", "").lower():
            raw = stream.read(MAX_BODY_BYTES + 1)
            if len(raw) > MAX_BODY_BYTES:
                return error(413, f"the body must be at most {MAX_BODY_BYTES} bytes")
            return raw
        return b""
    if not length_header.isdigit():
        return error(400, f"Content-Length must be a non-negative integer, got {length_header[:40]!r}")
    length = int(length_header)
    if length > MAX_BODY_BYTES:
        return error(413, f"the body must be at most {MAX_BODY_BYTES} bytes, got {length}")
    raw = stream.read(length) if length else b""
    if len(raw) != length:
        return error(400, f"the body is shorter than its Content-Length ({len(raw)} of {length} bytes)")
    return raw


def _drill_name(path: str) -> str | None:
    """The NAME of /api/v1/drills/NAME (any string without a slash); None for any other path."""
    if not path.startswith(DRILLS + "/") or "/" in path[len(DRILLS) + 1:]:
        return None
    return path[len(DRILLS) + 1:]


def _drill_name(path: str) -> str | None:
    """The NAME of /api/v1/drills/NAME (any string without a slash); None for any other path."""
    if not path.startswith(DRILLS + "/") or "/" in path[len(DRILLS) + 1:]:
        return None
    return path[len(DRILLS) + 1:]
