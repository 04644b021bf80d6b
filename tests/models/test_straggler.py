"""Scenario 4 models: norm_ppf (AS 241), expected_max_normal, detection statistics, NVRx-style scores."""

import math
from statistics import NormalDist

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as hst

from simd.models import straggler as st

TRIALS = 1000


def test_norm_ppf_matches_stdlib_everywhere():
    p = np.concatenate(
        [
            np.linspace(1e-12, 1 - 1e-12, 20001),
            np.logspace(-300, -1, 600),
            1 - np.logspace(-15, -1, 200),
        ]
    )
    got = st.norm_ppf(p)
    want = np.array([NormalDist().inv_cdf(float(x)) for x in p])
    assert np.max(np.abs(got - want)) < 1e-12
    assert np.all(np.abs(got - want) <= 1e-14 * np.maximum(1.0, np.abs(want)))


def test_norm_ppf_inverts_the_cdf():
    # Upper end limited to 5: above it, p = Phi(x) itself is rounded to a few ulps of 1.
    x = np.linspace(-8, 5, 1301)
    p = np.array([0.5 * math.erfc(-v / math.sqrt(2)) for v in x])
    assert np.max(np.abs(st.norm_ppf(p) - x)) < 1e-9


def test_norm_ppf_edges_and_scalars():
    assert st.norm_ppf(0.5) == 0.0
    assert isinstance(st.norm_ppf(0.975), float)
    assert st.norm_ppf(0.975) == pytest.approx(1.959963984540054, abs=1e-14)
    assert st.norm_ppf(0.0) == -math.inf and st.norm_ppf(1.0) == math.inf
    assert (
        math.isnan(st.norm_ppf(-0.1)) and math.isnan(st.norm_ppf(1.5)) and math.isnan(st.norm_ppf(math.nan))
    )
    assert st.norm_ppf(np.array([[0.1, 0.9]])).shape == (1, 2)


@given(hst.floats(1e-300, 0.5))
def test_norm_ppf_is_antisymmetric_and_monotone(p):
    assert st.norm_ppf(p) <= 0.0
    assert st.norm_ppf(p) <= st.norm_ppf(min(0.5, p * 1.001))
    if p >= 1e-6:  # 1 - p is exact enough (its rounding moves the quantile by < 1e-10)
        assert st.norm_ppf(p) == pytest.approx(-st.norm_ppf(1 - p), abs=1e-9)


def test_expected_max_normal_known_values():
    # Closed forms for n = 1..3, and tabulated values (e.g. Harter 1961) for n = 4, 5.
    assert st.expected_max_normal(1) == pytest.approx(0.0, abs=1e-12)
    assert st.expected_max_normal(2) == pytest.approx(1 / math.sqrt(math.pi), abs=1e-12)
    assert st.expected_max_normal(3) == pytest.approx(1.5 / math.sqrt(math.pi), abs=1e-12)
    assert st.expected_max_normal(4) == pytest.approx(1.0293753730, abs=1e-9)
    assert st.expected_max_normal(5) == pytest.approx(1.1629644736, abs=1e-9)
    assert st.expected_max_normal(1024, 30.0, 0.5) == pytest.approx(30 + 0.5 * st.expected_max_normal(1024))
    assert st.expected_max_normal(10, 3.0, 0.0) == 3.0
    with pytest.raises(ValueError):
        st.expected_max_normal(0)


def test_expected_max_normal_matches_sampling():
    rng = np.random.default_rng(5)
    draws = rng.standard_normal((4000, 1024)).max(axis=1)
    se = draws.std(ddof=1) / math.sqrt(draws.size)
    assert abs(draws.mean() - st.expected_max_normal(1024)) < 4 * se


def _trials(seed, slow=True):
    rng = np.random.default_rng(seed)
    healthy = st.rank_step_seconds(
        rng, (TRIALS, st.SCENARIO_RANKS), st.BASE_STEP_SECONDS, st.JITTER_SIGMA_SECONDS
    )
    return healthy, st.apply_slowdown(healthy, {st.SLOW_RANK: st.SLOWDOWN})


