"""The recovery drills: a crash loop switched on for a while (DrillEffects.crash_loop) on a scenario without one,
and a hang storm (DrillEffects.cause_rate_factors on a cause found by a watchdog's timeout). The per-cause restart
counts keep one width before, during and after a crash-loop drill (the scenario runs with a crash loop that never
fails outside it), so the counters carry over and stay monotonic, the drill changes the simulation at its exact
simulated times whatever the ticks, and no retarget switches the counts on or off."""

from __future__ import annotations

import pytest
from support.daemon import FakeClock
from support.scenarios import job, scenario_file

from simd.daemon.process import assemble
from simd.engine import new_state, retarget
from simd.live.ticker import Ticker
from simd.scenario.errors import ConfigError
from simd.scenario.load import parse_config

_CAUSES = {"gpu": 0.6, "software": 0.3, "hang": {"share": 0.1, "detection_seconds": 600, "server_down": False}}
# 512 GPUs failing every ~39 min of compute; long jobs, so no job ends in the window
_JOB = {"step_seconds": 30, "target_steps": 100000, "validation": None, "restart_seconds": 300,
        "failures": {"hard_per_gpu_hour": 5.0e-3 / 1.7, "sdc_per_gpu_hour": 0.0, "causes": _CAUSES}}
LOOP = {"name": "loop", "description": "two of three restarts fail", "duration_seconds": 36000,
        "start_at_seconds": 36000, "scenarios": ["looping"],
        "effects": {"crash_loop": {"failure_probability": 0.67, "max_attempts": 3, "escalation_seconds": 7200}}}
HANGS = {"name": "hangs", "description": "hangs 20x", "duration_seconds": 36000, "start_at_seconds": 36000,
         "scenarios": ["hanging"], "effects": {"cause_rate_factors": {"hang": 20}}}


def _text(*drills: dict, **looping) -> str:
    return scenario_file(job("looping", seed=3, replicas=3, **{**_JOB, **looping}),
                         job("hanging", seed=4, replicas=2, **_JOB), speedup=3600, drills=drills)


def _attempts(t: Ticker, name: str) -> list[tuple[int, ...]]:
    return [s.totals.restart_attempts for s in t.states[[i.name for i in t.infos].index(name)]]


def _value(registry, name, **labels) -> float:
    v = registry.get_sample_value(name, labels)
    assert v is not None, f"no sample {name}{labels}"
    return v


def test_a_crash_loop_drill_keeps_the_restart_counts_across_its_start_and_end_whatever_the_ticks():
    clock = FakeClock(0.0)
    a, _ = assemble(parse_config(_text(LOOP, HANGS)), clock=clock, wall=lambda: 1.7e9)
    seen, escalations = [], []
    for t in (4.0, 9.99, 10.0, 13.0, 19.5, 20.0, 24.0, 30.0):  # speedup 3600: the drill runs in wall seconds 10..20
        clock.t = t
        a.tick()
        r = a.registry
        seen.append({c: _value(r, "simd_restart_attempts_total", scenario="looping", cause=c) for c in _CAUSES})
        escalations.append(_value(r, "simd_restart_seconds_total", scenario="looping", phase="escalation"))
        assert all(len(x) == 3 for x in _attempts(a, "looping"))  # one width throughout
    assert all(x[c] <= y[c] for x, y in zip(seen, seen[1:], strict=False) for c in _CAUSES)  # monotonic
    assert escalations == sorted(escalations) and escalations[-1] > 0  # escalations, during the drill only
    assert escalations[1] == 0 and escalations[-1] == escalations[-3]
    interruptions = {c: _value(a.registry, "simd_interruptions_total", scenario="looping", cause=c) for c in _CAUSES}
    assert sum(seen[-1].values()) > sum(interruptions.values())  # failed attempts were counted
    assert a.states[0][0].plan.spec.restart_failure == 0.0  # over: the crash loop that never fails
    b_clock = FakeClock(0.0)
    b = Ticker(parse_config(_text(LOOP, HANGS)), clock=b_clock, wall=lambda: 0.0)
    b_clock.t = 30.0
    b.tick()
    assert a.states == b.states  # the same history in one tick
    # without the drill: no failed attempt, the counts are the interruptions
    plain = Ticker(parse_config(_text()), clock=FakeClock(30.0), wall=lambda: 0.0)
    plain.start = 0.0
    plain.tick()
    assert _attempts(plain, "looping") == [()] * 3


def test_a_hang_storm_multiplies_the_hangs_alone():
    clock = FakeClock(0.0)
    t = Ticker(parse_config(_text(LOOP, HANGS)), clock=clock, wall=lambda: 0.0)
    base = t.states[1][0].plan.spec
    clock.t = 15.0  # simulated hour 15: the storm runs
    t.tick()
    during = t.states[1][0].plan.spec
    m = 0.6 + 0.3 + 0.1 * 20
    assert during.hard_per_gpu_hour == pytest.approx(base.hard_per_gpu_hour * m, rel=1e-12)
    shares = {c.name: c.share for c in during.cause_list}
    assert shares == pytest.approx({"gpu": 0.6 / m, "software": 0.3 / m, "hang": 2.0 / m}, rel=1e-12)
    assert [c.detection_seconds for c in during.cause_list] == [c.detection_seconds for c in base.cause_list]
    clock.t = 25.0
    t.tick()
    assert t.states[1][0].plan.spec.cause_list == base.cause_list  # over


