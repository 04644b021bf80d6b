"""The trace the kernel records (trace.py): every interruption and SDC verdict, in order, at its time, each one
counted by the totals, the same whether or not the buffer had to grow, and tracing changes nothing else."""

from __future__ import annotations

from collections import Counter
from dataclasses import replace

import pytest
from specs import spec

from simd.engine import Cause, Shadow, advance, new_state, trace
from simd.engine.spec import CommittedSdc, Detector, Hyper

HOUR = 3600 * 10**6
SCAN = Detector("scan", "exponential", 600.0)
CASES = {
    "plain": spec(sdc_per_gpu_hour=1e-3, hard_per_gpu_hour=5e-4, validation_interval_steps=40,
                  ckpt_interval_steps=50),
    "causes": spec(hard_per_gpu_hour=1e-3, causes=(Cause("gpu", 0.6, 10.0, 55.0), Cause("network", 0.4, 30.0, 388.2))),
    "shadow": spec(sdc_per_gpu_hour=1e-3, shadow=Shadow(0.5, 0.05)),
    "hyper": spec(sdc_per_gpu_hour=1e-3, hyper=Hyper(5, 50)),
    # retention 1: a late finding after the first corrupt checkpoint is unrecoverable
    "committed": spec(sdc_per_gpu_hour=2e-3, validation_interval_steps=0,
                      committed_sdc=CommittedSdc((SCAN, Detector("audit", "uniform", 7200.0)), 2)),
    "committed-1": spec(sdc_per_gpu_hour=2e-3, validation_interval_steps=0,
                        committed_sdc=CommittedSdc((Detector("slow", "uniform", 20000.0),), 1)),
}


def _traced(s, until):
    return advance(new_state(s), until, trace=True)


@pytest.mark.parametrize("name", sorted(CASES))
def test_every_event_is_counted_by_the_totals_in_time_order(name):
    s = CASES[name]
    state, events = _traced(s, 400 * HOUR)
    t = state.totals
    got = Counter((e.kind, e.cause) for e in events)
    plan = state.plan
    for cause, n in zip(plan.cause_names, t.interruptions, strict=True):
        assert got["interruption", cause] == n
    detected = sum(n for (kind, _), n in got.items() if kind == "sdc_detected")
    assert detected == t.sdc_detected
    assert got["sdc_detected", "shadow"] == t.shadow_detected
    assert sum(n for (kind, _), n in got.items() if kind == "sdc_baked") == t.sdc_baked
    late = sum(n for (kind, _), n in got.items() if kind in ("sdc_late_found", "sdc_unrecoverable"))
    assert late == t.sdc_late_found
    assert sum(n for (kind, _), n in got.items() if kind == "sdc_unrecoverable") == t.sdc_unrecoverable
    finds = sum(n for (kind, c), n in got.items() if c in plan.detector_names)
    assert finds == sum(t.detector_finds)
    assert sum(n for (kind, _), n in got.items() if kind == "job_end") == t.jobs_completed
    times = [e.t_us for e in events]
    assert times == sorted(times) and times[-1] <= state.clock
    assert sum(got.values()) - t.jobs_completed > 20  # the case really has events to trace


def test_the_cases_reach_every_kind_of_event():
    kinds = {(e.kind, e.cause if e.cause in ("", "shadow") else "named")
             for s in CASES.values() for e in _traced(s, 400 * HOUR)[1]}
    assert {("interruption", "named"), ("sdc_detected", ""), ("sdc_detected", "shadow"),
            ("sdc_detected", "named"), ("sdc_late_found", "named"), ("sdc_unrecoverable", "named"),
            ("sdc_baked", ""), ("job_end", "")} <= kinds


@pytest.mark.parametrize("name", sorted(CASES))
def test_tracing_changes_nothing_and_a_full_buffer_grows(name, monkeypatch):
    s = replace(CASES[name], seed=7)
    plain, plain_events = advance(new_state(s), 300 * HOUR)
    traced, events = _traced(s, 300 * HOUR)
    monkeypatch.setattr(trace, "FIRST_ROWS", 1)  # every call overflows: run again with rows enough
    small, small_events = _traced(s, 300 * HOUR)
    assert plain == traced == small
    assert events == small_events
    assert [e for e in events if e.kind == "job_end"] == plain_events
