"""Shared by the daemon and metrics tests: the daemon's small configuration (support.scenarios.SMALL_YAML)
parsed, a clock the tests move by hand, and an in-process WSGI client (no socket)."""

from __future__ import annotations

import io
from wsgiref.util import setup_testing_defaults

from simd.scenario import parse_config
from support.scenarios import SMALL_YAML


def small_config():
    return parse_config(SMALL_YAML, "<tests/support/daemon.py>")


class FakeClock:
    """A monotonic clock that only moves when told to (seconds)."""

    def __init__(self, t: float = 1000.0):
        self.t = t

    def __call__(self) -> float:
        return self.t

    def advance(self, dt: float) -> None:
        self.t += dt


def wsgi_call(app, method: str = "GET", path: str = "/metrics", body: bytes = b"", content_length: str | None = None,
              **headers: str):
    """(status, headers, body) of one in-process request to a WSGI app. ``headers`` as CGI names without the
    HTTP_ prefix (``ACCEPT_ENCODING="gzip"``), or WSGI keys (``wsgi.input_terminated``); Content-Length is the
    body's length unless given."""
    path, _, query = path.partition("?")
    environ = {"REQUEST_METHOD": method, "PATH_INFO": path, "QUERY_STRING": query, "wsgi.input": io.BytesIO(body),
               "CONTENT_LENGTH": (str(len(body)) if body else "") if content_length is None else content_length}
    environ.update({k if k.startswith("wsgi.") else f"HTTP_{k}": v for k, v in headers.items()})
    environ.setdefault("REMOTE_ADDR", "127.0.0.1")
    setup_testing_defaults(environ)
    got = {}

    def start_response(status, response_headers, exc_info=None):
        got["status"], got["headers"] = int(status.split()[0]), dict(response_headers)

    out = b"".join(app(environ, start_response))
    return got["status"], got["headers"], out
