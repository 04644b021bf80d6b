"""The drill book (starts, boundaries, composed effects, request errors), the runner (retargeting, stalls)
and the control API's listing, without the tick loop."""

import pytest
from support.scenarios import OPTIMIZED as GOOD

from simd.live.drills import DrillAlreadyRunning, DrillBook, DrillControl, DrillError, DrillRunner, UnknownDrill
from simd.metrics.snapshot import Snapshot
from simd.scenario import parse_config

DRILLS = GOOD + """drills:
  - name: storm
    description: hard failures x10
    duration_seconds: 3600
    effects: {hard_rate_factor: 10}
  - name: slow-storage
    description: checkpoints 5x slower, from simulated hour 2
    duration_seconds: 1800
    start_at_seconds: 7200
    effects: {checkpoint_seconds_factor: 5}
  - name: burst
    description: SDCs x20
    duration_seconds: 600
    scenarios: [optimized]
    effects: {sdc_rate_factor: 20, hard_rate_factor: 2}
"""


@pytest.fixture
def book():
    return DrillBook(parse_config(DRILLS))


def test_scheduled_drill_window_and_boundaries(book):
    assert not book.active("slow-storage", 7199.9) and book.active("slow-storage", 7200)
    assert not book.active("slow-storage", 9000)
    assert book.boundaries(0, 7200) == [7200] and book.boundaries(7200, 10000) == [9000]
    assert book.count_scheduled_starts(0, 7200) == []
    assert book.starts["slow-storage"] == 0
    assert [r.drill for r in book.count_scheduled_starts(7200, 8000)] == ["slow-storage"]
    assert book.starts["slow-storage"] == 1


def test_on_demand_start_conflict_and_unknown(book):
    run = book.start("storm", 100.0)
    assert (run.start, run.end) == (100.0, 3700.0) and book.starts["storm"] == 1
    with pytest.raises(DrillAlreadyRunning, match="drill 'storm' is already running"):
        book.start("storm", 200.0)
    with pytest.raises(UnknownDrill, match="no drill named 'nope'"):
        book.start("nope", 200.0)
    assert issubclass(UnknownDrill, DrillError) and issubclass(DrillAlreadyRunning, DrillError)
    assert not hasattr(DrillError("x"), "status")  # no HTTP in the domain errors: the server maps them
    book.start("storm", 3700.0)  # the first run has ended: may run again
    assert book.starts["storm"] == 2


def test_effects_compose_on_a_scenario(book):
    book.start("storm", 0.0)
    book.start("burst", 0.0)
    s = book.config.scenario("optimized")
    body = book.scenario_body(s, s.name, 10.0)
    assert body.failures.hard_per_gpu_hour == pytest.approx(s.failures.hard_per_gpu_hour * 20)
    assert body.failures.sdc_per_gpu_hour == pytest.approx(s.failures.sdc_per_gpu_hour * 20)
    assert book.scenario_body(s, s.name, 700.0).failures.sdc_per_gpu_hour == s.failures.sdc_per_gpu_hour
    assert book.scenario_body(s, s.name, 4000.0) == s


def test_listing():
    config = parse_config(DRILLS)
    runner = DrillRunner(config)
    runner.start("burst", 50.0, None, now=0.0)
    control = DrillControl(lambda: Snapshot(0, 1.0, (), runner.snapshot(60.0)), runner.start)
    rows = {r["name"]: r for r in control.list()}
    assert rows["burst"]["active"] and rows["burst"]["scenarios"] == ["optimized"]
    assert not rows["storm"]["active"] and rows["storm"]["last_start_seconds"] is None
    assert rows["slow-storage"]["start_at_seconds"] == 7200


def test_runner_gives_each_scenario_its_parameters_at_a_time():
    config = parse_config(DRILLS)
    runner = DrillRunner(config)
    opt = config.scenario("optimized")
    assert runner.body(opt, 100.0) == opt
    runner.start("burst", 100.0, None, now=0.0)
    assert runner.body(opt, 100.0).failures.sdc_per_gpu_hour == pytest.approx(20 * opt.failures.sdc_per_gpu_hour)
    assert runner.body(opt, 700.0) == opt  # burst ended at 100 + 600
    assert runner.boundaries(0.0, 1000.0) == [100.0, 700.0]


def test_a_reload_keeps_the_runs_of_unchanged_drills_only():
    config = parse_config(DRILLS)
    old = DrillRunner(config)
    old.start("storm", 10.0, None, now=0.0)
    old.start("burst", 20.0, None, now=0.0)
    changed = parse_config(DRILLS.replace("effects: {sdc_rate_factor: 20, hard_rate_factor: 2}",
                                          "effects: {sdc_rate_factor: 30}"))
    new = DrillRunner(changed)
    assert new.carry_over(old) == ["burst"]
    assert [r.drill for r in new.book.runs] == ["slow-storage", "storm"]
    assert new.book.starts == {"storm": 1, "slow-storage": 0, "burst": 0}


def test_runner_holds_ticks_for_a_stall_drill():
    config = parse_config(DRILLS + """  - name: hang
    description: no ticks for 5 wall seconds
    duration_seconds: 60
    start_at_seconds: 50
    effects: {stall_seconds: 5}
""")
    runner = DrillRunner(config)
    assert runner.scheduled(0.0, 50.0) == 0.0 and not runner.stalled(10.0)
    stall = runner.scheduled(50.0, 100.0)  # a tick covering the scheduled start
    assert stall == 5.0 and runner.book.starts["hang"] == 1
    runner.hold(20.0, stall)
    assert runner.stalled(20.0) and runner.stalled(24.9) and not runner.stalled(25.0)
    started = runner.start("hang", 200.0, None, now=30.0)  # on demand: the stall runs from now
    assert (started.start_seconds, started.end_seconds, started.stall_seconds) == (200.0, 260.0, 5.0)
    assert runner.stalled(34.0) and not runner.stalled(35.0)


def test_control_lists_from_the_published_snapshot():
    config = parse_config(DRILLS)
    runner = DrillRunner(config)
    published = [Snapshot(0, 1.0, (), runner.snapshot(0.0))]
    control = DrillControl(lambda: published[0], lambda name, d: runner.start(name, 50.0, d, 0.0))
    assert [r["last_start_seconds"] for r in control.list()] == [None, None, None]
    out = control.start("burst", 10.0)
    assert out == {"name": "burst", "active": True, "start_seconds": 50.0, "end_seconds": 60.0, "stall_seconds": 0.0}
    assert control.get("burst")["active"] is False  # not published yet
    published[0] = Snapshot(0, 1.0, (), runner.snapshot(55.0))
    row = control.get("burst")
    assert row["active"] and (row["last_start_seconds"], row["last_end_seconds"]) == (50.0, 60.0)
    with pytest.raises(UnknownDrill):
        control.get("nope")
