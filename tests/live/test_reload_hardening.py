"""A reload that fails in any way is refused (simd.live.reload): a replay log that makes the loader raise
something other than the configuration's own error (deep nesting, a number too large), or any exception
injected into the loading; the API answers 400 with one line and the gauge says 0; SIGHUP never stops the
daemon. The parse runs off the HTTP threads, one reload at a time, and a refused reload keeps nothing."""

from __future__ import annotations

import json
import signal
import threading
import time

import pytest
from support.daemon import FakeClock, wsgi_call
from support.promstack import SimdDaemon, http_get
from support.scenarios import SMALL_YAML

from simd.daemon.process import build
from simd.live import reload as reload_module
from simd.scenario import parse_config

TOKEN = "r3load"
NESTED = "[" * 100_000 + "]" * 100_000
HUGE_TIME = json.dumps([{"node_id": "n1", "event_time": 10**400, "event_type": "fault_start",
                         "fault_type": {"Level": "L", "Class": "C", "Desc": "D"}}]).replace("1" + "0" * 400,
                                                                                          "9" * 400)


def with_replay(log_path, servers: int | None = None) -> str:
    extra = "" if servers is None else f", servers: {servers}"
    return SMALL_YAML.replace("scenarios:\n", "scenarios:\n"
                              "  - name: replayed\n    n_gpus: 64\n    step_seconds: 10\n    target_steps: 100\n"
                              "    failures: {hard_per_gpu_hour: 0.01, sdc_per_gpu_hour: 0.0}\n"
                              "    checkpoint: {interval_steps: 10, seconds: 5}\n"
                              f"    servers: {{replay: {{log: {log_path}{extra}}}}}\n", 1)


@pytest.fixture()
def daemon(tmp_path):
    path = tmp_path / "scenarios.yaml"
    path.write_text(SMALL_YAML)
    clock = FakeClock(0.0)
    parts = build(parse_config(SMALL_YAML), clock, lambda: 1.7e9, api_token=TOKEN, config_path=str(path))
    clock.t = 2.0
    parts.ticker.tick()
    return parts, clock, path


def post_reload(app):
    status, _, body = wsgi_call(app, "POST", "/-/reload", AUTHORIZATION=f"Bearer {TOKEN}")
    return status, json.loads(body)


def gauge(parts) -> float:
    return parts.ticker.registry.get_sample_value("simd_config_last_reload_successful")


@pytest.mark.parametrize("content", [NESTED, HUGE_TIME], ids=["nested", "huge-time"])
def test_a_bad_replay_log_is_a_refused_reload_through_the_api(daemon, content, caplog):
    parts, clock, path = daemon
    log = path.parent / "faults.json"
    log.write_text(content)
    path.write_text(with_replay(log))
    lanes = parts.ticker.lanes
    with caplog.at_level("INFO"):
        status, body = post_reload(parts.app)
    assert status == 400, body
    assert len(body["errors"]) == 1 and "\n" not in body["errors"][0] and str(log) in body["errors"][0]
    assert parts.ticker.lanes is lanes and gauge(parts) == 0
    assert "Traceback" not in caplog.text and content[:50] not in caplog.text
    clock.t = 3.0
    parts.ticker.tick()  # and it keeps ticking
    path.write_text(SMALL_YAML)
    assert post_reload(parts.app)[0] == 200 and gauge(parts) == 1


@pytest.mark.parametrize("exc", [RecursionError("deep"), OverflowError("big"), ZeroDivisionError("zero"),
                                 MemoryError(), KeyError("k"), RuntimeError("anything")])
def test_any_exception_while_loading_is_a_refused_reload(daemon, monkeypatch, exc):
    parts, clock, path = daemon

    def failing(source):
        raise exc

    monkeypatch.setattr(reload_module, "load_config", failing)
    lanes = parts.ticker.lanes
    status, body = post_reload(parts.app)
    assert status == 400 and len(body["errors"]) == 1 and type(exc).__name__ in body["errors"][0]
    assert parts.ticker.lanes is lanes and gauge(parts) == 0
    ok, errors = parts.reloader("SIGHUP")  # what the daemon's main loop calls on SIGHUP: no exception escapes
    assert not ok and len(errors) == 1


