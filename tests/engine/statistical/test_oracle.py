"""The event-driven engine against seed 000's per-step loop: equal in distribution (4 standard errors)."""

from dataclasses import replace

import pytest
from specs import ORACLE_CONFIGS
from xspecs import assert_agree

from simd.engine import run_job

SEEDS = 300
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
