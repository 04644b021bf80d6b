"""Silent data corruption in gradients and three ways to catch it (seed 001, scenario 5).

Model. Each of ``n_ranks`` data-parallel ranks holds a float64 gradient shard of ``dim`` values, computed
deterministically from the seed (so a re-run is bit-identical). A hardware fault flips 1 to 8 random bits in
the shards of a few ranks (any of the 64 bits of a float64: mantissa, exponent or sign, so a flip may make
an inf or a nan, as real faults do).

Defences:
- shard fingerprints: a 64-bit digest (BLAKE2b) per rank's shard, compared with the fingerprint of a replica
  that must be identical; a mismatch locates the corrupted rank. Cheap, but only sees disagreement between
  copies. Compared rank by rank (``n_ranks`` comparisons); production systems fold this into the
  communication stack.
- bitwise dual run: the shard is recomputed (shadow execution) and compared bit for bit; deterministic
  computation makes any difference a fault, so there are neither misses nor false positives, at twice the
  compute.
- loss-spike guard: a step whose loss exceeds ``SPIKE_FACTOR`` times the median of the previous
  ``SPIKE_WINDOW_STEPS`` losses is flagged. A last line of defence (the corruption has happened); it catches
  spikes, not slow trends.
"""

from __future__ import annotations

import hashlib

import numpy as np

# Seed 001, scenario 5: 1024 ranks x 4096-dim float64 gradients; 1-8 bits flipped per corrupted rank; the
# loss-spike guard fires above 5x the rolling median; the spike is injected at step 500.
SCENARIO_RANKS = 1024
GRADIENT_DIM = 4096
MAX_BITS_PER_RANK = 8
SPIKE_FACTOR = 5.0
SPIKE_STEP = 500
# The seed's printed run corrupted 8 ranks; simd takes that as the number to inject.
CORRUPTED_RANKS = 8
# simd's choices (the seed does not print them): the guard's window, the length of the loss curve, and the
# size of the injected spike (a corrupted gradient step that multiplies the loss by 20, well above the guard).
SPIKE_WINDOW_STEPS = 50
LOSS_STEPS = 1000
INJECTED_SPIKE_MULTIPLIER = 20.0

FLOAT_BITS = 64
_FINGERPRINT_BYTES = 8


def make_gradients(seed: int, n_ranks: int, dim: int) -> np.ndarray:
    """Deterministic float64 gradients ``(n_ranks, dim)`` from ``seed``: the same call gives the same bits."""
    rng = np.random.default_rng(np.random.SeedSequence(seed))
    return rng.standard_normal((n_ranks, dim)) * 1e-3


def inject_bit_flips(
    grads: np.ndarray, rng: np.random.Generator, n_corrupt: int, max_bits: int = MAX_BITS_PER_RANK
) -> tuple[np.ndarray, list[int], list[tuple[int, int, int]]]:
    """A copy of ``grads`` with 1..max_bits distinct bits flipped in each of ``n_corrupt`` distinct ranks.

    Returns (corrupted copy, sorted corrupted ranks, flips as (rank, index, bit)). Bits within a rank are
    distinct, so no flip undoes another.
    """
    n_ranks, dim = grads.shape
    if not 0 <= n_corrupt <= n_ranks or max_bits < 1:
        raise ValueError("need 0 <= n_corrupt <= n_ranks and max_bits >= 1")
    out = np.array(grads, dtype=np.float64, copy=True)
    words = out.view(np.uint64)
    ranks = sorted(int(r) for r in rng.choice(n_ranks, size=n_corrupt, replace=False))
    flips = []
    for r in ranks:
        k = int(rng.integers(1, max_bits + 1))
        for pos in rng.choice(dim * FLOAT_BITS, size=k, replace=False):
            index, bit = divmod(int(pos), FLOAT_BITS)
            words[r, index] ^= np.uint64(1) << np.uint64(bit)
            flips.append((r, index, bit))
    return out, ranks, flips


def shard_fingerprints(grads: np.ndarray) -> list[bytes]:
    """One 64-bit BLAKE2b digest per rank (row) of the exact bits of its shard."""
    data = np.ascontiguousarray(grads, dtype=np.float64)
    return [hashlib.blake2b(row.tobytes(), digest_size=_FINGERPRINT_BYTES).digest() for row in data]


def locate_mismatches(fingerprints_a: list[bytes], fingerprints_b: list[bytes]) -> list[int]:
    """Ranks whose fingerprints differ, compared one by one."""
    if len(fingerprints_a) != len(fingerprints_b):
        raise ValueError("fingerprint lists differ in length")
    return [r for r, (a, b) in enumerate(zip(fingerprints_a, fingerprints_b, strict=True)) if a != b]


def bitwise_mismatch(primary: np.ndarray, shadow: np.ndarray) -> np.ndarray:
    """Dual-run comparison: per rank (row), True when any bit differs (nan and -0.0 included)."""
    a = np.ascontiguousarray(primary, dtype=np.float64).view(np.uint64)
    b = np.ascontiguousarray(shadow, dtype=np.float64).view(np.uint64)
    if a.shape != b.shape:
        raise ValueError("primary and shadow differ in shape")
    return np.any(a != b, axis=-1)


def loss_curve(rng: np.random.Generator, steps: int) -> np.ndarray:
    """A clean training-loss curve: exponential decay to a floor, with 2% multiplicative noise."""
    t = np.arange(steps, dtype=float)
    return (2.0 + 8.0 * np.exp(-t / 200.0)) * (1.0 + 0.02 * rng.standard_normal(steps))


def inject_spike(loss: np.ndarray, step: int, multiplier: float) -> np.ndarray:
    """A copy of ``loss`` with the loss at ``step`` multiplied by ``multiplier``."""
    out = np.array(loss, dtype=float, copy=True)
    out[step] *= multiplier
    return out


def spike_guard(
    loss: np.ndarray, factor: float = SPIKE_FACTOR, window: int = SPIKE_WINDOW_STEPS
) -> list[int]:
    """Steps whose loss exceeds ``factor`` x the median of the previous ``window`` losses (or is not finite).

    The first ``window`` steps have no full history and are not judged.
    """
    loss = np.asarray(loss, dtype=float)
    if window < 1 or factor <= 0:
        raise ValueError("window must be >= 1 and factor > 0")
    if loss.size <= window:
        return []
    history = np.lib.stride_tricks.sliding_window_view(loss[:-1], window)  # history[i] precedes loss[i+w]
    med = np.median(history, axis=-1)
    current = loss[window:]
    flagged = ~np.isfinite(current) | (current > factor * med)
    return [int(i) + window for i in np.flatnonzero(flagged)]
