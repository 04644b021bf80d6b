"""simd.daemon.app's WSGI app called in-process (no socket): routes, methods, negotiation, the control API's
statuses. The daemon's own app (simd.daemon.process.assemble) on the small configuration with an injected clock."""

from __future__ import annotations

import gzip
import json

import pytest
from prometheus_client.openmetrics.parser import text_string_to_metric_families as openmetrics_families
from prometheus_client.parser import text_string_to_metric_families
from support.daemon import FakeClock, wsgi_call
from support.scenarios import SMALL_YAML, STORAGE, drills

from simd.daemon.process import assemble
from simd.scenario import parse_config

DRILLS = drills(STORAGE)
TOKEN = "t0ken"


@pytest.fixture()
def daemon():
    clock = FakeClock(0.0)
    ticker, app = assemble(parse_config(SMALL_YAML + DRILLS), clock=clock, wall=lambda: 1.7e9, api_token=TOKEN)
    clock.t = 1.0
    ticker.tick()
    return ticker, app, clock


def post(app, path, body=b"", token=TOKEN, **headers):
    if token:
        headers["AUTHORIZATION"] = f"Bearer {token}"
    status, h, out = wsgi_call(app, "POST", path, body, **headers)
    return status, h, json.loads(out)


def test_metrics_plain_text_by_default(daemon):
    _, app, _ = daemon
    status, headers, body = wsgi_call(app)
    assert status == 200 and headers["Content-Type"] == "text/plain; version=0.0.4; charset=utf-8"
    assert int(headers["Content-Length"]) == len(body) and "Content-Encoding" not in headers
    names = {f.name for f in text_string_to_metric_families(body.decode())}
    assert {"simd_effective_utilization_ratio", "simd_ticks", "process_cpu_seconds"} <= names


def test_metrics_gzip_when_accepted(daemon):
    _, app, _ = daemon
    plain = wsgi_call(app)[2]
    status, headers, body = wsgi_call(app, ACCEPT_ENCODING="deflate, gzip;q=0.9")
    assert status == 200 and headers["Content-Encoding"] == "gzip"
    assert headers["Vary"] == "Accept, Accept-Encoding"
    unzipped = gzip.decompress(body)
    # the process collector's samples (CPU, memory) may move between two scrapes; the rest is one tick
    assert [x for x in unzipped.splitlines() if b"process_" not in x] == \
        [x for x in plain.splitlines() if b"process_" not in x]


def test_metrics_openmetrics_when_asked(daemon):
    _, app, _ = daemon
    accept = "application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75," \
             "text/plain;version=0.0.4;q=0.5,*/*;q=0.1"  # what Prometheus 2.42 sends
    status, headers, body = wsgi_call(app, ACCEPT=accept)
    assert status == 200
    assert headers["Content-Type"].startswith("application/openmetrics-text; version=1.0.0; charset=utf-8")
    families = {f.name: f for f in openmetrics_families(body.decode())}  # the strict OpenMetrics parser
    assert families["simd_bucket_seconds"].type == "counter"
    assert families["simd_step_duration_seconds"].type == "histogram"
    assert {s.name for s in families["simd_ticks"].samples} == {"simd_ticks_total", "simd_ticks_created"}


def test_metrics_name_filter(daemon):
    _, app, _ = daemon
    status, _, body = wsgi_call(app, path="/metrics?name[]=simd_speedup&name[]=simd_ticks_total")
    assert status == 200
    assert {f.name for f in text_string_to_metric_families(body.decode())} == {"simd_speedup", "simd_ticks"}


def test_head_has_the_length_and_no_body(daemon):
    _, app, _ = daemon
    for path in ("/metrics", "/healthz", "/api/v1/drills"):
        status, headers, body = wsgi_call(app, "HEAD", path)
        assert status == 200 and body == b"" and int(headers["Content-Length"]) > 0, path


def test_healthz(daemon):
    _, app, clock = daemon
    assert wsgi_call(app, path="/healthz")[::2] == (200, b"ok\n")
    clock.t = 100.0  # no tick for 99 s
    status, headers, body = wsgi_call(app, path="/healthz")
    assert status == 503 and headers["Content-Type"] == "text/plain; charset=utf-8"
    assert body.startswith(b"stalled: no tick completed for 99.0 s")


