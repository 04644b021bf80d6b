"""The tick loop (simd.live.ticker) and its health (simd.metrics.health) with an injected clock: no sleeps, exact
values."""

from __future__ import annotations

import threading

import pytest
from prometheus_client import generate_latest
from support.daemon import FakeClock, small_config

from simd.engine import US_PER_SECOND, advance
from simd.live.ticker import Ticker
from simd.metrics.collector import new_registry
from simd.metrics.health import STALL_GRACE_SECONDS, STALL_TICKS, TICK_DURATION_BOUNDS

START = 1000.0


def make(clock=None, advance_fn=advance, **kw) -> Ticker:
    clock = clock or FakeClock(START)
    return Ticker(small_config(), clock=clock, wall=lambda: 1.7e9 + clock(), advance_fn=advance_fn, **kw)


def health(ticker: Ticker, name: str, **labels: str) -> float:
    """A daemon-health sample of the ticker's registry."""
    return ticker.registry.get_sample_value(name, labels)


def ticks(ticker: Ticker) -> float:
    return health(ticker, "simd_ticks_total")


def missed(ticker: Ticker) -> float:
    return health(ticker, "simd_tick_overruns_total", kind="missed")


def tick_at(ticker: Ticker, clock: FakeClock, *walls: float) -> None:
    for w in walls:
        clock.t = START + w
        ticker.tick()


def test_simulated_time_is_speedup_times_wall_time_since_start():
    clock = FakeClock(START)
    t = make(clock)
    assert t.speedup == 600 and t.tick_seconds == 1.0  # from the file
    assert t.snapshot.simulated_us == 0 and ticks(t) == 0
    tick_at(t, clock, 2.5)
    assert t.snapshot.simulated_us == 1500 * US_PER_SECOND
    for states in t.states:
        assert all(s.clock == 1500 * US_PER_SECOND for s in states)  # one shared simulated clock
    assert all(sc.clock_us == 1500 * US_PER_SECOND for sc in t.snapshot.scenarios)
    assert ticks(t) == 1
    assert health(t, "simd_last_tick_timestamp_seconds") == 1.7e9 + START + 2.5


def test_flags_override_the_file():
    clock = FakeClock(START)
    t = make(clock, speedup=36000, tick_seconds=0.2)
    assert (t.speedup, t.tick_seconds) == (36000, 0.2)
    tick_at(t, clock, 0.2)
    assert t.snapshot.simulated_us == 7200 * US_PER_SECOND
    assert t.snapshot.speedup == 36000


def test_a_late_tick_catches_up_exactly_and_counts_the_missed_ticks():
    on_time_clock = FakeClock(START)
    on_time = make(on_time_clock)
    tick_at(on_time, on_time_clock, 1, 2, 3, 4, 5)
    late_clock = FakeClock(START)
    late = make(late_clock)
    tick_at(late, late_clock, 1, 5)  # the ticks at 2, 3 and 4 were coalesced into the one at 5
    assert late.snapshot.simulated_us == on_time.snapshot.simulated_us == 3000 * US_PER_SECOND
    assert late.states == on_time.states
    assert late.snapshot.scenarios == on_time.snapshot.scenarios
    assert (missed(late), missed(on_time)) == (3, 0)
    assert (ticks(late), ticks(on_time)) == (2, 5)


def test_a_tick_within_half_an_interval_of_its_slot_is_not_a_miss():
    clock = FakeClock(START)
    t = make(clock)
    tick_at(t, clock, 1.02, 2.49, 3.0, 4.51)  # 4.51 rounds to slot 5: slot 4 had no tick
    assert missed(t) == 1


def test_repeated_or_early_ticks_never_double_count_or_go_back():
    clock = FakeClock(START)
    t = make(clock)
    tick_at(t, clock, 3)
    before = t.states, t.snapshot.simulated_us
    tick_at(t, clock, 3, 3)
    assert (t.states, t.snapshot.simulated_us) == before
    assert missed(t) == 2  # slots 1 and 2, counted once
    clock.t = START + 2.0  # a clock that stepped back (it cannot, monotonic; but never go backwards)
    t.tick()
    assert (t.states, t.snapshot.simulated_us) == before


