"""Live reload (simd.live.reload, simd.live.ticker.Ticker.reload): a valid changed file, an invalid one, one that
removes a scenario; through ``POST /-/reload`` in-process, and SIGHUP and the endpoint against a real
``simd run`` (integration)."""

from __future__ import annotations

import json
import signal
import time

import pytest
from support.daemon import FakeClock, wsgi_call
from support.promstack import SimdDaemon, http_get
from support.scenarios import SMALL_YAML

from simd.daemon.process import build
from simd.engine import US_PER_SECOND
from simd.scenario import parse_config

TOKEN = "r3load"
WALL = [1.7e9]


@pytest.fixture()
def daemon(tmp_path):
    path = tmp_path / "scenarios.yaml"
    path.write_text(SMALL_YAML)
    clock = FakeClock(0.0)
    WALL[0] = 1.7e9
    parts = build(parse_config(SMALL_YAML), clock, lambda: WALL[0], api_token=TOKEN, config_path=str(path))
    clock.t = 2.0
    parts.ticker.tick()
    return parts, clock, path


def reload(app, token=TOKEN):
    status, _, body = wsgi_call(app, "POST", "/-/reload", AUTHORIZATION=f"Bearer {token}")
    return status, json.loads(body)


def metrics(parts) -> str:
    return wsgi_call(parts.app)[2].decode()


def value(parts, name, **labels):
    return parts.ticker.registry.get_sample_value(name, labels)


def test_a_valid_changed_file_keeps_the_unchanged_and_restarts_the_changed(daemon):
    parts, clock, path = daemon
    t = parts.ticker
    before = {lane.scenario.name: lane for lane in t.lanes}
    path.write_text(SMALL_YAML.replace("seed: 5\n", "seed: 55\n")  # plain changed
                    + "  - name: extra\n    scenario: {n_gpus: 8, step_seconds: 10, target_steps: 50, failures: "
                      "{hard_per_gpu_hour: 0, sdc_per_gpu_hour: 0}, checkpoint: {interval_steps: 5, seconds: 1}}\n"
                      "    checkpoint_intervals: [5, 10]\n")
    WALL[0] = 1.7e9 + 60
    status, body = reload(parts.app)
    assert status == 200 and body["status"] == "success"
    assert body["restarted"] == ["plain"] and body["added"] == ["extra-5", "extra-10"] and body["removed"] == []
    assert body["kept"] == ["calm", "big", "sw-10", "sw-40"]
    lanes = {lane.scenario.name: lane for lane in t.lanes}
    assert all(lanes[n].states is before[n].states for n in body["kept"])  # the very same state goes on
    assert lanes["plain"].origin_us == 1200 * US_PER_SECOND and lanes["plain"].states[0].clock == 0
    assert value(parts, "simd_config_last_reload_successful") == 1
    assert value(parts, "simd_config_last_reload_success_timestamp_seconds") == 1.7e9 + 60
    clock.t = 3.0
    t.tick()
    text = metrics(parts)
    assert 'simd_scenario_simulated_seconds_total{scenario="plain"} 600.0' in text  # restarted: its own clock
    assert 'simd_scenario_simulated_seconds_total{scenario="calm"} 3600.0' in text  # 2 replicas x 1800 s
    assert 'simd_scenario_replicas{scenario="extra-10"} 1.0' in text


def test_an_invalid_file_keeps_the_running_configuration(daemon, caplog):
    parts, clock, path = daemon
    t = parts.ticker
    lanes, config = t.lanes, t.config
    path.write_text(SMALL_YAML.replace("n_gpus: 8\n", "n_gpus: -8\n").replace("seed: 5", "seed: 5\n    seed: 6"))
    with caplog.at_level("ERROR", logger="simd.live.reload"):
        status, body = reload(parts.app)
    assert status == 400 and body["error"].startswith("the configuration was not reloaded")
    assert len(body["errors"]) == 1 and "key 'seed' given twice in one mapping" in body["errors"][0]
    assert t.lanes is lanes and t.config is config
    assert value(parts, "simd_config_last_reload_successful") == 0
    assert value(parts, "simd_config_last_reload_success_timestamp_seconds") == 1.7e9  # the start's
    assert "failed: 1 error(s); the previous configuration keeps running" in caplog.text
    assert "simd_config_last_reload_successful 0.0" in metrics(parts)
    path.write_bytes(b"\xff\xfe")  # not even text
    assert reload(parts.app)[0] == 400 and t.lanes is lanes
    clock.t = 3.0
    t.tick()  # and it keeps ticking
    assert t.snapshot.simulated_us == 1800 * US_PER_SECOND
    path.write_text(SMALL_YAML)
    assert reload(parts.app)[0] == 200 and value(parts, "simd_config_last_reload_successful") == 1


