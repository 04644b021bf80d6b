"""The state directory (simd.live.persist): a resumed run equals an uninterrupted one, changed scenarios start
fresh, corrupt and foreign files are moved aside, saves are atomic, one daemon per directory. In-process,
injected clocks; the kill -9 cycles against real processes are in tests/daemon/test_kill.py."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest
from support.daemon import FakeClock
from support.scenarios import SMALL_YAML, job, scenario_file

from simd.engine import US_PER_SECOND
from simd.live import persist
from simd.live.persist import Saver, StateDir, StateDirBusy, decode, encode, resume
from simd.live.ticker import Ticker
from simd.metrics.health import DaemonStatus
from simd.scenario import parse_config

DRILL = """drills:
  - name: storm
    description: plain's failures x10
    duration_seconds: 5000
    scenarios: [plain]
    effects: {hard_rate_factor: 10}
"""
START = 1000.0
DATA = Path(__file__).resolve().parents[1] / "data"


def ticker(text=SMALL_YAML + DRILL, clock=None, resumed=None) -> Ticker:
    kw = {} if resumed is None else {"lanes": resumed.lanes, "at_us": resumed.at_us, "drills": resumed.drills}
    return Ticker(parse_config(text), clock=clock or FakeClock(START), wall=lambda: 1.7e9, **kw)


def run_to(t: Ticker, clock: FakeClock, *walls: float) -> None:
    for w in walls:
        clock.t = START + w
        t.tick()


def saved_bytes(t: Ticker) -> bytes:
    return encode(*t.saved(), wall=1.7e9)


def test_a_resumed_run_equals_the_uninterrupted_one_from_the_snapshot_on():
    clock = FakeClock(START)
    t = ticker(clock=clock)
    run_to(t, clock, 1.0, 2.0)
    t.start_drill("storm")  # running across the snapshot: its runs and the retargeted states are saved
    run_to(t, clock, 3.5)
    raw = saved_bytes(t)
    at = t.snapshot.simulated_us
    run_to(t, clock, 9.0, 20.0)  # the uninterrupted run goes on past the drill's end (simulated 1200 + 5000)

    later = FakeClock(50_000.0)  # a restart: another wall clock entirely
    resumed = resume(decode(raw), parse_config(SMALL_YAML + DRILL))
    assert resumed.at_us == at == 2100 * US_PER_SECOND
    r = ticker(clock=later, resumed=resumed)
    assert r.snapshot.simulated_us == at and r.states == ticker_states_at(raw)
    later.t += 16.5  # to the uninterrupted run's simulated time: 2100 + 16.5 * 600 = 12000 s
    r.tick()
    assert r.snapshot.simulated_us == t.snapshot.simulated_us == 12000 * US_PER_SECOND
    assert r.states == t.states
    assert r.snapshot.scenarios == t.snapshot.scenarios
    assert r.snapshot.drills == t.snapshot.drills
    assert sum(r.snapshot.scenarios[0].totals.interruptions) > 0  # the comparison is not vacuous


def ticker_states_at(raw: bytes):
    return tuple(lane.states for lane in resume(decode(raw), parse_config(SMALL_YAML + DRILL)).lanes)


def test_the_saved_document_is_versioned_json_with_a_checksum():
    clock = FakeClock(START)
    t = ticker(clock=clock)
    run_to(t, clock, 1.0)
    doc = json.loads(saved_bytes(t))
    assert (doc["format"], doc["version"]) == ("simd-state", 2) and len(doc["sha256"]) == 64
    assert [lane["name"] for lane in doc["payload"]["lanes"]] == ["plain", "calm", "big", "sw-10", "sw-40"]
    calm = doc["payload"]["lanes"][1]  # two replicas, by column: the spec once, the seeds, a list per field
    assert calm["spec"]["seed"] == 6 and calm["seeds"] == [6, 7] and calm["state"]["clock"] == [600 * US_PER_SECOND] * 2
    assert calm["state"]["totals"]["steps_executed"] == [s.totals.steps_executed for s in t.lanes[1].states]


def test_changed_new_and_removed_scenarios(caplog):
    clock = FakeClock(START)
    t = ticker(clock=clock)
    run_to(t, clock, 1.0, 2.0)
    raw = saved_bytes(t)
    changed = (SMALL_YAML + DRILL).replace("seed: 6\n", "seed: 60\n")  # calm changed
    changed = changed.replace("name: big ", "name: bigger ").replace("scenarios: [plain]", "scenarios: [plain]")
    with caplog.at_level(logging.INFO, logger="simd.live.persist"):
        resumed = resume(decode(raw), parse_config(changed))
    lanes = {lane.scenario.name: lane for lane in resumed.lanes}
    assert lanes["plain"].states == t.lanes[0].states  # unchanged: resumed exactly
    assert lanes["calm"].origin_us == 1200 * US_PER_SECOND and lanes["calm"].states[0].clock == 0  # fresh
    assert lanes["bigger"].origin_us == 1200 * US_PER_SECOND  # new
    text = caplog.text
    assert "scenario calm changed since the snapshot: it starts fresh at simulated second 1200" in text
    assert "scenario bigger is new" in text and "scenario big of the snapshot is no longer configured" in text
    r = ticker(changed, FakeClock(0.0), resumed)
    assert [sc.clock_us for sc in r.snapshot.scenarios] == [1200 * US_PER_SECOND, 0, 0, 1200 * US_PER_SECOND,
                                                             1200 * US_PER_SECOND]


def test_a_quarantined_scenario_stays_quarantined():
    clock = FakeClock(START)
    t = ticker(clock=clock)
    run_to(t, clock, 1.0)
    t.lanes = (t.lanes[0].__class__(**{**t.lanes[0].__dict__, "failed": "ZeroDivisionError: boom"}),) + t.lanes[1:]
    r = ticker(resumed=resume(decode(saved_bytes(t)), parse_config(SMALL_YAML + DRILL)))
    assert r.lanes[0].failed == "ZeroDivisionError: boom" and r.snapshot.scenarios[0].failed


@pytest.mark.parametrize("damage, why", [
    (lambda raw: raw[: len(raw) // 2], "not JSON"),
    (lambda raw: raw.replace(b'"steps_executed":[', b'"steps_executed":[1', 1), "checksum mismatch"),
    (lambda raw: b'{"hello": "world"}', "not a simd state file"),
    (lambda raw: raw.replace(b'"version":2', b'"version":99', 1), "written by another simd (format version 99"),
    (lambda raw: b"\xff\xfe\x00garbage", "not JSON"),
])
def test_corrupt_or_foreign_files_are_moved_aside(tmp_path, caplog, damage, why):
    clock = FakeClock(START)
    t = ticker(clock=clock)
    run_to(t, clock, 1.0)
    d = StateDir(tmp_path).open()
    try:
        d.file.write_bytes(damage(saved_bytes(t)))
        with caplog.at_level(logging.WARNING, logger="simd.live.persist"):
            assert d.load() is None
        (aside,) = tmp_path.glob("state.json.bad-*")
        assert not d.file.exists() and aside.read_bytes() == damage(saved_bytes(t))
        assert f"cannot be used ({why}" in caplog.text and aside.name in caplog.text
    finally:
        d.close()


def test_a_wrong_but_checksummed_payload_is_refused_by_resume():
    clock = FakeClock(START)
    t = ticker(clock=clock)
    run_to(t, clock, 1.0)
    payload = decode(saved_bytes(t))
    payload["lanes"][0]["state"]["pending_us"][0] += 1  # buckets no longer add up to the clock
    lanes = resume(payload, parse_config(SMALL_YAML + DRILL)).lanes
    assert lanes[0].states[0].clock == 0  # that scenario starts fresh (with a warning), the others resume
    assert lanes[1].states == t.lanes[1].states
    with pytest.raises(persist.StateError, match="malformed"):
        resume({"lanes": []}, parse_config(SMALL_YAML))


def test_a_lane_saved_with_other_seeds_starts_fresh():
    """A version 2 lane keeps its seeds once; seeds that are not the scenario's are refused (that lane starts
    fresh), not resumed under the saved ones."""
    clock = FakeClock(START)
    t = ticker(clock=clock)
    run_to(t, clock, 1.0)
    payload = decode(saved_bytes(t))
    lane = payload["lanes"][0]
    assert "seeds" in lane and lane["state"]["clock"][0] > 0
    lane["seeds"] = [seed + 1 for seed in lane["seeds"]]
    lanes = resume(payload, parse_config(SMALL_YAML + DRILL)).lanes
    assert lanes[0].states[0].clock == 0 and lanes[1].states == t.lanes[1].states


def test_saves_are_atomic_and_the_directory_is_locked(tmp_path):
    clock = FakeClock(START)
    t = ticker(clock=clock)
    d = StateDir(tmp_path).open()
    try:
        with pytest.raises(StateDirBusy, match="in use by another simd run"):
            StateDir(tmp_path).open()
        from prometheus_client import CollectorRegistry

        status = DaemonStatus(CollectorRegistry(), lambda: 1.7e9)
        saver = Saver(d, t, every_ticks=3, status=status, wall=lambda: 1.7e9 + 5)
        for w in (1.0, 2.0):
            run_to(t, clock, w)
            saver.after_tick()
        assert not d.file.exists()
        run_to(t, clock, 3.0)
        saver.after_tick()
        assert decode(d.file.read_bytes())["simulated_us"] == 1800 * US_PER_SECOND
        assert status.last_save._value.get() == 1.7e9 + 5
        assert sorted(p.name for p in tmp_path.iterdir()) == ["lock", "state.json"]  # no temporary file left
    finally:
        d.close()
    (tmp_path / ".state.json.tmp-12345").write_bytes(b"half a snap")  # what a kill -9 mid-write leaves
    d = StateDir(tmp_path).open()  # the lock is free again; the leftover is removed
    d.close()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["lock", "state.json"]


def test_a_version_1_file_is_still_read_and_resumes_exactly():
    """tests/data/state-v1.json: written by the version 1 encoder (a JobSpec and a State per replica) from
    this test module's run to simulated second 2100, a drill running (plain retargeted), from the scenario file
    next to it; resumed, it equals the same run today, and goes on as it does."""
    text = (DATA / "state-v1.yaml").read_text()
    raw = (DATA / "state-v1.json").read_bytes()
    assert json.loads(raw)["version"] == 1 and "replicas" in json.loads(raw)["payload"]["lanes"][0]
    clock = FakeClock(START)
    t = ticker(text, clock)
    run_to(t, clock, 1.0, 2.0)
    t.start_drill("storm")
    run_to(t, clock, 3.5)
    resumed = resume(decode(raw), parse_config(text))
    assert [lane.states for lane in resumed.lanes] == [lane.states for lane in t.lanes]
    assert resumed.lanes[0].states[0].epoch == 1 and resumed.lanes[0].states[0].clock > 0
    later = FakeClock(0.0)
    r = ticker(text, later, resumed)
    later.t += 16.5
    run_to(t, clock, 20.0)
    r.tick()
    assert r.states == t.states and r.snapshot.scenarios == t.snapshot.scenarios
    again = resume(decode(saved_bytes(r)), parse_config(text))  # saved again: as version 2
    assert json.loads(saved_bytes(r))["version"] == 2
    assert tuple(lane.states for lane in again.lanes) == r.states



SERVERS_YAML = scenario_file(job("pools", seed=3, replicas=20, n_gpus=64, failures={
    "hard_per_gpu_hour": 2.0e-2, "sdc_per_gpu_hour": 1.0e-3}, servers={
    "lemons": {"fraction": 0.25, "multiplier": 4}, "rates": {"gamma_shape": 0.8},
    "lifetime": {"distribution": "weibull", "shape": 0.7}, "warm_standbys": 1, "spares": {"count": 1},
    "repair": {"automatic": {"distribution": "exponential", "mean_seconds": 20000},
               "manual": {"probability": 0.5, "time": {"distribution": "exponential", "mean_seconds": 40000}},
               "false_success": {"automatic": 0.5}},
    "diagnosis": {"probability": 0.8, "misattribution": 0.3},
    "retirement": {"failures": 1, "window_seconds": 86400}}), speedup=600, tick_seconds=1.0)


def test_servers_and_their_pools_are_saved_and_resume_exactly():
    """A lane of servers with gamma rates, Weibull lifetimes, pools, imperfect diagnosis and retirement: every
    server's lifetime, rate, role, repair and blames saved, and the resumed run equals the uninterrupted one."""
    clock = FakeClock(START)
    t = ticker(SERVERS_YAML, clock)
    run_to(t, clock, 1.0, 2.0, 3.0)
    raw = saved_bytes(t)
    run_to(t, clock, 9.0)
    states = t.lanes[0].states
    assert sum(s.totals.replacements_waited + s.totals.replacements_spare for s in states) > 0
    assert all(len(s.srv_role) == len(s.srv_mult) == 10 and len(s.srv_blamed) == 10 for s in states)
    assert sum(s.totals.diagnosis_missed for s in states) and sum(s.totals.diagnosis_wrong for s in states)
    assert sum(s.totals.retirements for s in states) > 0
    resumed = resume(decode(raw), parse_config(SERVERS_YAML))
    later = FakeClock(0.0)
    r = ticker(SERVERS_YAML, later, resumed)
    later.t += 6.0
    r.tick()
    assert r.snapshot.simulated_us == t.snapshot.simulated_us
    assert r.states == t.states

