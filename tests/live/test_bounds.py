"""Bounded work per tick (simd.live.lane) and quarantine of a scenario whose tick raises (simd.live.ticker), with an
injected clock: exact values, no sleeps."""

from __future__ import annotations

from pathlib import Path

import pytest
from prometheus_client import generate_latest
from support.daemon import FakeClock, small_config
from support.scenarios import job, scenario_file

import simd.live.lane
from simd.engine import US_PER_SECOND, advance, advance_replicas, new_state
from simd.live.lane import (
    CORE,
    KERNEL,
    MIN_LEFT_SHARE,
    WORK_LIMIT_US,
    advance_lane,
    chunk_us,
    costs_of,
    events,
    new_lane,
)
from simd.live.ticker import Ticker
from simd.metrics.collector import new_registry
from simd.scenario import default_config, parse_config
from simd.scenario.errors import ConfigError

START = 1000.0

STORMY = scenario_file(
    # a failure every ~2 steps of 1 s: ~1800 events per simulated hour
    job("storm", seed=3, n_gpus=1000, step_seconds=1, target_steps=500,
        failures={"hard_per_gpu_hour": 1.8, "sdc_per_gpu_hour": 0.0}, checkpoint={"interval_steps": 5, "seconds": 1},
        validation=None, restart_seconds=0),
    job("quiet", seed=4, n_gpus=8, step_seconds=60, target_steps=100,
        failures={"hard_per_gpu_hour": 1.0e-4, "sdc_per_gpu_hour": 0.0},
        checkpoint={"interval_steps": 10, "seconds": 5}, validation=None),
    speedup=3600)


def make(text=STORMY, clock=None, **kw):
    clock = clock or FakeClock(START)
    return Ticker(parse_config(text), clock=clock, wall=lambda: 1.7e9, **kw), clock


def sample(t: Ticker, name: str, **labels) -> float:
    return new_registry(lambda: t.snapshot, process=False).get_sample_value(name, labels) if name.startswith(
        "simd_scenario") else t.registry.get_sample_value(name, labels)


def test_a_scenario_over_the_work_limit_is_left_behind_and_catches_up_exactly():
    limited, clock = make(work_limit=300)  # estimated engine CPU us: ~600 of the storm's ~1800 events an hour
    free, free_clock = make()
    for wall in (1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0):
        clock.t = free_clock.t = START + wall
        limited.tick()
        free.tick()
        storm, quiet = limited.snapshot.scenarios
        # the quiet scenario is never held back by the stormy one
        assert quiet.clock_us == limited.snapshot.simulated_us and quiet.behind_us == 0
        if wall == 1.0:
            # one tick is an hour of simulated time: ~1800 events at KERNEL.per_event_us each, cut near 300 us
            assert storm.behind_us > 0 and storm.overruns == 1
            assert 200 <= sum(events(s) for s in limited.lanes[0].states) * KERNEL.per_event_us <= 300
            assert sample(limited, "simd_scenario_overruns_total", scenario="storm") == 1
            assert sample(limited, "simd_scenario_behind_seconds", scenario="storm") == storm.behind_us / 1e6
    # the work limit changes when things happen, never what happens: at the same simulated time, the same state
    lane = limited.lanes[0]
    caught_up = advance_lane(lane, free.snapshot.simulated_us, lambda t: lane.body, lambda a, b: [], 10**9).lane
    assert caught_up.states == free.lanes[0].states
    assert sum(free.snapshot.scenarios[0].totals.interruptions) > 8 * 300 / KERNEL.per_event_us  # the limit did bind


