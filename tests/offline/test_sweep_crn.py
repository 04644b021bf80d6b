"""Common random numbers over a sweep's grid (simd.engine.crn): one seed's step durations drawn once for every
point that shares them give the results of each point run alone, bit for bit."""

from dataclasses import replace

import pytest
from support.scenarios import SWEEP_SMALL as SMALL

from simd.engine import advance, crn, new_state, run_job
from simd.engine.replicas import advance_replicas, run_jobs
from simd.executors import Serial
from simd.offline.simulate import ideal_seconds, simulation_limit_us
from simd.offline.sweep.grid import grid, parse_params
from simd.offline.sweep.run import Runner, adaptive_sweep, fixed_sweep, plan_tasks, run_point, run_points, shared_groups
from simd.scenario import parse_config


def _points(small, *params):
    return grid(small, parse_params(list(params)))


def test_shared_durations_equal_run_job_per_seed(small):
    points = _points(small, "checkpoint.interval_steps=10:400:5", "recovery.strategy=cold,warm")
    specs = [p.scenario.job_spec() for p in points]
    limits = [simulation_limit_us(p.scenario) for p in points]
    group = crn.Shared(specs)
    for seed in (0, 1, 17):
        want = [run_job(replace(s, seed=seed), limit_us=lim) for s, lim in zip(specs, limits, strict=True)]
        assert group.run(seed, limits) == want
        assert all(j is not None for j in want)


def test_shared_durations_with_a_checkpoint_load(small):
    """The load of a rollback's checkpoint (checkpoint.load_seconds) on the shared window, whole jobs and jobs
    cut at a limit: each point's result alone, bit for bit."""
    points = _points(small, "checkpoint.interval_steps=10,40", "checkpoint.load_seconds=0,93.6,600")
    specs = [p.scenario.job_spec() for p in points]
    group = crn.Shared(specs)
    for seed, factor in ((0, 1000), (1, 1000), (2, 1.2), (3, 1.3)):
        limits = [round(ideal_seconds(p.scenario) * factor * 1e6) for p in points]
        want = [run_job(replace(s, seed=seed), limit_us=lim) for s, lim in zip(specs, limits, strict=True)]
        assert group.run(seed, limits) == want
        assert factor < 2 or len({j.restart_seconds for j in want}) > 1


def test_counters_equal_the_engine_state_at_the_job_end(small):
    """Below the JobResult: every counter (the step-time histogram, straggler time, replaced ranks) and the
    simulated time equal core.advance's state after the first job, or at the limit."""
    points = _points(small, "checkpoint.interval_steps=20,40,80")
    specs = [p.scenario.job_spec() for p in points]
    group = crn.Shared(specs)
    for seed, factor in ((0, 1000), (1, 1000), (2, 1.2), (3, 1.3)):
        limits = [round(ideal_seconds(p.scenario) * factor * 1e6) for p in points]
        states = [advance(new_state(replace(s, seed=seed)), lim, max_jobs=1)[0] for s, lim in zip(specs, limits,
                                                                                                  strict=True)]
        assert group.counters(seed, limits) == [(s.totals, s.t) for s in states]
        assert all(sum(s.totals.step_hist) == s.totals.steps_executed for s in states)


def test_limits_that_cut_jobs_short(small):
    """Near the limit the quiet steps that fit are found by binary search over the prefix: the same cut as the
    step-by-step kernel's, and None where the job does not finish."""
    points = _points(small, "checkpoint.interval_steps=20,40,80")
    specs = [p.scenario.job_spec() for p in points]
    ideal_us = [round(ideal_seconds(p.scenario) * 1e6) for p in points]
    group = crn.Shared(specs)
    finished = set()
    for seed in range(12):
        limits = [int(u * f) for u, f in zip(ideal_us, (1.1, 1.25, 1.4), strict=True)]
        got = group.run(seed, limits)
        assert got == [run_job(replace(s, seed=seed), limit_us=lim) for s, lim in zip(specs, limits, strict=True)]
        assert got == [run_jobs([replace(s, seed=seed)], lim)[0] for s, lim in zip(specs, limits, strict=True)]
        finished |= {j is None for j in got}
    assert finished == {True, False}  # both kinds occurred


