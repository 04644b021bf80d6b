"""The event-driven engine against seed 000's per-step loop: equal in distribution (4 standard errors)."""

import math
from dataclasses import replace

import pytest
from specs import ORACLE_CONFIGS

from simd.engine import run_job
from simd.engine.reference import reference_run

SEEDS = 300
FIELDS = ("effective_utilization", "interruptions", "sdc_detected", "sdc_baked", "recompute_steps",
          "wall_seconds", "mean_step_seconds")


def _mean_se(xs):
    n = len(xs)
    m = sum(xs) / n
    var = sum((x - m) ** 2 for x in xs) / (n - 1)
    return m, math.sqrt(var / n)


@pytest.mark.parametrize("name", sorted(ORACLE_CONFIGS))
def test_engine_matches_per_step_loop(name):
    base = ORACLE_CONFIGS[name]
    ours = {f: [] for f in FIELDS}
    theirs = {f: [] for f in FIELDS}
    for seed in range(SEEDS):
        job = run_job(replace(base, seed=seed))
        ref = reference_run(base, seed=seed)
        for f in FIELDS:
            ours[f].append(getattr(job, f))
            theirs[f].append(ref[f])
    for f in FIELDS:
        m1, se1 = _mean_se(ours[f])
        m2, se2 = _mean_se(theirs[f])
        if se1 == 0 and se2 == 0:
            assert m1 == m2, (name, f)
            continue
        z = abs(m1 - m2) / math.sqrt(se1**2 + se2**2)
        assert z < 4, f"{name}.{f}: engine {m1:.6g} +- {se1:.3g}, per-step {m2:.6g} +- {se2:.3g}, z={z:.2f}"


def test_configurations_exercise_what_they_claim():
    """The oracle configurations really bake SDCs in, detect them, and interrupt as named."""
    jobs = {name: [run_job(replace(s, seed=k)) for k in range(40)] for name, s in ORACLE_CONFIGS.items()}
    assert sum(j.sdc_baked for j in jobs["nondividing"]) > 0
    assert sum(j.sdc_baked for j in jobs["no_validation"]) > 0
    assert sum(j.sdc_detected for j in jobs["no_validation"]) == 0
    assert sum(j.interruptions for j in jobs["sdc_only"]) == 0
    assert sum(j.sdc_detected for j in jobs["sdc_only"]) > 0
    assert sum(j.sdc_baked for j in jobs["optimized"]) == 0
