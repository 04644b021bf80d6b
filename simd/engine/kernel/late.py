"""Committed SDCs and their detectors in the loop (the model: simd.engine.late): a detector's latency from its
uniform, and the ring of the newest checkpoints that hold an SDC."""

from __future__ import annotations

import math

import numpy as np

from simd.engine.jit import njit
from simd.engine.late import _BELOW_ONE, _LATENCY_CAP_US, DISTRIBUTIONS  # noqa: F401 (the codes, re-exported)


@njit()
def inv_cdf(p):
    """statistics.NormalDist().inv_cdf(p) for 0 < p < 1 (the standard library's _normal_dist_inv_cdf, mu 0,
    sigma 1: Wichura, M.J. (1988), Algorithm AS241, Applied Statistics 37(3), 477-484), operation for operation."""
    q = p - 0.5
    if math.fabs(q) <= 0.425:
        r = 0.180625 - q * q
        num = (((((((2.5090809287301226727e+3 * r +
                     3.3430575583588128105e+4) * r +
                     6.7265770927008700853e+4) * r +
                     4.5921953931549871457e+4) * r +
                     1.3731693765509461125e+4) * r +
                     1.9715909503065514427e+3) * r +
                     1.3314166789178437745e+2) * r +
                     3.3871328727963666080e+0) * q
        den = (((((((5.2264952788528545610e+3 * r +
                     2.8729085735721942674e+4) * r +
                     3.9307895800092710610e+4) * r +
                     2.1213794301586595867e+4) * r +
                     5.3941960214247511077e+3) * r +
                     6.8718700749205790830e+2) * r +
                     4.2313330701600911252e+1) * r +
                     1.0)
        return 0.0 + (num / den) * 1.0
    r = p if q <= 0.0 else 1.0 - p
    r = math.sqrt(-math.log(r))
    if r <= 5.0:
        r = r - 1.6
        num = (((((((7.74545014278341407640e-4 * r +
                     2.27238449892691845833e-2) * r +
                     2.41780725177450611770e-1) * r +
                     1.27045825245236838258e+0) * r +
                     3.64784832476320460504e+0) * r +
                     5.76949722146069140550e+0) * r +
                     4.63033784615654529590e+0) * r +
                     1.42343711074968357734e+0)
        den = (((((((1.05075007164441684324e-9 * r +
                     5.47593808499534494600e-4) * r +
                     1.51986665636164571966e-2) * r +
                     1.48103976427480074590e-1) * r +
                     6.89767334985100004550e-1) * r +
                     1.67638483018380384940e+0) * r +
                     2.05319162663775882187e+0) * r +
                     1.0)
    else:
        r = r - 5.0
        num = (((((((2.01033439929228813265e-7 * r +
                     2.71155556874348757815e-5) * r +
                     1.24266094738807843860e-3) * r +
                     2.65321895265761230930e-2) * r +
                     2.96560571828504891230e-1) * r +
                     1.78482653991729133580e+0) * r +
                     5.46378491116411436990e+0) * r +
                     6.65790464350110377720e+0)
        den = (((((((2.04426310338993978564e-15 * r +
                     1.42151175831644588870e-7) * r +
                     1.84631831751005468180e-5) * r +
                     7.86869131145613259100e-4) * r +
                     1.48753612908506148525e-2) * r +
                     1.36929880922735805310e-1) * r +
                     5.99832206555887937690e-1) * r +
                     1.0)
    x = num / den
    if q < 0.0:
        x = -x
    return 0.0 + (x * 1.0)


@njit()
def latency_us(kind, scale_us, sigma, u):
    """late.latency_us with the distribution as its code (DISTRIBUTIONS)."""
    if kind == 0:
        x = -scale_us * math.log(u)
    elif kind == 1:
        x = scale_us * math.exp(sigma * inv_cdf(min(u, _BELOW_ONE))) if sigma else scale_us
    else:
        x = scale_us * u
    r = np.rint(x)  # Python's round: half to even
    if r >= float(_LATENCY_CAP_US):
        return np.int64(_LATENCY_CAP_US)
    return np.int64(r)


@njit()
def mixture_us(cum, kinds, scales, sigmas, u):
    """A mixture's duration from one uniform ``u`` in (0, 1] (servers.Servers.repair_mixture): the component j is
    the first whose cumulative weight ``cum[j]`` reaches u (the last is 1), its duration latency_us of u's place
    within it, ``(u - cum[j - 1]) / (cum[j] - cum[j - 1])``: in (0, 1] (a rounded difference is monotone, and
    u > cum[j - 1]), uniform given j."""
    j = 0
    while j < len(cum) - 1 and u > cum[j]:
        j += 1
    lo = cum[j - 1] if j else 0.0
    v = min((u - lo) / (cum[j] - lo), 1.0)
    return latency_us(kinds[j], scales[j], sigmas[j], v)


@njit()
def ring_add(ring, head, cnt, x):
    """Append job step x to the ring of the newest corrupt checkpoints (oldest first, at most len(ring))."""
    k = len(ring)
    if cnt < k:
        ring[(head + cnt) % k] = x
        return head, cnt + 1
    ring[head] = x
    return (head + 1) % k, cnt
