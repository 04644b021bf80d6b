"""The daemon's HTTP endpoint: a small threaded server with two paths.

- ``GET /metrics``: the metrics in the Prometheus text format 0.0.4 (``metrics()``, exporter.render_text),
  whatever the ``Accept`` header asks for: every Prometheus accepts it.
- ``GET /healthz``: ``200 ok`` while ticks are recent; ``503`` with the reason in the body when they stall.

Any other path is 404; any method other than GET (and HEAD, which is GET without a body) is 405 with an
``Allow`` header. Each request runs in its own thread; the handler only reads the latest snapshot.
"""

from __future__ import annotations

import logging
import socket
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from prometheus_client.exposition import CONTENT_TYPE_PLAIN_0_0_4

log = logging.getLogger(__name__)

Health = Callable[[], tuple[bool, str]]
Metrics = Callable[[], bytes]


class MetricsServer(ThreadingHTTPServer):
    """Binds at construction (so a bad address or a port in use fails before anything starts)."""

    daemon_threads = True  # request threads never hold up shutdown

    def __init__(self, address: tuple[str, int], metrics: Metrics, health: Health):
        self.metrics, self.health = metrics, health
        if ":" in address[0]:
            self.address_family = socket.AF_INET6
        super().__init__(address, _Handler)

    @property
    def port(self) -> int:
        return self.server_address[1]


class _Handler(BaseHTTPRequestHandler):
    server: MetricsServer
    server_version = "simd"
    protocol_version = "HTTP/1.1"

    def do_GET(self) -> None:  # noqa: N802 (http.server's naming)
        self._get(body=True)

    def do_HEAD(self) -> None:  # noqa: N802
        self._get(body=False)

    def _get(self, body: bool) -> None:
        path = self.path.split("?", 1)[0]
        if path == "/metrics":
            self._send(200, CONTENT_TYPE_PLAIN_0_0_4, self.server.metrics(), body)
        elif path == "/healthz":
            ok, reason = self.server.health()
            self._send(200 if ok else 503, "text/plain; charset=utf-8", (reason + "\n").encode(), body)
        else:
            self._send(404, "text/plain; charset=utf-8", b"not found: try /metrics or /healthz\n", body)

    def _not_allowed(self) -> None:
        self.close_connection = True  # any request body is left unread
        self._send(405, "text/plain; charset=utf-8", b"method not allowed\n", True, {"Allow": "GET, HEAD"})

    do_POST = do_PUT = do_DELETE = do_PATCH = do_OPTIONS = do_TRACE = do_CONNECT = _not_allowed  # noqa: N815

    def _send(self, code: int, content_type: str, payload: bytes, body: bool, extra: dict | None = None) -> None:
        self.send_response(code)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(payload)))
        for k, v in (extra or {}).items():
            self.send_header(k, v)
        self.end_headers()
        if body:
            self.wfile.write(payload)

    def log_message(self, format: str, *args) -> None:  # noqa: A002 (http.server's signature)
        log.debug("%s %s", self.address_string(), format % args)