@pytest.mark.parametrize("name", ["optimized-shadow", "optimized-fleet", "optimized-hyper", "optimized-layered-sdc"])
def test_every_mechanism_advances_on_the_batch_over_replicas(name):
    """Shadow ranks, fleets, hyper-checkpointing and committed SDCs run on the one kernel over all of a lane's
    replicas at once (issue 20; before, core.advance one replica at a time at ~45 us per replica per call), with
    each replica's state what core.advance gives it alone."""
    from simd.engine.replicas import Replicas

    scenario = default_config().scenario(name).model_copy(update={"replicas": 6})
    lane = new_lane(scenario, scenario, 0)
    assert isinstance(lane.states, Replicas) and costs_of(lane.states, advance) is KERNEL
    out = advance_lane(lane, 30 * 24 * 3600 * US_PER_SECOND, lambda t: scenario, lambda a, b: [])
    assert isinstance(out.lane.states, Replicas)
    assert tuple(out.lane.states) == tuple(advance(s, out.lane.states[0].clock)[0] for s in lane.states)
    assert sum(events(s) for s in out.lane.states) > 6


def test_a_cut_lane_used_most_of_its_limit_in_few_calls_and_no_more(monkeypatch):
    scenario = parse_config(STORMY).scenarios[0]
    lane = new_lane(scenario, scenario, 0)
    assert costs_of(lane.states, advance) is KERNEL
    results = []
    real = simd.live.lane.advance_replicas
    monkeypatch.setattr(simd.live.lane, "advance_replicas",
                        lambda states, until, **kw: results.append(real(states, until, **kw)) or results[-1])
    out = advance_lane(lane, 3600 * US_PER_SECOND, lambda t: scenario, lambda a, b: [], 300)
    assert out.cut and (1 - MIN_LEFT_SHARE) * 300 <= out.work <= 300
    # what was counted: the kernel's own count of each call (its events and passes, at the kernel's costs)
    assert out.work == sum(r.batch.work for r in results) / 1000
    assert KERNEL.per_event_us * events(out.lane.states[0]) <= out.work
    assert len(results) <= 8


def test_a_tick_of_ten_thousand_replicas_of_llama3_16k_at_speedup_3600_is_one_call():
    """600 straggler-drawn steps per replica per tick are ~0.13 s of estimated work, under the limit, so
    the tick is one kernel call (the limit counted 1,000 such steps as an event once: the tick was cut)."""
    s = default_config().scenario("llama3-16k")
    plan = new_state(s.job_spec(s.replica_seeds()[0])).plan
    assert plan.step_times is not None
    assert chunk_us(KERNEL, plan, 10_000, WORK_LIMIT_US) >= 3600 * US_PER_SECOND
    # one replica at a time on core.advance the calls alone (10,000 x 100 us) exceed the limit: a call pays them
    # once, so its stretch is what the limit allows besides them (most of a tick), never a single step, which
    # would pay them every step and leave the lane ever further behind
    assert 100 * plan.step_us < chunk_us(CORE, plan, 10_000, WORK_LIMIT_US) < 3600 * US_PER_SECOND


def test_a_lane_whose_calls_alone_exceed_the_limit_still_keeps_up():
    """2,500 replicas advanced one at a time (an injected advance, counted at CORE's costs) cost 0.25 s of calls per
    tick, over the 0.2 s limit: the lane still reaches the shared clock each tick (it crawled one 60 s step per
    tick)."""
    text = STORMY_SHADOW.replace("REPLICAS", "2500")
    scenario = parse_config(text).scenarios[0]
    lane = new_lane(scenario, scenario, 0)
    for tick in (1, 2):
        out = advance_lane(lane, tick * 3600 * US_PER_SECOND, lambda t: scenario, lambda a, b: [],
                           advance_fn=advance_one)
        assert out.lane.at_us == tick * 3600 * US_PER_SECOND
        lane = out.lane


STORMY_SHADOW = """
speedup: 3600
scenarios:
  - name: shadowed
    seed: 3
    n_gpus: 1024
    step_seconds: 60
    target_steps: 3000
    replicas: REPLICAS
    failures: {hard_per_gpu_hour: 2.0e-4, sdc_per_gpu_hour: 1.5e-4}
    checkpoint: {interval_steps: 25, seconds: 300}
    shadow: {fraction: 0.1, overhead: 0.05}
"""


