"""Shared by the daemon and exporter tests: a small configuration that exercises every feature the exporter
reads (replicas, a sweep, causes, warm recovery, stragglers with mitigation, a failure-free scenario, jobs
that complete within minutes of simulated time), a clock the tests move by hand, and an in-process WSGI
client (no socket)."""

from __future__ import annotations

import io
from wsgiref.util import setup_testing_defaults

from simd.scenario import parse_config

SMALL_YAML = """
speedup: 600
tick_seconds: 1.0
scenarios:
  - name: plain        # seed 000's job with 10x the failure rates, so that things happen within hours
    seed: 5
    n_gpus: 1024
    step_seconds: 60
    target_steps: 300
    failures: {hard_per_gpu_hour: 2.0e-3, sdc_per_gpu_hour: 1.5e-3}
    checkpoint: {interval_steps: 25, seconds: 300}
    validation: {interval_steps: 25, seconds: 20}
    restart_seconds: 60
  - name: calm         # no failures at all, two replicas
    seed: 6
    replicas: 2
    n_gpus: 8
    step_seconds: 10
    target_steps: 100
    failures: {hard_per_gpu_hour: 0.0, sdc_per_gpu_hour: 0.0}
    checkpoint: {interval_steps: 10, seconds: 5}
  - name: big          # causes, warm recovery, stragglers replaced after 50 steps
    seed: 7
    replicas: 2
    n_gpus: 16384
    step_seconds: 6
    target_steps: 2000
    failures: {hard_per_gpu_hour: 2.0e-4, sdc_per_gpu_hour: 1.0e-5, causes: llama3}
    checkpoint: {interval_steps: 100, seconds: 30}
    validation: {interval_steps: 50, seconds: 5}
    recovery: {strategy: warm}
    stragglers: {jitter_seconds: 0.5, slow_ranks: 1, slowdown: 1.25, mitigation: {detect_after_steps: 50}}
sweeps:
  - name: sw
    checkpoint_intervals: [10, 40]
    scenario:
      seed: 20
      replicas: 3
      n_gpus: 1024
      step_seconds: 30
      target_steps: 100000
      failures: {hard_per_gpu_hour: 1.0e-3, sdc_per_gpu_hour: 0.0}
      checkpoint: {interval_steps: 10, seconds: 60}
      restart_seconds: 120
"""


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