def test_the_parse_runs_off_the_http_thread_and_a_second_reload_is_refused_at_once(daemon, monkeypatch):
    """Two concurrent reloads held both of the server's app threads (health waited for them): the parse now
    runs on the reloader's own thread, and a second request while one runs is 409 without waiting."""
    parts, clock, path = daemon
    started, release, loaded_on = threading.Event(), threading.Event(), []
    real = reload_module.load_config

    def slow(source):
        loaded_on.append(threading.current_thread())
        started.set()
        assert release.wait(20)
        return real(source)

    monkeypatch.setattr(reload_module, "load_config", slow)
    first: list = []
    caller = threading.Thread(target=lambda: first.append(post_reload(parts.app)))
    caller.start()
    assert started.wait(10)
    second: list = []
    other = threading.Thread(target=lambda: second.append(post_reload(parts.app)))
    other.start()
    other.join(10)
    healthy = wsgi_call(parts.app, "GET", "/-/healthy")[0]
    release.set()
    caller.join(20)
    assert not other.is_alive(), "the second reload waited for the first"
    assert second[0][0] == 409 and "in progress" in second[0][1]["error"]
    assert healthy == 200
    assert first[0][0] == 200
    assert loaded_on and loaded_on[0] is not caller, "the parse ran on the HTTP thread"


def test_a_refused_reload_keeps_no_parsed_log(daemon):
    """Each parsed version of a replay log stayed in a cache, refused reload or not."""
    from simd.scenario import schema

    parts, clock, path = daemon
    log = path.parent / "faults.csv"
    for version in range(3):
        log.write_text("time,server,event,class\n" + "".join(
            f"{t},s{t % 7},start,GPU\n{t + 30},s{t % 7},end,GPU\n" for t in range(100 + version, 40000, 370)))
        # valid log, but the file is refused elsewhere: replay.servers below the servers it names
        path.write_text(with_replay(log, servers=2))
        assert post_reload(parts.app)[0] == 400
        assert not [key for key in schema.replay_cache_keys() if str(log) in key]


@pytest.mark.integration
def test_sighup_with_bad_replay_logs_never_stops_the_daemon(tmp_path):
    path = tmp_path / "scenarios.yaml"
    path.write_text(SMALL_YAML)
    simd = SimdDaemon(["--config", str(path), "--speedup", "3600", "--tick-seconds", "0.2"]).start()
    try:
        for i, content in enumerate((NESTED, HUGE_TIME)):
            log = tmp_path / f"faults{i}.json"
            log.write_text(content)
            path.write_text(with_replay(log))
            simd.proc.send_signal(signal.SIGHUP)
            deadline = time.monotonic() + 20
            while f"reload (SIGHUP) of {path} failed" not in simd.stderr().split("received SIGHUP")[-1]:
                assert simd.proc.poll() is None, simd.stderr()
                assert time.monotonic() < deadline, simd.stderr()
                time.sleep(0.1)
            assert b"simd_config_last_reload_successful 0.0" in http_get(simd.url + "/metrics")[1]
        assert simd.proc.poll() is None
    finally:
        log_text = simd.stop()
    assert "Traceback" not in log_text


REFUSED_RELOADS = """
import os, resource, sys, json
os.environ.setdefault("MALLOC_ARENA_MAX", "2")
from simd.daemon.process import build
from simd.scenario import parse_config
yaml, log, path, headroom = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
parts = build(parse_config(open(yaml).read()), lambda: 0.0, lambda: 1.7e9, config_path=yaml)
open(path, "w").write(sys.argv[5])
size = next(int(line.split()[1]) for line in open("/proc/self/status") if line.startswith("VmSize:")) * 1024
resource.setrlimit(resource.RLIMIT_AS, (size + headroom, size + headroom))
outcomes = []
for version in range(12):
    with open(log, "w") as f:
        f.write("time,server,event,class\\n")
        for t in range(version, 160_000 + version, 4):
            f.write(f"{t},s{t % 997},start,GPU\\n{t + 1},s{t % 997},end,GPU\\n")
    outcomes.append(parts.reloader("SIGHUP")[0])
open(yaml, "w").write(open(sys.argv[6]).read())
outcomes.append(parts.reloader("SIGHUP")[0])
print(json.dumps(outcomes))
"""


