"""The event-driven engine against the per-step oracle: equal means (4 standard errors) and distributions (KS)."""

from dataclasses import replace

import pytest
from engine_stats import DISTRIBUTIONS, assert_agree, distributions_differ, engine_samples, field, oracle_samples
from specs import ORACLE_CONFIGS

from simd.engine import run_job

SEEDS = 84  # per configuration, as the newer oracle modules (the suite's 5-minute limit)
FIELDS = ("effective_utilization", "interruptions", "sdc_detected", "sdc_baked", "recompute_steps",
          "wall_seconds", "mean_step_seconds")


@pytest.mark.parametrize("name", sorted(ORACLE_CONFIGS))
def test_engine_matches_per_step_loop(name):
    assert_agree(name, ORACLE_CONFIGS[name], SEEDS, FIELDS)


def test_configurations_exercise_what_they_claim():
    """The oracle configurations really bake SDCs in, detect them, and interrupt as named."""
    jobs = {name: [run_job(replace(s, seed=k)) for k in range(40)] for name, s in ORACLE_CONFIGS.items()}
    assert sum(j.sdc_baked for j in jobs["nondividing"]) > 0
    assert sum(j.sdc_baked for j in jobs["no_validation"]) > 0
    assert sum(j.sdc_detected for j in jobs["no_validation"]) == 0
    assert sum(j.interruptions for j in jobs["sdc_only"]) == 0
    assert sum(j.sdc_detected for j in jobs["sdc_only"]) > 0
    assert sum(j.sdc_baked for j in jobs["optimized"]) == 0


def test_the_distribution_check_finds_a_planted_off_by_one():
    """The distribution check has the power to see a small mistake: the engine run with its validation lattice
    off by one (every 51 steps for every 50, a `<` for a `<=`) against the oracle on the job as written. On
    the optimized job, validation every 50 finds every SDC before the checkpoint at 100; every 51, the SDCs of
    steps 52-100 are baked in instead, so fewer are detected."""
    base = ORACLE_CONFIGS["optimized"]
    planted = replace(base, validation_interval_steps=base.validation_interval_steps + 1)
    reads = {f: field(f) for f in DISTRIBUTIONS}
    ours = engine_samples(planted, SEEDS, reads)
    theirs = oracle_samples(base, SEEDS, reads)
    assert any(d.startswith("sdc_detected") for d in distributions_differ(ours, theirs))
    ours_right = engine_samples(base, SEEDS, reads)  # and the check passes on the engine as it is
    assert distributions_differ(ours_right, theirs) == []