def test_a_slow_tick_is_an_overrun_and_lands_in_the_duration_histogram():
    clock = FakeClock(START)
    calls = []

    def slow_advance(state, until):
        if not calls:
            clock.advance(2.5)  # the first advance of the tick takes 2.5 wall seconds
        calls.append(1)
        return advance(state, until)

    t = make(clock, advance_fn=slow_advance)
    tick_at(t, clock, 1)
    assert (ticks(t), health(t, "simd_tick_overruns_total", kind="slow"), missed(t)) == (1, 1, 0)
    assert health(t, "simd_tick_duration_seconds_sum") == pytest.approx(2.5)
    cumulative = [health(t, "simd_tick_duration_seconds_bucket", le=str(b)) for b in TICK_DURATION_BOUNDS]
    assert cumulative == [0] * TICK_DURATION_BOUNDS.index(2.5) + [1] * (len(TICK_DURATION_BOUNDS)
                                                                         - TICK_DURATION_BOUNDS.index(2.5))
    # the simulated time is the one of the tick's start; the next tick (now at 3.5, slot 4) catches up
    assert t.snapshot.simulated_us == 600 * US_PER_SECOND
    t.tick()
    assert t.snapshot.simulated_us == round(3.5 * 600 * US_PER_SECOND)
    assert missed(t) == 2  # slots 2 and 3
    assert health(t, "simd_tick_overruns_total", kind="slow") == 1


def test_tick_size_invariance_at_the_daemon_level():
    """Any wall cadence reaching the same wall time gives identical states and scenario snapshots."""
    cadences = [
        [i * 0.25 for i in range(1, 241)],  # 4 ticks a second for a minute
        [7.0, 13.3, 13.31, 59.0, 60.0],  # irregular
        [60.0],  # one big tick
    ]
    results = []
    for walls in cadences:
        clock = FakeClock(START)
        t = make(clock)
        tick_at(t, clock, *walls)
        results.append((t.states, t.snapshot.scenarios, t.snapshot.simulated_us))
    assert results[0][2] == 36000 * US_PER_SECOND
    assert results[0] == results[1] == results[2]
    # and something happened in that simulated time (10 h): the comparison is not vacuous
    plain = results[0][1][0]
    assert plain.info.name == "plain" and sum(plain.totals.interruptions) > 0 and plain.totals.checkpoints > 0


def test_a_reader_during_a_tick_sees_the_previous_complete_snapshot():
    clock = FakeClock(START)
    entered, release = threading.Event(), threading.Event()
    blocking = threading.Event()

    def gated_advance(state, until):
        if blocking.is_set():
            entered.set()
            assert release.wait(10)
        return advance(state, until)

    t = make(clock, advance_fn=gated_advance)
    registry = new_registry(lambda: t.snapshot, process=False)
    tick_at(t, clock, 1)
    before_snapshot, before_text = t.snapshot, generate_latest(registry)
    clock.t = START + 2
    blocking.set()
    worker = threading.Thread(target=t.tick)
    worker.start()
    try:
        assert entered.wait(10)  # the tick is now blocked half-way through advancing the states
        assert t.snapshot is before_snapshot
        assert generate_latest(registry) == before_text
    finally:
        blocking.clear()
        release.set()
        worker.join(10)
    assert t.snapshot is not before_snapshot
    assert t.snapshot.simulated_us == 1200 * US_PER_SECOND and ticks(t) == 2
    assert generate_latest(registry) != before_text


def test_health_reports_a_stall_after_three_intervals_and_a_second():
    clock = FakeClock(START)
    t = make(clock)
    limit = STALL_TICKS * t.tick_seconds + STALL_GRACE_SECONDS
    assert t.health.status() == (True, "ok")
    clock.t = START + limit + 0.01
    ok, reason = t.health.status()
    assert not ok and "no tick completed since the start" in reason
    t.tick()
    assert t.health.status() == (True, "ok")
    clock.advance(limit - 0.01)
    assert t.health.status()[0]
    clock.advance(0.02)
    ok, reason = t.health.status()
    assert not ok and reason.startswith("stalled: no tick completed for 4.0 s")


def test_overruns_are_logged_then_summarized_once_a_minute(caplog):
    clock = FakeClock(START)
    t = make(clock)
    with caplog.at_level("WARNING", logger="simd.live.ticker"):
        tick_at(t, clock, 3)  # slots 1, 2 missed: logged at once
        tick_at(t, clock, 6, 9, 12)  # 2 missed each: within the minute, held back
        tick_at(t, clock, 64)  # a minute later: one summary of everything since
    lines = [r.getMessage() for r in caplog.records]
    assert len(lines) == 2
    assert "0 slow" in lines[0] and "2 scheduled tick(s) missed" in lines[0]
    assert "57 scheduled tick(s) missed" in lines[1]  # the 6 held back and the 51 of the last tick
    assert missed(t) == 2 + 6 + 51
