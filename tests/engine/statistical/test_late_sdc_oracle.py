"""Committed SDCs and late detectors (late.py, loop.py): the per-step oracle, tick-size invariance, retention.

The statistical and property checks (slow: they live in tests/engine/statistical)."""

import pytest
from engine_stats import assert_agree
from extended_specs import extended_specs
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from late_sdc_cases import CONFIGS
from support.examples import examples
from support.partition import check_cuts, horizon_us

from simd.engine import US_PER_SECOND

S = US_PER_SECOND


SEEDS = 84  # per configuration, as the newer oracle modules (the suite's 5-minute limit)


FIELDS = ("effective_utilization", "interruptions", "sdc_detected", "sdc_baked", "recompute_steps", "wall_seconds",
          "mean_step_seconds", "sdc_late_found", "sdc_unrecoverable", "checkpoints_lost", "hyper_activations",
          "hyper_steps")


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_engine_matches_per_step_loop_with_committed_sdcs(name):
    assert_agree(name, CONFIGS[name], SEEDS, FIELDS)


# budget trimmed for the suite's 5-minute limit (hypothesis draws anew on every run, so coverage adds up)
@settings(max_examples=examples(50), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(s=extended_specs(late=True), horizon_steps=st.integers(1, 1500), cuts=st.lists(st.floats(0, 1), max_size=10))
def test_any_partition_gives_identical_state(s, horizon_steps, cuts):
    check_cuts(s, horizon_us(s, horizon_steps), cuts)
