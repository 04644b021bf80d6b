"""A saved spec is validated like a new one before anything is computed from it (simd.live.persist): a state
file with a valid checksum whose spec the scenario file cannot give (a server of 0 GPUs, bursts of mean size 0,
a repair of an unknown distribution, an empty replay) is moved aside with one line in the log; that scenario
starts fresh and the others resume: nothing is ever computed from the refused spec, and the daemon never crashes."""

from __future__ import annotations

import json
import logging

import pytest
from support.daemon import FakeClock
from support.scenarios import job, scenario_file

from simd.daemon import process
from simd.live import persist
from simd.live.persist import StateDir, encode
from simd.live.ticker import Ticker
from simd.scenario import parse_config


def servers_yaml(log) -> str:
    return scenario_file(
        job("pools", seed=3, replicas=2, n_gpus=64, failures={"hard_per_gpu_hour": 2.0e-2, "sdc_per_gpu_hour": 0.0},
            servers={"warm_standbys": 1, "spares": {"count": 1},
                     "repair": {"automatic": {"distribution": "exponential", "mean_seconds": 20000}},
                     "bursts": {"per_day": 2.0, "mean_size": 3.0}}),
        job("replayed", seed=4, replicas=2, n_gpus=64, failures={"hard_per_gpu_hour": 2.0e-2, "sdc_per_gpu_hour": 0.0},
            servers={"replay": {"log": str(log), "servers": 9}}),
        speedup=600, tick_seconds=1.0)


def crafted(payload: dict, lane: str, change) -> bytes:
    for d in payload["lanes"]:
        if d["name"] == lane:
            change(d["spec"])
    return persist.document(payload)


def setter(*path, value):
    def change(spec):
        for key in path[:-1]:
            spec = spec[key]
        spec[path[-1]] = value
    return change


@pytest.fixture()
def saved(tmp_path):
    log = tmp_path / "log.csv"
    log.write_text("time,server,event,class\n" + "".join(
        f"{t},s{t % 7},start,GPU\n{t + 30},s{t % 7},end,GPU\n" for t in range(100, 40000, 370)))
    text = servers_yaml(log)
    clock = FakeClock(1000.0)
    t = Ticker(parse_config(text), clock=clock, wall=lambda: 1.7e9)
    clock.t += 2.0
    t.tick()
    raw = encode(*t.saved(), wall=1.7e9)
    return parse_config(text), json.loads(raw)["payload"], tmp_path / "state"


CHANGES = {
    "gpus_per_server-0": ("pools", setter("servers", "gpus_per_server", value=0)),
    "burst_mean_size-0": ("pools", setter("servers", "burst_mean_size", value=0.0)),
    "repair-unknown": ("pools", setter("servers", "repair", value=["gamma", 20000.0, 0.0])),
    "replay-empty": ("replayed", setter("servers", "replay", value=[])),
}


@pytest.mark.parametrize("name", list(CHANGES))
def test_an_impossible_saved_spec_is_moved_aside_and_its_scenario_starts_fresh(saved, name, caplog):
    config, payload, directory = saved
    lane, change = CHANGES[name]
    at_us = payload["simulated_us"]
    state = StateDir(directory).open()
    try:
        state.file.write_bytes(crafted(payload, lane, change))
        with caplog.at_level(logging.WARNING):
            resumed = process._resume(state, config)
        assert not state.file.exists() and len(list(directory.glob("state.json.bad-*"))) == 1
        lines = [r for r in caplog.records if r.levelno >= logging.WARNING]
        assert len(lines) == 1 and "moved to state.json.bad-" in lines[0].getMessage()
        assert lane in lines[0].getMessage() and "Traceback" not in caplog.text
        lanes = {x.scenario.name: x for x in resumed.lanes}
        assert lanes[lane].origin_us == at_us and all(s.clock == 0 for s in lanes[lane].states)  # fresh
        other = next(d for d in payload["lanes"] if d["name"] != lane)
        assert lanes[other["name"]].origin_us == other["origin_us"]  # resumed where it was
        assert all(s.clock > 0 for s in lanes[other["name"]].states)
    finally:
        state.close()


def test_an_unchanged_saved_spec_still_resumes(saved):
    config, payload, directory = saved
    state = StateDir(directory).open()
    try:
        state.file.write_bytes(persist.document(payload))
        resumed = process._resume(state, config)
        assert resumed is not None and [lane.scenario.name for lane in resumed.lanes] == ["pools", "replayed"]
        assert state.file.exists()
    finally:
        state.close()


def test_a_replay_log_edited_in_place_restarts_only_its_scenario(saved, caplog):
    """The log's path keys the scenario: edited in place, the saved faults are not the file's any more. That
    scenario starts fresh (its saved faults are a log's: not a crafted spec), the others resume, the file stays."""
    config, payload, directory = saved
    log = directory.parent / "log.csv"
    log.write_text("time,server,event,class\n" + "".join(
        f"{t},s{t % 5},start,GPU\n{t + 30},s{t % 5},end,GPU\n" for t in range(200, 30000, 410)))
    edited = parse_config(servers_yaml(log))
    state = StateDir(directory).open()
    try:
        state.file.write_bytes(persist.document(payload))
        with caplog.at_level(logging.WARNING):
            resumed = process._resume(state, edited)
        assert resumed is not None and state.file.exists()
        lanes = {lane.scenario.name: lane for lane in resumed.lanes}
        assert lanes["pools"].states[0].clock > 0 and lanes["replayed"].states[0].clock == 0
        assert "scenario replayed cannot be resumed" in caplog.text and "replay log changed" in caplog.text
    finally:
        state.close()