RECOVERY_YAML = scenario_file(job("paths", seed=4, replicas=20, n_gpus=64, failures={
    "hard_per_gpu_hour": 5.0e-2, "sdc_per_gpu_hour": 1.0e-3, "causes": "llama3"}, servers={
    "warm_standbys": 2, "repair": {"automatic": {"distribution": "exponential", "mean_seconds": 20000}}},
    recovery={"in_process": {"causes": ["software"], "seconds": 30, "success_probability": 0.5},
              "crash_loop": {"failure_probability": 0.5, "max_attempts": 3, "escalation_seconds": 3600},
              "migration": {"seconds": 30, "causes": {"gpu": 0.5}}}), speedup=600, tick_seconds=1.0)


def test_in_process_restarts_crash_loops_and_migrations_are_saved_and_resume_exactly():
    """A lane with every recovery path: the per-cause restart attempts and the outcomes' counters saved, and the
    resumed run equals the uninterrupted one."""
    clock = FakeClock(START)
    t = ticker(RECOVERY_YAML, clock)
    run_to(t, clock, 1.0, 2.0, 3.0)
    raw = saved_bytes(t)
    run_to(t, clock, 9.0)
    totals = [s.totals for s in t.lanes[0].states]
    assert all(len(x.restart_attempts) == 5 for x in totals)
    assert sum(x.in_process_ok for x in totals) and sum(x.escalations for x in totals)
    assert sum(x.migrations for x in totals)
    resumed = resume(decode(raw), parse_config(RECOVERY_YAML))
    later = FakeClock(0.0)
    r = ticker(RECOVERY_YAML, later, resumed)
    later.t += 6.0
    r.tick()
    assert r.snapshot.simulated_us == t.snapshot.simulated_us
    assert r.states == t.states


