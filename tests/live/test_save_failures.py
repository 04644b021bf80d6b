"""A state save that cannot be made (simd.live.persist.Saver), whatever the error, MemoryError included: it is
counted in simd_state_save_errors_total with one log line, never raised into the tick (nor out of the final
save at SIGTERM), and the save's encoding never holds the interpreter in one call over the whole state (the
scrapes' threads run between its pieces)."""

from __future__ import annotations

import json
import logging
import subprocess
import sys
import threading

import pytest
from support.daemon import FakeClock
from support.promstack import ROOT
from support.scenarios import SMALL_YAML

from simd.daemon import process as daemon
from simd.daemon.process import build
from simd.live import persist
from simd.live.persist import Saver, StateDir
from simd.scenario import default_config, parse_config


def errors_total(parts) -> float:
    return parts.ticker.registry.get_sample_value("simd_state_save_errors_total")


@pytest.fixture()
def saving(tmp_path):
    clock = FakeClock(0.0)
    parts = build(parse_config(SMALL_YAML), clock, lambda: 1.7e9)
    clock.t = 2.0
    parts.ticker.tick()
    state = StateDir(tmp_path).open()
    yield parts, Saver(state, parts.ticker, 1, parts.status), state
    state.close()


@pytest.mark.parametrize("exc", [MemoryError(), RecursionError("deep"), ValueError("odd"), OSError(28, "full")])
def test_a_failed_save_is_counted_and_never_raised(saving, monkeypatch, caplog, exc):
    parts, saver, state = saving

    def failing(*args, **kwargs):
        raise exc

    monkeypatch.setattr(persist, "encode_parts", failing)
    with caplog.at_level(logging.ERROR):
        saver.after_tick()  # as the tick job calls it
    assert errors_total(parts) == 1 and not state.file.exists()
    assert len(caplog.records) == 1 and caplog.records[0].exc_info is None
    assert "the previous snapshot stays" in caplog.text
    monkeypatch.undo()
    assert saver.save() and errors_total(parts) == 1  # the next save goes through


