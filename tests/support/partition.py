"""The engine's partition of time (docs/design.md 3.5): every simulated microsecond is in exactly one bucket, or in
flight, so the buckets plus in flight equal the clock after every call; and advancing from 0 to T in one call or
cut into any calls gives the identical state and events (3.3). The engine's tests check both through here."""

from __future__ import annotations

from dataclasses import fields

from simd.engine import US_PER_SECOND, advance, new_state


def assert_partitioned(state) -> None:
    """The buckets plus in flight equal the clock, exactly (integer microseconds)."""
    buckets, in_flight = sum(state.totals.bucket_us().values()), state.in_flight_us()
    assert buckets + in_flight == state.clock, f"buckets {buckets} + in flight {in_flight} != clock {state.clock}"


def counters(state) -> list[int]:
    """Every counter of the state's totals, flattened (tuples element by element)."""
    out = []
    for f in fields(state.totals):
        v = getattr(state.totals, f.name)
        out.extend(v if isinstance(v, tuple) else (v,))
    return out


def horizon_us(s, steps: int) -> int:
    """``steps`` of the job's step time, 1.7 times over (microseconds): a horizon past the end of short jobs."""
    return int(steps * s.step_seconds * US_PER_SECOND * 1.7)


def check_cuts(s, horizon_us: int, cuts: list[float]) -> None:
    """Advancing ``s`` from 0 to ``horizon_us`` cut at ``cuts`` (fractions of the horizon) gives the one call's
    state and events; after every call the clock is the cut, the time is partitioned, and no counter went down."""
    whole, whole_events = advance(new_state(s), horizon_us, trace=True)
    state, events = new_state(s), []
    previous = counters(state)
    for c in sorted(int(c * horizon_us) for c in cuts) + [horizon_us]:
        state, ev = advance(state, c, trace=True)
        events.extend(ev)
        assert state.clock == c
        assert_partitioned(state)
        now = counters(state)
        assert all(b >= a for a, b in zip(previous, now, strict=True)), "a counter decreased"
        previous = now
    assert state == whole
    assert events == whole_events
