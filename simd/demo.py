"""``simd demo``: seed 000's ideal / naive / optimized comparison, from the embedded default configuration.

The three rows are one job (1024 GPUs, 60 s steps, 3000 steps, the same failure and SDC rates, the same
restart cost) run three ways; each row is the mean over the same seeds (common random numbers). Unlike the
seed's illustrative table, all three rows come from one configuration, so ideal >= optimized > naive.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass

from simd.config import Config
from simd.simulate import simulate

ROWS = (("ideal", "ideal (no failures)"), ("naive", "naive (large interval, no validation)"),
        ("optimized", "optimized (small interval, frequent validation)"))
DEFAULT_SEEDS = 200  # standard error of the mean utilization ~0.1 percentage point (measured)


@dataclass(frozen=True)
class Row:
    name: str
    label: str
    utilization: float
    rollback_waste: float
    checkpoint_overhead: float
    interruptions: float
    sdc_detected: float
    sdc_baked: float
    unfinished: int


def compute(config: Config, seeds: list[int]) -> list[Row]:
    rows = []
    for name, label in ROWS:
        scenario = config.scenario(name)
        jobs = [o.job for o in (simulate(scenario, k) for k in seeds)]
        done = [j for j in jobs if j is not None]

        def mean(f, done=done):
            return statistics.fmean(f(j) for j in done) if done else float("nan")

        rows.append(Row(
            name, label,
            mean(lambda j: j.effective_utilization),
            mean(lambda j: j.bucket_seconds["rollback"] / j.wall_seconds),
            mean(lambda j: j.checkpoint_seconds / j.wall_seconds),
            mean(lambda j: j.interruptions), mean(lambda j: j.sdc_detected), mean(lambda j: j.sdc_baked),
            len(jobs) - len(done),
        ))
    return rows


def render(rows: list[Row], n_seeds: int) -> str:
    line = "-" * 100
    out = ["Synchronous training reliability: the failure economics of one job run three ways",
           f"(mean over {n_seeds} seeds; the same job, failure and SDC rates in every row)", line,
           f"{'configuration':<50}{'eff. util':>10}{'rollback%':>10}{'ckpt%':>7}{'interr':>8}{'SDC det':>8}"
           f"{'SDC baked':>10}", line]
    for r in rows:
        out.append(f"{r.label:<50}{r.utilization:>10.1%}{r.rollback_waste:>10.1%}{r.checkpoint_overhead:>7.1%}"
                   f"{r.interruptions:>8.1f}{r.sdc_detected:>8.1f}{r.sdc_baked:>10.2f}")
        if r.unfinished:
            out.append(f"  ({r.unfinished} seeds did not finish and are left out)")
    out.append(line)
    out.append(conclusion(rows))
    return "\n".join(out)


def conclusion(rows: list[Row]) -> str:
    by = {r.name: r for r in rows}
    ideal, naive, opt = by["ideal"], by["naive"], by["optimized"]
    shape = ideal.utilization >= opt.utilization > naive.utilization and naive.sdc_baked > 0 and opt.sdc_baked == 0
    if not shape:
        return ("Conclusion: this configuration does NOT show the expected shape (ideal >= optimized > naive, "
                "naive bakes SDCs in, optimized bakes none); check its rates and intervals.")
    return (f"Conclusion: validating at every checkpoint (before it is written) brings baked-in SDCs from "
            f"{naive.sdc_baked:.1f} per job to zero, and the small interval cuts rollback waste from "
            f"{naive.rollback_waste:.1%} to {opt.rollback_waste:.1%}. It pays {opt.checkpoint_overhead:.1%} of "
            f"wall time in checkpoints (naive: {naive.checkpoint_overhead:.1%}) and still lifts effective "
            f"utilization from {naive.utilization:.1%} to {opt.utilization:.1%}, against a failure-free "
            f"ceiling of {ideal.utilization:.1%} for the same schedule.")
