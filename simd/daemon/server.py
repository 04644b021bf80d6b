"""The daemon's HTTP endpoint: a plain WSGI app (:func:`make_app`) and the server that runs it
(:class:`HttpServer`: waitress; any WSGI server can run the app instead).

- ``GET /metrics``: the registry's metrics, written by prometheus_client (``make_wsgi_app``): the text
  format 0.0.4, or OpenMetrics 1.0 when ``Accept`` asks for ``application/openmetrics-text``; gzipped when
  ``Accept-Encoding`` allows gzip. ``?name[]=simd_ticks_total`` restricts the output to those names. A
  rendering is reused while nothing it shows has changed (the same published tick and daemon status) and
  for at most :data:`RENDER_REUSE_SECONDS`, so a burst of scrapers costs one rendering per tick, not one each;
  the tick loop renders ahead what scrapers asked for recently (``refresh``), and a scrape that arrives while
  the current rendering is being made gets the previous one (one tick old) rather than wait for it.
- ``GET /-/healthy`` (liveness, Prometheus' path) and ``GET /healthz`` (the same check): ``200 ok`` while
  ticks are recent; ``503`` with the reason in the body when they stall.
- ``GET /-/ready`` (readiness, Prometheus' path): ``200 ready`` once the engine's kernels are compiled and
  every scenario has caught up with the shared clock; ``503`` with what it waits for until then.
- ``GET /api/v1/drills`` (and ``/api/v1/drills/{name}``): the drills, as JSON.
- ``POST /api/v1/drills/{name}``: start a drill now. ``POST /-/reload``: reload the scenario file (as
  Prometheus' endpoint; 200 with what changed, 400 with the errors while the old configuration keeps
  running). Both only with ``Authorization: Bearer <token>`` (the scheme is case-insensitive, RFC 7235
  section 2.1); without a configured token every POST is refused (403). Failed authentication is logged, at
  most one line per :data:`AUTH_LOG_SECONDS` (with the count since the last). The drill's optional body is a
  JSON object ``{"duration_seconds": <simulated seconds>}`` of at most 4 KiB (simd.scenario.DrillRequest),
  delimited by ``Content-Length`` or chunked transfer coding; a request with neither has no body (RFC 9112
  section 6.3), and a body shorter than its ``Content-Length`` is refused. Errors, as JSON ``{"error": ...}``:
  401 no or wrong token, 413 body too large, 400 malformed body or ``Content-Length``, 404 unknown drill,
  409 already running. A refused request changes nothing.

``HEAD`` is ``GET`` without the body. Any other path is 404; any other method is 405 with an ``Allow``
header. No request waits for the tick loop's lock except an authorized POST.

The server (waitress) reads and writes sockets on one asynchronous I/O thread and runs the app on a bounded
pool of :data:`THREADS` threads; it buffers a whole request before the app sees it (so a slow or half-open
client holds a connection, never a thread, and a truncated body never reaches the app), closes connections
idle for :data:`CHANNEL_TIMEOUT_SECONDS` and those whose request has not arrived
:data:`REQUEST_DEADLINE_SECONDS` after its first byte (slowloris), accepts at most ``connection_limit``
connections (from the file descriptor limit, see :func:`connection_limit`; at the limit, connections idle for
:data:`EVICT_IDLE_SECONDS` are closed to make room, else the partial requests that have sent the least) with a
listen backlog of :data:`BACKLOG`, and handles chunked bodies and malformed ``Content-Length`` itself (400).
"""

from __future__ import annotations

import heapq
import hmac
import json
import logging
import resource
import socket
import threading
import time
import urllib.parse
from collections.abc import Callable, Iterable
from http import HTTPStatus
from typing import Protocol

import waitress
from prometheus_client import make_wsgi_app
from prometheus_client.exposition import choose_encoder, gzip_accepted
from prometheus_client.registry import Collector
from waitress import wasyncore
from waitress.channel import HTTPChannel
from waitress.parser import HTTPRequestParser
from waitress.receiver import ChunkedReceiver
from waitress.utilities import RequestEntityTooLarge

from simd.live.drills import DrillAlreadyRunning, UnknownDrill
from simd.scenario import parse_drill_request