def test_a_file_removing_a_scenario_removes_its_series(daemon):
    parts, clock, path = daemon
    assert 'scenario="big"' in metrics(parts)
    big = SMALL_YAML[SMALL_YAML.index("  - name: big"):SMALL_YAML.index("sweeps:")]
    path.write_text(SMALL_YAML.replace(big, ""))
    status, body = reload(parts.app)
    assert status == 200 and body["removed"] == ["big"]
    assert 'scenario="big"' not in metrics(parts) and 'scenario="plain"' in metrics(parts)


def test_reload_needs_the_token_and_changes_nothing_without_it(daemon):
    parts, clock, path = daemon
    path.write_text(SMALL_YAML.replace("seed: 5\n", "seed: 55\n"))
    lanes = parts.ticker.lanes
    assert reload(parts.app, token="wrong")[0] == 401
    assert wsgi_call(parts.app, "GET", "/-/reload")[0] == 405
    assert parts.ticker.lanes is lanes


def test_a_speedup_change_keeps_the_simulated_clock_continuous(daemon):
    parts, clock, path = daemon
    t = parts.ticker
    path.write_text(SMALL_YAML.replace("speedup: 600", "speedup: 60"))
    clock.t = 2.5  # half a wall second after the last tick: simulated 1200 + 300 so far at the old speedup
    assert reload(parts.app)[0] == 200 and t.speedup == 60
    clock.t = 3.5
    t.tick()
    assert t.snapshot.simulated_us == (1500 + 60) * US_PER_SECOND


@pytest.mark.integration
def test_sighup_and_the_endpoint_against_a_real_daemon(tmp_path):
    path = tmp_path / "scenarios.yaml"
    path.write_text(SMALL_YAML)
    (tmp_path / "token").write_text(TOKEN + "\n")
    simd = SimdDaemon(["--config", str(path), "--speedup", "3600", "--tick-seconds", "0.2",
                       "--api-token-file", str(tmp_path / "token")]).start()
    try:
        def scrape() -> str:
            return http_get(simd.url + "/metrics")[1].decode()

        def wait_for(text: str, present: bool = True, timeout: float = 10.0) -> None:
            deadline = time.monotonic() + timeout
            while (text in scrape()) != present:
                assert time.monotonic() < deadline, f"{text!r} {'never appeared' if present else 'stayed'}"
                time.sleep(0.1)

        # SIGHUP with a file removing a scenario
        big = SMALL_YAML[SMALL_YAML.index("  - name: big"):SMALL_YAML.index("sweeps:")]
        path.write_text(SMALL_YAML.replace(big, ""))
        simd.proc.send_signal(signal.SIGHUP)
        wait_for('scenario="big"', present=False)
        assert "simd_config_last_reload_successful 1.0" in scrape()
        # SIGHUP with an invalid file: the old configuration keeps running
        path.write_text("scenarios: [")
        simd.proc.send_signal(signal.SIGHUP)
        wait_for("simd_config_last_reload_successful 0.0")
        assert 'scenario="plain"' in scrape()
        # the endpoint with a valid changed file
        import urllib.request

        path.write_text(SMALL_YAML.replace("seed: 5\n", "seed: 55\n"))
        req = urllib.request.Request(simd.url + "/-/reload", method="POST",
                                     headers={"Authorization": f"bearer {TOKEN}"})
        with urllib.request.urlopen(req, timeout=10) as r:
            body = json.loads(r.read())
        assert body["restarted"] == ["plain"] and body["added"] == ["big"]
        assert "simd_config_last_reload_successful 1.0" in scrape() and 'scenario="big"' in scrape()
        assert simd.proc.poll() is None
    finally:
        log = simd.stop()
    assert "received SIGHUP" in log and "1 removed (big)" in log and "reload: <config>" not in log
    assert "reload (SIGHUP) of" in log and "failed: 1 error(s); the previous configuration keeps running" in log
    assert "reload (POST /-/reload) of" in log and "Traceback" not in log


