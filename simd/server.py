"""The daemon's HTTP endpoint: a plain WSGI app (:func:`make_app`) and the threaded stdlib server that runs
it (:class:`HttpServer`; any WSGI server can run the app instead).

- ``GET /metrics``: the registry's metrics, written by prometheus_client (``make_wsgi_app``): the text
  format 0.0.4, or OpenMetrics 1.0 when ``Accept`` asks for ``application/openmetrics-text``; gzipped when
  ``Accept-Encoding`` allows gzip. ``?name[]=simd_ticks_total`` restricts the output to those names.
- ``GET /healthz``: ``200 ok`` while ticks are recent; ``503`` with the reason in the body when they stall.
- ``GET /api/v1/drills`` (and ``/api/v1/drills/{name}``): the drills, as JSON.
- ``POST /api/v1/drills/{name}``: start a drill now. Only with ``Authorization: Bearer <token>``; without a
  configured token every POST is refused (403). The optional body is a JSON object
  ``{"duration_seconds": <simulated seconds>}`` of at most 4 KiB (simd.config.DrillRequest). Errors, as
  JSON ``{"error": ...}``: 401 no or wrong token, 413 body too large, 400 malformed body, 404 unknown
  drill, 409 already running. A refused request changes nothing.

``HEAD`` is ``GET`` without the body. Any other path is 404; any other method is 405 with an ``Allow``
header. The server runs each request in its own thread and closes the connection after it (HTTP/1.0).
"""

from __future__ import annotations

import hmac
import json
import logging
import socket
from collections.abc import Callable, Iterable
from http import HTTPStatus
from socketserver import ThreadingMixIn
from typing import Protocol
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer

from prometheus_client import make_wsgi_app
from prometheus_client.registry import Collector

from simd.config import parse_drill_request
from simd.drills import DrillAlreadyRunning, UnknownDrill

log = logging.getLogger(__name__)

Health = Callable[[], tuple[bool, str]]
MAX_BODY_BYTES = 4096  # a drill request is a few dozen bytes
DRILLS = "/api/v1/drills"
JSON = "application/json"
TEXT = "text/plain; charset=utf-8"
READ = ("GET", "HEAD")


class Drills(Protocol):
    """What the control API needs (simd.drills.DrillControl has it)."""

    def list(self) -> list[dict]: ...

    def get(self, name: str) -> dict: ...

    def start(self, name: str, duration_seconds: float | None = None) -> dict: ...


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


def make_app(registry: Collector, health: Health, drills: Drills | None = None, token: str | None = None):
    """The WSGI app of the routes in the module docstring. ``drills`` None: no control API (its paths 404)."""
    return _App(registry, health, drills, token or None)


class _App:
    def __init__(self, registry: Collector, health: Health, drills: Drills | None, token: str | None):
        self.metrics = make_wsgi_app(registry)
        self.health, self.drills, self.token = health, drills, token

    def __call__(self, environ: dict, start_response) -> list[bytes]:
        method, path = environ["REQUEST_METHOD"], environ.get("PATH_INFO", "")
        name = _drill_name(path) if self.drills is not None else None
        if method in READ:
            response = self.metrics_response(environ) if path == "/metrics" else self.read(path)
        elif method == "POST" and name is not None:
            response = self.start(environ, name)
        else:
            response = _text(405, "method not allowed\n", ("Allow", "GET, HEAD" if name is None else "GET, HEAD, POST"))
        return response(start_response, head=method == "HEAD")

    def metrics_response(self, environ: dict) -> Response:
        """prometheus_client's exposition, negotiated on Accept and Accept-Encoding."""
        got: dict = {}

        def capture(status: str, headers: list, exc_info=None) -> None:
            got["status"], got["headers"] = int(status.split()[0]), headers

        body = b"".join(self.metrics({**environ, "REQUEST_METHOD": "GET"}, capture))
        return Response(got["status"], body, [*got["headers"], ("Vary", "Accept, Accept-Encoding")])

    def read(self, path: str) -> Response:
        if path == "/healthz":
            ok, reason = self.health()
            return _text(200 if ok else 503, reason + "\n")
        if self.drills is not None and path == DRILLS:
            return _json(200, {"drills": self.drills.list()})
        if self.drills is not None and path.startswith(DRILLS + "/"):
            try:
                return _json(200, self.drills.get(path[len(DRILLS) + 1:]))
            except UnknownDrill as exc:
                return _error(404, str(exc))
        return _text(404, "not found: try /metrics, /healthz or /api/v1/drills\n")

    def start(self, environ: dict, name: str) -> Response:
        if self.token is None:
            return _error(403, "the control API is disabled: start simd run with SIMD_API_TOKEN set or "
                               "--api-token-file")
        given = environ.get("HTTP_AUTHORIZATION", "")
        if not (given.startswith("Bearer ") and hmac.compare_digest(given[7:].encode(), self.token.encode())):
            return _error(401, "missing or wrong bearer token", ("WWW-Authenticate", "Bearer"))
        try:
            length = int(environ.get("CONTENT_LENGTH") or 0)
        except ValueError:
            return _error(400, "Content-Length must be an integer")
        if length > MAX_BODY_BYTES or length < 0:
            return _error(413, f"the body must be at most {MAX_BODY_BYTES} bytes, got {length}")
        try:
            request = parse_drill_request(environ["wsgi.input"].read(length) if length else b"")
        except ValueError as exc:
            return _error(400, str(exc))
        try:
            return _json(200, self.drills.start(name, request.duration_seconds))
        except UnknownDrill as exc:
            return _error(404, str(exc))
        except DrillAlreadyRunning as exc:
            return _error(409, str(exc))


def _drill_name(path: str) -> str | None:
    """The NAME of /api/v1/drills/NAME (any string without a slash); None for any other path."""
    if not path.startswith(DRILLS + "/") or "/" in path[len(DRILLS) + 1:]:
        return None
    return path[len(DRILLS) + 1:]


class HttpServer(ThreadingMixIn, WSGIServer):
    """Serves ``app``, a thread per request. Binds at construction (so a bad address or a port in use fails
    before anything starts); an IPv6 host (with a colon) gets an IPv6 socket."""

    daemon_threads = True  # request threads never hold up shutdown

    def __init__(self, address: tuple[str, int], app):
        if ":" in address[0]:
            self.address_family = socket.AF_INET6
        super().__init__(address, _Handler)
        self.set_app(app)

    @property
    def port(self) -> int:
        return self.server_address[1]


class _Handler(WSGIRequestHandler):
    def log_message(self, format: str, *args) -> None:  # noqa: A002 (http.server's signature)
        log.debug("%s %s", self.address_string(), format % args)