@pytest.mark.integration
def test_refused_reloads_of_a_large_log_keep_nothing_under_an_address_space_limit(tmp_path):
    """Each parsed version of a replay log stayed cached (16 of them) whether the reload was refused or not: twelve
    refused reloads of 40,000-fault logs (each parsed ~12 MB, the parse ~60 MB at its peak) fit within 160 MB of
    address space above the daemon's start only when a refused reload keeps nothing."""
    import subprocess
    import sys

    from support.promstack import ROOT

    yaml, good, log = tmp_path / "scenarios.yaml", tmp_path / "good.yaml", tmp_path / "faults.csv"
    yaml.write_text(SMALL_YAML)
    good.write_text(SMALL_YAML)
    refused = with_replay(log, servers=2)  # more servers named than replay.servers: refused after the parse
    out = subprocess.run([sys.executable, "-c", REFUSED_RELOADS, str(yaml), str(log), str(yaml), str(160 << 20),
                          refused, str(good)], cwd=ROOT, capture_output=True, text=True, timeout=300,
                         env={**__import__("os").environ, "MALLOC_ARENA_MAX": "2"})
    assert out.returncode == 0, out.stderr[-2000:]
    assert json.loads(out.stdout.strip().splitlines()[-1]) == [False] * 12 + [True]


@pytest.mark.integration
def test_health_answers_while_two_reloads_of_a_large_log_are_requested(tmp_path):
    """Two concurrent reloads of a large replay log held both of the server's app threads for the parse (15-23 s
    without an answer to /-/healthy). Now the first parses on the reloader's thread, the second is 409 at once, and
    /-/healthy answers throughout (each probe within 5 s: the machine may be loaded)."""
    import urllib.error
    import urllib.request

    path = tmp_path / "scenarios.yaml"
    path.write_text(SMALL_YAML)
    (tmp_path / "token").write_text(TOKEN + "\n")
    log = tmp_path / "faults.csv"
    with log.open("w") as f:
        f.write("time,server,event,class\n")
        for t in range(0, 1_600_000, 4):
            f.write(f"{t},s{t % 997},start,GPU\n{t + 1},s{t % 997},end,GPU\n")
    simd = SimdDaemon(["--config", str(path), "--speedup", "600", "--api-token-file", str(tmp_path / "token")]).start()

    def post() -> tuple[int, dict]:
        req = urllib.request.Request(simd.url + "/-/reload", method="POST",
                                     headers={"Authorization": f"Bearer {TOKEN}"})
        try:
            with urllib.request.urlopen(req, timeout=120) as r:
                return r.status, json.loads(r.read())
        except urllib.error.HTTPError as exc:
            return exc.code, json.loads(exc.read())

    try:
        path.write_text(with_replay(log))
        outcomes: list = []
        first = threading.Thread(target=lambda: outcomes.append(post()))
        first.start()
        time.sleep(0.5)  # the first reload is parsing (~3-10 s for this log)
        second = post()
        probes = []
        while first.is_alive() and len(probes) < 50:
            probes.append(http_get(simd.url + "/-/healthy", timeout=5)[0])
            time.sleep(0.1)
        first.join(120)
    finally:
        simd.stop()
    assert second[0] == 409 and "in progress" in second[1]["error"]
    assert probes and set(probes) == {200}
    assert outcomes and outcomes[0][0] == 200


def test_a_reload_that_outlasts_the_wait_is_202_and_goes_on(daemon, monkeypatch):
    parts, clock, path = daemon
    release = threading.Event()
    real = reload_module.load_config

    def slow(source):
        assert release.wait(20)
        return real(source)

    monkeypatch.setattr(reload_module, "load_config", slow)
    monkeypatch.setattr(reload_module, "RELOAD_WAIT_SECONDS", 0.2)
    path.write_text(SMALL_YAML.replace("seed: 5\n", "seed: 55\n"))
    status, body = post_reload(parts.app)
    assert status == 202 and body["status"] == "in progress"
    assert post_reload(parts.app)[0] == 409  # still running
    release.set()
    parts.reloader("SIGHUP")  # waits for the one in progress, then reloads (nothing changed since)
    assert {lane.scenario.name: lane.scenario.seed for lane in parts.ticker.lanes}["plain"] == 55
    assert gauge(parts) == 1
