"""``simd run``'s start-up refusals and its other signals: a token file of several lines, a state
directory held by another daemon; SIGUSR1 (state summary), SIGQUIT (thread stacks, goes on), SIGUSR2
(ignored) and SIGTERM saving the state, against a real process."""

from __future__ import annotations

import signal
import time

import pytest
from support.promstack import SimdDaemon, http_get

from simd.cli import main
from simd.daemon import process as daemon
from simd.live.persist import StateDir, decode
from simd.scenario import default_config


@pytest.mark.parametrize("content, message", [
    ("abc\ndef\n", "has more than one line: the bearer token must be a single line"),
    ("abc\r\ndef", "has more than one line"),
    ("two words", "the bearer token must be visible ASCII characters without spaces"),
    ("\n\n", "is empty"),
])
def test_an_unusable_token_file_is_refused_at_start(tmp_path, capsys, content, message):
    token = tmp_path / "token"
    token.write_text(content)
    assert main(["run", "--api-token-file", str(token)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(f"simd run: error: --api-token-file: {token}") and message in err


def test_a_token_in_the_environment_is_checked_the_same_way(monkeypatch, capsys):
    monkeypatch.setenv("SIMD_API_TOKEN", "a\nb")
    assert main(["run"]) == 2
    assert "$SIMD_API_TOKEN has more than one line" in capsys.readouterr().err


def test_a_state_directory_in_use_is_exit_1(tmp_path, caplog):
    held = StateDir(tmp_path).open()
    try:
        with caplog.at_level("ERROR", logger="simd.daemon.process"):
            assert daemon.run(default_config(), listen=("127.0.0.1", 0), state_dir=str(tmp_path)) == 1
        assert f"cannot use --state-dir {tmp_path}: {tmp_path} is in use by another simd run" in caplog.text
    finally:
        held.close()


@pytest.mark.integration
def test_other_signals_and_the_state_saved_at_shutdown(tmp_path):
    simd = SimdDaemon(["--speedup", "3600", "--state-dir", str(tmp_path)]).start()
    try:
        deadline = time.monotonic() + 30
        while b"simd_ticks_total 0.0" in http_get(simd.url + "/metrics?name[]=simd_ticks_total")[1]:
            assert time.monotonic() < deadline, "no first tick"
            time.sleep(0.1)
        for sig in (signal.SIGUSR1, signal.SIGQUIT, signal.SIGUSR2):
            simd.proc.send_signal(sig)
            time.sleep(0.5)
            assert simd.proc.poll() is None and http_get(simd.url + "/metrics")[0] == 200  # still serving
        deadline = time.monotonic() + 10
        while "Current thread" not in simd.stderr() and time.monotonic() < deadline:
            time.sleep(0.1)
        simd.proc.send_signal(signal.SIGTERM)
        assert simd.proc.wait(10) == 0
    finally:
        log = simd.stop()
    assert "received SIGUSR1" in log and "state: scenario llama3-16k:" in log and "state: drills active: none" in log
    assert "Current thread" in log and "File " in log  # SIGQUIT: faulthandler's stacks of every thread
    assert "received SIGUSR2: ignored" in log
    assert "state saved to" in log and "Traceback" not in log
    saved = decode((tmp_path / "state.json").read_bytes())
    assert saved["simulated_us"] > 0 and len(saved["lanes"]) == len(default_config().all_scenarios)


@pytest.mark.integration
def test_a_failed_final_save_is_exit_1_and_says_so(tmp_path, caplog, monkeypatch):
    """A full disk at shutdown: the state since the last snapshot is lost, and the exit code says it."""
    import errno
    import threading

    def full(self, data):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(StateDir, "save", full)
    stop = threading.Event()
    threading.Timer(1.5, stop.set).start()
    with caplog.at_level("INFO", logger="simd.daemon.process"):
        code = daemon.run(default_config(), listen=("127.0.0.1", 0), state_dir=str(tmp_path), stop=stop)
    assert code == 1
    assert "the final save failed: the state since the last snapshot" in caplog.text
    assert "No space left on device" in caplog.text
