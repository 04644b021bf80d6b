"""simd.server in-process: /metrics, /healthz, 404, 405, and a scrape during a tick. No sleeps."""

from __future__ import annotations

import http.client
import threading

import pytest
from daemon_fixtures import FakeClock, small_config

from simd.engine import advance
from simd.exporter import new_registry, render_text
from simd.server import MetricsServer
from simd.ticker import Ticker


@pytest.fixture()
def served():
    clock = FakeClock(0.0)
    gate = {"block": False, "entered": threading.Event(), "release": threading.Event()}

    def gated_advance(state, until):
        if gate["block"]:
            gate["entered"].set()
            assert gate["release"].wait(10)
        return advance(state, until)

    ticker = Ticker(small_config(), clock=clock, wall=lambda: 1.7e9, advance_fn=gated_advance)
    registry = new_registry(lambda: ticker.snapshot)
    server = MetricsServer(("127.0.0.1", 0), lambda: render_text(registry), ticker.health)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
    thread.start()
    try:
        yield server, ticker, clock, registry, gate
    finally:
        gate["release"].set()
        server.shutdown()
        server.server_close()
        thread.join(5)


def request(server, method, path):
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=5)
    try:
        conn.request(method, path)
        r = conn.getresponse()
        return r.status, dict(r.getheaders()), r.read()
    finally:
        conn.close()


def test_metrics(served):
    server, ticker, clock, registry, _ = served
    clock.t = 1.0
    ticker.tick()
    status, headers, body = request(server, "GET", "/metrics")
    assert status == 200
    assert headers["Content-Type"] == "text/plain; version=0.0.4; charset=utf-8"
    assert body == render_text(registry)
    assert b'simd_effective_utilization_ratio{scenario="plain"}' in body
    assert request(server, "GET", "/metrics?debug=1")[2] == body  # a query string does not matter


def test_head_is_get_without_a_body(served):
    server = served[0]
    status, headers, body = request(server, "HEAD", "/metrics")
    assert status == 200 and body == b"" and int(headers["Content-Length"]) > 1000


def test_healthz_ok_then_stalled(served):
    server, ticker, clock, _, _ = served
    assert request(server, "GET", "/healthz")[::2] == (200, b"ok\n")
    clock.t = 4.5  # 3 x 1 s + 1 s without a completed tick
    status, _, body = request(server, "GET", "/healthz")
    assert status == 503
    assert body.startswith(b"stalled: no tick completed since the start for 4.5 s")
    ticker.tick()
    assert request(server, "GET", "/healthz")[0] == 200


@pytest.mark.parametrize("path", ["/", "/metric", "/metrics/x", "/healthz/", "/favicon.ico"])
def test_unknown_paths_are_404(served, path):
    assert request(served[0], "GET", path)[0] == 404


@pytest.mark.parametrize("method", ["POST", "PUT", "DELETE", "PATCH", "OPTIONS"])
def test_other_methods_are_405(served, method):
    status, headers, _ = request(served[0], method, "/metrics")
    assert status == 405 and headers["Allow"] == "GET, HEAD"


def test_a_scrape_during_a_tick_gets_the_previous_tick(served):
    server, ticker, clock, _, gate = served
    clock.t = 1.0
    ticker.tick()
    before = request(server, "GET", "/metrics")[2]
    clock.t = 2.0
    gate["block"] = True
    worker = threading.Thread(target=ticker.tick)
    worker.start()
    try:
        assert gate["entered"].wait(10)  # the tick is blocked in the middle of advancing the states
        assert request(server, "GET", "/metrics")[2] == before
        assert request(server, "GET", "/healthz")[0] == 200
    finally:
        gate["block"] = False
        gate["release"].set()
        worker.join(10)
    after = request(server, "GET", "/metrics")[2]
    assert after != before and b"simd_ticks_total 2.0" in after
