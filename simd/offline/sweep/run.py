"""``simd sweep``'s core: replicas of each grid point run as tasks, aggregated in a fixed order.

The replicas of a grid point use seeds ``seed_base, seed_base + 1, ...``, the same at every grid point (common
random numbers: neighbouring points see the same failure streams, so their difference is estimated with less
noise than their levels). The work is cut into tasks of (a group of grid points, a run of consecutive seeds):
the points of a group share their step durations (the same straggler parameters: simd.engine.crn), so a task
draws each seed's durations once for all of them (:func:`run_points`). An executor (``simd.executors``:
in-process, a local process pool, or a dask.distributed cluster) runs the tasks in any order and the results
are put back in seed order before anything is summed, so the numbers are identical whichever executor ran them.

:func:`run_point` turns one configuration and seeds into per-replica results on the engine's batch path;
:func:`run_points` does it for a group of configurations, on the shared durations when they have stragglers,
with the same results bit for bit (tests compare the two, and both with ``simd simulate``).

Two modes: a fixed number of replicas per point, or adaptive (:func:`adaptive_sweep`): replicas are added in
rounds until the 95% confidence half-width of the mean effective utilization is at most the target at every
point, or the point has ``max_replicas``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace

from simd.engine import BUCKETS, US_PER_SECOND, Shared, compile_spec, duration_key
from simd.models import analytic
from simd.models.recovery import expected_restarts_us
from simd.offline.simulate import Outcome, run_batch, simulation_limit_us
from simd.offline.sweep.grid import Point
from simd.offline.sweep.stats import PointStats, summarize
from simd.scenario import Scenario

# Adaptive mode. Law & Kelton, Simulation Modeling and Analysis (3rd ed., section 9.4.1): the sequential
# procedure starts from n0 >= 10 replications to estimate the variance before trusting a half-width.
ADAPTIVE_START = 10
# A task holds at most this many seeds: a llama3-16k seed is ~20 ms of drawing its ~1.3e6 step durations, shared
# by the task's points, plus 0.2-0.35 ms of events per point (60-190 ms per replica of a point that shares them with
# none), so tasks of 0.1-19 s measured here against ~1.5 ms of overhead per task: the progress bar moves and a
# worker idles at most one task's time at the end. And at most MAX_TASK_JOBS jobs (points x seeds: ~3 s of events
# on llama3-16k). The work of a round is cut into at least TASKS_PER_WORKER tasks per worker so that tasks of
# unequal cost (intervals, cluster sizes) still keep every worker busy to the end.
MAX_TASK_REPLICAS = 100
MAX_TASK_JOBS = 10_000
TASKS_PER_WORKER = 8


@dataclass(frozen=True)
class ReplicaResult:
    """What a sweep keeps of one replica (a completed job, or one that did not finish within the limit)."""

    seed: int
    completed: bool
    effective_utilization: float  # productive / wall time; nan when not completed
    bucket_shares: tuple[float, ...]  # share of wall time per bucket, in BUCKETS order; nan when not completed
    interruptions: int
    sdc_detected: int
    sdc_baked: int
    wall_seconds: float
    # With server pools (simd.engine.results.JobResult.gpu_hours; None without pools or when not completed: not
    # nan, which would make two equal results unequal once pickled): the GPU-hours the job and its pools held,
    # the GPU-hours held per productive GPU-hour, and with servers.price_per_gpu_hour that times the price
    # (simd simulate --json's cost_per_productive_gpu_hour)
    gpu_hours_job: float | None = None
    gpu_hours_pools: float | None = None
    gpu_hours_per_productive: float | None = None
    cost_per_productive: float | None = None
    horizon: bool = False  # not completed: stopped at the work horizon (simd.offline.simulate.HORIZON_WORK_US)
    # with elastic replica groups (recovery.elastic) the degraded bucket's share of wall time (None without, or
    # when not completed)
    degraded_share: float | None = None

    @classmethod
    def of(cls, outcome: Outcome) -> ReplicaResult:
        j = outcome.job
        if j is None:
            nan = math.nan
            return cls(outcome.seed, False, nan, (nan,) * len(BUCKETS), 0, 0, 0, outcome.limit_seconds,
                       horizon=outcome.horizon_seconds is not None)
        w = j.wall_seconds
        cost = {}
        if j.gpu_hours:
            ratio = j.gpu_hours_per_productive_gpu_hour
            cost = {"gpu_hours_job": j.gpu_hours["job"], "gpu_hours_pools": j.gpu_hours["pools"],
                    "gpu_hours_per_productive": ratio}
            if outcome.price is not None:  # the same product as simd simulate --json's, bit for bit
                cost["cost_per_productive"] = outcome.price * ratio
        if "degraded" in j.bucket_seconds:
            cost["degraded_share"] = j.bucket_seconds["degraded"] / w
        return cls(outcome.seed, True, j.effective_utilization, tuple(j.bucket_seconds[b] / w for b in BUCKETS),
                   j.interruptions, j.sdc_detected, j.sdc_baked, w, **cost)


def _price(scenario: Scenario) -> float | None:
    return scenario.servers.price_per_gpu_hour if scenario.servers is not None else None


def run_point(scenario: Scenario, seeds: Sequence[int]) -> list[ReplicaResult]:
    """R replicas of one configuration, one per seed, in seed order: each runs ``scenario``'s job to completion,
    all of them at once on the engine's batch path over replicas (simd.offline.simulate.run_batch), whose every
    result equals the single-replica engine's (``simd simulate``'s) for the same seed, bit for bit, the work
    horizon included."""
    limit_us = simulation_limit_us(scenario)
    jobs = run_batch([scenario.job_spec(seed) for seed in seeds], limit_us) if seeds else []
    price = _price(scenario)
    return [ReplicaResult.of(Outcome(scenario.name, seed, scenario.target_steps, job, limit_us / US_PER_SECOND,
                                     price=price, horizon_seconds=None if stop is None else stop / US_PER_SECOND))
            for seed, (job, stop) in zip(seeds, jobs, strict=True)]


def run_points(scenarios: Sequence[Scenario], seeds: Sequence[int]) -> list[list[ReplicaResult]]:
    """:func:`run_point` for each of ``scenarios`` (a task's group), each list in seed order. Configurations
    that share their step durations (simd.engine.crn.Shared: stragglers with the same parameters, every
    mechanism on the batch kernel) draw each seed's durations once, holding one seed's window of them at a
    time; the others run one by one. The results are the same either way, bit for bit."""
    if len(scenarios) < 2 or not seeds or duration_key(scenarios[0].job_spec(seeds[0])) is None:
        return [run_point(sc, seeds) for sc in scenarios]
    try:
        group = Shared([sc.job_spec(seeds[0]) for sc in scenarios])
    except ValueError:  # not shareable after all (a mechanism off the kernel, other durations)
        return [run_point(sc, seeds) for sc in scenarios]
    limits = [simulation_limit_us(sc) for sc in scenarios]
    out: list[list[ReplicaResult]] = [[] for _ in scenarios]
    for seed in seeds:
        for results, sc, limit_us, job in zip(out, scenarios, limits, group.run(seed, limits), strict=True):
            results.append(ReplicaResult.of(Outcome(sc.name, seed, sc.target_steps, job, limit_us / US_PER_SECOND,
                                                    price=_price(sc))))
    return out


@dataclass(frozen=True)
class PerPoint:
    """A task function from a per-point one (``fn(scenario, seeds)``, e.g. a test's fake): each point alone."""

    fn: Callable

    def __call__(self, scenarios: Sequence[Scenario], seeds: Sequence[int]) -> list[list[ReplicaResult]]:
        return [self.fn(sc, seeds) for sc in scenarios]


@dataclass(frozen=True)
class Task:
    points: tuple[int, ...]  # indices into the grid: a group of points that need the same seeds
    seeds: tuple[int, ...]  # consecutive seeds


# An executor (simd.executors): called as executor(fn, [(task, (scenarios, task.seeds)), ...]), ``scenarios``
# those of the task's points, it yields (task, fn(scenarios, task.seeds)) in any order; fn returns a list per point.
Executor = Callable[[Callable, list[tuple[Task, tuple[tuple[Scenario, ...], tuple[int, ...]]]]],
                    Iterable[tuple[Task, list[list[ReplicaResult]]]]]
RunPoint = Callable[[Scenario, Sequence[int]], list[ReplicaResult]]
Progress = Callable[[int, int], None]  # (replicas planned so far, replicas done so far)


def chunk_size(replicas: int, workers: int) -> int:
    """Seeds per task for a round of ``replicas`` seed runs (one per group and seed) on ``workers`` workers."""
    return max(1, min(MAX_TASK_REPLICAS, math.ceil(replicas / (TASKS_PER_WORKER * max(1, workers)))))


def shared_groups(points: Sequence[Point]) -> list[tuple[int, ...]]:
    """The grid's points grouped by what their step durations depend on (simd.engine.crn.duration_key), in
    grid order; a point without stragglers is a group of its own (nothing to share)."""
    groups: dict[object, list[int]] = {}
    for i, p in enumerate(points):
        key = duration_key(p.scenario.job_spec())
        groups.setdefault(("alone", i) if key is None else key, []).append(i)
    return [tuple(g) for g in groups.values()]


def plan_tasks(ranges: dict[int, range], workers: int,
               groups: Sequence[Sequence[int]] | None = None) -> list[Task]:
    """Tasks for seed ranges per point. Within a group (default: every point alone) the seeds are cut where the
    set of points that need them changes (adaptive rounds give points different ranges), and each run of seeds
    into tasks of at most ``chunk_size`` seeds (and MAX_TASK_JOBS jobs) holding every point that needs them."""
    groups = [(i,) for i in sorted(ranges)] if groups is None else groups
    runs: list[tuple[tuple[int, ...], range]] = []
    for group in groups:
        members = [i for i in group if i in ranges and len(ranges[i])]
        cuts = sorted({b for i in members for b in (ranges[i].start, ranges[i].stop)})
        for lo, hi in zip(cuts, cuts[1:], strict=False):
            pts = tuple(i for i in members if lo in ranges[i])
            if pts:
                runs.append((pts, range(lo, hi)))
    size = chunk_size(sum(len(r) for _, r in runs), workers)
    tasks = []
    for pts, r in runs:
        n = max(1, min(size, MAX_TASK_JOBS // len(pts)))
        tasks += [Task(pts, tuple(r[k:k + n])) for k in range(0, len(r), n)]
    return sorted(tasks, key=lambda t: (t.points, t.seeds))


@dataclass(frozen=True)
class PointResult:
    point: Point
    replicas: tuple[ReplicaResult, ...]  # in seed order
    stats: PointStats
    hit_cap: bool = False  # adaptive mode: stopped at max_replicas before reaching the target half-width
    rounds: tuple[int, ...] = ()  # adaptive mode: the point's replicas after each round it took part in


class Runner:
    """Runs rounds of seed ranges over the grid with one executor, keeping every replica in seed order. By default
    the tasks hold groups of points that share their step durations (:func:`run_points`); with ``fn`` (a
    per-point function such as :func:`run_point`) every point is a task group of its own."""

    def __init__(self, points: list[Point], execute: Executor, workers: int, fn: RunPoint | None = None,
                 progress: Progress | None = None):
        self.points, self.execute, self.workers = points, execute, workers
        self.fn = run_points if fn is None else PerPoint(fn)
        self.groups = shared_groups(points) if fn is None else [(i,) for i in range(len(points))]
        self.progress = progress or (lambda planned, done: None)
        self.results: list[list[ReplicaResult]] = [[] for _ in points]
        self.planned = self.done = 0

    def round(self, ranges: dict[int, range]) -> None:
        """Run each point's seed range (each must continue the point's seeds so far) and append the results."""
        tasks = plan_tasks({i: r for i, r in ranges.items() if len(r)}, self.workers, self.groups)
        self.planned += sum(len(t.points) * len(t.seeds) for t in tasks)
        self.progress(self.planned, self.done)
        got: dict[tuple[int, int], list[ReplicaResult]] = {}
        jobs = [(t, (tuple(self.points[i].scenario for i in t.points), t.seeds)) for t in tasks]
        for task, per_point in self.execute(self.fn, jobs):
            if len(per_point) != len(task.points):
                raise RuntimeError(f"a task of {len(task.points)} points returned {len(per_point)} lists")
            for point, results in zip(task.points, per_point, strict=True):
                if [r.seed for r in results] != list(task.seeds):
                    raise RuntimeError(f"run_point returned seeds {[r.seed for r in results]} for {task.seeds}")
                got[(point, task.seeds[0])] = results
                self.done += len(results)
            self.progress(self.planned, self.done)
        for (point, _), results in sorted(got.items()):  # seed order, whatever the completion order
            self.results[point].extend(results)


def fixed_sweep(runner: Runner, seed_base: int, replicas: int) -> list[PointResult]:
    """Every point with seeds seed_base .. seed_base + replicas - 1."""
    runner.round({i: range(seed_base, seed_base + replicas) for i in range(len(runner.points))})
    return [PointResult(p, tuple(r), summarize(r)) for p, r in zip(runner.points, runner.results, strict=True)]


def next_count(n: int, half_width: float, target: float, cap: int) -> int:
    """The replicas a point should have after the next round (``n`` if it is done or capped).

    The half-width shrinks as 1/sqrt(n) at a fixed standard deviation, so ``n * (half_width / target)^2``
    replicas would reach the target; at most doubling per round, because the standard deviation of a small
    sample is itself uncertain (and the t quantile falls with n, so the estimate errs on the safe side); at
    least a tenth more, because each round waits for its slowest task: rounds of a handful of replicas cost
    more in waiting than a few replicas beyond the need."""
    if half_width <= target or n >= cap:
        return n
    need = math.ceil(n * (half_width / target) ** 2) if math.isfinite(half_width) else 2 * n
    return min(cap, max(n + max(1, n // 10), min(need, 2 * n)))


def adaptive_sweep(runner: Runner, seed_base: int, target: float, max_replicas: int,
                   start: int = ADAPTIVE_START) -> list[PointResult]:
    """Rounds of replicas until every point's 95% half-width of mean utilization is <= ``target`` or the point
    has ``max_replicas`` replicas. Each point's seeds stay consecutive from ``seed_base``, so a point stopped
    after n replicas has exactly the replicas a fixed sweep of n would have."""
    k = len(runner.points)
    start = min(start, max_replicas)
    counts = [start] * k
    history: list[list[int]] = [[] for _ in range(k)]
    runner.round({i: range(seed_base, seed_base + start) for i in range(k)})
    while True:
        stats = [summarize(r) for r in runner.results]
        for i in range(k):
            if not history[i] or history[i][-1] != counts[i]:
                history[i].append(counts[i])
        nxt = [next_count(counts[i], stats[i].utilization_half_width, target, max_replicas) for i in range(k)]
        if nxt == counts:
            break
        runner.round({i: range(seed_base + counts[i], seed_base + nxt[i]) for i in range(k) if nxt[i] > counts[i]})
        counts = nxt
    return [PointResult(p, tuple(r), s, hit_cap=s.utilization_half_width > target, rounds=tuple(h))
            for p, r, s, h in zip(runner.points, runner.results, stats, history, strict=True)]


FirstOrder = analytic.FirstOrder  # (the model's class, for the sweep's outputs)


def _plan_inputs(scenario: Scenario):
    """The compiled plan of ``scenario`` (without stragglers: they enter neither the hazard nor the causes, and
    compiling their tables costs ~1.5 s per new set of parameters, n_gpus sweeps), its causes' shares and their
    recoveries (detection, mean restart, the persistent checkpoint's load; microseconds), as
    simd.metrics.snapshot reads them."""
    plan = compile_spec(replace(scenario.job_spec(), stragglers=None))
    shares = [b - a for a, b in zip((0.0,) + plan.cause_cumulative[:-1], plan.cause_cumulative, strict=True)]
    # a recovery: detection, restart (its mean, with in-process restarts or crash loops) and the checkpoint's load
    # (paid by every rollback but those to the job's start)
    recovery_us = [d + r + plan.load_us for d, r in zip(plan.cause_detect_us, expected_restarts_us(plan),
                                                        strict=True)]
    return plan, shares, recovery_us


def two_level(scenario: Scenario) -> analytic.TwoLevel | None:
    """The two-level first-order model of a scenario with a memory tier (simd.models.analytic.TwoLevel, the
    daemon's gauges' model): its efficiency at both intervals and both optima; None without a tier or without
    hard failures."""
    if scenario.checkpoint.tiers is None:
        return None
    return analytic.two_level(*_plan_inputs(scenario))


def analytic_efficiency(scenario: Scenario) -> float | None:
    """The model's efficiency at ``scenario``'s configured intervals, as the daemon's gauge gives it: the
    first-order model's, or with a memory tier the two-level model's where it reaches (simd.models.analytic.REACH);
    None without hard failures or beyond the reach."""
    model = first_order(scenario)
    if model is not None:
        return model.efficiency(scenario.checkpoint.interval_steps)
    levels = two_level(scenario)
    if levels is None:
        return None
    persistent, tier = scenario.checkpoint.interval_steps, scenario.job_spec().tier.interval_steps
    return levels.efficiency(persistent, tier) if levels.in_reach(persistent, tier) else None


def first_order(scenario: Scenario) -> FirstOrder | None:
    """The single-level model of ``scenario`` (simd.models.analytic.first_order: the daemon's gauges' model, live
    migration and just-in-time saves in it), its inputs read from the engine's compiled plan as simd.metrics.snapshot
    reads them (the hazard covers fleets and shadow ranks; the causes' shares and recoveries in the engine's
    microseconds); None without hard failures (no MTBF, no optimum), and with a memory tier (the single-level curve
    is not its model: :func:`two_level` is)."""
    if scenario.checkpoint.tiers is not None:
        return None
    return analytic.first_order(*_plan_inputs(scenario))
