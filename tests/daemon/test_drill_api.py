"""Drills in the daemon: exact simulated start and end, retargeted parameters, the stall, the control API
(statuses, token, a refused request changes nothing), and the `simd drill` client. No sleeps."""

from __future__ import annotations

import http.client
import json
import subprocess
import sys
import threading

import pytest
from prometheus_client import generate_latest
from support.daemon import FakeClock
from support.scenarios import SMALL_YAML

from simd.daemon.app import make_app
from simd.daemon.waitress_adapter import HttpServer
from simd.live.drills import DrillControl
from simd.live.ticker import Ticker
from simd.metrics.collector import new_registry
from simd.scenario import parse_config

DRILLS = """drills:
  - name: sched
    description: plain's hard failures x10 for one simulated hour, from simulated hour 1
    duration_seconds: 3600
    start_at_seconds: 3600
    scenarios: [plain]
    effects: {hard_rate_factor: 10}
  - name: storage
    description: big's checkpoints 12x slower
    duration_seconds: 7200
    scenarios: [big]
    effects: {checkpoint_seconds_factor: 12}
  - name: hang
    description: no ticks for 5 wall seconds
    duration_seconds: 60
    scenarios: [calm]
    effects: {stall_seconds: 5}
"""
TOKEN = "s3cret-token"


def config():
    return parse_config(SMALL_YAML + DRILLS)


def ticker(clock):
    return Ticker(config(), clock=clock, wall=lambda: 1.7e9)


def spec_of(t: Ticker, name: str):
    return t.states[[i.name for i in t.infos].index(name)][0].plan.spec


def drill(t: Ticker, name: str):
    return {d.name: d for d in t.snapshot.drills}[name]


def test_scheduled_drill_changes_the_simulation_at_its_exact_time_whatever_the_ticks():
    a_clock, b_clock = FakeClock(0.0), FakeClock(0.0)
    a, b = ticker(a_clock), ticker(b_clock)
    for t in (1.0, 5.999, 6.0, 6.5, 9.0, 12.5, 20.0):  # speedup 600: the drill runs in wall seconds 6..12
        a_clock.t = t
        a.tick()
    b_clock.t = 20.0
    b.tick()
    assert a.states == b.states
    base = parse_config(SMALL_YAML).scenario("plain").failures.hard_per_gpu_hour
    assert spec_of(a, "plain").hard_per_gpu_hour == base  # ended at simulated second 7200
    assert drill(a, "sched").starts == 1 and not drill(a, "sched").active
    # without the drill the same ticks give another history
    plain = Ticker(parse_config(SMALL_YAML), clock=FakeClock(20.0), wall=lambda: 0.0)
    plain.start = 0.0
    plain.tick()
    assert plain.states[0] != a.states[0]


def test_scheduled_drill_is_active_in_its_window():
    clock = FakeClock(0.0)
    t = ticker(clock)
    clock.t = 7.0  # simulated second 4200
    t.tick()
    assert drill(t, "sched").active
    assert spec_of(t, "plain").hard_per_gpu_hour == pytest.approx(10 * 2.0e-3)
    assert b'simd_drill_active{drill="sched"} 1.0' in generate_latest(new_registry(lambda: t.snapshot))


def test_on_demand_drill_retargets_now_and_moves_the_optimum_not_the_calibrated_rate():
    clock = FakeClock(0.0)
    t = ticker(clock)
    clock.t = 1.0
    t.tick()
    i = [x.name for x in t.infos].index("big")
    before = t.infos[i]
    out = t.start_drill("storage")
    assert (out.start_seconds, out.end_seconds, out.stall_seconds) == (600.0, 7800.0, 0.0)
    after = t.infos[i]
    assert spec_of(t, "big").ckpt_seconds == 12 * 30
    young = dict(after.optimal_interval_steps)["young"] / dict(before.optimal_interval_steps)["young"]
    assert young == pytest.approx(12 ** 0.5)
    assert after.expected_interruptions_per_hour == before.expected_interruptions_per_hour
    assert drill(t, "storage").active and drill(t, "storage").starts == 1


def test_stall_drill_stops_ticks_then_catches_up():
    clock = FakeClock(0.0)
    t = ticker(clock)
    clock.t = 1.0
    t.tick()
    def ticks():
        return t.registry.get_sample_value("simd_ticks_total")

    before = ticks()
    t.start_drill("hang")
    for now in (2.0, 3.0, 4.0, 5.5):
        clock.t = now
        assert t.tick() is t.snapshot and ticks() == before  # no tick runs
    assert t.health.status()[0] is False
    clock.t = 6.5
    snap = t.tick()
    assert ticks() == before + 1 and snap.simulated_us == 6.5 * 600 * 1_000_000
    assert t.health.status() == (True, "ok")


@pytest.fixture()
def served():
    clock = FakeClock(0.0)
    t = ticker(clock)
    clock.t = 1.0
    t.tick()
    servers = []

    def serve(token):
        drills = DrillControl(lambda: t.snapshot, t.start_drill)
        s = HttpServer(("127.0.0.1", 0), make_app(t.registry, t.health.status, drills=drills, token=token))
        threading.Thread(target=s.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True).start()
        servers.append(s)
        return s

    yield t, serve
    for s in servers:
        s.shutdown()
        s.server_close()