def test_drill_effects_that_do_not_fit_the_scenario_are_one_line_errors():
    bad = dict(HANGS, effects={"cause_rate_factors": {"nccl": 5}})
    with pytest.raises(ConfigError, match=r"drills\[0\] on scenario hanging: the drill's cause_rate_factors: nccl "
                                          r"not among the failure causes \(gpu, hang, software\)"):
        parse_config(_text(bad))
    other = dict(LOOP, name="loop2", effects={"crash_loop": {**LOOP["effects"]["crash_loop"],
                                                             "escalation_seconds": 60}})
    with pytest.raises(ConfigError, match=r"drills\[1\]\.effects\.crash_loop\.escalation_seconds on scenario "
                                          r"looping: 60, where its first crash-loop drill has 7200: they must agree"):
        parse_config(_text(LOOP, other))
    causeless = {"failures": {"hard_per_gpu_hour": 1e-3, "sdc_per_gpu_hour": 0.0}}
    with pytest.raises(ConfigError, match="the drill's cause_rate_factors needs failures.causes"):
        parse_config(scenario_file(job("hanging", **{**_JOB, **causeless}), drills=(HANGS,)))


def test_no_retarget_switches_the_per_cause_restart_counts_on_or_off():
    config = parse_config(_text(LOOP))
    plain = config.scenario("looping").job_spec()
    looping = config.scenario("looping").with_effects(config.drill("loop").effects).job_spec()
    with pytest.raises(ValueError, match="cannot switch in-process restarts or crash loops on or off"):
        retarget(new_state(plain), looping)
    with pytest.raises(ValueError, match="cannot switch in-process restarts or crash loops on or off"):
        retarget(new_state(looping), plain)


def test_a_reload_that_adds_a_crash_loop_drill_starts_the_scenario_anew():
    clock = FakeClock(0.0)
    t = Ticker(parse_config(_text()), clock=clock, wall=lambda: 0.0)
    clock.t = 2.0
    t.tick()
    out = t.reload(parse_config(_text(LOOP)))
    assert out.restarted == ("looping",) and out.kept == ("hanging",)
    assert all(len(x) == 3 for x in _attempts(t, "looping"))


def test_check_config_names_the_recovery_drills_and_the_hangs():
    from simd.scenario import drill_summary, summary

    config = parse_config(_text(LOOP, HANGS))
    assert [drill_summary(d, config) for d in config.drills] == [
        "drill loop: crash_loop {failure_probability: 0.67, max_attempts: 3, escalation_seconds: 7200} on looping "
        "for 36000 simulated s, at simulated second 36000",
        "drill hangs: cause_rate_factors {hang: 20} on hanging for 36000 simulated s, at simulated second 36000"]
    assert ", causes custom (hang found after 600 s)," in summary(config.scenario("hanging"))


def test_the_crash_loop_that_never_fails_gives_the_same_results_with_the_restarts_counted():
    from dataclasses import replace

    from simd.engine import run_job

    config = parse_config(_text(LOOP))
    base = config.scenario("looping")
    for seed in range(3):
        plain = run_job(base.job_spec(seed))
        counted = run_job(base.with_crash_loop_counted(config.drill_crash_loop("looping")).job_spec(seed))
        assert counted.restart_attempts_by_cause == counted.interruptions_by_cause != {}
        assert replace(counted, restart_attempts_by_cause={}) == plain


def test_a_resume_without_the_crash_loop_drill_starts_its_scenario_fresh_and_refuses_nothing():
    from simd.live.persist import decode, encode, resume

    clock = FakeClock(0.0)
    t = Ticker(parse_config(_text(LOOP)), clock=clock, wall=lambda: 1.7e9)
    clock.t = 3.0
    t.tick()
    raw = encode(*t.saved(), wall=1.7e9)
    for text in (_text(), _text(LOOP)):  # the drill removed; the drill kept
        resumed = resume(decode(raw), parse_config(text))
        assert resumed.refused == () and resumed.at_us == t.snapshot.simulated_us
        lanes = {lane.scenario.name: lane for lane in resumed.lanes}
        assert lanes["hanging"].states == t.states[1]
        assert (lanes["looping"].states == t.states[0]) == (text == _text(LOOP))
    # the other way: a state saved without the drill resumes under it fresh too (no retarget switches them on)
    plain = Ticker(parse_config(_text()), clock=clock, wall=lambda: 1.7e9)
    plain.tick()
    resumed = resume(decode(encode(*plain.saved(), wall=1.7e9)), parse_config(_text(LOOP)))
    looping = {lane.scenario.name: lane for lane in resumed.lanes}["looping"]
    assert resumed.refused == () and all(len(s.totals.restart_attempts) == 3 for s in looping.states)