log = logging.getLogger(__name__)

Health = Callable[[], tuple[bool, str]]
MAX_BODY_BYTES = 4096  # a drill request is a few dozen bytes
DRILLS = "/api/v1/drills"
RELOAD = "/-/reload"  # Prometheus' path for the same operation
HEALTHY = ("/-/healthy", "/healthz")  # liveness: Prometheus' path, and the one simd had first
READY = "/-/ready"  # readiness, Prometheus' path
JSON = "application/json"
TEXT = "text/plain; charset=utf-8"
READ = ("GET", "HEAD")
RENDER_REUSE_SECONDS = 1.0  # the process_* samples (CPU, memory) of a reused rendering are at most this old
STALE_LIMIT_SECONDS = 5.0  # a scrape gets the previous rendering while the current one renders, if this young
REFRESH_SECONDS, REFRESH_KEYS = 30.0, 4  # what ``refresh`` renders ahead: variants asked for this recently
# A variant of /metrics is what changes its bytes: the names of ``name[]`` (as a set), the format Accept
# chooses, gzip or not; every other part of the query string is ignored. The whole exposition (no name[]: at
# most four variants, what Prometheus and people scrape) is always rendered; at most this many name[]
# selections are rendered per published tick (from the families collected once for it), and a request for
# another is 429 until the next tick, so a flood of distinct queries costs a bounded amount of rendering and
# never takes a real scraper's turn. 16 leaves room for people and tools that select names.
MAX_VARIANTS = 16
WANTED_LIMIT = 64  # variants remembered for ``refresh`` (the most recent)
AUTH_LOG_SECONDS = 10.0  # at most one line about failed authentication per this many seconds
# The server's bounds. 2 threads run the app: a reused rendering is served in well under a millisecond, so
# they serve hundreds of scrapes a second, and with fewer threads wanting the interpreter the tick loop keeps
# its share (bench/soak.py: with waitress' default of 4, 200 scrapers back to back made ticks miss their
# slot; with 2, none did). Connections idle for
# 10 s are closed (Prometheus reconnects at its next scrape). A backlog of 1024 (waitress' default, Linux's
# default somaxconn 4096 allows it) holds bursts of connections while all slots are taken.
THREADS = 2
CHANNEL_TIMEOUT_SECONDS = 10
BACKLOG = 1024
RESERVED_FDS = 64  # file descriptors kept for the rest of the daemon (state file, logs, Python's own)
MAX_CONNECTIONS = 10_000
ACCEPT_BATCH = 128  # connections accepted per turn of the I/O loop (see HttpServer._accept_batch)
EVICT_IDLE_SECONDS = 1.0  # at the connection limit, connections idle this long make room for new ones
# A request must be complete (headers and body) this long after its first byte: a real client sends it in one
# packet; a connection that trickles a header line now and then (slowloris) is never idle, so the channel
# timeout alone would let it hold a slot forever. Checked every SWEEP_SECONDS.
REQUEST_DEADLINE_SECONDS = 5.0
SWEEP_SECONDS = 0.25
SHUTDOWN_WAIT_SECONDS = 5.0  # at shutdown, how long requests in progress may take to finish (a reload's build)
# waitress refuses (413) a body larger than this before the app sees it; the app's own limit is lower
MAX_REQUEST_BODY = 64 * 1024


class Drills(Protocol):
    """What the control API needs (simd.live.drills.DrillControl has it)."""

    def list(self) -> list[dict]: ...

    def get(self, name: str) -> dict: ...

    def start(self, name: str, duration_seconds: float | None = None) -> dict: ...


class Reload(Protocol):
    """What ``POST /-/reload`` calls (simd.live.reload.Reloader): (True, what changed) or (False, the errors)."""

    def __call__(self, trigger: str) -> tuple[bool, dict | list[str]]: ...


class Response:
    """A status, headers and a body; ``__call__`` sends it through WSGI's ``start_response``."""

    def __init__(self, status: int, body: bytes, headers: Iterable[tuple[str, str]]):
        self.status, self.body, self.headers = status, body, list(headers)

    def __call__(self, start_response, head: bool) -> list[bytes]:
        start_response(f"{self.status} {HTTPStatus(self.status).phrase}",
                       [*self.headers, ("Content-Length", str(len(self.body)))])
        return [] if head else [self.body]


