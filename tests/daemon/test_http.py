"""simd.daemon.app on simd.daemon.waitress_adapter over a real socket in-process: /metrics, /healthz, 404, 405, a
scrape during a tick, gzip and OpenMetrics, IPv6, a port in use. No sleeps."""

from __future__ import annotations

import gzip
import http.client
import socket
import threading

import pytest
from prometheus_client import generate_latest
from prometheus_client.openmetrics.parser import text_string_to_metric_families as openmetrics_families
from support.daemon import FakeClock, small_config

from simd.daemon.app import make_app
from simd.daemon.waitress_adapter import HttpServer
from simd.engine import advance
from simd.live.ticker import Ticker
from simd.metrics.collector import new_registry


@pytest.fixture()
def served():
    clock = FakeClock(0.0)
    gate = {"block": False, "entered": threading.Event(), "release": threading.Event()}

    def gated_advance(state, until):
        if gate["block"]:
            gate["entered"].set()
            assert gate["release"].wait(10)
        return advance(state, until)

    # without the process collector, so that two scrapes of one tick are equal byte for byte
    registry = new_registry(lambda: ticker.snapshot, process=False)
    ticker = Ticker(small_config(), clock=clock, wall=lambda: 1.7e9, advance_fn=gated_advance, registry=registry)
    server = HttpServer(("127.0.0.1", 0), make_app(registry, ticker.health.status))
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
    thread.start()
    try:
        yield server, ticker, clock, registry, gate
    finally:
        gate["release"].set()
        server.shutdown()
        server.server_close()
        thread.join(5)


def request(server, method, path, host="127.0.0.1", **headers):
    conn = http.client.HTTPConnection(host, server.port, timeout=5)
    try:
        conn.request(method, path, headers=headers)
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
    assert body == generate_latest(registry)
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


def test_gzip_and_openmetrics_are_negotiated(served):
    server, ticker, clock, registry, _ = served
    clock.t = 1.0
    ticker.tick()
    plain = request(server, "GET", "/metrics")[2]
    status, headers, body = request(server, "GET", "/metrics", **{"Accept-Encoding": "gzip"})
    assert status == 200 and headers["Content-Encoding"] == "gzip" and int(headers["Content-Length"]) == len(body)
    assert gzip.decompress(body) == plain and len(body) < len(plain) / 4
    status, headers, body = request(server, "GET", "/metrics", Accept="application/openmetrics-text; version=1.0.0")
    assert headers["Content-Type"].startswith("application/openmetrics-text; version=1.0.0")
    assert body.endswith(b"# EOF\n")
    ticks = {f.name: f for f in openmetrics_families(body.decode())}["simd_ticks"]
    assert ticks.type == "counter" and [s.value for s in ticks.samples if s.name == "simd_ticks_total"] == [1]


def test_a_port_in_use_fails_at_construction():
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        with pytest.raises(OSError, match="Address already in use"):
            HttpServer(("127.0.0.1", busy.getsockname()[1]), make_app(new_registry(lambda: None), lambda: (True, "")))


def test_an_ipv6_host_is_served():
    if not socket.has_ipv6:
        pytest.skip("no IPv6 in this Python")
    try:
        server = HttpServer(("::1", 0), make_app(new_registry(lambda: None, process=False), lambda: (True, "ok")))
    except OSError as exc:  # a host without ::1 (IPv6 disabled in the kernel or the container)
        pytest.skip(f"cannot bind ::1: {exc}")
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
    thread.start()
    try:
        assert server.address_family == socket.AF_INET6
        assert request(server, "GET", "/healthz", host="::1")[::2] == (200, b"ok\n")
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)