ELASTIC_YAML = scenario_file(job("groups", seed=5, replicas=20, n_gpus=64, failures={
    "hard_per_gpu_hour": 5.0e-2, "sdc_per_gpu_hour": 1.0e-3, "causes": "llama3"},
    recovery={"elastic": {"groups": 8, "min_groups": 4, "replace_seconds": 600, "heal_seconds": 1800,
                          "overhead": 0.02}}), speedup=600, tick_seconds=1.0)


def test_elastic_groups_out_are_saved_and_resume_exactly():
    """A lane with elastic replica groups: the groups out and their rejoin times saved (a resumed run equals the
    uninterrupted one), the degraded bucket and the drops' and rejoins' counters with them."""
    clock = FakeClock(START)
    t = ticker(ELASTIC_YAML, clock)
    run_to(t, clock, 1.0, 2.0, 3.0)
    raw = saved_bytes(t)
    assert any(any(s.rejoin) for s in t.lanes[0].states)  # groups out when saved
    run_to(t, clock, 9.0)
    totals = [s.totals for s in t.lanes[0].states]
    assert sum(x.elastic_drops for x in totals) and sum(x.elastic_rejoins for x in totals)
    resumed = resume(decode(raw), parse_config(ELASTIC_YAML))
    later = FakeClock(0.0)
    r = ticker(ELASTIC_YAML, later, resumed)
    later.t += 6.0
    r.tick()
    assert r.snapshot.simulated_us == t.snapshot.simulated_us
    assert r.states == t.states


