"""``simd run`` as a process: signals, logs, bad flags, a port in use."""

from __future__ import annotations

import signal
import socket
import subprocess
import sys
import time

import pytest
from promstack import ROOT, SimdDaemon, http_get

from simd.cli import main

SHUTDOWN_LIMIT_SECONDS = 5.0  # issue #3: exit 0 within 5 s of SIGTERM or SIGINT


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
    assert "16 scenarios" in log and "llama3-16k" in log and "ckpt-sweep-125" in log
    assert "WARNING simd.daemon: config: scenario naive: no validation" in log
    assert f"received {sig.name}" in log and "stopped after" in log
    assert "Traceback" not in log


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
    (["--speedup", "0"], "argument --speedup: must be a number > 0 and <= 1e+09, got '0'"),
    (["--speedup", "fast"], "argument --speedup: must be a number, got 'fast'"),
    (["--speedup", "nan"], "argument --speedup: must be a finite number, got 'nan'"),
    (["--tick-seconds", "0.001"], "argument --tick-seconds: must be a number in [0.01, 3600], got '0.001'"),
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


def test_an_unresolvable_host_exits_2():
    r = subprocess.run([sys.executable, "-m", "simd", "run", "--listen", "no-such-host.invalid:9109"], cwd=ROOT,
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 2
    assert "cannot listen on no-such-host.invalid:9109: cannot resolve host" in r.stderr
