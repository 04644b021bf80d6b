"""Every path simd reads must be a regular file of bounded size: a FIFO (whose open() waits for a writer
forever), a device that never ends (/dev/urandom, /dev/zero) or a directory is refused at once with one
line and exit 2, at start, in check-config and in the offline tools; a reload of such a file fails without
holding the daemon. Each call runs in a thread with a deadline, so a regression fails instead of hanging."""

from __future__ import annotations

import json
import os
import threading

import pytest
from support.cli import simd
from support.daemon import FakeClock, wsgi_call
from support.scenarios import SMALL, SMALL_YAML

from simd.cli.drillclient import read_token
from simd.daemon.process import build
from simd.scenario import parse_config

TOKEN = "t0ken"


def within(fn, seconds: float = 10.0):
    """fn() in a thread: its result or its exception, or a failure if it has not returned in ``seconds``."""
    out: list = []

    def call():
        try:
            out.append((True, fn()))
        except BaseException as exc:  # noqa: BLE001 - handed to the caller
            out.append((False, exc))

    thread = threading.Thread(target=call, daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), "blocked on a special file"
    ok, value = out[0]
    if not ok:
        raise value
    return value


@pytest.fixture
def fifo(tmp_path):
    path = tmp_path / "fifo"
    os.mkfifo(path)
    return str(path)


@pytest.mark.parametrize("kind", ["fifo", "/dev/urandom", "/dev/zero", "directory"])
@pytest.mark.parametrize("command", [
    ["check-config", "{}"],
    ["simulate", "--config", "{}", "--seeds", "1"],
    ["sweep", "--config", "{}", "--scenario", "small", "--param", "checkpoint.interval_steps=10,20"],
    ["run", "--config", "{}", "--listen", "127.0.0.1:0"],
])
def test_a_scenario_file_that_is_not_a_regular_file_is_one_line_and_exit_2(tmp_path, fifo, kind, command):
    path = {"fifo": fifo, "directory": str(tmp_path)}.get(kind, kind)
    r = within(lambda: simd(*[a.replace("{}", path) for a in command]))
    assert r.returncode == 2
    assert r.stderr.count("\n") == 1 and "not a regular file" in r.stderr and "Traceback" not in r.stderr


@pytest.mark.parametrize("kind", ["fifo", "/dev/urandom", "/dev/zero"])
def test_a_token_file_that_is_not_a_regular_file_is_refused(fifo, kind):
    path = fifo if kind == "fifo" else kind
    with pytest.raises(ValueError, match="not a regular file"):
        within(lambda: read_token(path))
    r = within(lambda: simd("run", "--api-token-file", path, "--listen", "127.0.0.1:0"))
    assert r.returncode == 2 and "--api-token-file" in r.stderr and r.stderr.count("\n") == 1


def test_a_token_file_over_4_kib_is_refused(tmp_path):
    big = tmp_path / "token"
    big.write_text("x" * 5000)
    with pytest.raises(ValueError, match="larger than 4096 bytes"):
        read_token(str(big))


def test_a_reload_of_a_fifo_fails_at_once_and_keeps_the_running_configuration(tmp_path):
    path = tmp_path / "scenarios.yaml"
    path.write_text(SMALL_YAML)
    clock = FakeClock(0.0)
    parts = build(parse_config(SMALL_YAML), clock, lambda: 1.7e9, api_token=TOKEN, config_path=str(path))
    clock.t = 2.0
    parts.ticker.tick()
    path.unlink()
    os.mkfifo(path)
    status, _, body = within(lambda: wsgi_call(parts.app, "POST", "/-/reload", AUTHORIZATION=f"Bearer {TOKEN}"))
    assert status == 400 and "not a regular file (a FIFO)" in json.loads(body)["errors"][0]
    ok, detail = within(lambda: parts.reloader("SIGHUP"))
    assert not ok
    assert [lane.scenario.name for lane in parts.ticker.lanes] == \
        [s.name for s in parse_config(SMALL_YAML).all_scenarios]
    clock.t = 3.0
    parts.ticker.tick()  # the daemon goes on
    assert wsgi_call(parts.app, "GET", "/-/healthy")[0] == 200


def test_a_regular_file_still_works(tmp_path):
    path = tmp_path / "small.yaml"
    path.write_text(SMALL)
    assert simd("check-config", str(path)).returncode == 0
