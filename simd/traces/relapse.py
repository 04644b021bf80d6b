"""A repair that does not hold (the engine's ``servers.relapse``; docs/traces.md, "Repairs that do not hold"): the
renewal fit's lifetimes with, after each repair, a two-part mixture.

A server's up intervals: the first, from the log's start, of its law (Weibull of shape k and scale theta divided by
its frailty w ~ Gamma(a, 1/a), as simd.traces.fit); each later one, after a repair, with probability p a short
lifetime, exponential of mean mu divided by w (the engine's: its short lifetime's scale divided by the server's gamma
multiplier), else of the law. Given w the intervals are independent, so a server's likelihood is

    E_w[ prod_{first} f(x | w)^d S(x | w)^(1 - d) prod_{after a repair} (p f_mu(x | w)^d S_mu(x | w)^(1 - d)
                                                                      + (1 - p) f(x | w)^d S(x | w)^(1 - d)) ]

(d: the interval ended in a fault, 1; censored by the log's end or a burst, 0; the burst window's chance weights in
between), a product of sums the label patterns of which number 2^n for a server of n repairs. The expectation is
taken over w by quadrature in u = log w instead, server by server (:func:`_kernel`, compiled): a coarse grid over the
prior's range and the server's own mode finds where the integrand lies within e^-45 of its peak, Gauss-Legendre
panels there integrate it; its log's gradient in the parameters is the posterior expectation of the integrand's
log's gradient on the same nodes (analytic, per interval: which part of the mixture the interval belongs to is a
posterior share). With a rate schedule each interval's length is its operational length and each fault's density
carries its piece's multiplier, as the engine's time change; its pieces' log multipliers are fitted with the rest
(from the schedule's optimum without relapses), their gradient through the intervals' lengths.

Parameters (L-BFGS-B over them): log theta, log k (Weibull only), log a, logit p, log mu, then a schedule's pieces'
log multipliers over the first's; intervals Wald on those scales from the Hessian (central differences of the
gradient)."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import optimize, special

from simd.engine import njit

COARSE = 160  # the coarse grid's nodes per server
PANELS, NODES = 3, 24  # Gauss-Legendre panels over where the integrand matters, and nodes each
FALL = 45.0  # the integrand's fall from its peak left out (e**-45 ~ 3e-20)
_GL, _GW = np.polynomial.legendre.leggauss(NODES)
_LIN = np.linspace(0.0, 1.0, COARSE)
P_BOUNDS = (-12.0, 4.0)  # logit p: 6e-6 .. 0.98
MU_MIN_DAYS = 1.0 / 1440  # a minute
MU_MAX_DAYS = 2.0  # a short lifetime is hours, not the law's days


@dataclass(frozen=True)
class Intervals:
    """Every server's up intervals: lengths (days, operational with a schedule), the weight of the fault ending
    each (0: censored), whether it follows a repair, its server (intervals sorted by server, each server at least
    one), the log's multiplier term of the faults' densities (a schedule's: sum of done log m; 0 without)."""

    x: np.ndarray
    done: np.ndarray
    after: np.ndarray
    owner: np.ndarray
    servers: int
    # a rate schedule: each interval's overlap with each piece (intervals x pieces; None: none), the pieces' shares of
    # the span and their faults (weighted); its log multipliers are then free parameters, last
    overlap: np.ndarray | None = None
    share: np.ndarray | None = None
    counts: np.ndarray | None = None


def intervals(spans: tuple[np.ndarray, ...], servers: int, edges: np.ndarray | None = None,
              logs: np.ndarray | None = None) -> Intervals:
    """The up intervals of simd.traces.fit._spans (owner, start, end, done, n), in operational time under the
    schedule of pieces ``edges`` and log multipliers ``logs`` over the first's (None: none)."""
    owner, start, end, done, _ = spans
    order = np.lexsort((start, owner))
    owner, start, end, done = owner[order], start[order], end[order], done[order]
    first = np.ones(len(owner), dtype=bool)
    first[1:] = owner[1:] != owner[:-1]
    x = end - start
    done = np.where(x > 0, done, 0.0)  # (a zero-length interval: a tie, its density left out as the fit does)
    if edges is None or len(edges) <= 2:
        return Intervals(x=x, done=done, after=~first, owner=owner, servers=servers)
    overlap = np.clip(np.minimum(end[:, None], edges[None, 1:]) - np.maximum(start[:, None], edges[None, :-1]),
                      0.0, None)
    piece = np.clip(np.searchsorted(edges, end, "left") - 1, 0, len(edges) - 2)
    counts = np.bincount(piece, weights=done, minlength=len(edges) - 1)
    return Intervals(x=x, done=done, after=~first, owner=owner, servers=servers, overlap=overlap,
                     share=np.diff(edges) / (edges[-1] - edges[0]), counts=counts)


def multipliers(iv: Intervals, logs: np.ndarray) -> np.ndarray:
    """The schedule's multipliers from the pieces' log multipliers over the first's: a time-weighted mean of 1."""
    eb = np.exp(np.concatenate([[0.0], logs]))
    return eb / (iv.share @ eb)


def _integrals(params: np.ndarray, iv: Intervals, weibull: bool, grad: bool):
    """The negative log-likelihood at ``params`` (module docstring), and with ``grad`` its gradient."""
    base = 5 if weibull else 4
    log_m, m = 0.0, None
    if iv.overlap is not None:  # the schedule: operational lengths, the faults' densities times their multipliers
        m = multipliers(iv, params[base:])
        iv = Intervals(x=iv.overlap @ m, done=iv.done, after=iv.after, owner=iv.owner, servers=iv.servers,
                       overlap=iv.overlap, share=iv.share, counts=iv.counts)
        log_m = float(iv.counts @ np.log(m))
    if not grad:
        return -(quadrature(params[:base], iv, weibull, False) + log_m)
    value, g, d_x = quadrature(params[:base], iv, weibull, True)
    nll = -(value + log_m)
    if m is not None:  # the pieces' log multipliers, through each interval's length (fit.schedule_likelihood's rule)
        c = iv.counts
        gb = m * (d_x @ iv.overlap) - iv.share * m * float(d_x @ iv.x) - (c - c.sum() * iv.share * m)
        return nll, np.concatenate([g, gb[1:]])
    return nll, g


def _unpack(base: np.ndarray, weibull: bool) -> tuple[float, float, float, float, float]:
    """(theta, k, a, p, mu) from log theta, (log k,) log a, logit p, log mu."""
    n = len(base)
    return (math.exp(base[0]), math.exp(base[1]) if weibull else 1.0, math.exp(base[n - 3]),
            float(special.expit(base[n - 2])), math.exp(base[n - 1]))


@njit(inline="always")
def _term(u, ew, eku, x, d, after, z, logx, k, logk, logtheta, p, log1mp, logp, mu, logmu):
    """An interval's log term of the likelihood at the node u = log w (``ew = e**u``, ``eku = e**(k u)``; ``z``
    its ``(x / theta)**k``): (the term, the posterior share of the short part, the law's ``(w x / theta)**k``, its
    log)."""
    if x > 0:
        v = k * (u + logx - logtheta)  # log of (w x / theta)**k
        e = eku * z
        o = d * (logk + v - logx) - e  # log f**d S**(1 - d) of the law
    else:
        v = e = o = 0.0  # (a tie: no density, no exposure)
    if not after:
        return o, 0.0, e, v
    lo = o + log1mp
    ls = d * (u - logmu) - ew * x / mu + logp  # ... of the short exponential, times p
    top = max(lo, ls)
    t = top + math.log1p(math.exp(-abs(lo - ls)))
    return t, math.exp(ls - t), e, v


@njit()
def _kernel(x, done, after, starts, theta, k, a, p, mu, prior_c, digamma_a, u_lo, u_hi, lin, gl, gw, want, held,
            alt):
    """The quadrature over every server (module docstring), compiled: (the log-likelihood, with ``want`` 1 the
    negative log-likelihood's gradient in (log theta, log k, log a, logit p, log mu) and its derivative in each
    interval's length, with ``want`` 2 per interval and per row of ``alt`` (other lengths of the intervals) E[(1 - s)
    w**k], E[s w], E[s] and E[t] over the server's posterior at the lengths ``x``, s and the term t at the row's
    lengths (:func:`hazard_weights`), the panels' ends per server). ``held``: the panels' ends (2 x servers) of an
    earlier call, kept (the coarse grid skipped; empty: found anew)."""
    logk, logtheta, log1mp, logp, logmu, loga = math.log(k), math.log(theta), math.log1p(-p), math.log(p), \
        math.log(mu), math.log(a)
    nodes = len(gl)
    m = PANELS * nodes
    coarse = len(lin)
    servers = len(starts) - 1
    logx = np.zeros(len(x))
    z = np.zeros(len(x))
    for i in range(len(x)):
        if x[i] > 0:
            logx[i] = math.log(x[i])
            z[i] = (x[i] / theta) ** k
    longest = 0
    for s in range(servers):
        longest = max(longest, starts[s + 1] - starts[s])
    gbuf = np.empty(coarse)
    us, wq, g = np.empty(m), np.empty(m), np.empty(m)
    sums = np.zeros((5, m))  # per node: d/d log theta, log k, log a (the prior's), logit p, log mu
    share = np.empty((longest if want == 1 else 0, m))  # a server's intervals' short shares at each node
    expo = np.empty((longest if want == 1 else 0, m))  # ... and their law's (w x / theta)**k
    out = np.zeros(5)
    d_x = np.zeros(len(x) if want == 1 else 0)
    shares = np.zeros((4 * len(alt), len(x) if want == 2 else 0))
    z_alt = np.zeros(alt.shape)
    logx_alt = np.zeros(alt.shape)
    if want == 2:
        for r_ in range(len(alt)):
            for i in range(len(x)):
                if alt[r_, i] > 0:
                    logx_alt[r_, i] = math.log(alt[r_, i])
                    z_alt[r_, i] = (alt[r_, i] / theta) ** k
    ends = np.empty((2, servers))
    value = 0.0
    for s in range(servers):
        i0, i1 = starts[s], starts[s + 1]
        if held.shape[1]:
            left, right = held[0, s], held[1, s]
        else:
            n = 0.0
            h = 0.0
            for i in range(i0, i1):
                n += done[i]
                h += z[i]
            r = a + k * n
            mode = math.log(r / a)
            for _ in range(60):  # Newton on r - a e**u - k h e**(k u) = 0 (concave: from the right)
                eu, eku = a * math.exp(mode), h * math.exp(k * mode)
                mode = mode - (r - eu - k * eku) / (-(eu + k * k * eku))
            lo = min(u_lo, mode - 8.0)
            hi = max(max(u_hi, mode + 8.0), 8.0)
            peak = -math.inf
            for c in range(coarse):
                u = lo + (hi - lo) * lin[c]
                ew, eku = math.exp(u), math.exp(k * u)
                gc = prior_c + a * u - a * ew
                for i in range(i0, i1):
                    gc += _term(u, ew, eku, x[i], done[i], after[i], z[i], logx[i], k, logk, logtheta, p, log1mp,
                                logp, mu, logmu)[0]
                gbuf[c] = gc
                peak = max(peak, gc)
            c0 = 0
            while gbuf[c0] < peak - FALL:
                c0 += 1
            c1 = coarse - 1
            while gbuf[c1] < peak - FALL:
                c1 -= 1
            step = (hi - lo) / (coarse - 1)
            left, right = lo + max(c0 - 1, 0) * step, lo + min(c1 + 1, coarse - 1) * step
        ends[0, s], ends[1, s] = left, right
        width = (right - left) / PANELS  # Gauss-Legendre panels over [left, right]
        top = -math.inf
        for pa in range(PANELS):
            mid = left + width * (pa + 0.5)
            for q in range(nodes):
                j = pa * nodes + q
                u = mid + width / 2 * gl[q]
                us[j], wq[j] = u, width / 2 * gw[q]
                ew, eku = math.exp(u), math.exp(k * u)
                gj = prior_c + a * u - a * ew
                if want == 1:
                    sums[:, j] = 0.0
                    sums[2, j] = a * (loga + 1.0 - digamma_a + u - ew)
                for i in range(i0, i1):
                    t, sh, e, v = _term(u, ew, eku, x[i], done[i], after[i], z[i], logx[i], k, logk, logtheta, p,
                                        log1mp, logp, mu, logmu)
                    gj += t
                    if want == 1:
                        share[i - i0, j], expo[i - i0, j] = sh, e
                    if want == 1:
                        d = done[i]
                        sums[0, j] += (1 - sh) * (-k * d + k * e)
                        if x[i] > 0:
                            sums[1, j] += (1 - sh) * (d * (1.0 + v) - e * v)
                        if after[i]:
                            sums[3, j] += sh - p
                        sums[4, j] += sh * (-d + ew * x[i] / mu)
                g[j] = gj
                top = max(top, gj)
        total = 0.0
        for j in range(m):
            g[j] = math.exp(g[j] - top) * wq[j]  # (now the integrand's nodes' share, unnormalised)
            total += g[j]
        value += top + math.log(total)
        if want == 0:
            continue
        for j in range(m):
            post = g[j] / total
            if want == 1:
                for c in range(5):
                    out[c] += post * sums[c, j]
            ew, eku = math.exp(us[j]), math.exp(k * us[j])
            for i in range(i0, i1):
                if want == 1:  # the term's derivative in the interval's length
                    sh, e = share[i - i0, j], expo[i - i0, j]
                    gx = -sh * ew / mu
                    if x[i] > 0:
                        gx += (1 - sh) * (done[i] * (k - 1.0) - k * e) / x[i]
                    d_x[i] -= post * gx
                else:
                    for r_ in range(len(alt)):
                        t, sh, e, v = _term(us[j], ew, eku, alt[r_, i], done[i], after[i], z_alt[r_, i],
                                            logx_alt[r_, i], k, logk, logtheta, p, log1mp, logp, mu, logmu)
                        shares[4 * r_, i] += post * (1.0 - sh) * eku
                        shares[4 * r_ + 1, i] += post * sh * ew
                        shares[4 * r_ + 2, i] += post * sh
                        shares[4 * r_ + 3, i] += post * t
    return value, -out, d_x, shares, ends


_NONE = np.zeros((2, 0))


def _run(base: np.ndarray, iv: Intervals, weibull: bool, want: int, held: np.ndarray | None = None,
         alt: np.ndarray | None = None):
    """:func:`_kernel` at ``base`` over ``iv`` (``held``: its panels' ends kept from an earlier call; ``alt``: the
    other lengths of want 2)."""
    theta, k, a, p, mu = _unpack(base, weibull)
    # the coarse range: the prior's 1e-12 .. 1 - 1e-12 quantiles, widened to each server's mode of the law alone
    q_lo, q_hi = special.gammaincinv(a, 1e-12) / a, special.gammaincinv(a, 1.0 - 1e-12) / a
    u_lo = max(math.log(q_lo) if q_lo > 0 else -60.0, -60.0)
    starts = np.flatnonzero(np.concatenate([[True], iv.owner[1:] != iv.owner[:-1], [True]]))
    return _kernel(iv.x, iv.done, iv.after, starts, theta, k, a, p, mu, a * math.log(a) - special.gammaln(a),
                   special.digamma(a), u_lo, math.log(q_hi), _LIN, _GL, _GW, want, _NONE if held is None else held,
                   np.zeros((0, len(iv.x))) if alt is None else alt)


def quadrature(base: np.ndarray, iv: Intervals, weibull: bool, grad: bool, held: np.ndarray | None = None):
    """The log-likelihood of the intervals ``iv`` as their lengths ``iv.x`` are (operational, any schedule's or
    regimes' multipliers of the faults' densities apart) at the lifetimes' and the relapse's parameters ``base``
    (log theta, (log k,) log a, logit p, log mu); with ``grad``: (it, the negative log-likelihood's gradient in
    ``base``, its derivative in each interval's length). ``held``: the quadrature's panels per server kept from
    :func:`panels` (a smooth function of the parameters near where they were found; None: found anew)."""
    value, g, d_x, _, _ = _run(base, iv, weibull, 1 if grad else 0, held)
    if not grad:
        return value
    return value, (g if weibull else np.delete(g, 1)), d_x


def panels(base: np.ndarray, iv: Intervals, weibull: bool) -> np.ndarray:
    """The quadrature's panels' ends per server (2 x servers) at ``base``, for :func:`quadrature`'s ``held``."""
    return _run(base, iv, weibull, 0)[4]


def hazard_weights(base: np.ndarray, iv: Intervals, weibull: bool, alt: np.ndarray) -> np.ndarray:
    """Per row of ``alt`` (other lengths of the intervals) and per interval, over its server's frailty posterior at
    the lengths ``iv.x`` (the quadrature's nodes), with s the interval's posterior share of the short part given w
    at the row's length (0 for a server's first) and t its log term there: ``E[(1 - s) w**k]`` and ``E[s w]``, the
    weights of the law's baseline cumulative hazard and of the short part's in the interval's expected hazard,
    ``E[s]`` and ``E[t]`` (rows x 4 x intervals; simd.traces.joint's proposal with relapses)."""
    return _run(base, iv, weibull, 2, None, alt)[3].reshape(len(alt), 4, len(iv.x))


@dataclass(frozen=True)
class Result:
    x: np.ndarray  # log theta, (log k,) log a, logit p, log mu, (the schedule's log multipliers)
    nll: float
    cov: np.ndarray


def fit(iv: Intervals, weibull: bool, start: np.ndarray, bounds: list, logs: np.ndarray | None = None,
        log_bounds: tuple[float, float] = (-12.0, 12.0)) -> Result:
    """The relapse family fitted from the renewal family's optimum ``start`` (log theta, (log k,) log a; with a
    schedule its pieces' log multipliers ``logs``, free again within ``log_bounds``) and its ``bounds``: L-BFGS-B
    from p = 5% and mu = an hour, and from p = 20% and mu = 6 hours, the better kept; the covariance from the
    Hessian (mixture.hessian of the analytic gradient)."""
    from simd.traces import mixture

    logs = np.zeros(0) if logs is None else logs
    best = None
    b = list(bounds) + [P_BOUNDS, (math.log(MU_MIN_DAYS), math.log(MU_MAX_DAYS))] + [log_bounds] * len(logs)
    for p0, mu0 in ((0.05, 1.0 / 24), (0.2, 0.25)):
        x0 = np.concatenate([start, [special.logit(p0), math.log(mu0)], logs])
        r = optimize.minimize(_integrals, x0, args=(iv, weibull, True), jac=True, method="L-BFGS-B", bounds=b)
        if best is None or r.fun < best.fun:
            best = r
    try:
        cov = np.linalg.inv(mixture.hessian(lambda q: _integrals(q, iv, weibull, True)[1], best.x))
    except np.linalg.LinAlgError:
        cov = np.full((len(best.x), len(best.x)), np.nan)
    return Result(x=best.x, nll=float(best.fun), cov=cov)


def nll(params: np.ndarray, iv: Intervals, weibull: bool, grad: bool = False):
    """The negative log-likelihood (and with ``grad`` its gradient) at ``params``."""
    return _integrals(params, iv, weibull, grad)