@pytest.mark.parametrize("method, path, status, allow", [
    ("GET", "/", 404, None), ("GET", "/metrics/", 404, None), ("GET", "/favicon.ico", 404, None),
    ("PUT", "/metrics", 405, "GET, HEAD"), ("OPTIONS", "/metrics", 405, "GET, HEAD"),
    ("POST", "/metrics", 405, "GET, HEAD"), ("POST", "/api/v1/drills", 405, "GET, HEAD"),
    ("POST", "/api/v1/drills/a/b", 405, "GET, HEAD"), ("DELETE", "/api/v1/drills/storage", 405, "GET, HEAD, POST"),
])
def test_unknown_paths_and_methods(daemon, method, path, status, allow):
    _, app, _ = daemon
    got, headers, _ = wsgi_call(app, method, path)
    assert got == status and headers.get("Allow") == allow


def test_drill_listing_and_one(daemon):
    _, app, _ = daemon
    status, headers, body = wsgi_call(app, path="/api/v1/drills")
    assert status == 200 and headers["Content-Type"] == "application/json"
    assert [d["name"] for d in json.loads(body)["drills"]] == ["storage"]
    assert json.loads(wsgi_call(app, path="/api/v1/drills/storage")[2])["scenarios"] == ["big"]
    status, _, body = wsgi_call(app, path="/api/v1/drills/nope")
    assert status == 404 and json.loads(body) == {"error": "no drill named 'nope'"}


def test_drill_start_statuses(daemon):
    ticker, app, _ = daemon
    assert post(app, "/api/v1/drills/storage", token=None)[0] == 401
    status, headers, body = post(app, "/api/v1/drills/storage", token="wrong")
    assert status == 401 and headers["WWW-Authenticate"] == "Bearer"
    assert post(app, "/api/v1/drills/storage", b"x" * 4097)[0] == 413
    assert post(app, "/api/v1/drills/storage", b'{"duration_seconds": 0}')[0] == 400
    assert post(app, "/api/v1/drills/nope")[0] == 404
    assert ticker.drills.book.runs == []  # nothing refused changed anything
    status, _, body = post(app, "/api/v1/drills/storage", b'{"duration_seconds": 60}')
    assert status == 200 and body == {"name": "storage", "active": True, "start_seconds": 600.0,
                                      "end_seconds": 660.0, "stall_seconds": 0.0}
    status, _, body = post(app, "/api/v1/drills/storage")
    assert status == 409 and body == {"error": "drill 'storage' is already running"}
    # the listing answers from the snapshot the start published
    assert json.loads(wsgi_call(app, path="/api/v1/drills/storage")[2])["active"] is True


def test_content_length(daemon):
    ticker, app, _ = daemon
    status, _, body = post(app, "/api/v1/drills/storage", content_length="ten")
    assert status == 400 and body == {"error": "Content-Length must be a non-negative integer, got 'ten'"}
    status, _, body = post(app, "/api/v1/drills/storage", content_length="-1")  # a 400, not a 413
    assert status == 400 and body == {"error": "Content-Length must be a non-negative integer, got '-1'"}
    # a truncated body (fewer bytes than announced) never starts the drill
    status, _, body = post(app, "/api/v1/drills/storage", b'{"duration_seconds": 6', content_length="24")
    assert status == 400 and body == {"error": "the body is shorter than its Content-Length (22 of 24 bytes)"}
    assert ticker.drills.book.runs == []
    status, _, body = post(app, "/api/v1/drills/storage")  # no body: the drill's own duration
    assert status == 200 and body["end_seconds"] - body["start_seconds"] == 7200


def test_a_chunked_body_that_the_server_did_not_dechunk_is_read(daemon):
    """A WSGI server may hand over chunked input without CONTENT_LENGTH (wsgi.input_terminated)."""
    ticker, app, _ = daemon
    status, _, body = post(app, "/api/v1/drills/storage", b'{"duration_seconds": 60}', content_length="",
                           TRANSFER_ENCODING="chunked", **{"wsgi.input_terminated": True})
    assert status == 200 and body["end_seconds"] - body["start_seconds"] == 60