def test_a_small_window_slides_and_grows_to_the_same_results(small, monkeypatch):
    """A window of 128 steps: every configuration waits for the window many times per job, the window drops
    what is behind and its buffers grow when a stretch is longer than the window."""
    points = _points(small, "checkpoint.interval_steps=20,200")
    specs = [p.scenario.job_spec() for p in points]
    limits = [simulation_limit_us(p.scenario) for p in points]
    wide = crn.Shared(specs)
    want = [wide.run(seed, limits) for seed in range(4)]
    monkeypatch.setattr(crn, "WINDOW_STEPS", 2 * crn.STRIDE)
    narrow = crn.Shared(specs)
    assert [narrow.run(seed, limits) for seed in range(4)] == want
    assert narrow.peak_window_bytes < wide.peak_window_bytes / 5


def test_sweep_with_and_without_the_shared_prefix(small):
    points = _points(small, "checkpoint.interval_steps=20,80", "recovery.strategy=cold,warm")
    shared = Runner(points, Serial(), 1)
    assert shared.groups == [(0, 1, 2, 3)]
    alone = Runner(points, Serial(), 1, fn=run_point)
    assert alone.groups == [(0,), (1,), (2,), (3,)]
    a, b = fixed_sweep(shared, 5, 6), fixed_sweep(alone, 5, 6)
    assert a == b  # every ReplicaResult and every statistic
    assert len({r.stats.utilization_mean for r in a}) == 4


def test_adaptive_rounds_on_shared_tasks_equal_per_point_runs(small):
    points = _points(small, "checkpoint.interval_steps=20,200")
    a = adaptive_sweep(Runner(points, Serial(), 1), 0, 0.02, max_replicas=60)
    b = adaptive_sweep(Runner(points, Serial(), 1, fn=run_point), 0, 0.02, max_replicas=60)
    assert a == b
    assert a[0].rounds != a[1].rounds  # the points needed different seeds in later rounds


def test_points_with_other_durations_are_other_groups(small):
    points = _points(small, "n_gpus=256,512", "checkpoint.interval_steps=20,40")
    assert shared_groups(points) == [(0, 1), (2, 3)]
    jitter = _points(small, "stragglers.jitter_seconds=0.25,0.5")
    assert shared_groups(jitter) == [(0,), (1,)]
    none = _points(small.model_copy(update={"stragglers": None}), "checkpoint.interval_steps=20,40")
    assert shared_groups(none) == [(0,), (1,)]  # nothing to share
    assert crn.duration_key(none[0].scenario.job_spec()) is None


@pytest.mark.parametrize("extra", [
    "checkpoint: {interval_steps: 40, seconds: 60, hyper: {interval_steps: 5, window_steps: 40}}",
    "checkpoint: {interval_steps: 40, seconds: 60}\n    fleet: [{type: a, count: 384, hard_per_gpu_hour: 4.0e-4, "
    "sdc_per_gpu_hour: 1.0e-4}, {type: b, count: 128, hard_per_gpu_hour: 1.0e-3, sdc_per_gpu_hour: 6.0e-4}]",
], ids=["hyper", "fleet"])
def test_every_mechanism_but_committed_sdcs_shares_the_durations(extra):
    """Hyper-checkpointing and fleets run on the one kernel's prefix path (issue 20; shadow ranks do not combine
    with stragglers, engine.spec.REFUSED): each point's JobResults equal run_job's."""
    text = SMALL.replace("checkpoint: {interval_steps: 40, seconds: 60}", extra)
    if "fleet" in extra:
        text = text.replace("failures: {hard_per_gpu_hour: 5.0e-4, sdc_per_gpu_hour: 2.0e-4, causes: llama3}",
                            "failures: {causes: llama3}").replace("    n_gpus: 512\n", "")
    assert text != SMALL
    points = _points(parse_config(text).scenario("small"), "checkpoint.seconds=30,90")
    specs = [p.scenario.job_spec() for p in points]
    limits = [simulation_limit_us(p.scenario) for p in points]
    group = crn.Shared(specs)
    for seed in (0, 3):
        assert group.run(seed, limits) == [run_job(replace(s, seed=seed), limit_us=lim)
                                           for s, lim in zip(specs, limits, strict=True)]


def test_points_off_the_prefix_path_run_one_by_one():
    """Committed SDCs (a detector's finding is not on the prefix path): crn refuses the group, run_points runs each
    point alone."""
    text = SMALL.replace("validation: {interval_steps: 20, seconds: 5}", """validation: {interval_steps: 0, seconds: 0}
    acknowledge: [sdc-baked]
    sdc:
      semantics: committed
      retention_checkpoints: 4
      detectors:
        - {name: ripple, latency: {distribution: uniform, max_seconds: 259200}}""")
    assert text != SMALL
    points = _points(parse_config(text).scenario("small"), "checkpoint.seconds=30,90")
    with pytest.raises(ValueError, match="do not share"):
        crn.Shared([p.scenario.job_spec() for p in points])
    scenarios = [p.scenario for p in points]
    assert run_points(scenarios, [1, 2]) == [run_point(s, [1, 2]) for s in scenarios]