def _text(status: int, text: str, *headers: tuple[str, str]) -> Response:
    return Response(status, text.encode(), [("Content-Type", TEXT), *headers])


def _json(status: int, payload: object, *headers: tuple[str, str]) -> Response:
    return Response(status, (json.dumps(payload) + "\n").encode(), [("Content-Type", JSON), *headers])


def _error(status: int, message: str, *headers: tuple[str, str]) -> Response:
    return _json(status, {"error": message}, *headers)


def make_app(registry: Collector, health: Health, drills: Drills | None = None, token: str | None = None,
             reload: Reload | None = None, version: Callable[[], tuple] | None = None,
             clock: Callable[[], float] = time.monotonic, ready: Health | None = None):
    """The WSGI app of the routes in the module docstring. ``ready`` answers /-/ready (None: ready whenever
    healthy). ``drills`` None: no control API (its paths 404);
    ``reload`` None: no ``/-/reload``. ``version()`` names what a /metrics rendering shows (objects compared
    by identity): a rendering is reused while it returns the same and for RENDER_REUSE_SECONDS of ``clock``;
    None: every scrape renders."""
    return _App(registry, health, drills, token or None, reload, version, clock, ready or health)


class _App:
    def __init__(self, registry: Collector, health: Health, drills: Drills | None, token: str | None,
                 reload: Reload | None, version, clock, ready: Health):
        self.registry = registry
        self._families = _Families()  # the registry's families, collected once per rendering version
        self.metrics = make_wsgi_app(self._families if version is not None else registry)
        self.health, self.drills, self.token, self.reload = health, drills, token, reload
        self.ready = ready
        self._version, self._clock = version, clock
        self._cache: tuple[tuple, float, dict] = ((), -1e300, {})  # (version, when, {variant: Response})
        self._rendering = threading.Lock()
        self._wanted: dict[tuple, tuple[float, dict]] = {}  # request key -> (last asked, what it asked with)
        self._auth_failures, self._auth_logged = 0, -1e300

    def __call__(self, environ: dict, start_response) -> list[bytes]:
        method, path = environ["REQUEST_METHOD"], environ.get("PATH_INFO", "")
        name = _drill_name(path) if self.drills is not None else None
        writable = name is not None or (path == RELOAD and self.reload is not None)
        if method in READ and not (path == RELOAD and self.reload is not None):
            response = self.metrics_response(environ) if path == "/metrics" else self.read(path)
        elif method == "POST" and writable:
            response = self.post(environ, name)
        elif not self.routed(path):
            response = self.read(path)  # the 404 of a path that is not there, whatever the method
        else:
            allow = "POST" if path == RELOAD and self.reload is not None else \
                "GET, HEAD" if name is None else "GET, HEAD, POST"
            response = _text(405, "method not allowed\n", ("Allow", allow))
        return response(start_response, head=method == "HEAD")

    def metrics_response(self, environ: dict) -> Response:
        """prometheus_client's exposition, negotiated on Accept and Accept-Encoding; a rendering is reused while
        it is current (see make_app), and while another thread renders the current one, a concurrent scrape
        gets the previous rendering (one tick old at most) instead of waiting or rendering it again. Renderings
        are keyed by their variant (see MAX_VARIANTS): a query string that only differs elsewhere is the same
        rendering."""
        key, env = _variant(environ)
        if self._version is None:
            return self._render(env)
        version, now = self._version(), self._clock()
        current, when, responses = self._cache
        if key in responses and (self._current(version, current, when, now) or
                                 (self._rendering.locked() and now - when < STALE_LIMIT_SECONDS)):
            self._remember(key, env, now)
            return responses[key]
        with self._rendering:  # one rendering at a time
            current, when, responses = self._cache
            if key in responses and self._current(version, current, when, now):
                return responses[key]  # another thread rendered it meanwhile
            if not self._current(version, current, when, now):
                self._families.collect_from(self.registry)
                self._cache = (version, now, {})
            elif key[0] and sum(1 for k in responses if k[0]) >= MAX_VARIANTS:
                return _text(429, f"at most {MAX_VARIANTS} variants of /metrics (name[] selections, formats) "
                                  "are rendered per tick: retry after the next tick\n", ("Retry-After", "1"))
            response = self._render(env)
            self._cache[2][key] = response
        self._remember(key, env, now)
        return response

    def _remember(self, key: tuple, env: dict, now: float) -> None:
        """What ``refresh`` renders ahead: the WANTED_LIMIT variants asked for most recently (a whole
        exposition is never pushed out by name[] selections)."""
        self._wanted[key] = (now, env)
        if len(self._wanted) > WANTED_LIMIT:
            selections = [k for k in self._wanted if k[0]] or list(self._wanted)
            self._wanted.pop(min(selections, key=lambda k: self._wanted[k][0]), None)

    def refresh(self) -> None:
        """Render, now, what scrapers asked for in the last REFRESH_SECONDS (at most REFRESH_KEYS variants), so
        that the scrapes after a tick find it ready; the tick loop calls it after each tick."""
        if self._version is None:
            return
        now = self._clock()
        recent = sorted(((t, k, env) for k, (t, env) in list(self._wanted.items()) if now - t < REFRESH_SECONDS),
                        key=lambda x: (bool(x[1][0]), -x[0]))[:REFRESH_KEYS]  # whole expositions first
        self._wanted = {k: (t, env) for t, k, env in recent}
        if not recent:  # nobody scrapes: no collection on the tick thread (the next scrape collects)
            return
        with self._rendering:
            version, responses = self._version(), {}
            self._families.collect_from(self.registry)
            for _, k, env in recent:
                responses[k] = self._render(env)
            self._cache = (version, now, responses)

    @staticmethod
    def _current(version: tuple, cached: tuple, when: float, now: float) -> bool:
        return now - when < RENDER_REUSE_SECONDS and len(version) == len(cached) and all(
            a is b or (type(a) is int and a == b) for a, b in zip(version, cached, strict=True))

    def _render(self, env: dict) -> Response:
        got: dict = {}

        def capture(status: str, headers: list, exc_info=None) -> None:
            got["status"], got["headers"] = int(status.split()[0]), headers

        body = b"".join(self.metrics({**env, "REQUEST_METHOD": "GET", "PATH_INFO": "/metrics"}, capture))
        return Response(got["status"], body, [*got["headers"], ("Vary", "Accept, Accept-Encoding")])

    def routed(self, path: str) -> bool:
        """Whether ``path`` is one of the app's routes (some method of it is allowed)."""
        return path == "/metrics" or path in HEALTHY or path == READY or \
            (path == RELOAD and self.reload is not None) or \
            (self.drills is not None and (path == DRILLS or path.startswith(DRILLS + "/")))

    def read(self, path: str) -> Response:
        if path in HEALTHY:
            ok, reason = self.health()
            return _text(200 if ok else 503, reason + "\n")
        if path == READY:
            ok, reason = self.ready()
            return _text(200 if ok else 503, reason + "\n")
        if self.drills is not None and path == DRILLS:
            return _json(200, {"drills": self.drills.list()})
        if self.drills is not None and path.startswith(DRILLS + "/"):
            try:
                return _json(200, self.drills.get(path[len(DRILLS) + 1:]))
            except UnknownDrill as exc:
                return _error(404, str(exc))
        return _text(404, "not found: try /metrics, /-/healthy, /-/ready or /api/v1/drills\n")

    def post(self, environ: dict, name: str | None) -> Response:
        if self.token is None:
            return _error(403, "the control API is disabled: start simd run with SIMD_API_TOKEN set or "
                               "--api-token-file")
        if not self.authorized(environ.get("HTTP_AUTHORIZATION", "")):
            self._log_auth_failure(environ)
            return _error(401, "missing or wrong bearer token", ("WWW-Authenticate", "Bearer"))
        raw = _body(environ)
        if isinstance(raw, Response):
            return raw
        if name is None:
            return self.reload_response()
        try:
            request = parse_drill_request(raw)
        except ValueError as exc:
            return _error(400, str(exc))
        try:
            return _json(200, self.drills.start(name, request.duration_seconds))
        except UnknownDrill as exc:
            return _error(404, str(exc))
        except DrillAlreadyRunning as exc:
            return _error(409, str(exc))

    def reload_response(self) -> Response:
        ok, detail = self.reload("POST /-/reload")
        if ok:
            return _json(200, {"status": "success", **detail})
        return _json(400, {"error": "the configuration was not reloaded: the previous one keeps running",
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


class _Families:
    """A registry's metric families as collected once (:meth:`collect_from`), for every rendering of one
    version: what prometheus_client's exposition reads, ``name[]`` selections included (as
    prometheus_client's RestrictedRegistry selects samples), without collecting again."""

    def __init__(self):
        self.families: list = []

    def collect_from(self, registry: Collector) -> None:
        self.families = list(registry.collect())

    def collect(self):
        return iter(self.families)

    def restricted_registry(self, names: Iterable[str]) -> _Restricted:
        return _Restricted(self.families, set(names))


class _Restricted:
    def __init__(self, families: list, names: set[str]):
        self.families, self.names = families, names

    def collect(self):
        for family in self.families:
            selected = family._restricted_metric(self.names)  # prometheus_client's own selection of samples
            if selected:
                yield selected


def _variant(environ: dict) -> tuple[tuple, dict]:
    """(key, environ to render with) of a /metrics request: the ``name[]`` set, the content type Accept
    chooses and whether gzip is accepted, and nothing else of the request (see MAX_VARIANTS)."""
    query = urllib.parse.parse_qs(environ.get("QUERY_STRING", ""))
    names = tuple(sorted(set(query.get("name[]", ()))))
    accept, encoding = environ.get("HTTP_ACCEPT", ""), environ.get("HTTP_ACCEPT_ENCODING", "")
    content_type = choose_encoder(accept)[1]
    gzipped = gzip_accepted(encoding)
    env = {"QUERY_STRING": urllib.parse.urlencode([("name[]", n) for n in names]), "HTTP_ACCEPT": accept,
           "HTTP_ACCEPT_ENCODING": "gzip" if gzipped else "", "SERVER_NAME": environ.get("SERVER_NAME", ""),
           "SERVER_PORT": environ.get("SERVER_PORT", ""), "wsgi.url_scheme": environ.get("wsgi.url_scheme", "http")}
    return (names, content_type, gzipped), env


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
                return _error(413, f"the body must be at most {MAX_BODY_BYTES} bytes")
            return raw
        return b""
    if not length_header.isdigit():
        return _error(400, f"Content-Length must be a non-negative integer, got {length_header[:40]!r}")
    length = int(length_header)
    if length > MAX_BODY_BYTES:
        return _error(413, f"the body must be at most {MAX_BODY_BYTES} bytes, got {length}")
    raw = stream.read(length) if length else b""
    if len(raw) != length:
        return _error(400, f"the body is shorter than its Content-Length ({len(raw)} of {length} bytes)")
    return raw


def _drill_name(path: str) -> str | None:
    """The NAME of /api/v1/drills/NAME (any string without a slash); None for any other path."""
    if not path.startswith(DRILLS + "/") or "/" in path[len(DRILLS) + 1:]:
        return None
    return path[len(DRILLS) + 1:]


def connection_limit() -> int:
    """How many connections the server accepts at once: the file descriptors the process may open, less
    RESERVED_FDS, at most MAX_CONNECTIONS. The soft limit is raised to the hard one first (Go's runtime does
    the same: a container's soft limit of 1024 is a legacy of select(), which waitress does not use here)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = hard if hard != resource.RLIM_INFINITY else max(soft, MAX_CONNECTIONS + RESERVED_FDS)
    want = min(want, MAX_CONNECTIONS + RESERVED_FDS)
    if want > soft:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))
            soft = want
        except (ValueError, OSError):
            pass
    return max(1, min(MAX_CONNECTIONS, soft - RESERVED_FDS))


class _BoundedChunks(ChunkedReceiver):
    """waitress' de-chunker, refusing (413) a chunk whose announced size would take the body past the limit
    as soon as the size arrives: waitress itself waits for the chunk's bytes, so a chunk size of 20 hex digits
    held the connection until its timeout instead of being refused."""

    def __init__(self, buf, limit: int):
        super().__init__(buf)
        self.limit = limit

    def received(self, s: bytes) -> int:
        consumed = super().received(s)
        if self.error is None and len(self) + self.chunk_remainder > self.limit:
            self.error = RequestEntityTooLarge(f"exceeds max_body of {self.limit}")
        return consumed


class _Parser(HTTPRequestParser):
    def parse_header(self, header_plus: bytes) -> None:
        super().parse_header(header_plus)
        if self.chunked and type(self.body_rcv) is ChunkedReceiver:
            self.body_rcv = _BoundedChunks(self.body_rcv.buf, self.adj.max_request_body_size)


class _Channel(HTTPChannel):
    parser_class = _Parser

    def writable(self) -> bool:
        """Not while a task serves this connection, unless the task waits for the I/O thread (its output past
        the high watermark) or the connection is closing. waitress polls a connection as writable whenever its
        output buffer is not empty; while a task writes (send_bytes is 1, so the task's own thread sends what it
        writes, holding the buffer's lock), the socket is writable at once and the lock busy, so the I/O loop
        turned without doing anything, about 440 times a response under a flood of scrapes, holding the
        interpreter's lock from the threads that do the work (6-9 ms of CPU a request; a scraper's p50 87 ms).
        What the task leaves unsent is sent when it ends: ``service`` wakes the loop then, and the connection is
        writable again (tests/daemon/test_http_limits.py counts the loop's turns)."""
        if (self.requests and self.total_outbufs_len < self.adj.outbuf_high_watermark
                and not (self.will_close or self.close_when_flushed)):
            return False
        return bool(super().writable())


class _FairQueue:
    """waitress' task queue (its ThreadedTaskDispatcher's ``queue``: ``append``, ``popleft``, ``len``), served
    least recently served connection first instead of first come, first served. A queued task is a connection
    with a request ready; a client that sends request after request on its connection (a flood of scrapes) is
    served again only after every connection that waits and was served less recently: a scraper that asks
    once a second, or /healthz on a new connection, goes ahead of it rather than behind the whole flood."""

    FORGET_SECONDS = 60.0  # connections not served for this long are forgotten (a new one starts at the front)

    def __init__(self):
        self._heap: list[tuple[float, int, object]] = []  # (when its connection was last served, arrival, task)
        self._arrivals = 0
        self._served: dict[int, float] = {}  # id(connection) -> when it was last served (time.monotonic)
        self._pruned = time.monotonic()

    def append(self, task) -> None:
        # a connection is queued at most once at a time (waitress queues it when a request is ready and it is
        # not being served), so its priority is fixed when it arrives
        self._arrivals += 1
        heapq.heappush(self._heap, (self._served.get(id(task), 0.0), self._arrivals, task))

    def __len__(self) -> int:
        return len(self._heap)

    def popleft(self):
        task = heapq.heappop(self._heap)[2]
        now = self._served[id(task)] = time.monotonic()
        if now - self._pruned > self.FORGET_SECONDS:
            self._pruned = now
            self._served = {k: v for k, v in self._served.items() if now - v < self.FORGET_SECONDS}
        return task


class HttpServer:
    """Serves ``app`` with waitress within the bounds of the module docstring. Binds at construction (so a bad
    address or a port in use fails before anything starts); an IPv6 host (with a colon) gets an IPv6 socket.
    ``serve_forever`` runs the I/O loop until ``shutdown``; ``server_close`` closes the socket and stops the
    threads."""

    def __init__(self, address: tuple[str, int], app, threads: int = THREADS,
                 channel_timeout: int = CHANNEL_TIMEOUT_SECONDS, max_connections: int | None = None):
        host, port = address
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        infos = socket.getaddrinfo(host, port, family, socket.SOCK_STREAM)  # socket.gaierror: unresolvable
        self.connection_limit = max_connections or connection_limit()
        self._server = waitress.create_server(
            app, host=infos[0][4][0], port=port, ipv4=family == socket.AF_INET, ipv6=family == socket.AF_INET6,
            threads=threads, connection_limit=self.connection_limit, channel_timeout=channel_timeout,
            cleanup_interval=max(1, channel_timeout // 2), backlog=BACKLOG, asyncore_use_poll=True,
            max_request_body_size=MAX_REQUEST_BODY, ident="simd", expose_tracebacks=False)
        self._server.channel_class = _Channel  # chunk sizes checked against the body limit as they arrive
        dispatcher = self._server.task_dispatcher
        with dispatcher.lock:  # before any request: the app threads wait on an empty queue
            dispatcher.queue = _FairQueue()
        self._accept_one = self._server.handle_accept
        self._server.handle_accept = self._accept_batch
        self._readable = self._server.readable
        self._server.readable = self._readable_evicting
        self.address_family = family
        self.server_address = (host, int(self._server.effective_port))
        self._stop, self._stopped = threading.Event(), threading.Event()
        self._stopped.set()
        self._partial: dict[tuple[int, int], float] = {}  # (channel, request) -> when its first byte was seen
        self._swept = 0.0

    @property
    def port(self) -> int:
        return self.server_address[1]

    def _accept_batch(self) -> None:
        """Accept up to ACCEPT_BATCH waiting connections per readable event (waitress takes one): each loop
        turn polls every open connection, so after a burst of connects one at a time would keep a health
        check waiting in the backlog for seconds."""
        channels = self._server._map
        for _ in range(ACCEPT_BATCH):
            before = len(channels)
            self._accept_one()
            if len(channels) == before or len(channels) >= self.connection_limit:
                return

    def _readable_evicting(self) -> bool:
        """Called on every turn of the I/O loop. Closes the connections whose request has not arrived
        REQUEST_DEADLINE_SECONDS after its first byte. At the connection limit, closes the connections idle
        for EVICT_IDLE_SECONDS (no request being served: idle keep-alives, half-open ones), and, when none is,
        those of the partial requests that have sent the least, so that new ones, a health check among them,
        get in within a second instead of waiting for a timeout; then waitress decides whether to accept."""
        now = time.time()  # waitress stamps last_activity with time.time()
        if now - self._swept >= SWEEP_SECONDS:
            self._swept = now
            self._close_late_requests(now)
        if len(self._server._map) >= self.connection_limit:
            waiting = [c for c in list(self._server.active_channels.values()) if not c.requests and not c.will_close]
            idle = [c for c in waiting if c.last_activity < now - EVICT_IDLE_SECONDS]
            if not idle:  # every waiting connection is trickling a request: close the ones that sent least
                partial = sorted((c for c in waiting if c.request is not None and not c.request.completed),
                                 key=lambda c: c.request.header_bytes_received + c.request.body_bytes_received)
                idle = partial[:max(1, len(partial) // 10)]
            for channel in idle:
                channel.will_close = True
        return self._readable()

    def _close_late_requests(self, now: float) -> None:
        seen = {}
        for channel in list(self._server.active_channels.values()):
            request = channel.request
            if request is None or request.completed:
                continue
            key = (id(channel), id(request))
            seen[key] = since = self._partial.get(key, now)
            if now - since > REQUEST_DEADLINE_SECONDS:
                channel.will_close = True
        self._partial = seen

    def serve_forever(self, poll_interval: float = 0.5) -> None:
        self._stopped.clear()
        try:
            while not self._stop.is_set():
                wasyncore.loop(timeout=poll_interval, map=self._server._map, use_poll=True, count=1)
        finally:
            self._stopped.set()

    def shutdown(self) -> None:
        """Stop ``serve_forever`` (from another thread) and wait until it has returned."""
        self._stop.set()
        self._server.trigger.pull_trigger()
        self._stopped.wait(10)

    def server_close(self) -> None:
        """Let the app threads finish the requests they serve (at most SHUTDOWN_WAIT_SECONDS; queued ones are
        cancelled), then close the connections, the I/O loop's trigger and the listening socket. Closing the
        trigger first made a thread that finished its request afterwards fail to wake the loop (EBADF: a
        traceback in the log at every stop that met a scrape)."""
        self._server.task_dispatcher.shutdown(cancel_pending=True, timeout=SHUTDOWN_WAIT_SECONDS)
        self._server.close()
        wasyncore.close_all(self._server._map)