def test_an_injected_advance_is_counted_at_core_costs():
    scenario = parse_config(STORMY).scenarios[1]
    lane = new_lane(scenario, scenario, 0)
    assert costs_of(lane.states, lambda s, u: advance(s, u)) is CORE
    out = advance_lane(lane, 3600 * US_PER_SECOND, lambda t: scenario, lambda a, b: [], advance_fn=advance_one)
    assert not out.cut and out.work == CORE.per_call_us + CORE.per_event_us * events(out.lane.states[0])
    assert out.lane.states == tuple(advance(s, 3600 * US_PER_SECOND)[0] for s in lane.states)


def advance_one(state, until):
    return advance(state, until)


def test_one_tick_of_a_runaway_scenario_is_bounded():
    """A drill multiplying the rate by 10^3 on a 1 ms step: without the limit one tick would cross ~10^6 events."""
    text = STORMY.replace("step_seconds: 1\n", "step_seconds: 0.001\n").replace(
        "hard_per_gpu_hour: 1.8", "hard_per_gpu_hour: 1000.0").replace("interval_steps: 5, seconds: 1}",
                                                                        "interval_steps: 5, seconds: 0}")
    # the file at a pace it can keep (it is refused at 3600: Config.tick_overruns), the daemon at 3600 (a flag)
    t, clock = make(text.replace("speedup: 3600", "speedup: 0.001"), speedup=3600)
    clock.t = START + 1.0
    t.tick()
    storm = t.snapshot.scenarios[0]
    assert storm.overruns == 1 and storm.behind_us > 0
    assert sum(storm.totals.interruptions) * KERNEL.per_event_us <= t.work_limit


def test_a_tick_that_raises_quarantines_its_scenario_and_the_others_go_on(caplog):
    def flaky(state, until):
        if state.plan.spec.seed == 5 and until > 600 * US_PER_SECOND:  # "plain" (seed 5), from its second tick
            raise ZeroDivisionError("boom")
        return advance(state, until)

    clock = FakeClock(START)
    t = Ticker(small_config(), clock=clock, wall=lambda: 1.7e9, advance_fn=flaky)
    with caplog.at_level("ERROR", logger="simd.live.ticker"):
        for wall in (1.0, 2.0, 3.0, 4.0):
            clock.t = START + wall
            t.tick()
    errors = [r for r in caplog.records if r.levelname == "ERROR"]
    assert len(errors) == 1 and "scenario plain failed at simulated second 600" in errors[0].getMessage()
    assert "ZeroDivisionError: boom" in errors[0].getMessage() and errors[0].exc_info is not None
    plain, *others = t.snapshot.scenarios
    assert plain.failed and plain.clock_us == 600 * US_PER_SECOND and plain.behind_us == 1800 * US_PER_SECOND
    assert all(not o.failed and o.clock_us == 2400 * US_PER_SECOND for o in others)
    assert t.registry.get_sample_value("simd_tick_errors_total") == 1
    assert t.registry.get_sample_value("simd_ticks_total") == 4
    assert t.health.status() == (True, "ok")
    text = generate_latest(new_registry(lambda: t.snapshot, process=False)).decode()
    assert 'simd_scenario_failed{scenario="plain"} 1.0' in text and 'simd_scenario_failed{scenario="calm"} 0.0' in text


def test_a_tick_over_its_time_leaves_the_rest_for_the_next_tick_starting_with_them():
    clock = FakeClock(START)

    def slow(state, until):
        clock.advance(0.3)  # every replica's advance takes 0.3 wall seconds
        return advance(state, until)

    t = Ticker(small_config(), clock=clock, wall=lambda: 1.7e9, advance_fn=slow)
    clock.t = START + 1.0
    t.tick()
    first = [sc.behind_us == 0 for sc in t.snapshot.scenarios]
    assert any(first) and not all(first)  # cut after about a second of work
    clock.t = START + 30.0
    t.tick()
    assert t.snapshot.scenarios[first.index(False)].behind_us == 0  # those left behind went first this time


