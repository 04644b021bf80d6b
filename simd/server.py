"""The daemon's HTTP endpoint: a small threaded server.

- ``GET /metrics``: the metrics in the Prometheus text format 0.0.4 (``metrics()``, exporter.render_text),
  whatever the ``Accept`` header asks for: every Prometheus accepts it.
- ``GET /healthz``: ``200 ok`` while ticks are recent; ``503`` with the reason in the body when they stall.
- ``GET /api/v1/drills`` (and ``/api/v1/drills/{name}``): the drills, as JSON.
- ``POST /api/v1/drills/{name}``: start a drill now. Only with ``Authorization: Bearer <token>``; without a
  configured token every POST is refused (403). The optional body is a JSON object
  ``{"duration_seconds": <simulated seconds>}`` of at most 4 KiB. Errors, as JSON ``{"error": ...}``:
  401 no or wrong token, 413 body too large, 400 malformed body, 404 unknown drill, 409 already running.
  A refused request changes nothing.

Any other path is 404; any other method is 405 with an ``Allow`` header. Each request runs in its own thread.
"""

from __future__ import annotations

import hmac
import json
import logging
import math
import socket
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Protocol

from prometheus_client.exposition import CONTENT_TYPE_PLAIN_0_0_4

from simd.drills import DrillError

log = logging.getLogger(__name__)

Health = Callable[[], tuple[bool, str]]
Metrics = Callable[[], bytes]
MAX_BODY_BYTES = 4096  # a drill request is a few dozen bytes
DRILLS = "/api/v1/drills"
JSON = "application/json"


class Drills(Protocol):
    """What the control API needs of the tick loop (ticker.Ticker has it)."""

    def list_drills(self) -> list[dict]: ...

    def start_drill(self, name: str, duration_seconds: float | None = None) -> dict: ...


class MetricsServer(ThreadingHTTPServer):
    """Binds at construction (so a bad address or a port in use fails before anything starts)."""

    daemon_threads = True  # request threads never hold up shutdown

    def __init__(self, address: tuple[str, int], metrics: Metrics, health: Health, drills: Drills | None = None,
                 token: str | None = None):
        self.metrics, self.health, self.drills, self.token = metrics, health, drills, token or None
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
        elif self.server.drills is not None and (path == DRILLS or path.startswith(DRILLS + "/")):
            drills = self.server.drills.list_drills()
            if path == DRILLS:
                self._json(200, {"drills": drills}, body)
                return
            name = path[len(DRILLS) + 1:]
            found = [d for d in drills if d["name"] == name]
            if found:
                self._json(200, found[0], body)
            else:
                self._json(404, {"error": f"no drill named {name!r}"}, body)
        else:
            self._send(404, "text/plain; charset=utf-8", b"not found: try /metrics, /healthz or /api/v1/drills\n",
                       body)

    def do_POST(self) -> None:  # noqa: N802
        path = self.path.split("?", 1)[0]
        if self.server.drills is None or not path.startswith(DRILLS + "/") or "/" in path[len(DRILLS) + 1:]:
            self._not_allowed()
            return
        self.close_connection = True  # a refused request's body may be left unread
        if self.server.token is None:
            self._json(403, {"error": "the control API is disabled: start simd run with SIMD_API_TOKEN set or "
                                      "--api-token-file"})
            return
        given = self.headers.get("Authorization", "")
        if not (given.startswith("Bearer ") and hmac.compare_digest(given[7:].encode(), self.server.token.encode())):
            self._json(401, {"error": "missing or wrong bearer token"}, extra={"WWW-Authenticate": "Bearer"})
            return
        try:
            length = int(self.headers.get("Content-Length") or 0)
        except ValueError:
            self._json(400, {"error": "Content-Length must be an integer"})
            return
        if length > MAX_BODY_BYTES or length < 0:
            self._json(413, {"error": f"the body must be at most {MAX_BODY_BYTES} bytes, got {length}"})
            return
        try:
            duration = _duration(self.rfile.read(length) if length else b"")
        except ValueError as exc:
            self._json(400, {"error": str(exc)})
            return
        try:
            started = self.server.drills.start_drill(path[len(DRILLS) + 1:], duration)
        except DrillError as exc:
            self._json(exc.status, {"error": str(exc)})
            return
        self.close_connection = False
        self._json(200, started)

    def _not_allowed(self) -> None:
        self.close_connection = True  # any request body is left unread
        self._send(405, "text/plain; charset=utf-8", b"method not allowed\n", True, {"Allow": "GET, HEAD"})

    do_PUT = do_DELETE = do_PATCH = do_OPTIONS = do_TRACE = do_CONNECT = _not_allowed  # noqa: N815

    def _json(self, code: int, payload: object, body: bool = True, extra: dict | None = None) -> None:
        self._send(code, JSON, (json.dumps(payload) + "\n").encode(), body, extra)

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


def _duration(raw: bytes) -> float | None:
    """The optional ``{"duration_seconds": x}`` body; ValueError with a readable message otherwise."""
    if not raw.strip():
        return None
    try:
        body = json.loads(raw)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"the body must be a JSON object: {exc}") from None
    if not isinstance(body, dict):
        raise ValueError(f"the body must be a JSON object, got {type(body).__name__}")
    unknown = sorted(set(body) - {"duration_seconds"})
    if unknown:
        raise ValueError(f"unknown key(s) {', '.join(unknown)}: only duration_seconds is accepted")
    d = body.get("duration_seconds")
    if d is None:
        return None
    if isinstance(d, bool) or not isinstance(d, (int, float)) or not math.isfinite(d) or not 0 < d <= 1e12:
        raise ValueError(f"duration_seconds must be a number in (0, 1e12] of simulated seconds, got {d!r}")
    return float(d)