@pytest.mark.parametrize("header", ["Bearer t0ken", "bearer t0ken", "BEARER t0ken", "Bearer   t0ken"])
def test_the_bearer_scheme_is_case_insensitive(daemon, header):
    _, app, _ = daemon
    assert post(app, "/api/v1/drills/storage", token=None, AUTHORIZATION=header)[0] == 200


@pytest.mark.parametrize("header", ["Basic t0ken", "Bearer", "Bearer t0ken2", "Bearert0ken", "t0ken",
                                    "Bearer T0KEN", "Bearer t0ken "])
def test_other_authorizations_are_401_and_logged_once_per_interval(daemon, header, caplog):
    ticker, app, clock = daemon
    with caplog.at_level("WARNING", logger="simd.daemon.app"):
        for _ in range(3):
            assert post(app, "/api/v1/drills/storage", token=None, AUTHORIZATION=header)[0] == 401
        clock.advance(11.0)
        assert post(app, "/api/v1/drills/storage", token=None, AUTHORIZATION=header)[0] == 401
    lines = [r.getMessage() for r in caplog.records]
    assert len(lines) == 2 and lines[0].startswith("refused POST /api/v1/drills/storage from 127.0.0.1: wrong")
    assert lines[1].endswith("(3 failed authentication(s) since the last such line)")
    assert ticker.drills.book.runs == []


def test_without_a_token_posts_are_403():
    clock = FakeClock(0.0)
    _, app = assemble(parse_config(SMALL_YAML + DRILLS), clock=clock, wall=lambda: 0.0)
    status, _, body = post(app, "/api/v1/drills/storage")
    assert status == 403 and "disabled" in body["error"]


def test_a_rendering_is_reused_within_a_tick_and_renewed_after_it(daemon):
    ticker, app, clock = daemon
    first = wsgi_call(app, ACCEPT_ENCODING="gzip")[2]
    assert wsgi_call(app, ACCEPT_ENCODING="gzip")[2] is first  # the same tick: the same rendering
    assert wsgi_call(app)[2] is not first  # another variant renders its own
    clock.t = 2.0
    ticker.tick()
    after = wsgi_call(app, ACCEPT_ENCODING="gzip")[2]
    assert after != first and b"simd_ticks_total 2.0" in gzip.decompress(after)
    clock.t = 3.0
    ticker.tick()
    app.refresh()  # what the tick loop does: render ahead the variants asked for recently
    with app.renderings._rendering:  # a rendering in progress elsewhere: the prepared one is served, not waited for
        ready = wsgi_call(app, ACCEPT_ENCODING="gzip")[2]
    assert b"simd_ticks_total 3.0" in gzip.decompress(ready)
    clock.t = 4.0
    ticker.tick()
    with app.renderings._rendering:  # the new tick is not rendered yet and another thread is at it: the previous one
        assert wsgi_call(app, ACCEPT_ENCODING="gzip")[2] is ready
    assert b"simd_ticks_total 4.0" in gzip.decompress(wsgi_call(app, ACCEPT_ENCODING="gzip")[2])


@pytest.mark.parametrize("method, path", [("POST", "/nope"), ("DELETE", "/"), ("PUT", "/metrics/x"),
                                          ("POST", "/-/reloadx")])
def test_any_method_on_a_path_that_is_not_there_is_404(daemon, method, path):
    """It was 405 with an Allow header for a path that allows nothing."""
    _, app, _ = daemon
    got, headers, _ = wsgi_call(app, method, path)
    assert got == 404 and "Allow" not in headers


def test_a_scrape_after_a_control_request_is_never_given_a_rendering_from_before_it(daemon):
    """While another thread renders, a scrape gets the previous rendering (above), but not one begun before a
    drill's start or a reload that has been answered since: whoever posts and then scrapes sees what changed (a
    real daemon's scrape right after POST /-/reload was given the failed reload's rendering)."""
    import threading

    _, app, _ = daemon
    starts = b'simd_drill_starts_total{drill="storage"} '
    assert starts + b"0.0" in wsgi_call(app)[2]
    app.renderings._rendering.acquire()  # the tick loop is rendering ahead, begun before the request
    threading.Timer(0.3, app.renderings._rendering.release).start()
    assert post(app, "/api/v1/drills/storage")[0] == 200
    assert starts + b"1.0" in wsgi_call(app)[2]  # waits for that rendering to end, then renders its own
