"""Availability against cluster size: the independent-failure MTBF/MTTR model (seed 001, scenario 1).

A synchronous job stops when any of its N units fails. With independent exponential failures, each unit
with mean time between failures ``node_mtbf``, the job's failures form a Poisson process of rate
``N / node_mtbf``, so

    job_mtbf = node_mtbf / N,        availability = job_mtbf / (job_mtbf + mttr).

The model is calibrated on one measured point: a 1024-GPU job fails on average every 7.9 h (Kokolis et al.,
"Revisiting Reliability in Large-Scale Machine Learning Research Clusters", HPCA 2025), hence
``node_mtbf = 7.9 h * 1024``. The seed calls the unit a "node" (节点) but counts GPUs; so does simd.

The Llama 3 line is a second, independent anchor: Meta's Llama 3 paper (Dubey et al. 2024, section 3.3.4)
reports 466 job interruptions in a 54-day snapshot of pre-training on 16,384 GPUs. Its mean interval and the
per-GPU MTBF it implies under the same model are computed here, not copied.

Pure functions of their arguments; the module-level constants are the seed's inputs, each with its source.
"""

from __future__ import annotations

from dataclasses import dataclass

# Kokolis et al., HPCA 2025 (seed 001): mean time to failure of a 1024-GPU job, hours.
KOKOLIS_JOB_MTTF_HOURS = 7.9
KOKOLIS_JOB_GPUS = 1024

# Seed 001, scenario 1: cold repair (requeue the job on a repaired/replaced node) vs hot-swap from a
# standby pool, minutes.
COLD_MTTR_MINUTES = 60.0
HOT_SWAP_MTTR_MINUTES = 5.0

# Seed 001, scenario 1: the cluster sizes of the table (GPUs).
SCALE_TABLE_GPUS = (128, 1024, 8192, 16384, 32768, 131072)

# Llama 3 (Dubey et al. 2024, "The Llama 3 Herd of Models", section 3.3.4; seed 001): 466 job interruptions
# during a 54-day snapshot of pre-training on 16,384 H100 GPUs.
LLAMA3_GPUS = 16384
LLAMA3_INTERRUPTIONS = 466
LLAMA3_DAYS = 54

HOURS_PER_DAY = 24.0
HOURS_PER_YEAR = 8760.0  # 365-day years (a 365.25-day year changes the implied MTBF by 0.07%)
MINUTES_PER_HOUR = 60.0


def node_mtbf_hours(job_mttf_hours: float, job_gpus: int) -> float:
    """Per-unit MTBF implied by a measured job MTTF: the inverse of ``job_mtbf_hours``."""
    if job_mttf_hours <= 0 or job_gpus < 1:
        raise ValueError("job_mttf_hours must be > 0 and job_gpus >= 1")
    return job_mttf_hours * job_gpus


def job_mtbf_hours(node_mtbf: float, n_gpus: int) -> float:
    """MTBF of a synchronous job on ``n_gpus`` independent units: any failure stops the job."""
    if node_mtbf <= 0 or n_gpus < 1:
        raise ValueError("node_mtbf must be > 0 and n_gpus >= 1")
    return node_mtbf / n_gpus


def availability(mtbf: float, mttr: float) -> float:
    """Long-run fraction of time up, ``MTBF / (MTBF + MTTR)`` (same unit for both)."""
    if mtbf <= 0 or mttr < 0:
        raise ValueError("mtbf must be > 0 and mttr >= 0")
    return mtbf / (mtbf + mttr)


@dataclass(frozen=True)
class ScaleRow:
    """One row of the availability table."""

    n_gpus: int
    job_mtbf_hours: float
    availability_cold: float
    availability_hot: float


def scale_table(
    node_mtbf: float, gpus: tuple[int, ...], cold_mttr_hours: float, hot_mttr_hours: float
) -> list[ScaleRow]:
    """Job MTBF and availability under cold and hot-swap repair for each cluster size."""
    rows = []
    for n in gpus:
        mtbf = job_mtbf_hours(node_mtbf, n)
        rows.append(
            ScaleRow(n, mtbf, availability(mtbf, cold_mttr_hours), availability(mtbf, hot_mttr_hours))
        )
    return rows


def mean_interval_hours(interruptions: int, days: float) -> float:
    """Mean time between interruptions observed over ``days``: ``days * 24 / interruptions``."""
    if interruptions < 1 or days <= 0:
        raise ValueError("interruptions must be >= 1 and days > 0")
    return days * HOURS_PER_DAY / interruptions


def implied_gpu_mtbf_years(job_interval_hours: float, n_gpus: int) -> float:
    """Per-GPU MTBF (365-day years) implied by a job's mean interruption interval on ``n_gpus``."""
    return node_mtbf_hours(job_interval_hours, n_gpus) / HOURS_PER_YEAR