def call(server, method, path, body=None, token=None, headers=None):
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=5)
    h = dict(headers or {})
    if token:
        h["Authorization"] = f"Bearer {token}"
    try:
        conn.request(method, path, body=body, headers=h)
        r = conn.getresponse()
        return r.status, json.loads(r.read() or b"{}")
    finally:
        conn.close()


def test_list_and_one_drill(served):
    t, serve = served
    s = serve(TOKEN)
    status, body = call(s, "GET", "/api/v1/drills")
    assert status == 200 and [d["name"] for d in body["drills"]] == ["sched", "storage", "hang"]
    assert body["drills"][0]["start_at_seconds"] == 3600 and body["drills"][1]["active"] is False
    assert call(s, "GET", "/api/v1/drills/storage")[1]["scenarios"] == ["big"]
    assert call(s, "GET", "/api/v1/drills/nope")[0] == 404


@pytest.mark.parametrize("kwargs,status,message", [
    ({}, 401, "bearer token"),
    ({"token": "wrong"}, 401, "bearer token"),
    ({"token": TOKEN, "path": "/api/v1/drills/nope"}, 404, "no drill named 'nope'"),
    # the body's messages are simd.scenario.parse_drill_request's
    ({"token": TOKEN, "body": b"{not json"}, 400, "must be a JSON object"),
    ({"token": TOKEN, "body": b"[1, 2]"}, 400, "body: must be a mapping, got [1, 2]"),
    ({"token": TOKEN, "body": b'{"duration": 5}'}, 400, "body.duration: unknown key"),
    ({"token": TOKEN, "body": b'{"duration_seconds": -5}'}, 400, "body.duration_seconds: must be > 0, got -5"),
    ({"token": TOKEN, "body": b"x" * 5000}, 413, "at most 4096 bytes"),
])
def test_bad_requests_are_refused_and_change_nothing(served, kwargs, status, message):
    t, serve = served
    s = serve(TOKEN)
    before = (list(t.drills.book.runs), t.states)
    got, body = call(s, "POST", kwargs.get("path", "/api/v1/drills/storage"), kwargs.get("body"),
                     kwargs.get("token"))
    assert got == status and message in body["error"]
    assert (list(t.drills.book.runs), t.states) == before


def test_without_a_token_every_post_is_refused(served):
    t, serve = served
    s = serve(None)
    before = list(t.drills.book.runs)
    status, body = call(s, "POST", "/api/v1/drills/storage", token=TOKEN)
    assert status == 403 and "disabled" in body["error"] and t.drills.book.runs == before


def test_start_then_conflict(served):
    t, serve = served
    s = serve(TOKEN)
    status, body = call(s, "POST", "/api/v1/drills/storage", b'{"duration_seconds": 100}', TOKEN)
    assert status == 200 and body["end_seconds"] - body["start_seconds"] == 100
    status, body = call(s, "POST", "/api/v1/drills/storage", None, TOKEN)
    assert status == 409 and "already running" in body["error"]
    assert drill(t, "storage").active


@pytest.mark.integration
def test_simd_drill_client(served, tmp_path):
    t, serve = served
    s = serve(TOKEN)
    url = f"http://127.0.0.1:{s.port}"
    token_file = tmp_path / "token"
    token_file.write_text(TOKEN + "\n")

    def simd(*args, env=None):
        return subprocess.run([sys.executable, "-m", "simd", "drill", "--url", url, *args], capture_output=True,
                              text=True, timeout=60, env=env)

    r = simd("storage", "--api-token-file", str(token_file))
    assert r.returncode == 0 and "drill storage started at simulated second 600" in r.stdout
    listing = simd("--list")
    assert listing.returncode == 0 and "storage" in listing.stdout and "ACTIVE" in listing.stdout
    again = simd("storage", "--api-token-file", str(token_file))
    assert again.returncode == 1 and "HTTP 409" in again.stderr
    wrong = tmp_path / "wrong"
    wrong.write_text("nope")
    assert "HTTP 401" in simd("hang", "--api-token-file", str(wrong)).stderr
    no_token = simd("hang", env={"PATH": "/usr/bin:/bin"})
    assert no_token.returncode == 2 and "no API token" in no_token.stderr


def test_the_drill_list_keeps_its_columns_apart_whatever_the_names():
    """`simd drill --list`: a name of 16 characters or more (corrupt-checkpoints) ran into its status; the name
    column is as wide as the longest name and a gap."""
    from simd.cli.drillclient import list_lines

    lines = list_lines([{"name": "corrupt-checkpoints", "active": False, "description": "loads found corrupt"},
                        {"name": "storage", "active": True, "description": "saves fail"}])
    assert [line.split() for line in lines] == [["corrupt-checkpoints", "idle", "loads", "found", "corrupt"],
                                                ["storage", "ACTIVE", "saves", "fail"]]
    assert lines[0].index("idle") == lines[1].index("ACTIVE")
