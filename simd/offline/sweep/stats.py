"""Statistics of one grid point's replicas: the mean effective utilization and its 95% confidence interval.

The interval is Student's t: ``mean +- t(0.975, n-1) * s / sqrt(n)`` with ``s`` the sample standard deviation
of the replicas' utilizations (the replicas are independent runs, one seed each); the quantile is scipy's.

Sums run in seed order with ``math.fsum``, so the same replicas give the same numbers bit for bit whichever
executor ran them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

from simd.engine import BUCKETS

CONFIDENCE = 0.95


@lru_cache(maxsize=4096)
def t_quantile(df: int, confidence: float = CONFIDENCE) -> float:
    """The two-sided ``confidence`` quantile of Student's t with ``df`` >= 1 degrees of freedom
    (``t_quantile(10)`` = 2.228)."""
    if df < 1:
        raise ValueError(f"degrees of freedom must be >= 1, got {df}")
    from scipy.stats import t  # here, not at import: the command line starts without scipy

    return float(t.ppf(0.5 + confidence / 2, df))


def mean_ci(values: list[float]) -> tuple[float, float, float]:
    """(mean, sample standard deviation, 95% half-width) of ``values`` in their order; the half-width is inf
    for fewer than two values."""
    n = len(values)
    if n == 0:
        return math.nan, math.nan, math.inf
    mean = math.fsum(values) / n
    if n == 1:
        return mean, math.nan, math.inf
    sd = math.sqrt(math.fsum((v - mean) ** 2 for v in values) / (n - 1))
    return mean, sd, t_quantile(n - 1) * sd / math.sqrt(n)


@dataclass(frozen=True)
class Interval:
    """The mean of a statistic over a point's finished replicas, its sample standard deviation and the 95%
    half-width of the mean, as the utilization's."""

    mean: float
    sd: float
    half_width: float

    @property
    def ci_low(self) -> float:
        return self.mean - self.half_width

    @property
    def ci_high(self) -> float:
        return self.mean + self.half_width


@dataclass(frozen=True)
class CostStats:
    """What a point's capacity cost (scenarios with server pools; docs/servers.md, cost): the mean GPU-hours
    held per job by the job and by its pools, and the cost of a productive GPU-hour in GPU-hours held (and in
    money with servers.price_per_gpu_hour, else None), each the mean of the replicas' own ratios as
    ``simd simulate --json`` reports them per seed."""

    gpu_hours_job_mean: float
    gpu_hours_pools_mean: float
    gpu_hours_per_productive: Interval
    cost_per_productive: Interval | None


@dataclass(frozen=True)
class PointStats:
    """Aggregates over a grid point's finished replicas (``n``); ``unfinished`` replicas did not reach their
    target within ``simd.offline.simulate.LIMIT_FACTOR`` times the failure-free duration and are left out."""

    n: int
    unfinished: int
    utilization_mean: float
    utilization_sd: float
    utilization_half_width: float  # 95% CI of the mean: mean +- half_width
    shares: dict[str, float]  # mean share of wall time per bucket (BUCKETS)
    interruptions_mean: float
    sdc_detected_mean: float
    sdc_baked_mean: float
    wall_hours_mean: float
    cost: CostStats | None = None  # with server pools only
    degraded_share: float | None = None  # with elastic replica groups only: the degraded bucket's mean share

    @property
    def ci_low(self) -> float:
        return self.utilization_mean - self.utilization_half_width

    @property
    def ci_high(self) -> float:
        return self.utilization_mean + self.utilization_half_width


def summarize(results) -> PointStats:
    """:class:`PointStats` of a point's ``ReplicaResult``s, which must be in seed order."""
    done = [r for r in results if r.completed]

    def mean(f) -> float:
        return math.fsum(f(r) for r in done) / len(done) if done else math.nan

    m, sd, half = mean_ci([r.effective_utilization for r in done])
    cost = None
    if any(r.gpu_hours_job is not None for r in done):  # pools (a grid's points all have them or none do)
        money = [r.cost_per_productive for r in done]
        cost = CostStats(
            gpu_hours_job_mean=mean(lambda r: r.gpu_hours_job),
            gpu_hours_pools_mean=mean(lambda r: r.gpu_hours_pools),
            gpu_hours_per_productive=Interval(*mean_ci([r.gpu_hours_per_productive for r in done])),
            cost_per_productive=None if None in money else Interval(*mean_ci(money)))
    return PointStats(
        n=len(done),
        unfinished=len(results) - len(done),
        utilization_mean=m,
        utilization_sd=sd,
        utilization_half_width=half,
        shares={b: mean(lambda r, i=i: r.bucket_shares[i]) for i, b in enumerate(BUCKETS)},
        interruptions_mean=mean(lambda r: r.interruptions),
        sdc_detected_mean=mean(lambda r: r.sdc_detected),
        sdc_baked_mean=mean(lambda r: r.sdc_baked),
        wall_hours_mean=mean(lambda r: r.wall_seconds / 3600.0),
        cost=cost,
        degraded_share=mean(lambda r: r.degraded_share) if any(r.degraded_share is not None for r in done)
        else None,
    )


def paired_difference(a, b, value) -> tuple[float, float, int]:
    """(mean, 95% half-width, n) of ``value(x) - value(y)`` over the seeds that replicas ``a`` and ``b`` (two
    points' ``ReplicaResult``s) both finished: common random numbers make the difference of two points far
    less noisy than either level, so this, not the overlap of their intervals, says whether they differ."""
    by_seed = {r.seed: r for r in b if r.completed}
    diffs = [value(r) - value(by_seed[r.seed]) for r in a if r.completed and r.seed in by_seed]
    m, _, half = mean_ci(diffs)
    return m, half, len(diffs)