EARLIER_LAYOUTS = [line for line in (DATA / "state-layouts.txt").read_text().splitlines()
                   if line and not line.startswith("#")]


def _fields(layout: str) -> dict[str, list[str]]:
    return {cls: names.split("/") for cls, _, names in (part.partition(":") for part in layout.split(","))}


def _document(payload: dict, layout: str) -> bytes:
    body = persist._canonical(payload)
    doc = json.dumps({"format": persist.FORMAT, "version": 2, "layout": layout,
                      "sha256": persist.hashlib.sha256(body).hexdigest()}, separators=(",", ":"))
    return doc[:-1].encode() + b',"payload":' + body + b"}\n"


@pytest.mark.parametrize("layout", EARLIER_LAYOUTS,
                         ids=["before-servers", "before-diagnosis", "before-load", "before-async",
                              "before-restart-phases", "before-restart-paths", "before-elastic"])
def test_a_file_of_an_earlier_layout_is_read_with_what_it_lacks_off(layout):
    """A version 2 file as an earlier simd wrote it (its layout, without the fields grown since) resumes exactly:
    the fields it lacks are read at the engine's declared defaults, which mean "off"."""
    assert layout != persist.LAYOUT
    text = (DATA / "state-v1.yaml").read_text()
    clock = FakeClock(START)
    t = ticker(text, clock)
    run_to(t, clock, 1.0, 2.0)
    payload = json.loads(saved_bytes(t))["payload"]
    kept = _fields(layout)
    for lane in payload["lanes"]:
        assert lane["spec"]["servers"] is None
        for obj, cls in ((lane["spec"], "JobSpec"), (lane["state"], "State"), (lane["state"]["totals"], "Totals"),
                         (lane["state"]["job_start"], "Totals")):
            for name in set(obj) - set(kept[cls]):
                del obj[name]
    raw = _document(payload, layout)
    resumed = resume(decode(raw), parse_config(text))
    assert [lane.states for lane in resumed.lanes] == [lane.states for lane in t.lanes]
    assert all(lane.states[0].clock > 0 for lane in resumed.lanes)  # resumed, not started fresh


