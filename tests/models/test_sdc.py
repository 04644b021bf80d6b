"""Scenario 5 models: bit flips, fingerprints, bitwise dual run, loss-spike guard."""

import numpy as np
import pytest

from simd.models import sdc

SEEDS = range(5)


def _case(seed, n=256, dim=512, corrupt=8):
    rng = np.random.default_rng(seed)
    clean = sdc.make_gradients(seed, n, dim)
    primary, ranks, flips = sdc.inject_bit_flips(clean, rng, corrupt)
    return clean, primary, ranks, flips


@pytest.mark.parametrize("seed", SEEDS)
def test_bit_flips(seed):
    clean, primary, ranks, flips = _case(seed)
    assert len(ranks) == 8 == len(set(ranks)) and ranks == sorted(ranks)
    assert not np.shares_memory(clean, primary)
    diff_bits = np.unpackbits((clean.view(np.uint64) ^ primary.view(np.uint64)).view(np.uint8)).sum()
    assert diff_bits == len(flips)  # distinct bits: no flip undoes another
    per_rank = {r: sum(1 for fr, _, _ in flips if fr == r) for r in ranks}
    assert all(1 <= k <= sdc.MAX_BITS_PER_RANK for k in per_rank.values())
    assert {r for r, _, _ in flips} == set(ranks)


@pytest.mark.parametrize("seed", SEEDS)
def test_fingerprints_locate_exactly_the_corrupted_ranks(seed):
    clean, primary, ranks, _ = _case(seed)
    replica = sdc.make_gradients(seed, *clean.shape)
    assert sdc.locate_mismatches(sdc.shard_fingerprints(primary), sdc.shard_fingerprints(replica)) == ranks
    assert sdc.locate_mismatches(sdc.shard_fingerprints(clean), sdc.shard_fingerprints(replica)) == []


@pytest.mark.parametrize("seed", SEEDS)
def test_dual_run_has_no_misses_and_no_false_positives(seed):
    clean, primary, ranks, _ = _case(seed)
    shadow = sdc.make_gradients(seed, *clean.shape)  # the re-run is bit-identical
    assert list(np.flatnonzero(sdc.bitwise_mismatch(primary, shadow))) == ranks
    assert not sdc.bitwise_mismatch(clean, shadow).any()


def test_dual_run_sees_what_equality_does_not():
    a = np.array([[0.0, np.nan]])
    b = np.array([[-0.0, np.nan]])
    assert sdc.bitwise_mismatch(a, b).tolist() == [True]  # -0.0 == 0.0 numerically, not bitwise
    assert sdc.bitwise_mismatch(a, a.copy()).tolist() == [False]  # nan != nan numerically, equal bitwise
    with pytest.raises(ValueError):
        sdc.bitwise_mismatch(a, np.zeros((1, 3)))


@pytest.mark.parametrize("seed", SEEDS)
def test_spike_guard_hits_the_injected_step_and_is_silent_on_clean_curves(seed):
    rng = np.random.default_rng(seed)
    loss = sdc.loss_curve(rng, sdc.LOSS_STEPS)
    assert sdc.spike_guard(loss) == []
    spiked = sdc.inject_spike(loss, sdc.SPIKE_STEP, sdc.INJECTED_SPIKE_MULTIPLIER)
    assert sdc.spike_guard(spiked) == [sdc.SPIKE_STEP]


def test_spike_guard_rules():
    flat = np.ones(100)
    assert sdc.spike_guard(sdc.inject_spike(flat, 60, 5.0)) == []  # exactly 5x is not above 5x
    assert sdc.spike_guard(sdc.inject_spike(flat, 60, 5.01)) == [60]
    assert sdc.spike_guard(sdc.inject_spike(flat, 10, 100.0)) == []  # no full window of history yet
    nan = flat.copy()
    nan[70] = np.nan
    assert sdc.spike_guard(nan) == [70]
    # A slow divergence (loss doubling every 100 steps) is a trend, not a spike: the guard stays silent.
    assert sdc.spike_guard(np.exp(np.arange(1000) * np.log(2) / 100)) == []
    with pytest.raises(ValueError):
        sdc.spike_guard(flat, window=0)


def test_make_gradients_is_deterministic():
    a = sdc.make_gradients(3, 4, 8)
    assert np.array_equal(a.view(np.uint64), sdc.make_gradients(3, 4, 8).view(np.uint64))
    assert not np.array_equal(a, sdc.make_gradients(4, 4, 8))
    with pytest.raises(ValueError):
        sdc.inject_bit_flips(a, np.random.default_rng(0), 5)
