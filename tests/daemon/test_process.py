"""``simd run`` as a process: signals, logs, bad flags, a port in use, curl --compressed and OpenMetrics."""

from __future__ import annotations

import gzip
import shutil
import signal
import socket
import subprocess
import sys
import time

import pytest
from prometheus_client.openmetrics.parser import text_string_to_metric_families as openmetrics_families
from prometheus_client.parser import text_string_to_metric_families
from support.promstack import ROOT, SimdDaemon, http_get, require_tool

from simd.cli import main
from simd.scenario import default_config

SHUTDOWN_LIMIT_SECONDS = 5.0  # issue #3: exit 0 within 5 s of SIGTERM or SIGINT


@pytest.mark.integration
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_signal_stops_the_daemon_with_exit_0_within_5_seconds(sig):
    daemon = SimdDaemon(["--speedup", "3600", "--tick-seconds", "0.1"]).start()
    try:
        status, body = http_get(daemon.url + "/metrics")
        assert status == 200 and b"simd_build_info" in body
        daemon.proc.send_signal(sig)
        t0 = time.monotonic()
        rc = daemon.proc.wait(timeout=SHUTDOWN_LIMIT_SECONDS)
        assert time.monotonic() - t0 < SHUTDOWN_LIMIT_SECONDS
        assert rc == 0
    finally:
        log = daemon.stop()
    # the start-up summary: address, speedup, scenarios; the configuration's warnings; the stop
    assert f"listening on http://{daemon.target}/metrics" in log
    assert "speedup 3600" in log and "a tick every 0.1 s" in log
    assert f"{len(default_config().all_scenarios)} scenarios" in log and "llama3-16k" in log and "ckpt-sweep-125" in log
    # the embedded default's deliberate risks are acknowledged: info lines, no warning
    assert "INFO simd.daemon.process: config (acknowledged): scenario naive: no validation" in log
    assert "WARNING simd.daemon.process: config" not in log
    assert f"received {sig.name}" in log and "stopped after" in log
    assert "Traceback" not in log


@pytest.mark.integration
def test_port_in_use_is_a_clear_error():
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        r = subprocess.run([sys.executable, "-m", "simd", "run", "--listen", f"127.0.0.1:{port}"], cwd=ROOT,
                           capture_output=True, text=True, timeout=30)
    assert r.returncode == 1
    assert f"cannot listen on 127.0.0.1:{port}: Address already in use" in r.stderr
    assert "Traceback" not in r.stderr


@pytest.mark.parametrize("argv, message", [
    (["--listen", "9109"], "argument --listen: must be HOST:PORT, got '9109'"),
    (["--listen", "localhost:http"], "argument --listen: port must be an integer in 0..65535, got 'http'"),
    (["--listen", "127.0.0.1:70000"], "argument --listen: port must be an integer in 0..65535, got '70000'"),
    (["--listen", "::1:9109"], "argument --listen: an IPv6 host must be in brackets"),
    # the limits and messages of simd.scenario's types (Speedup, TickSeconds)
    (["--speedup", "0"], "argument --speedup: must be > 0, got '0'"),
    (["--speedup", "fast"], "argument --speedup: must be a number, got 'fast'"),
    (["--speedup", "nan"], "argument --speedup: must be a finite number, got 'nan'"),
    (["--tick-seconds", "0.001"], "argument --tick-seconds: must be >= 0.01, got '0.001'"),
])
def test_bad_flags_are_one_line_and_exit_2(argv, message, capsys):
    with pytest.raises(SystemExit) as exc:
        main(["run", *argv])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("simd run: error: ") and message in err


def test_a_bad_config_file_exits_2(tmp_path, capsys):
    bad = tmp_path / "bad.yaml"
    bad.write_text("speedup: -1\nscenarios: []\n")
    assert main(["run", "--config", str(bad)]) == 2
    err = capsys.readouterr().err
    assert "error: speedup: must be > 0, got -1" in err


@pytest.mark.integration
def test_an_unresolvable_host_exits_2():
    r = subprocess.run([sys.executable, "-m", "simd", "run", "--listen", "no-such-host.invalid:9109"], cwd=ROOT,
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 2
    assert "cannot listen on no-such-host.invalid:9109: cannot resolve host" in r.stderr


def curl(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([shutil.which("curl") or "curl", "--silent", "--show-error", "--fail", *args],
                          capture_output=True, timeout=30)


@pytest.mark.integration
def test_curl_compressed_and_openmetrics_against_simd_run(tmp_path):
    """What a user and Prometheus see: ``curl --compressed`` gets gzip on the wire and the text format after
    decoding; an OpenMetrics Accept header gets OpenMetrics 1.0 that the strict parser reads; promtool
    accepts the text format."""
    if shutil.which("curl") is None:
        pytest.skip("curl not found on PATH")
    with SimdDaemon(["--speedup", "3600", "--tick-seconds", "0.2"]) as daemon:
        url = daemon.url + "/metrics"
        raw = curl("--header", "Accept-Encoding: gzip", "--dump-header", str(tmp_path / "h1"), url)
        assert raw.returncode == 0, raw.stderr
        assert "content-encoding: gzip" in (tmp_path / "h1").read_text().lower()
        text = gzip.decompress(raw.stdout)
        decoded = curl("--compressed", url)
        assert decoded.returncode == 0 and decoded.stdout.startswith(b"# HELP simd_")
        names = {f.name for f in text_string_to_metric_families(decoded.stdout.decode())}
        assert {"simd_effective_utilization_ratio", "simd_ticks", "process_cpu_seconds"} <= names
        assert len(raw.stdout) < len(text) / 4  # gzip: about 6 kB instead of 55 kB on the default configuration

        om = curl("--header", "Accept: application/openmetrics-text; version=1.0.0", "--dump-header",
                  str(tmp_path / "h2"), url)
        assert om.returncode == 0, om.stderr
        assert "content-type: application/openmetrics-text; version=1.0.0" in (tmp_path / "h2").read_text().lower()
        families = {f.name: f for f in openmetrics_families(om.stdout.decode())}
        assert families["simd_scenario_simulated_seconds"].type == "counter"
        assert {"simd_step_duration_seconds", "process_cpu_seconds", "simd_build_info"} <= families.keys()

        promtool = require_tool("promtool")
        check = subprocess.run([promtool, "check", "metrics"], input=decoded.stdout, capture_output=True, timeout=30)
        assert (check.returncode, check.stdout, check.stderr) == (0, b"", b"")
