"""Shared by the engine's mechanism tests: engine against oracle within 4 standard errors and in distribution (the
partition of time is checked by support.partition)."""

from __future__ import annotations

import math
from dataclasses import replace

from scipy.stats import ks_2samp

from simd.engine import run_job
from simd.engine.oracle import oracle_run


def mean_se(xs: list[float]) -> tuple[float, float]:
    n = len(xs)
    m = sum(xs) / n
    return m, math.sqrt(sum((x - m) ** 2 for x in xs) / (n - 1) / n)


# Compared as whole distributions as well as by their means, for every mechanism: what a job suffers
# (interruptions, SDC detections) and what it costs (wall time). Two-sample Kolmogorov-Smirnov (scipy.stats.ks_2samp;
# on counts, with ties, its p-value is conservative). The runs are deterministic (fixed seeds), so a failure is
# a real difference or a 1-in-ALPHA fluke that stays: ALPHA is small because about 40 configurations x 3
# distributions are tested (about 1% that any one of them fails by chance after a change of draws).
DISTRIBUTIONS = ("interruptions", "sdc_detected", "wall_seconds")
ALPHA = 1e-4


def distributions_differ(ours: dict[str, list], theirs: dict[str, list], alpha: float = ALPHA) -> list[str]:
    """The fields whose samples the two-sample KS test tells apart at ``alpha``, with their p-values."""
    out = []
    for f in ours:
        if set(ours[f]) == set(theirs[f]) and len(set(ours[f])) == 1:
            continue  # both constant and equal
        p = ks_2samp(ours[f], theirs[f]).pvalue
        if p < alpha:
            out.append(f"{f}: KS p = {p:.2g}")
    return out


def engine_samples(base, seeds: int, reads: dict) -> dict[str, list]:
    """The engine's values of each field over seeds 0 .. ``seeds`` - 1 (``reads`` maps a field name to (read from
    a JobResult, read from the oracle's dict))."""
    jobs = [run_job(replace(base, seed=seed)) for seed in range(seeds)]
    return {f: [read_job(j) for j in jobs] for f, (read_job, _) in reads.items()}


def oracle_samples(base, seeds: int, reads: dict) -> dict[str, list]:
    """The per-step oracle's values of each field over the same seeds (``reads`` as for engine_samples)."""
    refs = [oracle_run(base, seed=seed) for seed in range(seeds)]
    return {f: [read_ref(r) for r in refs] for f, (_, read_ref) in reads.items()}


def samples(base, seeds: int, reads: dict) -> tuple[dict[str, list], dict[str, list]]:
    """The engine's and the per-step oracle's values of each field over ``seeds`` seeds."""
    return engine_samples(base, seeds, reads), oracle_samples(base, seeds, reads)


def agree_with_oracle(name: str, base, seeds: int, reads: dict, distributions: tuple[str, ...] = ()) -> dict:
    """Run the engine and the per-step oracle over ``seeds`` seeds; ``reads`` maps a field name to
    (read from a JobResult, read from the oracle's dict). Asserts |difference| < 4 standard errors for each
    field (equal means when both have none) and the same distribution of DISTRIBUTIONS and of ``distributions``
    (fields of ``reads``; KS at ALPHA), and returns the engine's means."""
    reads = reads | {f: field(f) for f in DISTRIBUTIONS if f not in reads}
    ours, theirs = samples(base, seeds, reads)
    compared = DISTRIBUTIONS + tuple(distributions)
    differ = distributions_differ({f: ours[f] for f in compared}, {f: theirs[f] for f in compared})
    assert not differ, f"{name}: engine and per-step oracle differ in distribution: {differ}"
    means = {}
    for f in reads:
        m1, se1 = mean_se(ours[f])
        m2, se2 = mean_se(theirs[f])
        means[f] = m1
        if se1 == 0 and se2 == 0:
            assert m1 == m2, (name, f, m1, m2)
            continue
        z = abs(m1 - m2) / math.sqrt(se1**2 + se2**2)
        assert z < 4, f"{name}.{f}: engine {m1:.6g} +- {se1:.3g}, per-step {m2:.6g} +- {se2:.3g}, z={z:.2f}"
    return means


def field(name: str):
    """The same field of a JobResult and of the oracle's dict."""
    return (lambda j: getattr(j, name), lambda r: r[name])


def assert_agree(name, base, seeds: int, fields_: tuple[str, ...]) -> None:
    """The engine and the per-step oracle over ``seeds`` seeds: every field's means within 4 standard errors."""
    agree_with_oracle(name, base, seeds, {f: field(f) for f in fields_})
