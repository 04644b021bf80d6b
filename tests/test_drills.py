"""The drill book: starts, boundaries, composed effects, request errors."""

import pytest
from test_config import GOOD

from simd.config import parse_config
from simd.drills import DrillBook, DrillError

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
    book.count_scheduled_starts(0, 7200)
    assert book.starts["slow-storage"] == 0
    book.count_scheduled_starts(7200, 8000)
    assert book.starts["slow-storage"] == 1


def test_on_demand_start_conflict_and_unknown(book):
    run = book.start("storm", 100.0)
    assert (run.start, run.end) == (100.0, 3700.0) and book.starts["storm"] == 1
    with pytest.raises(DrillError) as exc:
        book.start("storm", 200.0)
    assert exc.value.status == 409
    with pytest.raises(DrillError) as exc:
        book.start("nope", 200.0)
    assert exc.value.status == 404
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


def test_listing(book):
    book.start("burst", 50.0)
    rows = {r["name"]: r for r in book.listing(60.0)}
    assert rows["burst"]["active"] and rows["burst"]["scenarios"] == ["optimized"]
    assert not rows["storm"]["active"] and rows["storm"]["last_start_seconds"] is None
    assert rows["slow-storage"]["start_at_seconds"] == 7200