def test_the_final_save_failing_on_memory_is_one_line_and_the_usual_exit(tmp_path, monkeypatch, caplog):
    def failing(*args, **kwargs):
        raise MemoryError

    monkeypatch.setattr(persist, "encode_parts", failing)
    stop = threading.Event()
    threading.Timer(1.5, stop.set).start()
    with caplog.at_level("INFO"):
        code = daemon.run(default_config(), listen=("127.0.0.1", 0), state_dir=str(tmp_path), stop=stop,
                          save_every_ticks=1000)
    assert code == 1
    failed = [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert len(failed) == 1 and "the final save failed" in failed[0].getMessage()
    assert "MemoryError" in failed[0].getMessage() and failed[0].exc_info is None


def test_the_encoding_is_made_in_pieces_and_is_the_canonical_document(saving, monkeypatch):
    """json.dumps of the whole payload is one call holding the interpreter for the whole state (seconds for a
    file at the memory budget: /metrics and /-/healthy timed out meanwhile)."""
    parts, saver, state = saving
    calls = []
    real = json.dumps

    def counting(obj, *args, **kwargs):
        calls.append(obj)
        return real(obj, *args, **kwargs)

    monkeypatch.setattr(persist.json, "dumps", counting)
    raw = persist.encode(*parts.ticker.saved(), wall=1.7e9)
    monkeypatch.undo()
    payload = json.loads(raw)["payload"]
    assert raw == persist.document(payload)  # the same bytes as the canonical document
    lanes = payload["lanes"]
    assert all(not (isinstance(c, dict) and "lanes" in c) for c in calls), "the whole payload in one call"
    assert len(calls) > len(lanes)
    assert max(len(c) for c in calls if isinstance(c, list)) <= persist.ENCODE_PIECE


SAVE_UNDER_LIMIT = """
import resource, sys, json
from simd.daemon.process import build
from simd.live.persist import Saver, StateDir
from simd.scenario import parse_config
parts = build(parse_config(open(sys.argv[1]).read()), lambda: 0.0, lambda: 1.7e9)
clock = [0.0]
parts.ticker._clock = lambda: clock[0]
clock[0] = 3.0
parts.ticker.tick()
state = StateDir(sys.argv[2]).open()
saver = Saver(state, parts.ticker, 1, parts.status)
size = next(int(line.split()[1]) for line in open("/proc/self/status") if line.startswith("VmSize:")) * 1024
soft, hard = resource.getrlimit(resource.RLIMIT_AS)
resource.setrlimit(resource.RLIMIT_AS, (size + int(sys.argv[3]), hard))
saver.after_tick()
resource.setrlimit(resource.RLIMIT_AS, (soft, hard))
errors = parts.ticker.registry.get_sample_value("simd_state_save_errors_total")
clock[0] = 4.0
parts.ticker.tick()
print(json.dumps([errors, state.file.exists(), saver.save()]))
"""


@pytest.mark.integration
def test_a_save_beyond_an_address_space_limit_is_counted_and_the_daemon_goes_on(tmp_path):
    """A lane of 2 replicas of a 131,072-server cluster with pools (~12 MB between saves, ~50 MB more to save):
    with 16 MB of address space left, the save raises MemoryError inside the tick; it is counted, the tick job
    survives, and once memory is back the next save is written."""
    from support.scenarios import job, scenario_file

    text = scenario_file(job("big", seed=3, replicas=2, n_gpus=8 * 65536, step_seconds=10, target_steps=10**6,
                             failures={"hard_per_gpu_hour": 1e-4, "sdc_per_gpu_hour": 0.0},
                             servers={"warm_standbys": 32768, "spares": {"count": 32768},
                                      "repair": {"automatic": {"distribution": "exponential",
                                                               "mean_seconds": 20000}}}),
                         speedup=3600, tick_seconds=1.0)
    (tmp_path / "s.yaml").write_text(text)
    out = subprocess.run([sys.executable, "-c", SAVE_UNDER_LIMIT, str(tmp_path / "s.yaml"), str(tmp_path / "state"),
                          str(16 << 20)], cwd=ROOT, capture_output=True, text=True, timeout=300,
                         env={**__import__("os").environ, "MALLOC_ARENA_MAX": "1"})
    assert out.returncode == 0, out.stderr[-3000:]
    assert json.loads(out.stdout.strip().splitlines()[-1]) == [1.0, False, True]
    assert "Traceback" not in out.stderr


def test_the_daemons_saves_run_off_the_tick_thread(tmp_path, monkeypatch):
    """A save at the memory budget takes seconds: on the tick thread it delayed every tick (and /-/healthy turned
    503). The daemon's Saver saves in the background: the tick returns while the save encodes, a save due
    meanwhile is skipped, and the final save waits for it."""
    clock = FakeClock(0.0)
    parts = build(parse_config(SMALL_YAML), clock, lambda: 1.7e9)
    state = StateDir(tmp_path).open()
    encoding, release, calls = threading.Event(), threading.Event(), []
    real = persist.encode_parts

    def slow(*args, **kwargs):
        calls.append(threading.current_thread().name)
        encoding.set()
        assert release.wait(20)
        return real(*args, **kwargs)

    monkeypatch.setattr(persist, "encode_parts", slow)
    try:
        saver = Saver(state, parts.ticker, 1, parts.status, background=True)
        clock.t = 2.0
        parts.ticker.tick()
        saver.after_tick()  # returns at once: the save runs on its own thread
        assert encoding.wait(10)
        clock.t = 3.0
        parts.ticker.tick()
        saver.after_tick()  # the save in progress: this one is skipped
        assert parts.ticker.health.status()[0]
        release.set()
        assert saver.save()  # the final save: after the one in progress
        assert calls[0] != threading.current_thread().name and len(calls) == 2
        assert json.loads(state.file.read_bytes())["payload"]["simulated_us"] == parts.ticker.snapshot.simulated_us
    finally:
        release.set()
        state.close()
