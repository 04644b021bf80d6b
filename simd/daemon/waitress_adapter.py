"""The daemon's HTTP server (:class:`HttpServer`): waitress running a WSGI app (simd.daemon.app) within
bounds, hardened where waitress' own behaviour is not enough, by subclassing or replacing its internals (each
one checked by tests/daemon/test_waitress_internals.py against the waitress installed):

- ``waitress.parser.HTTPRequestParser.parse_header`` and ``waitress.receiver.ChunkedReceiver``: a chunk whose
  announced size would take the body past the limit is refused (413) as soon as the size arrives;
- ``waitress.channel.HTTPChannel.writable``: not polled as writable while a task writes its response;
- the task dispatcher's ``queue``: served least recently served connection first (:class:`_FairQueue`);
- the server's ``handle_accept`` (several connections per turn of the I/O loop) and ``readable`` (the
  request deadline and evictions at the connection limit), its ``channel_class``, ``_map``,
  ``active_channels`` and a channel's ``request``, ``requests``, ``last_activity``, ``will_close``.

The server reads and writes sockets on one asynchronous I/O thread and runs the app on a bounded pool of
:data:`THREADS` threads; it buffers a whole request before the app sees it (so a slow or half-open client
holds a connection, never a thread, and a truncated body never reaches the app), closes connections idle for
:data:`CHANNEL_TIMEOUT_SECONDS` and those whose request has not arrived :data:`REQUEST_DEADLINE_SECONDS` after
its first byte (slowloris), accepts at most ``connection_limit`` connections (from the file descriptor limit,
see :func:`connection_limit`; at the limit, connections idle for :data:`EVICT_IDLE_SECONDS` are closed to make
room, else the partial requests that have sent the least) with a listen backlog of :data:`BACKLOG`, and handles
chunked bodies and malformed ``Content-Length`` itself (400).
"""

from __future__ import annotations

import heapq
import resource
import socket
import threading
import time

import waitress
from waitress import wasyncore
from waitress.channel import HTTPChannel
from waitress.parser import HTTPRequestParser
from waitress.receiver import ChunkedReceiver
from waitress.utilities import RequestEntityTooLarge

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