def test_straggler_detection_over_1000_trials():
    healthy, slowed = _trials(1)
    truth = np.zeros(slowed.shape, dtype=bool)
    truth[:, st.SLOW_RANK] = True
    flagged = st.detect_stragglers(slowed)
    assert st.precision_recall(flagged, truth) == (1.0, 1.0)
    assert np.all(flagged == truth)  # every single trial exact
    # The false-positive rate of jitter alone: measured, zero at the default threshold ...
    fp_rate = st.detect_stragglers(healthy).mean()
    assert fp_rate == 0.0
    # ... and measurably non-zero with a threshold inside the jitter (so the measurement is not vacuous):
    # P(Z > 0.03 * 30 / 0.5 = 1.8) = 3.6% per rank.
    fp_tight = st.detect_stragglers(healthy, threshold=0.03).mean()
    assert fp_tight == pytest.approx(1 - NormalDist().cdf(1.8), rel=0.05)


def test_sampled_step_time_is_the_expected_maximum():
    healthy, slowed = _trials(2)
    steps = st.synchronous_step_seconds(healthy)
    expected = st.expected_max_normal(st.SCENARIO_RANKS, st.BASE_STEP_SECONDS, st.JITTER_SIGMA_SECONDS)
    assert abs(steps.mean() - expected) < 4 * steps.std(ddof=1) / math.sqrt(TRIALS)
    # With the straggler the step is the straggler's own time: 1.2 * (30 + 0.5 Z), mean 36.
    slow_steps = st.synchronous_step_seconds(slowed)
    assert np.all(slow_steps == slowed[:, st.SLOW_RANK])
    assert abs(slow_steps.mean() - 36.0) < 4 * slow_steps.std(ddof=1) / math.sqrt(TRIALS)


def test_replacement_restores_the_baseline():
    healthy, slowed = _trials(3)
    flagged = st.detect_stragglers(slowed)
    replaced = np.where(flagged, healthy, slowed)  # the replacement takes the slot's jitter draw
    assert np.array_equal(st.synchronous_step_seconds(replaced), st.synchronous_step_seconds(healthy))


def test_precision_recall_edges():
    assert st.precision_recall([False, False], [False, False]) == (1.0, 1.0)
    assert st.precision_recall([True, False], [False, True]) == (0.0, 0.0)
    assert st.precision_recall([True, True], [True, False]) == (0.5, 1.0)


def test_nvrx_scores():
    med = np.array([30.0, 31.0, 36.0, 30.5])
    rel = st.relative_scores(med)
    assert rel[0] == 1.0 and rel[2] == pytest.approx(30 / 36)
    assert np.all((rel > 0) & (rel <= 1))
    hist = np.array([[30.0, 31.0], [30.0, 31.0], [36.0, 31.5]])
    ind = st.individual_scores(hist)
    assert ind == pytest.approx([30 / 36, 31 / 31.5])
    with pytest.raises(ValueError):
        st.relative_scores(np.array([0.0, 1.0]))
    with pytest.raises(ValueError):
        st.individual_scores(np.array([1.0, 2.0]))


def test_scores_find_the_straggler_at_simds_threshold_not_nvrxs_default():
    rng = np.random.default_rng(4)
    times = st.rank_step_seconds(
        rng,
        (100, st.SCENARIO_RANKS),
        st.BASE_STEP_SECONDS,
        st.JITTER_SIGMA_SECONDS,
        {st.SLOW_RANK: st.SLOWDOWN},
    )
    rel = st.relative_scores(np.median(times, axis=0))
    assert list(np.flatnonzero(rel < st.SCORE_THRESHOLD)) == [st.SLOW_RANK]
    assert list(np.flatnonzero(rel < st.NVRX_SCORE_THRESHOLD)) == []
    assert rel[st.SLOW_RANK] == pytest.approx(1 / st.SLOWDOWN, abs=0.02)