@pytest.mark.parametrize("chunked", [False, True])
def test_chunked_advance_equals_one_call(chunked):
    scenario = parse_config(STORMY).scenarios[0]
    lane = new_lane(scenario, scenario, 0)
    until = 1800 * US_PER_SECOND
    out = advance_lane(lane, until, lambda t: scenario, lambda a, b: [], 10 if chunked else 10**9)
    while out.cut:
        out = advance_lane(out.lane, until, lambda t: scenario, lambda a, b: [], 10)
    assert out.lane.states == tuple(advance(s, until)[0] for s in lane.states)


BOUNDS = (Path(__file__).resolve().parents[1] / "data" / "bounds-servers.yaml").read_text()


@pytest.mark.parametrize("replicas,refused", [(2, False), (8, True), (58, True)])
def test_a_scenario_whose_expected_tick_exceeds_the_budget_is_refused(replicas, refused):
    """Servers at their bounds with bursts of ~10,000 servers and retirement: the expected tick counts the bursts'
    servers, their passes over the cluster and each replica's call (one formula: simd.engine.work, the lane's);
    8 replicas at speedup 600 are over the tick's budget, as are 58 (within the servers x replicas cap)."""
    text = BOUNDS.replace("replicas: 2", f"replicas: {replicas}")
    if not refused:
        assert not parse_config(text).tick_overruns()
        return
    with pytest.raises(ConfigError, match=r"scenarios\[0\] \(bounds\): a tick of 600 x 1 simulated seconds is ~.* s "
                                          r"of engine work .* over the 0.2 s a scenario may take per tick"):
        parse_config(text)


def test_a_tick_of_servers_at_their_bounds_is_cut_at_its_limit_and_catches_up_exactly():
    """A tick of bursts of ~10,000 servers (each a unit no chunk can split) at 60x the file's pace: the kernel
    stops each replica once it has spent its share of the limit, so the lane is left behind with an overrun
    counted, its work counted by the kernel (the bursts' servers included) within the limit; the states equal an
    uncut run's at the same time."""
    t, clock = make(BOUNDS, speedup=36000)
    clock.t = START + 1.0
    t.tick()
    snap = t.snapshot.scenarios[0]
    assert snap.overruns == 1 and snap.behind_us > 0
    lane = t.lanes[0]
    assert sum(s.totals.burst_servers for s in lane.states) > 1000
    free = new_lane(lane.scenario, lane.body, 0)
    assert tuple(advance_replicas(free.states, lane.states[0].clock)) == tuple(lane.states)


def test_a_reload_is_refused_when_its_tick_overruns_at_the_command_lines_pace(tmp_path):
    """simd run --speedup overrides the file's pace: a reload of a file whose tick fits at its own speedup but not
    at the flag's is refused like a file over the budget (gauge 0, the running configuration kept)."""
    from prometheus_client import CollectorRegistry

    from simd.live.reload import Reloader
    from simd.metrics.health import DaemonStatus

    path = tmp_path / "simd.yaml"
    path.write_text(STORMY)
    t, _ = make(speedup=36000)  # the storm is far from the budget at any pace the schema allows
    status = DaemonStatus(CollectorRegistry(), lambda: 1.7e9)
    reload = Reloader(t, str(path), status)
    assert reload("test")[0] and status.reload_successful
    path.write_text(BOUNDS)  # within the budget at its own speedup (600), ~60x over it at 36,000
    ok, errors = reload("test")
    assert not ok and not status.reload_successful
    assert "a tick of 36000 x 1 simulated seconds" in errors[0] and "bounds" in errors[0]
    assert [lane.scenario.name for lane in t.lanes] == ["storm", "quiet"]
