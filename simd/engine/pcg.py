"""numpy's PCG64 and PCG64DXSM bit generators, compiled (numba), bit for bit: the engine's streams inside kernels.

The engine's random streams (streams.py) are numpy bit generators seeded by name. A compiled kernel that loops
over steps or replicas cannot call numpy per draw, so it runs the same generators itself: a 128-bit linear
congruential state ``s`` with increment ``inc``, as two uint64 halves, and numpy's output functions
(numpy/random/src/pcg64/pcg64.h):

- PCG64: step ``s = s * M + inc`` (M the 128-bit default multiplier), then output XSL-RR of the new state,
  ``rotr64(hi ^ lo, hi >> 58)``;
- PCG64DXSM: output DXSM of the state *before* the step (``hi ^= hi >> 32; hi *= C; hi ^= hi >> 48;
  hi *= lo | 1``), then step ``s = s * C + inc`` with the 64-bit "cheap multiplier" C;
- a double is ``(next64 >> 11) * 2**-53`` (numpy's ``next_double``); jumping ahead ``n`` draws is the LCG's
  closed form (Brown 1994, as numpy's ``advance``): O(log n) 128-bit products.

Tests compare every function here against numpy's own generators. The 64 x 64 -> 128-bit product is one LLVM
``mul i128`` (an intrinsic below): numba has no 128-bit integer type.
"""

from __future__ import annotations

import warnings

import numpy as np
from llvmlite import ir
from numba import config, types
from numba.extending import intrinsic

from simd.engine.jit import njit

# numpy/random/src/pcg64/pcg64.h
MULT_HI = np.uint64(2549297995355413924)  # PCG_DEFAULT_MULTIPLIER_128, high half
MULT_LO = np.uint64(4865540595714422341)  # low half
CHEAP = np.uint64(0xDA942042E4DD58B5)  # PCG_CHEAP_MULTIPLIER_128 (PCG64DXSM)
_MASK64 = (1 << 64) - 1
TO_DOUBLE = 1.0 / 9007199254740992.0  # 2**-53: numpy's next_double


@intrinsic
def mulhi(typingctx, a, b):
    """The high 64 bits of the 128-bit product of two uint64."""
    sig = types.uint64(types.uint64, types.uint64)

    def codegen(context, builder, signature, args):
        i128 = ir.IntType(128)
        p = builder.mul(builder.zext(args[0], i128), builder.zext(args[1], i128))
        return builder.trunc(builder.lshr(p, ir.Constant(i128, 64)), ir.IntType(64))

    return sig, codegen


@intrinsic
def float_bits(typingctx, x):
    """The bit pattern of a float64 as a uint64 (numpy's ``view(np.uint64)``)."""
    sig = types.uint64(types.float64)

    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], ir.IntType(64))

    return sig, codegen


if config.DISABLE_JIT:  # NUMBA_DISABLE_JIT=1 runs every kernel as Python (debugging): the intrinsics in Python
    # uint64 arithmetic wraps as in the compiled kernels; numpy's scalars say so each time, which is no news here
    warnings.filterwarnings("ignore", "overflow encountered in scalar", RuntimeWarning, r"simd\.engine\.")

    def mulhi(a, b):
        return np.uint64((int(a) * int(b)) >> 64)

    def float_bits(x):
        return np.float64(x).view(np.uint64)


@njit()
def mul128(ah, al, bh, bl):
    """The low 128 bits of (ah, al) * (bh, bl)."""
    return (mulhi(al, bl) + ah * bl + al * bh), al * bl


@njit()
def add128(ah, al, bh, bl):
    lo = al + bl
    return ah + bh + np.uint64(lo < al), lo


@njit()
def pcg64_next(sh, sl, ih, il):
    """(new state, output) of one PCG64 draw."""
    h, lo = mul128(sh, sl, MULT_HI, MULT_LO)
    h, lo = add128(h, lo, ih, il)
    x = h ^ lo
    rot = h >> np.uint64(58)
    out = (x >> rot) | (x << ((np.uint64(64) - rot) & np.uint64(63)))
    return h, lo, out


@njit()
def dxsm_next(sh, sl, ih, il):
    """(new state, output) of one PCG64DXSM draw."""
    hi = sh ^ (sh >> np.uint64(32))
    hi = hi * CHEAP
    hi = hi ^ (hi >> np.uint64(48))
    hi = hi * (sl | np.uint64(1))
    h, lo = mul128(sh, sl, np.uint64(0), CHEAP)
    h, lo = add128(h, lo, ih, il)
    return h, lo, hi


@njit()
def to_double(x):
    # x >> 11 < 2**53 fits an int64, whose conversion to float64 is one instruction (uint64's is a sequence)
    return np.float64(np.int64(x >> np.uint64(11))) * TO_DOUBLE


@njit()
def advance(sh, sl, ih, il, delta, mh, ml):
    """The state ``delta`` (>= 0) draws ahead, for multiplier (mh, ml) and increment (ih, il)."""
    acc_mh, acc_ml = np.uint64(0), np.uint64(1)
    acc_ph, acc_pl = np.uint64(0), np.uint64(0)
    cur_mh, cur_ml, cur_ph, cur_pl = mh, ml, ih, il
    d = np.uint64(delta)
    while d > np.uint64(0):
        if d & np.uint64(1):
            acc_mh, acc_ml = mul128(acc_mh, acc_ml, cur_mh, cur_ml)
            acc_ph, acc_pl = mul128(acc_ph, acc_pl, cur_mh, cur_ml)
            acc_ph, acc_pl = add128(acc_ph, acc_pl, cur_ph, cur_pl)
        th, tl = add128(cur_mh, cur_ml, np.uint64(0), np.uint64(1))
        cur_ph, cur_pl = mul128(th, tl, cur_ph, cur_pl)
        cur_mh, cur_ml = mul128(cur_mh, cur_ml, cur_mh, cur_ml)
        d = d >> np.uint64(1)
    h, lo = mul128(acc_mh, acc_ml, sh, sl)
    return add128(h, lo, acc_ph, acc_pl)


def words(state: dict) -> np.ndarray:
    """A numpy bit generator's state dict (streams.stream_state) as uint64 [state hi, state lo, inc hi,
    inc lo, kind] (kind 0: PCG64, 1: PCG64DXSM)."""
    s, inc = state["state"]["state"], state["state"]["inc"]
    kind = {"PCG64": 0, "PCG64DXSM": 1}[state["bit_generator"]]
    return np.array([s >> 64, s & _MASK64, inc >> 64, inc & _MASK64, kind], dtype=np.uint64)


@njit()
def seek(w, first):
    """The state (hi, lo) of stream ``w`` (words) at its draw number ``first``."""
    if w[4] == np.uint64(0):
        return advance(w[0], w[1], w[2], w[3], first, MULT_HI, MULT_LO)
    return advance(w[0], w[1], w[2], w[3], first, np.uint64(0), CHEAP)


@njit()
def doubles(w, first, n):
    """Doubles number ``first`` .. ``first + n - 1`` of stream ``w`` (numpy's ``random(n)`` from there)."""
    out = np.empty(n)
    sh, sl = seek(w, first)
    ih, il = w[2], w[3]
    dx = w[4] == np.uint64(1)
    for i in range(n):
        if dx:
            sh, sl, x = dxsm_next(sh, sl, ih, il)
        else:
            sh, sl, x = pcg64_next(sh, sl, ih, il)
        out[i] = to_double(x)
    return out
