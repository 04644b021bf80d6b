"""Random event streams over the executed-step index, each a pure function of the seed and its name.

Seed 000 draws, on every executed step, a Bernoulli for a hard failure and (when the state is clean and the
step did not fail) a Bernoulli for an SDC onset. Drawing the SDC Bernoulli on *every* executed step and
ignoring it on failed or already-corrupted steps gives the same joint distribution, and then both are plain
Bernoulli processes over ``g``, the number of steps executed since the simulation started. A Bernoulli(p)
process is a sorted set of positions with independent geometric gaps: element ``i`` sits ``gap_i`` steps after
element ``i - 1``, with ``gap_i = ceil(log(U_i) / log(1 - p))`` from the stream's ``i``-th uniform. The
i-th uniform of a stream is computed directly (PCG64 jumps ahead in O(log i)), so a stream's state is two
integers, the index and position of the next element, and the sets do not depend on how time is cut into
ticks: tick-size invariance by construction.

Streams are named and seeded by ``SeedSequence(seed, spawn_key=(crc32(name),))`` (docs/design.md 3.4): adding a
mechanism never changes another mechanism's draws. :func:`stream_state` asks numpy for one stream (~60 us: a
SeedSequence and a bit generator built); :class:`Seeded` derives one stream for many seeds at once, the same
states bit for bit (tests compare), ~1 us per seed.
"""

from __future__ import annotations

import threading
import zlib

import numpy as np

from simd.engine.hazard import NEVER

# Gaps are capped so that positions stay far inside int64 (2**50 steps of one second is 35 million years).
_GAP_CAP = float(1 << 50)
_local = threading.local()


def stream_state(seed: int, name: str, bit_generator: str = "PCG64") -> dict:
    """The initial state of the stream ``name`` for ``seed``: PCG64, or PCG64DXSM (the same PCG family with
    a cheaper output function, numpy's recommendation for new code) for the per-step straggler stream,
    whose uniforms it draws in 2.8 ns instead of 4.9 ns (measured on the project's machine)."""
    if bit_generator not in _KINDS:
        raise ValueError(f"bit_generator must be one of {_KINDS}, got {bit_generator!r}")
    seq = np.random.SeedSequence(seed, spawn_key=(zlib.crc32(name.encode()),))
    return getattr(np.random, bit_generator)(seq).state


_KINDS = ("PCG64", "PCG64DXSM")


# numpy's SeedSequence (numpy/random/bit_generator.pyx): its hash constants, the default pool of 4 uint32 words
_INIT_A, _MULT_A, _INIT_B, _MULT_B = 0x43B0D7E5, 0x931E8875, 0x8B51F9DD, 0x58F38DED
_MIX_L, _MIX_R = 0xCA01F9DD, 0x4973F715
_POOL = 4
_U32 = 0xFFFFFFFF
_U64 = (1 << 64) - 1
_U128 = (1 << 128) - 1
# numpy/random/src/pcg64/pcg64.h: PCG_DEFAULT_MULTIPLIER_128 (numpy seeds PCG64DXSM with the same step)
_MULT_128 = (2549297995355413924 << 64) | 4865540595714422341


class _Hash:
    """SeedSequence's hashmix over arrays of uint32 words, its multiplier running on as numpy's does."""

    def __init__(self, init: int, mult: int):
        self.h, self.mult = init, mult

    def __call__(self, v: np.ndarray) -> np.ndarray:
        v = v ^ np.uint32(self.h)
        self.h = (self.h * self.mult) & _U32
        v = v * np.uint32(self.h)
        return v ^ (v >> np.uint32(16))