def test_tasks_cover_every_point_and_seed_once():
    ranges = {0: range(0, 10), 1: range(4, 20), 2: range(4, 10), 3: range(0, 3)}
    tasks = plan_tasks(ranges, workers=1, groups=[(0, 1, 2), (3,)])
    covered = sorted((p, s) for t in tasks for p in t.points for s in t.seeds)
    assert covered == sorted((p, s) for p, r in ranges.items() for s in r)
    for t in tasks:  # each task's seeds are consecutive and needed by all of its points
        assert list(t.seeds) == list(range(t.seeds[0], t.seeds[-1] + 1))
        assert all(s in ranges[p] for p in t.points for s in t.seeds)
    assert {t.points for t in tasks} == {(0,), (0, 1, 2), (1,), (3,)}


def test_a_stretch_longer_than_the_window_may_be_runs_alone(small, monkeypatch):
    """Memory stays bounded: a configuration whose quiet stretch exceeds MAX_WINDOW_STEPS runs its job on the
    step-by-step kernel (here: a window of at most 256 steps against stretches of hundreds of steps)."""
    points = _points(small, "checkpoint.interval_steps=20,200", "failures.hard_per_gpu_hour=5e-4,5e-5")
    specs = [p.scenario.job_spec() for p in points]
    limits = [simulation_limit_us(p.scenario) for p in points]
    want = [[run_job(replace(s, seed=seed), limit_us=lim) for s, lim in zip(specs, limits, strict=True)]
            for seed in range(3)]
    alone = []
    monkeypatch.setattr(crn, "advance_replicas",
                        lambda states, until, max_jobs: alone.append(len(states)) or advance_replicas(states, until,
                                                                                                     max_jobs=max_jobs))
    monkeypatch.setattr(crn, "WINDOW_STEPS", 2 * crn.STRIDE)
    monkeypatch.setattr(crn, "MAX_WINDOW_STEPS", 4 * crn.STRIDE)
    group = crn.Shared(specs)
    assert [group.run(seed, limits) for seed in range(3)] == want
    assert alone and group.peak_window_bytes <= 2 * (4 * crn.STRIDE + 1) * 10.5


def test_shared_durations_with_in_process_restarts_and_crash_loops():
    """A sweep over the crash loops' and in-process restarts' numbers on the shared window: each point's result
    alone, bit for bit."""
    text = SMALL.replace("    restart_seconds: 120\n", "    restart_seconds: 120\n    recovery: {in_process: {"
                         "causes: [software, other], seconds: 20, success_probability: 0.5}, crash_loop: "
                         "{failure_probability: 0.5, max_attempts: 3, escalation_seconds: 600}}\n")
    small = parse_config(text).scenario("small")
    points = _points(small, "recovery.crash_loop.failure_probability=0,0.6", "recovery.in_process.seconds=0,60")
    specs = [replace(p.scenario.job_spec(), hard_per_gpu_hour=2.0e-3) for p in points]
    group = crn.Shared(specs)
    for seed in (0, 1):
        limits = [10**13] * len(specs)
        want = [run_job(replace(s, seed=seed), limit_us=lim) for s, lim in zip(specs, limits, strict=True)]
        assert group.run(seed, limits) == want
        assert sum(j.escalations for j in want) and sum(j.in_process["succeeded"] for j in want)


def test_points_whose_mechanism_is_off_at_one_value_run_alone_and_give_each_points_results(small):
    """A stream exists only where its mechanism is on (failing saves at probability 0 draw nothing): crn runs
    every point on one seed's words, so points with other streams are not shared, and a sweep's results are each
    point's alone."""
    points = _points(small, "checkpoint.save_failure.probability=0,0.3")
    specs = [p.scenario.job_spec() for p in points]
    with pytest.raises(ValueError, match="do not share"):
        crn.Shared(specs)
    scenarios = [p.scenario for p in points]
    got = run_points(scenarios, [1])
    assert got == [run_point(s, [1]) for s in scenarios]
    assert got[0][0].wall_seconds < got[1][0].wall_seconds  # the failing saves cost their recomputation