def test_the_new_lanes_are_built_outside_the_tick_loops_lock(daemon, monkeypatch):
    """Reloading 100,000 replicas held the lock for 35 s (/healthz 503 for 30 s). Now the new and changed
    scenarios' lanes are built before the lock is taken: a tick runs while they are being built, and the swap
    that follows keeps what that tick did."""
    import threading

    from simd.live import ticker as ticker_module

    parts, clock, path = daemon
    t = parts.ticker
    building, release = threading.Event(), threading.Event()
    real = ticker_module.new_lane

    def slow_new_lane(*args, **kwargs):
        building.set()
        assert release.wait(10), "the test did not release the build"
        return real(*args, **kwargs)

    monkeypatch.setattr(ticker_module, "new_lane", slow_new_lane)
    path.write_text(SMALL_YAML.replace("seed: 5\n", "seed: 55\n"))  # plain changed: a new lane to build
    result = []
    reloading = threading.Thread(target=lambda: result.append(parts.reloader("SIGHUP")))
    reloading.start()
    assert building.wait(10)
    before = t.snapshot.simulated_us
    clock.t += 1.0
    done = threading.Thread(target=t.tick)
    done.start()
    done.join(5)
    assert not done.is_alive(), "a tick waited for the reload's build"
    assert t.snapshot.simulated_us > before
    kept = {lane.scenario.name: lane for lane in t.lanes if lane.scenario.name != "plain"}
    release.set()
    reloading.join(10)
    assert result and result[0][0], result
    after = {lane.scenario.name: lane for lane in t.lanes}
    assert all(after[name].states == lane.states for name, lane in kept.items())  # the tick's work is kept
    assert after["plain"].scenario.seed == 55
    clock.t += 1.0
    t.tick()
    assert after["plain"].at_us <= t.snapshot.simulated_us
    assert {lane.scenario.name: lane.at_us for lane in t.lanes}["plain"] == t.snapshot.simulated_us  # caught up


@pytest.mark.integration
def test_a_reload_at_the_replica_cap_keeps_the_daemon_healthy(tmp_path):
    """The issue's reload of 100 scenarios of 10,000 replicas held the tick loop's lock for 35 s (/healthz 503
    for 30 s). A file at today's cap, 50,000 replicas, reloaded into a real daemon while /-/healthy is probed
    every 0.1 s: the reload succeeds, and no probe meets a 503 (a stall would need 3 ticks + 1 s)."""
    import threading
    import urllib.request

    from support.scenarios import job, scenario_file

    from simd.scenario.limits import MAX_TOTAL_REPLICAS

    path = tmp_path / "scenarios.yaml"
    path.write_text(SMALL_YAML)
    (tmp_path / "token").write_text(TOKEN + "\n")
    simd = SimdDaemon(["--config", str(path), "--speedup", "600", "--api-token-file", str(tmp_path / "token")])
    simd.start()
    probes, stop = [], threading.Event()

    def probe() -> None:
        while not stop.is_set():
            try:
                probes.append(http_get(simd.url + "/-/healthy", timeout=5)[0])
            except OSError:
                probes.append(None)
            time.sleep(0.1)

    prober = threading.Thread(target=probe, daemon=True)
    try:
        n = 5
        path.write_text(scenario_file(*[job(f"big{i}", seed=100 * i, replicas=MAX_TOTAL_REPLICAS // n, n_gpus=64,
                                            step_seconds=10, target_steps=200) for i in range(n)]))
        prober.start()
        time.sleep(1.0)
        req = urllib.request.Request(simd.url + "/-/reload", method="POST",
                                     headers={"Authorization": f"Bearer {TOKEN}"})
        with urllib.request.urlopen(req, timeout=120) as r:
            body = json.loads(r.read())
        assert body["status"] == "success" and len(body["added"]) == n
        time.sleep(1.5)  # ticks of the new lanes
    finally:
        stop.set()
        prober.join(10)
        simd.stop()
    assert len(probes) > 20 and set(probes) == {200}, probes