@pytest.mark.parametrize("change, why", [
    (lambda layout: layout.replace("State:", "State:x/"), "State has a field the engine does not declare"),
    (lambda layout: layout.replace("/clock/", "/"), "State lacks a field without a default"),
    (lambda layout: layout + ",Gone:a/b", "a class the engine does not declare"),
    (lambda layout: layout + ",Hyper:interval_steps/window_steps", "a class the engine does not declare, or one"),
    (lambda layout: layout.replace("Totals:", "Totals:steps_executed/"), "Totals has a field"),
])
def test_a_file_of_a_layout_the_declarations_cannot_fill_is_refused(change, why):
    """A layout is read when each field it lacks has a declared default; another one (a field or class the engine
    does not declare, a required field missing) is foreign, whether it is the current layout or an earlier one."""
    text = (DATA / "state-v1.yaml").read_text()
    t = ticker(text, FakeClock(START))
    payload = json.loads(saved_bytes(t))["payload"]
    for layout in (persist.LAYOUT, EARLIER_LAYOUTS[0]):
        with pytest.raises(persist.StateError, match=f"engine layout different: {why}"):
            decode(_document(payload, change(layout)))


# 10,000 replicas of a small job: failures, SDCs and stragglers within minutes
MANY = scenario_file(job("many", seed=11, replicas=10000, n_gpus=64, step_seconds=10, target_steps=50,
                         failures={"hard_per_gpu_hour": 2.0e-2, "sdc_per_gpu_hour": 1.0e-2},
                         checkpoint={"interval_steps": 10, "seconds": 5},
                         validation={"interval_steps": 5, "seconds": 1},
                         stragglers={"jitter_seconds": 0.5, "slow_ranks": 1, "slowdown": 1.25}),
                     tick_seconds=1.0)


def test_ten_thousand_replicas_save_and_resume_exactly():
    """The daemon's scale, on a small job; the time it takes is measured by bench/daemon.py
    --lane-costs, not here."""
    from simd.engine.replicas import advance_replicas
    from simd.live.drills import DrillRunner
    from simd.live.lane import new_lane

    config = parse_config(MANY)
    scenario = config.all_scenarios[0]
    lane = new_lane(scenario, scenario, 0)
    at, later = 1000 * US_PER_SECOND, 5000 * US_PER_SECOND
    lane = lane.__class__(**{**lane.__dict__, "states": advance_replicas(lane.states, at)})
    assert lane.states.batch.ended.any() and not lane.states.batch.ended.all()  # job starts of both kinds
    assert lane.states.batch.column("interruptions").sum() > 0 and lane.states.batch.column("sdc_detected").sum()
    resumed = resume(decode(encode(at, (lane,), DrillRunner(config), 1.7e9)), config).lanes[0]
    assert resumed.states == lane.states
    assert advance_replicas(resumed.states, later) == advance_replicas(lane.states, later)


def test_a_replayed_log_is_saved_and_resumes_exactly(tmp_path):
    """servers.replay: the spec's replayed faults (tuples of tuples of floats) survive a save and a resume."""
    log = tmp_path / "log.csv"
    log.write_text("time,server,event,class\n" + "".join(
        f"{t},s{t % 7},start,GPU\n{t + 30},s{t % 7},end,GPU\n" for t in range(100, 40000, 370)))
    text = scenario_file(job("replayed", seed=3, replicas=3, n_gpus=64, failures={
        "hard_per_gpu_hour": 2.0e-2, "sdc_per_gpu_hour": 0.0}, servers={"replay": {"log": str(log), "servers": 9}}),
        speedup=600, tick_seconds=1.0)
    clock = FakeClock(START)
    t = ticker(text, clock)
    run_to(t, clock, 1.0, 2.0)
    raw = saved_bytes(t)
    run_to(t, clock, 5.0)
    assert sum(sum(s.totals.interruptions) for s in t.lanes[0].states) > 0
    resumed = resume(decode(raw), parse_config(text))
    later = FakeClock(0.0)
    r = ticker(text, later, resumed)
    later.t += 3.0
    r.tick()
    assert r.states == t.states