def _mix(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    r = np.uint32(_MIX_L) * x - np.uint32(_MIX_R) * y
    return r ^ (r >> np.uint32(16))


def _pools(seeds: np.ndarray, key: int) -> list[np.ndarray]:
    """SeedSequence(seed, spawn_key=(key,)).pool for every seed (< 2**64), one array per pool word. The
    entropy is the seed's uint32 words, lowest first, padded with zeros to the pool size (a spawn key is
    given), then the key: [lo, hi, 0, 0, key] for every seed (a seed below 2**32 has hi = 0, the padding)."""
    n = len(seeds)
    zero = np.zeros(n, dtype=np.uint32)
    entropy = [(seeds & np.uint64(_U32)).astype(np.uint32), (seeds >> np.uint64(32)).astype(np.uint32), zero, zero,
               np.full(n, key, dtype=np.uint32)]
    h = _Hash(_INIT_A, _MULT_A)
    mixer = [h(entropy[i]) for i in range(_POOL)]
    for src in range(_POOL):
        for dst in range(_POOL):
            if src != dst:
                mixer[dst] = _mix(mixer[dst], h(mixer[src]))
    for src in range(_POOL, len(entropy)):
        for dst in range(_POOL):
            mixer[dst] = _mix(mixer[dst], h(entropy[src]))
    return mixer


def _words64(pool: list[np.ndarray], n_words: int) -> list[np.ndarray]:
    """SeedSequence.generate_state(n_words, np.uint64), one array per word: 2 * n_words uint32 words from the
    pool, paired little-endian."""
    h = _Hash(_INIT_B, _MULT_B)
    w32 = [h(pool[i % _POOL]) for i in range(2 * n_words)]
    return [w32[2 * k].astype(np.uint64) | (w32[2 * k + 1].astype(np.uint64) << np.uint64(32))
            for k in range(n_words)]


class Seeded:
    """The stream ``name`` of every seed in ``seeds``: ``[stream_state(s, name, bit_generator) for s in seeds]``,
    derived together. numpy seeds a PCG64 (or PCG64DXSM) from SeedSequence's 4 uint64 words (s_hi, s_lo,
    i_hi, i_lo) as pcg64_set_seed does: inc = (i << 1) | 1, state = (inc + s) * M + inc (mod 2**128). The
    SeedSequence runs on uint32 arrays over the seeds, the 128-bit arithmetic on object arrays of Python ints
    (exact; numpy has no 128-bit integer). ``state`` and ``inc``: those integers, one per seed."""

    def __init__(self, seeds, name: str, bit_generator: str = "PCG64"):
        if bit_generator not in _KINDS:
            raise ValueError(f"bit_generator must be one of {_KINDS}, got {bit_generator!r}")
        if any(not 0 <= s <= _U64 for s in seeds):
            raise ValueError("stream seeds must be integers in [0, 2**64)")
        self.kind = bit_generator
        with np.errstate(over="ignore"):  # uint32 arithmetic wraps, as SeedSequence's C does
            w = [x.astype(object) for x in _words64(_pools(np.array(seeds, dtype=np.uint64),
                                                            zlib.crc32(name.encode())), 4)]
        init = (w[0] << 64) | w[1]
        self.inc = ((((w[2] << 64) | w[3]) << 1) | 1) & _U128
        self.state = ((self.inc + init) * _MULT_128 + self.inc) & _U128

    def __len__(self) -> int:
        return len(self.state)

    def dicts(self) -> list[dict]:
        """The states as numpy's bit generators give them (``.state``; stream_state's form)."""
        kind = self.kind
        return [{"bit_generator": kind, "state": {"state": s, "inc": i}, "has_uint32": 0, "uinteger": 0}
                for s, i in zip(self.state.tolist(), self.inc.tolist(), strict=True)]

    def words(self) -> np.ndarray:
        """The states as pcg.words rows (seeds x 5 uint64: state hi, state lo, inc hi, inc lo, kind)."""
        out = np.empty((len(self), 5), dtype=np.uint64)
        for col, v in enumerate((self.state >> 64, self.state & _U64, self.inc >> 64, self.inc & _U64)):
            out[:, col] = v.astype(np.uint64)
        out[:, 4] = _KINDS.index(self.kind)
        return out

    def first_positions(self, log1m_p: float) -> np.ndarray:
        """first_position of every seed's stream (a PCG64 one): its first double is the first output, XSL-RR of
        the state one step on, ``(x >> 11) * 2**-53`` (numpy's next_double)."""
        if self.kind != "PCG64":
            raise ValueError("first_positions draws from PCG64 streams")
        if log1m_p == 0.0:
            return np.full(len(self), NEVER, dtype=np.int64)
        s = (self.state * _MULT_128 + self.inc) & _U128
        hi = s >> 64
        x, rot = (hi ^ (s & _U64)), hi >> 58
        out = ((x >> rot) | (x << ((64 - rot) & 63))) & _U64
        doubles = (out >> 11).astype(np.int64) * (1.0 / 9007199254740992.0)
        return _gaps_of(1.0 - doubles, log1m_p)


def generator_at(state: dict, first: int) -> np.random.Generator:
    """A generator whose next double is the stream's uniform number ``first`` (valid until the next call)."""
    kind = state["bit_generator"]
    bits = getattr(_local, kind, None)
    if bits is None:
        bits = getattr(np.random, kind)(0)
        setattr(_local, kind, bits)
    bits.state = state
    if first:
        bits.advance(first)  # one double = one 64-bit output for both PCG64 variants
    return np.random.Generator(bits)


def uniforms(state: dict, first: int, count: int) -> np.ndarray:
    """Uniforms number ``first`` .. ``first + count - 1`` of the stream, in (0, 1]."""
    return 1.0 - generator_at(state, first).random(count)


def gaps(state: dict, log1m_p: float, first: int, count: int) -> np.ndarray:
    """Geometric gaps number ``first`` .. (``log1m_p = log(1 - p) < 0``)."""
    return _gaps_of(uniforms(state, first, count), log1m_p)


def _gaps_of(u: np.ndarray, log1m_p: float) -> np.ndarray:
    return np.clip(np.ceil(np.log(u) / log1m_p), 1.0, _GAP_CAP).astype(np.int64)


def first_position(state: dict, log1m_p: float) -> int:
    """Position of element 0 of a stream (NEVER for a rate of zero)."""
    if log1m_p == 0.0:
        return NEVER
    return int(gaps(state, log1m_p, 0, 1)[0])
