"""Scenario 3 models: constants, the lost-time arithmetic, ETTR, and the failure stream's statistics."""

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as hst

from simd.models import recovery as rc

# Seed 001, scenario 3: the week it printed (its draw) and the lost hours and ETTR it printed for it.
SEED_WEEK = {"software": 2, "other": 2, "gpu": 13, "host": 2, "network": 1}
SEED_COLD = ("12.204", "92.74%")
SEED_WARM = ("10.724", "93.62%")


def _causes(counts):
    return [c for c, n in counts.items() for _ in range(n)]


def test_constants():
    assert rc.COLD_RESTART_SECONDS == 388.2
    assert rc.COLD_RESTART_MINUTES == 6.47
    assert rc.COLD_RESTART_SECONDS == pytest.approx(sum(rc.TRAINMOVER_COLD_RESTART_MINUTES.values()) * 60)
    assert list(rc.TRAINMOVER_COLD_RESTART_MINUTES.values()) == [0.52, 1.50, 1.56, 1.09, 1.80]
    assert rc.WARM_SWAP_SECONDS == 55.0
    assert tuple(rc.LLAMA3_CAUSE_SHARES) == rc.CAUSES == tuple(rc.DETECTION_SECONDS)
    assert math.fsum(rc.LLAMA3_CAUSE_SHARES.values()) == pytest.approx(1.0, abs=1e-12)
    assert rc.LLAMA3_CAUSE_SHARES == {
        "gpu": 0.587,
        "network": 0.084,
        "host": 0.10,
        "software": 0.145,
        "other": 0.084,
    }
    assert (rc.DETECTION_SECONDS["gpu"], rc.DETECTION_SECONDS["network"], rc.DETECTION_SECONDS["host"]) == (
        10.0,
        30.0,
        2.0,
    )
    assert rc.WARM_CAPABLE_CAUSES == {"gpu", "network", "host"}


def test_fixed_failure_list_arithmetic():
    causes = ["gpu", "software", "network", "host"]
    rollback = 1000.0
    cold = rc.lost_time(causes, "cold", rollback)
    assert cold.detection_seconds == 10 + 2 + 30 + 2
    assert cold.restart_seconds == pytest.approx(4 * 388.2)
    assert cold.rollback_seconds == 4000.0
    warm = rc.lost_time(causes, "warm", rollback)
    assert warm.restart_seconds == pytest.approx(3 * 55 + 388.2)  # software stays on the cold path
    assert warm.total_seconds == pytest.approx(44 + 3 * 55 + 388.2 + 4000)
    assert rc.ettr(warm.total_hours, 168.0) == pytest.approx(1 - (44 + 3 * 55 + 388.2 + 4000) / 3600 / 168)
    assert warm.total_seconds < cold.total_seconds


def test_the_seed_week_follows_from_the_arithmetic():
    causes = _causes(SEED_WEEK)
    rollback = rc.expected_rollback_seconds(rc.SCENARIO_CHECKPOINT_INTERVAL_SECONDS)
    for strategy, want in (("cold", SEED_COLD), ("warm", SEED_WARM)):
        lost = rc.lost_time(causes, strategy, rollback)
        got = (f"{lost.total_hours:.3f}", f"{100 * rc.ettr(lost.total_hours, rc.WEEK_HOURS):.2f}%")
        assert got == want, strategy


def test_software_and_other_always_cold():
    for cause in ("software", "other"):
        assert rc.restart_seconds(cause, "warm") == rc.COLD_RESTART_SECONDS
    for cause in rc.WARM_CAPABLE_CAUSES:
        assert rc.restart_seconds(cause, "warm") == rc.WARM_SWAP_SECONDS
        assert rc.restart_seconds(cause, "cold") == rc.COLD_RESTART_SECONDS
    with pytest.raises(ValueError):
        rc.restart_seconds("gpu", "lukewarm")
    with pytest.raises(ValueError):
        rc.restart_seconds("cosmic", "cold")


@given(hst.lists(hst.sampled_from(rc.CAUSES), max_size=60), hst.floats(0.0, 7200.0))
def test_warm_never_loses_more_than_cold(causes, rollback):
    cold = rc.lost_time(causes, "cold", rollback)
    warm = rc.lost_time(causes, "warm", rollback)
    assert warm.total_seconds <= cold.total_seconds
    if any(c in rc.WARM_CAPABLE_CAUSES for c in causes):
        assert warm.total_seconds < cold.total_seconds


def test_failure_count_and_causes_over_many_seeds():
    n_seeds = 4000
    counts, causes = [], []
    for seed in range(n_seeds):
        week = rc.sample_failures(
            np.random.default_rng(seed), rc.WEEK_HOURS, rc.SCENARIO_MTBF_HOURS, rc.LLAMA3_CAUSE_SHARES
        )
        counts.append(len(week))
        causes += [c for _, c in week]
        assert all(0 <= t < rc.WEEK_HOURS for t, _ in week)
        assert [t for t, _ in week] == sorted(t for t, _ in week)
    counts = np.array(counts)
    expected = 168 / 7.9
    se = math.sqrt(expected / n_seeds)  # Poisson: variance = mean
    assert abs(counts.mean() - expected) < 4 * se
    assert counts.var(ddof=1) == pytest.approx(expected, rel=0.1)
    total = len(causes)
    for cause, share in rc.LLAMA3_CAUSE_SHARES.items():
        freq = causes.count(cause) / total
        assert abs(freq - share) < 4 * math.sqrt(share * (1 - share) / total), cause


def test_expected_lost_time_matches_simulation():
    rollback = 1800.0
    rng = np.random.default_rng(11)
    lost = []
    for _ in range(3000):
        week = rc.sample_failures(rng, rc.WEEK_HOURS, rc.SCENARIO_MTBF_HOURS, rc.LLAMA3_CAUSE_SHARES)
        lost.append(rc.lost_time([c for _, c in week], "cold", rollback).total_seconds)
    lost = np.array(lost)
    expected = (
        rc.WEEK_HOURS
        / rc.SCENARIO_MTBF_HOURS
        * rc.expected_lost_seconds_per_failure("cold", rc.LLAMA3_CAUSE_SHARES, rollback)
    )
    assert abs(lost.mean() - expected) < 4 * lost.std(ddof=1) / math.sqrt(lost.size)


def test_count_by_cause_and_validation():
    assert rc.count_by_cause(["gpu", "gpu", "other"]) == {
        "gpu": 2,
        "network": 0,
        "host": 0,
        "software": 0,
        "other": 1,
    }
    with pytest.raises(ValueError):
        rc.ettr(1.0, 0.0)
    with pytest.raises(ValueError):
        rc.sample_failures(np.random.default_rng(0), 0.0, 7.9, rc.LLAMA3_CAUSE_SHARES)
